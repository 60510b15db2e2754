/*
 * test_nrt_async.c - the focus of this file is the asynchronous public
 * API: implicit async (NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS and the
 * registered callback), the explicit nrta_* calls, and the error tracker.
 */
#include "nrt_test.h"

#include "sched/ksched.h"

static const uint32_t in1[] = {12}, out1[] = {12};

static ks_atomic_t cb_calls = KS_ATOMIC_INIT(0);
static ks_atomic_t cb_bad = KS_ATOMIC_INIT(0);
static int cb_tag;

static void on_done(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                    NRT_STATUS status)
{
	(void)model_id;
	(void)job_id;
	if (params != &cb_tag || vnc != 0 || status != NRT_SUCCESS)
		ks_atomic_add(&cb_bad, 1);
	ks_atomic_add(&cb_calls, 1);
}

static void wait_calls(int64_t n)
{
	for (int i = 0; i < 200000 && ks_atomic_load(&cb_calls) < n; i++)
		ks_usleep(50);
	KT_EQ(ks_atomic_load(&cb_calls), n);
}

/* async-1.1: with NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS > 0,
 * nrt_execute enqueues and returns; the callback registered (before
 * nrt_init) reports each completion with its params and NRT_SUCCESS, and
 * the outputs then follow the compute formula. */
