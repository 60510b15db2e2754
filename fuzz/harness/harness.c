/*
 * harness.c - the operations' tables (harness.h) and the run around them:
 * a fresh runtime, the threads, completion and quiescence, the oracle's
 * end checks and teardown.  The operations live one family a file
 * (load.c, exec.c, metadata.c, misuse.c, tensor.c, nrt_*.c) over the
 * bookkeeping of state.c.
 *
 * Model operations go to the facade by id (kmgr_*), so that threads can
 * race an unload against an execution without the harness itself using a
 * freed nrt_model_t; tensors and the explicit-async polls go through the
 * public API.  Every check is the oracle's; the harness's own bookkeeping
 * (slots, pending executions, job ids) takes its lock, whose scheduling
 * points are part of the schedule the decision bytes drive. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nrt/nrt.h>

#include "base/kattr.h"
#include "base/kfault.h"
#include "emu/emu.h"
#include "harness/harness.h"
#include "harness/state.h"
#include "kmgr/kmgr.h"
#include "sched/kctl.h"

/* ---- the tables ----------------------------------------------------------- */

const kh_op_fn kh_ops[KOP__COUNT] = {
    [KOP_LOAD] = kh_load,
    [KOP_UNLOAD] = kh_unload,
    [KOP_UNLOAD_ALL] = kh_unload_all,
    [KOP_EXEC] = kh_exec,
    [KOP_SCHEDULE] = kh_schedule,
    [KOP_IS_COMPLETED] = kh_is_completed,
    [KOP_GET_SEQUENCE] = kh_get_sequence,
    [KOP_TENSOR_INFO] = kh_tensor_info,
    [KOP_IS_VALID_IFMAP] = kh_is_valid_ifmap,
    [KOP_IFMAP_COUNT] = kh_ifmap_count,
    [KOP_SET_PROFILING] = kh_set_profiling,
    [KOP_STALE] = kh_stale,
    [KOP_FAULT] = kh_fault,
    [KOP_TALLOC] = kh_talloc,
    [KOP_TFREE] = kh_tfree,
    [KOP_TWRITE] = kh_twrite,
    [KOP_TREAD] = kh_tread,
    [KOP_BADARGS] = kh_badargs,
    [KOP_NC_INFO] = kh_nc_info,
    [KOP_NRT_LOAD] = kh_nrt_load,
    [KOP_NRT_UNLOAD] = kh_nrt_unload,
    [KOP_NRT_EXEC] = kh_nrt_exec,
    [KOP_NRT_META] = kh_nrt_meta,
    [KOP_NRT_SCHEDULE] = kh_nrt_schedule,
    [KOP_NRT_CLOSE] = kh_nrt_close,
    [KOP_NRT_INIT] = kh_nrt_init,
    [KOP_NRT_TRACKER] = kh_nrt_tracker,
    [KOP_NRT_CALLBACK] = kh_nrt_callback,
};

#define KH_FIELD(f) {#f, offsetof(kh_args_t, f)},

int kh_field_offset(const char *name)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {KH_ARGS(KH_FIELD)};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(fields[i].name, name))
			return (int)fields[i].off;
	return -1;
}

/* ---- completion, quiescence and teardown ------------------------------- */

static void kh_free_tensor_slots(void)
{
	for (unsigned t = 0; t < KPROG_MAX_THREADS; t++)
		for (unsigned k = 0; k < KPROG_TSLOTS; k++)
			kh_tslot_free(&kh_state.ts[t][k]);
}

/* name=v (v NULL: unset), touching the environment only when it says
 * otherwise: setenv and unsetenv take glibc's lock and compare the name
 * with every variable, ~1% of a fuzz run when done for every input, and
 * most inputs ask for what the last one set.  No coverage: a byte loop. */
KATTR_NO_COVERAGE static void kh_put_env(const char *name, const char *v)
{
	const char *cur = getenv(name);

	if (!v) {
		if (cur)
			unsetenv(name);
		return;
	}
	if (cur) {
		const char *a = cur, *b = v;

		while (*a && *a == *b)
			a++, b++;
		if (*a == *b)
			return;
	}
	setenv(name, v, 1);
}

/* "%u" without snprintf (vfprintf was 0.3% of a fuzz run here) */
KATTR_NO_COVERAGE static const char *kh_utoa(unsigned u, char buf[16])
{
	char *p = buf + 15;

	*p = '\0';
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	return p;
}

static void kh_set_env(const kh_config_t *c)
{
	char v[16];

	kh_put_env("KMGR_EMU_NC_COUNT", kh_utoa(c->nc, v));
	kh_put_env("NEURON_RT_VISIBLE_CORES", NULL);
	if (c->async) {
		kh_put_env("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", kh_utoa(c->qdepth, v));
	} else {
		kh_put_env("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", NULL);
	}
}

