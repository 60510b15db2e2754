/*
 * churn.c - stress_churn: the model registry under churn.
 *
 * Churners load and unload models of three shapes (one core, and a
 * two-subgraph model that spans two cores) at random placements across the
 * cores; readers query the metadata of whatever id a slot holds; probers
 * call the facade with stale ids (unload returned), ids never issued and
 * id 0, and take registry snapshots (kmgr_get_nns).  Checks:
 *   - metadata that succeeds matches the model's shape; an id fails only
 *     with NRT_INVALID_HANDLE;
 *   - a stale or never-issued id always gets NRT_INVALID_HANDLE;
 *   - a snapshot never holds an id whose unload returned before the
 *     snapshot began, never holds an id twice, never one above
 *     kmgr_last_nn_id(); after the run it holds exactly the loaded ids;
 *   - ids only grow; staged models and in-flight work are zero once every
 *     model is unloaded, and all accounting is zero after nrt_close.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "nrt_kmgr.h"
#include "torture.h"

enum { CH_H_LOAD, CH_H_UNLOAD, CH_H_META };

typedef struct ch_shape {
	uint32_t n_in, n_out, nkbin;
	uint8_t *bytes;
	size_t len;
} ch_shape_t;

static struct {
	ch_shape_t shape[3];
	ks_atomic_t nn[TORTURE_MAX_MODELS]; /* 0 while not loaded */
	nrt_model_t *model[TORTURE_MAX_MODELS];
	uint32_t churners, nc;
	ks_atomic_t grave[64]; /* recently unloaded ids */
	ks_atomic_t grave_n;
	ks_atomic_t loads, meta_ok, meta_stale, probes, snapshots;
} ch;

static const ch_shape_t *ch_slot_shape(uint32_t s)
{
	return &ch.shape[s % 3];
}

/* ---- churners ---- */

static void ch_unload(torture_t *t, torture_thread_t *w, uint32_t s)
{
	uint32_t id = (uint32_t)ks_atomic_peek(&ch.nn[s]);
	uint64_t t0 = torture_now_ns();
	NRT_STATUS st;

	/* Take the id out of the slot first: readers that still hold it race
	 * the unload, which is the point; new readers go elsewhere. */
	ks_atomic_store(&ch.nn[s], 0);
	st = nrt_unload(ch.model[s]);
	if (w)
		torture_hist_add(w, CH_H_UNLOAD, torture_now_ns() - t0);
	if (st != NRT_SUCCESS)
		torture_fail(t, "nrt_unload of model %u returned %s", id,
		             nrt_get_status_as_str(st));
	torture_unloaded(t, id);
	ch.model[s] = NULL;
	ks_atomic_store(&ch.grave[ks_atomic_add_quiet(&ch.grave_n, 1) % 64], id);
}

static NRT_STATUS ch_load(torture_thread_t *w, uint32_t s)
{
	const ch_shape_t *sh = ch_slot_shape(s);
	int32_t start = -1, count = -1;
	uint64_t t0 = torture_now_ns();
	nrt_model_t *m = NULL;
	NRT_STATUS st;
	H_NN h;

	if (w && ch.nc >= sh->nkbin && torture_rand_below(w, 2)) {
		start = (int32_t)torture_rand_below(w, ch.nc - sh->nkbin + 1);
		count = (int32_t)sh->nkbin;
	}
	st = nrt_load(sh->bytes, sh->len, start, count, &m);
	if (w)
		torture_hist_add(w, CH_H_LOAD, torture_now_ns() - t0);
	if (st != NRT_SUCCESS)
		return st;
	nrt_model_get_nn(m, &h);
	oracle_note_loaded(h.id);
	ch.model[s] = m;
	ks_atomic_add_quiet(&ch.loads, 1);
	ks_atomic_store(&ch.nn[s], h.id);
	return NRT_SUCCESS;
}

