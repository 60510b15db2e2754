/*
 * tensor_set.c - tensor sets ("feature map sets"): named entries in
 * insertion order, reference counted, with the clone-to-device and copy
 * the sync execute path uses and the async mark/unmark pair.
 */
#include "emu/emu_int.h"

#include <stdlib.h>
#include <string.h>

static nrt_tensor_set_t *emu_set_new(kfault_site_t site)
{
	nrt_tensor_set_t *s = kalloc(site, sizeof(*s));

	if (!s)
		return NULL;
	ks_atomic_store(&s->refs, 1);
	emu_count(&emu_cnt.objects, 1);
	return s;
}

NRT_STATUS kbl_tensor_set_allocate(nrt_tensor_set_t **set)
{
	if (!set)
		return NRT_INVALID;
	*set = emu_set_new(KFAULT_EMU_HOST_SET);
	return *set ? NRT_SUCCESS : NRT_RESOURCE;
}

static void emu_set_destroy(nrt_tensor_set_t *s)
{
	if (ks_atomic_peek(&s->marks) != 0) {
		klog_error("tensor set freed with %lld async marks outstanding",
		           (long long)ks_atomic_peek(&s->marks));
		abort();
	}
	for (uint32_t i = 0; i < s->n; i++)
		if (s->e[i].owned)
			kbl_tensor_free(&s->e[i].t);
	kfree(s->e);
	kfree(s);
	emu_count(&emu_cnt.objects, -1);
}

void kbl_free_feature_map_set(nrt_tensor_set_t *set)
{
	int64_t before;

	if (!set)
		return;
	before = ks_atomic_sub(&set->refs, 1);
	if (before <= 0) {
		klog_error("tensor set reference dropped below zero (freed twice?)");
		abort();
	}
	if (before == 1)
		emu_set_destroy(set);
}

NRT_STATUS kbl_create_reference_feature_map_set(const nrt_tensor_set_t *set, nrt_tensor_set_t **ref)
{
	nrt_tensor_set_t *s = (nrt_tensor_set_t *)set;

	if (!ref)
		return NRT_INVALID;
	*ref = NULL;
	if (!s)
		return NRT_INVALID;
	ks_atomic_add(&s->refs, 1);
	*ref = s;
	return NRT_SUCCESS;
}

static int emu_set_find(const nrt_tensor_set_t *s, const char *name)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (strcmp(s->e[i].name, name) == 0)
			return (int)i;
	return -1;
}

static NRT_STATUS emu_set_grow(nrt_tensor_set_t *s)
{
	uint32_t cap = s->cap ? s->cap * 2 : 4;
	emu_set_entry_t *e;

	e = krealloc(KFAULT_EMU_HOST_SET_ENTRY, s->e, (size_t)cap * sizeof(*e));
	if (!e)
		return NRT_RESOURCE;
	s->e = e;
	s->cap = cap;
	return NRT_SUCCESS;
}

static NRT_STATUS emu_set_put(nrt_tensor_set_t *s, const char *name, nrt_tensor_t *t, bool owned)
{
	int i;

	if (!s || !name || !t || strlen(name) >= NRT_TENSOR_NAME_MAX)
		return NRT_INVALID;
	i = emu_set_find(s, name);
	if (i >= 0) {
		if (s->e[i].owned && s->e[i].t != t)
			kbl_tensor_free(&s->e[i].t);
		s->e[i].t = t;
		s->e[i].owned = owned;
		return NRT_SUCCESS;
	}
	if (s->n == s->cap && emu_set_grow(s))
		return NRT_RESOURCE;
	strcpy(s->e[s->n].name, name);
	s->e[s->n].t = t;
	s->e[s->n].owned = owned;
	s->n++;
	return NRT_SUCCESS;
}

NRT_STATUS kbl_tensor_set_add(nrt_tensor_set_t *set, const char *name, nrt_tensor_t *tensor)
{
	return emu_set_put(set, name, tensor, false);
}

NRT_STATUS kbl_tensor_set_get(const nrt_tensor_set_t *set, const char *name, nrt_tensor_t **tensor)
{
	int i;

	if (!set || !name || !tensor)
		return NRT_INVALID;
	i = emu_set_find(set, name);
	*tensor = i < 0 ? NULL : set->e[i].t;
	return i < 0 ? NRT_INVALID : NRT_SUCCESS;
}

