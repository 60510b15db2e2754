/*
 * vcore.c - virtual cores: a run of consecutive emulated cores that a
 * model is staged on; the first core (vtpb_idx) selects the sync XU and
 * the implicit-async worker.
 */
#include "emu/emu_int.h"

NRT_STATUS vtpb_create(uint32_t start_nc, uint32_t nc_count, virtual_core_t **vcore)
{
	virtual_core_t *v;
	uint32_t n = emu_nc_count();

	if (!vcore)
		return NRT_INVALID;
	*vcore = NULL;
	if (!nc_count || start_nc >= n || nc_count > n - start_nc) {
		klog_error("virtual core %u+%u outside the device's %u cores", start_nc, nc_count,
		           n);
		return NRT_INVALID;
	}
	v = kalloc(KFAULT_EMU_HOST_VCORE, sizeof(*v) + nc_count * sizeof(tpb_t *));
	if (!v)
		return NRT_RESOURCE;
	v->vtpb_idx = start_nc;
	v->num_tpbs = nc_count;
	v->tpbs = (tpb_t **)(v + 1);
	for (uint32_t i = 0; i < nc_count; i++)
		v->tpbs[i] = emu_tpb(start_nc + i);
	emu_count(&emu_cnt.objects, 1);
	*vcore = v;
	return NRT_SUCCESS;
}

void vtpb_destroy(virtual_core_t *vcore)
{
	if (!vcore)
		return;
	kfree(vcore);
	emu_count(&emu_cnt.objects, -1);
}

uint32_t vtpb_get_vtpb_core_size(const virtual_core_t *vcore)
{
	return vcore ? vcore->num_tpbs : 0;
}

uint32_t emu_core_model_count(uint32_t nc)
{
	tpb_t *t = emu_tpb(nc);
	uint32_t n;

	if (!t)
		return 0;
	ks_mutex_lock(&t->lock);
	n = t->n_models;
	ks_mutex_unlock(&t->lock);
	return n;
}
