/*
 * state.h - the harness's own seams (not harness.h's interface): the
 * tensors of one execution, the pending executions, the model and tensor
 * slots, the run's state every operation file shares (kh_state, state.c),
 * and the helpers the operation files call: iob.c's tensors, state.c's
 * bookkeeping and the facade guard, nrt_model.c's handle checks.
 */
#ifndef KHARNESS_STATE_H
#define KHARNESS_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_async.h>

#include "harness/harness.h"
#include "kmgr/kmgr.h"
#include "sched/ksched.h"

#define KH_MAX_IO      ORACLE_MAX_IO
#define KH_MAX_PENDING 160
#define KH_MAX_SEQS    8
#define KH_MAX_JOBS    1024
#define KH_MAX_GONE    64
#define KH_MAX_REGS    64            /* callback registrations: kh_run's, one an op */
#define KH_MAX_ANON    KPROG_MAX_OPS /* nrt_execute submissions (one an op) */
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
	/* nrt_tracker: the error tracker it was scheduled with (destroyed at
	 * quiescence), and whether a get_list named it as failed */
	nrta_error_tracker_t *tracker;
	bool reported;
	uint32_t model; /* the model's facade id (nrt_tracker, implicit async) */
	unsigned op;
	uint64_t job_first, job_last;
	nrta_seq_t seq;
	NRT_STATUS ret; /* explicit async: written by the device at completion;
	                 * nrt_execute in implicit async: its status */
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

typedef struct kh_state {
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
	/* per job id (completion.c): its callbacks, those with a status other
	 * than success, what its submission did (KH_JOB_*), its model */
	ks_atomic_t job_calls[KH_MAX_JOBS], job_ok[KH_MAX_JOBS], job_failed[KH_MAX_JOBS];
	ks_atomic_t job_sub[KH_MAX_JOBS], job_model[KH_MAX_JOBS];
	/* the tick before each job's submission, and the registration whose
	 * callback called it first (+1; 0: none) */
	ks_atomic_t job_t0[KH_MAX_JOBS], job_reg[KH_MAX_JOBS];
	/* nrt_execute's executions (job id 0): callbacks, and per submission
	 * its tick and how many its status says were queued, at least and at
	 * most; how many of the callbacks each registration made; the callbacks
	 * with a status other than success, and the model each named (the
	 * first KH_MAX_ANON) */
	ks_atomic_t anon_calls, anon_n, anon_failed;
	ks_atomic_t anon_t0[KH_MAX_ANON], anon_lo[KH_MAX_ANON], anon_hi[KH_MAX_ANON];
	ks_atomic_t anon_reg[KH_MAX_REGS], anon_fmodel[KH_MAX_ANON];
	/* callback registrations (registration 0: kh_run's, before nrt_init):
	 * each one's callback (KH_CB_* + 1), the ticks before and after its
	 * call; the latest tick after an nrt_close op returned (0: none) */
	ks_atomic_t next_reg, reg_cb[KH_MAX_REGS], reg_t0[KH_MAX_REGS], reg_t1[KH_MAX_REGS];
	ks_atomic_t close_t1;
	uint32_t gone[KH_MAX_GONE]; /* models unloaded this run (under lock) */
	unsigned ngone;
	ks_atomic_t unload_all;    /* an unload_all succeeded: every model may be gone */
	ks_atomic_t facade;        /* ops in a direct facade call (kh_facade_enter) */
	ks_atomic_t closing;       /* an nrt_close op began: no more direct facade calls */
	ks_atomic_t close_faulted; /* a fault fired inside an nrt_close op */
} kh_state_t;

/* The run's state (state.c). */
extern kh_state_t kh_state;

/* ---- iob.c: the tensors of one execution ---------------------------------- */

NRT_STATUS kh_iob_build(kh_iob_t *b, const oracle_io_t *io, uint32_t seed, int in_place,
                        int out_place, int nc);
void kh_iob_free(kh_iob_t *b);
void kh_iob_verify(kh_iob_t *b, unsigned op);

/* ---- state.c: bookkeeping ------------------------------------------------- */

/* An operand's placement (prog's numbering) as the oracle names it: the
 * same order, checked at compile time. */
