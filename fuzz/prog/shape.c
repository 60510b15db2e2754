/*
 * shape.c - the per-target program shapes, in one place: each fuzz target
 * and the reproducer (tools/kmgr-repro) shape a decoded program the same
 * way, so a crash input replays exactly as its target ran it.
 */
#include <string.h>

#include "prog.h"

/* api_seq: one thread of facade calls with the full oracle; faults only
 * from FAULT operations. */
static void shape_api_seq(kprog_t *p)
{
	p->nthreads = 1;
	for (unsigned i = 0; i < p->nops; i++)
		p->ops[i].thread = 0;
	p->plan.n = 0;
}

/* concurrent: 2-4 threads in sync mode, no fault plan.  Every shape is
 * idempotent (shape(shape(p)) == shape(p)), so a shaped program written
 * back to a file replays the same through its target: a single thread
 * becomes two, more are kept. */
static void shape_concurrent(kprog_t *p)
{
	if (p->nthreads < 2)
		p->nthreads = 2;
	p->async = false;
	p->plan.n = 0;
	for (unsigned i = 0; i < p->nops; i++)
		p->ops[i].thread %= p->nthreads;
}

/* async: implicit-async mode with the explicit nrta operations. */
static void shape_async(kprog_t *p)
{
	p->async = true;
	p->plan.n = 0;
}

/* faults: a fault run without a fault explores nothing new. */
static void shape_faults(kprog_t *p)
{
	if (p->plan.n)
		return;
	p->plan.n = 1;
	p->plan.e[0] = (kfault_entry_t){KFAULT_FAIL_ALLOC, KFAULT_SITE_ANY, 1 + p->nops % 16, 0};
}

static const struct {
	const char *name;
	void (*shape)(kprog_t *p);
} shapes[] = {
    {"api_seq", shape_api_seq},
    {"concurrent", shape_concurrent},
    {"async", shape_async},
    {"faults", shape_faults},
};

const char *const kprog_targets[] = {"api_seq", "concurrent", "async", "faults", NULL};

int kprog_shape(const char *target, kprog_t *p)
{
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		if (strcmp(shapes[i].name, target) != 0)
			continue;
		shapes[i].shape(p);
		return 0;
	}
	return -1;
}
