/*
 * check.c - the oracle's checks (oracle.h): failure reports, the device
 * execution observer and its per-handle table, ids, reference counts,
 * accounting, values against the reference model and the model_parse
 * target's check.  One copy, used by the fuzz runner (fuzz/harness), the
 * tests kmgr-repro emits (which embed it) and the stress binaries (the
 * observer, ids, reference counts and accounting, through the failure
 * hook).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "base/kattr.h"
#include "emu/emu.h"
#include "kmgr/kmgr.h"
#include "model/kmodel.h"
#include "model/kmodel_int.h"
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

/* ---- values against the reference model ----------------------------- */

/* The index of the first byte where a and b differ, or n.  No coverage
 * counters (KATTR_NO_COVERAGE): a comparison callback per byte was the
 * largest single cost of checking an execution. */
KATTR_NO_COVERAGE static uint64_t first_difference(const uint8_t *a, const uint8_t *b, uint64_t n)
{
	uint64_t k = 0;

	while (k < n && a[k] == b[k])
		k++;
	return k;
}

/* Output i against the formula.  Template outputs fit the stack buffers;
 * only an inline model's large output takes the heap (two 64 KiB arrays
 * on every call made ASan poison and unpoison 128 KiB of stack shadow per
 * execution checked). */
static void check_output(unsigned op, const oracle_io_t *io, unsigned i, nrt_tensor_t *t,
                         const uint8_t *const *in)
{
	uint64_t size = io->size[i], k;
	uint8_t got_s[256], want_s[256];
	uint8_t *got = got_s, *want = want_s;

	if (size > sizeof(got_s)) {
		got = malloc(size);
		want = malloc(size);
		if (!got || !want)
			abort();
	}
	if (nrt_tensor_read(t, got, 0, size) != NRT_SUCCESS) {
		oracle_fail("exec-output", "op %u: output %s unreadable", op, io->name[i]);
		size = 0; /* a failure hook returned: nothing to compare */
	}
	emu_compute_expected(io->n_in, in, io->size, i - io->n_in, want, size);
	k = first_difference(got, want, size);
	if (k < size)
		oracle_fail("exec-output",
		            "op %u: output %s byte %llu is 0x%02x, the formula says 0x%02x", op,
		            io->name[i], (unsigned long long)k, got[k], want[k]);
	if (got != got_s) {
		free(got);
		free(want);
	}
}

void oracle_check_outputs(unsigned op, const oracle_io_t *io, const uint8_t *const *in,
                          nrt_tensor_t *const *out)
{
	for (uint32_t j = 0; j < io->n_out; j++)
		if (out[j])
			check_output(op, io, io->n_in + j, out[j], in);
}

void oracle_check_tensor_info(unsigned op, const oracle_io_t *io, uint32_t idx, const char *name,
                              size_t size)
{
	if (strcmp(name, io->name[idx]) || size != io->size[idx])
		oracle_fail(
		    "metadata",
		    "op %u: tensor %u is '%s' of %zu bytes, the container says '%s' of %llu", op,
		    idx, name, size, io->name[idx], (unsigned long long)io->size[idx]);
}

void oracle_check_ifmap_valid(unsigned op, const char *name, bool valid, bool want)
{
	if (valid != want)
		oracle_fail("metadata", "op %u: is_valid_ifmap('%s') = %d, the container says %d",
		            op, name, valid, want);
}

void oracle_check_counts(unsigned op, const oracle_io_t *io, uint32_t n_in, bool with_out,
                         uint32_t n_out)
{
	if (n_in != io->n_in || (with_out && n_out != io->n_out))
		oracle_fail("metadata", "op %u: %u inputs %u outputs, the container has %u and %u",
		            op, n_in, with_out ? n_out : io->n_out, io->n_in, io->n_out);
}

void oracle_check_nc_info(unsigned op, uint32_t id, oracle_placement_t want, unsigned nc,
                          uint32_t found_start, uint32_t start, uint32_t count)
{
	if (!oracle_placement_is(want, nc, start, count) || start != found_start)
		oracle_fail("nc-info",
		            "op %u: model %u runs on cores %u+%u; loaded as %d+%u, found at %u", op,
		            id, start, count, want.start, want.count, found_start);
}

/* ---- the model_parse target ------------------------------------------ */

static void parse_once(const uint8_t *data, size_t size)
{
	int64_t live = kalloc_live_count();
	kmodel_t *m = NULL;
	uint8_t *out = NULL;
	size_t len = 0;

	if (kmodel_parse(data, size, &m) == NRT_SUCCESS) {
		if (kmodel_serialize(m, &out, &len) != NRT_SUCCESS || len != size ||
		    memcmp(out, data, size) != 0)
			oracle_fail("model-canonical", "accepted bytes are not canonical");
		kfree(out);
		kmodel_free(m);
	} else if (m) {
		oracle_fail("model-failed-parse", "a failed parse handed out a model");
	}
	if (kalloc_live_count() != live)
		oracle_fail("model-leak", "live kalloc count changed by %lld",
		            (long long)(kalloc_live_count() - live));
}

void oracle_model_parse(const uint8_t *data, size_t size)
{
	uint8_t *fixed;
	uint32_t crc;

	parse_once(data, size);
	if (size < 4)
		return;
	/* an exact-size copy, so a read one past the end is still caught */
	fixed = malloc(size);
	if (!fixed)
		return;
	memcpy(fixed, data, size);
	crc = kmodel__crc32(fixed, size - 4);
	for (int i = 0; i < 4; i++)
		fixed[size - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
	parse_once(fixed, size);
	free(fixed);
}
