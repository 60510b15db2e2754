/*
 * registry.c - the model registry dlr_model_set (seed §1): H_NN.id ->
 * dlr_model* under a reader-writer lock, a monotone last_nn_id, and the
 * two-call refcount protocol db_get_nn_ref_count / nn_ref_decrement that
 * every accessor brackets its work in.
 *
 * The seed's unordered_map is an open-addressing table here (linear
 * probing, backward-shift erase): the same find/insert/erase contract.
 */
#include "dlr.h"

typedef struct dlr_slot {
	uint32_t id; /* 0: empty (ids start at 1) */
	dlr_model *mod;
} dlr_slot_t;

typedef struct dlr_model_set {
	dlr_slot_t *slots;
	uint32_t cap; /* a power of two, or 0 before the first insert */
	uint32_t count;
	ks_rwlock_t lock;
	/* Process-global and never reset (not even by kmgr_destroy): ids are
	 * never reused in a process.  Written under the write lock. */
	uint32_t last_nn_id;
	/* last_nn_id when the table was allocated (cap 0 -> 16): ids hash
	 * relative to it, so the table's layout, its probe sequences and the
	 * order kmgr_get_nns finds ids in depend only on the loads since
	 * kmgr_init, not on how many models the process loaded before.  With
	 * absolute ids the same program took other probe and sort paths on
	 * every run in one process (a persistent fuzzer's "unstable" edges). */
	uint32_t id_base;
} dlr_model_set_t;

static dlr_model_set_t dlr_model_set = {.lock = KS_RWLOCK_INITIALIZER};

static uint32_t slot_of(uint32_t id, uint32_t cap)
{
	return ((id - dlr_model_set.id_base) * 0x9e3779b1u) & (cap - 1);
}

/* Under the lock (either mode).  The slot index or cap when absent.  An id
 * this table never held (0, issued before it, or not yet issued: a stale
 * or made-up handle) is absent without a probe, whose length would depend
 * on id_base. */
static uint32_t set_find(uint32_t id)
{
	if (dlr_model_set.cap == 0 || id <= dlr_model_set.id_base || id > dlr_model_set.last_nn_id)
		return dlr_model_set.cap;
	for (uint32_t i = slot_of(id, dlr_model_set.cap);; i = (i + 1) & (dlr_model_set.cap - 1)) {
		if (dlr_model_set.slots[i].id == id)
			return i;
		if (dlr_model_set.slots[i].id == 0)
			return dlr_model_set.cap;
	}
}

static void set_place(dlr_slot_t *slots, uint32_t cap, uint32_t id, dlr_model *mod)
{
	uint32_t i = slot_of(id, cap);

	while (slots[i].id != 0)
		i = (i + 1) & (cap - 1);
	slots[i].id = id;
	slots[i].mod = mod;
}

/* Under the write lock: room for one more at load factor <= 1/2. */
static NRT_STATUS set_reserve(void)
{
	uint32_t cap = dlr_model_set.cap ? dlr_model_set.cap * 2 : 16;
	dlr_slot_t *slots;

	if ((dlr_model_set.count + 1) * 2 <= dlr_model_set.cap)
		return NRT_SUCCESS;
	slots = kalloc_array(KFAULT_KMGR_REGISTRY, cap, sizeof(*slots));
	if (!slots)
		return NRT_RESOURCE;
	if (dlr_model_set.cap == 0) /* empty: nothing hashed with the old base */
		dlr_model_set.id_base = dlr_model_set.last_nn_id;
	for (uint32_t i = 0; i < dlr_model_set.cap; i++)
		if (dlr_model_set.slots[i].id)
			set_place(slots, cap, dlr_model_set.slots[i].id,
			          dlr_model_set.slots[i].mod);
	kfree(dlr_model_set.slots);
	dlr_model_set.slots = slots;
	dlr_model_set.cap = cap;
	return NRT_SUCCESS;
}

/* Under the write lock: backward-shift deletion keeps probes unbroken. */
static void set_remove_at(uint32_t i)
{
	uint32_t mask = dlr_model_set.cap - 1;
	uint32_t j = i;

	dlr_model_set.slots[i].id = 0;
	dlr_model_set.slots[i].mod = NULL;
	for (;;) {
		j = (j + 1) & mask;
		if (dlr_model_set.slots[j].id == 0)
			break;
		uint32_t home = slot_of(dlr_model_set.slots[j].id, dlr_model_set.cap);
		/* move j back into the hole i unless its home lies in (i, j] */
		if (((j - home) & mask) < ((j - i) & mask))
			continue;
		dlr_model_set.slots[i] = dlr_model_set.slots[j];
		dlr_model_set.slots[j].id = 0;
		dlr_model_set.slots[j].mod = NULL;
		i = j;
	}
	dlr_model_set.count--;
}

NRT_STATUS dlr_model_set_insert(dlr_model *mod)
{
	NRT_STATUS rc;

	ks_rwlock_wrlock(&dlr_model_set.lock);
	rc = set_reserve();
	if (rc == NRT_SUCCESS) {
		mod->h_nn.id = ++dlr_model_set.last_nn_id;
		set_place(dlr_model_set.slots, dlr_model_set.cap, mod->h_nn.id, mod);
		dlr_model_set.count++;
	}
	ks_rwlock_unlock(&dlr_model_set.lock);
	return rc;
}

