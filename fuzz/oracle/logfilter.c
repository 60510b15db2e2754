/*
 * logfilter.c - the fuzz targets' log filter (oracle_log_quiet): the
 * library's log is silenced except the lines it writes just before
 * aborting on a broken invariant of its own, which keep a crash readable.
 */
#include <stdio.h>

#include "base/kattr.h"
#include "base/klog.h"
#include "oracle/oracle.h"
#include "sched/ksched.h"

/* Not strstr: libFuzzer hooks strstr and records its arguments in tables
 * that are not thread-safe, and this runs on library threads.  No coverage
 * either: a byte-by-byte scan of log text would only feed the fuzzer
 * features about the wording of messages. */
KATTR_NO_COVERAGE static bool contains(const char *s, const char *w)
{
	for (; *s; s++) {
		size_t k = 0;

		while (w[k] && s[k] == w[k])
			k++;
		if (!w[k])
			return true;
	}
	return false;
}

/* No coverage here or in keep_line: whether a format is scanned depends on
 * the cache below, i.e. on what earlier inputs of the process logged, and
 * the filter's work says nothing about the facade (ctest cov_stable; the
 * AFL++ allowlist leaves this file out for the same reason). */
KATTR_NO_COVERAGE static bool keep_fmt(const char *fmt)
{
	static const char *const keep[] = {"assertion failed", "without a mark", "below zero",
	                                   "outstanding",      "freed twice",    "USE-AFTER-FREE",
	                                   "DEADLOCK",         "abort"};

	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (contains(fmt, keep[i]))
			return true;
	return false;
}

/* The library's error lines a run keeps: those that report a broken
 * invariant.  Chosen by the format string, before the line is formatted,
 * and remembered by its address (a format is a string literal): every
 * failing call logs, and scanning each format for eight words was still
 * a fiftieth of a run.  An entry is one atomic word, address << 1 | keep,
 * because free-running runs log from several threads; a lost race only
 * costs a rescan. */
KATTR_NO_COVERAGE static bool keep_line(klog_level_t level, const char *fmt)
{
	static ks_atomic_t seen[256];
	int64_t key = (int64_t)((uint64_t)(uintptr_t)fmt << 1);
	/* Fibonacci hashing of the address, as the scheduler's site cache
	 * (lib/sched/ctl.c): under ASan literals lie 32 or 64 bytes apart, and
	 * the low bits alone would use one slot in four or eight */
	ks_atomic_t *e = &seen[((uint64_t)(uintptr_t)fmt * 0x9E3779B97F4A7C15ull) >> 56];
	int64_t v;
	bool keep;

	if (level != KLOG_ERROR)
		return false;
	v = ks_atomic_peek(e);
	if ((v & ~(int64_t)1) == key)
		return v & 1;
	keep = keep_fmt(fmt);
	ks_atomic_store_quiet(e, key | keep);
	return keep;
}

static void quiet_sink(void *ctx, klog_level_t level, const char *line)
{
	(void)ctx;
	(void)level;
	fprintf(stderr, "kmgr error: %s\n", line);
}

void oracle_log_quiet(void)
{
	klog_set_filter(keep_line);
	klog_set_sink(quiet_sink, NULL);
}
