/*
 * test_emu_async.c - the focus of this file is the implicit-async worker
 * pool: add_work and poll, the completion callback, the bounded queue,
 * MODEL_STOP (queued work of the model cancelled, running work finished),
 * the drain of a core's queue, and bad arguments.
 */
#include "emu_fixture.h"

typedef struct cb_rec {
	uint32_t model_id, vnc;
	uint64_t job_id;
	NRT_STATUS status;
} cb_rec_t;

static ks_mutex_t cb_lock = KS_MUTEX_INITIALIZER;
static cb_rec_t cbs[64];
static uint32_t ncb;
static ks_sem_t gate;     /* the first callback waits here when armed */
static ks_atomic_t armed; /* 1: block the next callback */
static ks_atomic_t in_cb; /* a callback is blocked at the gate */
static uint32_t interned_calls;

static void record_cb(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                      NRT_STATUS status)
{
	int64_t one = 1;

	KT_ASSERT(params == &cbs);
	ks_mutex_lock(&cb_lock);
	if (ncb < 64)
		cbs[ncb++] = (cb_rec_t){model_id, vnc, job_id, status};
	ks_mutex_unlock(&cb_lock);
	if (ks_atomic_cas(&armed, &one, 0)) {
		ks_atomic_store(&in_cb, 1);
		ks_sem_wait(&gate);
	}
}

static uint32_t interned(uint32_t h_nn)
{
	interned_calls++;
	return h_nn + 1000;
}

static void reset(void)
{
	emu_hooks_t h = {NULL, interned};

	ncb = 0;
	interned_calls = 0;
	emu_set_hooks(&h);
	kmgr_async_exec_set_callback(record_cb, &cbs);
}

static NRT_STATUS add(kmgr_async_exec_worker_threads_t *p, et_model_t *m, uint64_t job,
                      uint64_t *handle)
{
	kmgr_exec_resources_t *r;
	NRT_STATUS rc = et_res(m, KMGR_EXEC_MODE_ASYNC, &r);

	return rc ? rc : kmgr_async_exec_add_work(p, m->h_nn, m->vc->vtpb_idx, r, handle, job);
}

static void wait_in_cb(void)
{
	while (!ks_atomic_load(&in_cb))
		ks_usleep(100);
}

/* pool-1: queued executions complete in order on the worker of their
 * virtual core with correct outputs; poll(handle) returns their status
 * after the callback (params, model_id = h_nn, vnc, job_id = tracking id,
 * status) ran; add_work asks the facade for the interned id. */
