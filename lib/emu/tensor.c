/*
 * tensor.c - tensors: DEVICE (a core's arena), HOST (kalloc'd host memory)
 * and VIRTUAL (no memory until a buffer is attached); slices share their
 * source's memory.  Device accesses through a slice check that the source
 * allocation is still live (see arena.c).
 */
#include "emu/emu_int.h"

#include <string.h>

static NRT_STATUS emu_tensor_new(const char *name, nrt_tensor_t **out)
{
	nrt_tensor_t *t;

	if (name && strlen(name) >= NRT_TENSOR_NAME_MAX) {
		klog_error("tensor name longer than %d characters", NRT_TENSOR_NAME_MAX - 1);
		return NRT_INVALID;
	}
	t = kalloc(KFAULT_EMU_HOST_TENSOR, sizeof(*t));
	if (!t)
		return NRT_RESOURCE;
	if (name)
		strcpy(t->name, name);
	t->nc = -1;
	emu_count(&emu_cnt.objects, 1);
	*out = t;
	return NRT_SUCCESS;
}

static void emu_tensor_delete(nrt_tensor_t *t)
{
	kfree(t);
	emu_count(&emu_cnt.objects, -1);
}

static NRT_STATUS emu_tensor_alloc_device(nrt_tensor_t *t, int nc, size_t size)
{
	NRT_STATUS rc;

	if (nc < 0 || (uint32_t)nc >= emu_nc_count()) {
		klog_error("device tensor on core %d: the device has %u cores", nc, emu_nc_count());
		return NRT_INVALID;
	}
	rc = emu_arena_alloc((uint32_t)nc, KFAULT_EMU_DEV_TENSOR, size, &t->blk);
	if (rc)
		return rc;
	t->owns_block = true;
	t->nc = nc;
	t->data = emu_arena_ptr(t->blk.arena, t->blk.off);
	t->dev = (emu_dev_ref_t){t->blk.arena, t->blk.off, size, t->blk.gen};
	return NRT_SUCCESS;
}

NRT_STATUS kbl_tensor_allocate(nrt_tensor_placement_t placement, int logical_nc_id, size_t size,
                               const char *name, nrt_tensor_t **tensor)
{
	nrt_tensor_t *t;
	NRT_STATUS rc;

	if (!tensor || !size || placement > NRT_TENSOR_PLACEMENT_VIRTUAL)
		return NRT_INVALID;
	*tensor = NULL;
	rc = emu_tensor_new(name, &t);
	if (rc)
		return rc;
	t->placement = placement;
	t->size = size;
	if (placement == NRT_TENSOR_PLACEMENT_DEVICE) {
		rc = emu_tensor_alloc_device(t, logical_nc_id, size);
	} else if (placement == NRT_TENSOR_PLACEMENT_HOST) {
		t->data = kalloc(KFAULT_EMU_HOST_TENSOR_DATA, size);
		rc = t->data ? NRT_SUCCESS : NRT_RESOURCE;
	}
	if (rc) {
		emu_tensor_delete(t);
		return rc;
	}
	*tensor = t;
	return NRT_SUCCESS;
}

NRT_STATUS kbl_tensor_allocate_empty(const char *name, nrt_tensor_t **tensor)
{
	nrt_tensor_t *t;
	NRT_STATUS rc;

	if (!tensor)
		return NRT_INVALID;
	*tensor = NULL;
	rc = emu_tensor_new(name, &t);
	if (rc)
		return rc;
	t->placement = NRT_TENSOR_PLACEMENT_VIRTUAL;
	*tensor = t;
	return NRT_SUCCESS;
}

NRT_STATUS kbl_tensor_attach_buffer(nrt_tensor_t *tensor, void *buffer, size_t size)
{
	if (!tensor || !buffer || !size)
		return NRT_INVALID;
	if (tensor->placement != NRT_TENSOR_PLACEMENT_VIRTUAL || tensor->is_slice) {
		klog_error("attach_buffer: tensor '%s' is not a virtual tensor", tensor->name);
		return NRT_INVALID;
	}
	tensor->data = buffer;
	tensor->size = size;
	return NRT_SUCCESS;
}

static bool emu_range_ok(uint64_t total, uint64_t offset, uint64_t size)
{
	return offset <= total && size <= total - offset;
}

