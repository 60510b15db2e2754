/*
 * harness.c - the operations of harness.h and the run around them.
 *
 * Model operations go to the facade by id (kmgr_*), so that threads can
 * race an unload against an execution without the harness itself using a
 * freed nrt_model_t; tensors and the explicit-async polls go through the
 * public API.  Every check is the oracle's; the harness's own bookkeeping
 * (slots, pending executions, job ids) takes its lock, whose scheduling
 * points are part of the schedule the decision bytes drive.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nrt/nrt.h>
#include <nrt/nrt_async.h>

#include "base/kalloc.h"
#include "base/kattr.h"
#include "base/kfault.h"
#include "emu/emu.h"
#include "harness/harness.h"
#include "kmgr/kmgr.h"
#include "nrt/nrt_kmgr.h" /* the facade id behind an nrt_load handle */
#include "sched/kctl.h"

#define KH_MAX_IO      ORACLE_MAX_IO
#define KH_MAX_PENDING 160
#define KH_MAX_SEQS    8
#define KH_MAX_JOBS    1024
#define KH_BOGUS_SEQ   ((nrta_seq_t)0x7fff << NRTA_SEQ_XU_SHIFT | 0x123)

/* The tensors of one execution: a model's inputs then outputs. */
typedef struct kh_iob {
	const oracle_io_t *io;
	uint32_t seed;
	nrt_tensor_t *t[KH_MAX_IO];
	void *buf[KH_MAX_IO];     /* attached buffers of VIRT tensors */
	uint8_t *data[KH_MAX_IO]; /* what each input holds */
	nrt_tensor_set_t *in, *out;
} kh_iob_t;

/* An execution whose tensors stay in use after its op returned. */
typedef struct kh_pend {
	bool used, sched;
	bool unchecked; /* nrt_schedule: no status to verify the outputs by */
	unsigned op;
	uint64_t job_first, job_last;
	nrta_seq_t seq;
	NRT_STATUS ret; /* written by the device at completion */
	kh_iob_t b;
} kh_pend_t;

typedef struct kh_slot {
	bool used;
	uint32_t id, start_nc, stale;
	const oracle_io_t *io;
	oracle_placement_t place; /* what its load asked for */
	nrt_model_t *m;           /* nrt_load's handle (NULL: loaded by id) */
	nrt_model_t *old_m;       /* the handle of the slot's last unloaded model */
	uint32_t old_id;
	bool old_retired; /* old_m's nrt_unload succeeded: it must stay dead */
} kh_slot_t;

typedef struct kh_tslot {
	nrt_tensor_t *t;
	void *buf;
} kh_tslot_t;

static struct {
	const kh_config_t *c;
	bool reference;  /* statuses predicted exactly */
	bool faults;     /* a fault may fire: error statuses are not findings */
	ks_mutex_t lock; /* slots and pend reservation */
	kh_slot_t slot[KPROG_SLOTS];
	kh_pend_t pend[KH_MAX_PENDING];
	kh_tslot_t ts[KPROG_MAX_THREADS][KPROG_TSLOTS];
	nrta_seq_t seqs[KPROG_MAX_THREADS][KH_MAX_SEQS];
	unsigned nseq[KPROG_MAX_THREADS];
	unsigned pend_hw; /* pend[] entries ever used this run */
	ks_atomic_t ops_run, ops_ok, checked, next_job;
	ks_atomic_t job_hw; /* the highest job id a callback reported */
	ks_atomic_t job_done[KH_MAX_JOBS], job_ok[KH_MAX_JOBS];
	ks_atomic_t facade;        /* ops in a direct facade call (kh_facade_enter) */
	ks_atomic_t closing;       /* an nrt_close op began: no more direct facade calls */
	ks_atomic_t close_faulted; /* a fault fired inside an nrt_close op */
} H = {.lock = KS_MUTEX_INITIALIZER};

/* ---- tensors of one execution ----------------------------------------- */

/* No coverage counters on byte loops over tensor data (KATTR_NO_COVERAGE). */
KATTR_NO_COVERAGE static void kh_fill_pattern(uint8_t *p, uint64_t n, uint8_t first, uint8_t step)
{
	for (uint64_t k = 0; k < n; k++)
		p[k] = (uint8_t)(first + k * step);
}

static void kh_iob_free(kh_iob_t *b)
{
	if (b->in)
		nrt_destroy_tensor_set(&b->in);
	if (b->out)
		nrt_destroy_tensor_set(&b->out);
	for (unsigned i = 0; i < KH_MAX_IO; i++) {
		if (b->t[i])
			nrt_tensor_free(&b->t[i]);
		free(b->buf[i]);
		free(b->data[i]);
	}
	memset(b, 0, sizeof(*b));
}

static NRT_STATUS kh_make_tensor(kh_iob_t *b, unsigned i, int place, int nc)
{
	uint64_t size = b->io->size[i];
	const char *name = b->io->name[i];
	NRT_STATUS rc;

	if (place == KPROG_PLACE_DEV || place == KPROG_PLACE_HOST)
		return nrt_tensor_allocate(place == KPROG_PLACE_DEV ? NRT_TENSOR_PLACEMENT_DEVICE
		                                                    : NRT_TENSOR_PLACEMENT_HOST,
		                           nc, size, name, &b->t[i]);
	rc = nrt_tensor_allocate_empty(name, &b->t[i]);
	if (rc)
		return rc;
	b->buf[i] = calloc(1, size);
	if (!b->buf[i])
		abort();
	return nrt_tensor_attach_buffer(b->t[i], b->buf[i], size);
}

static NRT_STATUS kh_fill_input(kh_iob_t *b, unsigned i)
{
	uint64_t size = b->io->size[i];

	b->data[i] = malloc(size);
	if (!b->data[i])
		abort();
	kh_fill_pattern(b->data[i], size, (uint8_t)(b->seed * 13u + i * 31u), 7);
	return nrt_tensor_write(b->t[i], b->data[i], 0, size);
}

/* One side (inputs or outputs); MISSING leaves out its first tensor, the
 * bind error edge. */
static NRT_STATUS kh_build_side(kh_iob_t *b, bool input, int place, int nc)
{
	uint32_t from = input ? 0 : b->io->n_in;
	uint32_t n = input ? b->io->n_in : b->io->n_out;
	nrt_tensor_set_t *set = input ? b->in : b->out;
	NRT_STATUS rc = NRT_SUCCESS;

	for (uint32_t j = 0; j < n && rc == NRT_SUCCESS; j++) {
		unsigned i = from + j;

		if (place == KPROG_PLACE_MISSING && j == 0)
			continue;
		rc = kh_make_tensor(b, i, place == KPROG_PLACE_MISSING ? KPROG_PLACE_DEV : place,
		                    nc);
		if (rc == NRT_SUCCESS && input)
			rc = kh_fill_input(b, i);
		if (rc == NRT_SUCCESS)
			rc = nrt_add_tensor_to_tensor_set(set, b->io->name[i], b->t[i]);
	}
	return rc;
}

static NRT_STATUS kh_iob_build(kh_iob_t *b, const oracle_io_t *io, uint32_t seed, int in_place,
                               int out_place, int nc)
{
	NRT_STATUS rc;

	memset(b, 0, sizeof(*b));
	b->io = io;
	b->seed = seed;
	rc = nrt_allocate_tensor_set(&b->in);
	if (rc == NRT_SUCCESS)
		rc = nrt_allocate_tensor_set(&b->out);
	if (rc == NRT_SUCCESS)
		rc = kh_build_side(b, true, in_place, nc);
	if (rc == NRT_SUCCESS)
		rc = kh_build_side(b, false, out_place, nc);
	if (rc)
		kh_iob_free(b);
	return rc;
}

