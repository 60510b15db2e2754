/*
 * test_refcount.c - checklist item 2, the refcount protocol:
 * db_get_nn_ref_count (NULL on a miss, else +1), nn_ref_decrement (-1, no
 * lock), dlr_db_get_nn_cached_interned_model_id (get and release), and every
 * accessor brackets its work in the pair.
 */
#include "kt_kmgr.h"

static H_NN h;

/* kmgr_refcount-2.1: each resolution adds exactly one reference and each
 * decrement drops exactly one. */
static void case_pair(void)
{
	dlr_model *m1 = db_get_nn_ref_count(h);
	dlr_model *m2;

	KT_ASSERT(m1 != NULL);
	KT_EQ(dlr_model_peek_ref_count(m1), 1);
	m2 = db_get_nn_ref_count(h);
	KT_ASSERT(m2 == m1);
	KT_EQ(dlr_model_peek_ref_count(m1), 2);
	nn_ref_decrement(m2);
	KT_EQ(dlr_model_peek_ref_count(m1), 1);
	nn_ref_decrement(m1);
	KT_EQ(dlr_model_peek_ref_count(m1), 0);
}

/* kmgr_refcount-2.2: the interned id is read in get-and-release shape: the
 * model's id, non-zero, stable across calls, ref count back to 0; a miss
 * gives 0. */
static void case_interned(void)
{
	dlr_model *m = db_get_nn_ref_count(h);
	uint32_t id;

	KT_ASSERT(m != NULL);
	nn_ref_decrement(m);
	id = dlr_db_get_nn_cached_interned_model_id(h);
	KT_NE(id, 0);
	KT_EQ(id, m->interned_model_id);
	KT_EQ(dlr_db_get_nn_cached_interned_model_id(h), id);
	KT_EQ(dlr_model_peek_ref_count(m), 0);
	KT_EQ(dlr_db_get_nn_cached_interned_model_id((H_NN){kmgr_last_nn_id() + 7}), 0);
}

/* kmgr_refcount-2.3: every accessor (metadata, setters, exec, on success
 * and on error) leaves the reference count where it found it. */
static void case_accessors_balanced(void)
{
	dlr_model *m = db_get_nn_ref_count(h);
	uint32_t a, b, nd, *shape = NULL;
	char name[NRT_TENSOR_NAME_MAX];
	nrt_dtype_t dt;
	size_t sz;
	bool v;
	kt_io_t io;

	KT_ASSERT(m != NULL);
	KT_EQ(kmgr_get_io_tensor_count(h, &a, &b), NRT_SUCCESS);
	KT_EQ(kmgr_get_io_tensor_info(h, true, 0, name, &sz, &dt, &nd, &shape), NRT_SUCCESS);
	kfree(shape);
	KT_EQ(kmgr_get_io_tensor_info(h, true, 99, name, &sz, &dt, &nd, &shape), NRT_INVALID);
	KT_EQ(kmgr_is_valid_ifmap(h, "in0", &v), NRT_SUCCESS);
	KT_EQ(kmgr_is_valid_ifmap(h, NULL, &v), NRT_INVALID);
	KT_EQ(kmgr_get_ifmap_count(h, &a), NRT_SUCCESS);
	KT_EQ(kmgr_get_nc_info(h, &a, &b), NRT_SUCCESS);
	KT_EQ(kmgr_set_profiling(h, false), NRT_SUCCESS);
	KT_EQ(kmgr_set_mac_count(h, 12345), NRT_SUCCESS);
	KT_EQ(dlr_model_peek_ref_count(m), 1);
	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0, 2, 1, 16);
	KT_EQ(kmgr_exec(h, io.in, io.out, 1), NRT_SUCCESS);
	KT_EQ(kmgr_exec(h, NULL, io.out, 2), NRT_INVALID);
	KT_EQ(dlr_model_peek_ref_count(m), 1);
	kt_io_free(&io);
	nn_ref_decrement(m);
}

int main(void)
{
	kt_up(2, false, 0);
	h = kt_load("r", 1, 0, 1);
	KT_CASE("kmgr_refcount-2.1", case_pair);
	KT_CASE("kmgr_refcount-2.2", case_interned);
	KT_CASE("kmgr_refcount-2.3", case_accessors_balanced);
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
	kt_down();
	KT_DONE();
}
