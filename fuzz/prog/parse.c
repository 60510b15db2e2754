/*
 * parse.c - the text form of a program (prog.h) back to a program, strict:
 * an unknown word, a value out of range or a thread beyond threads= is an
 * error naming the line, never a silent change.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"

#define MAX_TOK      16
#define LINE_MAX_LEN 8192

struct pctx {
	kprog_t *p;
	unsigned line;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3))) static int fail(struct pctx *c, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->err, c->errlen, "line %u: ", c->line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < c->errlen)
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int parse_int(const char *s, long min, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 0);
	if (errno || end == s || *end || *v < min || *v > max)
		return -1;
	return 0;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	ch = tolower(ch);
	return ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

static int parse_config(struct pctx *c, char **tok, int n)
{
	long v;

	for (int i = 1; i < n; i++) {
		char *eq = strchr(tok[i], '=');

		if (!eq)
			return fail(c, "config: expected key=value, got '%s'", tok[i]);
		*eq++ = 0;
		if (!strcmp(tok[i], "mode") && (!strcmp(eq, "sync") || !strcmp(eq, "async")))
			c->p->async = !strcmp(eq, "async");
		else if (!strcmp(tok[i], "nc") && !parse_int(eq, 1, 8, &v) && (v & (v - 1)) == 0)
			c->p->nc = (uint8_t)v;
		else if (!strcmp(tok[i], "qdepth") && !parse_int(eq, 1, 8, &v))
			c->p->qdepth = (uint8_t)v;
		else if (!strcmp(tok[i], "threads") && !parse_int(eq, 1, KPROG_MAX_THREADS, &v))
			c->p->nthreads = (uint8_t)v;
		else
			return fail(c, "config: bad %s=%s", tok[i], eq);
	}
	return 0;
}

static int parse_fault(struct pctx *c, char **tok, int n)
{
	kfault_plan_t one;
	char msg[128];

	if (n != 2)
		return fail(c, "fault: expected one entry");
	if (kfault_plan_parse(tok[1], &one, msg, sizeof(msg)) || one.n != 1)
		return fail(c, "fault: %s", one.n != 1 ? "expected one entry" : msg);
	if (c->p->plan.n >= KPROG_MAX_FAULTS)
		return fail(c, "fault: more than %d entries", KPROG_MAX_FAULTS);
	for (unsigned i = 0; i < KPROG_FAULT_KINDS; i++)
		if (kprog_fault_kinds[i] == one.e[0].kind) {
			c->p->plan.e[c->p->plan.n++] = one.e[0];
			return 0;
		}
	return fail(c, "fault: kind not allowed in a program: %s", tok[1]);
}

/* "access tT:R+K": the K-th heap or global access of logical thread T
 * after its R-th release is a scheduling point; "tT:R..+K": after each of
 * its releases from the R-th on. */
static int parse_access(struct pctx *c, char **tok, int n)
{
	char *colon, *plus;
	long t, m, k;
	bool every = false;

	if (n != 2 || tok[1][0] != 't' || !(colon = strchr(tok[1], ':')) ||
	    !(plus = strchr(colon, '+')))
		return fail(c, "access: expected tT:R+K or tT:R..+K");
	*colon++ = 0;
	*plus++ = 0;
	if (plus - colon > 3 && !strcmp(plus - 3, "..")) {
		plus[-3] = 0;
		every = true;
	}
	if (parse_int(tok[1] + 1, 0, KPROG_AP_THREADS - 1, &t) ||
	    parse_int(colon, 0, KPROG_AP_MAX_RELEASE, &m) || parse_int(plus, 1, 8, &k))
		return fail(c, "access: thread 0..%d, release 0..%d, access 1..8",
		            KPROG_AP_THREADS - 1, KPROG_AP_MAX_RELEASE);
	if (c->p->nap >= KPROG_MAX_AP)
		return fail(c, "access: more than %d entries", KPROG_MAX_AP);
	c->p->ap[c->p->nap].thread = (uint8_t)t;
	c->p->ap[c->p->nap].point = (uint16_t)m;
	c->p->ap[c->p->nap].every = every;
	c->p->ap[c->p->nap++].k = (uint8_t)k;
	return 0;
}

static int parse_sched(struct pctx *c, char **tok, int n)
{
	for (int i = 1; i < n; i++) {
		size_t len = strlen(tok[i]);
		int hi = hexval(tok[i][0]), lo = len == 2 ? hexval(tok[i][1]) : 0;

		if (c->p->nsched >= KPROG_MAX_SCHED)
			return fail(c, "sched: more than %d bytes", KPROG_MAX_SCHED);
		if (len < 1 || len > 2 || hi < 0 || lo < 0)
			return fail(c, "sched: bad byte '%s' (one or two hex digits)", tok[i]);
		c->p->sched[c->p->nsched++] = (uint8_t)(len == 2 ? hi << 4 | lo : hi);
	}
	return 0;
}

static int parse_inline(struct pctx *c, kprog_op_t *op, const char *hex)
{
	size_t len = strcmp(hex, "-") ? strlen(hex) : 0;

	if (len % 2 || len / 2 > KPROG_MAX_INLINE || len / 2 > KPROG_MAX_BLOB - c->p->blob_used)
		return fail(c, "load: inline container too long or odd");
	op->blob_off = (uint16_t)c->p->blob_used;
	op->blob_len = (uint16_t)(len / 2);
	for (size_t i = 0; i < len; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return fail(c, "load: bad hex in inline=");
		c->p->blob[c->p->blob_used++] = (uint8_t)(hi << 4 | lo);
	}
	op->a[1] = KPROG_TMPL_INLINE;
	return 0;
}

