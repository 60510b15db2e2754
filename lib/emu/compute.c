/*
 * compute.c - tdrv compute resources (the IO binding of one execution)
 * and the device's compute formula (docs/device.md):
 *   out_j[k] = (uint8_t)(j + 1 + sum over inputs i of in_i[k mod size_i])
 * with inputs and outputs each in model order, so every answer is
 * checkable by an oracle that knows only the inputs.
 */
#include "emu/emu_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kattr.h"

struct kbl_binding {
	emu_dev_ref_t dev;
	uint8_t *data;
	uint64_t size;
	nrt_tensor_usage_t usage;
};

void kbl_init_compute_resources(tdrv_compute_resources_t *res, uint32_t sg_count)
{
	if (!res)
		return;
	memset(res, 0, sizeof(*res));
	res->sg_count = sg_count;
}

static NRT_STATUS emu_bind_one(const kbl_io_desc_t *d, const nrt_tensor_set_t *set,
                               struct kbl_binding *b)
{
	nrt_tensor_t *t;

	if (kbl_tensor_set_get(set, d->name, &t)) {
		klog_error("IO bind: %s tensor '%s' is missing",
		           d->usage == NRT_TENSOR_USAGE_INPUT ? "input" : "output", d->name);
		return NRT_INVALID;
	}
	if (kbl_tensor_is_malloc(t)) {
		/* The device cannot reach host (CPU-malloc) memory: the real one
		 * faults.  A correct facade never gets here (sync clones host
		 * tensors to HBM, both async forks reject them: the seed's GOTCHA),
		 * so this is the facade's bug, reported as loudly as the device would. */
		fprintf(stderr, "DEVICE FAULT: host tensor '%s' submitted for execution\n",
		        d->name);
		abort();
	}
	if (!emu_tensor_dev_ref(t, &b->dev)) {
		klog_error("IO bind: tensor '%s' is not in device memory", d->name);
		return NRT_INVALID;
	}
	if (t->size != d->size) {
		klog_error("IO bind: tensor '%s' is %llu bytes, the model wants %llu", d->name,
		           (unsigned long long)t->size, (unsigned long long)d->size);
		return NRT_INVALID;
	}
	emu_dev_check(&b->dev, d->name);
	b->data = t->data;
	b->size = t->size;
	b->usage = d->usage;
	return NRT_SUCCESS;
}

static NRT_STATUS emu_bind_all(const kbl_model_t *m, const nrt_tensor_set_t *in,
                               const nrt_tensor_set_t *out, struct kbl_binding *b)
{
	for (uint32_t i = 0; i < m->n_io; i++) {
		const kbl_io_desc_t *d = &m->io[i];
		NRT_STATUS rc =
		    emu_bind_one(d, d->usage == NRT_TENSOR_USAGE_INPUT ? in : out, &b[i]);

		if (rc)
			return rc;
	}
	return NRT_SUCCESS;
}

NRT_STATUS kbl_compute_build_compute_resources(const virtual_core_t *vcore, uint32_t sg_count,
                                               H_MODEL h_model, const nrt_tensor_set_t *in,
                                               const nrt_tensor_set_t *out,
                                               tdrv_compute_resources_t *res)
{
	kbl_model_t *m;
	struct kbl_binding *b;
	NRT_STATUS rc;

	if (!vcore || !res || !in || !out || !vcore->num_tpbs)
		return NRT_INVALID;
	m = emu_model_get(vcore->tpbs[0], h_model);
	if (!m) {
		klog_error("IO bind: model %llu is not staged on core %u",
		           (unsigned long long)h_model, vcore->vtpb_idx);
		return NRT_INVALID;
	}
	b = kalloc_array(KFAULT_EMU_HOST_BIND, m->n_io ? m->n_io : 1, sizeof(*b));
	rc = b ? emu_bind_all(m, in, out, b) : NRT_RESOURCE;
	if (rc == NRT_SUCCESS) {
		kfree(res->bound);
		res->vcore = vcore;
		res->h_model = h_model;
		res->sg_count = sg_count;
		res->n_bound = m->n_io;
		res->bound = b;
		b = NULL;
	}
	kfree(b);
	kbl_model_ref_decrement(m);
	return rc;
}

void kbl_free_compute_resources(tdrv_compute_resources_t *res)
{
	if (!res)
		return;
	kfree(res->bound);
	kfree(res);
}

/* out[k] += in[k mod in_size], a whole input period at a time (no division
 * per byte).  No coverage counters: the loop's only features would be the
 * tensor sizes, and under a fuzzer a callback per byte was a tenth of an
 * execution. */
KATTR_NO_COVERAGE static void formula_add(uint8_t *out, uint64_t out_size, const uint8_t *in,
                                          uint64_t in_size)
{
	if (!in_size)
		return;
	for (uint64_t base = 0; base < out_size; base += in_size) {
		uint64_t n = out_size - base < in_size ? out_size - base : in_size;

		for (uint64_t k = 0; k < n; k++)
			out[base + k] = (uint8_t)(out[base + k] + in[k]);
	}
}

void emu_compute_expected(uint32_t n_in, const uint8_t *const *in, const uint64_t *in_size,
                          uint32_t out_index, uint8_t *out, uint64_t out_size)
{
	memset(out, (uint8_t)(out_index + 1), out_size);
	for (uint32_t i = 0; i < n_in; i++)
		formula_add(out, out_size, in[i], in_size[i]);
}

void emu_compute_run(const tdrv_compute_resources_t *tdrv)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < tdrv->n_bound; i++)
		emu_dev_check(&tdrv->bound[i].dev, "an execution's IO binding");
	for (uint32_t o = 0; o < tdrv->n_bound; o++) {
		const struct kbl_binding *ob = &tdrv->bound[o];

		if (ob->usage != NRT_TENSOR_USAGE_OUTPUT)
			continue;
		memset(ob->data, (uint8_t)(j + 1), ob->size);
		for (uint32_t i = 0; i < tdrv->n_bound; i++) {
			const struct kbl_binding *ib = &tdrv->bound[i];

			if (ib->usage != NRT_TENSOR_USAGE_INPUT)
				continue;
			formula_add(ob->data, ob->size, ib->data, ib->size);
		}
		j++;
	}
}
