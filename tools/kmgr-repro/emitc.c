/*
 * emitc.c - `emit-c`: a program as a standalone C regression test.  The
 * operations become straight-line calls of the harness (fuzz/harness/
 * harness.h: kh_load, kh_exec, ... with the arguments named as in the
 * kinds table), one function per logical thread; the harness and the
 * oracle are the fuzz runner's own, embedded as one amalgamated copy
 * (generated at build time from the files fuzz/harness/embed.c lists), or
 * with shared_prelude #included through embed.c (the tests kept in
 * corpus/regressions/, which the build compiles with fuzz/ on the include
 * path).  What every test shares (main, the config, the report hook, the
 * verdict) is the harness's (harness/regression.c): a test is its threads
 * and one declaration, kh_test.  Nothing here knows an operation: a new
 * kind prints from its row in prog/kinds.c.  Inline containers and the
 * decision bytes are embedded, templates named by number;
 * KS_STRAT_BYTES, not REPLAY: a trace recorded on the buggy build may name
 * a thread that is not runnable on the fixed one, while decision bytes
 * are a valid schedule on every build.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kfile.h"
#include "kr_harness.h"
#include "repro.h"

typedef struct emit {
	FILE *f;
	const kprog_t *p;
	const char *name;
	unsigned nblobs; /* inline containers */
	size_t blob_len[KPROG_MAX_OPS];
	int op_model[KPROG_MAX_OPS]; /* a LOAD's container: template, or KPROG_NTMPL + blob */
	bool shared_prelude;
} emit_t;

static void bytes_out(FILE *f, const char *name, const uint8_t *b, size_t n)
{
	fprintf(f, "static const uint8_t %s[] = {", name);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s0x%02x,", i % 12 ? " " : "\n\t", b[i]);
	if (!n)
		fprintf(f, "0");
	fprintf(f, "\n};\n");
}

/* s as a C string literal: printable ASCII as is except the quote, the
 * backslash and '?' (no trigraph can form); every other byte as a
 * three-digit octal escape, which a following digit cannot extend. */
static void c_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\' || *c == '?')
			fprintf(f, "\\%c", *c);
		else if (*c >= 0x20 && *c < 0x7f)
			fputc(*c, f);
		else
			fprintf(f, "\\%03o", *c);
	}
	fputc('"', f);
}

/* s inside a block comment, at most max bytes of it: '*' (which could
 * open or close the comment with a neighbouring '/'), '?' (trigraphs),
 * '\\' (line splices) and non-printable bytes become \\xHH, so a path
 * cannot end the comment or trip -Wcomment / -Wtrigraphs. */
static void c_comment(FILE *f, const char *s, size_t max)
{
	for (const unsigned char *c = (const unsigned char *)s; *c && max; c++, max--) {
		if (*c == '*' || *c == '?' || *c == '\\' || *c < 0x20 || *c >= 0x7f)
			fprintf(f, "\\x%02x", *c);
		else
			fputc(*c, f);
	}
}

/* A LOAD names a template by its number, as the program does (the
 * harness builds the same container); an inline container becomes
 * blob_K, which the harness numbers KPROG_NTMPL + K. */
static void collect_models(emit_t *e)
{
	char name[32];

	for (unsigned i = 0; i < e->p->nops; i++) {
		const kprog_op_t *op = &e->p->ops[i];

		e->op_model[i] = -1;
		if (op->kind != KOP_LOAD)
			continue;
		if (op->a[1] != KPROG_TMPL_INLINE) {
			e->op_model[i] = op->a[1];
			continue;
		}
		snprintf(name, sizeof(name), "blob_%u", e->nblobs);
		fprintf(e->f, "\n/* the container op %u loads */\n", i);
		bytes_out(e->f, name, e->p->blob + op->blob_off, op->blob_len);
		e->blob_len[e->nblobs] = op->blob_len;
		e->op_model[i] = KPROG_NTMPL + (int)e->nblobs++;
	}
	if (!e->nblobs)
		return;
	/* the length as a number: an empty container is written {0} */
	fprintf(e->f, "\nstatic const kh_blob_t blobs[] = {");
	for (unsigned k = 0; k < e->nblobs; k++)
		fprintf(e->f, "%s{blob_%u, %zu}", k ? ", " : "", k, e->blob_len[k]);
	fprintf(e->f, "};\n");
}

