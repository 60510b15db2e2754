/*
 * test_nrt_leak.c - the focus of this file is accounting: after any
 * sequence of loads, executions (sync, implicit async, explicit async),
 * failures and nrt_close, every figure of emu_get_accounting is zero,
 * independently of LeakSanitizer.
 */
#include "nrt_test.h"

#include "sched/ksched.h"

static const uint32_t in2[] = {9, 4}, out1[] = {9};

/* leak-1.1: sync: two models, good and failing executions (missing input,
 * injected completion error, bad container), one model left loaded and
 * tensors still held at nrt_close; freeing the tensors after close brings
 * every figure to zero. */
static void sync_sequence(void)
{
	size_t len;
	uint8_t *bytes = kt_model_malloc("nt", 1, true, 2, in2, 1, out1, &len);
	nrt_model_t *a = NULL, *b = NULL;
	kt_nrt_io_t io = {.n_in = 2, .n_out = 1, .in_sizes = {9, 4}, .out_sizes = {9}};
	nrt_tensor_info_array_t *info = NULL;
	nrt_tensor_t *lone = NULL;
	kfault_plan_t plan = {.n = 1, .e = {{KFAULT_EXEC_STATUS, 0, 2, 1003}}};

	kfault_set_plan(&plan);
	nt_init();
	KT_EQ(nrt_load(bytes, len, 0, -1, &a), NRT_SUCCESS);
	KT_EQ(nrt_load(bytes, len, 1, -1, &b), NRT_SUCCESS);
	KT_NE(nrt_load(bytes, len - 1, -1, -1, &b), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	KT_EQ(nrt_execute(a, io.in_set, io.out_set), NRT_SUCCESS);
	KT_EQ(nrt_execute(a, io.in_set, io.out_set), NRT_EXEC_COMPLETED_WITH_NUM_ERR);
	KT_EQ(nrt_get_model_tensor_info(b, &info), NRT_SUCCESS);
	KT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4, "lone", &lone), NRT_SUCCESS);
	KT_EQ(nrt_add_tensor_to_tensor_set(io.in_set, "in1", lone), NRT_SUCCESS);
	KT_EQ(nrt_execute(a, io.in_set, io.out_set), NRT_SUCCESS);
	KT_EQ(nrt_unload(a), NRT_SUCCESS);
	nrt_close();
	kfault_clear();
	KT_EQ(nrt_free_model_tensor_info(info), NRT_SUCCESS);
	kt_nrt_io_free(&io);
	nrt_tensor_free(&lone);
	free(bytes);
	kt_assert_accounting_zero();
}

static ks_atomic_t cb_calls = KS_ATOMIC_INIT(0);

static void on_done(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                    NRT_STATUS status)
{
	(void)params;
	(void)model_id;
	(void)vnc;
	(void)job_id;
	(void)status;
	ks_atomic_add(&cb_calls, 1);
}

/* leak-1.2: implicit async: executions still queued at nrt_close (the
 * first one's completion is delayed so the rest wait behind it) are
 * drained or cancelled, each reports exactly one callback, and nothing is
 * left behind. */
static void implicit_sequence(void)
{
	size_t len;
	uint8_t *bytes = kt_model_malloc("nt", 1, false, 2, in2, 1, out1, &len);
	nrt_model_t *m = NULL;
	kt_nrt_io_t io = {.n_in = 2, .n_out = 1, .in_sizes = {9, 4}, .out_sizes = {9}};
	kfault_plan_t plan = {.n = 1, .e = {{KFAULT_EXEC_DELAY, 0, 1, 100000}}};

	ks_atomic_store(&cb_calls, 0);
	KT_EQ(nrt_register_async_exec_callback(on_done, NULL), NRT_SUCCESS);
	setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "8", 1);
	kfault_set_plan(&plan);
	nt_init();
	KT_EQ(nrt_load(bytes, len, -1, -1, &m), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	for (int i = 0; i < 6; i++)
		KT_EQ(nrt_execute(m, io.in_set, io.out_set), NRT_SUCCESS);
	nrt_close();
	kfault_clear();
	KT_EQ(ks_atomic_load(&cb_calls), 6);
	unsetenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS");
	KT_EQ(nrt_register_async_exec_callback(NULL, NULL), NRT_SUCCESS);
	kt_nrt_io_free(&io);
	free(bytes);
	kt_assert_accounting_zero();
}

/* leak-1.3: explicit async: scheduled executions with and without an
 * error tracker, still in flight at nrt_close; the tracker is destroyed
 * after close. */
static void explicit_sequence(void)
{
	size_t len;
	uint8_t *bytes = kt_model_malloc("nt", 1, false, 2, in2, 1, out1, &len);
	nrt_model_t *m = NULL;
	kt_nrt_io_t io = {.n_in = 2, .n_out = 1, .in_sizes = {9, 4}, .out_sizes = {9}};
	nrta_error_tracker_t *et = NULL;
	nrta_seq_t seq;

	nt_init();
	KT_EQ(nrta_error_tracker_create(0, &et), NRT_SUCCESS);
	KT_EQ(nrt_load(bytes, len, -1, -1, &m), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	for (int i = 0; i < 4; i++) {
		NRT_STATUS rc =
		    nrta_execute_schedule(m, io.in_set, io.out_set, 0, i % 2 ? et : NULL, &seq);

		KT_ASSERT(rc == NRT_SUCCESS || rc == NRT_QUEUE_FULL);
	}
	nrt_close();
	nrta_error_tracker_destroy(et);
	kt_nrt_io_free(&io);
	free(bytes);
	kt_assert_accounting_zero();
}

int main(void)
{
	nt_env_clear();
	KT_CASE("leak-1.1 sync", sync_sequence);
	KT_CASE("leak-1.2 implicit async", implicit_sequence);
	KT_CASE("leak-1.3 explicit async", explicit_sequence);
	KT_DONE();
}
