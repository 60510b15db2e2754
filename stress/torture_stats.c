/*
 * torture_stats.c - the counting side of the stress binaries (see torture.h):
 * status counters, the clock and PRNG of the workers, latency histograms,
 * and the summary of a run (text, JSON, the rerunnable command line).
 */
#include "torture.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "kfile.h"
#include "nrt_status_list.h"
#include "sched/ksplitmix.h"
#include "torture_int.h"

/* Every NRT_STATUS of nrt_status.h, from the one list (nrt_status_list.h):
 * a status the library can return is never "unknown" to a check
 * (NRT_EXEC_HW_ERR_DMA_ABORT from the emu.set_copy fault was missing once);
 * stress_status_table checks the table against nrt_get_status_as_str. */
#define TORTURE_STAT_CODE(name) name,
static const NRT_STATUS torture_stat_codes[] = {NRT_STATUS_NAMES(TORTURE_STAT_CODE)};
#undef TORTURE_STAT_CODE
_Static_assert(sizeof(torture_stat_codes) / sizeof(torture_stat_codes[0]) == TORTURE_NSTAT - 1,
               "TORTURE_NSTAT is the number of NRT_STATUS values plus one");

/* ---------------------------------------------------------------- stats */

static int torture_stat_index(NRT_STATUS st)
{
	for (int i = 0; i < TORTURE_NSTAT - 1; i++)
		if (torture_stat_codes[i] == st)
			return i;
	return TORTURE_NSTAT - 1;
}

const char *torture_stat_name(int i)
{
	if (i >= TORTURE_NSTAT - 1)
		return "other";
	return nrt_get_status_as_str(torture_stat_codes[i]);
}

bool torture_status_known(NRT_STATUS st)
{
	return torture_stat_index(st) < TORTURE_NSTAT - 1;
}

void torture_count(torture_thread_t *w, NRT_STATUS st)
{
	ks_atomic_add_quiet(&w->stat[torture_stat_index(st)], 1);
}

/* The real clock, also under --controlled: latencies and the watchdog are
 * about the machine, not the schedule. */
uint64_t torture_now_ns(void)
{
	return ks_wall_ns();
}

uint64_t torture_rand(torture_thread_t *w)
{
	return ks_splitmix64(&w->rng);
}

uint64_t torture_rand_below(torture_thread_t *w, uint64_t n)
{
	return n ? torture_rand(w) % n : 0;
}

/* Log-linear buckets: 8 per power of two, exact below 8 ns. */
static unsigned torture_bucket(uint64_t v)
{
	unsigned e;

	if (v < 8)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	return (e - 2u) * 8u + (unsigned)((v >> (e - 3u)) & 7u);
}

static uint64_t torture_bucket_value(unsigned b)
{
	unsigned e;

	if (b < 8)
		return b;
	e = b / 8u + 2u;
	return (1ull << e) | ((uint64_t)(b % 8u) << (e - 3u));
}

void torture_hist_add(torture_thread_t *w, int h, uint64_t ns)
{
	torture_hist_t *hi = &w->hist[h];

	hi->count++;
	hi->sum += ns;
	if (ns > hi->max)
		hi->max = ns;
	hi->bucket[torture_bucket(ns)]++;
}

void torture_hist_merge(torture_hist_t *dst, const torture_hist_t *src)
{
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->max > dst->max)
		dst->max = src->max;
	for (size_t i = 0; i < sizeof(dst->bucket) / sizeof(dst->bucket[0]); i++)
		dst->bucket[i] += src->bucket[i];
}

/* The lower bound of the bucket holding the p-th percentile. */
static uint64_t torture_hist_pct(const torture_hist_t *h, double p)
{
	uint64_t want = (uint64_t)((double)h->count * p / 100.0 + 0.5), seen = 0;

	if (!h->count)
		return 0;
	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < sizeof(h->bucket) / sizeof(h->bucket[0]); b++) {
		seen += h->bucket[b];
		if (seen >= want)
			return torture_bucket_value(b) < h->max ? torture_bucket_value(b) : h->max;
	}
	return h->max;
}

/* ------------------------------------------------------------- summary */

/* One rerunnable command line: every parameter of the run. */
int torture_cmdline(const torture_t *t, char *buf, size_t len)
{
	const torture_knobs_t *k = &t->k;
	int n;

	n = snprintf(buf, len,
	             "%s --threads %u --seconds %u --ops %" PRIu64 " --seed %" PRIu64
	             " --models %u --stall-seconds %u --queue-depth %u",
	             t->ops->name, k->threads, k->seconds, k->ops, k->seed, k->models,
	             k->stall_seconds, k->queue_depth);
	if (k->fault[0] && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " --fault %s", k->fault);
	if (k->controlled && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
		              " --controlled --pct-depth %u --max-steps %" PRIu64, k->pct_depth,
		              k->max_steps);
	return n;
}

typedef struct torture_role_sum {
	const char *role;
	uint32_t threads;
	uint64_t ops, min, max;
	bool starved;
} torture_role_sum_t;

