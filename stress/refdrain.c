/*
 * refdrain.c - stress_refdrain: the ref-drain of kmgr_unload_nn under fire.
 *
 * Executors loop kmgr_exec on the models' H_NN ids (sync mode; even
 * executors use device tensors, odd ones host tensors, so the shadow-clone
 * path runs too) while unloaders unload a model with executions in flight
 * and load it again under a new id.  Checks:
 *   - unload returns only after every in-flight execution of that model
 *     released: the observer's SUBMIT-COMPLETE balance for the id and
 *     kbl_model_inflight are zero when nrt_unload returns;
 *   - no SUBMIT or START event for a model after its unload returned, and no
 *     execution that began after the unload returned succeeds;
 *   - every successful execution's outputs follow the compute formula;
 *   - ids only grow; accounting is zero after nrt_close.
 * Measures executions/s and the unload drain wait (the time nrt_unload takes
 * while executions are in flight: p50, p99, max).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/kalloc.h"
#include "nrt_kmgr.h"
#include "torture.h"

enum { RD_H_EXEC, RD_H_UNLOAD };

typedef struct rd_slot {
	ks_atomic_t nn;     /* the current H_NN id; executors race the unload on it */
	nrt_model_t *model; /* owned by the slot's unloader (main before and after) */
} rd_slot_t;

static struct {
	rd_slot_t slot[TORTURE_MAX_MODELS];
	uint8_t *bytes;
	size_t len;
	uint32_t unloaders;
	ks_atomic_t ok, stale, reloads;
} rd;

static bool rd_status_ok(torture_t *t, NRT_STATUS st)
{
	/* Under a fault plan any clean status is fine; without one only the
	 * stale handle of a model being unloaded is. */
	if (t->k.fault[0])
		return torture_status_known(st);
	return st == NRT_SUCCESS || st == NRT_INVALID_HANDLE;
}

static void rd_exec_one(torture_thread_t *w, torture_io_t *io, uint32_t id, uint64_t seq)
{
	torture_t *t = w->t;
	oracle_nn_t *e = oracle_nn_get(id);
	bool gone_before = e && ks_atomic_peek(&e->unloaded);
	uint64_t t0;
	NRT_STATUS st;
	int bad;

	torture_set_op(w, "fill inputs");
	if (torture_io_fill(io, torture_rand(w)) != NRT_SUCCESS) {
		torture_fail(t, "nrt_tensor_write failed");
		return;
	}
	torture_set_op(w, "kmgr_exec");
	t0 = torture_now_ns();
	st = kmgr_exec((H_NN){id}, io->t.in_set, io->t.out_set, ((uint64_t)w->idx << 40) | seq);
	torture_count(w, st);
	if (st == NRT_INVALID_HANDLE) {
		ks_atomic_add_quiet(&rd.stale, 1);
		return;
	}
	if (st != NRT_SUCCESS) {
		if (!rd_status_ok(t, st))
			torture_fail(t, "kmgr_exec on model %u returned %s", id,
			             nrt_get_status_as_str(st));
		return;
	}
	torture_hist_add(w, RD_H_EXEC, torture_now_ns() - t0);
	ks_atomic_add_quiet(&rd.ok, 1);
	if (gone_before)
		torture_fail(t,
		             "kmgr_exec on model %u succeeded although its unload had returned "
		             "before the execution began",
		             id);
	torture_set_op(w, "verify outputs");
	bad = torture_io_verify(io);
	if (bad)
		torture_fail(t, "model %u: output %d differs from the compute formula", id,
		             bad - 1);
}

static void *rd_executor(torture_thread_t *w)
{
	torture_t *t = w->t;
	torture_io_t io;
	nrt_tensor_placement_t pl =
	    w->role_idx % 2 ? NRT_TENSOR_PLACEMENT_HOST : NRT_TENSOR_PLACEMENT_DEVICE;
	uint64_t seq = 0;

	torture_set_op(w, "nrt_tensor_allocate");
	if (torture_io_alloc(&io, 1, 1, pl, 0) != NRT_SUCCESS) {
		if (!t->k.fault[0])
			torture_fail(t, "executor: cannot allocate its tensors");
		return NULL;
	}
	while (!torture_should_stop(t)) {
		uint32_t s = (uint32_t)torture_rand_below(w, t->k.models);
		uint32_t id;

		torture_set_op(w, "read slot");
		id = (uint32_t)ks_atomic_load(&rd.slot[s].nn);
		if (id)
			rd_exec_one(w, &io, id, ++seq);
		else
			ks_yield();
		if (torture_op_done(w))
			break;
	}
	torture_set_op(w, "nrt_tensor_free");
	torture_io_free(&io);
	return NULL;
}

/* Load into slot s and publish the id (after the observer tracks it). */
static NRT_STATUS rd_load(torture_t *t, uint32_t s)
{
	nrt_model_t *m = NULL;
	NRT_STATUS st = nrt_load(rd.bytes, rd.len, -1, -1, &m);
	H_NN h;

	if (st != NRT_SUCCESS)
		return st;
	if (nrt_model_get_nn(m, &h) != NRT_SUCCESS) {
		torture_fail(t, "nrt_model_get_nn failed on a loaded model");
		return NRT_FAILURE;
	}
	oracle_note_loaded(h.id);
	rd.slot[s].model = m;
	ks_atomic_store(&rd.slot[s].nn, h.id);
	return NRT_SUCCESS;
}

