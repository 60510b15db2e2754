/*
 * nrt_model.c - the public API on a model (api_nrt): nrt_load,
 * nrt_unload, nrt_execute(_repeat) and nrta_execute_schedule through the
 * handle, live or retired, with the close checked by the lifecycle
 * oracle. */
#include <nrt/nrt.h>
#include <nrt/nrt_async.h>

#include "base/kfault.h"
#include "harness/state.h"
#include "nrt/nrt_kmgr.h" /* the facade id behind an nrt_load handle */

/* The handle an nrt op uses: the slot's live one, or (old) the one its
 * last unload left behind; false when there is none. */
bool kh_get_handle(const kh_args_t *a, kh_slot_t *s, nrt_model_t **m)
{
	kh_get_slot((unsigned)a->slot, s);
	*m = a->old ? s->old_m : (s->used ? s->m : NULL);
	return *m != NULL;
}

/* What an op through handle m of slot s may answer: a retired handle
 * only INVALID_HANDLE; a handle whose model went by id anything; the live
 * one e. */
oracle_expect_t kh_handle_expect(const kh_args_t *a, const kh_slot_t *s, oracle_expect_t e)
{
	if (!a->old)
		return e;
	return s->old_retired ? oracle_predict_stale() : (oracle_expect_t){0};
}

/* A public call over [t0, now] answered rc: counted; NRT_CLOSED checked
 * against the close and nothing more (returns false); else recorded and
 * checked against e (returns true). */
bool kh_nrt_end(unsigned op, const char *what, oracle_rec_t rec, uint32_t id, uint64_t t0,
                NRT_STATUS rc, oracle_expect_t e, uint64_t fired0)
{
	uint64_t t1 = oracle_tick();

	kh_done(op, what, rc);
	if (oracle_check_lifecycle(op, what, rc, t0, t1))
		return false;
	oracle_record(op, rec, what, id, t0, t1, rc);
	kh_check(op, what, rc, e, fired0);
	return true;
}

/* A retired handle answered success: the record was found live again. */
void kh_check_retired(unsigned op, const char *what, const kh_args_t *a, const kh_slot_t *s,
                      NRT_STATUS rc)
{
	if (a->old && s->old_retired && rc == NRT_SUCCESS)
		oracle_fail("retired-handle", "op %u %s: the handle of unloaded model %u accepted",
		            op, what, s->old_id);
}

void kh_nrt_load(unsigned op, unsigned thread, const kh_args_t *a)
{
	const kh_model_t *km = &kh_state.c->models[a->model];
	uint64_t fired0 = kfault_fired(), t0;
	nrt_model_t *m = NULL;
	H_NN h = {0};
	NRT_STATUS rc;
	bool seen;

	(void)thread;
	t0 = oracle_tick();
	rc = nrt_load(km->bytes, km->len, a->start, a->count, &m);
	/* the id and the placement come from the facade, which a close after
	 * nrt_load returned takes away, and the model with it: nothing to
	 * keep then.  Counted in, close waits for this op: the handle is live */
	if (rc == NRT_SUCCESS && !kh_facade_enter()) {
		kh_done(op, "nrt_load", rc);
		return;
	}
	if (rc == NRT_SUCCESS && nrt_model_get_nn(m, &h) != NRT_SUCCESS)
		oracle_fail("nrt-handle", "op %u: nrt_load's handle has no facade model", op);
	seen = kh_nrt_end(op, "nrt_load", ORACLE_LOAD, h.id, t0, rc,
	                  oracle_predict_load(&km->io, kh_state.c->nc, a->start, a->count), fired0);
	if (seen && rc == NRT_SUCCESS && h.id)
		kh_keep_loaded(a, h, &km->io, m);
	if (rc == NRT_SUCCESS)
		kh_facade_leave();
}

void kh_nrt_unload(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	nrt_model_t *m;
	NRT_STATUS rc;
	uint32_t id;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_handle(a, &s, &m))
		return;
	id = a->old ? s.old_id : s.id;
	t0 = oracle_tick();
	rc = nrt_unload(m);
	if (!kh_nrt_end(op, "nrt_unload", ORACLE_UNLOAD, id, t0, rc,
	                kh_handle_expect(a, &s, oracle_predict_ok()), fired0))
		return;
	kh_check_retired(op, "nrt_unload", a, &s, rc);
	if (rc || a->old)
		return;
	oracle_note_unloaded(id, false);
	kh_clear_slot_if((unsigned)a->slot, id, true);
}