/* The oracle compares the outputs with the formula; a missing input
 * leaves nothing to compare against. */
static void kh_iob_verify(kh_iob_t *b, unsigned op)
{
	const oracle_io_t *io = b->io;

	for (uint32_t i = 0; i < io->n_in; i++)
		if (!b->data[i])
			return;
	oracle_check_outputs(op, io, (const uint8_t *const *)b->data, b->t + io->n_in);
	ks_atomic_add_quiet(&H.checked, 1);
}

/* ---- bookkeeping -------------------------------------------------------- */

static bool kh_get_slot(unsigned s, kh_slot_t *out)
{
	ks_mutex_lock(&H.lock);
	*out = H.slot[s];
	ks_mutex_unlock(&H.lock);
	return out->used;
}

/* A model loaded into slot s (handle m for nrt_load's): the slot's
 * unloaded handle and stale id stay. */
static void kh_publish(unsigned s, uint32_t id, uint32_t start, const oracle_io_t *io,
                       oracle_placement_t place, nrt_model_t *m)
{
	kh_slot_t *sl = &H.slot[s];

	ks_mutex_lock(&H.lock);
	sl->used = true;
	sl->id = id;
	sl->start_nc = start;
	sl->io = io;
	sl->place = place;
	sl->m = m;
	ks_mutex_unlock(&H.lock);
}

/* A load (by id or through nrt_load, handle m) succeeded with id h: the
 * oracle learns the id, and the slot gets the model with the start core
 * the facade reports and the placement the load asked for. */
static void kh_keep_loaded(const kh_args_t *a, H_NN h, const oracle_io_t *io, nrt_model_t *m)
{
	uint32_t start = 0, cnt = 0;

	oracle_note_loaded(h.id);
	if (kmgr_get_nc_info(h, &start, &cnt) != NRT_SUCCESS)
		start = 0;
	kh_publish((unsigned)a->slot, h.id, start, io,
	           oracle_predict_placement(io, a->start, a->count), m);
}

/* A loaded model the harness can execute. */
static bool kh_get_runnable(unsigned s, kh_slot_t *out)
{
	return kh_get_slot(s, out) && out->io->ok;
}

/* Model id left slot s (retired: through nrt_unload, whose handle must
 * stay dead; an unload by id leaves an nrt_load's record live). */
static void kh_clear_slot_if(unsigned s, uint32_t id, bool retired)
{
	kh_slot_t *sl = &H.slot[s];

	ks_mutex_lock(&H.lock);
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
	ks_mutex_unlock(&H.lock);
}

/* An operand's placement (prog's numbering) as the oracle names it: the
 * same order, checked at compile time. */
_Static_assert(KPROG_PLACE_DEV == (int)ORACLE_PLACE_DEV &&
                   KPROG_PLACE_HOST == (int)ORACLE_PLACE_HOST &&
                   KPROG_PLACE_VIRT == (int)ORACLE_PLACE_VIRT &&
                   KPROG_PLACE_MISSING == (int)ORACLE_PLACE_MISSING,
               "prog's and the oracle's placements in one order");

static oracle_place_t kh_place(int16_t place)
{
	return (oracle_place_t)place;
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
static bool kh_facade_enter(void)
{
	ks_atomic_add_quiet(&H.facade, 1);
	if (!ks_atomic_load_quiet(&H.closing))
		return true;
	ks_atomic_add_quiet(&H.facade, -1);
	return false;
}

static void kh_facade_leave(void)
{
	ks_atomic_add_quiet(&H.facade, -1);
}

/* kh_<name>, a direct facade op: the body that follows the macro, inside
 * the guard above. */
#define KH_FACADE_OP(name)                                                                         \
	static void name##_in(unsigned op, unsigned thread, const kh_args_t *a);                   \
	void name(unsigned op, unsigned thread, const kh_args_t *a)                                \
	{                                                                                          \
		if (!kh_facade_enter())                                                            \
			return;                                                                    \
		name##_in(op, thread, a);                                                          \
		kh_facade_leave();                                                                 \
	}                                                                                          \
	static void name##_in

static kh_pend_t *kh_pend_get(void)
{
	kh_pend_t *pe = NULL;

	ks_mutex_lock(&H.lock);
	for (unsigned i = 0; i < KH_MAX_PENDING && !pe; i++)
		if (!H.pend[i].used) {
			pe = &H.pend[i];
			memset(pe, 0, sizeof(*pe));
			pe->used = true;
			if (i >= H.pend_hw)
				H.pend_hw = i + 1;
		}
	ks_mutex_unlock(&H.lock);
	return pe;
}

static void kh_pend_put(kh_pend_t *pe)
{
	kh_iob_free(&pe->b);
	ks_mutex_lock(&H.lock);
	pe->used = false;
	ks_mutex_unlock(&H.lock);
}

/* A pending entry with the tensors of an execution of slot s. */
static kh_pend_t *kh_pend_build(const kh_slot_t *s, unsigned op, int in, int out)
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

static void kh_done(unsigned op, const char *what, NRT_STATUS rc)
{
	ks_atomic_add_quiet(&H.ops_run, 1);
	if (rc == NRT_SUCCESS)
		ks_atomic_add_quiet(&H.ops_ok, 1);
	if (H.c->hooks.op_done)
		H.c->hooks.op_done(H.c->hooks.ctx, op, what, rc);
}

/* The reference model's verdict where it has one (single-threaded, no
 * fault fired since the op began); the argument contract in every run. */
static void kh_check(unsigned op, const char *what, NRT_STATUS rc, oracle_expect_t e,
                     uint64_t fired0)
{
	oracle_check_status(op, what, rc, e, H.reference && kfault_fired() == fired0, H.faults);
}

/* An op on model id that began at t0 returned rc: counted, recorded in
 * the oracle's history, checked.  Returns the tick it ended at. */
static uint64_t kh_finish(unsigned op, const char *what, oracle_rec_t rec, uint32_t id, uint64_t t0,
                          NRT_STATUS rc, oracle_expect_t e, uint64_t fired0)
{
	uint64_t t1 = oracle_tick();

	kh_done(op, what, rc);
	oracle_record(op, rec, what, id, t0, t1, rc);
	kh_check(op, what, rc, e, fired0);
	return t1;
}

/* A model operation under way: the slot it found, when it began. */
typedef struct kh_call {
	unsigned op;
	const char *what;
	uint64_t fired0, t0;
	kh_slot_t s;
} kh_call_t;

/* Begins op on a model slot (runnable: one the harness can execute);
 * false when the slot holds no such model. */
static bool kh_begin(kh_call_t *c, unsigned op, const char *what, int slot, bool runnable)
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
static void kh_end(const kh_call_t *c, oracle_rec_t rec, NRT_STATUS rc, oracle_expect_t e)
{
	kh_finish(c->op, c->what, rec, c->s.id, c->t0, rc, e, c->fired0);
}

/* ---- model operations ----------------------------------------------------- */

KH_FACADE_OP(kh_load)(unsigned op, unsigned thread, const kh_args_t *a)
{
	const kh_model_t *m = &H.c->models[a->model];
	uint64_t fired0 = kfault_fired(), t0;
	H_NN h = {0};
	NRT_STATUS rc;

	(void)thread;
	t0 = oracle_tick();
	rc = kmgr_load_nn(m->bytes, m->len, a->start, a->count, &h);
	kh_finish(op, "load", ORACLE_LOAD, rc == NRT_SUCCESS ? h.id : 0, t0, rc,
	          oracle_predict_load(&m->io, H.c->nc, a->start, a->count), fired0);
	if (rc == NRT_SUCCESS)
		kh_keep_loaded(a, h, &m->io, NULL);
}

KH_FACADE_OP(kh_unload)(unsigned op, unsigned thread, const kh_args_t *a)
{
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	/* a model nrt_load placed goes through nrt_unload only: unloaded by id
	 * under it, nrt's record would live on (api_nrt) */
	if (!kh_begin(&c, op, "unload", a->slot, false) || c.s.m)
		return;
	rc = kmgr_unload_nn((H_NN){c.s.id});
	kh_end(&c, ORACLE_UNLOAD, rc, oracle_predict_ok());
	if (rc)
		return;
	/* not drained: explicit-async work may outlive an async unload
	 * (seed §4, the async_mix option) */
	oracle_note_unloaded(c.s.id, false);
	kh_clear_slot_if((unsigned)a->slot, c.s.id, false);
}

KH_FACADE_OP(kh_unload_all)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	kh_slot_t s[KPROG_SLOTS];

	(void)thread;
	(void)a;
	for (unsigned k = 0; k < KPROG_SLOTS; k++)
		kh_get_slot(k, &s[k]);
	t0 = oracle_tick();
	t1 = kh_finish(op, "unload_all", ORACLE_UNLOAD_ALL, 0, t0, kmgr_unload_all_nns(),
	               oracle_predict_ok(), fired0);
	for (unsigned k = 0; k < KPROG_SLOTS; k++) {
		uint32_t x, y;

		if (!s[k].used || kmgr_get_nc_info((H_NN){s[k].id}, &x, &y) != NRT_INVALID_HANDLE)
			continue;
		/* erased, but not necessarily drained: another thread's unload may
		 * still be waiting for the model's references, so this is no
		 * point after which the device must stay quiet (no
		 * oracle_note_unloaded here) */
		oracle_record(op, ORACLE_UNLOAD_ALL, "unload_all", s[k].id, t0, t1, NRT_SUCCESS);
		kh_clear_slot_if(k, s[k].id, false);
	}
}

