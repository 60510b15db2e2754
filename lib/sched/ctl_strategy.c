/*
 * ctl_strategy.c - the decision sources of the controlled backend: fuzz
 * input bytes, PCT, round-robin and replay of a recorded trace.
 *
 * Each decision chooses among the runnable threads in a fixed order: the
 * current thread first when it can continue, then the others by id after
 * it.  Index 0 is therefore "no preemption", and it is also the fallback
 * once bytes or trace run out, so every input ends the same way.
 *
 * A strategy is a row of ops: its pick, and the hooks only PCT needs (its
 * priorities at the start, at a new thread, at each step, at a yield).
 */
#include "ctl_int.h"
#include "ksplitmix.h"

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

static void pct_init(void)
{
	uint64_t k = ks__g.cfg.pct_k_hint ? ks__g.cfg.pct_k_hint : 1000;

	ks__g.rng = ks__g.cfg.seed;
	/* d-1 change points, uniform over the first k steps */
	ks__g.pct_nchange = pct_depth() - 1;
	for (uint32_t i = 0; i < ks__g.pct_nchange; i++)
		ks__g.pct_change[i] = 1 + rng_next() % k;
	ks__g.pct_floor = 0;
}

/* Initial priorities are random and all above d, the change-point ones. */
static void pct_new_thread(struct ks_lthread *t)
{
	t->prio = (int64_t)pct_depth() + 1 + (int64_t)(rng_next() >> 2);
}

static void pct_step(struct ks_lthread *cur)
{
	/* At the i-th change point the running thread drops to d - i. */
	for (uint32_t i = 0; i < ks__g.pct_nchange; i++)
		if (ks__g.pct_change[i] == ks__g.steps)
			cur->prio = (int64_t)pct_depth() - 1 - (int64_t)i;
}

/* A yield or sleep puts the thread below everyone (PCT only): a spinner
 * must not keep the thread it waits for from running. */
static void pct_lower(struct ks_lthread *t)
{
	t->prio = --ks__g.pct_floor;
}

static int pick_pct(struct ks_lthread *const *cand, int n, bool self_runnable)
{
	(void)self_runnable;
	int best = 0;

	for (int i = 1; i < n; i++)
		if (cand[i]->prio > cand[best]->prio)
			best = i;
	return best;
}

/* ceil(log2(n)) bits, least significant first, value mod n. */
static int pick_bytes(struct ks_lthread *const *cand, int n, bool self_runnable)
{
	unsigned bits = 0;
	uint32_t v = 0;
	size_t avail = ks__g.cfg.nbytes * 8;

	(void)cand;
	(void)self_runnable;
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

static int pick_replay(struct ks_lthread *const *cand, int n, bool self_runnable)
{
	int want;

	(void)self_runnable;
	if (ks__g.tracepos >= ks__g.cfg.ntrace)
		return 0;
	want = ks__g.cfg.trace[ks__g.tracepos++];
	for (int i = 0; i < n; i++)
		if (cand[i]->id == want)
			return i;
	return -1;
}

/* Round-robin: the next thread after the current one whenever it could
 * go on, so every point that can preempt does. */
static int pick_rr(struct ks_lthread *const *cand, int n, bool self_runnable)
{
	(void)cand;
	(void)n;
	return self_runnable ? 1 : 0;
}

typedef struct ks_strategy_ops {
	const char *name;
	int (*pick)(struct ks_lthread *const *cand, int n, bool self_runnable);
	void (*init)(void);                       /* at ks_ctl_begin; NULL: nothing */
	void (*new_thread)(struct ks_lthread *t); /* NULL: nothing */
	void (*step)(struct ks_lthread *cur);     /* NULL: nothing */
	void (*lower)(struct ks_lthread *t);      /* a yield or sleep; NULL: nothing */
} ks_strategy_ops_t;

static const ks_strategy_ops_t strategies[] = {
    [KS_STRAT_BYTES] = {"bytes", pick_bytes, NULL, NULL, NULL, NULL},
    [KS_STRAT_PCT] = {"pct", pick_pct, pct_init, pct_new_thread, pct_step, pct_lower},
    [KS_STRAT_RR] = {"round-robin", pick_rr, NULL, NULL, NULL, NULL},
    [KS_STRAT_REPLAY] = {"replay", pick_replay, NULL, NULL, NULL, NULL},
};

/* An unknown strategy decides from bytes, as the config's default does. */
static const ks_strategy_ops_t *strat(void)
{
	unsigned s = (unsigned)ks__g.cfg.strategy;

	return s < sizeof(strategies) / sizeof(strategies[0]) ? &strategies[s]
	                                                      : &strategies[KS_STRAT_BYTES];
}

const char *ks__strat_name(ks_strategy_t s)
{
	return (unsigned)s < sizeof(strategies) / sizeof(strategies[0]) ? strategies[s].name : "?";
}

void ks__strat_init(void)
{
	ks__g.access_points = ks__g.cfg.access_points || ks__access_points_env();
	if (strat()->init)
		strat()->init();
}

void ks__strat_new_thread(struct ks_lthread *t)
{
	if (strat()->new_thread)
		strat()->new_thread(t);
}

void ks__strat_step(struct ks_lthread *cur)
{
	if (strat()->step)
		strat()->step(cur);
}

void ks__strat_lower(struct ks_lthread *t)
{
	if (strat()->lower)
		strat()->lower(t);
}

int ks__strat_pick(struct ks_lthread *const *cand, int n, bool self_runnable)
{
	return strat()->pick(cand, n, self_runnable);
}
