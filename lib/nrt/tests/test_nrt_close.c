/*
 * test_nrt_close.c - nrt_close while other threads keep calling the API.
 * Four threads loop nrt_get_model_nc_count and nrt_execute (each with its
 * own tensors) on a loaded model; main lets them run, then closes.  Close
 * must return although the calls never stop, and every call answers
 * NRT_SUCCESS (admitted before close) or NRT_CLOSED (after): a refused call
 * does not hold close back.  Before refused calls backed out of the
 * in-flight count ahead of their log line, close waited here for tens of
 * seconds, and this test ran into its ctest TIMEOUT.
 *
 *   nrt_close [ROUNDS [HAMMER_MS]]   (default 3 rounds of 300 ms; the
 *   benchmark: 100 rounds of 2000 ms prints the worst close time)
 */
#include <stdlib.h>

#include "ktest_log.h"
#include "nrt_test.h"
#include "sched/ksched.h"

#define HAMMERS 4

static const uint32_t in1[] = {64}, out1[] = {64};
static uint8_t *g_bytes;
static size_t g_len;

typedef struct hammer {
	nrt_model_t *m;
	kt_nrt_io_t io;
	ks_atomic_t *stop;
	uint64_t ok, closed, other;
	NRT_STATUS other_rc;
} hammer_t;

static void count(hammer_t *h, NRT_STATUS rc)
{
	if (rc == NRT_SUCCESS)
		h->ok++;
	else if (rc == NRT_CLOSED)
		h->closed++;
	else if (!h->other++)
		h->other_rc = rc;
}

static void *hammer_thread(void *p)
{
	hammer_t *h = p;
	uint32_t nc;

	while (!ks_atomic_peek(h->stop)) {
		count(h, nrt_get_model_nc_count(h->m, &nc));
		count(h, nrt_execute(h->m, h->io.in_set, h->io.out_set));
	}
	return NULL;
}

/* One round: returns how long nrt_close took, in ns. */
static uint64_t close_under_load(unsigned hammer_ms)
{
	static hammer_t h[HAMMERS];
	ks_thread_t th[HAMMERS];
	ks_atomic_t stop = KS_ATOMIC_INIT(0);
	nrt_model_t *m = NULL;
	uint64_t t0, took, closed = 0;

	nt_init();
	KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &m), NRT_SUCCESS);
	for (int i = 0; i < HAMMERS; i++) {
		h[i] = (hammer_t){.m = m, .stop = &stop};
		h[i].io.n_in = h[i].io.n_out = 1;
		h[i].io.in_sizes[0] = in1[0];
		h[i].io.out_sizes[0] = out1[0];
		kt_nrt_io_make(&h[i].io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
		KT_EQ(ks_thread_create(&th[i], "hammer", hammer_thread, &h[i]), 0);
	}
	ks_usleep((uint64_t)hammer_ms * 1000);
	t0 = ks_wall_ns();
	nrt_close();
	took = ks_wall_ns() - t0;
	/* the hammers go on after close returns: their calls must be refused */
	ks_usleep(20 * 1000);
	ks_atomic_store(&stop, 1);
	for (int i = 0; i < HAMMERS; i++) {
		KT_EQ(ks_thread_join(&th[i], NULL), 0);
		if (h[i].other)
			KT_FAIL("hammer %d: %llu calls answered %d, not NRT_SUCCESS or NRT_CLOSED",
			        i, (unsigned long long)h[i].other, (int)h[i].other_rc);
		KT_ASSERT(h[i].ok > 0);
		closed += h[i].closed;
		kt_nrt_io_free(&h[i].io);
	}
	KT_ASSERT(closed > 0);
	return took;
}

/* close-1.1: nrt_close returns while four threads keep calling; their
 * calls answer NRT_SUCCESS before it and NRT_CLOSED after it. */
static unsigned g_rounds = 3, g_hammer_ms = 300;

static void close_returns(void)
{
	uint64_t worst = 0, total = 0;

	/* The calls refused after each close say why, one line each (tens of
	 * thousands a round): counted here, not printed; any other line
	 * passes through to stderr. */
	kt_log_expect("called after nrt_close");
	for (unsigned r = 0; r < g_rounds; r++) {
		uint64_t took = close_under_load(g_hammer_ms);

		total += took;
		if (took > worst)
			worst = took;
	}
	printf("nrt_close under %d hammering threads: %u rounds of %u ms, worst close %.3f ms, "
	       "mean %.3f ms; %d refusals logged\n",
	       HAMMERS, g_rounds, g_hammer_ms, worst / 1e6, total / 1e6 / g_rounds, kt_log_lines());
	/* the hammers call on after every close: some calls were refused */
	KT_ASSERT(kt_log_lines() > 0);
	kt_log_release();
}

int main(int argc, char **argv)
{
	if (argc > 1)
		g_rounds = (unsigned)strtoul(argv[1], NULL, 10);
	if (argc > 2)
		g_hammer_ms = (unsigned)strtoul(argv[2], NULL, 10);
	if (!g_rounds || argc > 3) {
		fprintf(stderr, "usage: nrt_close [ROUNDS [HAMMER_MS]]\n");
		return 2;
	}
	nt_env_clear();
	unsetenv("KMGR_FAULT");
	g_bytes = kt_model_malloc("nt", 1, false, 1, in1, 1, out1, &g_len);
	KT_CASE("close-1.1 nrt_close returns while 4 threads keep calling", close_returns);
	free(g_bytes);
	KT_DONE();
}
