/*
 * test_load_rollback.c - kmgr_load_nn rolls back every failure edge: fail
 * the n-th allocation anywhere along a load (SQLite's do_faultsim_test
 * sweep) and the call fails cleanly, accounting back where it was, no id
 * consumed, and the next load works.
 */
#include "kt_kmgr.h"

typedef struct load_run {
	uint8_t *b;
	size_t len;
	int32_t start, count;
	emu_accounting_t before; /* taken by the body, before the load */
	uint32_t last;
	H_NN h;
} load_run_t;

static int load_body(void *ctx)
{
	load_run_t *r = ctx;

	emu_get_accounting(&r->before); /* neither allocates */
	r->last = kmgr_last_nn_id();
	return kmgr_load_nn(r->b, r->len, r->start, r->count, &r->h);
}

static void load_check(void *ctx, const kt_faultsim_run_t *run)
{
	load_run_t *r = ctx;
	emu_accounting_t after;

	if (run->rc == NRT_SUCCESS) {
		KT_EQ(kmgr_unload_nn(r->h), NRT_SUCCESS);
		emu_get_accounting(&after);
		kt_acct_eq(&r->before, &after);
		return;
	}
	KT_NE(run->fired, 0);
	KT_EQ(kmgr_last_nn_id(), r->last);
	emu_get_accounting(&after);
	kt_acct_eq(&r->before, &after);
}

static void sweep(uint32_t nkbin, bool has_cc, int32_t start, int32_t count)
{
	load_run_t r = {.start = start, .count = count};
	uint32_t n;

	r.b = kt_model_bytes("rb", nkbin, has_cc, 3, 2, 32, &r.len);
	n = kt_faultsim(KFAULT_SITE_ANY, 200, load_body, load_check, &r);
	KT_GT(n, 5);
	KT_LT(n, 200);
	kfree(r.b);
}

/* kmgr_load_rollback-1: every allocation of a single-core load. */
static void case_single(void)
{
	sweep(1, false, -1, -1);
}

/* kmgr_load_rollback-2: every allocation of a 4-subgraph collectives load
 * (the stage fan-out, its threads' per-core records). */
static void case_multi(void)
{
	sweep(4, true, 0, 4);
}

/* kmgr_load_rollback-3: registry growth failing at the 17th live model
 * (the first growth after 8) leaves the loaded 8 intact and the id unused. */
static void case_registry_growth(void)
{
	H_NN h[9];
	uint32_t last;

	for (int i = 0; i < 8; i++)
		h[i] = kt_load("g", 1, -1, -1);
	last = kmgr_last_nn_id();
	kt_fault_alloc(KFAULT_KMGR_REGISTRY, 1);
	{
		size_t len;
		uint8_t *b = kt_model_bytes("g", 1, false, 2, 1, 16, &len);

		KT_EQ(kmgr_load_nn(b, len, -1, -1, &h[8]), NRT_RESOURCE);
		kfree(b);
	}
	kfault_clear();
	KT_EQ(kmgr_last_nn_id(), last);
	for (int i = 0; i < 8; i++) {
		dlr_model *m = db_get_nn_ref_count(h[i]);

		KT_ASSERT(m != NULL);
		nn_ref_decrement(m);
	}
	KT_EQ(kmgr_unload_all_nns(), NRT_SUCCESS);
}

/* kmgr_load_rollback-4: bad arguments and bad bytes are errors, not
 * crashes, and leave nothing behind. */
static void case_bad_input(void)
{
	emu_accounting_t before, after;
	uint8_t junk[64] = {1, 2, 3};
	size_t len;
	uint8_t *b = kt_model_bytes("bad", 1, false, 1, 1, 8, &len);
	H_NN h;

	emu_get_accounting(&before);
	KT_EQ(kmgr_load_nn(NULL, 10, -1, -1, &h), NRT_INVALID);
	KT_EQ(kmgr_load_nn(b, len, -1, -1, NULL), NRT_INVALID);
	KT_NE(kmgr_load_nn(junk, sizeof(junk), -1, -1, &h), NRT_SUCCESS);
	KT_NE(kmgr_load_nn(b, len - 1, -1, -1, &h), NRT_SUCCESS);
	KT_EQ(kmgr_load_nn(b, len, -2, -1, &h), NRT_INVALID);
	KT_EQ(kmgr_load_nn(b, len, 0, 0, &h), NRT_INVALID);
	KT_EQ(kmgr_load_nn(b, len, 4, 1, &h), NRT_LOAD_NOT_ENOUGH_NC);
	KT_EQ(kmgr_load_nn(b, len, 0, 5, &h), NRT_LOAD_NOT_ENOUGH_NC);
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
	kfree(b);
}

int main(void)
{
	kt_up(4, false, 0);
	KT_CASE("kmgr_load_rollback-1", case_single);
	KT_CASE("kmgr_load_rollback-2", case_multi);
	KT_CASE("kmgr_load_rollback-3", case_registry_growth);
	KT_CASE("kmgr_load_rollback-4", case_bad_input);
	kt_down();
	KT_DONE();
}
