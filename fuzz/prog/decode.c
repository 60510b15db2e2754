/*
 * decode.c - bytes to program, total: every byte string decodes, missing
 * bytes read as zero, every field is reduced into its range (prog.h has
 * the layout).
 */
#include <string.h>

#include "codec.h"

const kfault_kind_t kprog_fault_kinds[KPROG_FAULT_KINDS] = {KFAULT_FAIL_ALLOC, KFAULT_EXEC_STATUS,
                                                            KFAULT_EXEC_DELAY, KFAULT_QUEUE_FULL};
const uint32_t kprog_fault_statuses[KPROG_FAULT_STATUSES] = {1003, 1004, 1202, 5, 1204};

unsigned kprog_site_slots(void)
{
	size_t n;

	kfault_sites(&n);
	return (unsigned)n + 1;
}

uint32_t kprog_site_from_index(unsigned idx)
{
	size_t n;
	const kfault_site_info_t *t = kfault_sites(&n);

	return idx == 0 || idx > n ? KFAULT_SITE_ANY : (uint32_t)t[idx - 1].site;
}

unsigned kprog_site_to_index(uint32_t site)
{
	size_t n;
	const kfault_site_info_t *t = kfault_sites(&n);

	for (size_t i = 0; i < n; i++)
		if ((uint32_t)t[i].site == site)
			return (unsigned)i + 1;
	return 0;
}

struct reader {
	const uint8_t *p;
	size_t n, off;
};

static uint8_t rd(struct reader *r)
{
	return r->off < r->n ? r->p[r->off++] : (r->off++, 0);
}

static bool exhausted(const struct reader *r)
{
	return r->off >= r->n;
}

static void decode_fault(struct reader *r, kfault_entry_t *e)
{
	uint8_t b[KPROG_FAULT_BYTES];

	for (int i = 0; i < KPROG_FAULT_BYTES; i++)
		b[i] = rd(r);
	memset(e, 0, sizeof(*e));
	e->kind = kprog_fault_kinds[b[0] % KPROG_FAULT_KINDS];
	e->nth = 1u + b[2] % 16u;
	if (e->kind == KFAULT_FAIL_ALLOC)
		e->site = kprog_site_from_index(b[1] % kprog_site_slots());
	else if (e->kind == KFAULT_EXEC_STATUS)
		e->arg = kprog_fault_statuses[b[3] % KPROG_FAULT_STATUSES];
	else if (e->kind == KFAULT_EXEC_DELAY)
		e->arg = 1u + b[3] % 64u;
}

static int16_t reduce(const kprog_field_t *f, uint8_t b)
{
	if (!f->name)
		return 0;
	if (kprog_is_side_field(f)) /* the 4 placements as before; a mix: its own byte */
		return (int16_t)(b >= KPROG_PLACE_MIX_BYTE &&
		                         b < KPROG_PLACE_MIX_BYTE + KPROG_PLACE_MIXES
		                     ? KPROG_PLACE_MIX + (b - KPROG_PLACE_MIX_BYTE)
		                     : b % KPROG_PLACE__N);
	return (int16_t)(f->min + b % (f->max - f->min + 1));
}

static void decode_blob(struct reader *r, kprog_t *p, kprog_op_t *op)
{
	size_t len = (size_t)rd(r);

	len |= (size_t)rd(r) << 8;
	len %= KPROG_MAX_INLINE + 1;
	if (len > r->n - (r->off < r->n ? r->off : r->n))
		len = r->off < r->n ? r->n - r->off : 0;
	if (len > KPROG_MAX_BLOB - p->blob_used)
		len = KPROG_MAX_BLOB - p->blob_used;
	memcpy(p->blob + p->blob_used, r->p + (r->off < r->n ? r->off : r->n), len);
	op->blob_off = (uint16_t)p->blob_used;
	op->blob_len = (uint16_t)len;
	p->blob_used += (uint32_t)len;
	r->off += len;
}

/* Returns false when the input ran out before the op; an op cut short
 * reads zeros, like every other missing byte. */
static bool decode_op(struct reader *r, kprog_t *p, kprog_op_t *op)
{
	uint8_t b[KPROG_OP_BYTES];
	const kprog_kind_info_t *k;

	if (exhausted(r))
		return false;
	for (int i = 0; i < KPROG_OP_BYTES; i++)
		b[i] = rd(r);
	memset(op, 0, sizeof(*op));
	op->kind = (uint8_t)kprog_kind_of_byte(b[0]);
	op->thread = b[1] % p->nthreads;
	k = kprog_kind(op->kind);
	for (int i = 0; i < 4; i++)
		op->a[i] = reduce(&k->f[i], b[2 + i]);
	if (op->kind == KOP_FAULT)
		op->a[0] = (int16_t)(op->a[0] % (int)kprog_site_slots());
	if (op->kind == KOP_LOAD && op->a[1] == KPROG_TMPL_INLINE)
		decode_blob(r, p, op);
	return true;
}

/* The access points are the input's last 2 * nap bytes (thread | k-1 << 3
 * | release bits 8-9 << 6, then the release index's bits 0-7: a thread
 * that has made 40 calls is past its 32nd release, which the old field,
 * mod 32, could not name), taken from the end of the decision tail: turning them on
 * (byte 0) leaves the operations and the first decisions as they were, so
 * the mutation that adds one keeps the program it mutates.  Missing bytes
 * read as zero.  Returns where the decision bytes end. */
static size_t decode_access_points(const uint8_t *data, size_t off, size_t size, kprog_t *p)
{
	size_t tail = size > off ? size - off : 0, need = 2u * p->nap;
	size_t start = tail >= need ? size - need : off;

	for (unsigned i = 0; i < p->nap; i++) {
		size_t at = start + 2u * i;
		uint8_t b[2] = {0, 0};

		for (unsigned j = 0; j < 2; j++)
			if (at + j < size && at + j >= off)
				b[j] = data[at + j];
		p->ap[i].thread = b[0] % KPROG_AP_THREADS;
		p->ap[i].k = (uint8_t)(1u + ((b[0] >> 3) & 7));
		p->ap[i].point = (uint16_t)((unsigned)(b[0] >> 6 & 1) << 8 | b[1]);
		p->ap[i].every = b[0] >> 7;
	}
	return p->nap ? start : size;
}

void kprog_decode(const uint8_t *data, size_t size, kprog_t *p)
{
	struct reader r = {data, size, 0};
	uint8_t flags, nf, nops;

	memset(p, 0, offsetof(kprog_t, blob));
	p->blob_used = 0;
	p->nsched = 0;
	flags = rd(&r);
	p->async = flags & 1;
	p->nc = (uint8_t)(1u << ((flags >> 1) & 3));
	p->nthreads = (uint8_t)(1 + ((flags >> 3) & 3));
	p->nap = (uint8_t)((flags >> 5) & 7);
	p->qdepth = (uint8_t)(1 + rd(&r) % 8);
	nf = rd(&r) % (KPROG_MAX_FAULTS + 1);
	nops = rd(&r) % (KPROG_MAX_OPS + 1);
	for (unsigned i = 0; i < nf; i++)
		decode_fault(&r, &p->plan.e[p->plan.n++]);
	for (unsigned i = 0; i < nops && decode_op(&r, p, &p->ops[p->nops]); i++)
		p->nops++;
	size = decode_access_points(data, r.off, size, p);
	if (r.off < size) {
		p->nsched =
		    (uint32_t)(size - r.off > KPROG_MAX_SCHED ? KPROG_MAX_SCHED : size - r.off);
		memcpy(p->sched, data + r.off, p->nsched);
	}
}
