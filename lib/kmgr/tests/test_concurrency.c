/*
 * test_concurrency.c - the facade on real threads (tsan preset), and the
 * same scenarios under the controlled scheduler with PCT (--pct SEEDS):
 *   exec_unload   N executors and one unloader on one model: unload returns
 *                 only after every in-flight execution released its
 *                 reference, nothing is submitted after it returned, the
 *                 stale id answers NRT_INVALID_HANDLE;
 *   async_unload  implicit-async mode, unload with queued work stops it
 *                 cleanly (everything completed or cancelled, no marks);
 *   id_cycles     load/unload cycles never reuse an id.
 * Usage: kmgr_concurrency SCENARIO [--pct SEEDS] [--cycles N]
 */
#include <stdlib.h>

#include "kt_kmgr.h"
#include "sched/kctl.h"

#define N_EXEC 4

static struct {
	uint32_t h_nn;
	ks_atomic_t unloaded;
	ks_atomic_t submits, completes, cancels;
	ks_atomic_t late_submits;
} obs;

static void observer(void *ctx, emu_exec_event_t ev, uint64_t h_model, uint32_t h_nn,
                     NRT_STATUS status)
{
	(void)ctx;
	(void)h_model;
	(void)status;
	if (h_nn != obs.h_nn)
		return;
	if (ev == EMU_EXEC_SUBMIT) {
		ks_atomic_add_quiet(&obs.submits, 1);
		if (ks_atomic_peek(&obs.unloaded))
			ks_atomic_add_quiet(&obs.late_submits, 1);
	} else if (ev == EMU_EXEC_COMPLETE) {
		ks_atomic_add_quiet(&obs.completes, 1);
	} else if (ev == EMU_EXEC_CANCEL) {
		ks_atomic_add_quiet(&obs.cancels, 1);
	}
}

static void obs_reset(uint32_t h_nn)
{
	obs.h_nn = h_nn;
	ks_atomic_store(&obs.unloaded, 0);
	ks_atomic_store(&obs.submits, 0);
	ks_atomic_store(&obs.completes, 0);
	ks_atomic_store(&obs.cancels, 0);
	ks_atomic_store(&obs.late_submits, 0);
}

typedef struct worker {
	H_NN h;
	kt_io_t io;
	int iters;
	int ok, stale;
	NRT_STATUS bad;
} worker_t;

static void *exec_thread(void *p)
{
	worker_t *w = p;

	for (int i = 0; i < w->iters; i++) {
		NRT_STATUS rc = kmgr_exec(w->h, w->io.in, w->io.out, (uint64_t)i);

		if (rc == NRT_SUCCESS) {
			if (w->stale)
				w->bad = NRT_FAILURE; /* ran after the id went stale */
			w->ok++;
		} else if (rc == NRT_INVALID_HANDLE) {
			w->stale++;
		} else if (rc != NRT_QUEUE_FULL) {
			w->bad = rc;
		}
		if (w->stale >= 2)
			break;
	}
	return NULL;
}

typedef struct unloader {
	H_NN h;
	NRT_STATUS rc;
	int64_t submits, finished;
} unloader_t;

static void *unload_thread(void *p)
{
	unloader_t *u = p;

	ks_usleep(500);
	u->rc = kmgr_unload_nn(u->h);
	/* snapshot at return: every submit of the model is finished */
	u->submits = ks_atomic_peek(&obs.submits);
	u->finished = ks_atomic_peek(&obs.completes) + ks_atomic_peek(&obs.cancels);
	ks_atomic_store(&obs.unloaded, 1);
	return NULL;
}

static void wait_idle(void)
{
	emu_accounting_t a;

	for (int i = 0; i < 100000; i++) {
		emu_get_accounting(&a);
		if (a.inflight_execs == 0 && a.async_marks == 0)
			return;
		ks_usleep(100);
	}
	KT_FAIL("executions still in flight");
}