_Static_assert(KPROG_PLACE_DEV == (int)ORACLE_PLACE_DEV &&
                   KPROG_PLACE_HOST == (int)ORACLE_PLACE_HOST &&
                   KPROG_PLACE_VIRT == (int)ORACLE_PLACE_VIRT &&
                   KPROG_PLACE_MISSING == (int)ORACLE_PLACE_MISSING,
               "prog's and the oracle's placements in one order");

/* A side of n tensors: a mix counts as host when one of its n tensors is
 * on the host (the oracle judges a side by whether any is). */
static inline oracle_place_t kh_place(int16_t place, uint32_t n)
{
	for (uint32_t j = 0; place >= KPROG_PLACE_MIX && j < n; j++)
		if (kprog_mix_place(place, j) != KPROG_PLACE_DEV)
			return ORACLE_PLACE_HOST;
	return place >= KPROG_PLACE_MIX ? ORACLE_PLACE_DEV : (oracle_place_t)place;
}

bool kh_get_slot(unsigned s, kh_slot_t *out);
bool kh_get_runnable(unsigned s, kh_slot_t *out);
void kh_keep_loaded(const kh_args_t *a, H_NN h, const oracle_io_t *io, nrt_model_t *m);
void kh_clear_slot_if(unsigned s, uint32_t id, bool retired);
bool kh_facade_enter(void);
void kh_facade_leave(void);

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

kh_pend_t *kh_pend_build(const kh_slot_t *s, unsigned op, int in, int out);
void kh_pend_put(kh_pend_t *pe);
void kh_done(unsigned op, const char *what, NRT_STATUS rc);
void kh_check(unsigned op, const char *what, NRT_STATUS rc, oracle_expect_t e, uint64_t fired0);
uint64_t kh_finish(unsigned op, const char *what, oracle_rec_t rec, uint32_t id, uint64_t t0,
                   NRT_STATUS rc, oracle_expect_t e, uint64_t fired0);

/* A model operation under way: the slot it found, when it began. */
typedef struct kh_call {
	unsigned op;
	const char *what;
	uint64_t fired0, t0;
	kh_slot_t s;
} kh_call_t;

bool kh_begin(kh_call_t *c, unsigned op, const char *what, int slot, bool runnable);
void kh_end(const kh_call_t *c, oracle_rec_t rec, NRT_STATUS rc, oracle_expect_t e);

/* ---- nrt_model.c, nrt_meta.c: the public API through a handle ------------- */

bool kh_get_handle(const kh_args_t *a, kh_slot_t *s, nrt_model_t **m);
oracle_expect_t kh_handle_expect(const kh_args_t *a, const kh_slot_t *s, oracle_expect_t e);
bool kh_nrt_end(unsigned op, const char *what, oracle_rec_t rec, uint32_t id, uint64_t t0,
                NRT_STATUS rc, oracle_expect_t e, uint64_t fired0);
void kh_check_retired(unsigned op, const char *what, const kh_args_t *a, const kh_slot_t *s,
                      NRT_STATUS rc);
void kh_nrt_want(unsigned op, const char *what, NRT_STATUS got, NRT_STATUS want);
bool kh_tracker_list(kh_pend_t *pe, bool may_fail);

/* ---- completion.c: exactly-once accounting of implicit-async executions -- */

/* What submitting job id did: queued (the implicit-async worker owes it
 * one callback) or not (it owes none). */
enum { KH_JOB_NONE, KH_JOB_QUEUED, KH_JOB_REFUSED };
/* t0: the tick taken before the submission began */
void kh_job_submitted(uint64_t job, uint32_t model, bool queued, uint64_t t0);
/* nrt_execute(_repeat) of repeat executions, begun at tick t0, answered rc
 * (job id 0). */
void kh_anon_submitted(int repeat, NRT_STATUS rc, uint64_t t0);
/* kh_run's registration (registration 0, callback a), before nrt_init. */
void kh_register_first(void);
/* At quiescence: every pending execution completed, outputs verified. */
void kh_finish_pending(bool closed);
/* After nrt_close joined the device threads: every job accounted for. */
void kh_check_completions(bool closed);
void kh_clear_jobs(void);

/* ---- tensor.c ------------------------------------------------------------- */

void kh_tslot_free(kh_tslot_t *ts);

#endif /* KHARNESS_STATE_H */