static const char *place(int v)
{
	static const char *const names[] = {"DEV", "HOST", "VIRT", "MISSING"};

	return v >= 0 && v < KPROG_PLACE__N ? names[v] : "DEV";
}

/* One field as a named argument: placements and selectors by name, LOAD's
 * template as the container's number (with its name). */
static void arg_out(emit_t *e, unsigned i, int fi, int v, bool *first)
{
	unsigned kind = e->p->ops[i].kind;
	const char *field = kprog_kind(kind)->f[fi].name;
	int m = e->op_model[i];
	FILE *f = e->f;

	fprintf(f, "%s", *first ? "" : ", ");
	*first = false;
	if ((!strcmp(field, "in") || !strcmp(field, "out")) && v >= KPROG_PLACE_MIX)
		fprintf(f, ".%s = KPROG_PLACE_MIX + %d", field, v - KPROG_PLACE_MIX);
	else if (!strcmp(field, "in") || !strcmp(field, "out") || !strcmp(field, "place"))
		fprintf(f, ".%s = KPROG_PLACE_%s", field, place(v));
	else if (e->p->ops[i].kind == KOP_LOAD && !strcmp(field, "tmpl") && m < KPROG_NTMPL)
		fprintf(f, ".model = %d /* %s */", m, kprog_template_name((unsigned)m));
	else if (e->p->ops[i].kind == KOP_LOAD && !strcmp(field, "tmpl"))
		fprintf(f, ".model = KPROG_NTMPL + %d /* blob_%d */", m - KPROG_NTMPL,
		        m - KPROG_NTMPL);
	else if (kprog_field_ident(kind, fi, v))
		fprintf(f, ".%s = %s", field, kprog_field_ident(kind, fi, v));
	else
		fprintf(f, ".%s = %d", field, v);
}

/* kh_<kind>(op, thread, &(kh_args_t){.field = value, ...}); */
static void op_call(emit_t *e, unsigned i)
{
	const kprog_op_t *op = &e->p->ops[i];
	const kprog_kind_info_t *k = kprog_kind(op->kind);
	bool first = true;

	if (!k) {
		fprintf(e->f, "\t/* unknown op kind %u */\n", op->kind);
		return;
	}
	fprintf(e->f, "\tkh_%s(%u, %u, &(kh_args_t){", k->name, i, op->thread);
	for (int f = 0; f < 4; f++)
		if (k->f[f].name)
			arg_out(e, i, f, op->a[f], &first);
	fprintf(e->f, "%s});\n", first ? "0" : "");
}

static void header(emit_t *e, const kr_input_t *in)
{
	static char text[1 << 18];
	FILE *f = e->f;

	kprog_print(e->p, text, sizeof(text));
	fprintf(f, "/*\n * ");
	c_comment(f, e->name, SIZE_MAX);
	fprintf(f, ".c - regression test emitted by kmgr-repro (target %s) from\n *   ",
	        in->target);
	c_comment(f, in->path, SIZE_MAX);
	fprintf(f, "\n"
	           " * It replays the program below under the controlled scheduler with its\n"
	           " * decision bytes, through the fuzz runner's own harness and oracle; it\n"
	           " * aborts (sanitizer report or an ORACLE line) while the bug is present\n"
	           " * and prints PASS on a correct library.\n *\n");
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		fprintf(f, " *   ");
		c_comment(f, l, 96);
		fprintf(f, "\n");
	}
	fprintf(f, " */\n");
}

static bool thread_has_ops(const kprog_t *p, unsigned t)
{
	for (unsigned i = 0; i < p->nops; i++)
		if (p->ops[i].thread == t)
			return true;
	return false;
}

/* One function per logical thread that has operations. */
static void threads(emit_t *e)
{
	FILE *f = e->f;

	for (unsigned t = 0; t < e->p->nthreads; t++) {
		if (!thread_has_ops(e->p, t))
			continue;
		fprintf(f, "\n/* logical thread %u */\nstatic void thread_%u(void)\n{\n", t, t);
		for (unsigned i = 0; i < e->p->nops; i++)
			if (e->p->ops[i].thread == t)
				op_call(e, i);
		fprintf(f, "}\n");
	}
}

/* kh_test (harness/regression.h): the decision bytes first, on one line,
 * then the name, the config and the thread table on another; the rest is
 * kh_regression_main's. */
