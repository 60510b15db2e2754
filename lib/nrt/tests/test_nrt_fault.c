/*
 * test_nrt_fault.c - the focus of this file is fault injection through the
 * public API, one case per fault kind: the failed call returns the fault's
 * status, nothing leaks, and the next call works.
 */
#include "nrt_test.h"

static const uint32_t in1[] = {10}, out2[] = {10, 3};

static uint8_t *g_bytes;
static size_t g_len;

/* The whole public flow; returns the first failing status (cleaning up
 * what succeeded), NRT_SUCCESS when every step worked. */
static NRT_STATUS flow(bool explicit_async)
{
	nrt_model_t *m = NULL;
	nrt_tensor_info_array_t *info = NULL;
	nrta_error_tracker_t *et = NULL;
	kt_nrt_io_t io = {.n_in = 1, .n_out = 2, .in_sizes = {10}, .out_sizes = {10, 3}};
	char name[8];
	nrta_seq_t seq;
	bool done = false;
	NRT_STATUS rc = nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "");

	if (rc)
		return rc;
	rc = nrt_load(g_bytes, g_len, -1, -1, &m);
	if (rc)
		goto out;
	rc = nrt_get_model_tensor_info(m, &info);
	if (rc)
		goto out;
	rc = nrt_allocate_tensor_set(&io.in_set);
	if (!rc)
		rc = nrt_allocate_tensor_set(&io.out_set);
	for (uint32_t i = 0; !rc && i < 3; i++) {
		nrt_tensor_t **t = i < 1 ? &io.in[i] : &io.out[i - 1];

		snprintf(name, sizeof(name), i < 1 ? "in%u" : "out%u", i < 1 ? i : i - 1);
		rc = nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, info->tensor_array[i].size,
		                         name, t);
		if (!rc)
			rc = nrt_add_tensor_to_tensor_set(i < 1 ? io.in_set : io.out_set, name, *t);
	}
	if (rc)
		goto out;
	rc = nrt_execute(m, io.in_set, io.out_set);
	if (rc || !explicit_async)
		goto out;
	rc = nrta_error_tracker_create(0, &et);
	if (!rc)
		rc = nrta_execute_schedule(m, io.in_set, io.out_set, 0, et, &seq);
	while (!rc && !done)
		rc = nrta_is_completed(seq, &done);
out:
	nrta_error_tracker_destroy(et);
	kt_nrt_io_free(&io);
	nrt_free_model_tensor_info(info);
	if (m && nrt_unload(m) && rc == NRT_SUCCESS)
		rc = NRT_FAILURE;
	nrt_close();
	return rc;
}

/* fault-1.1: failing the n-th host or device allocation anywhere, for every
 * n until no fault fires: the flow fails with a status (never a crash),
 * nothing leaks, and the same flow then succeeds. */
static int flow_body(void *ctx)
{
	(void)ctx;
	return flow(true);
}

static void flow_check(void *ctx, const kt_faultsim_run_t *run)
{
	(void)ctx;
	if (run->fired == 0) {
		KT_EQ(run->rc, NRT_SUCCESS);
		return;
	}
	KT_NE(run->rc, NRT_SUCCESS);
	kt_assert_accounting_zero();
	KT_EQ(flow(true), NRT_SUCCESS);
	kt_assert_accounting_zero();
}

static void alloc_sweep(void)
{
	uint32_t n = kt_faultsim(KFAULT_SITE_ANY, 2000, flow_body, flow_check, NULL);

	fprintf(stderr, "fault-1.1: failed each of %u allocations in turn\n", n - 1);
	KT_GT(n, 10); /* the flow has many allocation sites */
	KT_LT(n, 2000);
	kt_assert_accounting_zero();
}

/* fault-1.2: each of the API layer's own sites, failed at its first hit,
 * gives that call's documented status. */
static void nrt_sites(void)
{
	static const struct {
		kfault_site_t site;
		NRT_STATUS want;
	} cases[] = {
	    {KFAULT_NRT_MODEL, NRT_FAIL_HOST_MEM_ALLOC},
	    {KFAULT_NRT_TENSOR_INFO, NRT_FAIL_HOST_MEM_ALLOC},
	    {KFAULT_NRT_ERR_TRACKER, NRT_RESOURCE},
	    {KFAULT_NRT_EXEC_SLOT, NRT_RESOURCE},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kfault_plan_t plan = {.n = 1, .e = {{KFAULT_FAIL_ALLOC, cases[i].site, 1, 0}}};

		kfault_set_plan(&plan);
		KT_EQ(flow(true), cases[i].want);
		KT_EQ(kfault_fired(), 1);
		kfault_clear();
		kt_assert_accounting_zero();
		KT_EQ(flow(true), NRT_SUCCESS);
	}
	kt_assert_accounting_zero();
}

