/*
 * check.c - the oracle's checks on the run as a whole (oracle.h): failure
 * reports, the device execution observer and its per-handle table, ids,
 * reference counts and accounting (values.c checks what one operation
 * answered).  One copy, used by the fuzz runner (fuzz/harness), the tests
 * kmgr-repro emits (which embed it) and the stress binaries (through the
 * failure hook).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/kalloc.h"
#include "emu/emu.h"
#include "kmgr/kmgr.h"
#include "oracle/oracle.h"

/* Ids handed out since oracle_begin, one bit each: the first 16M of a run
 * (a stress run's whole life, a fuzz program's few). */
#define ORACLE_ID_WORDS (1u << 18)

static struct {
	oracle_report_fn report;
	void *report_ctx;
	oracle_fail_fn fail;
	void *fail_ctx;
	int64_t base_host_allocs, base_host_bytes;
	ks_atomic_t max_id; /* process-wide: the largest id seen */
	uint32_t base_id;   /* the largest id issued before this run */
	ks_atomic_t id_hw;  /* the highest id word set this run */
	ks_atomic_t clock;  /* unloads that returned */
	ks_atomic_t inflight;
	oracle_nn_t nn[ORACLE_NN_SLOTS];
	ks_atomic_t ids[ORACLE_ID_WORDS];
} oc;

void oracle_set_report(oracle_report_fn fn, void *ctx)
{
	oc.report = fn;
	oc.report_ctx = ctx;
}

void oracle_set_fail_hook(oracle_fail_fn fn, void *ctx)
{
	oc.fail = fn;
	oc.fail_ctx = ctx;
}

void oracle_fail(const char *invariant, const char *fmt, ...)
{
	/* on the stack: with a failure hook, two threads may fail at once */
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (oc.fail) {
		oc.fail(oc.fail_ctx, invariant, msg);
		return;
	}
	/* the first line is the crash signature: keep it stable */
	fprintf(stderr, "ORACLE: %s: %s\n", invariant, msg);
	fflush(stderr);
	if (oc.report)
		oc.report(oc.report_ctx, invariant, msg);
	fflush(stderr);
	abort();
}

void oracle_begin(void)
{
	int64_t hw = ks_atomic_load_quiet(&oc.id_hw);

	for (int64_t w = 0; w <= hw && w < (int64_t)ORACLE_ID_WORDS; w++)
		ks_atomic_reset(&oc.ids[w]);
	ks_atomic_reset(&oc.id_hw);
	oc.base_id = (uint32_t)ks_atomic_load_quiet(&oc.max_id);
	oc.base_host_allocs = kalloc_live_count();
	oc.base_host_bytes = kalloc_live_bytes();
}

/* ---- the observer --------------------------------------------------- */

oracle_nn_t *oracle_nn_get(uint32_t id)
{
	oracle_nn_t *e = &oc.nn[id % ORACLE_NN_SLOTS];

	return (uint32_t)ks_atomic_peek(&e->id) == id ? e : NULL;
}

/* Reset the counters before the id, so an observer that matches the id
 * sees a clean entry.  Only the loader of id writes here. */
static void nn_track(uint32_t id)
{
	oracle_nn_t *e = &oc.nn[id % ORACLE_NN_SLOTS];

	ks_atomic_store_quiet(&e->id, 0);
	ks_atomic_store_quiet(&e->h_model, 0);
	ks_atomic_store_quiet(&e->unloaded, 0);
	ks_atomic_store_quiet(&e->inflight, 0);
	ks_atomic_store_quiet(&e->submits, 0);
	ks_atomic_store_quiet(&e->completes, 0);
	ks_atomic_store_quiet(&e->id, id);
}

/* Sets id's bit; false when it was set already. */
static bool id_first_time(uint32_t id)
{
	uint64_t k = (uint64_t)id - oc.base_id - 1, w = k / 64;
	int64_t bit = (int64_t)(1ull << (k % 64)), cur;

	if (w >= ORACLE_ID_WORDS)
		return true; /* beyond the window: only the "above base" check */
	ks_atomic_max_quiet(&oc.id_hw, (int64_t)w);
	cur = ks_atomic_load_quiet(&oc.ids[w]);
	while (!(cur & bit) && !ks_atomic_cas_quiet(&oc.ids[w], &cur, cur | bit))
		;
	return !(cur & bit);
}

void oracle_note_loaded(uint32_t id)
{
	/* concurrent loads may return out of id order, so: above every id of
	 * earlier runs, and distinct from every id of this one */
	if (id <= oc.base_id)
		oracle_fail("id-reused", "load returned id %u, ids up to %u were issued before", id,
		            oc.base_id);
	if (!id_first_time(id))
		oracle_fail("id-reused", "load returned id %u twice", id);
	ks_atomic_max_quiet(&oc.max_id, id);
	if (id > kmgr_last_nn_id())
		oracle_fail("id-order", "load returned id %u beyond last_nn_id %u", id,
		            kmgr_last_nn_id());
	nn_track(id);
}

int64_t oracle_note_unloaded(uint32_t id, bool drained)
{
	oracle_nn_t *e = oracle_nn_get(id);
	int64_t h_model, left, clock;

	if (!e)
		return 0;
	h_model = ks_atomic_peek(&e->h_model);
	left = ks_atomic_peek(&e->inflight);
	if (drained && left != 0)
		oracle_fail("unload-not-drained",
		            "unload of model %u returned with %lld execution(s) still in flight "
		            "(observer: %lld submitted, %lld completed)",
		            id, (long long)left, (long long)ks_atomic_peek(&e->submits),
		            (long long)ks_atomic_peek(&e->completes));
	if (drained && h_model && kbl_model_inflight((H_MODEL)h_model) != 0)
		oracle_fail("unload-not-drained",
		            "unload of model %u returned with kbl_model_inflight = %lld", id,
		            (long long)kbl_model_inflight((H_MODEL)h_model));
	clock = ks_atomic_add_quiet(&oc.clock, 1) + 1;
	ks_atomic_store_quiet(&e->unloaded, clock);
	return clock;
}

