/*
 * async.c - the asynchronous surfaces of the public API: the implicit-async
 * completion callback, the explicit ("NRT 3.0") nrta_* calls, and a minimal
 * error tracker.
 *
 * The facade's explicit submit (kmgr_tpb_xu_schedule) reports each
 * execution's final status through an NRT_STATUS* that the device writes at
 * completion, so the pointer must outlive the call.  Every scheduled
 * execution gets a kalloc'd completion slot holding that status and its
 * sequence number, kept on the caller's error tracker (or, when err is NULL,
 * on an internal one).  A slot is released once nrta reports its sequence
 * completed; nrta_error_tracker_get_list turns the failed ones into
 * (seq_id, error_code) entries.  That is the whole tracker: it records
 * failures of executions scheduled with it, nothing else (no tensor
 * read/write/copy XUs exist here).
 *
 * Slots carry the runtime generation they were scheduled in: after
 * nrt_close every device thread is joined, so a slot of an older generation
 * is final and is released without asking the (new or absent) device.
 */
#include "base/kalloc.h"
#include "base/klog.h"
#include "emu/emu.h"
#include "kmgr/kmgr.h"
#include "nrt_internal.h"
#include "sched/ksched.h"

#include <nrt/nrt_async.h>
#include <nrt/nrt_experimental.h>

/* Sleep between completion probes while destroying a tracker. */
#define NRT_DRAIN_SLEEP_US 100

typedef struct nrt_exec_slot {
	struct nrt_exec_slot *next;
	nrta_seq_t seq;
	NRT_STATUS ret; /* written by the device at completion */
	int64_t gen;
} nrt_exec_slot_t;

struct nrta_error_tracker {
	uint32_t lnc;
	ks_mutex_t lock;
	nrt_exec_slot_t *pending;
	nrta_error_t *errors; /* what the last get_list returned */
	size_t n_errors;
	size_t cap;
};

static ks_atomic_t nrt_gen = KS_ATOMIC_INIT(1);

/* Executions scheduled with err == NULL: nobody reads their status. */
static nrta_error_tracker_t nrt_anon = {.lock = KS_MUTEX_INITIALIZER};

static ks_mutex_t nrt_cb_lock = KS_MUTEX_INITIALIZER;
static NRT_ASYNC_EXEC_STATUS_CALLBACK nrt_cb;
static void *nrt_cb_params;

/* ---- implicit async ---------------------------------------------------- */

/* Allowed in any state (the runtime applies it at every nrt_init), so a
 * program may register before nrt_init; the registration persists across
 * nrt_close until replaced. */
NRT_STATUS nrt_register_async_exec_callback(NRT_ASYNC_EXEC_STATUS_CALLBACK callback, void *params)
{
	ks_mutex_lock(&nrt_cb_lock);
	nrt_cb = callback;
	nrt_cb_params = params;
	/* counted in, so that a close does not close the device under it */
	if (nrt__enter_if_init()) {
		kmgr_async_exec_set_callback(callback, params);
		nrt__leave(NRT_SUCCESS);
	}
	ks_mutex_unlock(&nrt_cb_lock);
	return NRT_SUCCESS;
}

/* ---- completion slots -------------------------------------------------- */

/* Is s final?  A slot of an older runtime generation is: nrt_close joined
 * its device threads before it moved the generation on.  One of this
 * generation only the facade can tell, and only to a caller counted in
 * flight (live: nrt__enter), whom close waits for before it tears the
 * facade down; to anyone else it is not final yet, since close stores
 * CLOSED long before the device stops writing statuses (freeing such a
 * slot on CLOSED was a use after free the api_nrt target found:
 * corpus/regressions/api_nrt/nrt-reap-during-close). */
static bool nrt_slot_done(const nrt_exec_slot_t *s, bool live)
{
	bool done = false;

	if (s->gen != ks_atomic_load(&nrt_gen))
		return true;
	if (!live)
		return false;
	/* A sequence the device no longer knows cannot complete later either. */
	if (kmgr_xu_is_completed(s->seq, &done) != NRT_SUCCESS)
		return true;
	return done;
}