static int field_value(struct pctx *c, kprog_op_t *op, int f, const char *val)
{
	const kprog_field_t *fd = &kprog_kind(op->kind)->f[f];
	long v;

	if (op->kind == KOP_FAULT && f == 0) {
		int site = kfault_site_lookup(val);

		if (site < 0)
			return fail(c, "fault: unknown site '%s'", val);
		op->a[0] = (int16_t)kprog_site_to_index((uint32_t)site);
		return 0;
	}
	if (kprog_is_place_field(fd->name)) {
		for (int i = 0; i <= fd->max; i++)
			if (!strcmp(val, kprog_place_name(i))) {
				op->a[f] = (int16_t)i;
				return 0;
			}
		return fail(c, "%s: bad placement '%s'", fd->name, val);
	}
	/* a selector by name, or by number: both parse */
	if (kprog_field_value(op->kind, f, val) >= 0) {
		op->a[f] = (int16_t)kprog_field_value(op->kind, f, val);
		return 0;
	}
	if (parse_int(val, fd->min, fd->max, &v))
		return fail(c, "%s: value '%s' out of range %d..%d%s", fd->name, val, fd->min,
		            fd->max, kprog_field_name(op->kind, f, 0) ? " or a name" : "");
	op->a[f] = (int16_t)v;
	return 0;
}

static int parse_arg(struct pctx *c, kprog_op_t *op, char *arg)
{
	const kprog_kind_info_t *k = kprog_kind(op->kind);
	char *eq = strchr(arg, '=');

	if (!eq)
		return fail(c, "%s: expected key=value, got '%s'", k->name, arg);
	*eq++ = 0;
	if (op->kind == KOP_LOAD && !strcmp(arg, "inline"))
		return parse_inline(c, op, eq);
	for (int f = 0; f < 4; f++)
		if (k->f[f].name && !strcmp(k->f[f].name, arg))
			return field_value(c, op, f, eq);
	return fail(c, "%s: unknown field '%s'", k->name, arg);
}

static int parse_op(struct pctx *c, char **tok, int n)
{
	kprog_op_t *op;
	long t;
	int kind;

	if (parse_int(tok[0] + 1, 0, c->p->nthreads - 1, &t))
		return fail(c, "thread '%s' not in t0..t%u", tok[0], c->p->nthreads - 1);
	if (n < 2 || (kind = kprog_kind_lookup(tok[1])) < 0)
		return fail(c, "unknown operation '%s'", n < 2 ? "" : tok[1]);
	if (c->p->nops >= KPROG_MAX_OPS)
		return fail(c, "more than %d operations", KPROG_MAX_OPS);
	op = &c->p->ops[c->p->nops];
	memset(op, 0, sizeof(*op));
	op->kind = (uint8_t)kind;
	op->thread = (uint8_t)t;
	for (int f = 0; f < 4; f++)
		op->a[f] = kprog_kind(op->kind)->f[f].name ? kprog_kind(op->kind)->f[f].min : 0;
	if (op->kind == KOP_FAULT)
		op->a[0] = 0;
	for (int i = 2; i < n; i++)
		if (parse_arg(c, op, tok[i]))
			return -1;
	c->p->nops++;
	return 0;
}

static int parse_line(struct pctx *c, char *line)
{
	char *tok[MAX_TOK], *save = NULL, *hash = strchr(line, '#');
	int n = 0;

	if (hash)
		*hash = 0;
	for (char *t = strtok_r(line, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
		if (n == MAX_TOK && strcmp(tok[0], "sched"))
			return fail(c, "too many words");
		if (n == MAX_TOK) {
			if (parse_sched(c, tok, n))
				return -1;
			n = 1;
		}
		tok[n++] = t;
	}
	if (n == 0)
		return 0;
	if (!strcmp(tok[0], "config"))
		return parse_config(c, tok, n);
	if (!strcmp(tok[0], "fault"))
		return parse_fault(c, tok, n);
	if (!strcmp(tok[0], "access"))
		return parse_access(c, tok, n);
	if (!strcmp(tok[0], "sched"))
		return parse_sched(c, tok, n);
	if (tok[0][0] == 't' && isdigit((unsigned char)tok[0][1]))
		return parse_op(c, tok, n);
	return fail(c, "unknown line '%s'", tok[0]);
}

int kprog_parse(const char *text, kprog_t *p, char *err, size_t errlen)
{
	struct pctx c = {p, 0, err, errlen};
	char *line = malloc(LINE_MAX_LEN);
	int rc = 0;

	memset(p, 0, offsetof(kprog_t, blob));
	p->blob_used = p->nsched = 0;
	p->nc = 4;
	p->qdepth = 4;
	p->nthreads = 1;
	if (!line)
		return fail(&c, "out of memory");
	while (*text && rc == 0) {
		size_t len = strcspn(text, "\n");

		c.line++;
		if (len >= LINE_MAX_LEN) {
			rc = fail(&c, "line longer than %d", LINE_MAX_LEN - 1);
			break;
		}
		memcpy(line, text, len);
		line[len] = 0;
		rc = parse_line(&c, line);
		text += len + (text[len] == '\n');
	}
	free(line);
	return rc;
}
