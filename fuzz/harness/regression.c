/*
 * regression.c - the part every emitted regression test shares
 * (regression.h): the containers, the config, the report hook, the run and
 * the verdict.  Only the tests compile it (harness/embed.c), so it may
 * define main(); the fuzz runner's counterpart is harness/run.c.
 */
#include <stdio.h>
#include <string.h>

#include "harness/regression.h"

/* The templates first, numbered as in a program, then the inline
 * containers (as harness/run.c lays them out). */
#define KR_MODELS (KPROG_NTMPL + KPROG_MAX_OPS)

static const kh_regression_t *kr_test;

static void kr_thread(void *ctx, unsigned t)
{
	const kh_regression_t *test = ctx;

	if (test->threads[t])
		test->threads[t]();
}

/* After an ORACLE line: which test failed. */
static void kr_report(void *ctx, const char *invariant, const char *msg)
{
	(void)ctx;
	(void)invariant;
	(void)msg;
	fprintf(stderr, "FAIL: %s (regression test, fuzz target %s)\n", kr_test->name,
	        kr_test->target);
}

/* Before the runtime starts: the template builder allocates. */
static unsigned kr_models(const kh_regression_t *t, kh_model_t *m)
{
	unsigned n = 0;
	size_t len;

	for (; n < KPROG_NTMPL; n++) {
		const uint8_t *bytes = kprog_template(n, &len);

		m[n] = (kh_model_t){bytes, len, false, {0}};
	}
	for (unsigned k = 0; k < t->nblobs && n < KR_MODELS; k++, n++)
		m[n] = (kh_model_t){t->blobs[k].bytes, t->blobs[k].len, false, {0}};
	return n;
}

/* The test's config into c; -1 when it cannot be run as written. */
static int kr_config(const kh_regression_t *t, kh_config_t *c, kh_model_t *models)
{
	char err[128];

	kh_config_init(c);
	c->async = t->async;
	c->nc = t->nc;
	c->qdepth = t->qdepth;
	c->nthreads = t->nthreads;
	c->models = models;
	c->nmodels = kr_models(t, models);
	c->thread = kr_thread;
	c->thread_ctx = (void *)t;
	c->sched = t->sched;
	c->nsched = t->nsched;
	c->nap = t->nap;
	for (unsigned i = 0; i < t->nap && i < KPROG_MAX_AP; i++) {
		c->ap[i].thread = t->ap[i].thread;
		c->ap[i].point = t->ap[i].point;
		c->ap[i].k = t->ap[i].k;
		c->ap[i].every = (t->ap_every >> i) & 1;
	}
	c->hooks.report = kr_report;
	if (t->nthreads < 1 || t->nthreads > KPROG_MAX_THREADS || t->nsched > KPROG_MAX_SCHED ||
	    t->nap > KPROG_MAX_AP) {
		fprintf(stderr, "%s: %u threads, %zu decision bytes: out of range\n", t->name,
		        t->nthreads, t->nsched);
		return -1;
	}
	if (t->plan && kfault_plan_parse(t->plan, &c->plan, err, sizeof(err))) {
		fprintf(stderr, "%s: bad fault plan: %s\n", t->name, err);
		return -1;
	}
	return 0;
}

int kh_regression_main(const kh_regression_t *t)
{
	static kh_model_t models[KR_MODELS];
	kh_config_t c;
	kh_result_t r;

	kr_test = t;
	if (kr_config(t, &c, models))
		return 2;
	if (kh_run(&c, &r) < 0) {
		printf("%s: the runtime did not start (bad config)\n", t->name);
		return 1;
	}
	if (!r.started)
		printf("%s: the runtime did not start (a fault fired in nrt_init)\n", t->name);
	else
		printf("%s: PASS (%llu scheduling points, %llu preemptions)\n", t->name,
		       (unsigned long long)r.steps, (unsigned long long)r.preemptions);
	return 0;
}

#ifdef KH_REGRESSION_TABLE
/* The build of the tests kept in corpus/regressions/ (tools/kmgr-repro/
 * CMakeLists.txt): all of them in one program, which runs the one its
 * argument names, each still in a process of its own (one ctest test
 * each).  One link a preset instead of one a test: under afl-clang-lto a
 * link is ~4.5 CPU-s of whole-program code generation. */
int main(int argc, char **argv)
{
	const kh_regression_t *const *t;

	for (t = kh_regressions; argc == 2 && *t; t++)
		if (strcmp((*t)->name, argv[1]) == 0)
			return kh_regression_main(*t);
	fprintf(stderr, "usage: %s TEST, one of:\n", argv[0]);
	for (t = kh_regressions; *t; t++)
		fprintf(stderr, "  %s\n", (*t)->name);
	return 2;
}
#else
int main(void)
{
	return kh_regression_main(&kh_test);
}
#endif
