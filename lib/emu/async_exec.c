/*
 * async_exec.c - the implicit-async worker pool: one worker per core (its
 * thread started on the first submission), a bounded FIFO per worker,
 * handles that poll() waits on, MODEL_STOP (the model's queued items are
 * cancelled, its running one finishes), the drain of a core's queue, and
 * the process-wide completion callback (nrt_register_async_exec_callback).
 *
 * Handles are per worker and complete in FIFO order, so "handle h is done"
 * is "the worker's completed watermark >= h".  A cancelled execution is
 * completed by the worker with NRT_FAILURE (callback and CANCEL event).
 */
#include "emu/emu_int.h"

#define EMU_ASYNC_STATUS_RING 32

struct kmgr_async_exec_worker {
	uint32_t idx;
	uint32_t depth;
	ks_mutex_t lock;
	ks_cond_t cv;
	ks_thread_t thread;
	bool started, stop;
	emu_work_t *head, *tail;
	uint32_t queued;
	emu_work_t *running;
	uint64_t issued, completed; /* handles, under lock */
	struct {
		uint64_t handle;
		NRT_STATUS status;
	} recent[EMU_ASYNC_STATUS_RING];
};

struct kmgr_async_exec_worker_threads {
	struct kmgr_async_exec_worker workers[EMU_MAX_NC];
};

static ks_mutex_t emu_cb_lock = KS_MUTEX_INITIALIZER;
static nrt_async_exec_callback_t emu_cb;
static void *emu_cb_params;

/* The worker running on this thread (ks_thread_tag): its own callback must
 * not wait for itself (drain, poll). */
static bool emu_on_worker(const struct kmgr_async_exec_worker *wk)
{
	return ks_thread_tag() == wk;
}

void kmgr_async_exec_set_callback(nrt_async_exec_callback_t cb, void *params)
{
	ks_mutex_lock(&emu_cb_lock);
	emu_cb = cb;
	emu_cb_params = params;
	ks_mutex_unlock(&emu_cb_lock);
}

static void emu_callback(const emu_work_t *w, uint32_t vnc, NRT_STATUS status)
{
	nrt_async_exec_callback_t cb;
	void *params;

	ks_mutex_lock(&emu_cb_lock);
	cb = emu_cb;
	params = emu_cb_params;
	ks_mutex_unlock(&emu_cb_lock);
	if (cb)
		cb(params, w->h_nn, vnc, w->tracking_id, status);
}

NRT_STATUS kmgr_async_exec_init(uint32_t queue_depth, kmgr_async_exec_worker_threads_t **out)
{
	kmgr_async_exec_worker_threads_t *p;

	if (!out)
		return NRT_INVALID;
	*out = NULL;
	p = kalloc(KFAULT_EMU_HOST_POOL, sizeof(*p));
	if (!p)
		return NRT_RESOURCE;
	for (uint32_t i = 0; i < EMU_MAX_NC; i++) {
		struct kmgr_async_exec_worker *w = &p->workers[i];

		w->idx = i;
		w->depth = queue_depth ? queue_depth : EMU_DEFAULT_QUEUE_DEPTH;
		ks_mutex_init(&w->lock);
		ks_cond_init(&w->cv);
	}
	emu_count(&emu_cnt.objects, 1);
	*out = p;
	return NRT_SUCCESS;
}

static emu_work_t *emu_async_pop(struct kmgr_async_exec_worker *wk)
{
	emu_work_t *w = wk->head;

	wk->head = w->next;
	if (!wk->head)
		wk->tail = NULL;
	wk->queued--;
	return w;
}

static NRT_STATUS emu_async_run(struct kmgr_async_exec_worker *wk, emu_work_t *w, bool cancel)
{
	NRT_STATUS status = NRT_FAILURE;

	if (!cancel)
		status = emu_exec_item(w, wk->idx, &wk->lock, &wk->cv, &wk->stop);
	emu_work_finish(w, status, cancel);
	emu_callback(w, wk->idx, status);
	return status;
}

static void *emu_async_main(void *arg)
{
	struct kmgr_async_exec_worker *wk = arg;

	ks_thread_tag_set(wk);
	ks_mutex_lock(&wk->lock);
	for (;;) {
		emu_work_t *w;
		NRT_STATUS status;
		bool cancel;

		while (!wk->head && !wk->stop)
			ks_cond_wait(&wk->cv, &wk->lock);
		if (!wk->head)
			break;
		w = emu_async_pop(wk);
		wk->running = w;
		cancel = w->cancelled || wk->stop;
		ks_mutex_unlock(&wk->lock);
		status = emu_async_run(wk, w, cancel);
		ks_mutex_lock(&wk->lock);
		wk->running = NULL;
		wk->completed = w->seq;
		wk->recent[w->seq % EMU_ASYNC_STATUS_RING].handle = w->seq;
		wk->recent[w->seq % EMU_ASYNC_STATUS_RING].status = status;
		emu_work_free(w);
		ks_cond_broadcast(&wk->cv);
	}
	ks_mutex_unlock(&wk->lock);
	return NULL;
}

