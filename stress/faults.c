/*
 * faults.c - stress_faults: random fault plans under load.
 *
 * The run is a sequence of rounds.  Each round installs a fault plan drawn
 * from --seed and the round number (or the fixed --fault plan), starts the
 * runtime, loads the models, and lets the workers execute, query metadata,
 * reload and allocate tensors concurrently for a few dozen operations each;
 * then everything is unloaded and closed.  Checks:
 *   - every call that fails returns a known NRT_STATUS (a clean error, never
 *     a crash, hang or unknown value), and every execution that succeeds
 *     still computes the right outputs;
 *   - after each round's nrt_close every accounting figure is zero (so no
 *     failure edge leaked host or device memory, a staged model, a mark).
 * The failing round's plan is in the failure message; --seed reproduces
 * the sequence of plans.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "base/kfault.h"
#include "nrt_kmgr.h"
#include "torture.h"

enum { FT_H_EXEC, FT_H_ROUND };
#define FT_ROUND_OPS 48

static struct {
	ks_atomic_t nn[TORTURE_MAX_MODELS];
	nrt_model_t *model[TORTURE_MAX_MODELS];
	uint8_t *bytes;
	size_t len;
	uint32_t workers;
	uint64_t round;
	char plan[KFAULT_PLAN_TEXT_MAX + 1];
	ks_atomic_t rounds, fired, exec_ok, exec_failed, loads_failed, inits_failed;
} ft;

static void ft_check(torture_thread_t *w, const char *what, NRT_STATUS st)
{
	torture_count(w, st);
	if (!torture_status_known(st))
		torture_fail(w->t, "round %" PRIu64 " (plan '%s'): %s returned unknown status %d",
		             ft.round, ft.plan, what, (int)st);
}

static NRT_STATUS ft_load(uint32_t s)
{
	nrt_model_t *m = NULL;
	NRT_STATUS st = nrt_load(ft.bytes, ft.len, -1, -1, &m);
	H_NN h;

	if (st != NRT_SUCCESS) {
		ks_atomic_add_quiet(&ft.loads_failed, 1);
		return st;
	}
	nrt_model_get_nn(m, &h);
	oracle_note_loaded(h.id);
	ft.model[s] = m;
	ks_atomic_store(&ft.nn[s], h.id);
	return NRT_SUCCESS;
}

static void ft_unload(torture_t *t, uint32_t s)
{
	uint32_t id = (uint32_t)ks_atomic_peek(&ft.nn[s]);
	NRT_STATUS st;

	ks_atomic_store(&ft.nn[s], 0);
	st = nrt_unload(ft.model[s]);
	if (!torture_status_known(st))
		torture_fail(t,
		             "round %" PRIu64 " (plan '%s'): nrt_unload returned unknown status %d",
		             ft.round, ft.plan, (int)st);
	torture_unloaded(t, id);
	ft.model[s] = NULL;
}

static void ft_exec(torture_thread_t *w, torture_io_t *io)
{
	uint32_t s = (uint32_t)torture_rand_below(w, w->t->k.models);
	uint32_t id = (uint32_t)ks_atomic_load(&ft.nn[s]);
	uint64_t t0 = torture_now_ns();
	NRT_STATUS st;

	if (!id || !io->t.in_set)
		return;
	torture_set_op(w, "fill inputs");
	st = torture_io_fill(io, torture_rand(w));
	if (st != NRT_SUCCESS) {
		ft_check(w, "nrt_tensor_write", st);
		return;
	}
	torture_set_op(w, "kmgr_exec");
	st = kmgr_exec((H_NN){id}, io->t.in_set, io->t.out_set, w->idx);
	ft_check(w, "kmgr_exec", st);
	if (st != NRT_SUCCESS) {
		ks_atomic_add_quiet(&ft.exec_failed, 1);
		return;
	}
	torture_hist_add(w, FT_H_EXEC, torture_now_ns() - t0);
	ks_atomic_add_quiet(&ft.exec_ok, 1);
	if (torture_io_verify(io))
		torture_fail(w->t,
		             "round %" PRIu64 " (plan '%s'): a successful execution of model %u "
		             "computed wrong outputs",
		             ft.round, ft.plan, id);
}

static void ft_meta(torture_thread_t *w)
{
	uint32_t s = (uint32_t)torture_rand_below(w, w->t->k.models);
	uint32_t id = (uint32_t)ks_atomic_load(&ft.nn[s]), in, out;

	torture_set_op(w, "metadata");
	ft_check(w, "kmgr_get_io_tensor_count", kmgr_get_io_tensor_count((H_NN){id}, &in, &out));
}

static void ft_tensor(torture_thread_t *w)
{
	nrt_tensor_t *tn = NULL;
	NRT_STATUS st;

	torture_set_op(w, "nrt_tensor_allocate");
	st = nrt_tensor_allocate(torture_rand_below(w, 2) ? NRT_TENSOR_PLACEMENT_DEVICE
	                                                  : NRT_TENSOR_PLACEMENT_HOST,
	                         0, 1 + torture_rand_below(w, 4096), "scratch", &tn);
	ft_check(w, "nrt_tensor_allocate", st);
	if (st == NRT_SUCCESS)
		nrt_tensor_free(&tn);
}

static void ft_reload(torture_thread_t *w)
{
	torture_t *t = w->t;
	uint32_t s = w->role_idx;

	if (s >= t->k.models)
		return;
	torture_set_op(w, "reload");
	if (ft.model[s])
		ft_unload(t, s);
	ft_check(w, "nrt_load", ft_load(s));
}

static void *ft_worker(torture_thread_t *w)
{
	torture_t *t = w->t;
	torture_io_t io;
	NRT_STATUS st;

	torture_set_op(w, "allocate tensors");
	st = torture_io_alloc(
	    &io, 1, 1, w->role_idx % 2 ? NRT_TENSOR_PLACEMENT_HOST : NRT_TENSOR_PLACEMENT_DEVICE,
	    0);
	ft_check(w, "torture_io_alloc", st);
	if (st != NRT_SUCCESS)
		memset(&io, 0, sizeof(io));
	for (int i = 0; i < FT_ROUND_OPS && !torture_should_stop(t); i++) {
		uint64_t r = torture_rand_below(w, 16);

		if (r < 9)
			ft_exec(w, &io);
		else if (r < 12)
			ft_meta(w);
		else if (r < 15)
			ft_tensor(w);
		else
			ft_reload(w);
		if (torture_op_done(w))
			break;
	}
	torture_set_op(w, "free tensors");
	torture_io_free(&io);
	return NULL;
}

static const uint32_t ft_statuses[] = {1003, 1004, 1202, 5, 1204};

#define FT_SWEEP_NTH 3

/* The first rounds of every run sweep the failure edges: each fault site
 * fails at its first call, then every site at its second, then its third
 * (an execution with host tensors copies in, then out: emu.set_copy's 2nd
 * call is the copy-out, whose DMA abort reaches the caller), then each
 * injected status once.  So a run of a few seconds meets every status a
 * site can return (the random plans reach one site's n-th call only every
 * few hundred rounds).  False after the sweep. */
