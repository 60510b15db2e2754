/*
 * exec.c - kmgr_exec (seed §2): resolve the handle with a reference, count
 * host-resident tensors, fork on the global async_exec_workers, build the
 * tracker with the inverted exec-mode, dispatch to the sync XU or the
 * implicit-async worker, release the reference on every exit.
 */
#include "dlr.h"

/* Host tensors are shadow-cloned to device memory and the inputs copied. */
static NRT_STATUS clone_sets(const dlr_model *mod, const nrt_tensor_set_t *in,
                             nrt_tensor_set_t *out, nrt_tensor_set_t **in_dev,
                             nrt_tensor_set_t **out_dev)
{
	int nc = (int)mod->vcore->vtpb_idx;

	if (kbl_tensor_set_get_malloc_tensor_count(in)) {
		*in_dev = kbl_tensor_set_clone_to_physical_mem(in, nc);
		if (!*in_dev) {
			klog_error("Failed to create device input tensor set");
			return NRT_RESOURCE;
		}
		if (kbl_tensor_set_copy(in, *in_dev) != NRT_SUCCESS) {
			klog_error("Failed to copy input tensors to device");
			return NRT_FAILURE;
		}
	}
	if (kbl_tensor_set_get_malloc_tensor_count(out)) {
		/* allocated only: the results are copied back after the run */
		*out_dev = kbl_tensor_set_clone_to_physical_mem(out, nc);
		if (!*out_dev) {
			klog_error("Failed to create device output tensor set");
			return NRT_RESOURCE;
		}
	}
	return NRT_SUCCESS;
}

/*
 * The sync fork.  The tracker holds its own references on the sets it was
 * given (clones included), and the engine owns the tracker from
 * kmgr_sync_exec on; so the clones' own references are ours to drop on
 * every exit, after the engine returned as well as on the error edges (the
 * seed's four kbl_free_feature_map_set calls: two clones, two edges).
 */
static NRT_STATUS exec_sync(dlr_model *mod, const nrt_tensor_set_t *in, nrt_tensor_set_t *out,
                            uint64_t tracking_id)
{
	nrt_tensor_set_t *in_dev = NULL, *out_dev = NULL;
	kmgr_exec_resources_t *res = NULL;
	NRT_STATUS rc = NRT_SUCCESS;

	if (in && out)
		rc = clone_sets(mod, in, out, &in_dev, &out_dev);
	if (rc)
		goto cleanup;
	/* mode = (async_exec_workers == NULL) = 1: the EXPLICIT_ASYNC value */
	rc = kmgr_exec_pre(mod, in_dev ? in_dev : in, out_dev ? out_dev : out,
	                   (kmgr_exec_mode_t)(async_exec_workers == NULL), &res);
	if (rc)
		goto cleanup;
	res->tracking_id = tracking_id;
	rc = kmgr_sync_exec(mod->vcore, res, tracking_id);
	res = NULL; /* the engine released it */
	if (rc == NRT_SUCCESS && out_dev) {
		rc = kbl_tensor_set_copy(out_dev, out);
		if (rc)
			klog_error("Failed to copy output device tensors to host");
	}
cleanup:
	kmgr_exec_resources_free(&res);
	if (in_dev)
		kbl_free_feature_map_set(in_dev);
	if (out_dev)
		kbl_free_feature_map_set(out_dev);
	return rc;
}

/* The implicit-async fork: device tensors only, enqueue and return. */
static NRT_STATUS exec_async(dlr_model *mod, const nrt_tensor_set_t *in, nrt_tensor_set_t *out,
                             uint64_t tracking_id)
{
	uint32_t vtpb_idx = mod->vcore->vtpb_idx;
	kmgr_exec_resources_t *res = NULL;
	kmgr_async_exec_worker_t *worker;
	uint64_t handle = 0;
	NRT_STATUS rc;

	if ((in && kbl_tensor_set_get_malloc_tensor_count(in)) ||
	    (out && kbl_tensor_set_get_malloc_tensor_count(out))) {
		klog_error("Async exec mode only supports device allocated tensors");
		return NRT_INVALID;
	}
	/* mode = (async_exec_workers == NULL) = 0: the ASYNC value */
	rc = kmgr_exec_pre(mod, in, out, (kmgr_exec_mode_t)(async_exec_workers == NULL), &res);
	if (rc)
		return rc;
	res->tracking_id = tracking_id;
	worker = kmgr_async_exec_get_worker(async_exec_workers, vtpb_idx);
	KMGR_ASSERT(worker != NULL, "kmgr/dlr.cpp:0x4F4");
	rc = kmgr_async_exec_add_work(async_exec_workers, mod->h_nn.id, vtpb_idx, res, &handle,
	                              tracking_id);
	if (rc == NRT_SUCCESS && ks_atomic_load(&mod->is_profiling))
		kmgr_async_exec_poll(worker, handle); /* drain for the profile capture */
	return rc;
}

NRT_STATUS kmgr_exec(H_NN h_nn, const nrt_tensor_set_t *in, nrt_tensor_set_t *out,
                     uint64_t tracking_id)
{
	dlr_model *mod = kmgr_find_nn(h_nn);
	NRT_STATUS rc;

	if (!mod)
		return NRT_INVALID_HANDLE;
	klog_debug("Executing NN: %u, tracking id %lu", h_nn.id, (unsigned long)tracking_id);
	if (async_exec_workers)
		rc = exec_async(mod, in, out, tracking_id);
	else
		rc = exec_sync(mod, in, out, tracking_id);
	nn_ref_decrement(mod);
	return rc;
}
