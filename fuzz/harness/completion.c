/*
 * completion.c - every implicit-async execution accounted for, exactly
 * once (docs/api-contract.md, "Completions"): the worker owes each queued
 * execution one callback, success or a cancellation, and none to one it
 * refused.  The callback counts what it is told per job id; at quiescence
 * the pending executions' outputs are verified, and after nrt_close has
 * joined the device threads (no callback can come later) every job id the
 * run handed out is checked: a queued one called back once, a refused one
 * never, nrt_execute's (job id 0) as often as their statuses allow, and a
 * failure status only where something may cancel (an unload of its model,
 * a close, a fault).
 */
#include <stdlib.h>

#include <nrt/nrt.h>

#include "emu/emu.h"
#include "harness/state.h"

void kh_job_submitted(uint64_t job, uint32_t model, bool queued, uint64_t t0)
{
	if (job >= KH_MAX_JOBS)
		return;
	ks_atomic_store_quiet(&kh_state.job_model[job], model);
	ks_atomic_store_quiet(&kh_state.job_t0[job], (int64_t)t0);
	ks_atomic_store_quiet(&kh_state.job_sub[job], queued ? KH_JOB_QUEUED : KH_JOB_REFUSED);
}

/* nrt_execute_repeat stops at the first status other than success: all
 * of them queued, or fewer than repeat. */
void kh_anon_submitted(int repeat, NRT_STATUS rc, uint64_t t0)
{
	int n = repeat > 0 ? repeat : 1;
	int64_t i = ks_atomic_add_quiet(&kh_state.anon_n, 1);

	if (i >= KH_MAX_ANON)
		abort(); /* one submission an op: KPROG_MAX_OPS */
	ks_atomic_store_quiet(&kh_state.anon_t0[i], (int64_t)t0);
	ks_atomic_store_quiet(&kh_state.anon_lo[i], rc == NRT_SUCCESS ? n : 0);
	ks_atomic_store_quiet(&kh_state.anon_hi[i], rc == NRT_SUCCESS ? n : n - 1);
}

#define KH_CB_NAME(id, name) name,
static const char *const kh_cb_names[] = {KPROG_NRT_CALLBACK_WHATS(KH_CB_NAME)};

/* A completion through callback cb (KH_CB_A or KH_CB_B) with params, the
 * registration that installed it: it must be the one that registration
 * named.  The job flags are cleared only up to the highest id a run
 * touched (a full sweep was a tenth of a short run); ids the callback
 * reports are counted too, in case the library names one the harness
 * never reserved. */
static void kh_completion(int cb, void *params, uint32_t model, uint64_t job_id, NRT_STATUS status)
{
	uintptr_t k = (uintptr_t)params;
	int64_t named = k < KH_MAX_REGS ? ks_atomic_load_quiet(&kh_state.reg_cb[k]) : 0;

	if (named != cb + 1)
		oracle_fail("wrong-callback",
		            "job %llu came through callback %s with the parameters of "
		            "registration %llu, which registered %s",
		            (unsigned long long)job_id, kh_cb_names[cb], (unsigned long long)k,
		            named >= 1 && named <= KH_CB_NULL + 1 ? kh_cb_names[named - 1]
		                                                  : "nothing");
	if (k >= KH_MAX_REGS) /* a failure hook went on: nothing to count it under */
		return;
	if (job_id == 0) {
		ks_atomic_add_quiet(&kh_state.anon_reg[k], 1);
		ks_atomic_add_quiet(&kh_state.anon_calls, 1);
		if (status != NRT_SUCCESS) {
			int64_t i = ks_atomic_add_quiet(&kh_state.anon_failed, 1);

			if (i < KH_MAX_ANON)
				ks_atomic_store_quiet(&kh_state.anon_fmodel[i], model);
		}
		return;
	}
	if (job_id >= KH_MAX_JOBS)
		return;
	ks_atomic_max_quiet(&kh_state.job_hw, (int64_t)job_id);
	if (status == NRT_SUCCESS)
		ks_atomic_store_quiet(&kh_state.job_ok[job_id], 1);
	else
		ks_atomic_add_quiet(&kh_state.job_failed[job_id], 1);
	if (ks_atomic_add_quiet(&kh_state.job_calls[job_id], 1) == 0)
		ks_atomic_store_quiet(&kh_state.job_reg[job_id], (int64_t)k + 1);
}