/* ---- executions ----------------------------------------------------------- */

KH_FACADE_OP(kh_exec)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0, first, job, last_ok = 0;
	NRT_STATUS rc = NRT_SUCCESS;
	oracle_expect_t e;
	kh_pend_t *pe;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_runnable((unsigned)a->slot, &s) || !(pe = kh_pend_build(&s, op, a->in, a->out)))
		return;
	e = oracle_predict_exec(s.io, kh_place(a->in), kh_place(a->out), H.c->async);
	/* One block of job ids for the whole op: the pending check looks at
	 * first..last_ok, and ids taken one by one interleaved with other
	 * threads' (a success of another op's job then passed for one of ours;
	 * the faults and async targets found this in the oracle) */
	first = (uint64_t)ks_atomic_add_quiet(&H.next_job, a->repeat > 0 ? a->repeat : 0) + 1;
	for (int r = 0; r < a->repeat && rc == NRT_SUCCESS; r++) {
		job = first + (uint64_t)r;
		t0 = oracle_tick();
		rc = kmgr_exec((H_NN){s.id}, pe->b.in, pe->b.out, job);
		kh_finish(op, "exec", ORACLE_EXEC, s.id, t0, rc, e, fired0);
		if (rc == NRT_SUCCESS)
			last_ok = job;
	}
	/* implicit async: any queued execution still uses the tensors */
	if (last_ok && H.c->async) {
		pe->op = op;
		pe->job_first = first;
		pe->job_last = last_ok;
		return;
	}
	if (rc == NRT_SUCCESS)
		kh_iob_verify(&pe->b, op);
	kh_pend_put(pe);
}

/* Explicit async (nrta_execute_schedule's path): off in implicit-async
 * runs unless async_mix, since the facade's async unload stops the async
 * worker but not the sync XU (seed §4). */
KH_FACADE_OP(kh_schedule)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	NRT_STATUS rc;
	kh_pend_t *pe;
	kh_slot_t s;

	if (H.c->async && !H.c->async_mix)
		return;
	if (!kh_get_runnable((unsigned)a->slot, &s) || !(pe = kh_pend_build(&s, op, a->in, a->out)))
		return;
	t0 = oracle_tick();
	rc =
	    kmgr_tpb_xu_schedule(s.start_nc, (H_NN){s.id}, pe->b.in, pe->b.out, &pe->ret, &pe->seq);
	kh_finish(op, "schedule", ORACLE_READ, s.id, t0, rc,
	          oracle_predict_exec(s.io, kh_place(a->in), kh_place(a->out), true), fired0);
	if (rc) {
		kh_pend_put(pe);
		return;
	}
	pe->op = op;
	pe->sched = true;
	if (H.nseq[thread] < KH_MAX_SEQS)
		H.seqs[thread][H.nseq[thread]++] = pe->seq;
}

KH_FACADE_OP(kh_is_completed)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired();
	bool is_done = false;
	nrta_seq_t seq;
	NRT_STATUS rc;

	if (!a->bogus && !H.nseq[thread])
		return;
	seq = a->bogus ? KH_BOGUS_SEQ : H.seqs[thread][(unsigned)a->which % H.nseq[thread]];
	rc = nrta_is_completed(seq, &is_done);
	kh_done(op, "is_completed", rc);
	kh_check(op, "is_completed", rc, oracle_predict_is_completed(a->bogus), fired0);
}

KH_FACADE_OP(kh_get_sequence)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired();
	nrta_seq_t seq = 0;
	NRT_STATUS rc;

	(void)thread;
	rc = nrta_get_sequence((uint32_t)a->lnc, (nrta_xu_t)a->xu, a->queue, &seq);
	kh_done(op, "get_sequence", rc);
	kh_check(op, "get_sequence", rc,
	         oracle_predict_get_sequence(H.c->nc, a->lnc, a->xu, a->queue), fired0);
}

/* ---- metadata ------------------------------------------------------------- */

KH_FACADE_OP(kh_tensor_info)(unsigned op, unsigned thread, const kh_args_t *a)
{
	bool is_input = !(a->index & 1);
	uint32_t idx = (uint32_t)a->index >> 1, ndim = 0, *shape = NULL;
	char name[NRT_TENSOR_NAME_MAX];
	nrt_dtype_t dtype;
	size_t size = 0;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "tensor_info", a->slot, true))
		return;
	rc = kmgr_get_io_tensor_info((H_NN){c.s.id}, is_input, idx, name, &size, &dtype, &ndim,
	                             &shape);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_tensor_info(c.s.io, is_input, idx));
	if (rc)
		return;
	kfree(shape);
	oracle_check_tensor_info(op, c.s.io, idx + (is_input ? 0 : c.s.io->n_in), name, size);
}

KH_FACADE_OP(kh_is_valid_ifmap)(unsigned op, unsigned thread, const kh_args_t *a)
{
	bool valid = false, want;
	const char *name;
	oracle_expect_t e;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "is_valid_ifmap", a->slot, true))
		return;
	e = oracle_predict_is_valid_ifmap(c.s.io, (unsigned)a->name, &name, &want);
	rc = kmgr_is_valid_ifmap((H_NN){c.s.id}, name, &valid);
	kh_end(&c, ORACLE_READ, rc, e);
	if (rc == NRT_SUCCESS)
		oracle_check_ifmap_valid(op, name, valid, want);
}

