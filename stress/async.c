/*
 * async.c - stress_async: the implicit-async worker pool and the explicit
 * nrta_* surface under load.
 *
 * The runtime starts in implicit-async mode (queue bound --queue-depth).
 * Submitters keep the queues full through kmgr_exec with device tensors
 * (NRT_QUEUE_FULL is expected and retried); unloaders wait until a model
 * has queued work and unload it then, so kmgr_unload_nn takes the
 * model_stop path (queued work cancelled, the running item finished), and
 * load it again under a new id; stormers hammer a model that stays loaded
 * with bursts of nrta_execute_schedule and poll nrta_is_completed.  Checks:
 *   - completions equal submissions: every accepted implicit-async
 *     execution gets exactly one callback, every scheduled sequence number
 *     completes;
 *   - no callback, SUBMIT or START for a model after its unload returned,
 *     and nothing of it in flight then;
 *   - outputs follow the compute formula (stormers, after each burst);
 *   - accounting is zero after nrt_close.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <nrt/nrt_async.h>
#include <nrt/nrt_experimental.h>

#include "base/kalloc.h"
#include "nrt_kmgr.h"
#include "torture.h"

enum { AS_H_SUBMIT, AS_H_UNLOAD, AS_H_BURST };
#define AS_BURST 8

typedef struct as_slot {
	ks_atomic_t nn;
	nrt_model_t *model; /* owned by its unloader */
} as_slot_t;

static struct {
	as_slot_t slot[TORTURE_MAX_MODELS];
	nrt_model_t *anchor; /* the stormers' model, never unloaded during the run */
	uint8_t *bytes;
	size_t len;
	uint32_t unloaders;
	ks_atomic_t accepted[TORTURE_MAX_THREADS]; /* per submitter */
	ks_atomic_t callbacks[TORTURE_MAX_THREADS];
	ks_atomic_t cb_status[2]; /* success, other */
	ks_atomic_t qfull, scheduled, seq_done, stale, cancelled_unloads;
} as;

static torture_t *as_run;

static void as_callback(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                        NRT_STATUS status)
{
	torture_t *t = params;
	oracle_nn_t *e = oracle_nn_get(model_id);
	uint64_t who = job_id >> 40;

	(void)vnc;
	if (who >= TORTURE_MAX_THREADS) {
		torture_fail(t, "callback with job_id %" PRIu64 " that no submitter issued",
		             job_id);
		return;
	}
	ks_atomic_add_quiet(&as.callbacks[who], 1);
	ks_atomic_add_quiet(&as.cb_status[status == NRT_SUCCESS ? 0 : 1], 1);
	if (e && ks_atomic_peek(&e->unloaded))
		torture_fail(t,
		             "completion callback for model %u (job %" PRIu64 ", %s) after its "
		             "unload returned",
		             model_id, job_id, nrt_get_status_as_str(status));
	if (!torture_status_known(status))
		torture_fail(t, "callback with unknown status %d", (int)status);
}

/* A status a fault plan explains: any known one, only with a plan. */
static bool as_fault_ok(const torture_t *t, NRT_STATUS st)
{
	return t->k.fault[0] && torture_status_known(st);
}

static NRT_STATUS as_load(nrt_model_t **out, uint32_t *id)
{
	H_NN h;
	NRT_STATUS st = nrt_load(as.bytes, as.len, -1, -1, out);

	if (st != NRT_SUCCESS)
		return st;
	nrt_model_get_nn(*out, &h);
	oracle_note_loaded(h.id);
	*id = h.id;
	return NRT_SUCCESS;
}

/* ---- submitters: implicit async, queues kept full ---- */