void kh_nrt_exec(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	oracle_expect_t e;
	kh_pend_t *pe;
	NRT_STATUS rc;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_runnable((unsigned)a->slot, &s) || !s.m ||
	    !(pe = kh_pend_build(&s, op, a->in, a->out)))
		return;
	e = oracle_predict_exec(s.io, kh_place(a->in, s.io->n_in), kh_place(a->out, s.io->n_out),
	                        kh_state.c->async);
	t0 = oracle_tick();
	rc = a->repeat > 1 ? nrt_execute_repeat(s.m, pe->b.in, pe->b.out, a->repeat)
	                   : nrt_execute(s.m, pe->b.in, pe->b.out);
	if (kh_state.c->async)
		kh_anon_submitted(a->repeat, rc, t0);
	/* the outputs are read through the public API, which a close in
	 * between refuses: the check holds close off as a facade op does */
	if (kh_nrt_end(op, "nrt_exec", ORACLE_EXEC, s.id, t0, rc, e, fired0) && rc == NRT_SUCCESS &&
	    !kh_state.c->async && kh_facade_enter()) {
		kh_iob_verify(&pe->b, op);
		kh_facade_leave();
	}
	/* implicit async: some of a repeat may be queued whatever the status
	 * (QUEUE_FULL after two), under job id 0, which no callback names:
	 * its status and model kept for the check at quiescence
	 * (kh_finish_pending), the tensors wait for it */
	if (kh_state.c->async) {
		pe->op = op;
		pe->model = s.id;
		pe->ret = rc;
		return;
	}
	kh_pend_put(pe);
}

/* nrta_execute_schedule of pe's sets on s's handle with tracker t (NULL:
 * the runtime's anonymous one), its status checked as name against the
 * faults fired since fired0; true when it was scheduled, pe then marked
 * so. */
static bool kh_schedule_checked(unsigned op, const char *name, const kh_args_t *a,
                                const kh_slot_t *s, kh_pend_t *pe, nrta_error_tracker_t *t,
                                uint64_t fired0)
{
	uint64_t t0 = oracle_tick();
	NRT_STATUS rc = nrta_execute_schedule(s->m, pe->b.in, pe->b.out, 0, t, &pe->seq);

	if (!kh_nrt_end(op, name, ORACLE_READ, s->id, t0, rc,
	                oracle_predict_exec(s->io, kh_place(a->in, s->io->n_in),
	                                    kh_place(a->out, s->io->n_out), true),
	                fired0) ||
	    rc)
		return false;
	pe->op = op;
	pe->sched = true;
	return true;
}

/* nrta_execute_schedule on the handle: as kh_schedule, off in implicit
 * async runs unless async_mix. */
void kh_nrt_schedule(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired();
	kh_pend_t *pe;
	kh_slot_t s;

	if (kh_state.c->async && !kh_state.c->async_mix)
		return;
	if (!kh_get_runnable((unsigned)a->slot, &s) || !s.m ||
	    !(pe = kh_pend_build(&s, op, a->in, a->out)))
		return;
	if (!kh_schedule_checked(op, "nrt_schedule", a, &s, pe, NULL, fired0)) {
		kh_pend_put(pe);
		return;
	}
	pe->unchecked = true; /* the status went to the anonymous tracker */
	if (kh_state.nseq[thread] < KH_MAX_SEQS)
		kh_state.seqs[thread][kh_state.nseq[thread]++] = pe->seq;
}

/* A logical core no device has: nrta_error_tracker_create refuses it. */
#define KH_BOGUS_LNC 0x7fffffffu

/* nrta_error_tracker_get_list on pe's tracker, checked by the oracle;
 * false when it gave no list. */
bool kh_tracker_list(kh_pend_t *pe, bool may_fail)
{
	const nrta_error_t *list = NULL;
	size_t n = 0;
	NRT_STATUS rc = nrta_error_tracker_get_list(pe->tracker, &list, &n);

	oracle_check_error_list(pe->op, pe->seq, rc, list, n, may_fail, kh_state.faults,
	                        &pe->reported);
	return rc == NRT_SUCCESS;
}

/* nrta_error_tracker_create on core 0 (bogus: on one no device has), then
 * on the slot's handle an execution scheduled with the tracker (off in
 * implicit async runs unless async_mix, as kh_nrt_schedule) and its list
 * asked for at once, while the execution may still run; the tracker stays
 * with the execution until quiescence, where kh_finish_pending asks again
 * and destroys it (docs/api-contract.md, "Error trackers"). */
void kh_nrt_tracker(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0 = oracle_tick();
	nrta_error_tracker_t *t = NULL;
	kh_pend_t *pe = NULL;
	NRT_STATUS rc;
	kh_slot_t s;

	rc = nrta_error_tracker_create(a->bogus ? KH_BOGUS_LNC : 0, &t);
	kh_done(op, "nrt_tracker_create", rc);
	if (!oracle_check_lifecycle(op, "nrt_tracker_create", rc, t0, oracle_tick()))
		kh_check(op, "nrt_tracker_create", rc, oracle_predict_tracker(a->bogus), fired0);
	if (rc != NRT_SUCCESS)
		return;
	if ((kh_state.c->async && !kh_state.c->async_mix) ||
	    !kh_get_runnable((unsigned)a->slot, &s) || !s.m ||
	    !(pe = kh_pend_build(&s, op, a->in, a->out))) {
		nrta_error_tracker_destroy(t);
		return;
	}
	if (!kh_schedule_checked(op, "nrt_tracker_schedule", a, &s, pe, t, kfault_fired())) {
		nrta_error_tracker_destroy(t);
		kh_pend_put(pe);
		return;
	}
	pe->tracker = t;
	pe->model = s.id;
	/* another thread may unload the model or close under it */
	kh_tracker_list(pe, kh_state.faults || kh_state.c->nthreads > 1);
	if (kh_state.nseq[thread] < KH_MAX_SEQS)
		kh_state.seqs[thread][kh_state.nseq[thread]++] = pe->seq;
}
