/*
 * kt_log.c - the log policies of ktest_log.h.
 */
#include "ktest_log.h"

#include <stdio.h>
#include <string.h>

#include "sched/ksched.h"

#define KT_LOG_LINE 512

static struct {
	ks_mutex_t m;
	const char *expect;
	char text[1 << 16];
	size_t len;
	char levels[1024];
	size_t nlevels;
	char first[KT_LOG_LINE], last[KT_LOG_LINE];
	ks_atomic_t lines, passed;
} kt_log = {.m = KS_MUTEX_INITIALIZER};

static const char *const kt_level_names[] = {"error", "warn", "info", "debug"};

static void kt_log_reset(const char *expect)
{
	ks_mutex_lock(&kt_log.m);
	kt_log.expect = expect;
	kt_log.len = 0;
	kt_log.text[0] = 0;
	kt_log.nlevels = 0;
	kt_log.levels[0] = 0;
	kt_log.first[0] = 0;
	kt_log.last[0] = 0;
	ks_atomic_store_quiet(&kt_log.lines, 0);
	ks_atomic_store_quiet(&kt_log.passed, 0);
	ks_mutex_unlock(&kt_log.m);
}

static void kt_log_capture_sink(void *ctx, klog_level_t level, const char *line)
{
	int n;

	(void)ctx;
	ks_mutex_lock(&kt_log.m);
	n = snprintf(kt_log.text + kt_log.len, sizeof(kt_log.text) - kt_log.len, "%s\n", line);
	if (n > 0 && kt_log.len + (size_t)n < sizeof(kt_log.text))
		kt_log.len += (size_t)n;
	else
		kt_log.text[kt_log.len] = 0;
	if (kt_log.nlevels + 1 < sizeof(kt_log.levels)) {
		kt_log.levels[kt_log.nlevels++] = (char)('0' + (int)level);
		kt_log.levels[kt_log.nlevels] = 0;
	}
	if (ks_atomic_add_quiet(&kt_log.lines, 1) == 0)
		snprintf(kt_log.first, sizeof(kt_log.first), "%s", line);
	snprintf(kt_log.last, sizeof(kt_log.last), "%s", line);
	ks_mutex_unlock(&kt_log.m);
}

static void kt_log_expect_sink(void *ctx, klog_level_t level, const char *line)
{
	bool expected;

	(void)ctx;
	ks_mutex_lock(&kt_log.m);
	expected = strstr(line, kt_log.expect) != NULL;
	ks_atomic_add_quiet(expected ? &kt_log.lines : &kt_log.passed, 1);
	ks_mutex_unlock(&kt_log.m);
	if (!expected && (unsigned)level < sizeof(kt_level_names) / sizeof(kt_level_names[0]))
		fprintf(stderr, "kmgr %s: %s\n", kt_level_names[level], line);
}

void kt_log_capture(klog_level_t level)
{
	kt_log_reset(NULL);
	klog_set_level(level);
	klog_set_sink(kt_log_capture_sink, NULL);
}

void kt_log_expect(const char *text)
{
	kt_log_reset(text);
	klog_set_sink(kt_log_expect_sink, NULL);
}

void kt_log_errors_only(void)
{
	klog_set_sink(NULL, NULL);
	klog_set_level(KLOG_ERROR);
}

void kt_log_release(void)
{
	klog_set_sink(NULL, NULL);
	klog_set_level(KLOG_WARN);
}

bool kt_log_has(const char *text)
{
	bool has;

	ks_mutex_lock(&kt_log.m);
	has = strstr(kt_log.text, text) != NULL;
	ks_mutex_unlock(&kt_log.m);
	return has;
}

/* The readers below hand out the buffers themselves: read them when no
 * library thread is logging. */
const char *kt_log_text(void)
{
	return kt_log.text;
}

const char *kt_log_levels(void)
{
	return kt_log.levels;
}

const char *kt_log_first(void)
{
	return kt_log.first;
}

const char *kt_log_last(void)
{
	return kt_log.last;
}

int kt_log_lines(void)
{
	return (int)ks_atomic_load_quiet(&kt_log.lines);
}

int kt_log_passed(void)
{
	return (int)ks_atomic_load_quiet(&kt_log.passed);
}
