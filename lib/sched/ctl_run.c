/*
 * ctl_run.c - a controlled run: the config, ks_ctl_begin / ks_ctl_end /
 * ks_ctl_run (waiting for, unwinding and joining every logical thread at
 * the end), and the small queries a running program makes (its thread tag,
 * its logical id, virtual time).
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_int.h"

void ks_ctl_config_init(ks_ctl_config_t *cfg)
{
	const char *engine = getenv("KMGR_SCHED_ENGINE");

	memset(cfg, 0, sizeof(*cfg));
	cfg->engine = engine && !strcmp(engine, "threads") ? KS_ENGINE_THREADS : KS_ENGINE_FIBERS;
	cfg->strategy = KS_STRAT_BYTES;
	cfg->pct_depth = 2;
	cfg->max_steps = KS_CTL_DEFAULT_STEPS;
}

int ks_ctl_begin(const ks_ctl_config_t *cfg)
{
	struct ks_lthread *t = &ks__g.thr[0];

#if defined(KSCHED_PRODUCTION_ONLY)
	(void)t;
	(void)cfg;
	return -1; /* the wrappers of this build never ask the scheduler */
#endif
	if (atomic_load(&ks__ctl_active.on) || ks__tl_self)
		return -1;
	ks__enter();
	/* The state and main's slot, not all 64 slots (25 KiB a run): a
	 * slot is cleared when a thread is given one (ks_ctl_thread_create),
	 * and none is read at or above nthreads. */
	memset(&ks__g, 0, offsetof(struct ks_sched, thr) + sizeof(ks__g.thr[0]));
	/* no thread of this run has an access point armed yet */
	atomic_fetch_and_explicit(&ks__mem_watch, KS_WATCH_SPIN, memory_order_relaxed);
	ks__g.cfg = *cfg;
	ks__g.fibers = cfg->engine == KS_ENGINE_FIBERS;
	if (!ks__g.cfg.on_failure)
		ks__g.cfg.on_failure = ks__default_failure;
	ks__g.max_steps = cfg->max_steps ? cfg->max_steps : KS_CTL_DEFAULT_STEPS;
	ks__g.nthreads = 1;
	t->id = 0;
	snprintf(t->name, sizeof(t->name), "main");
	set_tstate(t, KS_T_RUNNABLE);
	t->started = false; /* main is not ours to join */
	if (ks__g.fibers)
		ks__fiber_main_init();
	ks__strat_init();
	ks__strat_new_thread(t);
	ks__tl_self = t;
	ks__leave();
	atomic_store(&ks__ctl_active.on, 1);
	return 0;
}

/* After a failure: resume each fiber that has not finished once, so that it
 * unwinds out of the run (longjmp to lthread_body) and parks again. */
static void unwind_fibers(void)
{
	for (int i = 1; i < ks__g.nthreads; i++) {
		struct ks_lthread *t = &ks__g.thr[i];

		if (!t->started || tstate(t) == KS_T_FINISHED)
			continue;
		ks__tl_self = t;
		ks__fiber_switch(0, i, KS_FIBER_RUN);
	}
	ks__tl_self = &ks__g.thr[0];
}

static void wait_all(struct ks_lthread *self)
{
	for (int i = 1; i < ks__g.nthreads; i++)
		while (!ks__failed() && tstate(&ks__g.thr[i]) != KS_T_FINISHED)
			ks__block(self, KS_W_JOIN, &ks__g.thr[i], "(ks_ctl_end)");
}

void ks_ctl_end(ks_ctl_result_t *res)
{
	struct ks_lthread *self = ks__enter_self();
	pthread_t pts[KS_CTL_MAX_THREADS];
	int npt = 0;

	if (self->id != 0)
		ks__misuse("ks_ctl_end outside logical thread 0", "(ks_ctl_end)");
	self->has_jb = false;
	wait_all(self);
	if (ks__g.fibers && ks__failed())
		unwind_fibers();
	for (int i = 1; i < ks__g.nthreads; i++) {
		if (ks__g.fibers)
			ks__fiber_release(i);
		else if (ks__g.thr[i].started && !ks__g.thr[i].joined)
			pts[npt++] = ks__g.thr[i].pt;
		ks__g.thr[i].joined = true;
	}
	ks__leave();
	for (int i = 0; i < npt; i++)
		pthread_join(pts[i], NULL);
	/* ks_ctl_end joins every logical thread: on the fiber engine the edge
	 * a pthread_join gives is the finish -> join one of lthread_body. */
	for (int i = 1; ks__g.fibers && i < ks__g.nthreads; i++)
		ks__tsan_acquire(ks__g.thr[i].hb);
	ks__enter();
	if (res) {
		memset(res, 0, sizeof(*res));
		res->failure = (ks_failure_t)atomic_load(&ks__g.failed);
		res->steps = ks__g.steps;
		res->switches = ks__g.switches;
		res->preemptions = ks__g.preemptions;
		res->threads = (uint32_t)(ks__g.created + 1);
		res->trace = ks__trace;
		res->ntrace = ks__g.ntrace;
		res->step_hash = ks__g.step_hash;
		res->trace_truncated = ks__g.trace_truncated;
	}
	ks__tl_self = NULL;
	ks__leave();
	atomic_store(&ks__ctl_active.on, 0);
}

int ks_ctl_run(const ks_ctl_config_t *cfg, void (*body)(void *), void *arg, ks_ctl_result_t *res)
{
	struct ks_lthread *m = &ks__g.thr[0];

	if (ks_ctl_begin(cfg) != 0)
		return -1;
	ks__enter();
	m->has_jb = true;
	ks__leave();
	if (setjmp(m->jb) == 0)
		body(arg);
	ks_ctl_end(res);
	return 0;
}

/* No scheduling point: a thread reading its own tag races with nobody. */
const void *ks_ctl_thread_tag(void)
{
	const void *tag = ks__enter_self()->tag;

	ks__leave();
	return tag;
}

void ks_ctl_thread_tag_set(const void *tag)
{
	ks__enter_self()->tag = tag;
	ks__leave();
}

const char *ks_ctl_engine_name(ks_engine_t e)
{
	return e == KS_ENGINE_THREADS ? "threads" : "fibers";
}

int ks_ctl_self(void)
{
	return ks__tl_self ? ks__tl_self->id : -1;
}

uint64_t ks_ctl_now_ns(void)
{
	return atomic_load_explicit(&ks__g.vtime, memory_order_relaxed);
}

/* The time the reads add wakes the sleepers it passes, as the real clock
 * would: a loop that polls the clock for a flag that a thread asleep for
 * 1 ms sets saw it, and a timed wait took a signal that came after its
 * deadline, while sleepers woke only when no thread could run. */
uint64_t ks_ctl_clock_read(uint64_t tick_ns)
{
	uint64_t now = atomic_fetch_add_explicit(&ks__g.vtime, tick_ns, memory_order_relaxed);

	if (ks__tl_self && !ks__failed()) {
		ks__enter();
		ks__wake_due();
		ks__leave();
	}
	return now;
}
