/*
 * ctl_strategy.c - the decision sources of the controlled backend: fuzz
 * input bytes, PCT, round-robin and replay of a recorded trace.
 *
 * Each decision chooses among the runnable threads in a fixed order: the
 * current thread first when it can continue, then the others by id after
 * it.  Index 0 is therefore "no preemption", and it is also the fallback
 * once bytes or trace run out, so every input ends the same way.
 *
 * Also the opt-in access points (ks_access_point, docs/scheduler.md): at
 * one, the sleeping threads are candidates after the runnable ones.
 */
#include <stdlib.h>
#include <string.h>

#include "ctl_int.h"
#include "ksplitmix.h"

const char *ks__strat_name(ks_strategy_t s)
{
	static const char *const names[] = {"bytes", "pct", "round-robin", "replay"};

	return (unsigned)s < 4 ? names[s] : "?";
}

/* The scheduler's own PRNG, seeded only from the config. */
static uint64_t rng_next(void)
{
	return ks_splitmix64(&ks__g.rng);
}

static uint32_t pct_depth(void)
{
	uint32_t d = ks__g.cfg.pct_depth ? ks__g.cfg.pct_depth : 1;
	uint32_t max = sizeof(ks__g.pct_change) / sizeof(ks__g.pct_change[0]) + 1;

	return d < max ? d : max;
}

/* KMGR_SCHED_ACCESS_POINTS=1: access points on for every run of the
 * process.  Read once: a run must not change behaviour mid-process. */
static bool access_points_env(void)
{
	static int on = -1;

	if (on < 0) {
		const char *s = getenv("KMGR_SCHED_ACCESS_POINTS");

		on = s && strcmp(s, "1") == 0;
	}
	return on;
}

void ks__strat_init(void)
{
	uint64_t k = ks__g.cfg.pct_k_hint ? ks__g.cfg.pct_k_hint : 1000;

	ks__g.access_points = ks__g.cfg.access_points || access_points_env();
	if (ks__g.cfg.strategy != KS_STRAT_PCT)
		return;
	ks__g.rng = ks__g.cfg.seed;
	/* d-1 change points, uniform over the first k steps */
	ks__g.pct_nchange = pct_depth() - 1;
	for (uint32_t i = 0; i < ks__g.pct_nchange; i++)
		ks__g.pct_change[i] = 1 + rng_next() % k;
	ks__g.pct_floor = 0;
}

/* Initial priorities are random and all above d, the change-point ones. */
void ks__strat_new_thread(struct ks_lthread *t)
{
	if (ks__g.cfg.strategy != KS_STRAT_PCT)
		return;
	t->prio = (int64_t)pct_depth() + 1 + (int64_t)(rng_next() >> 2);
}

void ks__strat_step(struct ks_lthread *cur)
{
	if (ks__g.cfg.strategy != KS_STRAT_PCT)
		return;
	/* At the i-th change point the running thread drops to d - i. */
	for (uint32_t i = 0; i < ks__g.pct_nchange; i++)
		if (ks__g.pct_change[i] == ks__g.steps)
			cur->prio = (int64_t)pct_depth() - 1 - (int64_t)i;
}

/* A yield or sleep puts the thread below everyone (PCT only): a spinner
 * must not keep the thread it waits for from running. */
void ks__strat_lower(struct ks_lthread *t)
{
	if (ks__g.cfg.strategy == KS_STRAT_PCT)
		t->prio = --ks__g.pct_floor;
}

static int pick_pct(struct ks_lthread *const *cand, int n)
{
	int best = 0;

	for (int i = 1; i < n; i++)
		if (cand[i]->prio > cand[best]->prio)
			best = i;
	return best;
}

/* ceil(log2(n)) bits, least significant first, value mod n. */
static int pick_bytes(int n)
{
	unsigned bits = 0;
	uint32_t v = 0;
	size_t avail = ks__g.cfg.nbytes * 8;

	while ((1u << bits) < (unsigned)n)
		bits++;
	if (ks__g.bitpos + bits > avail) {
		ks__g.bitpos = avail;
		return 0;
	}
	for (unsigned i = 0; i < bits; i++, ks__g.bitpos++)
		v |= (uint32_t)((ks__g.cfg.bytes[ks__g.bitpos >> 3] >> (ks__g.bitpos & 7)) & 1)
		     << i;
	return (int)(v % (unsigned)n);
}

static int pick_replay(struct ks_lthread *const *cand, int n)
{
	int want;

	if (ks__g.tracepos >= ks__g.cfg.ntrace)
		return 0;
	want = ks__g.cfg.trace[ks__g.tracepos++];
	for (int i = 0; i < n; i++)
		if (cand[i]->id == want)
			return i;
	return -1;
}

int ks__strat_pick(struct ks_lthread *const *cand, int n, bool self_runnable)
{
	switch (ks__g.cfg.strategy) {
	case KS_STRAT_PCT:
		return pick_pct(cand, n);
	case KS_STRAT_RR:
		return self_runnable ? 1 : 0;
	case KS_STRAT_REPLAY:
		return pick_replay(cand, n);
	case KS_STRAT_BYTES:
	default:
		return pick_bytes(n);
	}
}

/* ---- access points ---------------------------------------------------- */

/* Off: no step, no decision, so a run is exactly what it was without the
 * call (corpora recorded without access points replay unchanged). */
void ks_ctl_access_point(const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	if (!ks__g.access_points) {
		ks__leave();
		return;
	}
	if (ks__failed()) {
		ks__failed_point();
	} else {
		t->at_access = true;
		ks__point(t, site);
		t->at_access = false;
	}
	ks__leave();
}

/* A sleeping thread is not runnable while anyone else is (virtual time),
 * so a drain that polls with usleep never probes inside another thread's
 * window.  At an access point real time may have passed: the sleepers are
 * candidates too, after the runnable ones. */
int ks__access_sleepers(const struct ks_lthread *self, struct ks_lthread **cand, int n)
{
	int j = self->id;

	for (int i = 0; i < ks__g.nthreads; i++, j++) {
		if (j >= ks__g.nthreads)
			j -= ks__g.nthreads;
		if (atomic_load_explicit(&ks__g.thr[j].state, memory_order_relaxed) ==
		    KS_T_SLEEPING)
			cand[n++] = &ks__g.thr[j];
	}
	return n;
}

/* A sleeper chosen at an access point: its sleep ends now. */
void ks__access_chosen(struct ks_lthread *t)
{
	if (atomic_load_explicit(&t->state, memory_order_relaxed) != KS_T_SLEEPING)
		return;
	if (t->wake_ns > atomic_load_explicit(&ks__g.vtime, memory_order_relaxed))
		atomic_store_explicit(&ks__g.vtime, t->wake_ns, memory_order_relaxed);
	atomic_store_explicit(&t->state, KS_T_RUNNABLE, memory_order_relaxed);
}
