/*
 * sched_toys.c - the controlled scheduler finds the four classic
 * concurrency bugs in toy programs built on ksched.h (a lost update, an
 * order violation, an ABBA deadlock, a missed wakeup), by fuzz-input bytes
 * and by PCT within a bounded number of runs, and replays each from its
 * recorded trace 100 times out of 100 with the same outcome and the same
 * (thread, site) step sequence.  The correct version of each toy never
 * fails under the same schedules, so a finding is not the scheduler's own.
 */
#include "ktest.h"
#include "sched/kctl.h"

/* ---- the toys ------------------------------------------------------------
 * A toy's bug is either an assertion inside it (toy_bug) or a deadlock the
 * scheduler reports (caught by on_failure below, so the test goes on). */

static bool toy_bug;
static bool toy_correct; /* run the fixed version */
static ks_atomic_t counter, ready;
static ks_mutex_t ma, mb;
static ks_cond_t cv;

static void *lost_update_worker(void *arg)
{
	(void)arg;
	if (toy_correct) {
		ks_atomic_add(&counter, 1);
	} else {
		int64_t v = ks_atomic_load(&counter); /* read ... */
		ks_atomic_store(&counter, v + 1);     /* ... modify-write: not one step */
	}
	return NULL;
}

static void lost_update(void *arg)
{
	ks_thread_t t[2];

	(void)arg;
	ks_atomic_store(&counter, 0);
	for (int i = 0; i < 2; i++)
		ks_thread_create(&t[i], "adder", lost_update_worker, NULL);
	for (int i = 0; i < 2; i++)
		ks_thread_join(&t[i], NULL);
	toy_bug = ks_atomic_peek(&counter) != 2;
}

static void *order_worker(void *arg)
{
	(void)arg;
	if (ks_atomic_load(&ready) == 0) /* uses what main has not set up yet */
		toy_bug = true;
	return NULL;
}

static void order_violation(void *arg)
{
	ks_thread_t t;

	(void)arg;
	ks_atomic_store(&ready, 0);
	if (toy_correct)
		ks_atomic_store(&ready, 1);
	ks_thread_create(&t, "user", order_worker, NULL);
	ks_atomic_store(&ready, 1); /* the initialisation, too late */
	ks_thread_join(&t, NULL);
}

static void *abba_worker(void *arg)
{
	bool reverse = arg != NULL && !toy_correct;
	ks_mutex_t *first = reverse ? &mb : &ma, *second = reverse ? &ma : &mb;

	ks_mutex_lock(first);
	ks_mutex_lock(second);
	ks_mutex_unlock(second);
	ks_mutex_unlock(first);
	return NULL;
}

static void abba(void *arg)
{
	ks_thread_t t[2];

	(void)arg;
	ks_mutex_init(&ma);
	ks_mutex_init(&mb);
	ks_thread_create(&t[0], "ab", abba_worker, NULL);
	ks_thread_create(&t[1], "ba", abba_worker, &t[1]);
	ks_thread_join(&t[0], NULL);
	ks_thread_join(&t[1], NULL);
}

static void *waiter(void *arg)
{
	(void)arg;
	if (toy_correct) {
		ks_mutex_lock(&ma);
		while (!ks_atomic_load(&ready))
			ks_cond_wait(&cv, &ma);
		ks_mutex_unlock(&ma);
		return NULL;
	}
	if (!ks_atomic_load(&ready)) { /* checked outside the lock ... */
		ks_mutex_lock(&ma);
		ks_cond_wait(&cv, &ma); /* ... so the signal may already be gone */
		ks_mutex_unlock(&ma);
	}
	return NULL;
}

static void *signaller(void *arg)
{
	(void)arg;
	if (toy_correct)
		ks_mutex_lock(&ma);
	ks_atomic_store(&ready, 1);
	if (!toy_correct)
		ks_mutex_lock(&ma);
	ks_cond_signal(&cv);
	ks_mutex_unlock(&ma);
	return NULL;
}

