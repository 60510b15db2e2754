/*
 * test_nrt_race.c - the focus of this file is public calls racing nrt_close,
 * forced under the controlled scheduler so that every run takes the same
 * interleavings: one thread unloads a model while main closes the runtime,
 * and the unloader is preempted once, at each of its scheduling points in
 * turn (decision bit k of KS_STRAT_BYTES), then main runs as far as it can.
 * Before nrt_close waited for calls in flight, the schedule that preempts
 * the unloader between the facade's unload and the record's unlink freed
 * the record under it (heap-use-after-free in nrt_model_unlink).
 */
#include "nrt_test.h"
#include "sched/kctl.h"

/* Decision bits tried: more than the unloader's scheduling points. */
#define RACE_BITS 256
/* Free-running rounds of race-1.2 (real threads: TSan checks the ordering). */
#define FREE_ROUNDS 200

static const uint32_t in1[] = {8}, out1[] = {8};

static uint8_t *g_bytes;
static size_t g_len;

typedef struct race {
	nrt_model_t *m;
	NRT_STATUS rc; /* the unloader's */
} race_t;

static void *unload_thread(void *p)
{
	race_t *r = p;

	r->rc = nrt_unload(r->m);
	return NULL;
}

static void close_body(void *arg)
{
	race_t *r = arg;
	ks_thread_t th;

	KT_EQ(ks_thread_create(&th, "unloader", unload_thread, r), 0);
	nrt_close();
	KT_EQ(ks_thread_join(&th, NULL), 0);
}

/* race-1.1: nrt_unload in flight while nrt_close runs: the unload either
 * finishes (NRT_SUCCESS) or sees the runtime closed (NRT_CLOSED), nothing is
 * touched after it was freed, and nothing leaks. */
static void unload_vs_close(void)
{
	uint32_t n_success = 0, n_closed = 0;

	for (uint32_t k = 1; k < RACE_BITS; k++) {
		uint8_t bytes[RACE_BITS / 8] = {0};
		ks_ctl_config_t cfg;
		ks_ctl_result_t res;
		race_t r = {0};

		/* Decision 0 hands the CPU to the unloader, decision k back to main. */
		bytes[0] = 1;
		bytes[k / 8] |= (uint8_t)(1u << (k % 8));
		ks_ctl_config_init(&cfg);
		cfg.strategy = KS_STRAT_BYTES;
		cfg.bytes = bytes;
		cfg.nbytes = sizeof(bytes);
		nt_init();
		KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &r.m), NRT_SUCCESS);
		KT_EQ(ks_ctl_run(&cfg, close_body, &r, &res), 0);
		KT_EQ(res.failure, KS_OK);
		if (r.rc == NRT_SUCCESS)
			n_success++;
		else if (r.rc == NRT_CLOSED)
			n_closed++;
		else
			KT_FAIL("k=%u: nrt_unload returned %s", k, nrt_get_status_as_str(r.rc));
		kt_assert_accounting_zero();
	}
	fprintf(stderr, "race-1.1: %u schedules: unload first %u, close first %u\n", RACE_BITS - 1,
	        n_success, n_closed);
	/* Both orders were explored, so the window between them was too. */
	KT_GT(n_success, 0);
	KT_GT(n_closed, 0);
}

/* race-1.2: the same race on real threads, free-running: whatever the
 * timing, the unload answers NRT_SUCCESS or NRT_CLOSED and nothing leaks;
 * under the tsan preset the in-flight count must order the unloader's last
 * touch of its record before nrt_close frees it. */
static void unload_vs_close_free(void)
{
	uint32_t n_success = 0, n_closed = 0;

	for (uint32_t i = 0; i < FREE_ROUNDS; i++) {
		race_t r = {0};
		ks_thread_t th;

		nt_init();
		KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &r.m), NRT_SUCCESS);
		KT_EQ(ks_thread_create(&th, "unloader", unload_thread, &r), 0);
		nrt_close();
		KT_EQ(ks_thread_join(&th, NULL), 0);
		if (r.rc == NRT_SUCCESS)
			n_success++;
		else if (r.rc == NRT_CLOSED)
			n_closed++;
		else
			KT_FAIL("round %u: nrt_unload returned %s", i, nrt_get_status_as_str(r.rc));
		kt_assert_accounting_zero();
	}
	fprintf(stderr, "race-1.2: %u rounds: unload first %u, close first %u\n", FREE_ROUNDS,
	        n_success, n_closed);
}

int main(void)
{
	nt_env_clear();
	unsetenv("KMGR_FAULT");
	g_bytes = kt_model_malloc("nt", 1, false, 1, in1, 1, out1, &g_len);
	KT_CASE("race-1.1 nrt_unload vs nrt_close", unload_vs_close);
	KT_CASE("race-1.2 nrt_unload vs nrt_close, free-running", unload_vs_close_free);
	free(g_bytes);
	KT_DONE();
}
