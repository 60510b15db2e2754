/*
 * kbl_model.c - models on the device: one record per core a model is
 * staged on (the seed's model_t), reference counted, with its rings and
 * request buffers allocated at add (so a steady-state execute allocates
 * no device memory), the hardware-exec-queue lock, the first-execution
 * flag and the collectives bootstrap.
 */
#include "emu/emu_int.h"

#include <stdlib.h>
#include <string.h>

#define EMU_MAX_IO 4096

/* Every record until its last reference goes, so in-flight counts stay
 * readable after kbl_model_remove. */
static ks_mutex_t emu_models_lock = KS_MUTEX_INITIALIZER;
static kbl_model_t *emu_models;
static ks_atomic_t emu_next_h_model;

H_MODEL kbl_model_handle_new(void)
{
	return (H_MODEL)ks_atomic_add(&emu_next_h_model, 1) + 1;
}

static NRT_STATUS emu_model_param_check(const kbl_model_param_t *p)
{
	if (!p || p->n_io > EMU_MAX_IO || (p->n_io && !p->io) || !p->sg_count)
		return NRT_INVALID;
	for (uint32_t i = 0; i < p->n_io; i++) {
		const kbl_io_desc_t *d = &p->io[i];

		if (!d->size || d->usage > NRT_TENSOR_USAGE_OUTPUT ||
		    !memchr(d->name, 0, sizeof(d->name)))
			return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

static kbl_model_t *emu_model_find(tpb_t *tpb, H_MODEL h)
{
	for (kbl_model_t *m = tpb->models; m; m = m->next_on_tpb)
		if (m->h_model == h)
			return m;
	return NULL;
}

static void emu_model_destroy(kbl_model_t *m)
{
	ks_mutex_lock(&emu_models_lock);
	for (kbl_model_t **pp = &emu_models; *pp; pp = &(*pp)->next_global) {
		if (*pp == m) {
			*pp = m->next_global;
			break;
		}
	}
	ks_mutex_unlock(&emu_models_lock);
	emu_arena_free(&m->ring);
	if (m->has_cc_blk)
		emu_arena_free(&m->cc);
	ks_mutex_destroy(&m->hw_exec_queue_lock);
	kfree(m);
	emu_count(&emu_cnt.objects, -1);
}

static kbl_model_t *emu_model_new(tpb_t *tpb, H_MODEL h, const kbl_model_param_t *param,
                                  const char *name, const uint8_t uuid[16])
{
	size_t io_bytes = (size_t)param->n_io * sizeof(kbl_io_desc_t);
	kbl_model_t *m = kalloc(KFAULT_EMU_HOST_MODEL, sizeof(*m) + io_bytes);

	if (!m)
		return NULL;
	if (emu_arena_alloc(tpb->idx, KFAULT_EMU_DEV_RING, EMU_RING_BYTES + 64ull * param->n_io,
	                    &m->ring)) {
		kfree(m);
		return NULL;
	}
	m->tpb = tpb;
	m->h_model = h;
	m->sg_count = param->sg_count;
	m->has_cc = param->has_cc;
	m->n_io = param->n_io;
	m->io = (kbl_io_desc_t *)(m + 1);
	if (io_bytes)
		memcpy(m->io, param->io, io_bytes);
	if (name)
		strncpy(m->name, name, sizeof(m->name) - 1);
	if (uuid)
		memcpy(m->uuid, uuid, sizeof(m->uuid));
	ks_mutex_init(&m->hw_exec_queue_lock);
	ks_atomic_store(&m->refs, 1);
	m->staged = true;
	emu_count(&emu_cnt.objects, 1);
	return m;
}

NRT_STATUS kbl_model_add(tpb_t *tpb, H_MODEL h_model, const kbl_model_param_t *param,
                         const char *name, const uint8_t uuid[16])
{
	kbl_model_t *m;
	bool dup;

	if (!tpb || !h_model || emu_model_param_check(param))
		return NRT_INVALID;
	/* Allocate before taking the core lock: the arena takes it too. */
	m = emu_model_new(tpb, h_model, param, name, uuid);
	if (!m)
		return NRT_RESOURCE;
	ks_mutex_lock(&tpb->lock);
	dup = emu_model_find(tpb, h_model) != NULL;
	if (!dup) {
		m->next_on_tpb = tpb->models;
		tpb->models = m;
		tpb->n_models++;
	}
	ks_mutex_unlock(&tpb->lock);
	if (dup) {
		klog_error("kbl_model_add: model %llu is already staged on core %u",
		           (unsigned long long)h_model, tpb->idx);
		m->staged = false;
		emu_model_destroy(m);
		return NRT_INVALID;
	}
	ks_mutex_lock(&emu_models_lock);
	m->next_global = emu_models;
	emu_models = m;
	ks_mutex_unlock(&emu_models_lock);
	emu_count(&emu_cnt.staged_models, 1);
	return NRT_SUCCESS;
}

static kbl_model_t *emu_model_unlink(tpb_t *tpb, H_MODEL h)
{
	kbl_model_t *m = NULL;

	ks_mutex_lock(&tpb->lock);
	for (kbl_model_t **pp = &tpb->models; *pp; pp = &(*pp)->next_on_tpb) {
		if ((*pp)->h_model == h) {
			m = *pp;
			*pp = m->next_on_tpb;
			tpb->n_models--;
			m->staged = false;
			break;
		}
	}
	ks_mutex_unlock(&tpb->lock);
	return m;
}

NRT_STATUS kbl_model_remove(tpb_t *tpb, H_MODEL h_model)
{
	kbl_model_t *m;
	int64_t inflight;

	if (!tpb)
		return NRT_INVALID;
	m = emu_model_unlink(tpb, h_model);
	if (!m)
		return NRT_INVALID;
	/* The device keeps the record alive for work still holding it, but a
	 * caller that removes a model with work in flight has skipped its
	 * drain: say so, it is the symptom oracles look for. */
	inflight = ks_atomic_peek(&m->inflight);
	if (inflight)
		klog_error("kbl_model_remove: model %llu removed from core %u with %lld "
		           "executions in flight",
		           (unsigned long long)h_model, tpb->idx, (long long)inflight);
	emu_count(&emu_cnt.staged_models, -1);
	kbl_model_ref_decrement(m);
	return NRT_SUCCESS;
}

kbl_model_t *emu_model_get(tpb_t *tpb, H_MODEL h_model)
{
	kbl_model_t *m;

	if (!tpb)
		return NULL;
	ks_mutex_lock(&tpb->lock);
	m = emu_model_find(tpb, h_model);
	if (m)
		ks_atomic_add(&m->refs, 1);
	ks_mutex_unlock(&tpb->lock);
	return m;
}

NRT_STATUS kbl_get_model_ref_count(tpb_t **tpbs, H_MODEL h_model, kbl_model_t **kmod)
{
	if (!kmod)
		return NRT_INVALID;
	*kmod = tpbs ? emu_model_get(tpbs[0], h_model) : NULL;
	return *kmod ? NRT_SUCCESS : NRT_INVALID;
}

void kbl_model_ref_decrement(kbl_model_t *kmod)
{
	int64_t before;

	if (!kmod)
		return;
	before = ks_atomic_sub(&kmod->refs, 1);
	if (before <= 0) {
		klog_error("kbl_model_ref_decrement: model %llu reference count below zero",
		           (unsigned long long)kmod->h_model);
		abort();
	}
	if (before == 1)
		emu_model_destroy(kmod);
}

void kbl_acquire_hw_exec_queue_lock(kbl_model_t *kmod)
{
	ks_mutex_lock(&kmod->hw_exec_queue_lock);
}

void kbl_release_hw_exec_queue_lock(kbl_model_t *kmod)
{
	ks_mutex_unlock(&kmod->hw_exec_queue_lock);
}

bool kbl_cc_get_model_is_first_exec(kbl_model_t *kmod)
{
	return kmod && kmod->cc_done;
}

NRT_STATUS kbl_exec_build_and_load_cc_resources(kbl_model_t *kmod, uint32_t sg_count,
                                                uint64_t exec_id)
{
	NRT_STATUS rc;

	(void)sg_count;
	if (!kmod)
		return NRT_INVALID;
	if (kmod->cc_done)
		return NRT_SUCCESS;
	if (kmod->has_cc && !kmod->has_cc_blk) {
		rc = emu_arena_alloc(kmod->tpb->idx, KFAULT_EMU_DEV_CC, EMU_CC_BYTES, &kmod->cc);
		if (rc) {
			klog_error("Failed to build and load collectives resources for %s, "
			           "exec_id %llu",
			           kmod->name, (unsigned long long)exec_id);
			return rc;
		}
		kmod->has_cc_blk = true;
	}
	kmod->cc_done = true;
	return NRT_SUCCESS;
}

int64_t kbl_model_inflight(H_MODEL h_model)
{
	int64_t n = 0;

	ks_mutex_lock(&emu_models_lock);
	for (kbl_model_t *m = emu_models; m; m = m->next_global)
		if (m->h_model == h_model)
			n += ks_atomic_peek(&m->inflight);
	ks_mutex_unlock(&emu_models_lock);
	return n;
}

uint32_t emu_models_release_all(void)
{
	uint32_t left = 0;

	for (uint32_t i = 0; i < emu_nc_count(); i++) {
		tpb_t *t = &emu_dev.tpbs[i];

		while (t->models) {
			left++;
			kbl_model_remove(t, t->models->h_model);
		}
	}
	return left;
}