static void implicit(void)
{
	size_t len;
	uint8_t *bytes = kt_model_malloc("nt", 1, false, 1, in1, 1, out1, &len);
	nrt_model_t *m = NULL;
	kt_nrt_io_t io = {.n_in = 1, .n_out = 1, .in_sizes = {12}, .out_sizes = {12}};
	kt_nrt_io_t host = io;

	ks_atomic_store(&cb_calls, 0);
	KT_EQ(nrt_register_async_exec_callback(on_done, &cb_tag), NRT_SUCCESS);
	setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "4", 1);
	nt_init();
	KT_EQ(nrt_load(bytes, len, 0, -1, &m), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	for (int i = 0; i < 3; i++)
		KT_EQ(nrt_execute(m, io.in_set, io.out_set), NRT_SUCCESS);
	wait_calls(3);
	KT_EQ(ks_atomic_load(&cb_bad), 0);
	kt_nrt_io_check(&io);
	/* async-1.2: implicit async refuses host tensors with NRT_INVALID. */
	kt_nrt_io_make(&host, NRT_TENSOR_PLACEMENT_HOST, -1);
	KT_EQ(nrt_execute(m, host.in_set, host.out_set), NRT_INVALID);
	kt_nrt_io_free(&host);
	KT_EQ(ks_atomic_load(&cb_calls), 3);
	kt_nrt_io_free(&io);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrt_close();
	/* async-1.3: a NULL registered while closed is what the next nrt_init
	 * installs: the closed runtime's callback does not come back. */
	KT_EQ(nrt_register_async_exec_callback(NULL, NULL), NRT_SUCCESS);
	nt_init();
	KT_EQ(nrt_load(bytes, len, 0, -1, &m), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	KT_EQ(nrt_execute(m, io.in_set, io.out_set), NRT_SUCCESS);
	nrt_close(); /* joins the worker: its delivery is made */
	KT_EQ(ks_atomic_load(&cb_calls), 3);
	kt_nrt_io_free(&io);
	unsetenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS");
	free(bytes);
	kt_assert_accounting_zero();
}

static void wait_seq(nrta_seq_t seq)
{
	bool done = false;

	for (int i = 0; i < 200000 && !done; i++) {
		KT_EQ(nrta_is_completed(seq, &done), NRT_SUCCESS);
		if (!done)
			ks_usleep(50);
	}
	KT_ASSERT(done);
}

/* async-2.1: nrta_execute_schedule returns a sequence number of the
 * model's COMPUTE XU; nrta_is_completed and nrta_get_sequence observe its
 * completion; the outputs follow the formula; sequences grow. */
static void explicit_schedule(void)
{
	size_t len;
	uint8_t *bytes = kt_model_malloc("nt", 1, false, 1, in1, 1, out1, &len);
	nrt_model_t *m = NULL;
	kt_nrt_io_t io = {.n_in = 1, .n_out = 1, .in_sizes = {12}, .out_sizes = {12}};
	kt_nrt_io_t host = io;
	nrta_seq_t s1 = 0, s2 = 0, last = 0;

	nt_init();
	KT_EQ(nrt_load(bytes, len, 1, -1, &m), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 1);
	KT_EQ(nrta_execute_schedule(m, io.in_set, io.out_set, 0, NULL, &s1), NRT_SUCCESS);
	KT_EQ(nrta_execute_schedule(m, io.in_set, io.out_set, 0, NULL, &s2), NRT_SUCCESS);
	KT_GT(s2, s1);
	KT_EQ(NRTA_SEQ_GET_XU_ID(s1), NRTA_SEQ_GET_XU_ID(s2));
	wait_seq(s2);
	KT_EQ(nrta_get_sequence(1, NRTA_XU_COMPUTE, 0, &last), NRT_SUCCESS);
	KT_GE(last, s2);
	kt_nrt_io_check(&io);
	/* async-2.2: bad arguments, host tensors, other XUs and queues. */
	KT_EQ(nrta_execute_schedule(m, io.in_set, io.out_set, 1, NULL, &s1), NRT_INVALID);
	KT_EQ(nrta_execute_schedule(m, io.in_set, io.out_set, 0, NULL, NULL), NRT_INVALID);
	KT_EQ(nrta_execute_schedule(NULL, io.in_set, io.out_set, 0, NULL, &s1), NRT_INVALID);
	kt_nrt_io_make(&host, NRT_TENSOR_PLACEMENT_HOST, -1);
	KT_EQ(nrta_execute_schedule(m, host.in_set, host.out_set, 0, NULL, &s1), NRT_INVALID);
	kt_nrt_io_free(&host);
	KT_EQ(nrta_get_sequence(1, NRTA_XU_TENSOR_READ, 0, &last), NRT_INVALID);
	KT_EQ(nrta_get_sequence(1, NRTA_XU_COMPUTE, 1, &last), NRT_INVALID);
	KT_EQ(nrta_get_sequence(99, NRTA_XU_COMPUTE, 0, &last), NRT_INVALID);
	KT_EQ(nrta_get_sequence(1, NRTA_XU_COMPUTE, 0, NULL), NRT_INVALID);
	KT_EQ(nrta_is_completed(s2, NULL), NRT_INVALID);
	kt_nrt_io_free(&io);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrt_close();
	free(bytes);
	kt_assert_accounting_zero();
}

/* async-3.1: the error tracker lists exactly the failed executions
 * scheduled with it, (seq, status), once; successes are not listed. */
static void error_tracker(void)
{
	size_t len, n = 99;
	uint8_t *bytes = kt_model_malloc("nt", 1, false, 1, in1, 1, out1, &len);
	nrt_model_t *m = NULL;
	kt_nrt_io_t io = {.n_in = 1, .n_out = 1, .in_sizes = {12}, .out_sizes = {12}};
	nrta_error_tracker_t *et = NULL;
	const nrta_error_t *list = NULL;
	nrta_seq_t s[3];
	kfault_plan_t plan = {.n = 1, .e = {{KFAULT_EXEC_STATUS, 0, 2, 1004}}};

	nt_init();
	KT_EQ(nrta_error_tracker_create(0, &et), NRT_SUCCESS);
	KT_EQ(nrta_error_tracker_create(99, &et), NRT_INVALID);
	KT_EQ(nrta_error_tracker_create(0, NULL), NRT_INVALID);
	KT_EQ(nrt_load(bytes, len, 0, -1, &m), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	kfault_set_plan(&plan);
	for (int i = 0; i < 3; i++)
		KT_EQ(nrta_execute_schedule(m, io.in_set, io.out_set, 0, et, &s[i]), NRT_SUCCESS);
	wait_seq(s[2]);
	kfault_clear();
	KT_EQ(nrta_error_tracker_get_list(et, &list, &n), NRT_SUCCESS);
	KT_EQ(n, 1);
	KT_EQ(list[0].seq_id, s[1]);
	KT_EQ(list[0].error_code, NRT_EXEC_COMPLETED_WITH_ERR);
	KT_EQ(nrta_error_tracker_get_list(et, &list, &n), NRT_SUCCESS);
	KT_EQ(n, 0);
	KT_EQ(nrta_error_tracker_get_list(NULL, &list, &n), NRT_INVALID);
	kt_nrt_io_free(&io);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrta_error_tracker_destroy(et);
	nrta_error_tracker_destroy(NULL);
	nrt_close();
	free(bytes);
	kt_assert_accounting_zero();
}

int main(void)
{
	nt_env_clear();
	KT_CASE("async-1 implicit async and the callback", implicit);
	KT_CASE("async-2 explicit schedule", explicit_schedule);
	KT_CASE("async-3 error tracker", error_tracker);
	KT_DONE();
}
