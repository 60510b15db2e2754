/*
 * tensor.c - tensors and tensor sets through the public API: argument and
 * lifecycle checks, then the kbl_* calls of the emulated device.
 *
 * Freeing (nrt_tensor_free, nrt_destroy_tensor_set) works in every state:
 * the device keeps a tensor valid until it is freed, also after nrt_close,
 * and a free that refused would only leak.
 */
#include "base/klog.h"
#include "emu/emu.h"
#include "nrt_internal.h"

NRT_STATUS nrt_tensor_allocate(nrt_tensor_placement_t tensor_placement, int logical_nc_id,
                               size_t size, const char *name, nrt_tensor_t **tensor)
{
	NRT_STATUS rc = nrt__enter("nrt_tensor_allocate");

	if (rc)
		return rc;
	if (!tensor)
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kbl_tensor_allocate(tensor_placement, logical_nc_id, size, name, tensor));
}

void nrt_tensor_free(nrt_tensor_t **tensor)
{
	if (!tensor || !*tensor)
		return;
	kbl_tensor_free(tensor);
}

NRT_STATUS nrt_tensor_read(const nrt_tensor_t *tensor, void *buf, size_t offset, size_t size)
{
	NRT_STATUS rc = nrt__enter("nrt_tensor_read");

	if (rc)
		return rc;
	if (!tensor || (!buf && size))
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kbl_tensor_read(tensor, buf, offset, size));
}

NRT_STATUS nrt_tensor_write(nrt_tensor_t *tensor, const void *buf, size_t offset, size_t size)
{
	NRT_STATUS rc = nrt__enter("nrt_tensor_write");

	if (rc)
		return rc;
	if (!tensor || (!buf && size))
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kbl_tensor_write(tensor, buf, offset, size));
}

NRT_STATUS nrt_tensor_copy(const nrt_tensor_t *src, size_t src_offset, nrt_tensor_t *dst,
                           size_t dst_offset, size_t size)
{
	NRT_STATUS rc = nrt__enter("nrt_tensor_copy");

	if (rc)
		return rc;
	if (!src || !dst)
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kbl_tensor_copy(src, src_offset, dst, dst_offset, size));
}

size_t nrt_tensor_get_size(const nrt_tensor_t *tensor)
{
	size_t size;

	/* The public call returns the value, 0 on any error. */
	if (!tensor || nrt__enter("nrt_tensor_get_size"))
		return 0;
	size = kbl_tensor_get_size(tensor);
	nrt__leave(NRT_SUCCESS);
	return size;
}

NRT_STATUS nrt_tensor_memset(nrt_tensor_t *tensor, uint64_t offset, int value, size_t size)
{
	NRT_STATUS rc = nrt__enter("nrt_tensor_memset");

	if (rc)
		return rc;
	if (!tensor)
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kbl_tensor_memset(tensor, offset, value, size));
}

NRT_STATUS nrt_tensor_allocate_empty(const char *name, nrt_tensor_t **tensor)
{
	NRT_STATUS rc = nrt__enter("nrt_tensor_allocate_empty");

	if (rc)
		return rc;
	if (!tensor)
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kbl_tensor_allocate_empty(name, tensor));
}

NRT_STATUS nrt_tensor_attach_buffer(nrt_tensor_t *tensor, void *buffer, size_t size)
{
	NRT_STATUS rc = nrt__enter("nrt_tensor_attach_buffer");

	if (rc)
		return rc;
	if (!tensor || (!buffer && size))
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kbl_tensor_attach_buffer(tensor, buffer, size));
}

NRT_STATUS nrt_tensor_allocate_slice(const nrt_tensor_t *tensor_source, size_t offset, size_t size,
                                     const char *name, nrt_tensor_t **tensor_slice)
{
	NRT_STATUS rc = nrt__enter("nrt_tensor_allocate_slice");

	if (rc)
		return rc;
	if (!tensor_source || !tensor_slice)
		return nrt__leave(NRT_INVALID);
	return nrt__leave(
	    kbl_tensor_allocate_slice(tensor_source, offset, size, name, tensor_slice));
}

void *nrt_tensor_get_va(const nrt_tensor_t *tensor)
{
	void *va;

	/* NULL on failure, as the public header says. */
	if (!tensor || nrt__enter("nrt_tensor_get_va"))
		return NULL;
	va = kbl_tensor_get_va(tensor);
	nrt__leave(NRT_SUCCESS);
	return va;
}

NRT_STATUS nrt_allocate_tensor_set(nrt_tensor_set_t **result)
{
	NRT_STATUS rc = nrt__enter("nrt_allocate_tensor_set");

	if (rc)
		return rc;
	if (!result)
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kbl_tensor_set_allocate(result));
}

void nrt_destroy_tensor_set(nrt_tensor_set_t **tensor_set)
{
	if (!tensor_set || !*tensor_set)
		return;
	kbl_free_feature_map_set(*tensor_set);
	*tensor_set = NULL;
}

NRT_STATUS nrt_add_tensor_to_tensor_set(nrt_tensor_set_t *tensor_set, const char *tensor_name,
                                        nrt_tensor_t *tensor)
{
	NRT_STATUS rc = nrt__enter("nrt_add_tensor_to_tensor_set");

	if (rc)
		return rc;
	if (!tensor_set || !tensor_name || !tensor)
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kbl_tensor_set_add(tensor_set, tensor_name, tensor));
}

NRT_STATUS nrt_get_tensor_from_tensor_set(nrt_tensor_set_t *tensor_set, const char *tensor_name,
                                          nrt_tensor_t **tensor)
{
	NRT_STATUS rc = nrt__enter("nrt_get_tensor_from_tensor_set");

	if (rc)
		return rc;
	if (!tensor_set || !tensor_name || !tensor)
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kbl_tensor_set_get(tensor_set, tensor_name, tensor));
}
