/*
 * xu.c - the sync XU: one per core, a bounded FIFO of work items and one
 * worker thread (started on the first submission) that runs each item
 * through the state machine and publishes its completion.  kmgr_sync_exec
 * polls the item's completion flag; explicit async (tpb_xu_schedule_exec)
 * shares the queue and the sequence counter and is polled by sequence
 * number: (tail & 0xFFFFFFFFFFFF) | (xu_id << 48).
 */
#include "emu/emu_int.h"

void emu_xu_init(struct tpb_xu *xu, uint32_t id)
{
	xu->id = id;
	ks_mutex_init(&xu->lock);
	ks_cond_init(&xu->cv);
	ks_atomic_store(&xu->issued, 0);
	ks_atomic_store(&xu->completed, 0);
}

static emu_work_t *emu_xu_pop(struct tpb_xu *xu)
{
	emu_work_t *w = xu->head;

	xu->head = w->next;
	if (!xu->head)
		xu->tail = NULL;
	xu->queued--;
	return w;
}

/* Completion, in two steps.  First, before the item leaves the in-flight
 * count: the explicit-async status and the XU's completed sequence number,
 * so that anyone who sees in-flight reach zero also sees the sequence
 * complete (the fuzz oracle found the other order: "lost-completion").
 * Then, after the item is finished, under the lock: the sync caller's flag
 * (it frees its own item) or the explicit item's free. */
static void emu_xu_complete(struct tpb_xu *xu, emu_work_t *w, NRT_STATUS status)
{
	if (!w->sync && w->exec_ret)
		*w->exec_ret = status;
	ks_atomic_store(&xu->completed, (int64_t)w->seq);
}

static void emu_xu_publish(emu_work_t *w, NRT_STATUS status)
{
	if (w->sync) {
		w->status = status;
		ks_atomic_store(&w->done, 1);
	} else {
		emu_work_free(w);
	}
}

static void *emu_xu_main(void *arg)
{
	struct tpb_xu *xu = arg;

	ks_mutex_lock(&xu->lock);
	for (;;) {
		emu_work_t *w;
		NRT_STATUS status;
		bool closing;

		while (!xu->head && !xu->stop)
			ks_cond_wait(&xu->cv, &xu->lock);
		if (!xu->head)
			break;
		w = emu_xu_pop(xu);
		xu->running = w;
		closing = xu->stop;
		ks_mutex_unlock(&xu->lock);
		if (closing)
			status = NRT_CLOSED; /* emu_close drops what never started */
		else
			status = emu_exec_item(w, xu->id, &xu->lock, &xu->cv, &xu->stop);
		emu_xu_complete(xu, w, status);
		emu_work_finish(w, status, closing);
		/* Under the lock: model unstage looks at running, which must
		 * not outlive the item. */
		ks_mutex_lock(&xu->lock);
		xu->running = NULL;
		emu_xu_publish(w, status);
		ks_cond_broadcast(&xu->cv);
	}
	ks_mutex_unlock(&xu->lock);
	return NULL;
}

/* Accept w (or answer why not); *seq gets its sequence number. */
static NRT_STATUS emu_xu_submit(struct tpb_xu *xu, emu_work_t *w, uint64_t *seq)
{
	NRT_STATUS rc = NRT_SUCCESS;

	if (kfault_queue_full())
		return NRT_QUEUE_FULL;
	ks_mutex_lock(&xu->lock);
	if (xu->stop)
		rc = NRT_CLOSED;
	else if (xu->queued >= emu_dev.cfg.xu_queue_depth)
		rc = NRT_QUEUE_FULL;
	else if (!xu->started && ks_thread_create(&xu->thread, "emu-xu", emu_xu_main, xu))
		rc = NRT_RESOURCE;
	if (rc) {
		ks_mutex_unlock(&xu->lock);
		return rc;
	}
	xu->started = true;
	w->seq = (uint64_t)ks_atomic_add(&xu->issued, 1) + 1;
	*seq = w->seq;
	if (xu->tail)
		xu->tail->next = w;
	else
		xu->head = w;
	xu->tail = w;
	xu->queued++;
	ks_atomic_add_quiet(&w->kmod->inflight, 1);
	emu_count(&emu_cnt.inflight, 1);
	emu_observe(EMU_EXEC_SUBMIT, w, NRT_SUCCESS);
	ks_cond_broadcast(&xu->cv);
	ks_mutex_unlock(&xu->lock);
	return NRT_SUCCESS;
}

void emu_xu_shutdown(struct tpb_xu *xu)
{
	bool started;

	ks_mutex_lock(&xu->lock);
	xu->stop = true;
	started = xu->started;
	ks_cond_broadcast(&xu->cv);
	ks_mutex_unlock(&xu->lock);
	if (started)
		ks_thread_join(&xu->thread, NULL);
	ks_cond_destroy(&xu->cv);
	ks_mutex_destroy(&xu->lock);
}