static void *as_submitter(torture_thread_t *w)
{
	torture_t *t = w->t;
	torture_io_t io[TORTURE_MAX_MODELS];
	uint64_t seq = 0;
	uint32_t n = 0;
	bool filled = true;

	/* One output set per slot: two models' workers must never write the
	 * same tensor.  The inputs are written once, before any submission. */
	for (; n < t->k.models && filled; n++) {
		if (torture_io_alloc(&io[n], 1, 1, NRT_TENSOR_PLACEMENT_DEVICE, 0) != NRT_SUCCESS)
			goto out;
		filled = torture_io_fill(&io[n], w->idx * 977u + n) == NRT_SUCCESS;
	}
	if (!filled)
		goto out;
	while (!torture_should_stop(t)) {
		uint32_t s = (uint32_t)torture_rand_below(w, t->k.models);
		uint32_t id = (uint32_t)ks_atomic_load(&as.slot[s].nn);
		uint64_t t0 = torture_now_ns();
		NRT_STATUS st = NRT_INVALID_HANDLE;

		torture_set_op(w, "kmgr_exec (implicit async)");
		if (id)
			st = kmgr_exec((H_NN){id}, io[s].t.in_set, io[s].t.out_set,
			               ((uint64_t)w->idx << 40) | ++seq);
		torture_count(w, st);
		if (st == NRT_SUCCESS) {
			ks_atomic_add_quiet(&as.accepted[w->idx], 1);
			torture_hist_add(w, AS_H_SUBMIT, torture_now_ns() - t0);
		} else if (st == NRT_QUEUE_FULL) {
			ks_atomic_add_quiet(&as.qfull, 1);
			ks_usleep(20);
		} else if (st == NRT_INVALID_HANDLE) {
			ks_atomic_add_quiet(&as.stale, 1);
			ks_yield();
		} else if (!t->k.fault[0] || !torture_status_known(st)) {
			torture_fail(t, "implicit-async kmgr_exec on model %u returned %s", id,
			             nrt_get_status_as_str(st));
		}
		if (torture_op_done(w))
			break;
	}
out:
	/* under a fault plan an allocation or write may fail cleanly */
	if ((n < t->k.models || !filled) && !t->k.fault[0])
		torture_fail(t, "submitter: cannot allocate its tensors");
	/* The device still writes the outputs of queued work: wait for every
	 * callback of this thread's executions before freeing its tensors. */
	torture_set_op(w, "wait for own callbacks");
	while (ks_atomic_peek(&as.callbacks[w->idx]) < ks_atomic_peek(&as.accepted[w->idx]))
		ks_usleep(50);
	for (uint32_t i = 0; i < n; i++)
		torture_io_free(&io[i]);
	return NULL;
}

/* ---- unloaders: unload with queued work (model_stop) and reload ---- */

static void as_unload_slot(torture_t *t, torture_thread_t *w, uint32_t s)
{
	uint32_t id = (uint32_t)ks_atomic_peek(&as.slot[s].nn);
	oracle_nn_t *e = oracle_nn_get(id);
	uint64_t t0 = torture_now_ns();
	NRT_STATUS st;

	if (e && ks_atomic_peek(&e->inflight) > 0)
		ks_atomic_add_quiet(&as.cancelled_unloads, 1);
	st = nrt_unload(as.slot[s].model);
	if (w)
		torture_hist_add(w, AS_H_UNLOAD, torture_now_ns() - t0);
	if (st != NRT_SUCCESS)
		torture_fail(t, "nrt_unload of model %u returned %s", id,
		             nrt_get_status_as_str(st));
	torture_unloaded(t, id);
	as.slot[s].model = NULL;
}

static void *as_unloader(torture_thread_t *w)
{
	torture_t *t = w->t;
	uint32_t mine = 0;

	for (uint32_t s = w->role_idx; s < t->k.models; s += as.unloaders)
		mine++;
	while (!torture_should_stop(t)) {
		uint32_t s = w->role_idx + as.unloaders * (uint32_t)torture_rand_below(w, mine);
		uint32_t id = (uint32_t)ks_atomic_peek(&as.slot[s].nn);
		oracle_nn_t *e = oracle_nn_get(id);
		NRT_STATUS st;

		/* Wait (boundedly) for queued work, so the unload has to stop it. */
		torture_set_op(w, "wait for queued work");
		for (int i = 0; i < 200 && e && ks_atomic_peek(&e->inflight) < 2; i++)
			ks_usleep(10);
		if (as.slot[s].model) {
			torture_set_op(w, "nrt_unload (model_stop)");
			as_unload_slot(t, w, s);
		}
		torture_set_op(w, "nrt_load");
		st = as_load(&as.slot[s].model, &id);
		torture_count(w, st);
		if (st == NRT_SUCCESS)
			ks_atomic_store(&as.slot[s].nn, id);
		else if (!t->k.fault[0] || !torture_status_known(st))
			torture_fail(t, "nrt_load returned %s", nrt_get_status_as_str(st));
		else
			ks_atomic_store(&as.slot[s].nn, 0);
		if (torture_op_done(w))
			break;
	}
	return NULL;
}

/* ---- stormers: explicit nrta_execute_schedule + nrta_is_completed ---- */

