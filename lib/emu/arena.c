/*
 * arena.c - device memory: one arena per core, created on first use,
 * first-fit over a list of blocks sorted by offset, exact accounting.
 *
 * Freed memory is poisoned so that device memory used after free is
 * reported: with ASan the region is poisoned in ASan's shadow (any raw
 * access through a stale pointer is a report); without it the region is
 * filled with EMU_POISON_BYTE and every access through a slice or a
 * binding checks the generation of the block it was made from.
 */
#include "emu/emu_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifdef KMGR_ASAN
#include <sanitizer/asan_interface.h>
#endif

struct emu_arena {
	ks_mutex_t lock;
	uint8_t *base;
	uint64_t bytes;
	emu_dev_block_t *head; /* sorted by offset */
	ks_atomic_t live_bytes;
	bool orphaned; /* the device closed; the last free releases the arena */
	uint64_t hwm;  /* high-water mark: nothing above it was ever handed out */
};

/* Block generations are never reused across arenas or opens. */
static ks_atomic_t emu_block_gen;

static void emu_poison(uint8_t *p, uint64_t n)
{
#ifdef KMGR_ASAN
	ASAN_POISON_MEMORY_REGION(p, n);
#else
	memset(p, EMU_POISON_BYTE, n);
#endif
}

static void emu_unpoison_zero(uint8_t *p, uint64_t n)
{
#ifdef KMGR_ASAN
	ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
	memset(p, 0, n);
}

/*
 * Mappings of closed arenas, kept for the next open: a fuzz target opens
 * and closes the device once per input, and a fresh 64 MiB mapping costs an
 * mmap, a munmap and a page fault per page touched (a fifth of an input's
 * time).  A kept mapping is wholly free, i.e. poisoned up to its high-water
 * mark, so a stale pointer into it is still caught; blocks are zeroed when
 * handed out, so nothing of the old run is visible.  The memory is not
 * device memory in use: emu_get_accounting does not count it.
 */
#define EMU_SPARE_MAX 8

static ks_mutex_t emu_spare_lock = KS_MUTEX_INITIALIZER;
static struct emu_spare {
	uint8_t *base;
	uint64_t bytes, hwm;
} emu_spare[EMU_SPARE_MAX];

static bool emu_spare_take(emu_arena_t *a, uint64_t bytes)
{
	bool found = false;

	ks_mutex_lock(&emu_spare_lock);
	for (int i = 0; i < EMU_SPARE_MAX && !found; i++) {
		if (emu_spare[i].base && emu_spare[i].bytes == bytes) {
			a->base = emu_spare[i].base;
			a->hwm = emu_spare[i].hwm;
			emu_spare[i].base = NULL;
			found = true;
		}
	}
	ks_mutex_unlock(&emu_spare_lock);
	return found;
}

static bool emu_spare_put(const emu_arena_t *a)
{
	bool kept = false;

	ks_mutex_lock(&emu_spare_lock);
	for (int i = 0; i < EMU_SPARE_MAX && !kept; i++) {
		if (!emu_spare[i].base) {
			emu_spare[i] = (struct emu_spare){a->base, a->bytes, a->hwm};
			kept = true;
		}
	}
	ks_mutex_unlock(&emu_spare_lock);
	return kept;
}

static emu_arena_t *emu_arena_create(uint64_t bytes)
{
	emu_arena_t *a = kalloc(KFAULT_EMU_HOST_ARENA, sizeof(*a));
	void *p;

	if (!a)
		return NULL;
	a->bytes = bytes;
	if (!emu_spare_take(a, bytes)) {
		/* Untouched pages cost nothing, so a 64 MiB arena is cheap. */
		p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			kfree(a);
			return NULL;
		}
		a->base = p;
	}
	ks_mutex_init(&a->lock);
	return a;
}

static void emu_arena_destroy(emu_arena_t *a)
{
	if (!emu_spare_put(a)) {
#ifdef KMGR_ASAN
		/* Only what was ever handed out can be poisoned: unpoisoning the
		 * whole 64 MiB would write 8 MiB of shadow on every close. */
		ASAN_UNPOISON_MEMORY_REGION(a->base, a->hwm);
#endif
		munmap(a->base, a->bytes);
	}
	ks_mutex_destroy(&a->lock);
	kfree(a);
}

static emu_arena_t *emu_arena_of(uint32_t nc)
{
	tpb_t *t = emu_tpb(nc);
	emu_arena_t *a;

	if (!t)
		return NULL;
	ks_mutex_lock(&t->lock);
	if (!t->arena)
		t->arena = emu_arena_create(emu_dev.cfg.arena_bytes);
	a = t->arena;
	ks_mutex_unlock(&t->lock);
	return a;
}