/*
 * Starvation (locktorture's "???"): among the threads of one role, one whose
 * count is below an eighth of the role's busiest thread, or zero while the
 * busiest did at least 8.  An eighth leaves room for 2 cores shared by many
 * threads; a flag, not a failure (PCT starves threads on purpose).
 */
static uint32_t torture_roles(const torture_t *t, torture_role_sum_t *rs)
{
	uint32_t n = 0;

	uint32_t nt = (uint32_t)ks_atomic_load_quiet(&t->nthreads_pub);

	for (uint32_t i = 0; i < nt; i++) {
		const torture_thread_t *w = &t->th[i];
		uint64_t c = (uint64_t)ks_atomic_peek(&w->ops);
		uint32_t r = 0;

		while (r < n && strcmp(rs[r].role, w->role) != 0)
			r++;
		if (r == n) {
			rs[n++] = (torture_role_sum_t){w->role, 0, 0, UINT64_MAX, 0, false};
		}
		rs[r].threads++;
		rs[r].ops += c;
		rs[r].min = c < rs[r].min ? c : rs[r].min;
		rs[r].max = c > rs[r].max ? c : rs[r].max;
	}
	for (uint32_t r = 0; r < n; r++)
		rs[r].starved = rs[r].threads > 1 && rs[r].max >= 8 && rs[r].min * 8 < rs[r].max;
	return n;
}

static void torture_stats_total(const torture_t *t, uint64_t *stat)
{
	uint32_t nt = (uint32_t)ks_atomic_load_quiet(&t->nthreads_pub);

	memset(stat, 0, sizeof(uint64_t) * TORTURE_NSTAT);
	for (uint32_t i = 0; i < nt; i++)
		for (int s = 0; s < TORTURE_NSTAT; s++)
			stat[s] += (uint64_t)ks_atomic_peek(&t->th[i].stat[s]);
}

static void torture_print_text(torture_t *t, const torture_hist_t *hist, double secs)
{
	torture_role_sum_t rs[TORTURE_MAX_THREADS];
	uint32_t nr = torture_roles(t, rs);
	uint64_t stat[TORTURE_NSTAT], total = (uint64_t)ks_atomic_peek(&t->total_ops);

	printf("== %s: %.2f s, %" PRIu64 " ops, %.0f ops/s, %" PRId64 " drains\n", t->ops->name,
	       secs, total, secs > 0 ? (double)total / secs : 0.0, ks_atomic_peek(&t->drains));
	for (uint32_t r = 0; r < nr; r++)
		printf("   %-10s x%-2u ops %-10" PRIu64 " min %-8" PRIu64 " max %-8" PRIu64 " %s\n",
		       rs[r].role, rs[r].threads, rs[r].ops, rs[r].min, rs[r].max,
		       rs[r].starved ? "???" : "");
	torture_stats_total(t, stat);
	printf("   status:");
	for (int s = 0; s < TORTURE_NSTAT; s++)
		if (stat[s])
			printf(" %s=%" PRIu64, torture_stat_name(s), stat[s]);
	printf("\n");
	for (int h = 0; h < TORTURE_MAX_HISTS && t->ops->hist_names[h]; h++) {
		const torture_hist_t *hi = &hist[h];

		printf("   latency %-8s n %-9" PRIu64 " p50 %9.1f us  p99 %9.1f us  max %9.1f us\n",
		       t->ops->hist_names[h], hi->count, torture_hist_pct(hi, 50) / 1e3,
		       torture_hist_pct(hi, 99) / 1e3, hi->max / 1e3);
	}
	if (t->ops->report)
		t->ops->report(t, false, stdout);
	for (int64_t i = 0; i < ks_atomic_peek(&t->fails) && i < TORTURE_MAX_FAILS; i++)
		printf("   !!! %s\n", t->fail_msg[i]);
}

static void torture_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* The non-empty buckets as [lower bound ns, count] pairs: the histogram
 * itself, for plots (ci/nightly/report.py), not only its percentiles. */
static void torture_json_buckets(FILE *f, const torture_hist_t *h)
{
	bool first = true;

	for (unsigned b = 0; b < sizeof(h->bucket) / sizeof(h->bucket[0]); b++) {
		if (!h->bucket[b])
			continue;
		fprintf(f, "%s[%" PRIu64 ", %" PRIu64 "]", first ? "" : ", ",
		        torture_bucket_value(b), h->bucket[b]);
		first = false;
	}
}