/* fault-2.1: an execution completed with an injected status (1003, 1004,
 * 1202, 5, 1204) returns that status from nrt_execute; the next execution
 * succeeds with correct outputs; nothing leaks. */
static void exec_status(void)
{
	static const uint32_t statuses[] = {1003, 1004, 1202, 5, 1204};

	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		kfault_plan_t plan = {.n = 1, .e = {{KFAULT_EXEC_STATUS, 0, 1, statuses[i]}}};
		nrt_model_t *m = NULL;
		kt_nrt_io_t io = {.n_in = 1, .n_out = 2, .in_sizes = {10}, .out_sizes = {10, 3}};

		kfault_set_plan(&plan);
		nt_init();
		KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &m), NRT_SUCCESS);
		kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
		KT_EQ(nrt_execute(m, io.in_set, io.out_set), statuses[i]);
		KT_EQ(nrt_execute(m, io.in_set, io.out_set), NRT_SUCCESS);
		kt_nrt_io_check(&io);
		kt_nrt_io_free(&io);
		KT_EQ(nrt_unload(m), NRT_SUCCESS);
		nrt_close();
		kfault_clear();
		kt_assert_accounting_zero();
	}
}

/* fault-3.1: a delayed completion still completes with correct outputs. */
static void exec_delay(void)
{
	kfault_plan_t plan = {.n = 1, .e = {{KFAULT_EXEC_DELAY, 0, 1, 50}}};
	nrt_model_t *m = NULL;
	kt_nrt_io_t io = {.n_in = 1, .n_out = 2, .in_sizes = {10}, .out_sizes = {10, 3}};

	kfault_set_plan(&plan);
	nt_init();
	KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &m), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	KT_EQ(nrt_execute(m, io.in_set, io.out_set), NRT_SUCCESS);
	kt_nrt_io_check(&io);
	KT_EQ(kfault_fired(), 1);
	kt_nrt_io_free(&io);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrt_close();
	kfault_clear();
	kt_assert_accounting_zero();
}

/* fault-4.1: a full queue answers nrta_execute_schedule with
 * NRT_QUEUE_FULL; the next schedule succeeds; nothing leaks. */
static void queue_full(void)
{
	kfault_plan_t plan = {.n = 1, .e = {{KFAULT_QUEUE_FULL, 0, 1, 0}}};
	nrt_model_t *m = NULL;
	kt_nrt_io_t io = {.n_in = 1, .n_out = 2, .in_sizes = {10}, .out_sizes = {10, 3}};
	nrta_seq_t seq = 0;
	bool done = false;

	kfault_set_plan(&plan);
	nt_init();
	KT_EQ(nrt_load(g_bytes, g_len, -1, -1, &m), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	KT_EQ(nrta_execute_schedule(m, io.in_set, io.out_set, 0, NULL, &seq), NRT_QUEUE_FULL);
	KT_EQ(nrta_execute_schedule(m, io.in_set, io.out_set, 0, NULL, &seq), NRT_SUCCESS);
	while (!done)
		KT_EQ(nrta_is_completed(seq, &done), NRT_SUCCESS);
	kt_nrt_io_check(&io);
	kt_nrt_io_free(&io);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrt_close();
	kfault_clear();
	kt_assert_accounting_zero();
}

int main(void)
{
	nt_env_clear();
	unsetenv("KMGR_FAULT");
	g_bytes = kt_model_malloc("nt", 1, true, 1, in1, 2, out2, &g_len);
	KT_CASE("fault-1.1 allocation sweep", alloc_sweep);
	KT_CASE("fault-1.2 nrt sites", nrt_sites);
	KT_CASE("fault-2.1 execution status", exec_status);
	KT_CASE("fault-3.1 execution delay", exec_delay);
	KT_CASE("fault-4.1 queue full", queue_full);
	free(g_bytes);
	KT_DONE();
}
