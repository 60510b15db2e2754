/*
 * model.c - models through the public API: nrt_load / nrt_unload, the
 * execute entry points (lifecycle guards and the ifmap-count check, then
 * kmgr_exec), tensor metadata and the nrt_model_get_nn test hook.
 */
#include "base/kalloc.h"
#include "base/klog.h"
#include "emu/emu.h"
#include "kmgr/kmgr.h"
#include "nrt_internal.h"
#include "nrt_kmgr.h"

#include <nrt/nrt_experimental.h>

#include "sched/ksched.h"

/* Every nrt_model_t handed out and not yet unloaded: nrt_close unloads all
 * models in the facade and must free their records too. */
static ks_mutex_t nrt_models_lock = KS_MUTEX_INITIALIZER;
static nrt_model_t *nrt_models;

static void nrt_model_link(nrt_model_t *m)
{
	ks_mutex_lock(&nrt_models_lock);
	m->prev = NULL;
	m->next = nrt_models;
	if (nrt_models)
		nrt_models->prev = m;
	nrt_models = m;
	ks_mutex_unlock(&nrt_models_lock);
}

static void nrt_model_unlink(nrt_model_t *m)
{
	ks_mutex_lock(&nrt_models_lock);
	if (m->prev)
		m->prev->next = m->next;
	else
		nrt_models = m->next;
	if (m->next)
		m->next->prev = m->prev;
	ks_mutex_unlock(&nrt_models_lock);
}

void nrt__models_release_all(void)
{
	nrt_model_t *m;

	ks_mutex_lock(&nrt_models_lock);
	m = nrt_models;
	nrt_models = NULL;
	ks_mutex_unlock(&nrt_models_lock);
	while (m) {
		nrt_model_t *next = m->next;

		kfree(m);
		m = next;
	}
}

NRT_STATUS nrt_load(const void *neff_bytes, size_t size, int32_t start_nc, int32_t nc_count,
                    nrt_model_t **model)
{
	nrt_model_t *m;
	NRT_STATUS rc = nrt__enter("nrt_load");

	if (rc)
		return rc;
	if (!neff_bytes || !size || !model) {
		klog_error("nrt_load: NULL or empty argument");
		return nrt__leave(NRT_INVALID);
	}
	m = kalloc(KFAULT_NRT_MODEL, sizeof(*m));
	if (!m) {
		klog_error("nrt_load: out of host memory for the model record");
		return nrt__leave(NRT_FAIL_HOST_MEM_ALLOC);
	}
	rc = kmgr_load_nn(neff_bytes, size, start_nc, nc_count, &m->h_nn);
	if (rc)
		goto fail;
	rc = kmgr_get_nc_info(m->h_nn, &m->start_nc, &m->nc_count);
	if (rc) {
		kmgr_unload_nn(m->h_nn);
		goto fail;
	}
	nrt_model_link(m);
	*model = m;
	return nrt__leave(NRT_SUCCESS);
fail:
	kfree(m);
	return nrt__leave(rc);
}

NRT_STATUS nrt_unload(nrt_model_t *model)
{
	NRT_STATUS rc = nrt__enter("nrt_unload");

	if (rc)
		return rc;
	if (!model)
		return nrt__leave(NRT_INVALID);
	rc = kmgr_unload_nn(model->h_nn);
	/* On failure the model stays loaded and the handle stays valid. */
	if (rc == NRT_SUCCESS) {
		nrt_model_unlink(model);
		kfree(model);
	}
	return nrt__leave(rc);
}

NRT_STATUS nrt_get_model_nc_count(const nrt_model_t *model, uint32_t *nc_count)
{
	NRT_STATUS rc = nrt__enter("nrt_get_model_nc_count");

	if (rc)
		return rc;
	if (!model || !nc_count)
		return nrt__leave(NRT_INVALID);
	*nc_count = model->nc_count;
	return nrt__leave(NRT_SUCCESS);
}

/* The public runtime checks the number of inputs before dispatch
 * ("Incorrect number of inputs, expected: %u, received: %lu"); fewer than
 * the model's ifmaps can never bind, so it is refused here.  More are left
 * to the binder, which only looks up the model's names. */