NRT_STATUS kbl_tensor_allocate_slice(const nrt_tensor_t *src, size_t offset, size_t size,
                                     const char *name, nrt_tensor_t **slice)
{
	nrt_tensor_t *t;
	NRT_STATUS rc;

	if (!src || !slice || !size || !src->data || !emu_range_ok(src->size, offset, size))
		return NRT_INVALID;
	*slice = NULL;
	rc = emu_tensor_new(name, &t);
	if (rc)
		return rc;
	t->placement = src->placement;
	t->nc = src->nc;
	t->size = size;
	t->is_slice = true;
	t->data = src->data + offset;
	if (src->placement == NRT_TENSOR_PLACEMENT_DEVICE)
		t->dev = (emu_dev_ref_t){src->dev.arena, src->dev.off + offset, size, src->dev.gen};
	*slice = t;
	return NRT_SUCCESS;
}

void kbl_tensor_free(nrt_tensor_t **tensor)
{
	nrt_tensor_t *t;

	if (!tensor || !*tensor)
		return;
	t = *tensor;
	*tensor = NULL;
	if (t->owns_block)
		emu_arena_free(&t->blk);
	else if (t->placement == NRT_TENSOR_PLACEMENT_HOST && !t->is_slice)
		kfree(t->data);
	emu_tensor_delete(t);
}

bool emu_tensor_dev_ref(const nrt_tensor_t *t, emu_dev_ref_t *ref)
{
	if (t->placement != NRT_TENSOR_PLACEMENT_DEVICE)
		return false;
	*ref = t->dev;
	return true;
}

/* The bytes [offset, offset+size) of t, checked; NULL when out of range. */
static uint8_t *emu_tensor_bytes(const nrt_tensor_t *t, uint64_t offset, uint64_t size)
{
	if (!t->data || !emu_range_ok(t->size, offset, size))
		return NULL;
	if (t->placement == NRT_TENSOR_PLACEMENT_DEVICE)
		emu_dev_check(&t->dev, t->name[0] ? t->name : "a device tensor");
	return t->data + offset;
}

NRT_STATUS kbl_tensor_read(const nrt_tensor_t *tensor, void *buf, size_t offset, size_t size)
{
	uint8_t *p;

	if (!tensor || (!buf && size))
		return NRT_INVALID;
	p = emu_tensor_bytes(tensor, offset, size);
	if (!p)
		return NRT_INVALID;
	if (size)
		memcpy(buf, p, size);
	return NRT_SUCCESS;
}

NRT_STATUS kbl_tensor_write(nrt_tensor_t *tensor, const void *buf, size_t offset, size_t size)
{
	uint8_t *p;

	if (!tensor || (!buf && size))
		return NRT_INVALID;
	p = emu_tensor_bytes(tensor, offset, size);
	if (!p)
		return NRT_INVALID;
	if (size)
		memcpy(p, buf, size);
	return NRT_SUCCESS;
}

NRT_STATUS kbl_tensor_copy(const nrt_tensor_t *src, size_t src_offset, nrt_tensor_t *dst,
                           size_t dst_offset, size_t size)
{
	uint8_t *s, *d;

	if (!src || !dst)
		return NRT_INVALID;
	s = emu_tensor_bytes(src, src_offset, size);
	d = emu_tensor_bytes(dst, dst_offset, size);
	if (!s || !d)
		return NRT_INVALID;
	if (size)
		memmove(d, s, size);
	return NRT_SUCCESS;
}

NRT_STATUS kbl_tensor_memset(nrt_tensor_t *tensor, uint64_t offset, int value, size_t size)
{
	uint8_t *p;

	if (!tensor)
		return NRT_INVALID;
	p = emu_tensor_bytes(tensor, offset, size);
	if (!p)
		return NRT_INVALID;
	if (size)
		memset(p, value, size);
	return NRT_SUCCESS;
}

size_t kbl_tensor_get_size(const nrt_tensor_t *tensor)
{
	return tensor ? tensor->size : 0;
}

void *kbl_tensor_get_va(const nrt_tensor_t *tensor)
{
	return tensor ? tensor->data : NULL;
}

const char *kbl_tensor_get_name(const nrt_tensor_t *tensor)
{
	return tensor ? tensor->name : NULL;
}

nrt_tensor_placement_t kbl_tensor_get_placement(const nrt_tensor_t *tensor)
{
	return tensor ? tensor->placement : NRT_TENSOR_PLACEMENT_HOST;
}

int kbl_tensor_get_nc(const nrt_tensor_t *tensor)
{
	return tensor ? tensor->nc : -1;
}

bool kbl_tensor_is_malloc(const nrt_tensor_t *tensor)
{
	if (!tensor)
		return false;
	return tensor->placement == NRT_TENSOR_PLACEMENT_HOST ||
	       (tensor->placement == NRT_TENSOR_PLACEMENT_VIRTUAL && tensor->data);
}
