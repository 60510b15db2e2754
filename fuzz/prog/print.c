/*
 * print.c - a program as readable text (the grammar is in prog.h), so that
 * a person can read any crash input; parse.c reads it back.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "codec.h"

static const char *const place_names[KPROG_PLACE__N] = {"dev", "host", "virt", "missing"};

struct out {
	char *buf;
	size_t cap, len;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->len < o->cap ? o->buf + o->len : NULL,
	              o->len < o->cap ? o->cap - o->len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n;
}

static const char *const mix_names[KPROG_PLACE_MIXES] = {"mix:dh", "mix:hd", "mix:dv",  "mix:vd",
                                                         "mix:hv", "mix:vh", "mix:dhv", "mix:vhd"};
static const char *const mix_patterns[KPROG_PLACE_MIXES] = KPROG_MIX_PATTERNS;

const char *kprog_place_name(int v)
{
	/* a pattern of prog.h's list and its name here must agree */
	if (v >= KPROG_PLACE_MIX && v < KPROG_PLACE_MIX + KPROG_PLACE_MIXES &&
	    !strcmp(mix_names[v - KPROG_PLACE_MIX] + 4, mix_patterns[v - KPROG_PLACE_MIX]))
		return mix_names[v - KPROG_PLACE_MIX];
	return v >= 0 && v < KPROG_PLACE__N ? place_names[v] : "?";
}

bool kprog_is_side_field(const kprog_field_t *f)
{
	return f->side;
}

bool kprog_is_place_field(const char *field)
{
	return !strcmp(field, "in") || !strcmp(field, "out") || !strcmp(field, "place");
}

static void print_field(struct out *o, const kprog_t *p, const kprog_op_t *op, int i)
{
	const char *name = kprog_kind(op->kind)->f[i].name;

	if (op->kind == KOP_LOAD && i == 1 && op->a[1] == KPROG_TMPL_INLINE) {
		put(o, " inline=");
		for (unsigned j = 0; j < op->blob_len; j++)
			put(o, "%02x", p->blob[op->blob_off + j]);
		if (!op->blob_len)
			put(o, "-");
		return;
	}
	if (op->kind == KOP_FAULT && i == 0) {
		uint32_t site = kprog_site_from_index((unsigned)op->a[0]);

		put(o, " site=%s", site ? kfault_site_name(site) : "any");
		return;
	}
	if (kprog_is_place_field(name)) {
		put(o, " %s=%s", name, kprog_place_name(op->a[i]));
		return;
	}
	if (kprog_field_name(op->kind, i, op->a[i])) {
		put(o, " %s=%s", name, kprog_field_name(op->kind, i, op->a[i]));
		return;
	}
	put(o, " %s=%d", name, op->a[i]);
}

static void print_fault(struct out *o, const kfault_entry_t *e)
{
	kfault_plan_t one = {.n = 1};
	char text[128];

	one.e[0] = *e;
	kfault_plan_format(&one, text, sizeof(text));
	put(o, "fault %s\n", text);
}

size_t kprog_print(const kprog_t *p, char *buf, size_t cap)
{
	struct out o = {buf, cap, 0};

	if (cap)
		buf[0] = 0;
	put(&o, "config mode=%s nc=%u qdepth=%u threads=%u\n", p->async ? "async" : "sync", p->nc,
	    p->qdepth, p->nthreads);
	for (unsigned i = 0; i < p->plan.n; i++)
		print_fault(&o, &p->plan.e[i]);
	for (unsigned i = 0; i < p->nap; i++)
		put(&o, "access t%u:%u%s+%u\n", p->ap[i].thread, p->ap[i].point,
		    p->ap[i].every ? ".." : "", p->ap[i].k);
	for (unsigned i = 0; i < p->nops; i++) {
		const kprog_op_t *op = &p->ops[i];
		const kprog_kind_info_t *k = kprog_kind(op->kind);

		put(&o, "t%u %s", op->thread, k->name);
		for (int f = 0; f < 4; f++)
			if (k->f[f].name)
				print_field(&o, p, op, f);
		put(&o, "\n");
	}
	if (p->nsched) {
		put(&o, "sched");
		for (unsigned i = 0; i < p->nsched; i++)
			put(&o, "%s%02x", i && i % 32 == 0 ? "\nsched " : " ", p->sched[i]);
		put(&o, "\n");
	}
	return o.len;
}
