/*
 * metadata.c - the io tensor accessors (seed §5), each bracketed by the
 * reference pair: counts, the index walk (NAME order, as the seed's RB
 * walk; the device computes in MODEL order), ifmap validity and count, and
 * where the model sits.
 */
#include <string.h>

#include "dlr.h"

NRT_STATUS kmgr_get_io_tensor_count(H_NN h_nn, uint32_t *in_count, uint32_t *out_count)
{
	dlr_model *mod;

	if (!in_count || !out_count)
		return NRT_INVALID;
	mod = kmgr_find_nn(h_nn);
	if (!mod)
		return NRT_INVALID_HANDLE;
	*in_count = mod->input_info.count;
	*out_count = mod->output_info.count;
	nn_ref_decrement(mod);
	return NRT_SUCCESS;
}

static NRT_STATUS copy_info(const io_node_info_t *node, char name[NRT_TENSOR_NAME_MAX],
                            size_t *size, nrt_dtype_t *dtype, uint32_t *ndim, uint32_t **shape)
{
	uint32_t *s = NULL;

	if (node->ndim) {
		s = kalloc_array(KFAULT_KMGR_SHAPE, node->ndim, sizeof(*s));
		if (!s)
			return NRT_RESOURCE;
		memcpy(s, node->shape, node->ndim * sizeof(*s));
	}
	strncpy(name, node->name, NRT_TENSOR_NAME_MAX - 1);
	name[NRT_TENSOR_NAME_MAX - 1] = 0;
	*size = node->size;
	*dtype = node->dtype;
	*ndim = node->ndim;
	*shape = s;
	return NRT_SUCCESS;
}

/* The seed walks index RB increments without a bound; ours refuses an
 * index past the end instead of walking off the tree. */
NRT_STATUS kmgr_get_io_tensor_info(H_NN h_nn, bool is_input, uint32_t index,
                                   char name[NRT_TENSOR_NAME_MAX], size_t *size, nrt_dtype_t *dtype,
                                   uint32_t *ndim, uint32_t **shape)
{
	const io_map_t *map;
	dlr_model *mod;
	NRT_STATUS rc;

	if (!name || !size || !dtype || !ndim || !shape)
		return NRT_INVALID;
	mod = kmgr_find_nn(h_nn);
	if (!mod)
		return NRT_INVALID_HANDLE;
	map = is_input ? &mod->input_info : &mod->output_info;
	if (index >= map->count) {
		klog_error("Tensor index %u out of range (%u %s tensors)", index, map->count,
		           is_input ? "input" : "output");
		rc = NRT_INVALID;
	} else {
		rc = copy_info(&map->nodes[index], name, size, dtype, ndim, shape);
	}
	nn_ref_decrement(mod);
	return rc;
}

static int cmp_name(const void *key, const void *node)
{
	return strcmp(key, ((const io_node_info_t *)node)->name);
}

/* The seed's NULL name throws std::logic_error (constructing a std::string
 * from NULL); C cannot throw, so the closest safe thing: NRT_INVALID. */
NRT_STATUS kmgr_is_valid_ifmap(H_NN h_nn, const char *name, bool *valid)
{
	dlr_model *mod;
	NRT_STATUS rc = NRT_SUCCESS;

	if (!valid)
		return NRT_INVALID;
	mod = kmgr_find_nn(h_nn);
	if (!mod)
		return NRT_INVALID_HANDLE;
	if (!name) {
		klog_error("basic_string: construction from null is not valid");
		rc = NRT_INVALID;
	} else {
		*valid = bsearch(name, mod->input_info.nodes, mod->input_info.count,
		                 sizeof(io_node_info_t), cmp_name) != NULL;
	}
	nn_ref_decrement(mod);
	return rc;
}

NRT_STATUS kmgr_get_ifmap_count(H_NN h_nn, uint32_t *count)
{
	dlr_model *mod;

	if (!count)
		return NRT_INVALID;
	mod = kmgr_find_nn(h_nn);
	if (!mod)
		return NRT_INVALID_HANDLE;
	*count = mod->input_info.count;
	nn_ref_decrement(mod);
	return NRT_SUCCESS;
}

NRT_STATUS kmgr_get_nc_info(H_NN h_nn, uint32_t *start_nc, uint32_t *nc_count)
{
	dlr_model *mod;

	if (!start_nc || !nc_count)
		return NRT_INVALID;
	mod = kmgr_find_nn(h_nn);
	if (!mod)
		return NRT_INVALID_HANDLE;
	*start_nc = mod->vcore->vtpb_idx;
	*nc_count = mod->vcore->num_tpbs;
	nn_ref_decrement(mod);
	return NRT_SUCCESS;
}
