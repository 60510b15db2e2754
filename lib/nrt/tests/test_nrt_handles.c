/*
 * test_nrt_handles.c - the focus of this file is dangling and foreign
 * handles through the public API (docs/api-contract.md): a model handle
 * used after nrt_unload, unloaded twice or by two threads at once, a
 * pointer nrt_load never returned, a tensor-info array freed twice.  Each
 * answers a status and touches no freed memory (ASan would report it).
 */
#include "nrt_test.h"
#include "sched/kctl.h"

/* Decision bits tried by the two-unloader race. */
#define RACE_BITS 192
/* Loads after an unload during which its stale handle must stay detected. */
#define STALE_RELOADS 40

static const uint32_t in1[] = {8}, out1[] = {8};

static uint8_t *g_bytes;
static size_t g_len;

/* Every call that takes a model answers NRT_INVALID_HANDLE for m. */
static void expect_invalid_model(nrt_model_t *m)
{
	kt_nrt_io_t io = {.n_in = 1, .n_out = 1, .in_sizes = {8}, .out_sizes = {8}};
	nrt_tensor_info_array_t *info = NULL;
	nrta_seq_t seq = 0;
	uint32_t n = 77;

	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	KT_EQ(nrt_execute(m, io.in_set, io.out_set), NRT_INVALID_HANDLE);
	KT_EQ(nrt_execute_repeat(m, io.in_set, io.out_set, 3), NRT_INVALID_HANDLE);
	KT_EQ(nrt_get_model_nc_count(m, &n), NRT_INVALID_HANDLE);
	KT_EQ(n, 77);
	KT_EQ(nrt_get_model_tensor_info(m, &info), NRT_INVALID_HANDLE);
	KT_ASSERT(info == NULL);
	KT_EQ(nrta_execute_schedule(m, io.in_set, io.out_set, 0, NULL, &seq), NRT_INVALID_HANDLE);
	KT_EQ(nrt_unload(m), NRT_INVALID_HANDLE);
	kt_nrt_io_free(&io);
}

/* handle-1.1: after nrt_unload the handle is stale: a second unload, an
 * execute, the metadata calls and a schedule answer NRT_INVALID_HANDLE,
 * also after later loads; a live model next to it is unaffected. */
static void after_unload(void)
{
	nrt_model_t *m = NULL, *live = NULL, *more[STALE_RELOADS];
	kt_nrt_io_t io = {.n_in = 1, .n_out = 1, .in_sizes = {8}, .out_sizes = {8}};

	nt_init();
	KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &live), NRT_SUCCESS);
	KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &m), NRT_SUCCESS);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	expect_invalid_model(m);
	/* New records must not take the stale one's address. */
	for (int i = 0; i < STALE_RELOADS; i++) {
		KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &more[i]), NRT_SUCCESS);
		KT_ASSERT(more[i] != m);
		KT_EQ(nrt_unload(more[i]), NRT_SUCCESS);
	}
	expect_invalid_model(m);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	KT_EQ(nrt_execute(live, io.in_set, io.out_set), NRT_SUCCESS);
	kt_nrt_io_check(&io);
	kt_nrt_io_free(&io);
	nrt_close();
	kt_assert_accounting_zero();
}

/* handle-1.2: a pointer nrt_load never returned (here a stack object that
 * is not a model) is refused without being read. */
static void foreign(void)
{
	uint64_t junk[16];

	memset(junk, 0xA5, sizeof(junk));
	nt_init();
	expect_invalid_model((nrt_model_t *)junk);
	nrt_close();
	kt_assert_accounting_zero();
}

typedef struct unloader {
	nrt_model_t *m;
	NRT_STATUS rc;
} unloader_t;

static void *unload_thread(void *p)
{
	unloader_t *u = p;

	u->rc = nrt_unload(u->m);
	return NULL;
}