/* First fit: the lowest gap that holds size; the block goes before *at. */
static bool emu_arena_fit(emu_arena_t *a, uint64_t size, uint64_t *off, emu_dev_block_t **after)
{
	uint64_t start = 0;
	emu_dev_block_t *prev = NULL;

	for (emu_dev_block_t *b = a->head; b; prev = b, b = b->next) {
		if (b->off - start >= size)
			break;
		start = b->off + b->size;
	}
	if (a->bytes - start < size)
		return false;
	*off = start;
	*after = prev;
	return true;
}

static void emu_arena_link(emu_arena_t *a, emu_dev_block_t *blk, emu_dev_block_t *after)
{
	blk->prev = after;
	blk->next = after ? after->next : a->head;
	if (blk->next)
		blk->next->prev = blk;
	if (after)
		after->next = blk;
	else
		a->head = blk;
}

NRT_STATUS emu_arena_alloc(uint32_t nc, kfault_site_t site, uint64_t size, emu_dev_block_t *blk)
{
	emu_arena_t *a;
	emu_dev_block_t *after;
	uint64_t off, rounded;

	memset(blk, 0, sizeof(*blk));
	if (size > UINT64_MAX - EMU_GRANULE)
		return NRT_RESOURCE;
	rounded = size ? (size + EMU_GRANULE - 1) / EMU_GRANULE * EMU_GRANULE : EMU_GRANULE;
	if (kfault_alloc_fails(site))
		return NRT_RESOURCE;
	a = emu_arena_of(nc);
	if (!a)
		return NRT_RESOURCE;
	ks_mutex_lock(&a->lock);
	if (!emu_arena_fit(a, rounded, &off, &after)) {
		ks_mutex_unlock(&a->lock);
		return NRT_RESOURCE;
	}
	blk->arena = a;
	blk->off = off;
	blk->size = rounded;
	blk->gen = (uint64_t)ks_atomic_add_quiet(&emu_block_gen, 1) + 1;
	emu_arena_link(a, blk, after);
	if (off + rounded > a->hwm)
		a->hwm = off + rounded;
	emu_unpoison_zero(a->base + off, rounded);
	ks_atomic_add_quiet(&a->live_bytes, (int64_t)rounded);
	ks_mutex_unlock(&a->lock);
	emu_count(&emu_cnt.device_bytes, (int64_t)rounded);
	emu_count(&emu_cnt.device_allocs, 1);
	emu_count(&emu_cnt.device_alloc_calls, 1);
	return NRT_SUCCESS;
}

void emu_arena_free(emu_dev_block_t *blk)
{
	emu_arena_t *a = blk->arena;
	bool last;

	if (!a)
		return;
	ks_mutex_lock(&a->lock);
	if (blk->prev)
		blk->prev->next = blk->next;
	else
		a->head = blk->next;
	if (blk->next)
		blk->next->prev = blk->prev;
	emu_poison(a->base + blk->off, blk->size);
	ks_atomic_add_quiet(&a->live_bytes, -(int64_t)blk->size);
	last = a->orphaned && !a->head;
	ks_mutex_unlock(&a->lock);
	emu_count(&emu_cnt.device_bytes, -(int64_t)blk->size);
	emu_count(&emu_cnt.device_allocs, -1);
	blk->arena = NULL;
	if (last)
		emu_arena_destroy(a);
}

void *emu_arena_ptr(const emu_arena_t *arena, uint64_t off)
{
	return arena->base + off;
}

void emu_dev_check(const emu_dev_ref_t *ref, const char *what)
{
	emu_arena_t *a = ref->arena;
	bool live = false;

	ks_mutex_lock(&a->lock);
	for (emu_dev_block_t *b = a->head; b && !live; b = b->next)
		live = b->gen == ref->gen && b->off <= ref->off &&
		       ref->off + ref->size <= b->off + b->size;
	ks_mutex_unlock(&a->lock);
	if (live)
		return;
	klog_error("DEVICE MEMORY USE-AFTER-FREE: %s uses device bytes [%llu, +%llu) of "
	           "allocation generation %llu, which was freed",
	           what, (unsigned long long)ref->off, (unsigned long long)ref->size,
	           (unsigned long long)ref->gen);
	abort();
}

void emu_arena_release(uint32_t nc)
{
	tpb_t *t = &emu_dev.tpbs[nc];
	emu_arena_t *a = t->arena;
	bool empty;

	t->arena = NULL;
	if (!a)
		return;
	ks_mutex_lock(&a->lock);
	empty = !a->head;
	a->orphaned = !empty;
	ks_mutex_unlock(&a->lock);
	if (empty)
		emu_arena_destroy(a);
}

int64_t emu_core_device_bytes(uint32_t nc)
{
	tpb_t *t = emu_tpb(nc);
	int64_t n = 0;

	if (!t)
		return 0;
	ks_mutex_lock(&t->lock);
	if (t->arena)
		n = ks_atomic_peek(&t->arena->live_bytes);
	ks_mutex_unlock(&t->lock);
	return n;
}