KH_FACADE_OP(kh_ifmap_count)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint32_t count = 0, nout = 0;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "ifmap_count", a->slot, true))
		return;
	if (a->io)
		rc = kmgr_get_io_tensor_count((H_NN){c.s.id}, &count, &nout);
	else
		rc = kmgr_get_ifmap_count((H_NN){c.s.id}, &count);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_ok());
	if (rc == NRT_SUCCESS)
		oracle_check_counts(op, c.s.io, count, a->io, nout);
}

KH_FACADE_OP(kh_set_profiling)(unsigned op, unsigned thread, const kh_args_t *a)
{
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "set_profiling", a->slot, false))
		return;
	rc = a->mac ? kmgr_set_mac_count((H_NN){c.s.id}, 1000u + (uint64_t)op)
	            : kmgr_set_profiling((H_NN){c.s.id}, a->on);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_ok());
}

KH_FACADE_OP(kh_nc_info)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint32_t start = 0, count = 0;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "nc_info", a->slot, false))
		return;
	rc = kmgr_get_nc_info((H_NN){c.s.id}, &start, &count);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_ok());
	if (rc == NRT_SUCCESS)
		oracle_check_nc_info(op, c.s.id, c.s.place, H.c->nc, c.s.start_nc, start, count);
}

/* ---- wrong handles and wrong arguments -------------------------------- */

/* One of nine entry points with id h; what selects it. */
static NRT_STATUS kh_call_with(H_NN h, int what)
{
	uint32_t count = 0, nout = 0, ndim = 0, *shape = NULL;
	char name[NRT_TENSOR_NAME_MAX];
	nrt_dtype_t dtype;
	nrta_seq_t seq;
	NRT_STATUS rc, ret;
	size_t size;
	bool valid;

	switch (what) {
	case KH_STALE_EXEC:
		return kmgr_exec(h, NULL, NULL, 0);
	case KH_STALE_IFMAP_COUNT:
		return kmgr_get_ifmap_count(h, &count);
	case KH_STALE_UNLOAD:
		return kmgr_unload_nn(h);
	case KH_STALE_PROFILING:
		return kmgr_set_profiling(h, true);
	case KH_STALE_TENSOR_INFO:
		rc = kmgr_get_io_tensor_info(h, true, 0, name, &size, &dtype, &ndim, &shape);
		if (rc == NRT_SUCCESS)
			kfree(shape);
		return rc;
	case KH_STALE_VALID_IFMAP:
		return kmgr_is_valid_ifmap(h, "x", &valid);
	case KH_STALE_IO_COUNT:
		return kmgr_get_io_tensor_count(h, &count, &nout);
	case KH_STALE_SCHEDULE:
		return kmgr_tpb_xu_schedule(0, h, NULL, NULL, &ret, &seq);
	default: /* KH_STALE_MAC_COUNT */
		return kmgr_set_mac_count(h, 1);
	}
}

/* An id that was unloaded (or was never issued) answers INVALID_HANDLE
 * everywhere. */
KH_FACADE_OP(kh_stale)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	NRT_STATUS rc;
	kh_slot_t s;
	H_NN h;

	(void)thread;
	kh_get_slot((unsigned)a->slot, &s);
	h.id = s.stale ? s.stale : 0xfffffff0u - op;
	t0 = oracle_tick();
	rc = kh_call_with(h, a->what);
	kh_finish(op, "stale", ORACLE_READ, h.id, t0, rc, oracle_predict_stale(), fired0);
	if (rc == NRT_SUCCESS)
		oracle_fail("stale-handle", "op %u: unloaded id %u accepted", op, h.id);
}

/* A NULL or mismatched argument on a loaded model (what selects it). */
static NRT_STATUS kh_call_badly(const kh_slot_t *s, int what, nrt_tensor_set_t *set)
{
	uint32_t count = 0, ndim = 0, *shape = NULL;
	H_NN h = {s->id}, out;
	nrt_dtype_t dtype;
	nrta_seq_t seq;
	NRT_STATUS ret;
	size_t size;

	switch (what) {
	case KH_BAD_EXEC_NO_INPUT:
		return kmgr_exec(h, NULL, set, 0);
	case KH_BAD_EXEC_NO_OUTPUT:
		return kmgr_exec(h, set, NULL, 0);
	case KH_BAD_TENSOR_INFO_NO_NAME:
		return kmgr_get_io_tensor_info(h, true, 0, NULL, &size, &dtype, &ndim, &shape);
	case KH_BAD_VALID_IFMAP_NO_RESULT:
		return kmgr_is_valid_ifmap(h, "x", NULL);
	case KH_BAD_IFMAP_COUNT_NO_RESULT:
		return kmgr_get_ifmap_count(h, NULL);
	case KH_BAD_IO_COUNT_NO_RESULT:
		return kmgr_get_io_tensor_count(h, &count, NULL);
	case KH_BAD_LOAD_NO_BYTES:
		return kmgr_load_nn(NULL, 16, -1, -1, &out);
	case KH_BAD_SCHEDULE_OTHER_CORE:
		/* the model's own core plus one: the seed asserts, we refuse */
		return kmgr_tpb_xu_schedule(s->start_nc + 1, h, NULL, NULL, &ret, &seq);
	case KH_BAD_SCHEDULE_NO_SEQ:
		return kmgr_tpb_xu_schedule(s->start_nc, h, NULL, NULL, &ret, NULL);
	default: /* KH_BAD_NC_INFO_NO_RESULT */
		return kmgr_get_nc_info(h, &count, NULL);
	}
}

/* NRT_INVALID, never a crash (a model that went away meanwhile answers
 * INVALID_HANDLE). */
KH_FACADE_OP(kh_badargs)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired();
	nrt_tensor_set_t *set = NULL;
	NRT_STATUS rc;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_slot((unsigned)a->slot, &s))
		return;
	if (a->what <= KH_BAD_EXEC_NO_OUTPUT && nrt_allocate_tensor_set(&set) != NRT_SUCCESS)
		return;
	rc = kh_call_badly(&s, a->what, set);
	if (set)
		nrt_destroy_tensor_set(&set);
	kh_done(op, "badargs", rc);
	kh_check(op, "badargs", rc, oracle_predict_badargs(), fired0);
}

/* Arms "fail the nth next allocation at site" from now on; only in
 * single-threaded sync programs, where no library thread is busy when the
 * plan changes. */
void kh_fault(unsigned op, unsigned thread, const kh_args_t *a)
{
	kfault_plan_t plan = {.n = 1};
	size_t n = 0;
	const kfault_site_info_t *sites = kfault_sites(&n);

	(void)op;
	(void)thread;
	if (H.c->nthreads != 1 || H.c->async)
		return;
	/* an explicit execution (schedule, nrt_schedule) may still run on an
	 * XU, which reads the plan: wait for it (TSan saw the race); a quiet
	 * read, so a program with nothing in flight gets no extra decision */
	while (emu_inflight_execs_quiet() != 0)
		ks_usleep(50);
	plan.e[0] = (kfault_entry_t){KFAULT_FAIL_ALLOC, 0, (uint32_t)a->nth, 0};
	plan.e[0].site = a->site && (size_t)a->site <= n ? (uint32_t)sites[a->site - 1].site : 0;
	kfault_set_plan(&plan);
	H.faults = true;
}

/* ---- the public API on a model (api_nrt) ------------------------------ */

/* The handle an nrt op uses: the slot's live one, or (old) the one its
 * last unload left behind; false when there is none. */
static bool kh_get_handle(const kh_args_t *a, kh_slot_t *s, nrt_model_t **m)
{
	kh_get_slot((unsigned)a->slot, s);
	*m = a->old ? s->old_m : (s->used ? s->m : NULL);
	return *m != NULL;
}

