/*
 * load.c - kmgr_load_nn (the seed's kmgr_load_nn_nc, in the facade's
 * share): parse, place, build the dlr_model, create the virtual core,
 * stage through dlr_kelf_stage, register with a fresh id and state 4.
 * Every failure edge rolls back exactly what was done before it.
 */
#include <string.h>

#include "dlr.h"

/* The interned id the traces carry: the same model (name and uuid) gets
 * the same id in every load, without a table; never 0 (0 is "no model"). */
static uint32_t intern_model_id(const kmodel_t *km)
{
	uint32_t h = 2166136261u;

	for (const char *p = km->name; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	for (int i = 0; i < 16; i++)
		h = (h ^ km->uuid[i]) * 16777619u;
	return h ? h : 1;
}

static uint32_t range_load(uint32_t start, uint32_t n)
{
	uint32_t load = 0;

	for (uint32_t i = start; i < start + n; i++)
		load += emu_core_model_count(i);
	return load;
}

/* start_nc -1: the first range of free cores, else the least loaded one
 * (lowest index on a tie); nc_count -1: as many cores as subgraphs. */
static NRT_STATUS resolve_placement(const kmodel_t *km, int32_t start_nc, int32_t nc_count,
                                    uint32_t *start, uint32_t *count)
{
	uint32_t total = emu_nc_count();
	uint32_t best_load = UINT32_MAX;

	if (start_nc < -1 || nc_count < -1 || nc_count == 0) {
		klog_error("Invalid start_nc %d / nc_count %d", start_nc, nc_count);
		return NRT_INVALID;
	}
	*count = nc_count == -1 ? km->nkbin : (uint32_t)nc_count;
	if (*count > total || (start_nc >= 0 && (uint32_t)start_nc > total - *count)) {
		klog_error("Not enough NeuronCores: start %d, count %u, available %u", start_nc,
		           *count, total);
		return NRT_LOAD_NOT_ENOUGH_NC;
	}
	if (start_nc >= 0) {
		*start = (uint32_t)start_nc;
		return NRT_SUCCESS;
	}
	for (uint32_t s = 0; s + *count <= total && best_load; s++) {
		uint32_t load = range_load(s, *count);

		if (load < best_load) {
			best_load = load;
			*start = s;
		}
	}
	return NRT_SUCCESS;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const io_node_info_t *)a)->name, ((const io_node_info_t *)b)->name);
}

/* Both io maps in one block (inputs first), each sorted by name. */
static NRT_STATUS build_io_maps(dlr_model *mod, const kmodel_t *km)
{
	uint32_t n_in = 0, n_out = 0;

	mod->io_nodes = kalloc_array(KFAULT_KMGR_IO_INFO, km->n_tensors ? km->n_tensors : 1,
	                             sizeof(io_node_info_t));
	if (!mod->io_nodes)
		return NRT_RESOURCE;
	for (uint32_t k = 0; k < 2; k++)
		for (uint32_t i = 0; i < km->n_tensors; i++) {
			const kmodel_tensor_t *t = &km->tensors[i];
			io_node_info_t *n = &mod->io_nodes[n_in + n_out];

			if ((k == 0) != (t->usage == NRT_TENSOR_USAGE_INPUT))
				continue;
			memcpy(n->name, t->name, sizeof(n->name));
			n->name[sizeof(n->name) - 1] = 0;
			n->size = t->size;
			n->dtype = t->dtype;
			n->usage = t->usage;
			n->ndim = t->ndim;
			memcpy(n->shape, t->shape, sizeof(n->shape));
			n->model_index = k == 0 ? n_in++ : n_out++;
		}
	mod->input_info = (io_map_t){n_in, mod->io_nodes};
	mod->output_info = (io_map_t){n_out, mod->io_nodes + n_in};
	qsort(mod->input_info.nodes, n_in, sizeof(io_node_info_t), cmp_node);
	qsort(mod->output_info.nodes, n_out, sizeof(io_node_info_t), cmp_node);
	return NRT_SUCCESS;
}

/* The device's view: inputs then outputs, each in MODEL order. */
static kbl_io_desc_t *build_io_desc(const kmodel_t *km)
{
	kbl_io_desc_t *io =
	    kalloc_array(KFAULT_KMGR_IO_INFO, km->n_tensors ? km->n_tensors : 1, sizeof(*io));
	uint32_t n = 0;

	if (!io)
		return NULL;
	for (uint32_t k = 0; k < 2; k++)
		for (uint32_t i = 0; i < km->n_tensors; i++) {
			const kmodel_tensor_t *t = &km->tensors[i];

			if ((k == 0) != (t->usage == NRT_TENSOR_USAGE_INPUT))
				continue;
			memcpy(io[n].name, t->name, sizeof(io[n].name));
			io[n].usage = t->usage;
			io[n].size = t->size;
			n++;
		}
	return io;
}

