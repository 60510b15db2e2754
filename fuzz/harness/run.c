/*
 * run.c - the runner: interprets a program into the harness's operations
 * (fuzz/harness/harness.h) on a fresh runtime.  Every operation's code is
 * the harness's and every check the oracle's, so what a fuzz target runs
 * and what a test kmgr-repro emits runs are the same calls; this file only
 * maps a kprog_t onto them: the config, the containers its LOADs name, and
 * each op's fields by the names of the kinds table (prog/kinds.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness.h"
#include "harness/run.h"
#include "sched/kctl.h"

/* Templates are described once per process; a program's inline containers
 * follow them, one entry per inline LOAD. */
#define RUN_MODELS (KPROG_NTMPL + KPROG_MAX_OPS)

/* One run's program as the harness's threads see it (their thread_ctx). */
typedef struct run_prog {
	const kprog_t *p;
	int16_t op_model[KPROG_MAX_OPS];
	kh_args_t args[KPROG_MAX_OPS];
} run_prog_t;

/* The described containers, kept across runs (templates first). */
static kh_model_t run_models[RUN_MODELS];

static uint8_t trace_copy[1 << 16];
static size_t trace_len;
static char ctx_text[1 << 16];

void kprog_run_opts_init(kprog_run_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = KPROG_CONTROLLED;
	o->reference = true;
}

/* The containers: the templates (kept described across runs), then each
 * inline LOAD's bytes. */
static unsigned prepare_models(run_prog_t *rp)
{
	const kprog_t *p = rp->p;
	unsigned n = KPROG_NTMPL;

	for (unsigned i = 0; i < KPROG_NTMPL && !run_models[i].bytes; i++)
		run_models[i].bytes = kprog_template(i, &run_models[i].len);
	for (unsigned i = 0; i < p->nops; i++) {
		const kprog_op_t *op = &p->ops[i];

		if (op->kind != KOP_LOAD)
			continue;
		if (op->a[1] != KPROG_TMPL_INLINE) {
			rp->op_model[i] = op->a[1];
			continue;
		}
		run_models[n] = (kh_model_t){p->blob + op->blob_off, op->blob_len, false, {0}};
		rp->op_model[i] = (int16_t)n++;
	}
	return n;
}

/* Each op's fields into the harness's named arguments, by the kinds
 * table's field names (offsets looked up once per kind). */
static void prepare_args(run_prog_t *rp)
{
	const kprog_t *p = rp->p;
	static int off[KOP__COUNT][4];
	static bool done;

	for (unsigned k = 0; k < KOP__COUNT && !done; k++)
		for (int f = 0; f < 4; f++) {
			const char *name = kprog_kind(k)->f[f].name;

			off[k][f] = name ? kh_field_offset(name) : -1;
			/* a field the harness does not know would run the op with a
			 * zero in its place, silently: a programming error */
			if (name && off[k][f] < 0) {
				fprintf(stderr,
				        "kprog: kinds.c field '%s' of '%s' has no kh_args_t member "
				        "(harness.h, kh_field_offset)\n",
				        name, kprog_kind(k)->name);
				abort();
			}
		}
	done = true;
	for (unsigned i = 0; i < p->nops; i++) {
		const kprog_op_t *op = &p->ops[i];
		kh_args_t *a = &rp->args[i];

		memset(a, 0, sizeof(*a));
		for (int f = 0; f < 4; f++)
			if (off[op->kind][f] >= 0)
				memcpy((char *)a + off[op->kind][f], &op->a[f], sizeof(op->a[f]));
		if (op->kind == KOP_LOAD)
			a->model = rp->op_model[i];
	}
}

static void interpret(void *ctx, unsigned t)
{
	const run_prog_t *rp = ctx;

	for (unsigned i = 0; i < rp->p->nops; i++)
		if (rp->p->ops[i].thread == t)
			kh_ops[rp->p->ops[i].kind](i, t, &rp->args[i]);
}

static void verbose_op(void *ctx, unsigned op, const char *what, NRT_STATUS rc)
{
	(void)ctx;
	fprintf(stderr, "kprog: op %u %s -> %d\n", op, what, (int)rc);
}

/* After an ORACLE line: the program, for the report. */
static void print_program(void *ctx, const char *invariant, const char *msg)
{
	(void)invariant;
	(void)msg;
	kprog_print(ctx, ctx_text, sizeof(ctx_text));
	fprintf(stderr, "---- program ----\n%s-----------------\n", ctx_text);
}

int kprog_run(const kprog_t *p, const kprog_run_opts_t *o, kprog_run_result_t *r)
{
	run_prog_t rp; /* the threads' context until kh_run has joined them */
	kh_config_t c;
	kh_result_t res;
	int rc;

	rp.p = p;
	kh_config_init(&c);
	c.async = p->async;
	c.nc = p->nc;
	c.qdepth = p->qdepth;
	c.nthreads = p->nthreads;
	c.plan = p->plan;
	c.models = run_models;
	c.nmodels = prepare_models(&rp);
	prepare_args(&rp);
	c.thread = interpret;
	c.thread_ctx = &rp;
	c.free_running = o->backend == KPROG_FREE;
	c.sched = p->sched;
	c.nsched = p->nsched;
	c.nap = p->nap;
	for (unsigned i = 0; i < p->nap; i++) {
		c.ap[i].thread = p->ap[i].thread;
		c.ap[i].point = p->ap[i].point;
		c.ap[i].k = p->ap[i].k;
		c.ap[i].every = p->ap[i].every;
	}
	c.max_steps = o->max_steps;
	c.reference = o->reference;
	c.async_mix = o->async_mix;
	c.full_log = o->verbose;
	c.hooks.op_done = o->verbose ? verbose_op : NULL;
	c.hooks.report = print_program;
	c.hooks.ctx = (void *)p;
	rc = kh_run(&c, &res);
	if (!c.free_running) {
		trace_len = res.ntrace < sizeof(trace_copy) ? res.ntrace : sizeof(trace_copy);
		if (trace_len)
			memcpy(trace_copy, res.trace, trace_len);
	}
	if (r) {
		r->ops_run = res.ops_run;
		r->ops_ok = res.ops_ok;
		r->execs_checked = res.execs_checked;
		r->steps = res.steps;
		r->ntrace = (uint32_t)res.ntrace;
	}
	return rc;
}

int kprog_last_trace(char *buf, size_t len)
{
	return ks_ctl_trace_format(trace_copy, trace_len, buf, len);
}