static void *ch_churner(torture_thread_t *w)
{
	torture_t *t = w->t;
	uint32_t mine = 0;

	for (uint32_t s = w->role_idx; s < t->k.models; s += ch.churners)
		mine++;
	while (!torture_should_stop(t)) {
		uint32_t s = w->role_idx + ch.churners * (uint32_t)torture_rand_below(w, mine);
		NRT_STATUS st = NRT_SUCCESS;

		torture_set_op(w, "pause");
		ks_usleep(torture_rand_below(w, 50));
		if (ch.model[s]) {
			torture_set_op(w, "nrt_unload");
			ch_unload(t, w, s);
		} else {
			torture_set_op(w, "nrt_load");
			st = ch_load(w, s);
		}
		torture_count(w, st);
		if (st != NRT_SUCCESS && (!t->k.fault[0] || !torture_status_known(st)))
			torture_fail(t, "nrt_load (slot %u) returned %s", s,
			             nrt_get_status_as_str(st));
		if (torture_op_done(w))
			break;
	}
	return NULL;
}

/* ---- readers ---- */

static void ch_check_meta(torture_t *t, uint32_t id, const ch_shape_t *sh)
{
	char name[NRT_TENSOR_NAME_MAX];
	uint32_t in = 0, out = 0, ndim = 0, *shape = NULL, start = 0, cnt = 0;
	size_t size = 0;
	nrt_dtype_t dt = NRT_DTYPE_UNKNOWN;
	bool valid = false;
	NRT_STATUS st;

	st = kmgr_get_io_tensor_count((H_NN){id}, &in, &out);
	if (st == NRT_SUCCESS && (in != sh->n_in || out != sh->n_out))
		torture_fail(t, "model %u: %u inputs and %u outputs, it has %u and %u", id, in, out,
		             sh->n_in, sh->n_out);
	if (st == NRT_SUCCESS)
		st = kmgr_get_io_tensor_info((H_NN){id}, true, 0, name, &size, &dt, &ndim, &shape);
	if (st == NRT_SUCCESS) {
		if (strcmp(name, "in0") != 0 || size != TORTURE_IO_BYTES || dt != NRT_DTYPE_UINT8 ||
		    ndim != 1 || !shape || shape[0] != TORTURE_IO_BYTES)
			torture_fail(t, "model %u: input 0 is '%s' %zu bytes dtype %d ndim %u", id,
			             name, size, (int)dt, ndim);
		kfree(shape);
		st = kmgr_is_valid_ifmap((H_NN){id}, "in0", &valid);
		if (st == NRT_SUCCESS && !valid)
			torture_fail(t, "model %u: 'in0' is not a valid ifmap", id);
	}
	if (st == NRT_SUCCESS) {
		st = kmgr_get_nc_info((H_NN){id}, &start, &cnt);
		if (st == NRT_SUCCESS && (cnt != sh->nkbin || start + cnt > ch.nc))
			torture_fail(t, "model %u: on cores %u+%u, it has %u subgraphs on %u cores",
			             id, start, cnt, sh->nkbin, ch.nc);
	}
	if (st == NRT_SUCCESS)
		ks_atomic_add_quiet(&ch.meta_ok, 1);
	else if (st == NRT_INVALID_HANDLE)
		ks_atomic_add_quiet(&ch.meta_stale, 1);
	else if (!t->k.fault[0] || !torture_status_known(st))
		torture_fail(t, "metadata of model %u returned %s", id, nrt_get_status_as_str(st));
}

static void *ch_reader(torture_thread_t *w)
{
	torture_t *t = w->t;

	while (!torture_should_stop(t)) {
		uint32_t s = (uint32_t)torture_rand_below(w, t->k.models);
		uint32_t id = (uint32_t)ks_atomic_load(&ch.nn[s]);
		uint64_t t0 = torture_now_ns();

		torture_set_op(w, "metadata");
		if (id) {
			ch_check_meta(t, id, ch_slot_shape(s));
			torture_hist_add(w, CH_H_META, torture_now_ns() - t0);
		} else {
			ks_yield();
		}
		if (torture_op_done(w))
			break;
	}
	return NULL;
}

/* ---- probers: stale handles and registry snapshots ---- */