static NRT_STATUS nrt_record_error(nrta_error_tracker_t *t, const nrt_exec_slot_t *s)
{
	if (t->n_errors == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 8;
		nrta_error_t *e = krealloc(KFAULT_NRT_ERR_LIST, t->errors, cap * sizeof(*e));

		if (!e)
			return NRT_RESOURCE;
		t->errors = e;
		t->cap = cap;
	}
	t->errors[t->n_errors].seq_id = s->seq;
	t->errors[t->n_errors].error_code = (uint64_t)s->ret;
	t->n_errors++;
	return NRT_SUCCESS;
}

/* Release the completed slots of t (under t->lock), recording the failed
 * ones when record.  A slot whose error cannot be recorded stays pending.
 * live: the caller counts as in flight (nrt_slot_done). */
static NRT_STATUS nrt_reap(nrta_error_tracker_t *t, bool record, bool live)
{
	nrt_exec_slot_t **pp = &t->pending;
	NRT_STATUS rc = NRT_SUCCESS;

	while (*pp) {
		nrt_exec_slot_t *s = *pp;

		if (!nrt_slot_done(s, live)) {
			pp = &s->next;
			continue;
		}
		if (record && s->ret != NRT_SUCCESS) {
			rc = nrt_record_error(t, s);
			if (rc)
				break;
		}
		*pp = s->next;
		kfree(s);
	}
	return rc;
}

/* Wait for and release every slot of t (under t->lock); during a close,
 * until close has joined the device threads. */
static void nrt_drain(nrta_error_tracker_t *t)
{
	while (t->pending) {
		nrt_exec_slot_t *s = t->pending;
		bool live = nrt__enter_if_init(), done = nrt_slot_done(s, live);

		if (live)
			nrt__leave(NRT_SUCCESS);
		if (!done) {
			ks_usleep(NRT_DRAIN_SLEEP_US);
			continue;
		}
		t->pending = s->next;
		kfree(s);
	}
}

/* NULL too: the device's pair outlives a close, so skipping a NULL kept
 * while closed would bring the closed runtime's callback back. */
void nrt__async_on_init(void)
{
	ks_mutex_lock(&nrt_cb_lock);
	kmgr_async_exec_set_callback(nrt_cb, nrt_cb_params);
	ks_mutex_unlock(&nrt_cb_lock);
}

void nrt__async_on_close(void)
{
	ks_atomic_add(&nrt_gen, 1);
	ks_mutex_lock(&nrt_anon.lock);
	nrt_drain(&nrt_anon);
	ks_mutex_unlock(&nrt_anon.lock);
}

/* ---- explicit async ---------------------------------------------------- */

static NRT_STATUS nrt_schedule(nrt_model_t *model, const nrt_tensor_set_t *input,
                               nrt_tensor_set_t *output, nrta_error_tracker_t *t,
                               nrta_seq_t *req_sequence)
{
	nrt_exec_slot_t *s;
	nrta_seq_t seq = 0;
	nrt_model_t m;
	NRT_STATUS rc = nrt__model_resolve("nrta_execute_schedule", model, &m);

	if (rc)
		return rc;
	s = kalloc(KFAULT_NRT_EXEC_SLOT, sizeof(*s));
	if (!s)
		return NRT_RESOURCE;
	s->ret = NRT_SUCCESS;
	s->gen = ks_atomic_load(&nrt_gen);
	rc = kmgr_tpb_xu_schedule(m.start_nc, m.h_nn, input, output, &s->ret, &seq);
	if (rc) {
		kfree(s);
		return rc;
	}
	s->seq = seq;
	ks_mutex_lock(&t->lock);
	s->next = t->pending;
	t->pending = s;
	ks_mutex_unlock(&t->lock);
	*req_sequence = seq;
	return NRT_SUCCESS;
}

NRT_STATUS nrta_execute_schedule(nrt_model_t *model, const nrt_tensor_set_t *input,
                                 nrt_tensor_set_t *output, int queue, nrta_error_tracker_t *err,
                                 nrta_seq_t *req_sequence)
{
	NRT_STATUS rc = nrt__enter("nrta_execute_schedule");

	if (rc)
		return rc;
	if (!model || !input || !output || !req_sequence) {
		klog_error("nrta_execute_schedule: NULL argument");
		return nrt__leave(NRT_INVALID);
	}
	if (queue != 0) {
		klog_error("nrta_execute_schedule: queue %d, must be 0", queue);
		return nrt__leave(NRT_INVALID);
	}
	if (!err) {
		/* Bound the untracked slots by releasing the finished ones. */
		ks_mutex_lock(&nrt_anon.lock);
		nrt_reap(&nrt_anon, false, true);
		ks_mutex_unlock(&nrt_anon.lock);
	}
	return nrt__leave(nrt_schedule(model, input, output, err ? err : &nrt_anon, req_sequence));
}

