/*
 * unload.c - the unload state machine (seed §4): kmgr_unload_nn (probe,
 * drained check, state guard, erase under the write lock, drop the lock,
 * drain the references, stop the model on its engine, unstage),
 * kmgr_unload_all_nns and the teardown leaf kmgr_unstage_kelf_model.
 */
#include "dlr.h"

static void drain_warn(void *ctx, uint64_t iters)
{
	const dlr_model *mod = ctx;

	(void)iters;
	klog_warn("still waiting for model[%u] ref count 0", mod->h_nn.id);
}

/* Tolerates a record that never got staged (the load rollback).  The seed
 * returns right there ("kelf model not loaded. skipping"); ours goes on to
 * free the host record, which on the rollback path is always ours. */
NRT_STATUS kmgr_unstage_kelf_model(dlr_model *mod)
{
	if (!mod)
		return NRT_SUCCESS;
	if (mod->kelf_model)
		dlr_kelf_unstage(mod->kelf_model);
	else
		klog_debug("kelf model not loaded. skipping");
	if (mod->vcore)
		vtpb_destroy(mod->vcore);
	kfree(mod->io_nodes);
	kfree(mod);
	return NRT_SUCCESS;
}

/* The seed's sync vs async divergence after the drain. */
static void stop_on_engine(dlr_model *mod)
{
	kmgr_async_exec_worker_t *worker;
	bool need_stop = false;
	uint64_t handle = 0;

	if (!async_exec_workers) {
		tpb_xu_model_unstage(tpb_xu_get_by_vcore(mod->vcore), mod->kelf_model->h_model);
		return;
	}
	worker = kmgr_async_exec_get_worker(async_exec_workers, mod->vcore->vtpb_idx);
	if (kmgr_async_exec_model_stop(worker, mod->h_nn.id, &handle, &need_stop) == NRT_SUCCESS &&
	    need_stop)
		kmgr_async_exec_poll(worker, handle);
}

/*
 * The probe's reference is held across the two guards and dropped just
 * before the erase.  The seed drops it first and then reads the record;
 * with two unloads of one id racing, the loser would read a record the
 * winner already freed.  Held, the winner's drain waits for it instead.
 */
static NRT_STATUS unload_guards(dlr_model *mod, H_NN h_nn)
{
	if (ks_atomic_load(&mod->ref_count) > 1)
		klog_warn("Execution requests on model %u have not been drained before unloading",
		          h_nn.id);
	if (mod->state != DLR_MODEL_STATE_READY) {
		klog_error("DLR %u state %u, must be stopped before unloading", h_nn.id,
		           mod->state);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

NRT_STATUS kmgr_unload_nn(H_NN h_nn)
{
	dlr_model *mod, *erased;
	NRT_STATUS rc;

	klog_info("Unloading %u", h_nn.id);
	mod = kmgr_find_nn(h_nn);
	if (!mod)
		return NRT_INVALID_HANDLE;
	rc = unload_guards(mod, h_nn);
	nn_ref_decrement(mod);
	if (rc)
		return rc;

	/* erase-then-drain: once erased no new reference can be taken, so the
	 * count only falls; the lock is dropped before the spin */
	erased = dlr_model_set_erase(h_nn);
	if (!erased) {
		klog_error("Failed to find model: %u", h_nn.id);
		return NRT_INVALID_HANDLE;
	}
	ks_spin_wait_zero(&mod->ref_count, 1000, kmgr_drain_warn_iters(), drain_warn, mod);

	stop_on_engine(mod);
	rc = kmgr_unstage_kelf_model(mod);
	if (rc)
		klog_error("Failed to unstage model: %u", h_nn.id);
	else
		klog_info("Unloaded NN: %u", h_nn.id);
	return rc;
}

/* The nrt_close sweep: a snapshot, then one unload per id.  An id another
 * thread unloaded in between is not an error of the sweep. */
NRT_STATUS kmgr_unload_all_nns(void)
{
	NRT_STATUS rc, first = NRT_SUCCESS;
	uint32_t count = 0;
	H_NN *ids = NULL;

	rc = kmgr_get_nns(&ids, &count);
	if (rc) {
		/* No snapshot (out of memory, or an injected fault at kmgr.nns):
		 * nrt_close must still leave no model behind, so unload the
		 * smallest id until none is left, which allocates nothing.  Found
		 * by the faults fuzz target (kmgr_destroy's assertion fired). */
		uint32_t id;

		while ((id = dlr_model_set_min_id()) != 0) {
			rc = kmgr_unload_nn((H_NN){id});
			if (rc && rc != NRT_INVALID_HANDLE)
				return rc; /* no progress possible: say why */
		}
		return NRT_SUCCESS;
	}
	for (uint32_t i = 0; i < count; i++) {
		rc = kmgr_unload_nn(ids[i]);
		if (rc && rc != NRT_INVALID_HANDLE && first == NRT_SUCCESS)
			first = rc;
	}
	kfree(ids);
	return first;
}
