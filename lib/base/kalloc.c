/*
 * kalloc.c - accounted allocations.  Each block carries a 16-byte header
 * with its size, so kfree can keep the live-byte count exact.
 */
#include "kalloc.h"

#include <stdlib.h>
#include <string.h>

#include "sched/ksched.h"

typedef struct kalloc_hdr {
	size_t size;
	size_t magic;
} kalloc_hdr_t;

#define KALLOC_MAGIC ((size_t)0x6b6d67726b616c6cull)

static ks_atomic_t kalloc_bytes;
static ks_atomic_t kalloc_count;

void *kalloc(kfault_site_t site, size_t size)
{
	kalloc_hdr_t *h;

	if (size > SIZE_MAX - sizeof(*h) || kfault_alloc_fails(site))
		return NULL;
	/* Counted before the calloc, taken back if it fails: a locked add
	 * right after it waited for every store of calloc's zeroing to reach
	 * the cache (under ASan a recycled block is cold), a stall that was
	 * 3% of a fuzz run.  The counts are read only where nothing allocates
	 * (after nrt_close, around a parse). */
	ks_atomic_add_quiet(&kalloc_bytes, (int64_t)size);
	ks_atomic_add_quiet(&kalloc_count, 1);
	h = calloc(1, sizeof(*h) + size);
	if (!h) {
		ks_atomic_add_quiet(&kalloc_bytes, -(int64_t)size);
		ks_atomic_add_quiet(&kalloc_count, -1);
		return NULL;
	}
	h->size = size;
	h->magic = KALLOC_MAGIC;
	return h + 1;
}

void *kalloc_array(kfault_site_t site, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return kalloc(site, n * size);
}

void *krealloc(kfault_site_t site, void *p, size_t size)
{
	kalloc_hdr_t *h;
	void *q;

	if (!p)
		return kalloc(site, size);
	h = (kalloc_hdr_t *)p - 1;
	q = kalloc(site, size);
	if (!q)
		return NULL;
	memcpy(q, p, h->size < size ? h->size : size);
	kfree(p);
	return q;
}

void kfree(void *p)
{
	kalloc_hdr_t *h;

	if (!p)
		return;
	h = (kalloc_hdr_t *)p - 1;
	if (h->magic != KALLOC_MAGIC)
		abort(); /* not ours, or freed twice: never silently corrupt the counts */
	h->magic = 0;
	ks_atomic_add_quiet(&kalloc_bytes, -(int64_t)h->size);
	ks_atomic_add_quiet(&kalloc_count, -1);
	free(h);
}

char *kstrdup(kfault_site_t site, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = kalloc(site, n);

	if (d)
		memcpy(d, s, n);
	return d;
}

int64_t kalloc_live_bytes(void)
{
	return ks_atomic_peek(&kalloc_bytes);
}

int64_t kalloc_live_count(void)
{
	return ks_atomic_peek(&kalloc_count);
}