/* What only the container can get wrong is refused here, so that the
 * stage's nkbin assertion stays an invariant. */
static NRT_STATUS check_subgraphs(const kmodel_t *km, uint32_t nc_count)
{
	if (km->nkbin == 0 || km->nkbin > KMODEL_MAX_SUBGRAPHS) {
		klog_error("Invalid subgraph count %u", km->nkbin);
		return NRT_INVALID;
	}
	/* nkbin > nc_count is the stage's "Insufficient number of pncs" */
	if (km->nkbin != 1 && km->nkbin < nc_count) {
		klog_error("Subgraph count %u must be 1 or the core count %u", km->nkbin, nc_count);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

static dlr_model *dlr_model_new(const kmodel_t *km)
{
	dlr_model *mod = kalloc(KFAULT_KMGR_DLR_MODEL, sizeof(*mod));

	if (!mod)
		return NULL;
	memcpy(mod->name, km->name, sizeof(mod->name));
	mod->name[sizeof(mod->name) - 1] = 0;
	memcpy(mod->uuid, km->uuid, sizeof(mod->uuid));
	mod->sg_count = km->nkbin;
	mod->has_cc = km->has_cc;
	mod->interned_model_id = intern_model_id(km);
	if (build_io_maps(mod, km) != NRT_SUCCESS) {
		kfree(mod);
		return NULL;
	}
	return mod;
}

static NRT_STATUS stage_model(dlr_model *mod, const kmodel_t *km)
{
	kbl_model_param_t param = {
	    .n_io = km->n_tensors, .has_cc = km->has_cc, .sg_count = km->nkbin};
	kbl_io_desc_t *io = build_io_desc(km);
	NRT_STATUS rc;

	if (!io)
		return NRT_RESOURCE;
	param.io = io;
	rc = dlr_kelf_stage(km, mod->vcore, &param, kbl_model_handle_new(), mod->name, mod->uuid,
	                    &mod->kelf_model);
	kfree(io);
	return rc;
}

static NRT_STATUS load_model(const kmodel_t *km, int32_t start_nc, int32_t nc_count, H_NN *out)
{
	uint32_t start = 0, count = 0;
	dlr_model *mod;
	NRT_STATUS rc;

	rc = resolve_placement(km, start_nc, nc_count, &start, &count);
	if (rc == NRT_SUCCESS)
		rc = check_subgraphs(km, count);
	if (rc)
		return rc;
	mod = dlr_model_new(km);
	if (!mod)
		return NRT_RESOURCE;
	rc = vtpb_create(start, count, &mod->vcore);
	if (rc == NRT_SUCCESS)
		rc = stage_model(mod, km);
	if (rc == NRT_SUCCESS) {
		mod->state = DLR_MODEL_STATE_READY;
		/* Once inserted, the model is reachable: a concurrent unload (or
		 * kmgr_unload_all_nns) may erase and free it at once.  Hold a
		 * reference across the insert so that reading its id and name
		 * below cannot touch freed memory (found by the concurrent fuzz
		 * target: corpus/findings/kmgr-load-publish-uaf). */
		ks_atomic_add(&mod->ref_count, 1);
		rc = dlr_model_set_insert(mod);
		if (rc)
			ks_atomic_sub(&mod->ref_count, 1);
	}
	if (rc) {
		kmgr_unstage_kelf_model(mod);
		return rc;
	}
	klog_debug("Loaded NN: %u (%s) on nc %u..%u", mod->h_nn.id, mod->name, start,
	           start + count - 1);
	*out = mod->h_nn;
	nn_ref_decrement(mod);
	return NRT_SUCCESS;
}

NRT_STATUS kmgr_load_nn(const void *bytes, size_t size, int32_t start_nc, int32_t nc_count,
                        H_NN *out)
{
	kmodel_t *km = NULL;
	NRT_STATUS rc;

	if (!kmgr_is_initialized())
		return NRT_UNINITIALIZED;
	if (!bytes || !out) {
		klog_error("kmgr_load_nn: NULL %s", bytes ? "output handle" : "model bytes");
		return NRT_INVALID;
	}
	/* A container the parser rejects (NRT_INVALID) is the caller's bad
	 * input and the parser's own line already names the field and why;
	 * only a parse that failed for want of memory is said here. */
	rc = kmodel_parse(bytes, size, &km);
	if (rc) {
		if (rc != NRT_INVALID)
			klog_error("Failed to parse model container: status %d", (int)rc);
		return rc;
	}
	rc = load_model(km, start_nc, nc_count, out);
	kmodel_free(km);
	return rc;
}
