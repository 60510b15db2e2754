/*
 * test_stage.c - checklist item 7, dlr_kelf_stage: one per-core record per
 * subgraph (single-core inline, multi-core one thread per subgraph), the
 * "Insufficient number of pncs" check, the nkbin == 1 || nkbin == core
 * count invariant (refused at load, never asserted on input), rollback of
 * every staged subgraph on a failure.
 */
#include "kt_kmgr.h"

static int64_t staged(void)
{
	emu_accounting_t a;

	emu_get_accounting(&a);
	return a.staged_models;
}

static NRT_STATUS load(uint32_t nkbin, int32_t start, int32_t count, H_NN *h)
{
	size_t len;
	uint8_t *b = kt_model_bytes("st", nkbin, false, 2, 1, 16, &len);
	NRT_STATUS rc = kmgr_load_nn(b, len, start, count, h);

	kfree(b);
	return rc;
}

/* kmgr_stage-7.1: a 2-subgraph model on 2 cores stages one record per core,
 * executes right, and unload removes both. */
static void case_multi(void)
{
	int64_t s0 = staged();
	uint32_t start, count;
	H_NN h;
	kt_io_t io;

	KT_EQ(load(2, 2, 2, &h), NRT_SUCCESS);
	KT_EQ(staged(), s0 + 2);
	KT_EQ(emu_core_model_count(2), 1);
	KT_EQ(emu_core_model_count(3), 1);
	KT_EQ(kmgr_get_nc_info(h, &start, &count), NRT_SUCCESS);
	KT_EQ(start, 2);
	KT_EQ(count, 2);
	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 2, 2, 1, 16);
	KT_EQ(kmgr_exec(h, io.in, io.out, 1), NRT_SUCCESS);
	kt_io_check(&io);
	kt_io_free(&io);
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
	KT_EQ(staged(), s0);
}

/* kmgr_stage-7.2: more subgraphs than cores is NRT_INVALID with the seed's
 * message, and leaves nothing behind. */
static void case_insufficient(void)
{
	emu_accounting_t before, after;
	H_NN h;

	emu_get_accounting(&before);
	kt_log_capture(KLOG_ERROR);
	KT_EQ(load(2, 0, 1, &h), NRT_INVALID);
	KT_ASSERT(kt_log_has("Insufficient number of pncs, required 2, available 1"));
	kt_log_release();
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
}

/* kmgr_stage-7.3: nkbin neither 1 nor the core count is refused with
 * NRT_INVALID (no assertion), leaving nothing behind. */
static void case_mismatch(void)
{
	emu_accounting_t before, after;
	H_NN h;

	emu_get_accounting(&before);
	KT_EQ(load(2, 0, 3, &h), NRT_INVALID);
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
}

/* kmgr_stage-7.4: when any one subgraph of a 4-core stage fails, the ones
 * that succeeded are removed again; the next load works. */
static void case_rollback(void)
{
	emu_accounting_t before, after;
	H_NN h;

	for (uint32_t nth = 1; nth <= 4; nth++) {
		emu_get_accounting(&before);
		kt_fault_alloc(KFAULT_EMU_HOST_MODEL, nth);
		KT_NE(load(4, 0, 4, &h), NRT_SUCCESS);
		kfault_clear();
		emu_get_accounting(&after);
		kt_acct_eq(&before, &after);
	}
	KT_EQ(load(4, -1, -1, &h), NRT_SUCCESS);
	KT_EQ(staged(), 4);
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
}

/* kmgr_stage-7.5: -1/-1 places a 2-subgraph model on 2 free cores and a
 * 1-subgraph model on the first free core. */
static void case_auto(void)
{
	uint32_t start, count;
	H_NN a, b;

	KT_EQ(load(2, -1, -1, &a), NRT_SUCCESS);
	KT_EQ(kmgr_get_nc_info(a, &start, &count), NRT_SUCCESS);
	KT_EQ(start, 0);
	KT_EQ(count, 2);
	KT_EQ(load(1, -1, -1, &b), NRT_SUCCESS);
	KT_EQ(kmgr_get_nc_info(b, &start, &count), NRT_SUCCESS);
	KT_EQ(start, 2);
	KT_EQ(count, 1);
	KT_EQ(load(1, 3, 2, &b), NRT_LOAD_NOT_ENOUGH_NC);
	KT_EQ(kmgr_unload_all_nns(), NRT_SUCCESS);
}

int main(void)
{
	kt_up(4, false, 0);
	KT_CASE("kmgr_stage-7.1", case_multi);
	KT_CASE("kmgr_stage-7.2", case_insufficient);
	KT_CASE("kmgr_stage-7.3", case_mismatch);
	KT_CASE("kmgr_stage-7.4", case_rollback);
	KT_CASE("kmgr_stage-7.5", case_auto);
	kt_down();
	KT_DONE();
}