/* What an op through handle m of slot s may answer: a retired handle
 * only INVALID_HANDLE; a handle whose model went by id anything; the live
 * one e. */
static oracle_expect_t kh_handle_expect(const kh_args_t *a, const kh_slot_t *s, oracle_expect_t e)
{
	if (!a->old)
		return e;
	return s->old_retired ? oracle_predict_stale() : (oracle_expect_t){0};
}

/* A public call over [t0, now] answered rc: counted; NRT_CLOSED checked
 * against the close and nothing more (returns false); else recorded and
 * checked against e (returns true). */
static bool kh_nrt_end(unsigned op, const char *what, oracle_rec_t rec, uint32_t id, uint64_t t0,
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
static void kh_check_retired(unsigned op, const char *what, const kh_args_t *a, const kh_slot_t *s,
                             NRT_STATUS rc)
{
	if (a->old && s->old_retired && rc == NRT_SUCCESS)
		oracle_fail("retired-handle", "op %u %s: the handle of unloaded model %u accepted",
		            op, what, s->old_id);
}

void kh_nrt_load(unsigned op, unsigned thread, const kh_args_t *a)
{
	const kh_model_t *km = &H.c->models[a->model];
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
	                  oracle_predict_load(&km->io, H.c->nc, a->start, a->count), fired0);
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
	e = oracle_predict_exec(s.io, kh_place(a->in), kh_place(a->out), H.c->async);
	t0 = oracle_tick();
	rc = a->repeat > 1 ? nrt_execute_repeat(s.m, pe->b.in, pe->b.out, a->repeat)
	                   : nrt_execute(s.m, pe->b.in, pe->b.out);
	/* the outputs are read through the public API, which a close in
	 * between refuses: the check holds close off as a facade op does */
	if (kh_nrt_end(op, "nrt_exec", ORACLE_EXEC, s.id, t0, rc, e, fired0) && rc == NRT_SUCCESS &&
	    !H.c->async && kh_facade_enter()) {
		kh_iob_verify(&pe->b, op);
		kh_facade_leave();
	}
	/* implicit async: some of a repeat may be queued whatever the status
	 * (QUEUE_FULL after two), under job id 0, which no callback names:
	 * unchecked, the tensors wait for quiescence */
	if (H.c->async) {
		pe->op = op;
		return;
	}
	kh_pend_put(pe);
}

/* nrta_execute_schedule on the handle: as kh_schedule, off in implicit
 * async runs unless async_mix. */
void kh_nrt_schedule(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	kh_pend_t *pe;
	NRT_STATUS rc;
	kh_slot_t s;

	if (H.c->async && !H.c->async_mix)
		return;
	if (!kh_get_runnable((unsigned)a->slot, &s) || !s.m ||
	    !(pe = kh_pend_build(&s, op, a->in, a->out)))
		return;
	t0 = oracle_tick();
	rc = nrta_execute_schedule(s.m, pe->b.in, pe->b.out, 0, NULL, &pe->seq);
	if (!kh_nrt_end(op, "nrt_schedule", ORACLE_READ, s.id, t0, rc,
	                oracle_predict_exec(s.io, kh_place(a->in), kh_place(a->out), true),
	                fired0) ||
	    rc) {
		kh_pend_put(pe);
		return;
	}
	pe->op = op;
	pe->sched = true;
	pe->unchecked = true; /* the status went to the anonymous tracker */
	if (H.nseq[thread] < KH_MAX_SEQS)
		H.seqs[thread][H.nseq[thread]++] = pe->seq;
}

/* NRT_META's what (prog/kinds.c: 0..5). */

/* The model's core count or its tensor descriptions through the handle. */
static NRT_STATUS kh_nrt_meta_call(unsigned op, nrt_model_t *m, const kh_args_t *a,
                                   const kh_slot_t *s)
{
	nrt_tensor_info_array_t *info = NULL;
	uint32_t n = 0;
	NRT_STATUS rc;

	if (a->what == KH_NRT_NC_COUNT) {
		/* the count only: the slot's start core is the one the harness
		 * read after the load, which an unload by id in between leaves 0 */
		rc = nrt_get_model_nc_count(m, &n);
		if (rc == NRT_SUCCESS && !a->old && (n != s->place.count || n > H.c->nc))
			oracle_fail("nc-count",
			            "op %u: nrt_get_model_nc_count says %u cores, the "
			            "load asked for %u",
			            op, n, s->place.count);
		return rc;
	}
	rc = nrt_get_model_tensor_info(m, &info);
	if (rc)
		return rc;
	if (!a->old && info->tensor_count != (uint64_t)s->io->n_in + s->io->n_out)
		oracle_fail("tensor-info", "op %u: %llu tensors, the container has %u", op,
		            (unsigned long long)info->tensor_count, s->io->n_in + s->io->n_out);
	for (uint64_t i = 0; !a->old && i < info->tensor_count; i++)
		oracle_check_tensor_info(op, s->io, (uint32_t)i, info->tensor_array[i].name,
		                         info->tensor_array[i].size);
	nrt_free_model_tensor_info(info);
	return rc;
}

/* A public call its arguments make wrong answered rc: never a success
 * (NRT_CLOSED once a close began). */
static void kh_nrt_refused(unsigned op, const char *what, NRT_STATUS rc, uint64_t t0,
                           uint64_t fired0)
{
	kh_done(op, what, rc);
	if (!oracle_check_lifecycle(op, what, rc, t0, oracle_tick()))
		kh_check(op, what, rc, oracle_predict_badargs(), fired0);
}

/* A call that works in every state answered got, the contract want. */
static void kh_nrt_want(unsigned op, const char *what, NRT_STATUS got, NRT_STATUS want)
{
	kh_done(op, what, got);
	if (got != want)
		oracle_fail("status-mismatch", "op %u %s returned %d, the contract says %d", op,
		            what, (int)got, (int)want);
}

/* NULL arguments beside a live handle. */
static void kh_nrt_null_args(unsigned op, nrt_model_t *m, uint64_t fired0)
{
	nrt_tensor_info_array_t *info = NULL;
	nrt_model_t *none = NULL;
	uint64_t t0 = oracle_tick();
	H_NN h;

	kh_nrt_refused(op, "nrt_get_model_nc_count(NULL)", nrt_get_model_nc_count(m, NULL), t0,
	               fired0);
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_get_model_tensor_info(NULL)", nrt_get_model_tensor_info(m, NULL),
	               t0, fired0);
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_load(NULL)", nrt_load(NULL, 0, -1, -1, &none), t0, fired0);
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_unload(NULL)", nrt_unload(NULL), t0, fired0);
	kh_nrt_want(op, "nrt_model_get_nn(NULL)", nrt_model_get_nn(NULL, &h), NRT_INVALID);
	kh_nrt_want(op, "nrt_free_model_tensor_info(NULL)", nrt_free_model_tensor_info(info),
	            NRT_SUCCESS);
}

/* Executions the arguments refuse: no tensor sets, a repeat count of 0. */
static void kh_nrt_bad_exec(unsigned op, nrt_model_t *m, uint64_t fired0)
{
	nrt_tensor_set_t *set = NULL;
	uint64_t t0 = oracle_tick();

	kh_nrt_refused(op, "nrt_execute(NULL sets)", nrt_execute(m, NULL, NULL), t0, fired0);
	if (nrt_allocate_tensor_set(&set) != NRT_SUCCESS)
		return; /* closed meanwhile */
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_execute_repeat(0)", nrt_execute_repeat(m, set, set, 0), t0, fired0);
	nrt_destroy_tensor_set(&set);
}

