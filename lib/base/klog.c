/*
 * klog.c - level filter and sink.  The level and sink are process-wide and
 * set before threads start (tests, tools); emission may come from any thread.
 */
#include "klog.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/ksched.h"

/* -1: not read from the environment yet.  Quiet: logging must not add
 * scheduling points to a controlled run. */
static ks_atomic_t klog_level = KS_ATOMIC_INIT(-1);
static klog_sink_fn klog_sink;
static void *klog_sink_ctx;
static klog_filter_fn klog_filter;

static const char *const klog_names[] = {"error", "warn", "info", "debug"};

void klog_reload_env(void)
{
	const char *s = getenv("KMGR_LOG_LEVEL");
	int level = KLOG_WARN;

	if (s && *s) {
		for (int i = 0; i < 4; i++)
			if (strcmp(s, klog_names[i]) == 0 || (s[0] == '0' + i && s[1] == 0))
				level = i;
	}
	ks_atomic_store_quiet(&klog_level, level);
}

void klog_set_level(klog_level_t level)
{
	ks_atomic_store_quiet(&klog_level, (int64_t)level);
}

klog_level_t klog_get_level(void)
{
	if (ks_atomic_load_quiet(&klog_level) < 0)
		klog_reload_env();
	return (klog_level_t)ks_atomic_load_quiet(&klog_level);
}

void klog_set_sink(klog_sink_fn fn, void *ctx)
{
	klog_sink = fn;
	klog_sink_ctx = ctx;
}

void klog_set_filter(klog_filter_fn fn)
{
	klog_filter = fn;
}

void klog_emit(klog_level_t level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if ((int)level > (int)klog_get_level())
		return;
	if (klog_filter && !klog_filter(level, fmt))
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (klog_sink) {
		klog_sink(klog_sink_ctx, level, line);
		return;
	}
	fprintf(stderr, "kmgr %s: %s\n", klog_names[level], line);
}