static void kh_async_callback(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                              NRT_STATUS status)
{
	(void)vnc;
	kh_completion(KH_CB_A, params, model_id, job_id, status);
}

static void kh_async_callback_b(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                                NRT_STATUS status)
{
	(void)vnc;
	kh_completion(KH_CB_B, params, model_id, job_id, status);
}

/* Registration k, callback cb: recorded before the call (a completion it
 * installs finds it), its ticks around the call. */
static NRT_STATUS kh_register(int64_t k, int cb)
{
	static const NRT_ASYNC_EXEC_STATUS_CALLBACK fns[] = {kh_async_callback, kh_async_callback_b,
	                                                     NULL};
	NRT_STATUS rc;

	ks_atomic_store_quiet(&kh_state.reg_cb[k], cb + 1);
	ks_atomic_store_quiet(&kh_state.reg_t0[k], k ? (int64_t)oracle_tick() : 0);
	rc = nrt_register_async_exec_callback(fns[cb], (void *)(uintptr_t)k);
	ks_atomic_store_quiet(&kh_state.reg_t1[k], k ? (int64_t)oracle_tick() : 0);
	return rc;
}

void kh_register_first(void)
{
	ks_atomic_store_quiet(&kh_state.next_reg, 1);
	kh_register(0, KH_CB_A);
}

/* nrt_register_async_exec_callback from any thread, in any state: a, b or
 * NULL, each with its registration's number as params (docs/api-contract.md,
 * "Completions"; checked after close, kh_check_completions). */
void kh_nrt_callback(unsigned op, unsigned thread, const kh_args_t *a)
{
	int cb = a->cb >= KH_CB_A && a->cb <= KH_CB_NULL ? a->cb : KH_CB_NULL;
	int64_t k = ks_atomic_add_quiet(&kh_state.next_reg, 1);

	(void)thread;
	if (k >= KH_MAX_REGS)
		abort(); /* one registration an op: KPROG_MAX_OPS */
	kh_nrt_want(op, "nrt_register_async_exec_callback", kh_register(k, cb), NRT_SUCCESS);
}

/* The registration that had certainly replaced registration k by tick t
 * (one that began after k returned, and returned before t), or -1.  The
 * device takes the callback when it delivers a completion, after the
 * execution ran (lib/emu/async_exec.c, emu_callback), so no completion of
 * an execution submitted at t may come through k then.  After the run:
 * every registration has returned. */
static int64_t kh_replaced_by(int64_t k, uint64_t t)
{
	int64_t n = ks_atomic_peek(&kh_state.next_reg);
	int64_t t1 = ks_atomic_peek(&kh_state.reg_t1[k]);

	for (int64_t m = 0; m < n && m < KH_MAX_REGS; m++)
		if (ks_atomic_peek(&kh_state.reg_t0[m]) > t1 &&
		    ks_atomic_peek(&kh_state.reg_t1[m]) < (int64_t)t)
			return m;
	return -1;
}

/* May a NULL registration have dropped the completion of an execution
 * submitted at tick t?  Only one in place at some time between t and the
 * end of the deliveries (an nrt_close op's return, else the run's end). */
static bool kh_may_drop(uint64_t t)
{
	int64_t n = ks_atomic_peek(&kh_state.next_reg);
	int64_t end = ks_atomic_peek(&kh_state.close_t1);

	for (int64_t k = 0; k < n && k < KH_MAX_REGS; k++)
		if (ks_atomic_peek(&kh_state.reg_cb[k]) == KH_CB_NULL + 1 &&
		    (!end || ks_atomic_peek(&kh_state.reg_t0[k]) < end) && kh_replaced_by(k, t) < 0)
			return true;
	return false;
}

