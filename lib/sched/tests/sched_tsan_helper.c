/*
 * sched_tsan_helper.c - the lost-update toy on a plain int, run under the
 * controlled backend, for sched_tsan: "racy" increments without a lock
 * (TSan must report it: the baton handoff hides no race), "locked" under a
 * ks_mutex (TSan must stay silent: modelled locks give the real
 * happens-before), "reuse" and "reuse-spin" a joined thread's slot given to
 * a thread created by one that never synchronized with the joiner (TSan
 * must stay silent: the two threads share no program memory, only the
 * scheduler's slot).
 * Built with the load/store callbacks (func,trace-loads,trace-stores), so
 * that every global access goes through ctl_access.c as in a fuzz build.
 * Not a test by itself.
 */
#include <string.h>

#include "ktest.h"
#include "sched/kctl.h"

/* Plain memory: the race TSan must see.  In a 64-byte line of its own:
 * TSan remembers four accesses per 8 bytes, so a neighbour the linker puts
 * in the same 8 bytes and every thread touches (ks__ctl_active did, after
 * the ctl.c split) can crowd out the write the report needs, and the test
 * would then pass or fail on the link order instead of on the handoff. */
static struct {
	_Alignas(64) int v;
} counter;
static bool locked;
static ks_mutex_t m;

static void *adder(void *arg)
{
	(void)arg;
	KT_ASSERT(ks_controlled());
	if (locked)
		ks_mutex_lock(&m);
	int v = counter.v;
	ks_point();
	counter.v = v + 1;
	if (locked)
		ks_mutex_unlock(&m);
	return NULL;
}

/* "reuse": each thread writes only its own variable (its own line). */
static struct {
	_Alignas(64) volatile int x;
	_Alignas(64) volatile int y;
	_Alignas(64) int x_id;
	_Alignas(64) int y_id;
} own;
/* Global accesses a writer makes, each counted in the running thread's
 * slot by the callback: a few ("reuse"), or one past KS_SPIN_BOUND
 * (ctl_int.h: 100000) with the spin detector on ("reuse-spin"), which then
 * yields once and resets the slot's counters.  A few only in "reuse": after
 * 100000 accesses TSan no longer reports the first writer's count (its
 * bounded history), so the count's own race would go unseen; "reuse-spin"
 * is seen only with the tests' history_size=7 (sanitizers/tsan.options). */
static uint32_t accesses;

static void *writer_x(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < accesses; i++)
		own.x = 1;
	own.x_id = ks_ctl_self();
	return NULL;
}

/* The same counters of the same slot, now Y's. */
static void *writer_y(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < accesses; i++)
		own.y = 1;
	own.y_id = ks_ctl_self();
	return NULL;
}

/* A: create X and join it; X's slot is free again. */
static void *joiner(void *arg)
{
	ks_thread_t x;

	(void)arg;
	KT_EQ(ks_thread_create(&x, "writer-x", writer_x, NULL), 0);
	KT_EQ(ks_thread_join(&x, NULL), 0);
	return NULL;
}

/* main creates Y once A has joined X (a virtual-time sleep: main runs
 * again only when nobody else can, and a sleep is no edge), so Y gets X's
 * slot with nothing ordering X before main or Y. */
static void body_reuse(void *arg)
{
	ks_thread_t a, y;

	(void)arg;
	KT_EQ(ks_thread_create(&a, "joiner", joiner, NULL), 0);
	ks_usleep(1000);
	KT_EQ(ks_thread_create(&y, "writer-y", writer_y, NULL), 0);
	KT_EQ(ks_thread_join(&y, NULL), 0);
	KT_EQ(ks_thread_join(&a, NULL), 0);
	/* the case is about a reused slot: make sure it was one */
	KT_EQ(own.x_id, own.y_id);
}

static void body(void *arg)
{
	ks_thread_t t[2];

	(void)arg;
	for (int i = 0; i < 2; i++)
		ks_thread_create(&t[i], "adder", adder, NULL);
	for (int i = 0; i < 2; i++)
		ks_thread_join(&t[i], NULL);
}

int main(int argc, char **argv)
{
	void (*run)(void *) = body;
	ks_ctl_config_t cfg;
	ks_ctl_result_t r;

	if (argc != 2) {
		fprintf(stderr, "usage: %s racy|locked|reuse|reuse-spin\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "reuse") || !strcmp(argv[1], "reuse-spin")) {
		run = body_reuse;
		accesses = strcmp(argv[1], "reuse") ? 100001u : 10u;
		ks_ctl_spin_detect(accesses > 10u);
	} else if (strcmp(argv[1], "racy") && strcmp(argv[1], "locked")) {
		fprintf(stderr, "usage: %s racy|locked|reuse|reuse-spin\n", argv[0]);
		return 2;
	}
	locked = strcmp(argv[1], "locked") == 0;
	ks_mutex_init(&m);
	ks_ctl_config_init(&cfg);
	cfg.strategy = KS_STRAT_RR; /* switch at every point: maximal interleaving */
	KT_EQ(ks_ctl_run(&cfg, run, NULL, &r), 0);
	KT_EQ(r.failure, KS_OK);
	printf("counter=%d switches=%llu\n", counter.v, (unsigned long long)r.switches);
	return 0;
}