static uint64_t ft_sweep_rounds(void)
{
	size_t nsites;

	kfault_sites(&nsites);
	return FT_SWEEP_NTH * nsites + sizeof(ft_statuses) / sizeof(ft_statuses[0]);
}

static bool ft_sweep_plan(uint64_t round, kfault_plan_t *plan)
{
	size_t nsites;
	const kfault_site_info_t *sites = kfault_sites(&nsites);

	if (round >= ft_sweep_rounds())
		return false;
	memset(plan, 0, sizeof(*plan));
	plan->n = 1;
	if (round < FT_SWEEP_NTH * nsites) {
		plan->e[0].kind = KFAULT_FAIL_ALLOC;
		plan->e[0].site = (uint32_t)sites[round % nsites].site;
		plan->e[0].nth = 1 + (uint32_t)(round / nsites);
	} else {
		plan->e[0].kind = KFAULT_EXEC_STATUS;
		plan->e[0].arg = ft_statuses[round - FT_SWEEP_NTH * nsites];
		plan->e[0].nth = 1;
	}
	return true;
}

/* After the sweep, a plan from the round's PRNG: one to three entries, no
 * hang (a hang is a watchdog test, given with --fault hang:N). */
static void ft_random_plan(uint64_t seed, uint64_t round, kfault_plan_t *plan)
{
	torture_thread_t g = {.rng = seed * 0x9e3779b97f4a7c15ull + round * 0x632be59bd9b4e019ull};
	size_t nsites;
	const kfault_site_info_t *sites = kfault_sites(&nsites);

	if (ft_sweep_plan(round, plan))
		return;
	memset(plan, 0, sizeof(*plan));
	plan->n = 1 + (uint32_t)torture_rand_below(&g, 3);
	for (uint32_t i = 0; i < plan->n; i++) {
		kfault_entry_t *e = &plan->e[i];

		e->nth = 1 + (uint32_t)torture_rand_below(&g, 24);
		switch (torture_rand_below(&g, 5)) {
		case 0:
		case 1:
			e->kind = KFAULT_FAIL_ALLOC;
			e->site = torture_rand_below(&g, 4)
			              ? (uint32_t)sites[torture_rand_below(&g, nsites)].site
			              : KFAULT_SITE_ANY;
			break;
		case 2:
			e->kind = KFAULT_EXEC_STATUS;
			e->arg = ft_statuses[torture_rand_below(&g, 5)];
			break;
		case 3:
			e->kind = KFAULT_EXEC_DELAY;
			e->arg = 1 + (uint32_t)torture_rand_below(&g, 8);
			break;
		default:
			e->kind = KFAULT_QUEUE_FULL;
			break;
		}
	}
}

