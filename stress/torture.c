/*
 * torture.c - the common module of the stress binaries (see torture.h): the
 * run (free-running or under the controlled scheduler), the control of the
 * workers (stop, fail, spawn, join) and the library's log filter.  The other
 * parts: torture_stats.c (status counters, histograms, the summary and its
 * JSON), torture_models.c (models and tensors the roles share), args.c
 * (argv, repro files), watchdog.c.  The checks that watch the library from
 * outside (the exec observer, ids, reference counts, accounting) are the
 * oracle's, fuzz/oracle/check.c, reporting here through its failure hook.
 */
#include "torture.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/kalloc.h"
#include "base/kfault.h"
#include "base/klog.h"
#include "kfile.h"
#include "oracle/oracle.h" /* oracle_log_quiet */
#include "sched/kctl.h"
#include "torture_int.h"

/* The one run of this process: the observer and the crash handlers need it. */
torture_t *torture_cur;

/* ------------------------------------------------------------- control */

/* A store without a scheduling point (statistics and checker state only;
 * each such field has one writer at a time). */
void torture_atomic_set(ks_atomic_t *a, int64_t v)
{
	ks_atomic_add_quiet(a, v - ks_atomic_peek(a));
}

bool torture_should_stop(const torture_t *t)
{
	if (ks_atomic_peek(&t->stop))
		return true;
	return t->k.ops && (uint64_t)ks_atomic_peek(&t->total_ops) >= t->k.ops;
}

bool torture_op_done(torture_thread_t *w)
{
	const torture_knobs_t *k = &w->t->k;
	int64_t mine = ks_atomic_add_quiet(&w->ops, 1) + 1;

	ks_atomic_add_quiet(&w->t->total_ops, 1);
	/* Under PCT the highest-priority thread would spend the whole --ops
	 * budget alone; a share per thread makes every role run. */
	if (k->controlled && (uint64_t)mine * k->threads >= k->ops)
		return true;
	return torture_should_stop(w->t);
}

void torture_set_op(torture_thread_t *w, const char *op)
{
	/* A string literal: the watchdog prints it while the thread may be stuck. */
	torture_atomic_set(&w->last_op, (int64_t)(intptr_t)op);
}

void torture_fail(torture_t *t, const char *fmt, ...)
{
	int64_t n = ks_atomic_add_quiet(&t->fails, 1);
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: CHECK FAILED: %s\n", t->ops->name, msg);
	if (n < TORTURE_MAX_FAILS)
		memcpy(t->fail_msg[n], msg, sizeof(msg));
	ks_atomic_add_quiet(&t->stop, 1);
}

bool torture_failed(const torture_t *t)
{
	return ks_atomic_peek(&t->fails) != 0;
}

/* The oracle's failure hook: its invariant leads the message, so that
 * "CHECK FAILED: exec-after-unload: ..." names the same invariant as the
 * fuzz runner's "ORACLE: exec-after-unload: ...". */
static void torture_oracle_fail(void *ctx, const char *invariant, const char *msg)
{
	torture_fail(ctx, "%s: %s", invariant, msg);
}

void torture_unloaded(torture_t *t, uint32_t id)
{
	ks_atomic_add_quiet(&t->drains, 1);
	oracle_note_unloaded(id, true);
}

/* The run cannot go on to its teardown: save the repro, print the final
 * line and exit 1 now (as the stall path does: nothing is unloaded or
 * closed, so _exit, not the leak checks of a normal exit). */
static void torture_finish_now(torture_t *t, const char *why)
{
	char repro[1024] = "";

	torture_write_repro(t, "", why, repro, sizeof(repro));
	torture_summary(t, NULL, TORTURE_EXIT_CHECK, repro);
	fflush(NULL);
	_exit(TORTURE_EXIT_CHECK);
}

void torture_check_refcounts(torture_t *t, bool faults)
{
	/* a failed run may have left work behind on purpose (a stopped burst) */
	if (torture_failed(t))
		return;
	torture_main_progress(t, "quiesce");
	oracle_quiesce();
	oracle_check_refcounts(faults);
	/* a reference left over is one the teardown's unload would wait
	 * for forever */
	if (torture_failed(t))
		torture_finish_now(t, "check failed: references left at quiescence");
}

static void *torture_thread_entry(void *arg)
{
	torture_thread_t *w = arg;
	void *ret;

	torture_thread_register(w);
	ret = w->fn(w);
	ks_atomic_add_quiet(&w->done, 1);
	return ret;
}