static void pool_add_poll_callback(void)
{
	static const uint64_t in[] = {16}, out[] = {16};
	kmgr_async_exec_worker_threads_t *p;
	et_model_t m;
	uint64_t h[3];

	reset();
	et_open(2);
	KT_EQ(kmgr_async_exec_init(4, &p), NRT_SUCCESS);
	KT_EQ(et_load(&m, 1, 1, 1, in, 1, out, false), NRT_SUCCESS);
	et_fill(&m, 9);
	for (int i = 0; i < 3; i++)
		KT_EQ(add(p, &m, 500 + (uint64_t)i, &h[i]), NRT_SUCCESS);
	KT_EQ(h[1], h[0] + 1);
	KT_EQ(kmgr_async_exec_poll(kmgr_async_exec_get_worker(p, 1), h[2]), NRT_SUCCESS);
	KT_EQ(ncb, 3);
	for (uint32_t i = 0; i < 3; i++) {
		KT_EQ(cbs[i].model_id, m.h_nn);
		KT_EQ(cbs[i].vnc, 1);
		KT_EQ(cbs[i].job_id, 500 + i);
		KT_EQ(cbs[i].status, NRT_SUCCESS);
	}
	KT_EQ(interned_calls, 3);
	et_check_outputs(&m);
	KT_EQ(kmgr_async_exec_poll(kmgr_async_exec_get_worker(p, 1), h[2] + 1), NRT_INVALID);
	KT_EQ(kmgr_async_exec_poll(kmgr_async_exec_get_worker(p, 1), 0), NRT_SUCCESS);
	kmgr_async_exec_destroy(p);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

/* pool-2: a worker's queue holds async_queue_depth executions; one more is
 * NRT_QUEUE_FULL and its tracker is released (nothing leaks). */
static void pool_queue_full(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	kmgr_async_exec_worker_threads_t *p;
	et_model_t m;
	uint64_t h;
	emu_accounting_t a0, a1;

	reset();
	et_open(1);
	KT_EQ(kmgr_async_exec_init(2, &p), NRT_SUCCESS);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	ks_atomic_store(&armed, 1);
	ks_atomic_store(&in_cb, 0);
	KT_EQ(add(p, &m, 1, &h), NRT_SUCCESS);
	wait_in_cb();
	KT_EQ(add(p, &m, 2, &h), NRT_SUCCESS);
	KT_EQ(add(p, &m, 3, &h), NRT_SUCCESS);
	emu_get_accounting(&a0);
	KT_EQ(add(p, &m, 4, &h), NRT_QUEUE_FULL);
	emu_get_accounting(&a1);
	KT_EQ(a1.host_allocs, a0.host_allocs);
	KT_EQ(a1.inflight_execs, 2);
	ks_sem_post(&gate);
	KT_EQ(kmgr_async_exec_poll(kmgr_async_exec_get_worker(p, 0), h), NRT_SUCCESS);
	KT_EQ(ncb, 3);
	kmgr_async_exec_destroy(p);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

/* pool-3: MODEL_STOP cancels the model's queued executions (callbacks and
 * poll report NRT_FAILURE, observer CANCEL), lets its running one finish,
 * leaves other models' work alone; with nothing of the model queued it
 * needs no stop. */
static void pool_model_stop(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	static et_events_t ev = {.lock = KS_MUTEX_INITIALIZER};
	kmgr_async_exec_worker_threads_t *p;
	kmgr_async_exec_worker_t *w;
	et_model_t a, b;
	uint64_t h, stop;
	bool need;

	reset();
	et_open(1);
	KT_EQ(kmgr_async_exec_init(8, &p), NRT_SUCCESS);
	w = kmgr_async_exec_get_worker(p, 0);
	KT_EQ(et_load(&a, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	KT_EQ(et_load(&b, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	emu_set_exec_observer(et_observer, &ev);
	ks_atomic_store(&armed, 1);
	ks_atomic_store(&in_cb, 0);
	KT_EQ(add(p, &a, 1, &h), NRT_SUCCESS); /* running, held in its callback */
	wait_in_cb();
	KT_EQ(add(p, &b, 2, &h), NRT_SUCCESS);
	KT_EQ(add(p, &a, 3, &h), NRT_SUCCESS);
	KT_EQ(add(p, &a, 4, &h), NRT_SUCCESS);
	KT_EQ(add(p, &b, 5, &h), NRT_SUCCESS);
	KT_EQ(kmgr_async_exec_model_stop(w, a.h_nn, &stop, &need), NRT_SUCCESS);
	KT_ASSERT(need);
	ks_sem_post(&gate);
	KT_EQ(kmgr_async_exec_poll(w, stop), NRT_FAILURE);
	KT_EQ(kbl_model_inflight(a.h), 0);
	KT_EQ(kmgr_async_exec_poll(w, h), NRT_SUCCESS);
	emu_set_exec_observer(NULL, NULL);
	KT_EQ(ncb, 5);
	KT_EQ(cbs[0].status, NRT_SUCCESS);
	for (uint32_t i = 1; i < 5; i++)
		KT_EQ(cbs[i].status,
		      cbs[i].job_id == 3 || cbs[i].job_id == 4 ? NRT_FAILURE : NRT_SUCCESS);
	KT_EQ(et_count(&ev, EMU_EXEC_CANCEL), 2);
	KT_EQ(et_count(&ev, EMU_EXEC_COMPLETE), 3);
	KT_EQ(kmgr_async_exec_model_stop(w, a.h_nn, &stop, &need), NRT_SUCCESS);
	KT_ASSERT(!need);
	KT_EQ(kmgr_async_exec_poll(w, stop), NRT_SUCCESS);
	kmgr_async_exec_destroy(p);
	et_unload(&a);
	et_unload(&b);
	emu_close();
	kt_assert_accounting_zero();
}

static kmgr_async_exec_worker_threads_t *drain_pool;
static ks_atomic_t drained;

static void *drain_thread(void *arg)
{
	(void)arg;
	kmgr_async_drain_queued_execs(drain_pool, 0);
	ks_atomic_store(&drained, 1);
	return NULL;
}

/* pool-4: the drain of a core returns only once nothing is queued or
 * running there. */
static void pool_drain(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	et_model_t m;
	uint64_t h;
	ks_thread_t t;

	reset();
	et_open(1);
	KT_EQ(kmgr_async_exec_init(8, &drain_pool), NRT_SUCCESS);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	ks_atomic_store(&armed, 1);
	ks_atomic_store(&in_cb, 0);
	ks_atomic_store(&drained, 0);
	KT_EQ(add(drain_pool, &m, 1, &h), NRT_SUCCESS);
	wait_in_cb();
	KT_EQ(add(drain_pool, &m, 2, &h), NRT_SUCCESS);
	KT_EQ(add(drain_pool, &m, 3, &h), NRT_SUCCESS);
	KT_EQ(ks_thread_create(&t, "drain", drain_thread, NULL), 0);
	ks_usleep(20000);
	KT_EQ(ks_atomic_load(&drained), 0); /* the worker is held: it cannot have drained */
	ks_sem_post(&gate);
	KT_EQ(ks_thread_join(&t, NULL), 0);
	ks_mutex_lock(&cb_lock);
	KT_EQ(ncb, 3);
	ks_mutex_unlock(&cb_lock);
	KT_EQ(kbl_model_inflight(m.h), 0);
	kmgr_async_exec_destroy(drain_pool);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

/* pool-5: bad arguments are refused with NRT_INVALID and the tracker is
 * still released. */
static void pool_bad_args(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	kmgr_async_exec_worker_threads_t *p;
	kmgr_exec_resources_t *r;
	et_model_t m;
	uint64_t h;

	reset();
	et_open(2);
	KT_EQ(kmgr_async_exec_init(2, &p), NRT_SUCCESS);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	KT_EQ(et_res(&m, KMGR_EXEC_MODE_ASYNC, &r), NRT_SUCCESS);
	KT_EQ(kmgr_async_exec_add_work(p, m.h_nn, 1, r, &h, 0), NRT_INVALID);
	KT_EQ(et_res(&m, KMGR_EXEC_MODE_ASYNC, &r), NRT_SUCCESS);
	KT_EQ(kmgr_async_exec_add_work(p, m.h_nn, 7, r, &h, 0), NRT_INVALID);
	KT_EQ(kmgr_async_exec_add_work(p, m.h_nn, 0, NULL, &h, 0), NRT_INVALID);
	KT_ASSERT(kmgr_async_exec_get_worker(NULL, 0) == NULL);
	KT_EQ(kmgr_async_exec_poll(NULL, 1), NRT_INVALID);
	KT_EQ(kmgr_async_exec_init(2, NULL), NRT_INVALID);
	kmgr_async_exec_destroy(p);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

int main(void)
{
	ks_sem_init(&gate, 0);
	KT_CASE("pool-1 add, poll, callback", pool_add_poll_callback);
	KT_CASE("pool-2 queue full", pool_queue_full);
	KT_CASE("pool-3 model stop", pool_model_stop);
	KT_CASE("pool-4 drain", pool_drain);
	KT_CASE("pool-5 bad arguments", pool_bad_args);
	kmgr_async_exec_set_callback(NULL, NULL);
	emu_set_hooks(NULL);
	ks_sem_destroy(&gate);
	KT_DONE();
}