static void two_unloaders_body(void *arg)
{
	unloader_t *u = arg;
	ks_thread_t th;

	KT_EQ(ks_thread_create(&th, "unloader", unload_thread, &u[1]), 0);
	u[0].rc = nrt_unload(u[0].m);
	KT_EQ(ks_thread_join(&th, NULL), 0);
}

/* handle-1.3: two threads unload one handle, the second preempted at each
 * of its scheduling points in turn: exactly one unload succeeds, the other
 * answers NRT_INVALID_HANDLE, and nothing leaks. */
static void two_unloaders(void)
{
	uint32_t first_won = 0, second_won = 0;

	for (uint32_t k = 1; k < RACE_BITS; k++) {
		uint8_t bytes[RACE_BITS / 8] = {0};
		ks_ctl_config_t cfg;
		ks_ctl_result_t res;
		unloader_t u[2] = {{0}};

		bytes[0] = 1;
		bytes[k / 8] |= (uint8_t)(1u << (k % 8));
		ks_ctl_config_init(&cfg);
		cfg.strategy = KS_STRAT_BYTES;
		cfg.bytes = bytes;
		cfg.nbytes = sizeof(bytes);
		nt_init();
		KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &u[0].m), NRT_SUCCESS);
		u[1].m = u[0].m;
		KT_EQ(ks_ctl_run(&cfg, two_unloaders_body, u, &res), 0);
		KT_EQ(res.failure, KS_OK);
		if (u[0].rc == NRT_SUCCESS) {
			KT_EQ(u[1].rc, NRT_INVALID_HANDLE);
			first_won++;
		} else {
			KT_EQ(u[0].rc, NRT_INVALID_HANDLE);
			KT_EQ(u[1].rc, NRT_SUCCESS);
			second_won++;
		}
		nrt_close();
		kt_assert_accounting_zero();
	}
	fprintf(stderr, "handle-1.3: %u schedules: main won %u, the thread won %u\n", RACE_BITS - 1,
	        first_won, second_won);
	KT_GT(first_won, 0);
	KT_GT(second_won, 0);
}

/* handle-2.1: a tensor-info array freed twice, or a pointer that never was
 * one, answers NRT_INVALID; a live array is still freed normally. */
static void info_twice(void)
{
	nrt_model_t *m = NULL;
	nrt_tensor_info_array_t *a = NULL, *b = NULL;
	uint64_t junk[8] = {0};

	nt_init();
	KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &m), NRT_SUCCESS);
	KT_EQ(nrt_get_model_tensor_info(m, &a), NRT_SUCCESS);
	KT_EQ(nrt_free_model_tensor_info(a), NRT_SUCCESS);
	KT_EQ(nrt_free_model_tensor_info(a), NRT_INVALID);
	KT_EQ(nrt_get_model_tensor_info(m, &b), NRT_SUCCESS);
	KT_ASSERT(b != a);
	KT_EQ(nrt_free_model_tensor_info(a), NRT_INVALID);
	KT_EQ(nrt_free_model_tensor_info((nrt_tensor_info_array_t *)junk), NRT_INVALID);
	KT_EQ(b->tensor_count, 2);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrt_close();
	/* An array outlives nrt_close and is freed once after it. */
	KT_EQ(nrt_free_model_tensor_info(b), NRT_SUCCESS);
	KT_EQ(nrt_free_model_tensor_info(b), NRT_INVALID);
	kt_assert_accounting_zero();
}

int main(void)
{
	nt_env_clear();
	unsetenv("KMGR_FAULT");
	g_bytes = kt_model_malloc("nt", 1, false, 1, in1, 1, out1, &g_len);
	KT_CASE("handle-1.1 stale model handle", after_unload);
	KT_CASE("handle-1.2 foreign model pointer", foreign);
	KT_CASE("handle-1.3 two threads unload one handle", two_unloaders);
	KT_CASE("handle-2.1 tensor info freed twice", info_twice);
	free(g_bytes);
	KT_DONE();
}