static bool as_poll(torture_thread_t *w, nrta_seq_t seq)
{
	bool done = false;

	for (;;) {
		NRT_STATUS st = nrta_is_completed(seq, &done);

		if (st != NRT_SUCCESS) {
			torture_fail(w->t, "nrta_is_completed(0x%" PRIx64 ") returned %s", seq,
			             nrt_get_status_as_str(st));
			return false;
		}
		if (done)
			return true;
		ks_usleep(5);
	}
}

static void as_burst(torture_thread_t *w, torture_io_t *io)
{
	torture_t *t = w->t;
	nrta_seq_t seq[AS_BURST];
	uint32_t n = 0, want = 1 + (uint32_t)torture_rand_below(w, AS_BURST);
	uint64_t t0 = torture_now_ns();
	int bad;

	torture_set_op(w, "nrta_execute_schedule");
	while (n < want) {
		NRT_STATUS st =
		    nrta_execute_schedule(as.anchor, io->t.in_set, io->t.out_set, 0, NULL, &seq[n]);

		torture_count(w, st);
		if (st == NRT_QUEUE_FULL) {
			ks_atomic_add_quiet(&as.qfull, 1);
			break;
		}
		if (st != NRT_SUCCESS) {
			if (!t->k.fault[0] || !torture_status_known(st))
				torture_fail(t, "nrta_execute_schedule returned %s",
				             nrt_get_status_as_str(st));
			break;
		}
		if (n && seq[n] <= seq[n - 1])
			torture_fail(t,
			             "sequence numbers must grow: 0x%" PRIx64 " after 0x%" PRIx64,
			             seq[n], seq[n - 1]);
		ks_atomic_add_quiet(&as.scheduled, 1);
		n++;
	}
	torture_set_op(w, "nrta_is_completed");
	for (uint32_t i = 0; i < n; i++)
		if (as_poll(w, seq[i]))
			ks_atomic_add_quiet(&as.seq_done, 1);
	torture_hist_add(w, AS_H_BURST, torture_now_ns() - t0);
	if (n && !t->k.fault[0]) {
		bad = torture_io_verify(io);
		if (bad)
			torture_fail(t,
			             "explicit async: output %d differs from the compute formula",
			             bad - 1);
	}
}

static void *as_stormer(torture_thread_t *w)
{
	torture_t *t = w->t;
	torture_io_t io;

	/* under a fault plan the anchor's load may have failed cleanly */
	if (!as.anchor)
		return NULL;
	if (torture_io_alloc(&io, 1, 1, NRT_TENSOR_PLACEMENT_DEVICE, 0) != NRT_SUCCESS) {
		if (!t->k.fault[0])
			torture_fail(t, "stormer: cannot allocate its tensors");
		return NULL;
	}
	while (!torture_should_stop(t)) {
		if (torture_io_fill(&io, torture_rand(w)) != NRT_SUCCESS) {
			if (!t->k.fault[0])
				torture_fail(t, "nrt_tensor_write failed");
		} else {
			as_burst(w, &io);
		}
		if (torture_op_done(w))
			break;
	}
	torture_io_free(&io);
	return NULL;
}

static int as_setup(torture_t *t)
{
	uint32_t id, subs, storms;
	NRT_STATUS st;

	as_run = t;
	st = torture_model_bytes(1, 1, 1, &as.bytes, &as.len);
	if (st == NRT_SUCCESS)
		st = nrt_register_async_exec_callback(as_callback, t);
	if (st != NRT_SUCCESS) {
		torture_fail(t, "setup: %s", nrt_get_status_as_str(st));
		return -1;
	}
	for (uint32_t s = 0; s < t->k.models; s++) {
		/* under a fault plan a load may fail cleanly: the slot stays
		 * empty until its unloader loads it */
		st = as_load(&as.slot[s].model, &id);
		if (st == NRT_SUCCESS) {
			ks_atomic_store(&as.slot[s].nn, id);
		} else if (!as_fault_ok(t, st)) {
			torture_fail(t, "initial nrt_load returned %s", nrt_get_status_as_str(st));
			return -1;
		}
	}
	/* the stormers go without the anchor when its load failed cleanly */
	st = as_load(&as.anchor, &id);
	if (st != NRT_SUCCESS && !as_fault_ok(t, st)) {
		torture_fail(t, "anchor nrt_load returned %s", nrt_get_status_as_str(st));
		return -1;
	}
	/* A quarter unloaders, a quarter stormers, the rest submitters. */
	as.unloaders = t->k.threads >= 4 ? t->k.threads / 4 : 1;
	if (as.unloaders > t->k.models)
		as.unloaders = t->k.models;
	storms = t->k.threads >= 4 ? t->k.threads / 4 : 1;
	subs = t->k.threads > as.unloaders + storms ? t->k.threads - as.unloaders - storms : 1;
	for (uint32_t i = 0; i < subs; i++)
		if (torture_spawn(t, "submitter", as_submitter, NULL) != 0)
			return -1;
	for (uint32_t i = 0; i < as.unloaders; i++)
		if (torture_spawn(t, "unloader", as_unloader, NULL) != 0)
			return -1;
	for (uint32_t i = 0; i < storms; i++)
		if (torture_spawn(t, "stormer", as_stormer, NULL) != 0)
			return -1;
	return 0;
}

