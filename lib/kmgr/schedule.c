/*
 * schedule.c - kmgr_tpb_xu_schedule (seed §6): the explicit-async submit
 * behind nrta_execute_schedule.  Always EXPLICIT_ASYNC, device tensors
 * only, returns at once with the sequence number the caller polls.
 */
#include "dlr.h"

static bool has_host_tensors(const nrt_tensor_set_t *in, const nrt_tensor_set_t *out)
{
	return (in && kbl_tensor_set_get_malloc_tensor_count(in)) ||
	       (out && kbl_tensor_set_get_malloc_tensor_count(out));
}

static NRT_STATUS schedule(dlr_model *mod, uint32_t vtpb_idx, const nrt_tensor_set_t *in,
                           nrt_tensor_set_t *out, NRT_STATUS *exec_ret, nrta_seq_t *seq)
{
	kmgr_exec_resources_t *res = NULL;
	NRT_STATUS rc;

	/* The seed asserts vcore == mod->vcore (kmgr/dlr.cpp:0x527); a caller's
	 * wrong core is bad input here, so it is refused, not asserted. */
	if (vtpb_idx != mod->vcore->vtpb_idx) {
		klog_error("Model %u is on nc %u, not %u", mod->h_nn.id, mod->vcore->vtpb_idx,
		           vtpb_idx);
		return NRT_INVALID;
	}
	if (has_host_tensors(in, out)) {
		klog_error("Async APIs only supports device allocated tensors");
		return NRT_INVALID;
	}
	rc = kmgr_exec_pre(mod, in, out, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &res);
	if (rc)
		return rc;
	return tpb_xu_schedule_exec(tpb_xu_get_by_vcore(mod->vcore), 0, mod->h_nn.id, res,
	                            res->trace_exec_id, exec_ret, seq);
}

NRT_STATUS kmgr_tpb_xu_schedule(uint32_t vtpb_idx, H_NN h_nn, const nrt_tensor_set_t *in,
                                nrt_tensor_set_t *out, NRT_STATUS *exec_ret, nrta_seq_t *seq)
{
	dlr_model *mod;
	NRT_STATUS rc;

	if (!exec_ret || !seq)
		return NRT_INVALID;
	mod = kmgr_find_nn(h_nn);
	if (!mod)
		return NRT_INVALID_HANDLE;
	rc = schedule(mod, vtpb_idx, in, out, exec_ret, seq);
	nn_ref_decrement(mod);
	return rc;
}
