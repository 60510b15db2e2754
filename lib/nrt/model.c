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

/*
 * Checked handles.  Every nrt_model_t handed out and not yet unloaded is on
 * the live list; a handle is resolved by comparing pointers along it under
 * the lock, so a stale or foreign pointer is refused (NRT_INVALID_HANDLE)
 * without being read.  An unloaded record is not freed at once but retired:
 * its facade handle poisoned, kept on a FIFO of NRT_RETIRED_MAX records, so
 * the allocator cannot give its address to a new model while a stale copy
 * of the old handle is likely still around (docs/api-contract.md: older
 * stale handles are undefined).  nrt_close frees both lists.
 */
#define NRT_RETIRED_MAX 256

static void nrt_infos_release_retired(void);

static ks_mutex_t nrt_models_lock = KS_MUTEX_INITIALIZER;
static nrt_model_t *nrt_models;
static nrt_model_t *nrt_retired_head, *nrt_retired_tail;
static uint32_t nrt_retired_count;

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

/* The live record whose address is handle, or NULL (under the lock). */
static nrt_model_t *nrt_model_find(const nrt_model_t *handle)
{
	for (nrt_model_t *m = nrt_models; m; m = m->next)
		if (m == handle)
			return m;
	return NULL;
}

/* Off the live list onto the retired FIFO; frees the oldest retired record
 * beyond NRT_RETIRED_MAX (under the lock). */
static void nrt_model_retire(nrt_model_t *m)
{
	if (m->prev)
		m->prev->next = m->next;
	else
		nrt_models = m->next;
	if (m->next)
		m->next->prev = m->prev;
	m->h_nn = (H_NN){0};
	m->unloading = true;
	m->prev = NULL;
	m->next = NULL;
	if (nrt_retired_tail)
		nrt_retired_tail->next = m;
	else
		nrt_retired_head = m;
	nrt_retired_tail = m;
	if (++nrt_retired_count <= NRT_RETIRED_MAX)
		return;
	m = nrt_retired_head;
	nrt_retired_head = m->next;
	nrt_retired_count--;
	kfree(m);
}

static void nrt_model_free_list(nrt_model_t *m)
{
	while (m) {
		nrt_model_t *next = m->next;

		kfree(m);
		m = next;
	}
}

void nrt__models_release_all(void)
{
	nrt_model_t *live, *retired;

	ks_mutex_lock(&nrt_models_lock);
	live = nrt_models;
	retired = nrt_retired_head;
	nrt_models = NULL;
	nrt_retired_head = nrt_retired_tail = NULL;
	nrt_retired_count = 0;
	ks_mutex_unlock(&nrt_models_lock);
	nrt_model_free_list(live);
	nrt_model_free_list(retired);
	nrt_infos_release_retired();
}

