/*
 * test_exec_resources.c - checklist item 4, kmgr_exec_pre /
 * kmgr_exec_resources_free: the 56-byte tracker's fields, references (not
 * copies) on the sets, the mode-selected free arm, the first-execution
 * collectives bootstrap.
 */
#include "kt_kmgr.h"

static H_NN h;

/* kmgr_exec_resources-4.1: the tracker records the model, the core, the
 * mode and the caller's very sets (a reference, not a copy), its trace id
 * grows; freeing it gives everything back. */
static void case_fields(void)
{
	kmgr_exec_resources_t *r1 = NULL, *r2 = NULL;
	emu_accounting_t before, after;
	dlr_model *m = db_get_nn_ref_count(h);
	kt_io_t io;

	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 1, 2, 1, 16);
	emu_get_accounting(&before);
	KT_EQ(kmgr_exec_pre(m, io.in, io.out, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r1), NRT_SUCCESS);
	KT_ASSERT(r1->in_fmap_set == io.in);
	KT_ASSERT(r1->out_fmap_set == io.out);
	KT_EQ(r1->exec_mode, KMGR_EXEC_MODE_EXPLICIT_ASYNC);
	KT_EQ(r1->model_id, m->interned_model_id);
	KT_EQ(r1->trace_nc_idx, 1);
	KT_EQ(r1->h_nn, h.id);
	KT_ASSERT(r1->tdrv_resources != NULL);
	KT_EQ(kmgr_exec_pre(m, io.in, io.out, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r2), NRT_SUCCESS);
	KT_GT(r2->trace_exec_id, r1->trace_exec_id);
	kmgr_exec_resources_free(&r1);
	kmgr_exec_resources_free(&r2);
	KT_ASSERT(r1 == NULL && r2 == NULL);
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
	/* the sets survived the tracker's release: the references were its own */
	KT_EQ(kbl_tensor_set_count(io.in), 2);
	nn_ref_decrement(m);
	kt_io_free(&io);
}

/* kmgr_exec_resources-4.2: mode 0 (implicit async) marks both sets and its
 * free arm unmarks them; mode 1 marks nothing. */
static void case_mode_arms(void)
{
	kmgr_exec_resources_t *r = NULL;
	emu_accounting_t before, mid, after;
	dlr_model *m = db_get_nn_ref_count(h);
	kt_io_t io;

	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 1, 2, 1, 16);
	emu_get_accounting(&before);
	KT_EQ(kmgr_exec_pre(m, io.in, io.out, KMGR_EXEC_MODE_ASYNC, &r), NRT_SUCCESS);
	emu_get_accounting(&mid);
	KT_EQ(mid.async_marks, before.async_marks + 2);
	kmgr_exec_resources_free(&r);
	KT_EQ(kmgr_exec_pre(m, io.in, io.out, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r), NRT_SUCCESS);
	emu_get_accounting(&mid);
	KT_EQ(mid.async_marks, before.async_marks);
	kmgr_exec_resources_free(&r);
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
	nn_ref_decrement(m);
	kt_io_free(&io);
}

/* kmgr_exec_resources-4.3: invalid sets (NULL, a missing tensor) are
 * NRT_INVALID with nothing allocated; an allocation failure at the tracker
 * or the tdrv resources leaves nothing behind. */
static void case_invalid(void)
{
	kmgr_exec_resources_t *r = NULL;
	emu_accounting_t before, after;
	dlr_model *m = db_get_nn_ref_count(h);
	nrt_tensor_set_t *empty;
	kt_io_t io;

	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 1, 2, 1, 16);
	KT_EQ(kbl_tensor_set_allocate(&empty), NRT_SUCCESS);
	emu_get_accounting(&before);
	KT_EQ(kmgr_exec_pre(m, NULL, io.out, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r), NRT_INVALID);
	KT_EQ(kmgr_exec_pre(m, io.in, NULL, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r), NRT_INVALID);
	KT_EQ(kmgr_exec_pre(m, empty, io.out, KMGR_EXEC_MODE_ASYNC, &r), NRT_INVALID);
	kt_fault_alloc(KFAULT_KMGR_EXEC_RESOURCES, 1);
	KT_EQ(kmgr_exec_pre(m, io.in, io.out, KMGR_EXEC_MODE_ASYNC, &r), NRT_RESOURCE);
	kt_fault_alloc(KFAULT_KMGR_TDRV_RESOURCES, 1);
	KT_EQ(kmgr_exec_pre(m, io.in, io.out, KMGR_EXEC_MODE_ASYNC, &r), NRT_RESOURCE);
	kfault_clear();
	KT_ASSERT(r == NULL);
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
	kbl_free_feature_map_set(empty);
	nn_ref_decrement(m);
	kt_io_free(&io);
}

static bool bootstrapped(H_MODEL hm, tpb_t **tpbs)
{
	kbl_model_t *kmod;
	bool done;

	KT_EQ(kbl_get_model_ref_count(tpbs, hm, &kmod), NRT_SUCCESS);
	kbl_acquire_hw_exec_queue_lock(kmod);
	done = kbl_cc_get_model_is_first_exec(kmod);
	kbl_release_hw_exec_queue_lock(kmod);
	kbl_model_ref_decrement(kmod);
	return done;
}

/* kmgr_exec_resources-4.4: a collectives model is bootstrapped by its first
 * execution only (device memory grows once); when the bootstrap fails the
 * execution fails cleanly and the next one bootstraps. */
static void case_cc_bootstrap(void)
{
	emu_accounting_t a0, a1, a2;
	uint8_t *b;
	size_t len;
	H_NN hc;
	dlr_model *m;
	kt_io_t io;

	b = kt_model_bytes("cc", 1, true, 2, 1, 16, &len);
	KT_EQ(kmgr_load_nn(b, len, 1, 1, &hc), NRT_SUCCESS);
	kfree(b);
	m = db_get_nn_ref_count(hc);
	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 1, 2, 1, 16);
	KT_ASSERT(!bootstrapped(m->kelf_model->h_model, m->vcore->tpbs));
	emu_get_accounting(&a0);
	kt_fault_alloc(KFAULT_EMU_DEV_CC, 1);
	KT_NE(kmgr_exec(hc, io.in, io.out, 1), NRT_SUCCESS);
	kfault_clear();
	emu_get_accounting(&a1);
	kt_acct_eq(&a0, &a1);
	KT_ASSERT(!bootstrapped(m->kelf_model->h_model, m->vcore->tpbs));
	KT_EQ(kmgr_exec(hc, io.in, io.out, 2), NRT_SUCCESS);
	KT_ASSERT(bootstrapped(m->kelf_model->h_model, m->vcore->tpbs));
	emu_get_accounting(&a1);
	KT_GT(a1.device_bytes, a0.device_bytes);
	KT_EQ(kmgr_exec(hc, io.in, io.out, 3), NRT_SUCCESS);
	emu_get_accounting(&a2);
	KT_EQ(a2.device_bytes, a1.device_bytes);
	kt_io_check(&io);
	nn_ref_decrement(m);
	kt_io_free(&io);
	KT_EQ(kmgr_unload_nn(hc), NRT_SUCCESS);
}

int main(void)
{
	kt_up(2, false, 0);
	h = kt_load("res", 1, 1, 1);
	KT_CASE("kmgr_exec_resources-4.1", case_fields);
	KT_CASE("kmgr_exec_resources-4.2", case_mode_arms);
	KT_CASE("kmgr_exec_resources-4.3", case_invalid);
	KT_CASE("kmgr_exec_resources-4.4", case_cc_bootstrap);
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
	kt_down();
	KT_DONE();
}