static void missed_wakeup(void *arg)
{
	ks_thread_t t[2];

	(void)arg;
	ks_mutex_init(&ma);
	ks_cond_init(&cv);
	ks_atomic_store(&ready, 0);
	ks_thread_create(&t[0], "waiter", waiter, NULL);
	ks_thread_create(&t[1], "signaller", signaller, NULL);
	ks_thread_join(&t[0], NULL);
	ks_thread_join(&t[1], NULL);
}

/* ---- running them ------------------------------------------------------- */

typedef struct outcome {
	bool bug;
	ks_failure_t failure;
	uint64_t steps, hash;
	uint8_t trace[512];
	size_t ntrace;
} outcome_t;

static void note_failure(void *ctx, ks_failure_t kind, const char *report)
{
	(void)ctx;
	(void)kind;
	(void)report;
}

static outcome_t run(void (*toy)(void *), ks_ctl_config_t *cfg)
{
	ks_ctl_result_t r;
	outcome_t o;

	cfg->on_failure = note_failure;
	cfg->max_steps = 10000;
	toy_bug = false;
	KT_EQ(ks_ctl_run(cfg, toy, NULL, &r), 0);
	memset(&o, 0, sizeof(o));
	o.bug = toy_bug;
	o.failure = r.failure;
	o.steps = r.steps;
	o.hash = r.step_hash;
	KT_LE(r.ntrace, sizeof(o.trace));
	o.ntrace = r.ntrace;
	memcpy(o.trace, r.trace, r.ntrace);
	return o;
}

static bool found(const outcome_t *o, ks_failure_t expect)
{
	if (expect == KS_OK)
		return o->bug && o->failure == KS_OK;
	return o->failure == expect;
}

/* The test's own PRNG (xorshift), for inputs longer than two bytes. */
static uint64_t test_rng = 88172645463325252ull;

static size_t next_input(unsigned i, uint8_t *buf)
{
	size_t n;

	if (i < 256) {
		buf[0] = (uint8_t)i;
		return 1;
	}
	test_rng ^= test_rng << 13;
	test_rng ^= test_rng >> 7;
	test_rng ^= test_rng << 17;
	n = 2 + test_rng % 7;
	for (size_t j = 0; j < n; j++)
		buf[j] = (uint8_t)(test_rng >> (8 * j));
	return n;
}

#define BYTE_RUNS 3000
#define PCT_SEEDS 1000

static unsigned find_by_bytes(void (*toy)(void *), ks_failure_t expect, outcome_t *hit)
{
	uint8_t buf[16];
	ks_ctl_config_t cfg;

	test_rng = 88172645463325252ull;
	for (unsigned i = 0; i < BYTE_RUNS; i++) {
		ks_ctl_config_init(&cfg);
		cfg.bytes = buf;
		cfg.nbytes = next_input(i, buf);
		*hit = run(toy, &cfg);
		if (found(hit, expect))
			return i + 1;
	}
	return 0;
}

static unsigned find_by_pct(void (*toy)(void *), ks_failure_t expect, outcome_t *hit)
{
	ks_ctl_config_t cfg;

	for (unsigned seed = 1; seed <= PCT_SEEDS; seed++) {
		ks_ctl_config_init(&cfg);
		cfg.strategy = KS_STRAT_PCT;
		cfg.seed = seed;
		cfg.pct_depth = 2;
		cfg.pct_k_hint = 40;
		*hit = run(toy, &cfg);
		if (found(hit, expect))
			return seed;
	}
	return 0;
}

/* 100 replays of the recorded trace: same outcome, same steps. */
static void replay_100(void (*toy)(void *), const outcome_t *hit, ks_failure_t expect)
{
	for (int i = 0; i < 100; i++) {
		ks_ctl_config_t cfg;
		outcome_t o;

		ks_ctl_config_init(&cfg);
		cfg.strategy = KS_STRAT_REPLAY;
		cfg.trace = hit->trace;
		cfg.ntrace = hit->ntrace;
		o = run(toy, &cfg);
		KT_ASSERT(found(&o, expect));
		KT_EQ(o.hash, hit->hash);
		KT_EQ(o.steps, hit->steps);
		KT_EQ(o.ntrace, hit->ntrace);
		KT_MEMEQ(o.trace, hit->trace, hit->ntrace);
	}
}