tpb_xu_t *tpb_xu_get_by_vcore(const virtual_core_t *vcore)
{
	if (!emu_is_open() || !vcore || !vcore->num_tpbs || !vcore->tpbs[0])
		return NULL;
	return &vcore->tpbs[0]->xu;
}

uint32_t tpb_xu_id(const tpb_xu_t *xu)
{
	return xu ? xu->id : UINT32_MAX;
}

static const virtual_core_t *emu_res_vcore(const kmgr_exec_resources_t *res)
{
	return res && res->tdrv_resources ? res->tdrv_resources->vcore : NULL;
}

NRT_STATUS kmgr_sync_exec(const virtual_core_t *vcore, kmgr_exec_resources_t *res,
                          uint64_t tracking_id)
{
	tpb_xu_t *xu = tpb_xu_get_by_vcore(vcore);
	emu_work_t *w;
	NRT_STATUS rc;
	uint64_t seq;

	w = emu_work_new(xu ? vcore : NULL, res, res ? res->h_nn : 0, tracking_id, &rc);
	if (!w)
		return rc;
	w->sync = true;
	rc = emu_xu_submit(xu, w, &seq);
	if (rc) {
		emu_work_discard(w);
		return rc;
	}
	/* Completion is polled, never signalled (runtime-facts.md): yield for
	 * the short executions, then sleep between probes. */
	for (uint32_t probes = 0; !ks_atomic_load(&w->done); probes++) {
		if (probes < EMU_POLL_YIELDS)
			ks_yield();
		else
			ks_usleep(EMU_POLL_US);
	}
	rc = w->status;
	emu_work_free(w);
	return rc;
}

NRT_STATUS tpb_xu_schedule_exec(tpb_xu_t *xu, uint32_t repeat, uint32_t h_nn,
                                kmgr_exec_resources_t *res, uint64_t trace_id, NRT_STATUS *exec_ret,
                                nrta_seq_t *seq)
{
	const virtual_core_t *vcore = emu_res_vcore(res);
	emu_work_t *w;
	NRT_STATUS rc;
	uint64_t n;

	(void)repeat;
	if (!xu || !seq || !emu_is_open() || !vcore || tpb_xu_get_by_vcore(vcore) != xu)
		vcore = NULL; /* emu_work_new releases res and answers NRT_INVALID */
	w = emu_work_new(vcore, res, h_nn, trace_id, &rc);
	if (!w)
		return rc;
	w->exec_ret = exec_ret;
	rc = emu_xu_submit(xu, w, &n);
	if (rc) {
		emu_work_discard(w);
		return rc;
	}
	*seq = (n & EMU_SEQ_MASK) | ((uint64_t)xu->id << NRTA_SEQ_XU_SHIFT);
	return NRT_SUCCESS;
}

static bool emu_xu_has_model(struct tpb_xu *xu, H_MODEL h)
{
	if (xu->running && xu->running->h_model == h)
		return true;
	for (emu_work_t *w = xu->head; w; w = w->next)
		if (w->h_model == h)
			return true;
	return false;
}

NRT_STATUS tpb_xu_model_unstage(tpb_xu_t *xu, H_MODEL h_model)
{
	if (!xu || !emu_is_open())
		return NRT_INVALID;
	ks_mutex_lock(&xu->lock);
	while (emu_xu_has_model(xu, h_model))
		ks_cond_wait(&xu->cv, &xu->lock);
	ks_mutex_unlock(&xu->lock);
	return NRT_SUCCESS;
}

static struct tpb_xu *emu_xu_by_id(uint64_t id)
{
	tpb_t *t = id < EMU_MAX_NC ? emu_tpb((uint32_t)id) : NULL;

	return t ? &t->xu : NULL;
}

NRT_STATUS kmgr_xu_get_compl_seq(uint32_t xu_id, nrta_seq_t *seq)
{
	struct tpb_xu *xu = emu_xu_by_id(xu_id);

	if (!xu || !seq)
		return NRT_INVALID;
	*seq = ((uint64_t)ks_atomic_load(&xu->completed) & EMU_SEQ_MASK) |
	       ((uint64_t)xu_id << NRTA_SEQ_XU_SHIFT);
	return NRT_SUCCESS;
}

NRT_STATUS kmgr_xu_is_completed(nrta_seq_t seq, bool *done)
{
	struct tpb_xu *xu = emu_xu_by_id(seq >> NRTA_SEQ_XU_SHIFT);
	uint64_t n = seq & EMU_SEQ_MASK;

	if (!xu || !done)
		return NRT_INVALID;
	if (!n || n > (uint64_t)ks_atomic_load(&xu->issued))
		return NRT_INVALID;
	*done = n <= (uint64_t)ks_atomic_load(&xu->completed);
	return NRT_SUCCESS;
}