static void declaration(emit_t *e, const kr_input_t *in)
{
	const kprog_t *p = e->p;
	char plan[512] = "";
	FILE *f = e->f;
	unsigned every = 0;

	fprintf(f, "\n/* the decision bytes, the test, the program's config and threads */\n"
	           "const kh_regression_t kh_test = {");
	if (p->nsched) {
		fprintf(f, ".sched = {");
		for (unsigned i = 0; i < p->nsched; i++)
			fprintf(f, "%s0x%02x", i ? ", " : "", p->sched[i]);
		fprintf(f, "}, ");
	}
	if (p->nap) {
		fprintf(f, ".nap = %u, .ap = {", p->nap);
		for (unsigned i = 0; i < p->nap; i++)
			fprintf(f, "%s{%u, %u, %u}", i ? ", " : "", p->ap[i].thread, p->ap[i].point,
			        p->ap[i].k);
		fprintf(f, "}, ");
		for (unsigned i = 0; i < p->nap; i++)
			every |= (unsigned)p->ap[i].every << i;
		if (every)
			fprintf(f, ".ap_every = 0x%02x, ", every);
	}
	fprintf(f, ".nsched = %u,\n\t.name = ", p->nsched);
	c_string(f, e->name);
	fprintf(f, ", .target = ");
	c_string(f, in->target);
	fprintf(f, ", .async = %s, .nc = %u, .qdepth = %u, .nthreads = %u, .threads = {",
	        p->async ? "true" : "false", p->nc, p->qdepth, p->nthreads);
	for (unsigned t = 0; t < p->nthreads; t++)
		fprintf(f, thread_has_ops(p, t) ? "%sthread_%u" : "%sNULL", t ? ", " : "", t);
	fprintf(f, "}");
	if (p->plan.n) {
		kfault_plan_format(&p->plan, plan, sizeof(plan));
		fprintf(f, ", .plan = ");
		c_string(f, plan);
	}
	if (e->nblobs)
		fprintf(f, ", .blobs = blobs, .nblobs = %u", e->nblobs);
	fprintf(f, "};\n");
}

/* Write errors stay in the stream for kfile_commit to report. */
static void emit_program(emit_t *e, const kr_input_t *in)
{
	header(e, in);
	if (e->shared_prelude)
		fprintf(e->f, "#include \"harness/embed.c\" /* fuzz/harness/embed.c */\n");
	else
		fwrite(kr_harness, 1, sizeof(kr_harness) - 1, e->f);
	collect_models(e);
	threads(e);
	declaration(e, in);
}

/* A test name from the output path: its base name without ".c". */
static void default_name(const char *out, char *name, size_t len)
{
	const char *b = strrchr(out, '/');
	size_t n = 0;

	b = b ? b + 1 : out;
	while (b[n] && b[n] != '.' && n + 1 < len) {
		name[n] = isalnum((unsigned char)b[n]) ? b[n] : '_';
		n++;
	}
	name[n] = 0;
	if (!n)
		snprintf(name, len, "regression");
}

int kr_emit_c(const kr_input_t *in, const char *out_path, const char *name, bool shared_prelude)
{
	static emit_t e;
	char nbuf[128];
	kfile_t kf;

	if (in->kind != KR_PROGRAM) {
		fprintf(stderr, "kmgr-repro emit-c: %s is not a program of a program target (%s)\n",
		        in->path,
		        in->kind == KR_STRESS ? "a stress repro: rerun with --replay"
		                              : "model_parse: keep the bytes in the corpus");
		return -1;
	}
	if (!name) {
		default_name(out_path, nbuf, sizeof(nbuf));
		name = nbuf;
	}
	const char *why;

	if (kfile_output_ok(out_path, in->path, &why)) {
		fprintf(stderr, "kmgr-repro emit-c: %s %s\n", out_path, why);
		return -1;
	}
	memset(&e, 0, sizeof(e));
	e.p = in->prog;
	e.name = name;
	e.shared_prelude = shared_prelude;
	e.f = kfile_open(&kf, out_path);
	if (!e.f) {
		fprintf(stderr, "kmgr-repro emit-c: cannot write %s: %s\n", out_path,
		        strerror(errno));
		return -1;
	}
	emit_program(&e, in);
	if (kfile_commit(&kf)) {
		fprintf(stderr, "kmgr-repro emit-c: cannot write %s: %s\n", out_path,
		        strerror(errno));
		return -1;
	}
	printf("wrote %s: %u ops in %u thread(s), %u decision bytes\n", out_path, in->prog->nops,
	       in->prog->nthreads, in->prog->nsched);
	return 0;
}