static bool ft_round(torture_t *t)
{
	kfault_plan_t plan;
	char err[128], when[400];
	NRT_STATUS st;
	uint64_t t0 = torture_now_ns();

	if (t->k.fault[0])
		kfault_plan_parse(t->k.fault, &plan, err, sizeof(err));
	else
		ft_random_plan(t->k.seed, ft.round, &plan);
	kfault_plan_format(&plan, ft.plan, sizeof(ft.plan));
	kfault_set_plan(&plan);
	torture_phase(t, "nrt_init");
	st = nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "");
	if (st != NRT_SUCCESS) {
		ks_atomic_add_quiet(&ft.inits_failed, 1);
		if (!torture_status_known(st))
			torture_fail(t, "round %" PRIu64 " (plan '%s'): nrt_init returned %d",
			             ft.round, ft.plan, (int)st);
		goto check;
	}
	oracle_attach();
	torture_phase(t, "load");
	for (uint32_t s = 0; s < t->k.models; s++)
		ft_load(s);
	for (uint32_t i = 0; i < ft.workers; i++) {
		int rc =
		    ft.round ? torture_respawn(t, i) : torture_spawn(t, "worker", ft_worker, NULL);

		if (rc != 0) {
			torture_fail(t, "cannot start worker %u", i);
			break;
		}
	}
	torture_join_all(t);
	torture_check_refcounts(t, true);
	torture_phase(t, "unload");
	for (uint32_t s = 0; s < t->k.models; s++)
		if (ft.model[s])
			ft_unload(t, s);
	torture_phase(t, "nrt_close");
	nrt_close();
	oracle_detach();
check:
	ks_atomic_add_quiet(&ft.fired, (int64_t)kfault_fired());
	kfault_clear();
	snprintf(when, sizeof(when), "after round %" PRIu64 " (plan '%s')", ft.round, ft.plan);
	oracle_check_closed(when);
	if (kalloc_live_count() != 0)
		torture_fail(t, "kalloc_live_count() = %" PRId64 " %s", kalloc_live_count(), when);
	ks_atomic_add_quiet(&ft.rounds, 1);
	if (t->nthreads)
		torture_hist_add(&t->th[0], FT_H_ROUND, torture_now_ns() - t0);
	ft.round++;
	return !torture_should_stop(t);
}

static void ft_run(torture_t *t)
{
	uint64_t end = t->start_ns + (uint64_t)t->k.seconds * 1000000000ull;
	NRT_STATUS st = torture_model_bytes(1, 1, 1, &ft.bytes, &ft.len);

	if (st != NRT_SUCCESS) {
		torture_fail(t, "cannot build the model: %s", nrt_get_status_as_str(st));
		return;
	}
	ft.workers = t->k.threads;
	setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "0", 1);
	while (ft_round(t)) {
		if (t->k.seconds && !t->k.controlled && torture_now_ns() >= end)
			break;
	}
	free(ft.bytes);
	ft.bytes = NULL;
}

static void ft_report(torture_t *t, bool json, void *file)
{
	FILE *f = file;

	(void)t;
	/* a run too short for the sweep says so (the sweep test fails on it) */
	if (!json && (uint64_t)ks_atomic_peek(&ft.rounds) < ft_sweep_rounds())
		fprintf(f, "   sweep INCOMPLETE: %" PRId64 " of its %" PRIu64 " rounds ran\n",
		        ks_atomic_peek(&ft.rounds), ft_sweep_rounds());
	fprintf(f,
	        json ? "  \"faults\": {\"rounds\": %" PRId64 ", \"faults_fired\": %" PRId64
	               ", \"exec_ok\": %" PRId64 ", \"exec_failed\": %" PRId64
	               ", \"loads_failed\": %" PRId64 ", \"inits_failed\": %" PRId64 "},\n"
	             : "   %" PRId64 " rounds, %" PRId64 " faults fired; executions %" PRId64
	               " ok / %" PRId64 " failed; %" PRId64 " loads and %" PRId64
	               " inits failed cleanly\n",
	        ks_atomic_peek(&ft.rounds), ks_atomic_peek(&ft.fired), ks_atomic_peek(&ft.exec_ok),
	        ks_atomic_peek(&ft.exec_failed), ks_atomic_peek(&ft.loads_failed),
	        ks_atomic_peek(&ft.inits_failed));
}

static const torture_ops_t ft_ops = {
    .name = "stress_faults",
    .summary = "rounds of random fault plans under load: clean statuses, zero accounting",
    .hist_names = {"exec", "round"},
    .run = ft_run,
    .report = ft_report,
};

int main(int argc, char **argv)
{
	return torture_main(&ft_ops, argc, argv);
}
