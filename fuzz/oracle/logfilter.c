/*
 * logfilter.c - the fuzz targets' log filter (oracle_log_quiet): the
 * library's log is silenced except
 *   - the lines it writes just before aborting on a broken invariant of
 *     its own, which keep a crash readable (printed);
 *   - the lines that report a broken invariant and go on (a model removed
 *     from the device with executions in flight, model records still
 *     staged at close): each is an oracle failure with its own signature;
 * and the lines that answer the harness's own deliberate misuse (a
 * tensor-info array freed twice, on purpose) are the expected answer, not
 * news: counted, not printed, the count in one line at exit.  Warnings
 * (the drain's "still waiting", normal under load) are never kept.
 */
#include <stdio.h>
#include <stdlib.h>

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
enum { LINE_DROP, LINE_PRINT, LINE_MISUSE, LINE_BROKEN };

/* The broken invariants the library reports and survives: a word of the
 * format, the signature. */
static const struct {
	const char *word, *invariant;
} broken[] = {
    {"executions in flight", "inflight-on-removed-model"},
    {"still staged", "staged-at-close"},
};

/* The answers to the harness's own misuse (harness/nrt_meta.c's
 * kh_nrt_info_twice frees an array twice and checks for NRT_INVALID). */
static const char *const misuse[] = {"nrt_free_model_tensor_info: not an array"};

KATTR_NO_COVERAGE static int classify_fmt(const char *fmt)
{
	static const char *const keep[] = {"assertion failed", "without a mark", "below zero",
	                                   "outstanding",      "freed twice",    "USE-AFTER-FREE",
	                                   "DEADLOCK",         "abort"};

	for (size_t i = 0; i < sizeof(misuse) / sizeof(misuse[0]); i++)
		if (contains(fmt, misuse[i]))
			return LINE_MISUSE;
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
		if (contains(fmt, broken[i].word))
			return LINE_BROKEN;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (contains(fmt, keep[i]))
			return LINE_PRINT;
	return LINE_DROP;
}

static ks_atomic_t misuse_lines;

/* The library's error lines a run keeps: those that report a broken
 * invariant.  Chosen by the format string, before the line is formatted,
 * and remembered by its address (a format is a string literal): every
 * failing call logs, and scanning each format for eight words was still
 * a fiftieth of a run.  An entry is one atomic word, address << 2 | class,
 * because free-running runs log from several threads; a lost race only
 * costs a rescan. */
KATTR_NO_COVERAGE static bool keep_line(klog_level_t level, const char *fmt)
{
	static ks_atomic_t seen[256];
	int64_t key = (int64_t)((uint64_t)(uintptr_t)fmt << 2);
	/* Fibonacci hashing of the address, as the scheduler's site cache
	 * (lib/sched/ctl.c): under ASan literals lie 32 or 64 bytes apart, and
	 * the low bits alone would use one slot in four or eight */
	ks_atomic_t *e = &seen[((uint64_t)(uintptr_t)fmt * 0x9E3779B97F4A7C15ull) >> 56];
	int64_t v;
	int cls;

	if (level != KLOG_ERROR)
		return false;
	v = ks_atomic_peek(e);
	if ((v & ~(int64_t)3) == key) {
		cls = (int)(v & 3);
	} else {
		cls = classify_fmt(fmt);
		ks_atomic_store_quiet(e, key | cls);
	}
	if (cls == LINE_MISUSE)
		ks_atomic_add_quiet(&misuse_lines, 1);
	return cls == LINE_PRINT || cls == LINE_BROKEN;
}

/* A kept line: printed; one that reports a broken invariant is also the
 * run's failure (on whichever thread logged it: the stack under the abort
 * is the library's, which is the signature's frame). */
KATTR_NO_COVERAGE static void quiet_sink(void *ctx, klog_level_t level, const char *line)
{
	(void)ctx;
	(void)level;
	fprintf(stderr, "kmgr error: %s\n", line);
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
		if (contains(line, broken[i].word))
			oracle_fail(broken[i].invariant, "the library logged: %s", line);
}

uint64_t oracle_log_misuse_lines(void)
{
	return (uint64_t)ks_atomic_peek(&misuse_lines);
}

static void misuse_summary(void)
{
	uint64_t n = oracle_log_misuse_lines();

	if (n)
		fprintf(stderr,
		        "kmgr log: %llu error line(s) answered the harness's own misuse "
		        "(not shown)\n",
		        (unsigned long long)n);
}

void oracle_log_quiet(void)
{
	static bool once;

	klog_set_filter(keep_line);
	klog_set_sink(quiet_sink, NULL);
	if (!once)
		atexit(misuse_summary);
	once = true;
}