/* Whole or not at all (kfile.h); -1 after one error line. */
static int torture_write_json(torture_t *t, const torture_hist_t *hist, double secs, int rc,
                              const char *repro)
{
	torture_role_sum_t rs[TORTURE_MAX_THREADS];
	uint32_t nr = torture_roles(t, rs);
	uint64_t stat[TORTURE_NSTAT], total = (uint64_t)ks_atomic_peek(&t->total_ops);
	char cmd[1024];
	kfile_t kf;
	FILE *f;
	bool first = true;

	if (!t->k.json[0])
		return 0;
	f = kfile_open(&kf, t->k.json);
	if (!f) {
		fprintf(stderr, "%s: cannot write %s: %s\n", t->ops->name, t->k.json,
		        strerror(errno));
		return -1;
	}
	torture_cmdline(t, cmd, sizeof(cmd));
	fprintf(f, "{\n  \"binary\": \"%s\",\n  \"result\": \"%s\",\n  \"exit\": %d,\n",
	        t->ops->name, rc == 0 ? "SUCCESS" : "FAILURE",
	        torture_stop_signal ? 128 + torture_stop_signal : rc);
	if (torture_stop_signal)
		fprintf(f, "  \"interrupted\": \"%s\",\n", strsignal(torture_stop_signal));
	fprintf(f, "  \"command\": ");
	torture_json_str(f, cmd);
	fprintf(f,
	        ",\n  \"params\": {\"threads\": %u, \"seconds\": %u, \"ops\": %" PRIu64
	        ", \"seed\": %" PRIu64 ", \"models\": %u, \"stall_seconds\": %u, "
	        "\"queue_depth\": %u, \"controlled\": %s, \"fault\": ",
	        t->k.threads, t->k.seconds, t->k.ops, t->k.seed, t->k.models, t->k.stall_seconds,
	        t->k.queue_depth, t->k.controlled ? "true" : "false");
	torture_json_str(f, t->k.fault);
	fprintf(f, "},\n  \"elapsed_s\": %.3f,\n  \"ops\": %" PRIu64 ",\n  \"ops_per_s\": %.1f,\n",
	        secs, total, secs > 0 ? (double)total / secs : 0.0);
	fprintf(f, "  \"drains\": %" PRId64 ",\n  \"stall\": %s,\n  \"errors\": {",
	        ks_atomic_peek(&t->drains), t->stall ? "true" : "false");
	torture_stats_total(t, stat);
	for (int s = 1; s < TORTURE_NSTAT; s++) {
		if (!stat[s])
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", torture_stat_name(s), stat[s]);
		first = false;
	}
	fprintf(f, "},\n  \"roles\": [");
	for (uint32_t r = 0; r < nr; r++)
		fprintf(f,
		        "%s\n    {\"role\": \"%s\", \"threads\": %u, \"ops\": %" PRIu64
		        ", \"min\": %" PRIu64 ", \"max\": %" PRIu64 ", \"starved\": %s}",
		        r ? "," : "", rs[r].role, rs[r].threads, rs[r].ops, rs[r].min, rs[r].max,
		        rs[r].starved ? "true" : "false");
	fprintf(f, "\n  ],\n  \"latency_ns\": {");
	for (int h = 0; hist && h < TORTURE_MAX_HISTS && t->ops->hist_names[h]; h++) {
		fprintf(f,
		        "%s\n    \"%s\": {\"count\": %" PRIu64 ", \"p50\": %" PRIu64
		        ", \"p99\": %" PRIu64 ", \"max\": %" PRIu64 ", \"buckets\": [",
		        h ? "," : "", t->ops->hist_names[h], hist[h].count,
		        torture_hist_pct(&hist[h], 50), torture_hist_pct(&hist[h], 99),
		        hist[h].max);
		torture_json_buckets(f, &hist[h]);
		fprintf(f, "]}");
	}
	fprintf(f, "\n  },\n");
	if (t->ops->report && hist)
		t->ops->report(t, true, f);
	fprintf(f, "  \"failures\": [");
	for (int64_t i = 0; i < ks_atomic_peek(&t->fails) && i < TORTURE_MAX_FAILS; i++) {
		fprintf(f, "%s", i ? ", " : "");
		torture_json_str(f, t->fail_msg[i]);
	}
	fprintf(f, "],\n  \"repro\": ");
	torture_json_str(f, repro ? repro : "");
	fprintf(f, "\n}\n");
	if (kfile_commit(&kf)) {
		fprintf(stderr, "%s: cannot write %s: %s\n", t->ops->name, t->k.json,
		        strerror(errno));
		return -1;
	}
	return 0;
}

/* The summary of a run that ended (hist NULL: the stall path, where the
 * workers still run and only atomics may be read). */
int torture_summary(torture_t *t, const torture_hist_t *hist, int rc, const char *repro)
{
	double secs = (double)(torture_now_ns() - t->start_ns) / 1e9;
	char cmd[1024];
	int json_rc;

	if (hist && !t->k.quiet)
		torture_print_text(t, hist, secs);
	json_rc = torture_write_json(t, hist, secs, rc, repro);
	torture_cmdline(t, cmd, sizeof(cmd));
	if (repro && repro[0])
		printf("%s: reproducer saved to %s (rerun: %s --replay %s)\n", t->ops->name, repro,
		       t->ops->name, repro);
	printf("%s %s%s%s%s\n", rc == 0 ? "SUCCESS" : "FAILURE", cmd,
	       torture_stop_signal ? " (interrupted: " : "",
	       torture_stop_signal ? strsignal(torture_stop_signal) : "",
	       torture_stop_signal ? ")" : "");
	fflush(stdout);
	return json_rc;
}
