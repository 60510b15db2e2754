/*
 * exec_resources.c - the execution-resource lifecycle (seed §3):
 * kmgr_exec_pre builds the 56-byte tracker (references on the sets, the
 * compute resources, the first-execution collectives bootstrap under the
 * hardware-exec-queue lock), kmgr_exec_resources_free tears it down by the
 * arm its exec_mode selects, dlr_check_valid_io_sets validates the sets.
 */
#include "dlr.h"

/* The TU-static trace id counter; bookkeeping, not a protocol decision. */
static ks_atomic_t next_trace_exec_id = KS_ATOMIC_INIT(1);

static NRT_STATUS check_set(const io_map_t *map, const nrt_tensor_set_t *set, const char *kind)
{
	nrt_tensor_t *t;

	if (!set) {
		klog_error("Invalid %s tensor set: NULL", kind);
		return NRT_INVALID;
	}
	for (uint32_t i = 0; i < map->count; i++)
		if (kbl_tensor_set_get(set, map->nodes[i].name, &t) != NRT_SUCCESS || !t) {
			klog_error("Missing %s tensor %s", kind, map->nodes[i].name);
			return NRT_INVALID;
		}
	return NRT_SUCCESS;
}

/* The seed's 0xe5b30 (tensor io): every model io present by name.  Size
 * and placement are judged by the IO bind below it. */
NRT_STATUS dlr_check_valid_io_sets(const dlr_model *mod, const nrt_tensor_set_t *in,
                                   const nrt_tensor_set_t *out)
{
	NRT_STATUS rc = check_set(&mod->input_info, in, "input");

	return rc ? rc : check_set(&mod->output_info, out, "output");
}

/* Take the set's reference for the tracker; mode 0 (implicit async) marks
 * it too.  Each set is referenced and marked in one step, so the free arm
 * is right at every error edge. */
static NRT_STATUS hold_set(const nrt_tensor_set_t *set, uint32_t mode, nrt_tensor_set_t **slot,
                           const char *kind)
{
	if (kbl_create_reference_feature_map_set(set, slot) != NRT_SUCCESS) {
		klog_error("Failed to create reference of %s fmap set", kind);
		*slot = NULL;
		return NRT_RESOURCE;
	}
	if (mode == KMGR_EXEC_MODE_ASYNC)
		kbl_tensor_set_mark_async_exec(*slot);
	return NRT_SUCCESS;
}

/* First execution (the binary's naming: "is_first_exec" is true once the
 * bootstrap has run): quiesce the async worker, then build collectives. */
static NRT_STATUS cc_bootstrap(dlr_model *mod, kmgr_exec_resources_t *res)
{
	H_MODEL h_model = mod->kelf_model->h_model;
	kbl_model_t *kmod;
	NRT_STATUS rc = NRT_SUCCESS;

	if (kbl_get_model_ref_count(mod->vcore->tpbs, h_model, &kmod) != NRT_SUCCESS) {
		klog_error("Failed to find model %u on the device", mod->h_nn.id);
		return NRT_INVALID;
	}
	kbl_acquire_hw_exec_queue_lock(kmod);
	if (!kbl_cc_get_model_is_first_exec(kmod)) {
		if (async_exec_workers)
			kmgr_async_drain_queued_execs(async_exec_workers, mod->vcore->vtpb_idx);
		rc = kbl_exec_build_and_load_cc_resources(kmod, mod->sg_count, res->trace_exec_id);
		if (rc)
			klog_error(
			    "Failed to build and load collectives resources for %s, exec_id %lu",
			    mod->name, (unsigned long)res->trace_exec_id);
	}
	kbl_release_hw_exec_queue_lock(kmod);
	kbl_model_ref_decrement(kmod);
	return rc;
}

static NRT_STATUS build_compute(dlr_model *mod, kmgr_exec_resources_t *res)
{
	NRT_STATUS rc;

	res->tdrv_resources = kalloc(KFAULT_KMGR_TDRV_RESOURCES, sizeof(*res->tdrv_resources));
	if (!res->tdrv_resources) {
		klog_error("Failed to allocate compute resources");
		return NRT_RESOURCE;
	}
	kbl_init_compute_resources(res->tdrv_resources, mod->sg_count);
	rc = kbl_compute_build_compute_resources(mod->vcore, mod->sg_count,
	                                         mod->kelf_model->h_model, res->in_fmap_set,
	                                         res->out_fmap_set, res->tdrv_resources);
	if (rc)
		klog_error("Failed to build compute resources for model %u", mod->h_nn.id);
	return rc;
}

NRT_STATUS kmgr_exec_pre(dlr_model *mod, const nrt_tensor_set_t *in, nrt_tensor_set_t *out,
                         kmgr_exec_mode_t mode, kmgr_exec_resources_t **out_res)
{
	kmgr_exec_resources_t *res;
	NRT_STATUS rc;

	rc = dlr_check_valid_io_sets(mod, in, out);
	if (rc)
		return rc;
	if (mode != 0)
		KMGR_ASSERT(mode == KMGR_EXEC_MODE_EXPLICIT_ASYNC, "kmgr/dlr.cpp:0x48C");
	res = kalloc(KFAULT_KMGR_EXEC_RESOURCES, sizeof(*res));
	if (!res) {
		klog_error("Failed to allocate memory for execution resources");
		return NRT_RESOURCE;
	}
	res->trace_exec_id = (uint64_t)ks_atomic_add_quiet(&next_trace_exec_id, 1);
	res->trace_nc_idx = mod->vcore->vtpb_idx;
	res->model_id = mod->interned_model_id;
	res->exec_mode = mode;
	res->h_nn = mod->h_nn.id;
	rc = hold_set(in, mode, &res->in_fmap_set, "input");
	if (rc == NRT_SUCCESS)
		rc = hold_set(out, mode, &res->out_fmap_set, "output");
	if (rc == NRT_SUCCESS)
		rc = build_compute(mod, res);
	if (rc == NRT_SUCCESS)
		rc = cc_bootstrap(mod, res);
	if (rc) {
		kmgr_exec_resources_free(&res);
		return rc;
	}
	*out_res = res;
	return NRT_SUCCESS;
}

static void release_set(nrt_tensor_set_t *set, uint32_t mode)
{
	if (!set)
		return;
	if (mode == KMGR_EXEC_MODE_ASYNC)
		kbl_tensor_set_unmark_async_exec(set);
	kbl_free_feature_map_set(set);
}

/*
 * exec_mode selects the arm: EXPLICIT_ASYNC (sync nrt_execute and nrta_*)
 * drops the two references; ASYNC (implicit) also unmarks.  The seed's
 * async arm names only the unmark; the reference kmgr_exec_pre took with
 * kbl_create_reference_feature_map_set has to go too, or every implicit
 * execution would leak one.
 */
void kmgr_exec_resources_free(kmgr_exec_resources_t **res_ptr)
{
	kmgr_exec_resources_t *res = res_ptr ? *res_ptr : NULL;

	if (!res)
		return;
	if (res->tdrv_resources)
		kbl_free_compute_resources(res->tdrv_resources);
	release_set(res->out_fmap_set, res->exec_mode);
	release_set(res->in_fmap_set, res->exec_mode);
	kfree(res);
	*res_ptr = NULL;
}