/* A tensor-info array freed twice: the second free is refused. */
static void kh_nrt_info_twice(unsigned op, nrt_model_t *m)
{
	nrt_tensor_info_array_t *info = NULL;

	if (nrt_get_model_tensor_info(m, &info) != NRT_SUCCESS)
		return;
	kh_nrt_want(op, "nrt_free_model_tensor_info", nrt_free_model_tensor_info(info),
	            NRT_SUCCESS);
	kh_nrt_want(op, "nrt_free_model_tensor_info(again)", nrt_free_model_tensor_info(info),
	            NRT_INVALID);
}

/* The device's core counts, in every state: the program's nc (no
 * NEURON_RT_VISIBLE_CORES in a run); a second nrt_init while up fails. */
static void kh_nrt_counts(unsigned op)
{
	uint32_t n = 0;
	NRT_STATUS rc;

	rc = nrt_get_total_nc_count(&n);
	kh_nrt_want(op, "nrt_get_total_nc_count", rc, NRT_SUCCESS);
	if (n != H.c->nc)
		oracle_fail("nc-count", "op %u: nrt_get_total_nc_count says %u, the device has %u",
		            op, n, H.c->nc);
	rc = nrt_get_visible_nc_count(&n);
	kh_nrt_want(op, "nrt_get_visible_nc_count", rc, NRT_SUCCESS);
	if (n != H.c->nc)
		oracle_fail("nc-count",
		            "op %u: nrt_get_visible_nc_count says %u, the device has %u", op, n,
		            H.c->nc);
	kh_nrt_want(op, "nrt_get_total_nc_count(NULL)", nrt_get_total_nc_count(NULL), NRT_INVALID);
	kh_nrt_want(op, "nrt_get_visible_nc_count(NULL)", nrt_get_visible_nc_count(NULL),
	            NRT_INVALID);
	/* held off a close as a facade call is: after one it would start a
	 * second runtime under the harness */
	if (!kh_facade_enter())
		return;
	kh_nrt_want(op, "nrt_init(again)", nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_FAILURE);
	kh_facade_leave();
}

/* nrt_meta what >= 2: the contract's refusals and the calls that work in
 * every state. */
static void kh_nrt_misuse(unsigned op, nrt_model_t *m, int what, uint64_t fired0)
{
	switch (what) {
	case KH_NRT_NULL_ARGS:
		kh_nrt_null_args(op, m, fired0);
		break;
	case KH_NRT_BAD_EXEC:
		kh_nrt_bad_exec(op, m, fired0);
		break;
	case KH_NRT_INFO_TWICE:
		kh_nrt_info_twice(op, m);
		break;
	default: /* KH_NRT_COUNTS */
		kh_nrt_counts(op);
		break;
	}
}

void kh_nrt_meta(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	nrt_model_t *m;
	NRT_STATUS rc;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_handle(a, &s, &m))
		return;
	if (a->what >= KH_NRT_NULL_ARGS) {
		kh_nrt_misuse(op, m, a->what, fired0);
		return;
	}
	t0 = oracle_tick();
	rc = kh_nrt_meta_call(op, m, a, &s);
	/* nc_count answers from nrt's own record, which an unload by id (a
	 * facade UNLOAD_ALL of another framework) leaves live: it is no read
	 * of the facade model, so it stays out of that model's history (id 0);
	 * the retired-handle check still holds it to nrt_unload */
	if (kh_nrt_end(op, "nrt_meta", ORACLE_READ,
	               a->what == KH_NRT_NC_COUNT ? 0
	               : a->old                   ? s.old_id
	                                          : s.id,
	               t0, rc, kh_handle_expect(a, &s, oracle_predict_ok()), fired0))
		kh_check_retired(op, "nrt_meta", a, &s, rc);
}

/* nrt_close while the other threads go on calling: they answer
 * NRT_CLOSED from its end on (oracle_check_lifecycle), and a close that
 * never returns is the run's hang bound. */
void kh_nrt_close(unsigned op, unsigned thread, const kh_args_t *a)
{
	bool faulted;

	(void)thread;
	(void)a;
	ks_atomic_store_quiet(&H.closing, 1);
	while (ks_atomic_load_quiet(&H.facade) != 0)
		ks_usleep(50);
	oracle_close_begin(oracle_tick());
	faulted = oracle_close_runtime();
	oracle_close_end(oracle_tick());
	if (faulted)
		ks_atomic_store_quiet(&H.close_faulted, 1);
	kh_done(op, "nrt_close", NRT_SUCCESS);
}

/* NEURON_RT_VISIBLE_CORES as an nrt_init op spells it (visible: the
 * form, core: c): the string, printed from fmt with c + d[0..2], and the
 * visible count a closed runtime's nrt_get_visible_nc_count must give for
 * it on a device of nc cores, or -1 where the parser must refuse it.  The
 * verdicts are the forms' own, not a second parser's: a form that parses
 * names the cores lo..c + hi (lo: 0, or c itself when from_c). */
static const struct {
	const char *fmt; /* NULL: unset */
	int d[3];
	bool parses, from_c;
	int hi;
} kh_visible_forms[] = {
    {NULL, {0}, true, false, -1},       /* unset: every core */
    {"", {0}, true, false, -1},         /* empty: unset too */
    {"%d", {0}, true, true, 0},         /* N */
    {"0-%d", {0}, true, false, 0},      /* 0-N */
    {"%d-%d", {0, 1}, true, true, 1},   /* N-N+1 */
    {"%d-%d", {1, 0}, false, false, 0}, /* backwards */
    {"%d,%d", {0, 0}, false, false, 0}, /* a list: not supported */
    {"-%d", {0}, false, false, 0},
    {"%d-", {0}, false, false, 0},
    {"x%d", {0}, false, false, 0},
    {"%d-4294967296", {0}, false, false, 0}, /* past UINT32_MAX */
    {" %d", {0}, false, false, 0},
    {"%d-%d-%d", {0, 0, 0}, false, false, 0}, /* three parts */
};

static const char *kh_env_visible(const kh_args_t *a, unsigned nc, char *b, size_t len, int *count)
{
	size_t n = sizeof(kh_visible_forms) / sizeof(kh_visible_forms[0]);
	unsigned f = (unsigned)a->visible < n ? (unsigned)a->visible : (unsigned)n - 1;
	int c = a->core, lo = kh_visible_forms[f].from_c ? c : 0, hi = c + kh_visible_forms[f].hi;

	*count = -1;
	if (kh_visible_forms[f].parses)
		*count = kh_visible_forms[f].hi < 0 ? (int)nc
		         : (unsigned)hi < nc        ? hi - lo + 1
		                                    : -1;
	if (!kh_visible_forms[f].fmt || !*kh_visible_forms[f].fmt)
		return kh_visible_forms[f].fmt;
	snprintf(b, len, kh_visible_forms[f].fmt, c + kh_visible_forms[f].d[0],
	         c + kh_visible_forms[f].d[1], c + kh_visible_forms[f].d[2]);
	return b;
}

/* NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS likewise; *ok: it parses. */
static const char *kh_env_inflight(const kh_args_t *a, char *b, size_t len, bool *ok)
{
	*ok = a->inflight == 0 || a->inflight == 1 || a->inflight == 3;
	switch (a->inflight) {
	case 0:
		return NULL;
	case 1:
		snprintf(b, len, "%d", a->core);
		return b;
	case 2: /* past the limit */
		return "65537";
	case 3:
		return "";
	default:
		return "1x";
	}
}

