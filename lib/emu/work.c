/*
 * work.c - what both engines share: the work item, the device side of one
 * execution (the XU state machine INIT -> WAIT_BARRIER -> WAIT_CORE ->
 * DONE with the fault hooks) and the release of the execution tracker.
 */
#include "emu/emu_int.h"

static emu_xu_state_hook_fn emu_state_hook;
static void *emu_state_hook_ctx;

void emu_set_xu_state_hook(emu_xu_state_hook_fn fn, void *ctx)
{
	emu_state_hook = fn;
	emu_state_hook_ctx = ctx;
}

static void emu_state(uint32_t xu_id, tpb_xu_state_t st)
{
	if (emu_state_hook)
		emu_state_hook(emu_state_hook_ctx, xu_id, st);
}

/* Without a facade (device tests) the engine frees the tracker the way
 * kmgr_exec_resources_free does for the sync arm: bindings, both sets. */
static void emu_release_default(kmgr_exec_resources_t **res)
{
	kmgr_exec_resources_t *r = *res;

	kbl_free_compute_resources(r->tdrv_resources);
	kbl_free_feature_map_set(r->out_fmap_set);
	kbl_free_feature_map_set(r->in_fmap_set);
	kfree(r);
	*res = NULL;
}

static void emu_release_res(kmgr_exec_resources_t *res)
{
	if (!res)
		return;
	if (emu_dev.hooks.release_resources)
		emu_dev.hooks.release_resources(&res);
	else
		emu_release_default(&res);
}

emu_work_t *emu_work_new(const virtual_core_t *vcore, kmgr_exec_resources_t *res, uint32_t h_nn,
                         uint64_t tracking_id, NRT_STATUS *rc)
{
	emu_work_t *w;
	kbl_model_t *m = NULL;

	*rc = NRT_INVALID;
	if (!res)
		return NULL;
	if (vcore && vcore->num_tpbs && res->tdrv_resources)
		m = emu_model_get(vcore->tpbs[0], res->tdrv_resources->h_model);
	if (!m) {
		klog_error("execution submitted for a model that is not staged");
		emu_release_res(res);
		return NULL;
	}
	w = kalloc(KFAULT_EMU_HOST_WORK, sizeof(*w));
	if (!w) {
		*rc = NRT_RESOURCE;
		kbl_model_ref_decrement(m);
		emu_release_res(res);
		return NULL;
	}
	w->res = res;
	w->kmod = m;
	w->h_model = m->h_model;
	w->h_nn = h_nn;
	w->tracking_id = tracking_id;
	emu_count(&emu_cnt.objects, 1);
	*rc = NRT_SUCCESS;
	return w;
}

void emu_work_release(emu_work_t *w)
{
	emu_release_res(w->res);
	w->res = NULL;
	kbl_model_ref_decrement(w->kmod);
	w->kmod = NULL;
}

void emu_work_free(emu_work_t *w)
{
	kfree(w);
	emu_count(&emu_cnt.objects, -1);
}

void emu_work_discard(emu_work_t *w)
{
	emu_work_release(w);
	emu_work_free(w);
}

/* Observed and released before it is counted done: whoever waits for the
 * device's in-flight count to reach zero (emu_inflight_execs) then sees the
 * event and the released references, and may take the observer away (the
 * fuzz runner's quiesce did, and TSan under the controlled scheduler saw a
 * worker read the observer after the count had dropped). */
void emu_work_finish(emu_work_t *w, NRT_STATUS status, bool cancelled)
{
	emu_observe(cancelled ? EMU_EXEC_CANCEL : EMU_EXEC_COMPLETE, w, status);
	ks_atomic_add_quiet(&w->kmod->inflight, -1);
	emu_work_release(w);
	emu_count(&emu_cnt.inflight, -1);
}

/* A hung execution completes only when its engine is told to stop. */
static NRT_STATUS emu_hang(ks_mutex_t *lock, ks_cond_t *cv, const bool *stop_flag)
{
	ks_mutex_lock(lock);
	while (!*stop_flag)
		ks_cond_wait(cv, lock);
	ks_mutex_unlock(lock);
	return NRT_TIMEOUT;
}

NRT_STATUS emu_exec_item(emu_work_t *w, uint32_t xu_id, ks_mutex_t *lock, ks_cond_t *cv,
                         const bool *stop_flag)
{
	NRT_STATUS status;
	uint32_t delay;

	emu_state(xu_id, TPB_XU_INIT);
	emu_observe(EMU_EXEC_START, w, NRT_SUCCESS);
	if (kfault_exec_hangs()) {
		status = emu_hang(lock, cv, stop_flag);
		emu_state(xu_id, TPB_XU_DONE);
		return status;
	}
	/* Arm every core of the model, then wait for all of them. */
	emu_state(xu_id, TPB_XU_WAIT_BARRIER);
	for (uint32_t c = 0; c < w->kmod->sg_count; c++)
		ks_point();
	status = (NRT_STATUS)kfault_exec_status();
	delay = kfault_exec_delay();
	emu_state(xu_id, TPB_XU_WAIT_CORE);
	if (status == NRT_SUCCESS)
		emu_compute_run(w->res->tdrv_resources);
	/* A delayed completion: the harvest finds the cores busy k more times. */
	for (uint32_t i = 0; i < delay; i++) {
		ks_yield();
		emu_state(xu_id, TPB_XU_WAIT_CORE);
	}
	emu_state(xu_id, TPB_XU_DONE);
	return status;
}
