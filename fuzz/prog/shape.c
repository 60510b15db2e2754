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

/* The public-API counterpart of a facade op (api_nrt), or the op itself. */
static void to_nrt(kprog_op_t *op)
{
	const int16_t *a = op->a;

	switch (op->kind) {
	case KOP_LOAD: /* an inline container stays a load by id */
		if (a[1] != KPROG_TMPL_INLINE)
			op->kind = KOP_NRT_LOAD;
		break;
	case KOP_UNLOAD:
		op->kind = KOP_NRT_UNLOAD;
		break;
	case KOP_UNLOAD_ALL:
		op->kind = KOP_NRT_CLOSE;
		break;
	case KOP_EXEC:
		op->kind = KOP_NRT_EXEC;
		break;
	case KOP_SCHEDULE:
		*op = (kprog_op_t){KOP_NRT_SCHEDULE, op->thread, {a[0], a[1], a[2], 0}, 0, 0};
		break;
	case KOP_TENSOR_INFO:
	case KOP_IFMAP_COUNT:
	case KOP_NC_INFO:
		*op = (kprog_op_t){
		    KOP_NRT_META, op->thread, {a[0], op->kind == KOP_TENSOR_INFO, 0, 0}, 0, 0};
		break;
	case KOP_STALE: /* the handle its last unload retired */
		*op = (kprog_op_t){KOP_NRT_META, op->thread, {a[0], a[1] & 1, 1, 0}, 0, 0};
		break;
	case KOP_FAULT: /* api_nrt runs without faults (the faults target's part) */
		*op = (kprog_op_t){
		    KOP_NRT_META, op->thread, {a[0] % KPROG_SLOTS, a[1] & 1, 0, 0}, 0, 0};
		break;
	default:
		break;
	}
}

/* api_nrt: models through the public API (nrt_load .. nrt_close), sync
 * or implicit async as the input says, no fault plan.  The facade ops of
 * even logical threads become their nrt_* counterparts (UNLOAD_ALL
 * becomes nrt_close, STALE a call through a retired handle); odd threads
 * keep calling the facade by id, as a second framework on the same
 * runtime would, except that they unload only the models they loaded by id
 * (their UNLOAD_ALL becomes an UNLOAD; docs/harness.md, "api_nrt"). */
static void shape_api_nrt(kprog_t *p)
{
	p->plan.n = 0;
	for (unsigned i = 0; i < p->nops; i++) {
		kprog_op_t *op = &p->ops[i];

		op->thread %= p->nthreads;
		if (op->thread % 2 == 0)
			to_nrt(op);
		else if (op->kind == KOP_UNLOAD_ALL) /* it would take nrt_load's models too */
			*op = (kprog_op_t){KOP_UNLOAD, op->thread, {0, 0, 0, 0}, 0, 0};
	}
}

static const struct {
	const char *name;
	void (*shape)(kprog_t *p);
} shapes[] = {
    {"api_seq", shape_api_seq}, {"concurrent", shape_concurrent}, {"async", shape_async},
    {"faults", shape_faults},   {"api_nrt", shape_api_nrt},
};

const char *const kprog_targets[] = {"api_seq", "concurrent", "async", "faults", "api_nrt", NULL};

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