/* The fixed toy survives every schedule the search above tries first. */
static void correct_never_fails(void (*toy)(void *))
{
	uint8_t buf[16];
	ks_ctl_config_t cfg;
	outcome_t o;

	toy_correct = true;
	test_rng = 88172645463325252ull;
	for (unsigned i = 0; i < 400; i++) {
		ks_ctl_config_init(&cfg);
		cfg.bytes = buf;
		cfg.nbytes = next_input(i, buf);
		o = run(toy, &cfg);
		KT_ASSERT(!o.bug && o.failure == KS_OK);
		ks_ctl_config_init(&cfg);
		cfg.strategy = KS_STRAT_PCT;
		cfg.seed = i + 1;
		cfg.pct_k_hint = 40;
		o = run(toy, &cfg);
		KT_ASSERT(!o.bug && o.failure == KS_OK);
	}
	toy_correct = false;
}

static void hunt(const char *name, void (*toy)(void *), ks_failure_t expect)
{
	outcome_t hit;
	unsigned by_bytes, by_pct;

	by_bytes = find_by_bytes(toy, expect, &hit);
	KT_GT(by_bytes, 0);
	replay_100(toy, &hit, expect);
	by_pct = find_by_pct(toy, expect, &hit);
	KT_GT(by_pct, 0);
	replay_100(toy, &hit, expect);
	correct_never_fails(toy);
	fprintf(stderr, "%s: found by bytes in %u runs, by PCT at seed %u; replayed 100/100\n",
	        name, by_bytes, by_pct);
}

/* toys-1.1: a read-modify-write split over two atomics loses an update. */
static void case_lost_update(void)
{
	hunt("lost update", lost_update, KS_OK);
}

/* toys-1.2: a worker started before its data is initialised sees it unset. */
static void case_order_violation(void)
{
	hunt("order violation", order_violation, KS_OK);
}

/* toys-1.3: two threads taking two locks in opposite orders deadlock, and
 * the scheduler reports it as KSCHED DEADLOCK. */
static void case_abba(void)
{
	hunt("ABBA deadlock", abba, KS_DEADLOCK);
}

/* toys-1.4: a predicate checked outside the lock misses the signal and the
 * waiter sleeps forever: a deadlock. */
static void case_missed_wakeup(void)
{
	hunt("missed wakeup", missed_wakeup, KS_DEADLOCK);
}

/* toys-1.5: with no bytes the fallback never preempts, so the buggy toys
 * pass: the findings above come from the decisions, not from chance. */
static void case_fallback_is_serial(void)
{
	void (*toys[])(void *) = {lost_update, abba, missed_wakeup};

	for (size_t i = 0; i < sizeof(toys) / sizeof(toys[0]); i++) {
		ks_ctl_config_t cfg;
		outcome_t o;

		ks_ctl_config_init(&cfg);
		o = run(toys[i], &cfg);
		KT_ASSERT(!o.bug);
		KT_EQ(o.failure, KS_OK);
	}
}

int main(int argc, char **argv)
{
	/* optional argument: run only the cases whose name starts with it */
	kt_only = argc > 1 ? argv[1] : NULL;
	KT_CASE("toys-1.1 lost update", case_lost_update);
	KT_CASE("toys-1.2 order violation", case_order_violation);
	KT_CASE("toys-1.3 ABBA deadlock", case_abba);
	KT_CASE("toys-1.4 missed wakeup", case_missed_wakeup);
	KT_CASE("toys-1.5 fallback is serial", case_fallback_is_serial);
	KT_DONE();
}