static void run_exec_unload(bool async, int iters)
{
	worker_t w[N_EXEC];
	ks_thread_t th[N_EXEC + 1];
	unloader_t u;
	H_NN h;

	kt_up(2, async, 0);
	emu_set_exec_observer(observer, NULL);
	h = kt_load("cc", 1, 0, 1);
	obs_reset(h.id);
	u = (unloader_t){.h = h};
	for (int i = 0; i < N_EXEC; i++) {
		w[i] = (worker_t){.h = h, .iters = iters};
		kt_io_make(&w[i].io, NRT_TENSOR_PLACEMENT_DEVICE, 0, 2, 1, 16);
		KT_EQ(ks_thread_create(&th[i], "executor", exec_thread, &w[i]), 0);
	}
	KT_EQ(ks_thread_create(&th[N_EXEC], "unloader", unload_thread, &u), 0);
	for (int i = 0; i <= N_EXEC; i++)
		KT_EQ(ks_thread_join(&th[i], NULL), 0);
	KT_EQ(u.rc, NRT_SUCCESS);
	if (!async)
		KT_EQ(u.submits, u.finished); /* no execution outlived the unload */
	KT_EQ(ks_atomic_peek(&obs.late_submits), 0);
	wait_idle();
	KT_EQ(ks_atomic_peek(&obs.submits),
	      ks_atomic_peek(&obs.completes) + ks_atomic_peek(&obs.cancels));
	for (int i = 0; i < N_EXEC; i++) {
		KT_EQ(w[i].bad, NRT_SUCCESS);
		KT_EQ(kmgr_exec(h, w[i].io.in, w[i].io.out, 0), NRT_INVALID_HANDLE);
		if (!async && w[i].ok)
			kt_io_check(&w[i].io);
		kt_io_free(&w[i].io);
	}
	emu_set_exec_observer(NULL, NULL);
	kt_down();
}

/* kmgr_concurrency exec_unload: sync mode, N executors + 1 unloader. */
static void scenario_exec_unload(int scale)
{
	run_exec_unload(false, 40 * scale);
}

/* kmgr_concurrency async_unload: implicit-async, work queued at unload. */
static void scenario_async_unload(int scale)
{
	emu_accounting_t a;

	run_exec_unload(true, 40 * scale);
	emu_get_accounting(&a);
	KT_EQ(a.async_marks, 0);
	KT_EQ(a.inflight_execs, 0);
}

static int cycles = 100000;

/* kmgr_concurrency id_cycles: ids strictly grow over load/unload cycles,
 * and a stale id never resolves again. */
static void scenario_id_cycles(int scale)
{
	size_t len;
	uint8_t *b;
	H_NN h, first = {0}, prev = {0};
	int n = scale > 1 ? cycles : 100;

	kt_up(1, false, 0);
	b = kt_model_bytes("cy", 1, false, 1, 1, 4, &len);
	for (int i = 0; i < n; i++) {
		KT_EQ(kmgr_load_nn(b, len, 0, 1, &h), NRT_SUCCESS);
		KT_GT(h.id, prev.id);
		if (i == 0)
			first = h;
		KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
		prev = h;
	}
	KT_EQ(prev.id - first.id, (uint32_t)(n - 1));
	KT_ASSERT(db_get_nn_ref_count(first) == NULL);
	kfree(b);
	kt_down();
}

typedef void (*scenario_fn)(int scale);

static scenario_fn g_fn;
static uint64_t g_pct;

/* Each seed is one whole controlled run: device, facade and threads are
 * created inside it (the controlled backend only manages its own). */
static void case_pct(void)
{
	for (uint64_t s = 1; s <= g_pct; s++) {
		ks_ctl_config_t cfg;
		ks_ctl_result_t res;

		ks_ctl_config_init(&cfg);
		cfg.strategy = KS_STRAT_PCT;
		cfg.seed = s;
		cfg.pct_depth = 3;
		cfg.max_steps = 5000000;
		KT_EQ(ks_ctl_begin(&cfg), 0);
		g_fn(1);
		ks_ctl_end(&res);
		if (res.failure != KS_OK)
			KT_FAIL("seed %llu: controlled run failed (%d)", (unsigned long long)s,
			        (int)res.failure);
	}
}

static void case_real(void)
{
	g_fn(2);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		scenario_fn fn;
	} tab[] = {{"exec_unload", scenario_exec_unload},
	           {"async_unload", scenario_async_unload},
	           {"id_cycles", scenario_id_cycles}};

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--pct") == 0 && i + 1 < argc)
			g_pct = strtoull(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--cycles") == 0 && i + 1 < argc)
			cycles = atoi(argv[++i]);
		for (size_t k = 0; k < sizeof(tab) / sizeof(tab[0]); k++)
			if (strcmp(argv[i], tab[k].name) == 0)
				g_fn = tab[k].fn;
	}
	if (!g_fn || cycles < 1) {
		fprintf(stderr,
		        "usage: %s exec_unload|async_unload|id_cycles [--pct SEEDS] [--cycles N]\n",
		        argv[0]);
		return 2;
	}
	if (g_pct)
		KT_CASE("kmgr_concurrency-pct", case_pct);
	else
		KT_CASE("kmgr_concurrency-real", case_real);
	KT_DONE();
}
