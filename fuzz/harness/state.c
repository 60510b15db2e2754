/*
 * state.c - the harness's bookkeeping: the run's state (kh_state), the
 * model slots, the facade guard that keeps direct facade calls off a
 * close, the pending executions, and the counting, recording and checking
 * every operation ends with. */
#include <string.h>

#include "base/kfault.h"
#include "harness/state.h"
#include "kmgr/kmgr.h"

kh_state_t kh_state = {.lock = KS_MUTEX_INITIALIZER};

bool kh_get_slot(unsigned s, kh_slot_t *out)
{
	ks_mutex_lock(&kh_state.lock);
	*out = kh_state.slot[s];
	ks_mutex_unlock(&kh_state.lock);
	return out->used;
}

/* A model loaded into slot s (handle m for nrt_load's): the slot's
 * unloaded handle and stale id stay. */
static void kh_publish(unsigned s, uint32_t id, uint32_t start, const oracle_io_t *io,
                       oracle_placement_t place, nrt_model_t *m)
{
	kh_slot_t *sl = &kh_state.slot[s];

	ks_mutex_lock(&kh_state.lock);
	sl->used = true;
	sl->id = id;
	sl->start_nc = start;
	sl->io = io;
	sl->place = place;
	sl->m = m;
	ks_mutex_unlock(&kh_state.lock);
}

/* A load (by id or through nrt_load, handle m) succeeded with id h: the
 * oracle learns the id, and the slot gets the model with the start core
 * the facade reports and the placement the load asked for. */
void kh_keep_loaded(const kh_args_t *a, H_NN h, const oracle_io_t *io, nrt_model_t *m)
{
	uint32_t start = 0, cnt = 0;

	oracle_note_loaded(h.id);
	if (kmgr_get_nc_info(h, &start, &cnt) != NRT_SUCCESS)
		start = 0;
	kh_publish((unsigned)a->slot, h.id, start, io,
	           oracle_predict_placement(io, a->start, a->count), m);
}

/* A loaded model the harness can execute. */
bool kh_get_runnable(unsigned s, kh_slot_t *out)
{
	return kh_get_slot(s, out) && out->io->ok;
}

/* Model id left slot s (retired: through nrt_unload, whose handle must
 * stay dead; an unload by id leaves an nrt_load's record live). */
void kh_clear_slot_if(unsigned s, uint32_t id, bool retired)
{
	kh_slot_t *sl = &kh_state.slot[s];

	ks_mutex_lock(&kh_state.lock);
	/* whether or not the slot still holds it (another thread may have
	 * loaded over it): its queued executions may now be cancelled */
	if (kh_state.ngone < KH_MAX_GONE)
		kh_state.gone[kh_state.ngone++] = id;
	if (sl->used && sl->id == id) {
		sl->used = false;
		sl->stale = id;
		if (sl->m) {
			sl->old_m = sl->m;
			sl->old_id = id;
			sl->old_retired = retired;
			sl->m = NULL;
		}
	}
	ks_mutex_unlock(&kh_state.lock);
}

/*
 * Direct facade calls and nrt_close never overlap: a framework that calls
 * the facade by id stops before the runtime closes (the facade has no
 * closed state; kmgr_destroy frees its registry), so every op that calls
 * the facade directly counts itself in, the nrt_close op waits for the
 * count to drain, and after it those ops do nothing.  Public calls are not
 * held: racing close is what they are for.  Quiet atomics: no scheduling
 * point, so programs without a close run exactly as before.
 */
bool kh_facade_enter(void)
{
	ks_atomic_add_quiet(&kh_state.facade, 1);
	if (!ks_atomic_load_quiet(&kh_state.closing))
		return true;
	ks_atomic_add_quiet(&kh_state.facade, -1);
	return false;
}

void kh_facade_leave(void)
{
	ks_atomic_add_quiet(&kh_state.facade, -1);
}

static kh_pend_t *kh_pend_get(void)
{
	kh_pend_t *pe = NULL;

	ks_mutex_lock(&kh_state.lock);
	for (unsigned i = 0; i < KH_MAX_PENDING && !pe; i++)
		if (!kh_state.pend[i].used) {
			pe = &kh_state.pend[i];
			memset(pe, 0, sizeof(*pe));
			pe->used = true;
			if (i >= kh_state.pend_hw)
				kh_state.pend_hw = i + 1;
		}
	ks_mutex_unlock(&kh_state.lock);
	return pe;
}

void kh_pend_put(kh_pend_t *pe)
{
	kh_iob_free(&pe->b);
	ks_mutex_lock(&kh_state.lock);
	pe->used = false;
	ks_mutex_unlock(&kh_state.lock);
}

/* A pending entry with the tensors of an execution of slot s. */
kh_pend_t *kh_pend_build(const kh_slot_t *s, unsigned op, int in, int out)
{
	kh_pend_t *pe = kh_pend_get();

	if (!pe)
		return NULL;
	if (kh_iob_build(&pe->b, s->io, op, in, out, (int)s->start_nc)) {
		kh_pend_put(pe);
		return NULL;
	}
	return pe;
}

void kh_done(unsigned op, const char *what, NRT_STATUS rc)
{
	ks_atomic_add_quiet(&kh_state.ops_run, 1);
	if (rc == NRT_SUCCESS)
		ks_atomic_add_quiet(&kh_state.ops_ok, 1);
	if (kh_state.c->hooks.op_done)
		kh_state.c->hooks.op_done(kh_state.c->hooks.ctx, op, what, rc);
}

/* The reference model's verdict where it has one (single-threaded, no
 * fault fired since the op began); the argument contract in every run. */
void kh_check(unsigned op, const char *what, NRT_STATUS rc, oracle_expect_t e, uint64_t fired0)
{
	oracle_check_status(op, what, rc, e, kh_state.reference && kfault_fired() == fired0,
	                    kh_state.faults);
}

/* An op on model id that began at t0 returned rc: counted, recorded in
 * the oracle's history, checked.  Returns the tick it ended at. */
uint64_t kh_finish(unsigned op, const char *what, oracle_rec_t rec, uint32_t id, uint64_t t0,
                   NRT_STATUS rc, oracle_expect_t e, uint64_t fired0)
{
	uint64_t t1 = oracle_tick();

	kh_done(op, what, rc);
	oracle_record(op, rec, what, id, t0, t1, rc);
	kh_check(op, what, rc, e, fired0);
	return t1;
}

/* Begins op on a model slot (runnable: one the harness can execute);
 * false when the slot holds no such model. */
bool kh_begin(kh_call_t *c, unsigned op, const char *what, int slot, bool runnable)
{
	c->op = op;
	c->what = what;
	c->fired0 = kfault_fired();
	if (!(runnable ? kh_get_runnable((unsigned)slot, &c->s)
	               : kh_get_slot((unsigned)slot, &c->s)))
		return false;
	c->t0 = oracle_tick();
	return true;
}

/* The library returned rc: counted, recorded, checked against e. */
void kh_end(const kh_call_t *c, oracle_rec_t rec, NRT_STATUS rc, oracle_expect_t e)
{
	kh_finish(c->op, c->what, rec, c->s.id, c->t0, rc, e, c->fired0);
}