static void ch_probe_stale(torture_thread_t *w, torture_io_t *io)
{
	torture_t *t = w->t;
	int64_t n = ks_atomic_peek(&ch.grave_n);
	uint32_t id, cnt = 0;
	NRT_STATUS st[3];
	const char *what[3] = {"kmgr_exec", "kmgr_get_ifmap_count", "kmgr_set_profiling"};

	switch (torture_rand_below(w, 4)) {
	case 0:
		id = 0;
		break;
	case 1:
		/* Far ahead: churners keep handing out ids while we probe. */
		id = kmgr_last_nn_id() + 0x40000000u + (uint32_t)torture_rand_below(w, 1000);
		break;
	default:
		if (!n)
			return;
		id = (uint32_t)ks_atomic_load(
		    &ch.grave[torture_rand_below(w, n < 64 ? (uint64_t)n : 64)]);
		break;
	}
	torture_set_op(w, "stale-handle probe");
	st[0] = kmgr_exec((H_NN){id}, io->t.in_set, io->t.out_set, 0);
	st[1] = kmgr_get_ifmap_count((H_NN){id}, &cnt);
	st[2] = kmgr_set_profiling((H_NN){id}, false);
	ks_atomic_add_quiet(&ch.probes, 1);
	for (int i = 0; i < 3; i++) {
		torture_count(w, st[i]);
		if (st[i] != NRT_INVALID_HANDLE)
			torture_fail(
			    t, "%s on stale or unissued id %u returned %s, not NRT_INVALID_HANDLE",
			    what[i], id, nrt_get_status_as_str(st[i]));
	}
}

static void ch_snapshot(torture_thread_t *w)
{
	torture_t *t = w->t;
	int64_t before = oracle_unload_clock();
	H_NN *ids = NULL;
	uint32_t n = 0, last;
	NRT_STATUS st;

	torture_set_op(w, "kmgr_get_nns");
	st = kmgr_get_nns(&ids, &n);
	last = kmgr_last_nn_id();
	torture_count(w, st);
	if (st != NRT_SUCCESS) {
		if (!t->k.fault[0] || !torture_status_known(st))
			torture_fail(t, "kmgr_get_nns returned %s", nrt_get_status_as_str(st));
		return;
	}
	ks_atomic_add_quiet(&ch.snapshots, 1);
	for (uint32_t i = 0; i < n; i++) {
		oracle_nn_t *e = oracle_nn_get(ids[i].id);
		int64_t gone = e ? ks_atomic_peek(&e->unloaded) : 0;

		if (ids[i].id == 0 || ids[i].id > last)
			torture_fail(t, "registry snapshot holds id %u (last issued %u)", ids[i].id,
			             last);
		if (gone && gone <= before)
			torture_fail(
			    t,
			    "registry snapshot holds id %u, whose unload returned before the "
			    "snapshot began",
			    ids[i].id);
		for (uint32_t j = 0; j < i; j++)
			if (ids[j].id == ids[i].id)
				torture_fail(t, "registry snapshot holds id %u twice", ids[i].id);
	}
	kfree(ids);
}

static void *ch_prober(torture_thread_t *w)
{
	torture_t *t = w->t;
	torture_io_t io;

	if (torture_io_alloc(&io, 1, 1, NRT_TENSOR_PLACEMENT_DEVICE, 0) != NRT_SUCCESS) {
		torture_fail(t, "prober: cannot allocate its tensors");
		return NULL;
	}
	while (!torture_should_stop(t)) {
		if (torture_rand_below(w, 4))
			ch_probe_stale(w, &io);
		else
			ch_snapshot(w);
		if (torture_op_done(w))
			break;
	}
	torture_io_free(&io);
	return NULL;
}