void kmgr_async_exec_destroy(kmgr_async_exec_worker_threads_t *pool)
{
	if (!pool)
		return;
	for (uint32_t i = 0; i < EMU_MAX_NC; i++) {
		struct kmgr_async_exec_worker *wk = &pool->workers[i];
		bool started;

		ks_mutex_lock(&wk->lock);
		wk->stop = true;
		started = wk->started;
		ks_cond_broadcast(&wk->cv);
		ks_mutex_unlock(&wk->lock);
		if (started)
			ks_thread_join(&wk->thread, NULL);
		ks_cond_destroy(&wk->cv);
		ks_mutex_destroy(&wk->lock);
	}
	kfree(pool);
	emu_count(&emu_cnt.objects, -1);
}

kmgr_async_exec_worker_t *kmgr_async_exec_get_worker(kmgr_async_exec_worker_threads_t *pool,
                                                     uint32_t vtpb_idx)
{
	if (!pool || vtpb_idx >= EMU_MAX_NC)
		return NULL;
	return &pool->workers[vtpb_idx];
}

static NRT_STATUS emu_async_enqueue(struct kmgr_async_exec_worker *wk, emu_work_t *w,
                                    uint64_t *handle)
{
	NRT_STATUS rc = NRT_SUCCESS;

	ks_mutex_lock(&wk->lock);
	if (wk->stop)
		rc = NRT_CLOSED;
	else if (wk->queued >= wk->depth)
		rc = NRT_QUEUE_FULL;
	else if (!wk->started && ks_thread_create(&wk->thread, "emu-async", emu_async_main, wk))
		rc = NRT_RESOURCE;
	if (rc) {
		ks_mutex_unlock(&wk->lock);
		return rc;
	}
	wk->started = true;
	w->seq = ++wk->issued;
	*handle = w->seq; /* w is the worker's once the lock drops */
	if (wk->tail)
		wk->tail->next = w;
	else
		wk->head = w;
	wk->tail = w;
	wk->queued++;
	ks_atomic_add_quiet(&w->kmod->inflight, 1);
	emu_count(&emu_cnt.inflight, 1);
	emu_observe(EMU_EXEC_SUBMIT, w, NRT_SUCCESS);
	ks_cond_broadcast(&wk->cv);
	ks_mutex_unlock(&wk->lock);
	return NRT_SUCCESS;
}

NRT_STATUS kmgr_async_exec_add_work(kmgr_async_exec_worker_threads_t *pool, uint32_t h_nn,
                                    uint32_t vtpb_idx, kmgr_exec_resources_t *res, uint64_t *handle,
                                    uint64_t tracking_id)
{
	const virtual_core_t *vcore =
	    res && res->tdrv_resources ? res->tdrv_resources->vcore : NULL;
	uint32_t interned = 0;
	emu_work_t *w;
	NRT_STATUS rc;

	if (!pool || !handle || vtpb_idx >= emu_nc_count() || !vcore || vcore->vtpb_idx != vtpb_idx)
		vcore = NULL; /* emu_work_new releases res and answers NRT_INVALID */
	if (vcore && emu_dev.hooks.interned_model_id)
		interned = emu_dev.hooks.interned_model_id(h_nn);
	w = emu_work_new(vcore, res, h_nn, tracking_id, &rc);
	if (!w)
		return rc;
	w->interned_id = interned;
	rc = kfault_queue_full() ? NRT_QUEUE_FULL
	                         : emu_async_enqueue(&pool->workers[vtpb_idx], w, handle);
	if (rc) {
		emu_work_discard(w);
		return rc;
	}
	return NRT_SUCCESS;
}

NRT_STATUS kmgr_async_exec_poll(kmgr_async_exec_worker_t *worker, uint64_t handle)
{
	NRT_STATUS rc = NRT_SUCCESS;
	uint32_t slot = handle % EMU_ASYNC_STATUS_RING;

	if (!worker)
		return NRT_INVALID;
	ks_mutex_lock(&worker->lock);
	if (handle > worker->issued || (emu_on_worker(worker) && worker->completed < handle)) {
		ks_mutex_unlock(&worker->lock);
		klog_error("async poll: handle %llu was never issued or would wait for itself",
		           (unsigned long long)handle);
		return NRT_INVALID;
	}
	while (worker->completed < handle)
		ks_cond_wait(&worker->cv, &worker->lock);
	if (handle && worker->recent[slot].handle == handle)
		rc = worker->recent[slot].status;
	ks_mutex_unlock(&worker->lock);
	return rc;
}

NRT_STATUS kmgr_async_exec_model_stop(kmgr_async_exec_worker_t *worker, uint32_t h_nn,
                                      uint64_t *handle, bool *need_stop)
{
	uint64_t last = 0;

	if (!worker || !handle)
		return NRT_INVALID;
	ks_mutex_lock(&worker->lock);
	if (worker->running && worker->running->h_nn == h_nn)
		last = worker->running->seq;
	for (emu_work_t *w = worker->head; w; w = w->next) {
		if (w->h_nn != h_nn)
			continue;
		w->cancelled = true;
		last = w->seq;
	}
	ks_mutex_unlock(&worker->lock);
	*handle = last;
	if (need_stop)
		*need_stop = last != 0;
	return NRT_SUCCESS;
}

void kmgr_async_drain_queued_execs(kmgr_async_exec_worker_threads_t *pool, uint32_t vtpb_idx)
{
	struct kmgr_async_exec_worker *wk = kmgr_async_exec_get_worker(pool, vtpb_idx);

	if (!wk || emu_on_worker(wk))
		return;
	ks_mutex_lock(&wk->lock);
	while (wk->head || wk->running)
		ks_cond_wait(&wk->cv, &wk->lock);
	ks_mutex_unlock(&wk->lock);
}