/* nrt_init and nrt_get_visible_nc_count with the environment the op
 * spells (nrt_init_env: no setenv, which would race the other threads'
 * getenv), in whatever state the runtime is.  While it is up both answer
 * from it: the count is the device's, a second init NRT_FAILURE.  Once
 * closed both parse the op's variables: the count is the one they name or
 * NRT_INVALID, and an init whose framework or variables are wrong is
 * NRT_INVALID and starts nothing.  An init that would start a runtime is
 * only made while the facade guard holds a close off (it must fail). */
void kh_nrt_init(unsigned op, unsigned thread, const kh_args_t *a)
{
	char vb[48], ib[16];
	int count;
	bool iok;
	nrt_env_t env = {kh_env_visible(a, H.c->nc, vb, sizeof(vb), &count),
	                 kh_env_inflight(a, ib, sizeof(ib), &iok)};
	nrt_framework_type_t fw = (nrt_framework_type_t)a->fw;
	bool fw_ok = fw > NRT_FRAMEWORK_TYPE_INVALID && fw <= NRT_FRAMEWORK_TYPE_MXNET;
	uint32_t n = 0;
	uint64_t t0 = oracle_tick();
	NRT_STATUS rc = nrt_get_visible_nc_count_env(&env, &n);
	bool closed_ok;

	(void)thread;
	kh_done(op, "nrt_get_visible_nc_count(env)", rc);
	closed_ok =
	    count >= 0 && iok ? rc == NRT_SUCCESS && n == (uint32_t)count : rc == NRT_INVALID;
	oracle_check_either(op, "nrt_get_visible_nc_count(env)", rc == NRT_SUCCESS && n == H.c->nc,
	                    closed_ok, t0, oracle_tick());
	if (fw_ok && count >= 0 && iok) {
		if (!kh_facade_enter())
			return;
		kh_nrt_want(op, "nrt_init(env, again)", nrt_init_env(fw, &env), NRT_FAILURE);
		kh_facade_leave();
		return;
	}
	t0 = oracle_tick();
	rc = nrt_init_env(fw, &env);
	kh_done(op, "nrt_init(env)", rc);
	oracle_check_either(op, "nrt_init(env)", rc == NRT_FAILURE, rc == NRT_INVALID, t0,
	                    oracle_tick());
}

/* ---- tensor slots ------------------------------------------------------- */

static const size_t kh_tsizes[4] = {0, 1, 64, 4096};
static const size_t kh_tlens[4] = {0, 1, 8, 64};

static void kh_tslot_free(kh_tslot_t *ts)
{
	if (ts->t)
		nrt_tensor_free(&ts->t);
	free(ts->buf);
	ts->buf = NULL;
}

void kh_talloc(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tslot_t *ts = &H.ts[thread][a->ts];
	size_t size = kh_tsizes[a->size & 3];
	NRT_STATUS rc;

	kh_tslot_free(ts);
	if (a->place <= KPROG_PLACE_HOST) {
		rc = nrt_tensor_allocate(a->place ? NRT_TENSOR_PLACEMENT_HOST
		                                  : NRT_TENSOR_PLACEMENT_DEVICE,
		                         0, size, "t", &ts->t);
	} else {
		rc = nrt_tensor_allocate_empty("t", &ts->t);
		if (rc == NRT_SUCCESS && a->place == KPROG_PLACE_VIRT && size) {
			ts->buf = calloc(1, size);
			rc = nrt_tensor_attach_buffer(ts->t, ts->buf, size);
		}
	}
	kh_done(op, "talloc", rc);
}

void kh_tfree(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tslot_free(&H.ts[thread][a->ts]);
	kh_done(op, "tfree", NRT_SUCCESS);
}

/* Bytes at off*8, len from {0, 1, 8, 64}: in and out of range. */
static void kh_tio(unsigned op, unsigned thread, const kh_args_t *a, bool write)
{
	kh_tslot_t *ts = &H.ts[thread][a->ts];
	size_t off = (size_t)a->off * 8, len = kh_tlens[a->len & 3];
	NRT_STATUS rc = NRT_SUCCESS;
	uint8_t data[64];

	memset(data, (int)op, sizeof(data));
	if (ts->t)
		rc = write ? nrt_tensor_write(ts->t, data, off, len)
		           : nrt_tensor_read(ts->t, data, off, len);
	kh_done(op, write ? "twrite" : "tread", rc);
}

void kh_twrite(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tio(op, thread, a, true);
}

void kh_tread(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tio(op, thread, a, false);
}

/* ---- the tables ----------------------------------------------------------- */

const kh_op_fn kh_ops[KOP__COUNT] = {
    [KOP_LOAD] = kh_load,
    [KOP_UNLOAD] = kh_unload,
    [KOP_UNLOAD_ALL] = kh_unload_all,
    [KOP_EXEC] = kh_exec,
    [KOP_SCHEDULE] = kh_schedule,
    [KOP_IS_COMPLETED] = kh_is_completed,
    [KOP_GET_SEQUENCE] = kh_get_sequence,
    [KOP_TENSOR_INFO] = kh_tensor_info,
    [KOP_IS_VALID_IFMAP] = kh_is_valid_ifmap,
    [KOP_IFMAP_COUNT] = kh_ifmap_count,
    [KOP_SET_PROFILING] = kh_set_profiling,
    [KOP_STALE] = kh_stale,
    [KOP_FAULT] = kh_fault,
    [KOP_TALLOC] = kh_talloc,
    [KOP_TFREE] = kh_tfree,
    [KOP_TWRITE] = kh_twrite,
    [KOP_TREAD] = kh_tread,
    [KOP_BADARGS] = kh_badargs,
    [KOP_NC_INFO] = kh_nc_info,
    [KOP_NRT_LOAD] = kh_nrt_load,
    [KOP_NRT_UNLOAD] = kh_nrt_unload,
    [KOP_NRT_EXEC] = kh_nrt_exec,
    [KOP_NRT_META] = kh_nrt_meta,
    [KOP_NRT_SCHEDULE] = kh_nrt_schedule,
    [KOP_NRT_CLOSE] = kh_nrt_close,
    [KOP_NRT_INIT] = kh_nrt_init,
};

#define KH_FIELD(f) {#f, offsetof(kh_args_t, f)},

int kh_field_offset(const char *name)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {KH_ARGS(KH_FIELD)};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(fields[i].name, name))
			return (int)fields[i].off;
	return -1;
}

/* ---- completion, quiescence and teardown ------------------------------- */

/* The job flags are cleared only up to the highest id a run touched (a
 * full sweep was a tenth of a short run); ids the callback reports are
 * counted too, in case the library names one the harness never reserved. */
static void kh_async_callback(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                              NRT_STATUS status)
{
	(void)params;
	(void)model_id;
	(void)vnc;
	if (job_id == 0 || job_id >= KH_MAX_JOBS)
		return;
	ks_atomic_max_quiet(&H.job_hw, (int64_t)job_id);
	if (status == NRT_SUCCESS)
		ks_atomic_store_quiet(&H.job_ok[job_id], 1);
	ks_atomic_store_quiet(&H.job_done[job_id], 1);
}

/* Every submitted execution completed or was cancelled.  A sleep, not a
 * yield: under control a sleeping thread is not runnable, so the device
 * threads run even when the decisions ran out (whose fallback keeps the
 * current thread). */
