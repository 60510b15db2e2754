/*
 * ctl_report.c - the failures of a controlled run (deadlock, hang,
 * divergence): the report with its stable signature line and every
 * thread's state, the failure callback, and the unwinding of every logical
 * thread out of the failed run; and the misuse stop.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_int.h"

static char report[KS_CTL_REPORT_MAX];

static const char *wait_name(enum ks_wait w)
{
	static const char *const names[] = {"",          "mutex",     "rwlock",
	                                    "condition", "semaphore", "join"};

	return names[w];
}

static int describe_thread(char *p, size_t len, const struct ks_lthread *t)
{
	const char *site = t->site ? t->site : "(start)";

	switch (tstate(t)) {
	case KS_T_RUNNABLE:
		return snprintf(p, len, "  thread %d \"%s\": runnable, last at %s\n", t->id,
		                t->name, site);
	case KS_T_BLOCKED:
		if (t->timed)
			return snprintf(p, len,
			                "  thread %d \"%s\": blocked on %s until %llu ns at %s\n",
			                t->id, t->name, wait_name(t->wait_kind),
			                (unsigned long long)t->wake_ns, site);
		return snprintf(p, len, "  thread %d \"%s\": blocked on %s at %s\n", t->id, t->name,
		                wait_name(t->wait_kind), site);
	case KS_T_SLEEPING:
		return snprintf(p, len, "  thread %d \"%s\": sleeping until %llu ns at %s\n", t->id,
		                t->name, (unsigned long long)t->wake_ns, site);
	default:
		return snprintf(p, len, "  thread %d \"%s\": finished\n", t->id, t->name);
	}
}

/* Append s to the report at *off, never past its end. */
static void put(size_t *off, int n)
{
	if (n > 0)
		*off += (size_t)n;
	if (*off >= sizeof(report))
		*off = sizeof(report) - 1;
}

static void build_report(ks_failure_t kind, const char *what)
{
	static const char *const sig[] = {"", "KSCHED DEADLOCK", "KSCHED HANG",
	                                  "KSCHED DIVERGENCE"};
	size_t off = 0;

	put(&off, snprintf(report, sizeof(report), "%s: %s (step %llu, %d threads, strategy %s)\n",
	                   sig[kind], what, (unsigned long long)ks__g.steps, ks__g.nthreads,
	                   ks__strat_name(ks__g.cfg.strategy)));
	for (int i = 0; i < ks__g.nthreads; i++)
		put(&off, describe_thread(report + off, sizeof(report) - off, &ks__g.thr[i]));
	put(&off, snprintf(report + off, sizeof(report) - off,
	                   "  trace (%zu decisions): ", ks__g.ntrace));
	if (ks__g.ntrace * 3 < sizeof(report) - off - 8)
		put(&off, ks_ctl_trace_format(ks__trace, ks__g.ntrace, report + off,
		                              sizeof(report) - off));
	else
		put(&off, snprintf(report + off, sizeof(report) - off, "(too long to print)"));
	snprintf(report + off, sizeof(report) - off, "\n");
}

void ks__default_failure(void *ctx, ks_failure_t kind, const char *text)
{
	(void)ctx;
	(void)kind;
	fputs(text, stderr);
	fflush(stderr);
	abort();
}

/* Unwind the calling thread out of an aborted run: a worker back to its
 * trampoline, main back to ks_ctl_run; main under ks_ctl_begin just returns
 * and every later call passes through. */
void ks__abort_self(struct ks_lthread *t)
{
	if (tstate(t) == KS_T_FINISHED || !t->has_jb)
		return;
	ks__leave();
	longjmp(t->jb, 1);
}

void ks__fail(struct ks_lthread *self, ks_failure_t kind, const char *what)
{
	build_report(kind, what);
	atomic_store(&ks__g.failed, kind);
	ks__g.cfg.on_failure(ks__g.cfg.failure_ctx, kind, report);
	if (ks__g.fibers) {
		/* Main unwinds first; ks_ctl_end then resumes every other fiber
		 * once, to unwind it out of the run (unwind_fibers). */
		if (self->id != 0) {
			ks__tl_self = &ks__g.thr[0];
			ks__fiber_switch(self->id, 0, KS_FIBER_RUN);
		}
		ks__abort_self(self);
		return;
	}
	/* Every parked thread wakes, sees the failure and unwinds. */
	for (int i = 0; i < ks__g.nthreads; i++) {
		struct ks_lthread *t = &ks__g.thr[i];

		if (t != self && tstate(t) != KS_T_FINISHED && (t->started || t->id == 0))
			ks__baton_give(t);
	}
	ks__abort_self(self);
}

_Noreturn void ks__misuse(const char *what, const char *site)
{
	fprintf(stderr, "KSCHED MISUSE: %s at %s\n", what, site);
	abort();
}