/* Job j came through registration k (kh_completion checked that k's
 * callback made the call): k must not have been replaced before j was
 * submitted. */
static void kh_check_delivery(uint64_t j, int64_t k)
{
	uint64_t t0 = (uint64_t)ks_atomic_peek(&kh_state.job_t0[j]);
	int64_t m = k < KH_MAX_REGS ? kh_replaced_by(k, t0) : -1;

	if (m >= 0)
		oracle_fail("stale-callback",
		            "job %llu (model %lld), submitted at tick %llu, came through "
		            "registration %lld (callback %s), which registration %lld (%s) had "
		            "replaced by tick %lld",
		            (unsigned long long)j,
		            (long long)ks_atomic_peek(&kh_state.job_model[j]),
		            (unsigned long long)t0, (long long)k,
		            kh_cb_names[ks_atomic_peek(&kh_state.reg_cb[k]) - 1], (long long)m,
		            kh_cb_names[ks_atomic_peek(&kh_state.reg_cb[m]) - 1],
		            (long long)ks_atomic_peek(&kh_state.reg_t1[m]));
}

/* Only after the threads were joined: no lock, which would add
 * scheduling points to the runs that ask. */
static bool kh_gone(uint32_t id)
{
	bool gone = false;

	for (unsigned i = 0; i < kh_state.ngone && !gone; i++)
		gone = kh_state.gone[i] == id;
	return gone || kh_state.ngone >= KH_MAX_GONE || ks_atomic_peek(&kh_state.unload_all);
}

/* May something have cancelled an execution of model id: an unload of
 * it, a close (closed: an nrt_close op ran), a planned fault
 * (docs/api-contract.md, "Completions")?  Only then may it fail. */
static bool kh_may_cancel(uint32_t id, bool closed)
{
	return closed || kh_state.faults || kh_gone(id);
}

/* An implicit-async execution whose success no callback reported: a NULL
 * registration dropped its completions, or it is nrt_execute's (job id 0,
 * which no callback names).  Queued, with nothing that may cancel it (an
 * unload of its model, a close, a fault), it ran and succeeded
 * (docs/api-contract.md, "Completions"): its outputs must show it, seen by a
 * callback or not.  Any callback at all (a failure) leaves it to
 * kh_check_job. */
static bool kh_ran_unseen(const kh_pend_t *pe, bool closed)
{
	if (pe->ret != NRT_SUCCESS || kh_may_cancel(pe->model, closed))
		return false;
	for (uint64_t j = pe->job_first; j <= pe->job_last && j < KH_MAX_JOBS; j++)
		if (j && ks_atomic_peek(&kh_state.job_calls[j]))
			return false;
	return true;
}

/* Every submitted execution completed or was cancelled.  A sleep, not a
 * yield: under control a sleeping thread is not runnable, so the device
 * threads run even when the decisions ran out (whose fallback keeps the
 * current thread). */
void kh_finish_pending(bool closed)
{
	for (unsigned k = 0; k < kh_state.pend_hw; k++) {
		kh_pend_t *pe = &kh_state.pend[k];
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
			/* nrt_tracker: its status is what the tracker lists, now
			 * final; unlisted, it succeeded and its outputs must show it */
			if (pe->tracker)
				ok = kh_tracker_list(pe, kh_may_cancel(pe->model, closed)) &&
				     !pe->reported;
		} else {
			/* seq_cst: the callback's store follows the device's writes of
			 * the outputs, so this load orders our reads after them */
			for (uint64_t j = pe->job_first; j <= pe->job_last && j < KH_MAX_JOBS; j++)
				ok |= ks_atomic_load_quiet(&kh_state.job_ok[j]) != 0;
			ok = ok || kh_ran_unseen(pe, closed);
		}
		if (ok && !closed) /* after a close the outputs can no longer be read */
			kh_iob_verify(&pe->b, pe->op);
		/* after a close too: it waits for nothing the close has not joined */
		if (pe->tracker)
			nrta_error_tracker_destroy(pe->tracker);
		kh_pend_put(pe);
	}
}