int torture_spawn(torture_t *t, const char *role, void *(*fn)(torture_thread_t *), void *priv)
{
	torture_thread_t *w;
	uint32_t same = 0;

	if (t->nthreads >= TORTURE_MAX_THREADS)
		return -1;
	for (uint32_t i = 0; i < t->nthreads; i++)
		same += strcmp(t->th[i].role, role) == 0;
	w = &t->th[t->nthreads];
	memset(w, 0, sizeof(*w));
	w->t = t;
	w->role = role;
	w->idx = t->nthreads;
	w->role_idx = same;
	w->fn = fn;
	w->priv = priv;
	w->rng = t->k.seed * 0x100000001b3ull + w->idx + 1;
	if (ks_thread_create(&w->th, role, torture_thread_entry, w) != 0)
		return -1;
	t->nthreads++;
	ks_atomic_add_quiet(&t->nthreads_pub, 1);
	return 0;
}

int torture_respawn(torture_t *t, uint32_t i)
{
	torture_thread_t *w = &t->th[i];

	torture_atomic_set(&w->done, 0);
	torture_atomic_set(&w->tid, 0);
	return ks_thread_create(&w->th, w->role, torture_thread_entry, w) == 0 ? 0 : -1;
}

void torture_join_all(torture_t *t)
{
	torture_main_progress(t, "join");
	for (uint32_t i = 0; i < t->nthreads; i++)
		ks_thread_join(&t->th[i].th, NULL);
}

void torture_phase(torture_t *t, const char *phase)
{
	torture_main_progress(t, phase);
}

/* ----------------------------------------------------------------- log */

static ks_atomic_t torture_log_quiet;

/*
 * The library logs every stale-handle lookup and every unload that finds
 * work in flight; a stress run makes thousands of both on purpose.  Those
 * two are counted, everything else (assertions, drain warnings, the
 * emulator's own aborts) still reaches stderr.  KMGR_LOG_LEVEL set in the
 * environment keeps the library's own behaviour.
 */
static void torture_log_sink(void *ctx, klog_level_t level, const char *line)
{
	static const char *const expected[] = {
	    "Failed to find model",
	    "Execution requests on model",
	};

	(void)ctx;
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		if (strstr(line, expected[i])) {
			ks_atomic_add_quiet(&torture_log_quiet, 1);
			return;
		}
	}
	fprintf(stderr, "kmgr %s: %s\n",
	        level == KLOG_ERROR  ? "error"
	        : level == KLOG_WARN ? "warn"
	                             : "info",
	        line);
}

/* --quiet: only the final line, so only the library's lines that report
 * a broken invariant of its own (the fuzz targets' filter, which keeps a
 * crash readable); the errors a fault plan or a race provokes on purpose
 * (thousands a minute under stress_faults) go. */
static void torture_log_setup(const torture_t *t)
{
	if (getenv("KMGR_LOG_LEVEL"))
		return;
	if (t->k.quiet)
		oracle_log_quiet();
	else
		klog_set_sink(torture_log_sink, NULL);
}

/* ----------------------------------------------------------------- run */

