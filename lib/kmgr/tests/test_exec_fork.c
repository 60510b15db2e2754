/*
 * test_exec_fork.c - checklist item 3, kmgr_exec: the fork on the global
 * async_exec_workers; sync clones host tensors to the device and copies the
 * outputs back; async rejects host tensors; every error edge frees exactly
 * what it allocated; the reference is always released.
 */
#include "kt_kmgr.h"

static H_NN h;

static void wait_idle(void)
{
	emu_accounting_t a;

	for (int i = 0; i < 20000; i++) {
		emu_get_accounting(&a);
		if (a.inflight_execs == 0 && a.async_marks == 0)
			return;
		ks_usleep(100);
	}
	KT_FAIL("executions still in flight");
}

/* kmgr_exec-3.1: sync mode, host tensors: the result lands in the host
 * output tensors, and the shadow clones are gone afterwards. */
static void case_sync_host(void)
{
	emu_accounting_t before, after;
	kt_io_t io;

	kt_io_make(&io, NRT_TENSOR_PLACEMENT_HOST, -1, 2, 1, 16);
	emu_get_accounting(&before);
	KT_EQ(kmgr_exec(h, io.in, io.out, 7), NRT_SUCCESS);
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
	kt_io_check(&io);
	kt_io_free(&io);
}

/* kmgr_exec-3.2: sync mode, device tensors: computed in place. */
static void case_sync_device(void)
{
	kt_io_t io;

	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0, 2, 1, 16);
	KT_EQ(kmgr_exec(h, io.in, io.out, 8), NRT_SUCCESS);
	kt_io_check(&io);
	kt_io_free(&io);
}

/* kmgr_exec-3.3: failing the n-th allocation anywhere along a host-tensor
 * execution fails the call cleanly: accounting back where it was, no
 * reference kept; the sweep ends with a run where nothing was injected. */
typedef struct exec_run {
	kt_io_t io;
	uint32_t n;
	emu_accounting_t before; /* taken by the body, before the execution */
} exec_run_t;

static int exec_body(void *ctx)
{
	exec_run_t *r = ctx;

	emu_get_accounting(&r->before); /* does not allocate */
	return kmgr_exec(h, r->io.in, r->io.out, ++r->n);
}

static void exec_check(void *ctx, const kt_faultsim_run_t *run)
{
	exec_run_t *r = ctx;
	emu_accounting_t after;

	emu_get_accounting(&after);
	kt_acct_eq(&r->before, &after);
	if (run->fired == 0)
		KT_EQ(run->rc, NRT_SUCCESS);
	else
		KT_NE(run->rc, NRT_SUCCESS);
}

static void case_error_edges(void)
{
	exec_run_t r = {.n = 0};
	dlr_model *m;
	uint32_t n;

	kt_io_make(&r.io, NRT_TENSOR_PLACEMENT_HOST, -1, 2, 1, 16);
	n = kt_faultsim(KFAULT_SITE_ANY, 100, exec_body, exec_check, &r);
	KT_GT(n, 3); /* in clone, out clone, tracker at least */
	m = db_get_nn_ref_count(h);
	KT_EQ(dlr_model_peek_ref_count(m), 1);
	nn_ref_decrement(m);
	kt_io_check(&r.io);
	kt_io_free(&r.io);
}

/* kmgr_exec-3.4: a stale or never-issued handle is NRT_INVALID_HANDLE. */
static void case_stale(void)
{
	kt_io_t io;

	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0, 2, 1, 16);
	KT_EQ(kmgr_exec((H_NN){kmgr_last_nn_id() + 1}, io.in, io.out, 1), NRT_INVALID_HANDLE);
	KT_EQ(kmgr_exec((H_NN){0}, io.in, io.out, 1), NRT_INVALID_HANDLE);
	kt_io_free(&io);
}

/* kmgr_exec-3.5: async mode rejects any host tensor with NRT_INVALID and
 * the seed's message, before building anything. */
static void case_async_rejects_host(void)
{
	emu_accounting_t before, after;
	kt_io_t io;

	kt_io_make(&io, NRT_TENSOR_PLACEMENT_HOST, -1, 2, 1, 16);
	emu_get_accounting(&before);
	kt_log_capture(KLOG_WARN);
	KT_EQ(kmgr_exec(h, io.in, io.out, 1), NRT_INVALID);
	KT_ASSERT(kt_log_has("Async exec mode only supports device allocated tensors"));
	kt_log_release();
	emu_get_accounting(&after);
	kt_acct_eq(&before, &after);
	kt_io_free(&io);
}

static ks_sem_t done_sem;

static void on_complete(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                        NRT_STATUS status)
{
	(void)params;
	(void)model_id;
	(void)vnc;
	(void)job_id;
	KT_EQ(status, NRT_SUCCESS);
	ks_sem_post(&done_sem);
}

/* kmgr_exec-3.6: async mode runs device tensors on the worker; once the
 * completion callback ran, the outputs are right and the marks are gone. */
static void case_async_device(void)
{
	kt_io_t io;

	KT_EQ(ks_sem_init(&done_sem, 0), 0);
	kmgr_async_exec_set_callback(on_complete, NULL);
	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0, 2, 1, 16);
	KT_EQ(kmgr_exec(h, io.in, io.out, 2), NRT_SUCCESS);
	ks_sem_wait(&done_sem);
	wait_idle();
	kt_io_check(&io);
	kt_io_free(&io);
	kmgr_async_exec_set_callback(NULL, NULL);
	ks_sem_destroy(&done_sem);
}

/* kmgr_exec-3.7: with profiling on, the async fork polls its work item:
 * the output is there when kmgr_exec returns. */
static void case_async_profiling_poll(void)
{
	kt_io_t io;

	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0, 3, 2, 16);
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
	{
		size_t len;
		uint8_t *b = kt_model_bytes("p", 1, false, 3, 2, 16, &len);

		KT_EQ(kmgr_load_nn(b, len, 0, 1, &h), NRT_SUCCESS);
		kfree(b);
	}
	KT_EQ(kmgr_set_profiling(h, true), NRT_SUCCESS);
	KT_EQ(kmgr_exec(h, io.in, io.out, 3), NRT_SUCCESS);
	kt_io_check(&io);
	wait_idle();
	kt_io_free(&io);
}

int main(void)
{
	kt_up(2, false, 0);
	KT_ASSERT(!kmgr_is_async());
	h = kt_load("x", 1, 0, 1);
	KT_CASE("kmgr_exec-3.1", case_sync_host);
	KT_CASE("kmgr_exec-3.2", case_sync_device);
	KT_CASE("kmgr_exec-3.3", case_error_edges);
	KT_CASE("kmgr_exec-3.4", case_stale);
	kt_down();

	kt_up(2, true, 0);
	KT_ASSERT(kmgr_is_async());
	h = kt_load("x", 1, 0, 1);
	KT_CASE("kmgr_exec-3.5", case_async_rejects_host);
	KT_CASE("kmgr_exec-3.6", case_async_device);
	KT_CASE("kmgr_exec-3.7", case_async_profiling_poll);
	kt_down();
	KT_DONE();
}
