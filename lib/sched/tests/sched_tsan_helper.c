/*
 * sched_tsan_helper.c - the lost-update toy on a plain int, run under the
 * controlled backend, for sched_tsan: "racy" increments without a lock
 * (TSan must report it: the baton handoff hides no race), "locked" under a
 * ks_mutex (TSan must stay silent: modelled locks give the real
 * happens-before).  Not a test by itself.
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
	ks_ctl_config_t cfg;
	ks_ctl_result_t r;

	if (argc != 2 || (strcmp(argv[1], "racy") && strcmp(argv[1], "locked"))) {
		fprintf(stderr, "usage: %s racy|locked\n", argv[0]);
		return 2;
	}
	locked = strcmp(argv[1], "locked") == 0;
	ks_mutex_init(&m);
	ks_ctl_config_init(&cfg);
	cfg.strategy = KS_STRAT_RR; /* switch at every point: maximal interleaving */
	KT_EQ(ks_ctl_run(&cfg, body, NULL, &r), 0);
	KT_EQ(r.failure, KS_OK);
	printf("counter=%d switches=%llu\n", counter.v, (unsigned long long)r.switches);
	return 0;
}