NRT_STATUS nrt__model_resolve(const char *fn, const nrt_model_t *handle, nrt_model_t *copy)
{
	nrt_model_t *m;
	bool live;

	if (!handle)
		return NRT_INVALID;
	ks_mutex_lock(&nrt_models_lock);
	m = nrt_model_find(handle);
	live = m && !m->unloading;
	if (live)
		*copy = *m;
	ks_mutex_unlock(&nrt_models_lock);
	if (!live) {
		klog_error("%s: not a loaded model (unloaded, being unloaded, or never loaded)",
		           fn);
		return NRT_INVALID_HANDLE;
	}
	return NRT_SUCCESS;
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

/* Claim a live record for unloading (under the lock), so that of two
 * threads unloading one handle only one reaches the facade. */
static NRT_STATUS nrt_model_claim(const nrt_model_t *handle, nrt_model_t **claimed)
{
	nrt_model_t *m;
	NRT_STATUS rc = NRT_SUCCESS;

	ks_mutex_lock(&nrt_models_lock);
	m = nrt_model_find(handle);
	if (m && !m->unloading) {
		m->unloading = true;
		*claimed = m;
	} else {
		rc = NRT_INVALID_HANDLE;
	}
	ks_mutex_unlock(&nrt_models_lock);
	if (rc)
		klog_error("nrt_unload: not a loaded model (unloaded, being unloaded, or never "
		           "loaded)");
	return rc;
}

NRT_STATUS nrt_unload(nrt_model_t *model)
{
	nrt_model_t *m = NULL;
	NRT_STATUS rc = nrt__enter("nrt_unload");

	if (rc)
		return rc;
	if (!model)
		return nrt__leave(NRT_INVALID);
	rc = nrt_model_claim(model, &m);
	if (rc)
		return nrt__leave(rc);
	/* The claim keeps the record on the live list (nrt_close cannot run
	 * before this call leaves), so m stays valid while the facade unloads. */
	rc = kmgr_unload_nn(m->h_nn);
	ks_mutex_lock(&nrt_models_lock);
	if (rc == NRT_SUCCESS)
		nrt_model_retire(m);
	else
		m->unloading = false; /* still loaded: the handle stays valid */
	ks_mutex_unlock(&nrt_models_lock);
	return nrt__leave(rc);
}

NRT_STATUS nrt_get_model_nc_count(const nrt_model_t *model, uint32_t *nc_count)
{
	nrt_model_t m;
	NRT_STATUS rc = nrt__enter("nrt_get_model_nc_count");

	if (rc)
		return rc;
	if (!model || !nc_count)
		return nrt__leave(NRT_INVALID);
	rc = nrt__model_resolve("nrt_get_model_nc_count", model, &m);
	if (rc == NRT_SUCCESS)
		*nc_count = m.nc_count;
	return nrt__leave(rc);
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
	nrt_model_t m;
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
	rc = nrt__model_resolve("nrt_execute", model, &m);
	if (rc == NRT_SUCCESS)
		rc = nrt_check_ifmaps(&m, input_set);
	/* A concurrent nrt_unload makes the facade answer NRT_INVALID_HANDLE for
	 * m.h_nn: the copy never refers to freed memory. */
	for (int i = 0; rc == NRT_SUCCESS && i < repeat_count; i++)
		rc = kmgr_exec(m.h_nn, input_set, output_set, 0);
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
	info->tensor_count = 0;
}

/*
 * Tensor-info arrays are checked the same way: each sits after a header on
 * a live list, nrt_free_model_tensor_info compares pointers along it before
 * reading anything, and a freed array (its shapes released) is kept on a
 * short FIFO so that its address is not handed out again at once.
 */
#define NRT_INFO_RETIRED_MAX 16

typedef struct nrt_info_hdr {
	struct nrt_info_hdr *prev, *next;
} nrt_info_hdr_t;
_Static_assert(sizeof(nrt_info_hdr_t) % _Alignof(nrt_tensor_info_array_t) == 0,
               "the array after the header must be aligned");

static ks_mutex_t nrt_infos_lock = KS_MUTEX_INITIALIZER;
static nrt_info_hdr_t *nrt_infos;
static nrt_info_hdr_t *nrt_infos_retired_head, *nrt_infos_retired_tail;
static uint32_t nrt_infos_retired_count;

static nrt_tensor_info_array_t *nrt_info_array(nrt_info_hdr_t *h)
{
	return (nrt_tensor_info_array_t *)(h + 1);
}

static void nrt_info_link(nrt_info_hdr_t *h)
{
	ks_mutex_lock(&nrt_infos_lock);
	h->prev = NULL;
	h->next = nrt_infos;
	if (nrt_infos)
		nrt_infos->prev = h;
	nrt_infos = h;
	ks_mutex_unlock(&nrt_infos_lock);
}

/* Under the lock. */
static nrt_info_hdr_t *nrt_info_find(const nrt_tensor_info_array_t *info)
{
	for (nrt_info_hdr_t *h = nrt_infos; h; h = h->next)
		if (nrt_info_array(h) == info)
			return h;
	return NULL;
}

/* Under the lock: free the shapes, move h to the retired FIFO, free the
 * oldest retired array beyond NRT_INFO_RETIRED_MAX.  Outside INIT it is
 * freed at once: no nrt_close would come to release it. */
static void nrt_info_retire(nrt_info_hdr_t *h)
{
	nrt_free_info_shapes(nrt_info_array(h));
	if (h->prev)
		h->prev->next = h->next;
	else
		nrt_infos = h->next;
	if (h->next)
		h->next->prev = h->prev;
	h->prev = NULL;
	h->next = NULL;
	if (nrt__state() != NRT_STATE_INIT) {
		kfree(h);
		return;
	}
	if (nrt_infos_retired_tail)
		nrt_infos_retired_tail->next = h;
	else
		nrt_infos_retired_head = h;
	nrt_infos_retired_tail = h;
	if (++nrt_infos_retired_count <= NRT_INFO_RETIRED_MAX)
		return;
	h = nrt_infos_retired_head;
	nrt_infos_retired_head = h->next;
	nrt_infos_retired_count--;
	kfree(h);
}

/* nrt_close: the retired arrays go (live ones belong to the caller, who
 * may free them after close). */
static void nrt_infos_release_retired(void)
{
	nrt_info_hdr_t *h;

	ks_mutex_lock(&nrt_infos_lock);
	h = nrt_infos_retired_head;
	nrt_infos_retired_head = nrt_infos_retired_tail = NULL;
	nrt_infos_retired_count = 0;
	ks_mutex_unlock(&nrt_infos_lock);
	while (h) {
		nrt_info_hdr_t *next = h->next;

		kfree(h);
		h = next;
	}
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
	nrt_info_hdr_t *h;
	nrt_tensor_info_array_t *info;
	uint32_t n_in, n_out;
	nrt_model_t m;
	NRT_STATUS rc = nrt__enter("nrt_get_model_tensor_info");

	if (rc)
		return rc;
	if (!model || !tensor_info)
		return nrt__leave(NRT_INVALID);
	rc = nrt__model_resolve("nrt_get_model_tensor_info", model, &m);
	if (rc == NRT_SUCCESS)
		rc = kmgr_get_io_tensor_count(m.h_nn, &n_in, &n_out);
	if (rc)
		return nrt__leave(rc);
	h = kalloc(KFAULT_NRT_TENSOR_INFO,
	           sizeof(*h) + sizeof(*info) +
	               ((size_t)n_in + n_out) * sizeof(info->tensor_array[0]));
	if (!h)
		return nrt__leave(NRT_FAIL_HOST_MEM_ALLOC);
	info = nrt_info_array(h);
	rc = nrt_fill_info(m.h_nn, true, n_in, info);
	if (rc == NRT_SUCCESS)
		rc = nrt_fill_info(m.h_nn, false, n_out, info);
	if (rc) {
		nrt_free_info_shapes(info);
		kfree(h);
		return nrt__leave(rc);
	}
	nrt_info_link(h);
	*tensor_info = info;
	return nrt__leave(NRT_SUCCESS);
}

NRT_STATUS nrt_free_model_tensor_info(nrt_tensor_info_array_t *tensor_info)
{
	nrt_info_hdr_t *h;

	/* NULL-safe.  Unlike the public runtime (INIT only) it frees in any
	 * state: the array holds no device state, and refusing after nrt_close
	 * would only leak it. */
	if (!tensor_info)
		return NRT_SUCCESS;
	ks_mutex_lock(&nrt_infos_lock);
	h = nrt_info_find(tensor_info);
	if (h)
		nrt_info_retire(h);
	ks_mutex_unlock(&nrt_infos_lock);
	if (!h) {
		klog_error("nrt_free_model_tensor_info: not an array of nrt_get_model_tensor_info "
		           "(freed twice?)");
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

NRT_STATUS nrt_model_get_nn(const nrt_model_t *model, H_NN *h_nn)
{
	nrt_model_t m;
	NRT_STATUS rc;

	if (!model || !h_nn)
		return NRT_INVALID;
	rc = nrt__model_resolve("nrt_model_get_nn", model, &m);
	if (rc == NRT_SUCCESS)
		*h_nn = m.h_nn;
	return rc;
}