static void kh_reset(const kh_config_t *c)
{
	kh_state.c = c;
	kh_state.reference = c->reference && c->nthreads == 1;
	kh_state.faults = c->plan.n > 0;
	memset(kh_state.slot, 0, sizeof(kh_state.slot));
	memset(kh_state.pend, 0, kh_state.pend_hw * sizeof(kh_state.pend[0]));
	kh_state.pend_hw = 0;
	kh_state.ngone = 0;
	ks_atomic_reset(&kh_state.unload_all);
	memset(kh_state.nseq, 0, sizeof(kh_state.nseq));
	ks_atomic_reset(&kh_state.facade);
	ks_atomic_reset(&kh_state.closing);
	ks_atomic_reset(&kh_state.close_faulted);
	ks_atomic_reset(&kh_state.ops_run);
	ks_atomic_reset(&kh_state.ops_ok);
	ks_atomic_reset(&kh_state.checked);
}

/* Before any plan is installed: parsing allocates through kalloc. */
static void kh_describe_models(const kh_config_t *c)
{
	for (unsigned k = 0; k < c->nmodels; k++) {
		kh_model_t *m = &c->models[k];

		if (!m->described)
			oracle_describe(&m->io, m->bytes, m->len);
		m->described = true;
	}
}

static void *kh_thread_main(void *arg)
{
	kh_state.c->thread(kh_state.c->thread_ctx, (unsigned)(uintptr_t)arg);
	return NULL;
}

/* Everything from nrt_init to the accounting check after close. */
static int kh_body(const kh_config_t *c, kh_result_t *r)
{
	ks_thread_t th[KPROG_MAX_THREADS];
	bool close_faulted, closed;

	if (c->plan.n)
		kfault_set_plan(&c->plan);
	if (oracle_open() != NRT_SUCCESS) {
		kfault_clear();
		oracle_check_closed("after a failed nrt_init");
		return c->plan.n ? 0 : -1;
	}
	r->started = true;
	if (kmgr_is_async() != c->async)
		oracle_fail("mode", "kmgr_is_async() is %d, the program asked for %s",
		            kmgr_is_async(), c->async ? "async" : "sync");
	for (unsigned t = 1; t < c->nthreads; t++)
		if (ks_thread_create(&th[t], "kprog", kh_thread_main, (void *)(uintptr_t)t))
			abort();
	c->thread(c->thread_ctx, 0);
	for (unsigned t = 1; t < c->nthreads; t++)
		ks_thread_join(&th[t], NULL);
	closed = ks_atomic_load_quiet(&kh_state.closing) != 0;
	oracle_quiesce();
	kh_finish_pending(closed);
	kh_free_tensor_slots();
	if (!closed) /* else the facade is gone, and close unloaded everything */
		oracle_check_refcounts(kh_state.faults);
	oracle_check_history();
	oracle_detach();
	/* The plan stays installed until the device threads are gone: kfault's
	 * contract (and TSan) forbid changing it while they may read it.  A
	 * fault that fires inside nrt_close itself can leave what close could
	 * not unload; that run skips the leak check. */
	close_faulted = oracle_close_runtime() || ks_atomic_load_quiet(&kh_state.close_faulted);
	kfault_clear();
	if (!close_faulted) {
		kh_check_completions(closed);
		oracle_check_closed("after nrt_close");
	}
	return 0;
}

void kh_config_init(kh_config_t *c)
{
	memset(c, 0, sizeof(*c));
	c->nc = 1;
	c->qdepth = 1;
	c->nthreads = 1;
	c->reference = true;
}

/* The log filter, in the one place every run passes: the fuzz targets,
 * kmgr-repro's child, kprog run and the emitted C tests all judge a log
 * line the same way (a broken invariant is a failure in each). */
static void kh_log_filter(const kh_config_t *c)
{
	if (!c->full_log)
		oracle_log_quiet();
}

int kh_run(const kh_config_t *c, kh_result_t *r)
{
	ks_ctl_config_t cfg;
	ks_ctl_result_t res = {0};
	int rc;

	memset(r, 0, sizeof(*r));
	kh_log_filter(c);
	kh_reset(c);
	kh_describe_models(c);
	kh_set_env(c);
	kh_register_first();
	oracle_set_report(c->hooks.report, c->hooks.ctx);
	oracle_begin();
	oracle_history_begin();
	if (!c->free_running) {
		ks_ctl_config_init(&cfg);
		cfg.strategy = KS_STRAT_BYTES;
		cfg.bytes = c->sched;
		cfg.nbytes = c->nsched;
		cfg.max_steps = c->max_steps;
		cfg.ap_n = c->nap < KS_CTL_MAX_AP ? c->nap : KS_CTL_MAX_AP;
		for (unsigned i = 0; i < cfg.ap_n; i++) {
			cfg.ap[i].thread = c->ap[i].thread;
			cfg.ap[i].point = c->ap[i].point;
			cfg.ap[i].k = c->ap[i].k;
			cfg.ap[i].every = c->ap[i].every;
		}
		if (ks_ctl_begin(&cfg))
			abort();
	}
	rc = kh_body(c, r);
	if (!c->free_running)
		ks_ctl_end(&res);
	r->ops_run = (uint32_t)ks_atomic_peek(&kh_state.ops_run);
	r->ops_ok = (uint32_t)ks_atomic_peek(&kh_state.ops_ok);
	r->execs_checked = (uint32_t)ks_atomic_peek(&kh_state.checked);
	r->steps = res.steps;
	r->preemptions = res.preemptions;
	r->trace = res.trace;
	r->ntrace = res.ntrace;
	kh_clear_jobs();
	return rc;
}