static int ch_setup(torture_t *t)
{
	static const uint32_t shapes[3][3] = {{1, 1, 1}, {2, 1, 1}, {1, 2, 2}};
	uint32_t readers, probers;
	NRT_STATUS st = nrt_get_visible_nc_count(&ch.nc);

	for (int i = 0; i < 3 && st == NRT_SUCCESS; i++) {
		ch.shape[i].n_in = shapes[i][0];
		ch.shape[i].n_out = shapes[i][1];
		ch.shape[i].nkbin = shapes[i][2] <= ch.nc ? shapes[i][2] : 1;
		st = torture_model_bytes(ch.shape[i].n_in, ch.shape[i].n_out, ch.shape[i].nkbin,
		                         &ch.shape[i].bytes, &ch.shape[i].len);
	}
	if (st != NRT_SUCCESS) {
		torture_fail(t, "setup: %s", nrt_get_status_as_str(st));
		return -1;
	}
	ch.churners = t->k.threads >= 4 ? t->k.threads / 2 : 1;
	if (ch.churners > t->k.models)
		ch.churners = t->k.models;
	probers = t->k.threads >= 4 ? t->k.threads / 4 : 1;
	readers = t->k.threads > ch.churners + probers ? t->k.threads - ch.churners - probers : 1;
	for (uint32_t i = 0; i < ch.churners; i++)
		if (torture_spawn(t, "churner", ch_churner, NULL) != 0)
			return -1;
	for (uint32_t i = 0; i < readers; i++)
		if (torture_spawn(t, "reader", ch_reader, NULL) != 0)
			return -1;
	for (uint32_t i = 0; i < probers; i++)
		if (torture_spawn(t, "prober", ch_prober, NULL) != 0)
			return -1;
	return 0;
}

/* After the run: the registry holds exactly the loaded slots. */
static void ch_check_final_registry(torture_t *t)
{
	H_NN *ids = NULL;
	uint32_t n = 0, loaded = 0;

	for (uint32_t s = 0; s < t->k.models; s++)
		loaded += ks_atomic_peek(&ch.nn[s]) != 0;
	if (kmgr_get_nns(&ids, &n) != NRT_SUCCESS) {
		torture_fail(t, "final kmgr_get_nns failed");
		return;
	}
	if (n != loaded)
		torture_fail(t, "registry holds %u models after the run, %u are loaded", n, loaded);
	for (uint32_t i = 0; i < n; i++) {
		bool found = false;

		for (uint32_t s = 0; s < t->k.models; s++)
			found |= (uint32_t)ks_atomic_peek(&ch.nn[s]) == ids[i].id;
		if (!found)
			torture_fail(t, "registry holds id %u that no slot loaded", ids[i].id);
	}
	kfree(ids);
}

static void ch_teardown(torture_t *t)
{
	emu_accounting_t a;

	ch_check_final_registry(t);
	for (uint32_t s = 0; s < t->k.models; s++)
		if (ch.model[s])
			ch_unload(t, NULL, s);
	emu_get_accounting(&a);
	if (a.staged_models || a.inflight_execs)
		torture_fail(t,
		             "every model unloaded, yet %" PRId64 " staged models and %" PRId64
		             " executions in flight",
		             a.staged_models, a.inflight_execs);
	for (int i = 0; i < 3; i++) {
		free(ch.shape[i].bytes);
		ch.shape[i].bytes = NULL;
	}
}

static void ch_report(torture_t *t, bool json, void *file)
{
	FILE *f = file;

	(void)t;
	fprintf(f,
	        json ? "  \"churn\": {\"loads\": %" PRId64 ", \"metadata_ok\": %" PRId64
	               ", \"metadata_stale\": %" PRId64 ", \"stale_probes\": %" PRId64
	               ", \"snapshots\": %" PRId64 "},\n"
	             : "   loads %" PRId64 ", metadata %" PRId64 " ok / %" PRId64 " stale, %" PRId64
	               " stale-handle probes, %" PRId64 " registry snapshots\n",
	        ks_atomic_peek(&ch.loads), ks_atomic_peek(&ch.meta_ok),
	        ks_atomic_peek(&ch.meta_stale), ks_atomic_peek(&ch.probes),
	        ks_atomic_peek(&ch.snapshots));
}

static const torture_ops_t ch_ops = {
    .name = "stress_churn",
    .summary = "models loaded and unloaded across cores, metadata readers, stale-handle probes",
    .hist_names = {"load", "unload", "metadata"},
    .setup = ch_setup,
    .teardown = ch_teardown,
    .report = ch_report,
    .default_models = 8,
};

int main(int argc, char **argv)
{
	return torture_main(&ch_ops, argc, argv);
}
