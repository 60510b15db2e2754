/*
 * test_metadata.c - checklist item 6, the metadata accessors: counts, the
 * index walk in NAME order (the seed's std::map), size, dtype and a
 * malloc'd shape, ifmap validity (NULL name refused), ifmap count.
 */
#include "kt_kmgr.h"

static H_NN h;

/* Inputs added out of name order: zeta u8[4], alpha f32[2,3], mid u16[5];
 * outputs out_b u8[7], out_a i32[2]. */
static void load_model(void)
{
	kmodel_t *m = kmodel_new("meta", 1, false);
	uint32_t s4[] = {4}, s23[] = {2, 3}, s5[] = {5}, s7[] = {7}, s2[] = {2};
	uint8_t *b;
	size_t len;

	KT_EQ(kmodel_add_tensor(m, "zeta", NRT_TENSOR_USAGE_INPUT, NRT_DTYPE_UINT8, 1, s4), 0);
	KT_EQ(kmodel_add_tensor(m, "alpha", NRT_TENSOR_USAGE_INPUT, NRT_DTYPE_FLOAT32, 2, s23), 0);
	KT_EQ(kmodel_add_tensor(m, "mid", NRT_TENSOR_USAGE_INPUT, NRT_DTYPE_UINT16, 1, s5), 0);
	KT_EQ(kmodel_add_tensor(m, "out_b", NRT_TENSOR_USAGE_OUTPUT, NRT_DTYPE_UINT8, 1, s7), 0);
	KT_EQ(kmodel_add_tensor(m, "out_a", NRT_TENSOR_USAGE_OUTPUT, NRT_DTYPE_INT32, 1, s2), 0);
	KT_EQ(kmodel_serialize(m, &b, &len), NRT_SUCCESS);
	kmodel_free(m);
	KT_EQ(kmgr_load_nn(b, len, -1, -1, &h), NRT_SUCCESS);
	kfree(b);
}

/* kmgr_metadata-6.1: counts of inputs and outputs, and the ifmap count. */
static void case_counts(void)
{
	uint32_t in, out, n;

	KT_EQ(kmgr_get_io_tensor_count(h, &in, &out), NRT_SUCCESS);
	KT_EQ(in, 3);
	KT_EQ(out, 2);
	KT_EQ(kmgr_get_ifmap_count(h, &n), NRT_SUCCESS);
	KT_EQ(n, 3);
}

static void expect(bool is_input, uint32_t index, const char *name, size_t size, nrt_dtype_t dtype,
                   uint32_t ndim, const uint32_t *shape)
{
	char got[NRT_TENSOR_NAME_MAX];
	uint32_t nd, *sh = NULL;
	nrt_dtype_t dt;
	size_t sz;

	KT_EQ(kmgr_get_io_tensor_info(h, is_input, index, got, &sz, &dt, &nd, &sh), NRT_SUCCESS);
	KT_STREQ(got, name);
	KT_EQ(sz, size);
	KT_EQ(dt, dtype);
	KT_EQ(nd, ndim);
	KT_ASSERT(sh != NULL);
	KT_MEMEQ(sh, shape, ndim * sizeof(uint32_t));
	kfree(sh);
}

/* kmgr_metadata-6.2: the index walk is in name order, not model order,
 * with each tensor's size, dtype and shape. */
static void case_walk(void)
{
	uint32_t s4[] = {4}, s23[] = {2, 3}, s5[] = {5}, s7[] = {7}, s2[] = {2};

	expect(true, 0, "alpha", 24, NRT_DTYPE_FLOAT32, 2, s23);
	expect(true, 1, "mid", 10, NRT_DTYPE_UINT16, 1, s5);
	expect(true, 2, "zeta", 4, NRT_DTYPE_UINT8, 1, s4);
	expect(false, 0, "out_a", 8, NRT_DTYPE_INT32, 1, s2);
	expect(false, 1, "out_b", 7, NRT_DTYPE_UINT8, 1, s7);
}

/* kmgr_metadata-6.3: an index past the end, NULL outputs and a failed
 * shape allocation are errors that leave nothing allocated. */
static void case_bad_args(void)
{
	char name[NRT_TENSOR_NAME_MAX];
	emu_accounting_t before, after;
	uint32_t nd, *sh = NULL;
	nrt_dtype_t dt;
	size_t sz;

	emu_get_accounting(&before);
	KT_EQ(kmgr_get_io_tensor_info(h, true, 3, name, &sz, &dt, &nd, &sh), NRT_INVALID);
	KT_EQ(kmgr_get_io_tensor_info(h, false, 2, name, &sz, &dt, &nd, &sh), NRT_INVALID);
	KT_EQ(kmgr_get_io_tensor_info(h, true, 0, name, &sz, &dt, &nd, NULL), NRT_INVALID);
	kt_fault_alloc(KFAULT_KMGR_SHAPE, 1);
	KT_EQ(kmgr_get_io_tensor_info(h, true, 0, name, &sz, &dt, &nd, &sh), NRT_RESOURCE);
	kfault_clear();
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
}

/* kmgr_metadata-6.4: ifmap validity is by input name only; a NULL name
 * (the seed's logic_error throw) is NRT_INVALID. */
static void case_valid_ifmap(void)
{
	bool v = false;

	KT_EQ(kmgr_is_valid_ifmap(h, "mid", &v), NRT_SUCCESS);
	KT_ASSERT(v);
	KT_EQ(kmgr_is_valid_ifmap(h, "out_a", &v), NRT_SUCCESS);
	KT_ASSERT(!v);
	KT_EQ(kmgr_is_valid_ifmap(h, "", &v), NRT_SUCCESS);
	KT_ASSERT(!v);
	KT_EQ(kmgr_is_valid_ifmap(h, NULL, &v), NRT_INVALID);
}

/* kmgr_metadata-6.5: every accessor answers NRT_INVALID_HANDLE for a stale
 * handle. */
static void case_stale(void)
{
	H_NN s = {kmgr_last_nn_id() + 1};
	char name[NRT_TENSOR_NAME_MAX];
	uint32_t a, b, nd, *sh;
	nrt_dtype_t dt;
	size_t sz;
	bool v;

	KT_EQ(kmgr_get_io_tensor_count(s, &a, &b), NRT_INVALID_HANDLE);
	KT_EQ(kmgr_get_io_tensor_info(s, true, 0, name, &sz, &dt, &nd, &sh), NRT_INVALID_HANDLE);
	KT_EQ(kmgr_is_valid_ifmap(s, "mid", &v), NRT_INVALID_HANDLE);
	KT_EQ(kmgr_get_ifmap_count(s, &a), NRT_INVALID_HANDLE);
	KT_EQ(kmgr_get_nc_info(s, &a, &b), NRT_INVALID_HANDLE);
}

int main(void)
{
	kt_up(2, false, 0);
	load_model();
	KT_CASE("kmgr_metadata-6.1", case_counts);
	KT_CASE("kmgr_metadata-6.2", case_walk);
	KT_CASE("kmgr_metadata-6.3", case_bad_args);
	KT_CASE("kmgr_metadata-6.4", case_valid_ifmap);
	KT_CASE("kmgr_metadata-6.5", case_stale);
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
	kt_down();
	KT_DONE();
}