/* Job j's callbacks against its submission. */
static void kh_check_job(uint64_t j, bool closed)
{
	int64_t sub = ks_atomic_peek(&kh_state.job_sub[j]);
	int64_t calls = ks_atomic_peek(&kh_state.job_calls[j]);
	uint32_t model = (uint32_t)ks_atomic_peek(&kh_state.job_model[j]);

	if (sub == KH_JOB_QUEUED && calls == 0 &&
	    !kh_may_drop((uint64_t)ks_atomic_peek(&kh_state.job_t0[j])))
		oracle_fail("lost-completion",
		            "job %llu of model %u was queued and never called back (no NULL "
		            "registration could have dropped it)",
		            (unsigned long long)j, model);
	if (calls)
		kh_check_delivery(j, ks_atomic_peek(&kh_state.job_reg[j]) - 1);
	if (calls > 1)
		oracle_fail("duplicate-completion", "job %llu of model %u called back %lld times",
		            (unsigned long long)j, model, (long long)calls);
	/* a submission a fault refused may have queued first */
	if (sub != KH_JOB_QUEUED && calls && !(sub == KH_JOB_REFUSED && kh_state.faults))
		oracle_fail("unexpected-completion",
		            "job %llu (model %u), never queued, called back", (unsigned long long)j,
		            model);
	if (sub == KH_JOB_QUEUED && ks_atomic_peek(&kh_state.job_failed[j]) &&
	    !kh_may_cancel(model, closed))
		oracle_fail("cancelled-completion",
		            "job %llu failed, though model %u was never unloaded, nothing closed "
		            "and no fault was planned",
		            (unsigned long long)j, model);
}

/* nrt_execute's completions (job id 0), which no callback can tell
 * apart: at most what the statuses say was queued; at least what they say
 * was queued, less the submissions a NULL registration may have dropped;
 * through each registration at most the executions submitted before it
 * was replaced; and a failure only from a model that was unloaded, or
 * where a close ran or a fault was planned. */
static void kh_check_anon(bool closed)
{
	int64_t n = ks_atomic_peek(&kh_state.anon_n), regs = ks_atomic_peek(&kh_state.next_reg);
	int64_t calls = ks_atomic_peek(&kh_state.anon_calls), lo = 0, hi = 0;
	int64_t failed = ks_atomic_peek(&kh_state.anon_failed);

	for (int64_t i = 0; i < failed && i < KH_MAX_ANON; i++) {
		uint32_t model = (uint32_t)ks_atomic_peek(&kh_state.anon_fmodel[i]);

		if (!kh_may_cancel(model, closed))
			oracle_fail(
			    "cancelled-completion",
			    "nrt_execute: a callback of model %u said failure, though it was "
			    "never unloaded, nothing closed and no fault was planned",
			    model);
	}
	for (int64_t i = 0; i < n; i++) {
		hi += ks_atomic_peek(&kh_state.anon_hi[i]);
		if (!kh_may_drop((uint64_t)ks_atomic_peek(&kh_state.anon_t0[i])))
			lo += ks_atomic_peek(&kh_state.anon_lo[i]);
	}
	if (calls < lo || calls > hi)
		oracle_fail(calls < lo ? "lost-completion" : "duplicate-completion",
		            "nrt_execute: %lld callbacks; its statuses say at most %lld were "
		            "queued, %lld of them where no NULL registration could drop them",
		            (long long)calls, (long long)hi, (long long)lo);
	for (int64_t k = 0; k < regs && k < KH_MAX_REGS; k++) {
		int64_t got = ks_atomic_peek(&kh_state.anon_reg[k]), before = 0;

		for (int64_t i = 0; got && i < n; i++)
			if (kh_replaced_by(k, (uint64_t)ks_atomic_peek(&kh_state.anon_t0[i])) < 0)
				before += ks_atomic_peek(&kh_state.anon_hi[i]);
		if (got > before)
			oracle_fail(
			    "stale-callback",
			    "nrt_execute: registration %lld (callback %s) made %lld callbacks; "
			    "only %lld executions were submitted before it was replaced",
			    (long long)k, kh_cb_names[ks_atomic_peek(&kh_state.reg_cb[k]) - 1],
			    (long long)got, (long long)before);
	}
}

