/*
 * test_unload.c - checklist item 5, kmgr_unload_nn: the probe, the
 * state == 4 guard, erase under the write lock, the reference drain with
 * its warning (never a timeout), the engine stop, the unstage; and
 * kmgr_unload_all_nns.
 */
#include "kt_kmgr.h"

/* kmgr_unload-5.1: an unknown id is NRT_INVALID_HANDLE with the seed's
 * message; unloading twice is the same. */
static void case_unknown(void)
{
	H_NN h = kt_load("u", 1, -1, -1);
	char want[64];

	kt_log_capture(KLOG_ERROR);
	KT_EQ(kmgr_unload_nn((H_NN){kmgr_last_nn_id() + 3}), NRT_INVALID_HANDLE);
	snprintf(want, sizeof(want), "Failed to find model: %u", kmgr_last_nn_id() + 3);
	KT_ASSERT(kt_log_has(want));
	kt_log_release();
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
	KT_EQ(kmgr_unload_nn(h), NRT_INVALID_HANDLE);
}

/* kmgr_unload-5.2: a model whose state is not 4 is refused with the seed's
 * message and stays loaded; back at 4 it unloads. */
static void case_state_guard(void)
{
	H_NN h = kt_load("s", 1, -1, -1);
	dlr_model *m = db_get_nn_ref_count(h);
	char want[96];

	nn_ref_decrement(m);
	m->state = 2;
	kt_log_capture(KLOG_ERROR);
	KT_EQ(kmgr_unload_nn(h), NRT_INVALID);
	snprintf(want, sizeof(want), "DLR %u state 2, must be stopped before unloading", h.id);
	KT_ASSERT(kt_log_has(want));
	kt_log_release();
	KT_ASSERT(db_get_nn_ref_count(h) == m);
	nn_ref_decrement(m);
	m->state = 4;
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
}

typedef struct unloader {
	H_NN h;
	ks_atomic_t done;
	NRT_STATUS rc;
} unloader_t;

static void *unload_thread(void *p)
{
	unloader_t *u = p;

	u->rc = kmgr_unload_nn(u->h);
	ks_atomic_store(&u->done, 1);
	return NULL;
}

/* kmgr_unload-5.3: with a reference held elsewhere, unload erases the model
 * at once (no new resolution), warns while it waits, and returns only
 * after the reference is released; the device is then clean. */
static void case_drain(void)
{
	emu_accounting_t before, after;
	unloader_t u = {.done = KS_ATOMIC_INIT(0)};
	ks_thread_t th;
	dlr_model *m;
	char want[96];
	int i;

	emu_get_accounting(&before);
	u.h = kt_load("d", 1, -1, -1);
	m = db_get_nn_ref_count(u.h);
	kt_log_capture(KLOG_WARN);
	KT_EQ(ks_thread_create(&th, "unloader", unload_thread, &u), 0);
	for (i = 0; i < 5000; i++) {
		dlr_model *again = db_get_nn_ref_count(u.h);

		if (!again)
			break;
		nn_ref_decrement(again);
		ks_usleep(200);
	}
	KT_LT(i, 5000); /* erased while our reference is still held */
	snprintf(want, sizeof(want), "still waiting for model[%u] ref count 0", u.h.id);
	/* Wait for the drain's warning however slow the machine is (bounded at
	 * 40 s); the unloader cannot return meanwhile: we hold the reference. */
	for (i = 0; i < 80000 && !kt_log_has(want); i++)
		ks_usleep(500);
	KT_EQ(ks_atomic_load(&u.done), 0);
	KT_ASSERT(kt_log_has(want));
	snprintf(want, sizeof(want),
	         "Execution requests on model %u have not been drained before unloading", u.h.id);
	KT_ASSERT(kt_log_has(want));
	nn_ref_decrement(m);
	KT_EQ(ks_thread_join(&th, NULL), 0);
	kt_log_release();
	KT_EQ(u.rc, NRT_SUCCESS);
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
}

/* kmgr_unload-5.4: explicit-async work queued on the model is finished by
 * the sync stop (tpb_xu_model_unstage) before the unload returns. */
static void case_sync_stop(void)
{
	emu_accounting_t before, after;
	H_NN h;
	kt_io_t io;
	nrta_seq_t seq[4];
	NRT_STATUS ret[4];
	uint32_t start, count;
	bool done;

	emu_get_accounting(&before);
	h = kt_load("q", 1, 1, 1);
	KT_EQ(kmgr_get_nc_info(h, &start, &count), NRT_SUCCESS);
	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 1, 2, 1, 16);
	for (int i = 0; i < 4; i++)
		KT_EQ(kmgr_tpb_xu_schedule(start, h, io.in, io.out, &ret[i], &seq[i]), NRT_SUCCESS);
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
	for (int i = 0; i < 4; i++) {
		KT_EQ(kmgr_xu_is_completed(seq[i], &done), NRT_SUCCESS);
		KT_ASSERT(done);
	}
	kt_io_check(&io);
	kt_io_free(&io);
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
}

/* kmgr_unload-5.5: kmgr_unload_all_nns unloads every model in the snapshot
 * and leaves an empty registry. */
static void case_unload_all(void)
{
	H_NN *ids;
	uint32_t n;

	for (int i = 0; i < 5; i++)
		kt_load("all", 1, -1, -1);
	KT_EQ(kmgr_unload_all_nns(), NRT_SUCCESS);
	KT_EQ(kmgr_get_nns(&ids, &n), NRT_SUCCESS);
	KT_EQ(n, 0);
	kfree(ids);
}

int main(void)
{
	kt_up(2, false, 5);
	KT_CASE("kmgr_unload-5.1", case_unknown);
	KT_CASE("kmgr_unload-5.2", case_state_guard);
	KT_CASE("kmgr_unload-5.3", case_drain);
	KT_CASE("kmgr_unload-5.4", case_sync_stop);
	KT_CASE("kmgr_unload-5.5", case_unload_all);
	kt_down();
	KT_DONE();
}
