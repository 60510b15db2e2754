/*
 * test_registry.c - checklist item 1, the registry (dlr_model_set): H_NN.id
 * -> dlr_model* under the rwlock, a monotone last_nn_id, resolution only
 * of what is registered.
 */
#include "kt_kmgr.h"

/* kmgr_registry-1.1: ids are handed out 1, 2, 3 ... in load order, every
 * loaded id resolves to its own record and the snapshot lists them all. */
static void case_ids_resolve(void)
{
	uint32_t base = kmgr_last_nn_id();
	H_NN a = kt_load("a", 1, -1, -1), b = kt_load("b", 1, -1, -1);
	H_NN *ids;
	uint32_t n;
	dlr_model *ma, *mb;

	KT_EQ(a.id, base + 1);
	KT_EQ(b.id, base + 2);
	KT_EQ(kmgr_last_nn_id(), base + 2);
	ma = db_get_nn_ref_count(a);
	mb = db_get_nn_ref_count(b);
	KT_ASSERT(ma && mb && ma != mb);
	KT_EQ(ma->h_nn.id, a.id);
	KT_STREQ(mb->name, "b");
	nn_ref_decrement(ma);
	nn_ref_decrement(mb);
	KT_EQ(kmgr_get_nns(&ids, &n), NRT_SUCCESS);
	KT_EQ(n, 2);
	KT_EQ(ids[0].id, a.id);
	KT_EQ(ids[1].id, b.id);
	kfree(ids);
	KT_EQ(kmgr_unload_nn(a), NRT_SUCCESS);
	KT_EQ(kmgr_unload_nn(b), NRT_SUCCESS);
}

/* kmgr_registry-1.2: an unloaded id no longer resolves, and a new load gets
 * a fresh id, never the freed one (last_nn_id is monotone). */
static void case_never_reused(void)
{
	H_NN a = kt_load("a", 1, -1, -1);
	H_NN b;

	KT_EQ(kmgr_unload_nn(a), NRT_SUCCESS);
	KT_ASSERT(db_get_nn_ref_count(a) == NULL);
	b = kt_load("b", 1, -1, -1);
	KT_GT(b.id, a.id);
	KT_ASSERT(db_get_nn_ref_count(a) == NULL);
	KT_EQ(kmgr_unload_nn(b), NRT_SUCCESS);
}

/* kmgr_registry-1.3: ids 0 and never-issued ids miss. */
static void case_misses(void)
{
	KT_ASSERT(db_get_nn_ref_count((H_NN){0}) == NULL);
	KT_ASSERT(db_get_nn_ref_count((H_NN){kmgr_last_nn_id() + 1}) == NULL);
	KT_ASSERT(db_get_nn_ref_count((H_NN){UINT32_MAX}) == NULL);
}

/* kmgr_registry-1.4: many live models (table growth, erase in the middle
 * of probe chains) all stay resolvable until their own unload. */
static void case_growth(void)
{
	enum { N = 70 };
	H_NN h[N];
	dlr_model *m;

	for (int i = 0; i < N; i++)
		h[i] = kt_load("g", 1, -1, -1);
	for (int i = 0; i < N; i += 3)
		KT_EQ(kmgr_unload_nn(h[i]), NRT_SUCCESS);
	for (int i = 0; i < N; i++) {
		m = db_get_nn_ref_count(h[i]);
		KT_EQ(m != NULL, i % 3 != 0);
		if (m) {
			KT_EQ(m->h_nn.id, h[i].id);
			nn_ref_decrement(m);
		}
	}
	KT_EQ(kmgr_unload_all_nns(), NRT_SUCCESS);
	for (int i = 0; i < N; i++)
		KT_ASSERT(db_get_nn_ref_count(h[i]) == NULL);
}

/* kmgr_registry-1.5: kmgr_destroy does not reset the id allocator: ids are
 * never reused in a process, across init/destroy too. */
static void case_across_destroy(void)
{
	uint32_t last = kmgr_last_nn_id();
	H_NN h;

	kt_down();
	kt_up(4, false, 0); /* its warm-up loads take the next 4 ids */
	KT_EQ(kmgr_last_nn_id(), last + 4);
	h = kt_load("c", 1, -1, -1);
	KT_EQ(h.id, last + 5);
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
}

int main(void)
{
	kt_up(4, false, 0);
	KT_CASE("kmgr_registry-1.1", case_ids_resolve);
	KT_CASE("kmgr_registry-1.2", case_never_reused);
	KT_CASE("kmgr_registry-1.3", case_misses);
	KT_CASE("kmgr_registry-1.4", case_growth);
	KT_CASE("kmgr_registry-1.5", case_across_destroy);
	kt_down();
	KT_DONE();
}