NRT_STATUS nrta_is_completed(nrta_seq_t seq, bool *is_completed)
{
	NRT_STATUS rc = nrt__enter("nrta_is_completed");

	if (rc)
		return rc;
	if (!is_completed)
		return nrt__leave(NRT_INVALID);
	return nrt__leave(kmgr_xu_is_completed(seq, is_completed));
}

static NRT_STATUS nrt_check_lnc(uint32_t lnc)
{
	uint32_t visible;
	NRT_STATUS rc = nrt_get_visible_nc_count(&visible);

	if (rc)
		return rc;
	if (lnc >= visible) {
		klog_error("logical NeuronCore %u: %u are visible", lnc, visible);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

NRT_STATUS nrta_get_sequence(uint32_t lnc, nrta_xu_t xu, int queue, nrta_seq_t *seq)
{
	NRT_STATUS rc = nrt__enter("nrta_get_sequence");

	if (rc)
		return rc;
	if (!seq || queue != 0)
		return nrt__leave(NRT_INVALID);
	if (xu != NRTA_XU_COMPUTE) {
		klog_error("nrta_get_sequence: only NRTA_XU_COMPUTE is emulated (xu %d)", (int)xu);
		return nrt__leave(NRT_INVALID);
	}
	rc = nrt_check_lnc(lnc);
	if (rc)
		return nrt__leave(rc);
	/* One XU per core; the device numbers XUs like its visible cores. */
	return nrt__leave(kmgr_xu_get_compl_seq(lnc, seq));
}

/* ---- error tracker ----------------------------------------------------- */

NRT_STATUS nrta_error_tracker_create(uint32_t lnc_idx, nrta_error_tracker_t **error_tracker)
{
	nrta_error_tracker_t *t;
	NRT_STATUS rc = nrt__enter("nrta_error_tracker_create");

	if (rc)
		return rc;
	if (!error_tracker)
		return nrt__leave(NRT_INVALID);
	rc = nrt_check_lnc(lnc_idx);
	if (rc)
		return nrt__leave(rc);
	t = kalloc(KFAULT_NRT_ERR_TRACKER, sizeof(*t));
	if (!t)
		return nrt__leave(NRT_RESOURCE);
	if (ks_mutex_init(&t->lock)) {
		kfree(t);
		return nrt__leave(NRT_RESOURCE);
	}
	t->lnc = lnc_idx;
	*error_tracker = t;
	return nrt__leave(NRT_SUCCESS);
}

/* Works in every state: it waits for the tracker's executions still in
 * flight, so the device never writes into freed memory. */
void nrta_error_tracker_destroy(nrta_error_tracker_t *error_tracker)
{
	if (!error_tracker)
		return;
	ks_mutex_lock(&error_tracker->lock);
	nrt_drain(error_tracker);
	ks_mutex_unlock(&error_tracker->lock);
	ks_mutex_destroy(&error_tracker->lock);
	kfree(error_tracker->errors);
	kfree(error_tracker);
}

/* The failures completed since the previous call; the list belongs to the
 * tracker and stays valid until the next call or nrta_error_tracker_destroy. */
NRT_STATUS nrta_error_tracker_get_list(nrta_error_tracker_t *error_tracker,
                                       const nrta_error_t **list, size_t *error_count)
{
	NRT_STATUS rc;
	bool live;

	if (!error_tracker || !list || !error_count)
		return NRT_INVALID;
	live = nrt__enter_if_init();
	ks_mutex_lock(&error_tracker->lock);
	error_tracker->n_errors = 0;
	rc = nrt_reap(error_tracker, true, live);
	*list = error_tracker->errors;
	*error_count = error_tracker->n_errors;
	ks_mutex_unlock(&error_tracker->lock);
	if (live)
		nrt__leave(NRT_SUCCESS);
	return rc;
}
