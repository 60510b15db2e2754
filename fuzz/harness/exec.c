/*
 * exec.c - the executions by id: kmgr_exec (sync or implicit async),
 * kmgr_tpb_xu_schedule (explicit async), and the explicit-async polls
 * nrta_is_completed and nrta_get_sequence. */
#include <nrt/nrt_async.h>

#include "base/kfault.h"
#include "harness/state.h"
#include "kmgr/kmgr.h"

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
	e = oracle_predict_exec(s.io, kh_place(a->in, s.io->n_in), kh_place(a->out, s.io->n_out),
	                        kh_state.c->async);
	/* One block of job ids for the whole op: the pending check looks at
	 * first..last_ok, and ids taken one by one interleaved with other
	 * threads' (a success of another op's job then passed for one of ours;
	 * the faults and async targets found this in the oracle) */
	first =
	    (uint64_t)ks_atomic_add_quiet(&kh_state.next_job, a->repeat > 0 ? a->repeat : 0) + 1;
	for (int r = 0; r < a->repeat && rc == NRT_SUCCESS; r++) {
		job = first + (uint64_t)r;
		t0 = oracle_tick();
		rc = kmgr_exec((H_NN){s.id}, pe->b.in, pe->b.out, job);
		kh_job_submitted(job, s.id, rc == NRT_SUCCESS && kh_state.c->async, t0);
		kh_finish(op, "exec", ORACLE_EXEC, s.id, t0, rc, e, fired0);
		if (rc == NRT_SUCCESS)
			last_ok = job;
	}
	/* implicit async: any queued execution still uses the tensors */
	if (last_ok && kh_state.c->async) {
		pe->op = op;
		pe->model = s.id;
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

	if (kh_state.c->async && !kh_state.c->async_mix)
		return;
	if (!kh_get_runnable((unsigned)a->slot, &s) || !(pe = kh_pend_build(&s, op, a->in, a->out)))
		return;
	t0 = oracle_tick();
	rc =
	    kmgr_tpb_xu_schedule(s.start_nc, (H_NN){s.id}, pe->b.in, pe->b.out, &pe->ret, &pe->seq);
	kh_finish(op, "schedule", ORACLE_READ, s.id, t0, rc,
	          oracle_predict_exec(s.io, kh_place(a->in, s.io->n_in),
	                              kh_place(a->out, s.io->n_out), true),
	          fired0);
	if (rc) {
		kh_pend_put(pe);
		return;
	}
	pe->op = op;
	pe->sched = true;
	if (kh_state.nseq[thread] < KH_MAX_SEQS)
		kh_state.seqs[thread][kh_state.nseq[thread]++] = pe->seq;
}

KH_FACADE_OP(kh_is_completed)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired();
	bool is_done = false;
	nrta_seq_t seq;
	NRT_STATUS rc;

	if (!a->bogus && !kh_state.nseq[thread])
		return;
	seq = a->bogus ? KH_BOGUS_SEQ
	               : kh_state.seqs[thread][(unsigned)a->which % kh_state.nseq[thread]];
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
	         oracle_predict_get_sequence(kh_state.c->nc, a->lnc, a->xu, a->queue), fired0);
}