static int torture_setup_fault(torture_t *t)
{
	kfault_plan_t plan;
	char err[200];

	if (!t->k.fault[0]) {
		const char *env = getenv("KMGR_FAULT");

		if (!env || !*env)
			return 0;
		/* the rule of --fault: a plan too long is refused, never cut */
		if (kfault_plan_parse(env, &plan, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s: KMGR_FAULT: %s\n", t->ops->name, err);
			return -1;
		}
		memcpy(t->k.fault, env, strlen(env) + 1);
	}
	if (kfault_plan_parse(t->k.fault, &plan, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: bad fault plan '%s': %s\n", t->ops->name, t->k.fault, err);
		return -1;
	}
	kfault_set_plan(&plan);
	return 0;
}

/* Free-running: the main thread (not a logical thread) paces the run. */
void torture_wait_free(torture_t *t)
{
	uint64_t end = t->start_ns + (uint64_t)t->k.seconds * 1000000000ull;

	while (!torture_should_stop(t)) {
		torture_main_progress(t, "running");
		if (t->k.seconds && torture_now_ns() >= end)
			break;
		ks_usleep(20 * 1000);
	}
	ks_atomic_add_quiet(&t->stop, 1);
}

/* The run proper: nrt_init .. nrt_close, checks; inside ks_ctl_begin/end
 * under --controlled. */
static void torture_body(torture_t *t)
{
	char depth[16];
	NRT_STATUS st;

	if (t->ops->run) {
		t->ops->run(t);
		return;
	}
	snprintf(depth, sizeof(depth), "%u", t->ops->async_mode ? t->k.queue_depth : 0);
	setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", depth, 1);
	torture_main_progress(t, "nrt_init");
	st = oracle_open();
	if (st != NRT_SUCCESS) {
		torture_fail(t, "nrt_init: %s", nrt_get_status_as_str(st));
		return;
	}
	torture_main_progress(t, "setup");
	if (t->ops->setup(t) != 0)
		ks_atomic_add_quiet(&t->stop, 1);
	if (!t->k.controlled)
		torture_wait_free(t);
	torture_join_all(t);
	torture_check_refcounts(t, t->k.fault[0] != 0);
	torture_main_progress(t, "teardown");
	if (t->ops->teardown)
		t->ops->teardown(t);
	torture_main_progress(t, "nrt_close");
	(void)oracle_close_runtime(); /* the checks below run whatever it says */
	oracle_detach();
	oracle_check_closed("after nrt_close");
	if (kalloc_live_count() != 0)
		torture_fail(t, "kalloc_live_count() = %" PRId64 " after nrt_close",
		             kalloc_live_count());
}

static void torture_ctl_failure(void *ctx, ks_failure_t kind, const char *report)
{
	torture_t *t = ctx;

	fprintf(stderr, "%s: the controlled scheduler reports a %s:\n%s\n", t->ops->name,
	        kind == KS_DEADLOCK ? "deadlock"
	        : kind == KS_HANG   ? "hang"
	                            : "divergence",
	        report);
	if (kind == KS_DIVERGENCE)
		torture_fail(t, "replay diverged from the recorded trace");
	else
		torture_fail(t, "controlled run %s (see the report above)",
		             kind == KS_DEADLOCK ? "deadlocked" : "hung");
	t->stall = 1;
	torture_finish_stalled(t, "controlled scheduler failure");
}

/* Returns the decision trace as text (malloc'd; NULL when there is none). */
static char *torture_run_controlled(torture_t *t)
{
	char *text;
	int n;
	ks_ctl_config_t cfg;
	ks_ctl_result_t res;

	ks_ctl_config_init(&cfg);
	cfg.strategy = t->k.trace ? KS_STRAT_REPLAY : KS_STRAT_PCT;
	cfg.seed = t->k.seed;
	cfg.pct_depth = t->k.pct_depth;
	cfg.pct_k_hint = t->k.ops * 64;
	cfg.trace = t->k.trace;
	cfg.ntrace = t->k.ntrace;
	cfg.max_steps = t->k.max_steps;
	cfg.on_failure = torture_ctl_failure;
	cfg.failure_ctx = t;
	if (ks_ctl_begin(&cfg) != 0) {
		torture_fail(t, "ks_ctl_begin failed");
		return NULL;
	}
	torture_body(t);
	ks_ctl_end(&res);
	if (res.failure != KS_OK)
		torture_fail(t, "controlled run ended with failure %d", (int)res.failure);
	n = ks_ctl_trace_format(res.trace, res.ntrace, NULL, 0);
	text = malloc(n > 0 ? (size_t)n + 1 : 1);
	if (text)
		ks_ctl_trace_format(res.trace, res.ntrace, text, n > 0 ? (size_t)n + 1 : 1);
	if (!t->k.quiet)
		printf("   controlled: %" PRIu64 " steps, %" PRIu64 " switches, %" PRIu64
		       " preemptions, %u threads, trace %zu decisions\n",
		       res.steps, res.switches, res.preemptions, res.threads, res.ntrace);
	return text;
}

int torture_main(const torture_ops_t *ops, int argc, char **argv)
{
	static torture_t run;
	static torture_hist_t hist[TORTURE_MAX_HISTS];
	char repro[1024] = "", *trace_text = NULL;
	int rc;

	torture_cur = &run;
	run.ops = ops;
	run.argc = argc;
	run.argv = argv;
	rc = torture_parse_args(&run, argc, argv);
	if (rc >= 0)
		return rc;
	if (torture_setup_fault(&run) != 0)
		return TORTURE_EXIT_USAGE;
	torture_crash_handlers(&run);
	torture_stop_handlers();
	torture_log_setup(&run);
	/* before the first nrt_init: the host accounting baseline (nothing is
	 * live yet: kalloc_live_count() must be 0 after close as well) */
	oracle_set_fail_hook(torture_oracle_fail, &run);
	oracle_begin();
	run.start_ns = torture_now_ns();
	if (torture_watchdog_start(&run) != 0)
		return TORTURE_EXIT_USAGE;
	if (run.k.controlled)
		trace_text = torture_run_controlled(&run);
	else
		torture_body(&run);
	torture_watchdog_stop(&run);
	kfault_clear();
	for (uint32_t i = 0; i < run.nthreads; i++)
		for (int h = 0; h < TORTURE_MAX_HISTS; h++)
			torture_hist_merge(&hist[h], &run.th[i].hist[h]);
	rc = torture_failed(&run) ? TORTURE_EXIT_CHECK : TORTURE_EXIT_OK;
	if (rc)
		torture_write_repro(&run, trace_text, "check failed", repro, sizeof(repro));
	/* the checks held but the summary the caller asked for is lost (a
	 * JSON file, or stdout on a full disk or a closed pipe) */
	if (torture_summary(&run, hist, rc, repro) != 0 && rc == TORTURE_EXIT_OK)
		rc = TORTURE_EXIT_USAGE;
	if (kfile_stdout_done(ops->name) != 0 && rc == TORTURE_EXIT_OK)
		rc = TORTURE_EXIT_USAGE;
	free(run.k.trace);
	free(trace_text);
	return torture_stop_signal ? 128 + torture_stop_signal : rc;
}
