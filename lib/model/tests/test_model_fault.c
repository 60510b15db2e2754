/*
 * test_model_fault.c - the focus of this file is allocation failure: each
 * of the model layer's fault sites (300..304), failed on purpose, gives
 * NRT_FAIL_HOST_MEM_ALLOC (or NULL), leaves no live allocation, and leaves
 * the caller's objects as they were; a fail_nth sweep over every
 * allocation of a parse, a build and a serialize finds no leak.
 */
#include "model_fixture.h"

static void parse_fails_at(kfault_site_t site)
{
	size_t len;
	uint8_t *b = fx_ref_bytes(&len);
	int64_t live = kalloc_live_count();
	kmodel_t *m = (kmodel_t *)1;

	kt_fault_alloc(site, 1);
	KT_EQ(kmodel_parse(b, len, &m), NRT_FAIL_HOST_MEM_ALLOC);
	KT_EQ(kfault_fired(), 1);
	kfault_clear();
	KT_ASSERT(m == NULL);
	KT_EQ(kalloc_live_count(), live);
	KT_EQ(kmodel_parse(b, len, &m), 0); /* and the next parse is fine */
	kmodel_free(m);
	free(b);
}

/* fault-1.300: failing the model record fails the parse cleanly. */
static void t_site_300(void)
{
	parse_fails_at(KFAULT_MODEL_PARSE);
}

/* fault-1.301: failing the tensor array frees the record already made. */
static void t_site_301(void)
{
	parse_fails_at(KFAULT_MODEL_TENSORS);
}

/* fault-1.302: failing the output buffer fails serialize, *out NULL. */
static void t_site_302(void)
{
	kmodel_t *m = fx_ref_model();
	int64_t live = kalloc_live_count();
	uint8_t *b = (uint8_t *)1;
	size_t len = 1;

	kt_fault_alloc(KFAULT_MODEL_BUILD, 1);
	KT_EQ(kmodel_serialize(m, &b, &len), NRT_FAIL_HOST_MEM_ALLOC);
	KT_EQ(kfault_fired(), 1);
	kfault_clear();
	KT_ASSERT(b == NULL && len == 0);
	KT_EQ(kalloc_live_count(), live);
	kmodel_free(m);
}

/* fault-1.303: failing kmodel_new's record gives NULL and no allocation. */
static void t_site_303(void)
{
	int64_t live = kalloc_live_count();

	kt_fault_alloc(KFAULT_MODEL_NEW, 1);
	KT_ASSERT(kmodel_new("m", 1, false) == NULL);
	KT_EQ(kfault_fired(), 1);
	kfault_clear();
	KT_EQ(kalloc_live_count(), live);
}

/* fault-1.304: failing the growth of the tensor array leaves the model
 * with its earlier tensors, still serializable. */
static void t_site_304(void)
{
	static const uint32_t s[1] = {4};
	kmodel_t *m = fx_ref_model();
	int64_t live = kalloc_live_count();

	kt_fault_alloc(KFAULT_MODEL_NEW_TENSORS, 1);
	KT_EQ(kmodel_add_tensor(m, "x", NRT_TENSOR_USAGE_INPUT, NRT_DTYPE_UINT8, 1, s),
	      NRT_FAIL_HOST_MEM_ALLOC);
	KT_EQ(kfault_fired(), 1);
	kfault_clear();
	KT_EQ(m->n_tensors, 2);
	KT_STREQ(m->tensors[1].name, "out");
	KT_EQ(kalloc_live_count(), live);
	KT_EQ(kmodel_add_tensor(m, "x", NRT_TENSOR_USAGE_INPUT, NRT_DTYPE_UINT8, 1, s), 0);
	kmodel_free(m);
}

/* Build, serialize and parse the reference; 0 or the first failing status. */
static NRT_STATUS build_and_parse(void)
{
	kmodel_t *m = kmodel_new("ref", 1, false), *p = NULL;
	static const uint32_t s[2] = {2, 2};
	NRT_STATUS rc = NRT_FAIL_HOST_MEM_ALLOC;
	uint8_t *b = NULL;
	size_t len;

	if (!m)
		return rc;
	rc = kmodel_add_tensor(m, "a", NRT_TENSOR_USAGE_INPUT, NRT_DTYPE_INT8, 2, s);
	if (!rc)
		rc = kmodel_add_tensor(m, "b", NRT_TENSOR_USAGE_OUTPUT, NRT_DTYPE_INT8, 2, s);
	if (!rc)
		rc = kmodel_serialize(m, &b, &len);
	if (!rc)
		rc = kmodel_parse(b, len, &p);
	kmodel_free(p);
	kfree(b);
	kmodel_free(m);
	return rc;
}

/* fault-2.1: fail the n-th allocation at any site, n = 1, 2, ... until a
 * run injects nothing: each failing run answers NRT_FAIL_HOST_MEM_ALLOC and
 * leaves nothing live (SQLite's do_faultsim_test). */
static void sweep_check(void *ctx, const kt_faultsim_run_t *run)
{
	const int64_t *live = ctx;

	if (run->fired == 0) {
		KT_EQ(run->rc, 0);
		return;
	}
	KT_EQ(run->rc, NRT_FAIL_HOST_MEM_ALLOC);
	KT_EQ(kalloc_live_count(), *live);
}

static int sweep_body(void *ctx)
{
	(void)ctx;
	return build_and_parse();
}

static void t_sweep_any(void)
{
	int64_t live = kalloc_live_count();
	uint32_t n = kt_faultsim(KFAULT_SITE_ANY, UINT32_MAX, sweep_body, sweep_check, &live);

	/* six allocations: new, 2 tensor growths, serialize, parse record and array */
	KT_EQ(n - 1, 6);
}

int main(void)
{
	kt_log_capture(KLOG_WARN);
	KT_CASE("fault-1.300 model.parse", t_site_300);
	KT_CASE("fault-1.301 model.tensors", t_site_301);
	KT_CASE("fault-1.302 model.build", t_site_302);
	KT_CASE("fault-1.303 model.new", t_site_303);
	KT_CASE("fault-1.304 model.new_tensors", t_site_304);
	KT_CASE("fault-2.1 sweep any site", t_sweep_any);
	kt_log_release();
	KT_DONE();
}