static void kh_finish_pending(bool closed)
{
	for (unsigned k = 0; k < H.pend_hw; k++) {
		kh_pend_t *pe = &H.pend[k];
		bool is_done = false, ok = false;

		if (!pe->used)
			continue;
		if (pe->sched && closed) {
			/* nrt_close drained and cancelled it, and took the facade */
		} else if (pe->sched) {
			if (kmgr_xu_is_completed(pe->seq, &is_done) != NRT_SUCCESS || !is_done)
				oracle_fail("lost-completion",
				            "op %u: sequence %llx never completed", pe->op,
				            (unsigned long long)pe->seq);
			ok = pe->ret == NRT_SUCCESS && !pe->unchecked;
		} else {
			/* seq_cst: the callback's store follows the device's writes of
			 * the outputs, so this load orders our reads after them */
			for (uint64_t j = pe->job_first; j <= pe->job_last && j < KH_MAX_JOBS; j++)
				ok |= ks_atomic_load_quiet(&H.job_ok[j]) != 0;
		}
		if (ok && !closed) /* after a close the outputs can no longer be read */
			kh_iob_verify(&pe->b, pe->op);
		kh_pend_put(pe);
	}
}

static void kh_free_tensor_slots(void)
{
	for (unsigned t = 0; t < KPROG_MAX_THREADS; t++)
		for (unsigned k = 0; k < KPROG_TSLOTS; k++)
			kh_tslot_free(&H.ts[t][k]);
}

static void kh_set_env(const kh_config_t *c)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", c->nc);
	setenv("KMGR_EMU_NC_COUNT", v, 1);
	unsetenv("NEURON_RT_VISIBLE_CORES");
	if (c->async) {
		snprintf(v, sizeof(v), "%u", c->qdepth);
		setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", v, 1);
	} else {
		unsetenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS");
	}
}

/* The job flags a run used, cleared at the end of that run, not at the
 * start of the next: the loop then runs as often as this input had jobs.
 * Cleared by the next run, its length would be the previous input's job
 * count, so the same input would take other edge counts after another (an
 * unstable edge to AFL++, a spurious feature to libFuzzer: ctest
 * cov_stable). */
static void kh_clear_jobs(void)
{
	int64_t jobs = ks_atomic_peek(&H.next_job);

	if (ks_atomic_peek(&H.job_hw) > jobs)
		jobs = ks_atomic_peek(&H.job_hw);
	if (jobs >= KH_MAX_JOBS)
		jobs = KH_MAX_JOBS - 1;
	ks_atomic_reset(&H.next_job);
	ks_atomic_reset(&H.job_hw);
	for (int64_t j = 0; j <= jobs; j++) {
		ks_atomic_reset(&H.job_done[j]);
		ks_atomic_reset(&H.job_ok[j]);
	}
}

static void kh_reset(const kh_config_t *c)
{
	H.c = c;
	H.reference = c->reference && c->nthreads == 1;
	H.faults = c->plan.n > 0;
	memset(H.slot, 0, sizeof(H.slot));
	memset(H.pend, 0, H.pend_hw * sizeof(H.pend[0]));
	H.pend_hw = 0;
	memset(H.nseq, 0, sizeof(H.nseq));
	ks_atomic_reset(&H.facade);
	ks_atomic_reset(&H.closing);
	ks_atomic_reset(&H.close_faulted);
	ks_atomic_reset(&H.ops_run);
	ks_atomic_reset(&H.ops_ok);
	ks_atomic_reset(&H.checked);
}

/* Before any plan is installed: parsing allocates through kalloc. */
static void kh_describe_models(const kh_config_t *c)
{
	for (unsigned k = 0; k < c->nmodels; k++) {
		kh_model_t *m = &c->models[k];

		if (!m->described)
			oracle_describe(&m->io, m->bytes, m->len);
		m->described = true;
	}
}

static void *kh_thread_main(void *arg)
{
	H.c->thread(H.c->thread_ctx, (unsigned)(uintptr_t)arg);
	return NULL;
}

/* Everything from nrt_init to the accounting check after close. */
static int kh_body(const kh_config_t *c, kh_result_t *r)
{
	ks_thread_t th[KPROG_MAX_THREADS];
	bool close_faulted, closed;

	if (c->plan.n)
		kfault_set_plan(&c->plan);
	if (oracle_open() != NRT_SUCCESS) {
		kfault_clear();
		oracle_check_closed("after a failed nrt_init");
		return c->plan.n ? 0 : -1;
	}
	r->started = true;
	if (kmgr_is_async() != c->async)
		oracle_fail("mode", "kmgr_is_async() is %d, the program asked for %s",
		            kmgr_is_async(), c->async ? "async" : "sync");
	for (unsigned t = 1; t < c->nthreads; t++)
		if (ks_thread_create(&th[t], "kprog", kh_thread_main, (void *)(uintptr_t)t))
			abort();
	c->thread(c->thread_ctx, 0);
	for (unsigned t = 1; t < c->nthreads; t++)
		ks_thread_join(&th[t], NULL);
	closed = ks_atomic_load_quiet(&H.closing) != 0;
	oracle_quiesce();
	kh_finish_pending(closed);
	kh_free_tensor_slots();
	if (!closed) /* else the facade is gone, and close unloaded everything */
		oracle_check_refcounts(H.faults);
	oracle_check_history();
	oracle_detach();
	/* The plan stays installed until the device threads are gone: kfault's
	 * contract (and TSan) forbid changing it while they may read it.  A
	 * fault that fires inside nrt_close itself can leave what close could
	 * not unload; that run skips the leak check. */
	close_faulted = oracle_close_runtime() || ks_atomic_load_quiet(&H.close_faulted);
	kfault_clear();
	if (!close_faulted)
		oracle_check_closed("after nrt_close");
	return 0;
}

void kh_config_init(kh_config_t *c)
{
	memset(c, 0, sizeof(*c));
	c->nc = 1;
	c->qdepth = 1;
	c->nthreads = 1;
	c->reference = true;
}

int kh_run(const kh_config_t *c, kh_result_t *r)
{
	ks_ctl_config_t cfg;
	ks_ctl_result_t res = {0};
	int rc;

	memset(r, 0, sizeof(*r));
	kh_reset(c);
	kh_describe_models(c);
	kh_set_env(c);
	nrt_register_async_exec_callback(kh_async_callback, NULL);
	oracle_set_report(c->hooks.report, c->hooks.ctx);
	oracle_begin();
	oracle_history_begin();
	if (!c->free_running) {
		ks_ctl_config_init(&cfg);
		cfg.strategy = KS_STRAT_BYTES;
		cfg.bytes = c->sched;
		cfg.nbytes = c->nsched;
		cfg.max_steps = c->max_steps;
		cfg.ap_n = c->nap < KS_CTL_MAX_AP ? c->nap : KS_CTL_MAX_AP;
		for (unsigned i = 0; i < cfg.ap_n; i++) {
			cfg.ap[i].thread = c->ap[i].thread;
			cfg.ap[i].point = c->ap[i].point;
			cfg.ap[i].k = c->ap[i].k;
		}
		if (ks_ctl_begin(&cfg))
			abort();
	}
	rc = kh_body(c, r);
	if (!c->free_running)
		ks_ctl_end(&res);
	r->ops_run = (uint32_t)ks_atomic_peek(&H.ops_run);
	r->ops_ok = (uint32_t)ks_atomic_peek(&H.ops_ok);
	r->execs_checked = (uint32_t)ks_atomic_peek(&H.checked);
	r->steps = res.steps;
	r->preemptions = res.preemptions;
	r->trace = res.trace;
	r->ntrace = res.ntrace;
	kh_clear_jobs();
	return rc;
}