dlr_model *dlr_model_set_erase(H_NN h_nn)
{
	dlr_model *mod = NULL;
	uint32_t i;

	ks_rwlock_wrlock(&dlr_model_set.lock);
	i = set_find(h_nn.id);
	if (i != dlr_model_set.cap) {
		mod = dlr_model_set.slots[i].mod;
		set_remove_at(i);
	}
	ks_rwlock_unlock(&dlr_model_set.lock);
	return mod;
}

void dlr_model_set_release(void)
{
	ks_rwlock_wrlock(&dlr_model_set.lock);
	KMGR_ASSERT(dlr_model_set.count == 0, "kmgr_destroy with models loaded");
	kfree(dlr_model_set.slots);
	dlr_model_set.slots = NULL;
	dlr_model_set.cap = 0;
	ks_rwlock_unlock(&dlr_model_set.lock);
}

/* The seed's 0xdc0c0: NULL on a miss, else the record with one more ref. */
dlr_model *db_get_nn_ref_count(H_NN h_nn)
{
	dlr_model *mod = NULL;
	uint32_t i;

	ks_rwlock_rdlock(&dlr_model_set.lock);
	i = set_find(h_nn.id);
	if (i != dlr_model_set.cap) {
		mod = dlr_model_set.slots[i].mod;
		ks_atomic_add(&mod->ref_count, 1);
	}
	ks_rwlock_unlock(&dlr_model_set.lock);
	return mod;
}

/* The seed's 0xdc110: no lock, the ref being dropped keeps mod alive.
 * From the subtraction on the caller may no longer touch mod: the access
 * point after it (opt-in, docs/scheduler.md) lets a draining unload run
 * and free the model right there, so a read after the release (mutant
 * fuzz-7) becomes a use after free; the atomic's own point comes before
 * the subtraction and cannot. */
void nn_ref_decrement(dlr_model *mod)
{
	KMGR_ASSERT(mod != NULL && ks_atomic_peek(&mod->ref_count) > 0, "kmgr/dlr.cpp:0xED");
	ks_atomic_sub(&mod->ref_count, 1);
	ks_access_point();
}

/* The get-and-release shape every metadata accessor follows; 0 on a miss. */
uint32_t dlr_db_get_nn_cached_interned_model_id(H_NN h_nn)
{
	dlr_model *mod = db_get_nn_ref_count(h_nn);
	uint32_t id;

	if (!mod)
		return 0;
	id = mod->interned_model_id;
	nn_ref_decrement(mod);
	return id;
}

int64_t dlr_model_peek_ref_count(const dlr_model *mod)
{
	return ks_atomic_peek(&mod->ref_count);
}

/* Whether h_nn is in the registry, for a caller's own bookkeeping (the
 * fuzz harness's look at which ids an unload_all erased): the probe every
 * accessor opens with, the same scheduling points, without the seed's
 * "Failed to find model" line, which is the accessors' answer to a
 * caller's miss and not news about a look. */
bool kmgr_nn_loaded(H_NN h_nn)
{
	dlr_model *mod = db_get_nn_ref_count(h_nn);

	if (!mod)
		return false;
	nn_ref_decrement(mod);
	return true;
}

uint32_t kmgr_last_nn_id(void)
{
	uint32_t id;

	ks_rwlock_rdlock(&dlr_model_set.lock);
	id = dlr_model_set.last_nn_id;
	ks_rwlock_unlock(&dlr_model_set.lock);
	return id;
}

/* A snapshot in id order, so that kmgr_unload_all_nns is deterministic. */
static int cmp_id(const void *a, const void *b)
{
	uint32_t x = ((const H_NN *)a)->id, y = ((const H_NN *)b)->id;

	return (x > y) - (x < y);
}

/* The smallest loaded id, 0 when none: lets kmgr_unload_all_nns finish
 * without allocating when the snapshot cannot be allocated. */
uint32_t dlr_model_set_min_id(void)
{
	uint32_t min = 0;

	ks_rwlock_rdlock(&dlr_model_set.lock);
	for (uint32_t i = 0; i < dlr_model_set.cap; i++) {
		uint32_t id = dlr_model_set.slots[i].id;

		if (id && (!min || id < min))
			min = id;
	}
	ks_rwlock_unlock(&dlr_model_set.lock);
	return min;
}

NRT_STATUS kmgr_get_nns(H_NN **ids, uint32_t *count)
{
	NRT_STATUS rc = NRT_SUCCESS;
	H_NN *snap = NULL;
	uint32_t n = 0;

	if (!ids || !count)
		return NRT_INVALID;
	ks_rwlock_rdlock(&dlr_model_set.lock);
	if (dlr_model_set.count) {
		snap = kalloc_array(KFAULT_KMGR_NNS, dlr_model_set.count, sizeof(*snap));
		if (!snap)
			rc = NRT_RESOURCE;
	}
	for (uint32_t i = 0; snap && i < dlr_model_set.cap; i++)
		if (dlr_model_set.slots[i].id)
			snap[n++].id = dlr_model_set.slots[i].id;
	ks_rwlock_unlock(&dlr_model_set.lock);
	if (snap)
		qsort(snap, n, sizeof(*snap), cmp_id);
	*ids = snap;
	*count = n;
	return rc;
}