void kh_check_completions(bool closed)
{
	int64_t jobs = ks_atomic_peek(&kh_state.next_job);

	if (jobs >= KH_MAX_JOBS)
		jobs = KH_MAX_JOBS - 1;
	for (int64_t j = 1; j <= jobs; j++)
		kh_check_job((uint64_t)j, closed);
	if (ks_atomic_peek(&kh_state.job_hw) > jobs)
		oracle_fail("unexpected-completion", "a callback named job %lld, never handed out",
		            (long long)ks_atomic_peek(&kh_state.job_hw));
	kh_check_anon(closed);
}

/* The job flags a run used, cleared at the end of that run, not at the
 * start of the next: the loop then runs as often as this input had jobs.
 * Cleared by the next run, its length would be the previous input's job
 * count, so the same input would take other edge counts after another (an
 * unstable edge to AFL++, a spurious feature to libFuzzer: ctest
 * cov_stable). */
void kh_clear_jobs(void)
{
	int64_t jobs = ks_atomic_peek(&kh_state.next_job);

	if (ks_atomic_peek(&kh_state.job_hw) > jobs)
		jobs = ks_atomic_peek(&kh_state.job_hw);
	if (jobs >= KH_MAX_JOBS)
		jobs = KH_MAX_JOBS - 1;
	ks_atomic_reset(&kh_state.next_job);
	ks_atomic_reset(&kh_state.job_hw);
	ks_atomic_reset(&kh_state.anon_calls);
	for (int64_t i = 0; i < ks_atomic_peek(&kh_state.anon_failed) && i < KH_MAX_ANON; i++)
		ks_atomic_reset(&kh_state.anon_fmodel[i]);
	ks_atomic_reset(&kh_state.anon_failed);
	for (int64_t i = 0; i < ks_atomic_peek(&kh_state.anon_n) && i < KH_MAX_ANON; i++) {
		ks_atomic_reset(&kh_state.anon_t0[i]);
		ks_atomic_reset(&kh_state.anon_lo[i]);
		ks_atomic_reset(&kh_state.anon_hi[i]);
	}
	ks_atomic_reset(&kh_state.anon_n);
	for (int64_t k = 0; k < ks_atomic_peek(&kh_state.next_reg) && k < KH_MAX_REGS; k++) {
		ks_atomic_reset(&kh_state.reg_cb[k]);
		ks_atomic_reset(&kh_state.reg_t0[k]);
		ks_atomic_reset(&kh_state.reg_t1[k]);
		ks_atomic_reset(&kh_state.anon_reg[k]);
	}
	ks_atomic_reset(&kh_state.next_reg);
	ks_atomic_reset(&kh_state.close_t1);
	for (int64_t j = 0; j <= jobs; j++) {
		ks_atomic_reset(&kh_state.job_t0[j]);
		ks_atomic_reset(&kh_state.job_reg[j]);
		ks_atomic_reset(&kh_state.job_calls[j]);
		ks_atomic_reset(&kh_state.job_ok[j]);
		ks_atomic_reset(&kh_state.job_failed[j]);
		ks_atomic_reset(&kh_state.job_sub[j]);
		ks_atomic_reset(&kh_state.job_model[j]);
	}
}