static void rd_unload(torture_t *t, torture_thread_t *w, uint32_t s)
{
	uint32_t id = (uint32_t)ks_atomic_peek(&rd.slot[s].nn);
	uint64_t t0 = torture_now_ns();
	NRT_STATUS st = nrt_unload(rd.slot[s].model);

	if (w)
		torture_hist_add(w, RD_H_UNLOAD, torture_now_ns() - t0);
	if (st != NRT_SUCCESS)
		torture_fail(t, "nrt_unload of model %u returned %s", id,
		             nrt_get_status_as_str(st));
	torture_unloaded(t, id);
	rd.slot[s].model = NULL;
}

static void *rd_unloader(torture_thread_t *w)
{
	torture_t *t = w->t;
	uint32_t mine = 0;

	for (uint32_t s = w->role_idx; s < t->k.models; s += rd.unloaders)
		mine++;
	while (!torture_should_stop(t)) {
		uint32_t s = w->role_idx + rd.unloaders * (uint32_t)torture_rand_below(w, mine);
		NRT_STATUS st;

		torture_set_op(w, "let executions pile up");
		ks_usleep(torture_rand_below(w, 200));
		if (rd.slot[s].model) {
			torture_set_op(w, "nrt_unload");
			rd_unload(t, w, s);
		}
		torture_set_op(w, "nrt_load");
		st = rd_load(t, s);
		torture_count(w, st);
		if (st == NRT_SUCCESS)
			ks_atomic_add_quiet(&rd.reloads, 1);
		else if (!t->k.fault[0] || !torture_status_known(st))
			torture_fail(t, "nrt_load returned %s", nrt_get_status_as_str(st));
		else
			ks_atomic_store(&rd.slot[s].nn, 0);
		if (torture_op_done(w))
			break;
	}
	return NULL;
}

static int rd_setup(torture_t *t)
{
	uint32_t execs;
	NRT_STATUS st = torture_model_bytes(1, 1, 1, &rd.bytes, &rd.len);

	if (st != NRT_SUCCESS) {
		torture_fail(t, "cannot build the model: %s", nrt_get_status_as_str(st));
		return -1;
	}
	for (uint32_t s = 0; s < t->k.models; s++) {
		st = rd_load(t, s);
		if (st != NRT_SUCCESS && !(t->k.fault[0] && torture_status_known(st))) {
			torture_fail(t, "initial nrt_load returned %s", nrt_get_status_as_str(st));
			return -1;
		}
	}
	rd.unloaders = t->k.threads / 4 ? t->k.threads / 4 : 1;
	if (rd.unloaders > t->k.models)
		rd.unloaders = t->k.models;
	execs = t->k.threads > rd.unloaders ? t->k.threads - rd.unloaders : 1;
	for (uint32_t i = 0; i < execs; i++)
		if (torture_spawn(t, "executor", rd_executor, NULL) != 0)
			return -1;
	for (uint32_t i = 0; i < rd.unloaders; i++)
		if (torture_spawn(t, "unloader", rd_unloader, NULL) != 0)
			return -1;
	return 0;
}

static void rd_teardown(torture_t *t)
{
	for (uint32_t s = 0; s < t->k.models; s++)
		if (rd.slot[s].model)
			rd_unload(t, NULL, s);
	free(rd.bytes);
	rd.bytes = NULL;
}

static void rd_report(torture_t *t, bool json, void *file)
{
	FILE *f = file;
	double secs = (double)(torture_now_ns() - t->start_ns) / 1e9;
	int64_t ok = ks_atomic_peek(&rd.ok);

	if (json) {
		fprintf(f,
		        "  \"refdrain\": {\"executions_ok\": %" PRId64
		        ", \"executions_per_s\": %.1f, "
		        "\"stale_handle\": %" PRId64 ", \"reloads\": %" PRId64 "},\n",
		        ok, secs > 0 ? (double)ok / secs : 0.0, ks_atomic_peek(&rd.stale),
		        ks_atomic_peek(&rd.reloads));
		return;
	}
	fprintf(f,
	        "   executions %" PRId64 " ok (%.0f/s), %" PRId64 " on a stale handle, %" PRId64
	        " reloads\n",
	        ok, secs > 0 ? (double)ok / secs : 0.0, ks_atomic_peek(&rd.stale),
	        ks_atomic_peek(&rd.reloads));
}

static const torture_ops_t rd_ops = {
    .name = "stress_refdrain",
    .summary = "executors loop on models (sync) while unloaders unload and reload them",
    .hist_names = {"exec", "unload"},
    .setup = rd_setup,
    .teardown = rd_teardown,
    .report = rd_report,
};

int main(int argc, char **argv)
{
	return torture_main(&rd_ops, argc, argv);
}
