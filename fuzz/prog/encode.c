/*
 * encode.c - program to bytes: the inverse of decode.c for any program in
 * range (decode(encode(p)) equals p), so that a hand-written text program
 * becomes a fuzz input.
 */
#include <string.h>

#include "codec.h"

struct writer {
	uint8_t *p;
	size_t cap, off;
};

static void wr(struct writer *w, uint8_t b)
{
	if (w->off < w->cap)
		w->p[w->off] = b;
	w->off++;
}

static unsigned index_of(const uint32_t *t, unsigned n, uint32_t v)
{
	for (unsigned i = 0; i < n; i++)
		if (t[i] == v)
			return i;
	return 0;
}

static void encode_fault(struct writer *w, const kfault_entry_t *e)
{
	unsigned k = 0;

	for (unsigned i = 0; i < KPROG_FAULT_KINDS; i++)
		if (kprog_fault_kinds[i] == e->kind)
			k = i;
	wr(w, (uint8_t)k);
	wr(w, (uint8_t)(e->kind == KFAULT_FAIL_ALLOC ? kprog_site_to_index(e->site) : 0));
	wr(w, (uint8_t)((e->nth ? e->nth - 1 : 0) % 16));
	if (e->kind == KFAULT_EXEC_STATUS)
		wr(w, (uint8_t)index_of(kprog_fault_statuses, KPROG_FAULT_STATUSES, e->arg));
	else if (e->kind == KFAULT_EXEC_DELAY)
		wr(w, (uint8_t)((e->arg ? e->arg - 1 : 0) % 64));
	else
		wr(w, 0);
}

static void encode_op(struct writer *w, const kprog_t *p, const kprog_op_t *op)
{
	const kprog_kind_info_t *k = kprog_kind(op->kind);

	wr(w, kprog_kind_byte(op->kind));
	wr(w, op->thread);
	for (int i = 0; i < 4; i++)
		if (kprog_is_side_field(&k->f[i]) && op->a[i] >= KPROG_PLACE_MIX)
			wr(w, (uint8_t)(KPROG_PLACE_MIX_BYTE + (op->a[i] - KPROG_PLACE_MIX)));
		else
			wr(w, k->f[i].name ? (uint8_t)(op->a[i] - k->f[i].min) : 0);
	if (op->kind != KOP_LOAD || op->a[1] != KPROG_TMPL_INLINE)
		return;
	wr(w, (uint8_t)(op->blob_len & 0xff));
	wr(w, (uint8_t)(op->blob_len >> 8));
	for (unsigned i = 0; i < op->blob_len; i++)
		wr(w, p->blob[op->blob_off + i]);
}

size_t kprog_encode(const kprog_t *p, uint8_t *out, size_t cap)
{
	struct writer w = {out, cap, 0};
	unsigned ncl = p->nc >= 8 ? 3 : p->nc >= 4 ? 2 : p->nc >= 2 ? 1 : 0;

	wr(&w, (uint8_t)((p->async ? 1 : 0) | ncl << 1 | (unsigned)(p->nthreads - 1) << 3 |
	                 (unsigned)p->nap << 5));
	wr(&w, (uint8_t)(p->qdepth - 1));
	wr(&w, (uint8_t)p->plan.n);
	wr(&w, (uint8_t)p->nops);
	for (unsigned i = 0; i < p->plan.n; i++)
		encode_fault(&w, &p->plan.e[i]);
	for (unsigned i = 0; i < p->nops; i++)
		encode_op(&w, p, &p->ops[i]);
	for (unsigned i = 0; i < p->nsched; i++)
		wr(&w, p->sched[i]);
	for (unsigned i = 0; i < p->nap; i++) { /* the last bytes (decode.c) */
		wr(&w, (uint8_t)(p->ap[i].thread | (p->ap[i].k - 1) << 3 |
		                 (p->ap[i].point >> 8 & 1) << 6 | p->ap[i].every << 7));
		wr(&w, (uint8_t)(p->ap[i].point & 0xff));
	}
	return w.off;
}

static bool op_equal(const kprog_t *a, const kprog_op_t *x, const kprog_t *b, const kprog_op_t *y)
{
	if (x->kind != y->kind || x->thread != y->thread || memcmp(x->a, y->a, sizeof(x->a)))
		return false;
	if (x->blob_len != y->blob_len)
		return false;
	return memcmp(a->blob + x->blob_off, b->blob + y->blob_off, x->blob_len) == 0;
}

bool kprog_equal(const kprog_t *a, const kprog_t *b)
{
	if (a->async != b->async || a->nc != b->nc || a->qdepth != b->qdepth ||
	    a->nthreads != b->nthreads || a->nops != b->nops || a->nsched != b->nsched)
		return false;
	if (a->plan.n != b->plan.n ||
	    memcmp(a->plan.e, b->plan.e, a->plan.n * sizeof(a->plan.e[0])))
		return false;
	if (a->nap != b->nap)
		return false;
	for (unsigned i = 0; i < a->nap; i++)
		if (a->ap[i].thread != b->ap[i].thread || a->ap[i].k != b->ap[i].k ||
		    a->ap[i].point != b->ap[i].point || a->ap[i].every != b->ap[i].every)
			return false;
	for (unsigned i = 0; i < a->nops; i++)
		if (!op_equal(a, &a->ops[i], b, &b->ops[i]))
			return false;
	return memcmp(a->sched, b->sched, a->nsched) == 0;
}
