/*
 * minimize.c - greedy delta debugging over a program: drop operations
 * (chunks, then one by one), fault entries and schedule bytes, and lower
 * the thread count, keeping each change while the predicate still holds.
 */
#include <string.h>

#include "prog.h"

static kprog_t scratch;

static void drop_ops(kprog_t *q, const kprog_t *p, unsigned from, unsigned n)
{
	*q = *p;
	memmove(&q->ops[from], &q->ops[from + n], (p->nops - from - n) * sizeof(q->ops[0]));
	q->nops = p->nops - n;
}

static unsigned shrink_ops(kprog_t *p, kprog_pred_fn pred, void *ctx)
{
	unsigned done = 0;

	for (unsigned chunk = p->nops / 2; chunk >= 1; chunk /= 2) {
		for (unsigned i = 0; i + chunk <= p->nops;) {
			drop_ops(&scratch, p, i, chunk);
			if (pred(&scratch, ctx)) {
				*p = scratch;
				done++;
				continue;
			}
			i += chunk;
		}
	}
	return done;
}

static unsigned shrink_faults(kprog_t *p, kprog_pred_fn pred, void *ctx)
{
	unsigned done = 0;

	for (unsigned i = 0; i < p->plan.n;) {
		scratch = *p;
		memmove(&scratch.plan.e[i], &scratch.plan.e[i + 1],
		        (p->plan.n - i - 1) * sizeof(scratch.plan.e[0]));
		scratch.plan.n--;
		if (pred(&scratch, ctx)) {
			*p = scratch;
			done++;
			continue;
		}
		i++;
	}
	return done;
}

static unsigned shrink_sched(kprog_t *p, kprog_pred_fn pred, void *ctx)
{
	unsigned done = 0;

	for (unsigned keep = 0; keep < p->nsched; keep = keep ? keep * 2 : 1) {
		scratch = *p;
		scratch.nsched = keep;
		if (pred(&scratch, ctx)) {
			*p = scratch;
			return done + 1;
		}
	}
	return done;
}

static unsigned shrink_threads(kprog_t *p, kprog_pred_fn pred, void *ctx)
{
	unsigned used = 0;

	for (unsigned i = 0; i < p->nops; i++)
		if (p->ops[i].thread + 1u > used)
			used = p->ops[i].thread + 1u;
	if (used == 0 || used >= p->nthreads)
		return 0;
	scratch = *p;
	scratch.nthreads = (uint8_t)used;
	if (!pred(&scratch, ctx))
		return 0;
	*p = scratch;
	return 1;
}

unsigned kprog_minimize(kprog_t *p, kprog_pred_fn pred, void *ctx)
{
	unsigned total = 0, round;

	do {
		round = shrink_ops(p, pred, ctx);
		round += shrink_faults(p, pred, ctx);
		round += shrink_threads(p, pred, ctx);
		round += shrink_sched(p, pred, ctx);
		total += round;
	} while (round);
	return total;
}