static NRT_STATUS nrt_check_ifmaps(const nrt_model_t *model, const nrt_tensor_set_t *in)
{
	uint32_t expected, received;
	NRT_STATUS rc = kmgr_get_ifmap_count(model->h_nn, &expected);

	if (rc)
		return rc;
	received = kbl_tensor_set_count(in);
	if (received < expected) {
		klog_error("Incorrect number of inputs, expected: %u, received: %u", expected,
		           received);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

NRT_STATUS nrt_execute_repeat(nrt_model_t *model, const nrt_tensor_set_t *input_set,
                              nrt_tensor_set_t *output_set, int repeat_count)
{
	NRT_STATUS rc = nrt__enter("nrt_execute");

	if (rc)
		return rc;
	if (!model || !input_set || !output_set) {
		klog_error("nrt_execute: NULL model or tensor set");
		return nrt__leave(NRT_INVALID);
	}
	if (repeat_count < 1) {
		klog_error("nrt_execute_repeat: repeat_count %d < 1", repeat_count);
		return nrt__leave(NRT_INVALID);
	}
	rc = nrt_check_ifmaps(model, input_set);
	for (int i = 0; rc == NRT_SUCCESS && i < repeat_count; i++)
		rc = kmgr_exec(model->h_nn, input_set, output_set, 0);
	return nrt__leave(rc);
}

NRT_STATUS nrt_execute(nrt_model_t *model, const nrt_tensor_set_t *input_set,
                       nrt_tensor_set_t *output_set)
{
	return nrt_execute_repeat(model, input_set, output_set, 1);
}

static void nrt_free_info_shapes(nrt_tensor_info_array_t *info)
{
	for (uint64_t i = 0; i < info->tensor_count; i++)
		kfree(info->tensor_array[i].shape);
}

/* Fills info->tensor_array[base ...] with the model's inputs or outputs;
 * tensor_count counts the filled entries, so a failure frees exactly those. */
static NRT_STATUS nrt_fill_info(H_NN h, bool is_input, uint32_t n, nrt_tensor_info_array_t *info)
{
	for (uint32_t i = 0; i < n; i++) {
		nrt_tensor_info_t *ti = &info->tensor_array[info->tensor_count];
		NRT_STATUS rc = kmgr_get_io_tensor_info(h, is_input, i, ti->name, &ti->size,
		                                        &ti->dtype, &ti->ndim, &ti->shape);

		if (rc)
			return rc;
		ti->usage = is_input ? NRT_TENSOR_USAGE_INPUT : NRT_TENSOR_USAGE_OUTPUT;
		info->tensor_count++;
	}
	return NRT_SUCCESS;
}

NRT_STATUS nrt_get_model_tensor_info(nrt_model_t *model, nrt_tensor_info_array_t **tensor_info)
{
	nrt_tensor_info_array_t *info;
	uint32_t n_in, n_out;
	NRT_STATUS rc = nrt__enter("nrt_get_model_tensor_info");

	if (rc)
		return rc;
	if (!model || !tensor_info)
		return nrt__leave(NRT_INVALID);
	rc = kmgr_get_io_tensor_count(model->h_nn, &n_in, &n_out);
	if (rc)
		return nrt__leave(rc);
	info = kalloc(KFAULT_NRT_TENSOR_INFO,
	              sizeof(*info) + ((size_t)n_in + n_out) * sizeof(info->tensor_array[0]));
	if (!info)
		return nrt__leave(NRT_FAIL_HOST_MEM_ALLOC);
	rc = nrt_fill_info(model->h_nn, true, n_in, info);
	if (rc == NRT_SUCCESS)
		rc = nrt_fill_info(model->h_nn, false, n_out, info);
	if (rc) {
		nrt_free_info_shapes(info);
		kfree(info);
		return nrt__leave(rc);
	}
	*tensor_info = info;
	return nrt__leave(NRT_SUCCESS);
}

NRT_STATUS nrt_free_model_tensor_info(nrt_tensor_info_array_t *tensor_info)
{
	/* NULL-safe.  Unlike the public runtime (INIT only) it frees in any
	 * state: the array holds no device state, and refusing after nrt_close
	 * would only leak it. */
	if (!tensor_info)
		return NRT_SUCCESS;
	nrt_free_info_shapes(tensor_info);
	kfree(tensor_info);
	return NRT_SUCCESS;
}

NRT_STATUS nrt_model_get_nn(const nrt_model_t *model, H_NN *h_nn)
{
	if (!model || !h_nn)
		return NRT_INVALID;
	*h_nn = model->h_nn;
	return NRT_SUCCESS;
}