uint32_t kbl_tensor_set_count(const nrt_tensor_set_t *set)
{
	return set ? set->n : 0;
}

nrt_tensor_t *kbl_tensor_set_at(const nrt_tensor_set_t *set, uint32_t i, const char **name)
{
	if (!set || i >= set->n)
		return NULL;
	if (name)
		*name = set->e[i].name;
	return set->e[i].t;
}

uint32_t kbl_tensor_set_get_malloc_tensor_count(const nrt_tensor_set_t *set)
{
	uint32_t n = 0;

	if (!set)
		return 0;
	for (uint32_t i = 0; i < set->n; i++)
		n += kbl_tensor_is_malloc(set->e[i].t);
	return n;
}

nrt_tensor_set_t *kbl_tensor_set_clone_to_physical_mem(const nrt_tensor_set_t *set, int nc)
{
	nrt_tensor_set_t *c;

	if (!set)
		return NULL;
	c = emu_set_new(KFAULT_EMU_HOST_CLONE);
	if (!c)
		return NULL;
	for (uint32_t i = 0; i < set->n; i++) {
		const emu_set_entry_t *e = &set->e[i];
		nrt_tensor_t *t = e->t;
		bool owned = kbl_tensor_is_malloc(t);

		if (owned && kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, nc, e->t->size,
		                                 e->t->name, &t))
			goto fail;
		if (emu_set_put(c, e->name, t, owned)) {
			if (owned)
				kbl_tensor_free(&t);
			goto fail;
		}
	}
	return c;
fail:
	kbl_free_feature_map_set(c);
	return NULL;
}

/* Every tensor of src has a same-size one of its name in dst: checked for
 * all entries before any byte moves, so a refused copy leaves dst as it
 * was. */
static NRT_STATUS emu_set_copy_check(const nrt_tensor_set_t *src, const nrt_tensor_set_t *dst)
{
	for (uint32_t i = 0; i < src->n; i++) {
		const nrt_tensor_t *s = src->e[i].t;
		nrt_tensor_t *d;

		if (kbl_tensor_set_get(dst, src->e[i].name, &d)) {
			klog_error("tensor set copy: '%s' is missing in the destination",
			           src->e[i].name);
			return NRT_INVALID;
		}
		if (s != d && s->size != d->size) {
			klog_error("tensor set copy: '%s' is %llu bytes, destination %llu",
			           src->e[i].name, (unsigned long long)s->size,
			           (unsigned long long)d->size);
			return NRT_INVALID;
		}
	}
	return NRT_SUCCESS;
}

NRT_STATUS kbl_tensor_set_copy(const nrt_tensor_set_t *src, nrt_tensor_set_t *dst)
{
	NRT_STATUS rc;

	if (!src || !dst)
		return NRT_INVALID;
	rc = emu_set_copy_check(src, dst);
	if (rc)
		return rc;
	/* An injected DMA abort strikes before the first byte moves: a real one
	 * may leave dst partly written, but no caller may read dst after a
	 * failed copy, and an untouched dst keeps the failure deterministic. */
	if (kfault_site_fails(KFAULT_EMU_SET_COPY))
		return NRT_EXEC_HW_ERR_DMA_ABORT;
	for (uint32_t i = 0; i < src->n; i++) {
		nrt_tensor_t *s = src->e[i].t, *d;

		kbl_tensor_set_get(dst, src->e[i].name, &d);
		if (s == d)
			continue;
		rc = kbl_tensor_copy(s, 0, d, 0, s->size);
		if (rc)
			return rc;
	}
	return NRT_SUCCESS;
}

void kbl_tensor_set_mark_async_exec(nrt_tensor_set_t *set)
{
	if (!set)
		return;
	ks_atomic_add(&set->refs, 1);
	ks_atomic_add(&set->marks, 1);
	emu_count(&emu_cnt.async_marks, 1);
}

void kbl_tensor_set_unmark_async_exec(nrt_tensor_set_t *set)
{
	if (!set)
		return;
	if (ks_atomic_sub(&set->marks, 1) <= 0) {
		klog_error("tensor set unmarked for async execution without a mark "
		           "(the wrong arm of an execution tracker was freed)");
		abort();
	}
	emu_count(&emu_cnt.async_marks, -1);
	kbl_free_feature_map_set(set);
}
