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
#include <nrt/nrt.h>

#include "emu/emu.h"
#include "harness/state.h"

void kh_job_submitted(uint64_t job, uint32_t model, bool queued)
{
	if (job >= KH_MAX_JOBS)
		return;
	ks_atomic_store_quiet(&kh_state.job_model[job], model);
	ks_atomic_store_quiet(&kh_state.job_sub[job], queued ? KH_JOB_QUEUED : KH_JOB_REFUSED);
}

/* nrt_execute_repeat stops at the first status other than success: all
 * of them queued, or fewer than repeat. */
void kh_anon_submitted(int repeat, NRT_STATUS rc)
{
	int n = repeat > 0 ? repeat : 1;

	ks_atomic_add_quiet(&kh_state.anon_min, rc == NRT_SUCCESS ? n : 0);
	ks_atomic_add_quiet(&kh_state.anon_max, rc == NRT_SUCCESS ? n : n - 1);
}

/* The job flags are cleared only up to the highest id a run touched (a
 * full sweep was a tenth of a short run); ids the callback reports are
 * counted too, in case the library names one the harness never reserved. */
void kh_async_callback(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                       NRT_STATUS status)
{
	(void)params;
	(void)model_id;
	(void)vnc;
	if (job_id == 0) {
		ks_atomic_add_quiet(&kh_state.anon_calls, 1);
		return;
	}
	if (job_id >= KH_MAX_JOBS)
		return;
	ks_atomic_max_quiet(&kh_state.job_hw, (int64_t)job_id);
	if (status == NRT_SUCCESS)
		ks_atomic_store_quiet(&kh_state.job_ok[job_id], 1);
	else
		ks_atomic_add_quiet(&kh_state.job_failed[job_id], 1);
	ks_atomic_add_quiet(&kh_state.job_calls[job_id], 1);
}

static bool kh_gone(uint32_t id);

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
				ok = kh_tracker_list(pe, kh_state.faults || kh_gone(pe->model)) &&
				     !pe->reported;
		} else {
			/* seq_cst: the callback's store follows the device's writes of
			 * the outputs, so this load orders our reads after them */
			for (uint64_t j = pe->job_first; j <= pe->job_last && j < KH_MAX_JOBS; j++)
				ok |= ks_atomic_load_quiet(&kh_state.job_ok[j]) != 0;
		}
		if (ok && !closed) /* after a close the outputs can no longer be read */
			kh_iob_verify(&pe->b, pe->op);
		/* after a close too: it waits for nothing the close has not joined */
		if (pe->tracker)
			nrta_error_tracker_destroy(pe->tracker);
		kh_pend_put(pe);
	}
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

/* Job j's callbacks against its submission. */
static void kh_check_job(uint64_t j, bool closed)
{
	int64_t sub = ks_atomic_peek(&kh_state.job_sub[j]);
	int64_t calls = ks_atomic_peek(&kh_state.job_calls[j]);
	uint32_t model = (uint32_t)ks_atomic_peek(&kh_state.job_model[j]);

	if (sub == KH_JOB_QUEUED && calls == 0)
		oracle_fail("lost-completion",
		            "job %llu of model %u was queued and never called back",
		            (unsigned long long)j, model);
	if (calls > 1)
		oracle_fail("duplicate-completion", "job %llu of model %u called back %lld times",
		            (unsigned long long)j, model, (long long)calls);
	/* a submission a fault refused may have queued first */
	if (sub != KH_JOB_QUEUED && calls && !(sub == KH_JOB_REFUSED && kh_state.faults))
		oracle_fail("unexpected-completion",
		            "job %llu (model %u), never queued, called back", (unsigned long long)j,
		            model);
	if (sub == KH_JOB_QUEUED && ks_atomic_peek(&kh_state.job_failed[j]) && !closed &&
	    !kh_state.faults && !kh_gone(model))
		oracle_fail("cancelled-completion",
		            "job %llu failed, though model %u was never unloaded, nothing closed "
		            "and no fault was planned",
		            (unsigned long long)j, model);
}

void kh_check_completions(bool closed)
{
	int64_t jobs = ks_atomic_peek(&kh_state.next_job);
	int64_t anon = ks_atomic_peek(&kh_state.anon_calls);

	if (jobs >= KH_MAX_JOBS)
		jobs = KH_MAX_JOBS - 1;
	for (int64_t j = 1; j <= jobs; j++)
		kh_check_job((uint64_t)j, closed);
	if (ks_atomic_peek(&kh_state.job_hw) > jobs)
		oracle_fail("unexpected-completion", "a callback named job %lld, never handed out",
		            (long long)ks_atomic_peek(&kh_state.job_hw));
	if (anon < ks_atomic_peek(&kh_state.anon_min) || anon > ks_atomic_peek(&kh_state.anon_max))
		oracle_fail(
		    anon < ks_atomic_peek(&kh_state.anon_min) ? "lost-completion"
		                                              : "duplicate-completion",
		    "nrt_execute: %lld callbacks, its statuses say %lld to %lld were queued",
		    (long long)anon, (long long)ks_atomic_peek(&kh_state.anon_min),
		    (long long)ks_atomic_peek(&kh_state.anon_max));
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
	ks_atomic_reset(&kh_state.anon_min);
	ks_atomic_reset(&kh_state.anon_max);
	for (int64_t j = 0; j <= jobs; j++) {
		ks_atomic_reset(&kh_state.job_calls[j]);
		ks_atomic_reset(&kh_state.job_ok[j]);
		ks_atomic_reset(&kh_state.job_failed[j]);
		ks_atomic_reset(&kh_state.job_sub[j]);
		ks_atomic_reset(&kh_state.job_model[j]);
	}
}