int64_t oracle_unload_clock(void)
{
	return ks_atomic_peek(&oc.clock);
}

int64_t oracle_inflight(void)
{
	return ks_atomic_peek(&oc.inflight);
}

static const char *ev_name(emu_exec_event_t ev)
{
	static const char *const names[] = {"SUBMIT", "START", "COMPLETE", "CANCEL"};

	return (unsigned)ev < 4 ? names[ev] : "other";
}

/* Runs on device threads: a submit or start of a model whose unload has
 * already returned is the use-after-unload the ref protocol forbids. */
static void oracle_observer(void *ctx, emu_exec_event_t ev, uint64_t h_model, uint32_t h_nn,
                            NRT_STATUS status)
{
	bool begins = ev == EMU_EXEC_SUBMIT || ev == EMU_EXEC_START;
	oracle_nn_t *e = oracle_nn_get(h_nn);

	(void)ctx;
	(void)status;
	if (ev == EMU_EXEC_SUBMIT)
		ks_atomic_add_quiet(&oc.inflight, 1);
	else if (!begins)
		ks_atomic_add_quiet(&oc.inflight, -1);
	if (!e)
		return;
	if (ev == EMU_EXEC_SUBMIT) {
		ks_atomic_add_quiet(&e->inflight, 1);
		ks_atomic_add_quiet(&e->submits, 1);
		if (!ks_atomic_peek(&e->h_model))
			ks_atomic_store_quiet(&e->h_model, (int64_t)h_model);
	} else if (!begins) {
		ks_atomic_add_quiet(&e->inflight, -1);
		ks_atomic_add_quiet(&e->completes, 1);
	}
	if (begins && ks_atomic_peek(&e->unloaded))
		oracle_fail("exec-after-unload",
		            "%s of model %u (h_model %llu) after its unload returned", ev_name(ev),
		            h_nn, (unsigned long long)h_model);
}

void oracle_attach(void)
{
	ks_atomic_reset(&oc.inflight);
	emu_set_exec_observer(oracle_observer, NULL);
}

void oracle_detach(void)
{
	emu_set_exec_observer(NULL, NULL);
}

/* ---- end-of-run checks ---------------------------------------------- */

void oracle_check_refcounts(bool faults_possible)
{
	H_NN *ids = NULL;
	uint32_t count = 0;

	if (kmgr_get_nns(&ids, &count) != NRT_SUCCESS) {
		if (!faults_possible)
			oracle_fail("refcount", "kmgr_get_nns failed at quiescence");
		return;
	}
	for (uint32_t i = 0; i < count; i++) {
		dlr_model *mod = db_get_nn_ref_count(ids[i]);
		int64_t ref;

		if (!mod) {
			oracle_fail("refcount", "model %u listed but not found", ids[i].id);
			continue;
		}
		ref = dlr_model_peek_ref_count(mod);
		nn_ref_decrement(mod);
		if (ref != 1)
			oracle_fail("refcount", "model %u has %lld references at quiescence",
			            ids[i].id, (long long)ref - 1);
	}
	kfree(ids);
}

void oracle_check_closed(const char *when)
{
	emu_accounting_t a;

	emu_get_accounting(&a);
	if (a.device_bytes || a.device_allocs || a.objects || a.staged_models || a.inflight_execs ||
	    a.async_marks)
		oracle_fail("leak-after-close",
		            "%s: device bytes %lld allocs %lld objects %lld staged %lld inflight "
		            "%lld async_marks %lld",
		            when, (long long)a.device_bytes, (long long)a.device_allocs,
		            (long long)a.objects, (long long)a.staged_models,
		            (long long)a.inflight_execs, (long long)a.async_marks);
	if (a.host_allocs != oc.base_host_allocs || a.host_bytes != oc.base_host_bytes)
		oracle_fail("leak-after-close",
		            "%s: host allocations %lld (%lld bytes), %lld (%lld) before the run",
		            when, (long long)a.host_allocs, (long long)a.host_bytes,
		            (long long)oc.base_host_allocs, (long long)oc.base_host_bytes);
}

void oracle_check_error_list(unsigned op, nrta_seq_t seq, NRT_STATUS rc, const nrta_error_t *list,
                             size_t n, bool may_fail, bool faults, bool *reported)
{
	if (rc != NRT_SUCCESS) {
		if (!(faults && rc == NRT_RESOURCE))
			oracle_fail("error-tracker",
			            "op %u: nrta_error_tracker_get_list answered %d", op, (int)rc);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (list[i].seq_id != seq) {
			oracle_fail("error-tracker",
			            "op %u: the list names sequence %llx, never scheduled with the "
			            "tracker (%llx was)",
			            op, (unsigned long long)list[i].seq_id,
			            (unsigned long long)seq);
			continue;
		}
		if (*reported)
			oracle_fail("error-tracker", "op %u: sequence %llx listed twice", op,
			            (unsigned long long)seq);
		if (list[i].error_code == NRT_SUCCESS)
			oracle_fail("error-tracker", "op %u: sequence %llx listed with success", op,
			            (unsigned long long)seq);
		else if (!may_fail)
			oracle_fail(
			    "error-tracker",
			    "op %u: sequence %llx listed as failed (%llu), though no fault, "
			    "unload or close could end it",
			    op, (unsigned long long)seq, (unsigned long long)list[i].error_code);
		*reported = true;
	}
}