static void as_teardown(torture_t *t)
{
	int64_t acc = 0, cbs = 0;
	H_NN h;

	for (uint32_t s = 0; s < t->k.models; s++)
		if (as.slot[s].model)
			as_unload_slot(t, NULL, s);
	if (as.anchor) {
		nrt_model_get_nn(as.anchor, &h);
		if (nrt_unload(as.anchor) != NRT_SUCCESS)
			torture_fail(t, "nrt_unload of the anchor model failed");
		torture_unloaded(t, h.id);
		as.anchor = NULL;
	}
	/* Every model is unloaded, so every accepted execution has completed
	 * or was cancelled, and each must have had its callback by now. */
	for (int i = 0; i < TORTURE_MAX_THREADS; i++) {
		int64_t a = ks_atomic_peek(&as.accepted[i]), c = ks_atomic_peek(&as.callbacks[i]);

		acc += a;
		cbs += c;
		if (a != c)
			torture_fail(t,
			             "submitter %d: %" PRId64 " executions accepted, %" PRId64
			             " completion callbacks",
			             i, a, c);
	}
	if (ks_atomic_peek(&as.scheduled) != ks_atomic_peek(&as.seq_done))
		torture_fail(t, "explicit async: %" PRId64 " scheduled, %" PRId64 " completed",
		             ks_atomic_peek(&as.scheduled), ks_atomic_peek(&as.seq_done));
	(void)acc;
	(void)cbs;
	nrt_register_async_exec_callback(NULL, NULL);
	free(as.bytes);
	as.bytes = NULL;
}

static void as_report(torture_t *t, bool json, void *file)
{
	FILE *f = file;
	int64_t acc = 0, cbs = 0;

	(void)t;
	for (int i = 0; i < TORTURE_MAX_THREADS; i++) {
		acc += ks_atomic_peek(&as.accepted[i]);
		cbs += ks_atomic_peek(&as.callbacks[i]);
	}
	fprintf(f,
	        json ? "  \"async\": {\"accepted\": %" PRId64 ", \"callbacks\": %" PRId64
	               ", \"callbacks_ok\": %" PRId64 ", \"callbacks_failed\": %" PRId64
	               ", \"queue_full\": %" PRId64 ", \"unloads_with_queued_work\": %" PRId64
	               ", \"nrta_scheduled\": %" PRId64 ", \"nrta_completed\": %" PRId64 "},\n"
	             : "   implicit: %" PRId64 " accepted, %" PRId64 " callbacks (%" PRId64
	               " ok, %" PRId64 " cancelled/failed), %" PRId64 " queue full, %" PRId64
	               " unloads with queued work; explicit: %" PRId64 " scheduled, %" PRId64
	               " completed\n",
	        acc, cbs, ks_atomic_peek(&as.cb_status[0]), ks_atomic_peek(&as.cb_status[1]),
	        ks_atomic_peek(&as.qfull), ks_atomic_peek(&as.cancelled_unloads),
	        ks_atomic_peek(&as.scheduled), ks_atomic_peek(&as.seq_done));
}

static const torture_ops_t as_ops = {
    .name = "stress_async",
    .summary = "implicit-async queues kept full, unloads with queued work, nrta_* storms",
    .hist_names = {"submit", "unload", "burst"},
    .async_mode = true,
    .setup = as_setup,
    .teardown = as_teardown,
    .report = as_report,
};

int main(int argc, char **argv)
{
	return torture_main(&as_ops, argc, argv);
}
