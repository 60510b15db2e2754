/*
 * emitc.c - `emit-c`: a program as a standalone C regression test.  The
 * operations become straight-line calls of the harness (fuzz/harness/
 * harness.h: kh_load, kh_exec, ... with the arguments named as in the
 * kinds table), one function per logical thread; the harness and the
 * oracle are the fuzz runner's own, embedded as one amalgamated copy
 * (generated at build time from the files fuzz/harness/embed.c lists), or
 * with shared_prelude #included through embed.c (the tests kept in
 * corpus/regressions/, which the build compiles with fuzz/ on the include
 * path).  Nothing here knows an operation: a new kind prints from its row
 * in prog/kinds.c.  Containers and the decision bytes are embedded;
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

/* One distinct container of the program: a template or an inline blob. */
typedef struct emodel {
	int tmpl; /* template index, -1 for inline */
	const uint8_t *bytes;
	size_t len;
} emodel_t;

typedef struct emit {
	FILE *f;
	const kprog_t *p;
	const char *name;
	emodel_t m[KPROG_MAX_OPS];
	unsigned nm;
	int op_model[KPROG_MAX_OPS];
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

static void collect_models(emit_t *e)
{
	for (unsigned i = 0; i < e->p->nops; i++) {
		const kprog_op_t *op = &e->p->ops[i];
		int tmpl = op->a[1] == KPROG_TMPL_INLINE ? -1 : op->a[1];
		unsigned k = 0;

		e->op_model[i] = -1;
		if (op->kind != KOP_LOAD)
			continue;
		while (tmpl >= 0 && k < e->nm && e->m[k].tmpl != tmpl)
			k++;
		if (tmpl < 0 || k == e->nm) {
			emodel_t *m = &e->m[e->nm];

			m->tmpl = tmpl;
			m->bytes = tmpl >= 0 ? kprog_template((unsigned)tmpl, &m->len)
			                     : e->p->blob + op->blob_off;
			if (tmpl < 0)
				m->len = op->blob_len;
			k = e->nm++;
		}
		e->op_model[i] = (int)k;
	}
}

static const char *place(int v)
{
	static const char *const names[] = {"DEV", "HOST", "VIRT", "MISSING"};

	return v >= 0 && v < KPROG_PLACE__N ? names[v] : "DEV";
}

/* One field as a named argument: placements by name, LOAD's template as
 * its container's index in models[]. */
static void arg_out(emit_t *e, unsigned i, const char *field, int v, bool *first)
{
	FILE *f = e->f;

	fprintf(f, "%s", *first ? "" : ", ");
	*first = false;
	if (!strcmp(field, "in") || !strcmp(field, "out") || !strcmp(field, "place"))
		fprintf(f, ".%s = KPROG_PLACE_%s", field, place(v));
	else if (e->p->ops[i].kind == KOP_LOAD && !strcmp(field, "tmpl"))
		fprintf(f, ".model = %d", e->op_model[i]);
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
			arg_out(e, i, k->f[f].name, op->a[f], &first);
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
	fprintf(f, " */\n#include <stdio.h>\n\n");
}

/* The containers, the decision bytes, the name. */
static void data_out(emit_t *e, const kr_input_t *in)
{
	char name[32];
	FILE *f = e->f;

	fprintf(f, "\n/* ---- the program ---- */\n");
	for (unsigned k = 0; k < e->nm; k++) {
		snprintf(name, sizeof(name), "model_%u", k);
		fprintf(f, "/* %s */\n",
		        e->m[k].tmpl >= 0 ? kprog_template_name((unsigned)e->m[k].tmpl) : "inline");
		bytes_out(f, name, e->m[k].bytes, e->m[k].len);
	}
	fprintf(f, "\nstatic kh_model_t models[] = {\n");
	for (unsigned k = 0; k < e->nm; k++)
		fprintf(f, "\t{model_%u, sizeof(model_%u), false, {0}},\n", k, k);
	if (!e->nm)
		fprintf(f, "\t{0},\n");
	fprintf(f, "};\n\n");
	bytes_out(f, "sched", e->p->sched, e->p->nsched);
	fprintf(f, "static const char test_name[] = ");
	c_string(f, e->name);
	fprintf(f, ";\nstatic const char test_target[] = ");
	c_string(f, in->target);
	fprintf(f, ";\n");
}

static void threads(emit_t *e)
{
	FILE *f = e->f;

	for (unsigned t = 0; t < e->p->nthreads; t++) {
		fprintf(f, "\n/* logical thread %u */\nstatic void thread_%u(void)\n{\n", t, t);
		for (unsigned i = 0; i < e->p->nops; i++)
			if (e->p->ops[i].thread == t)
				op_call(e, i);
		fprintf(f, "}\n");
	}
	fprintf(f,
	        "\nstatic void program(unsigned t)\n{\n\tstatic void (*const threads[])(void) = {");
	for (unsigned t = 0; t < e->p->nthreads; t++)
		fprintf(f, "%sthread_%u", t ? ", " : "", t);
	fprintf(f, "};\n\n\tthreads[t]();\n}\n");
}

/* After an ORACLE line: which test failed. */
static void report_out(FILE *f)
{
	fprintf(f, "\nstatic void report(void *ctx, const char *invariant, const char *msg)\n{\n"
	           "\t(void)ctx;\n\t(void)invariant;\n\t(void)msg;\n"
	           "\tfprintf(stderr, \"FAIL: %%s (regression test, fuzz target %%s)\\n\", "
	           "test_name, test_target);\n}\n");
}

static void main_out(emit_t *e)
{
	char plan[512] = "";
	FILE *f = e->f;

	fprintf(f, "\nint main(void)\n{\n\tkh_config_t c;\n\tkh_result_t r;\n");
	if (e->p->plan.n)
		fprintf(f, "\tchar err[128];\n");
	fprintf(f,
	        "\n\tkh_config_init(&c);\n\tc.async = %s;\n\tc.nc = %u;\n\tc.qdepth = %u;\n"
	        "\tc.nthreads = %u;\n\tc.models = models;\n"
	        "\tc.nmodels = sizeof(models) / sizeof(models[0]);\n\tc.thread = program;\n"
	        "\tc.sched = sched;\n\tc.nsched = %u;\n\tc.hooks.report = report;\n",
	        e->p->async ? "true" : "false", e->p->nc, e->p->qdepth, e->p->nthreads,
	        e->p->nsched);
	if (e->p->plan.n) {
		kfault_plan_format(&e->p->plan, plan, sizeof(plan));
		fprintf(f, "\tif (kfault_plan_parse(");
		c_string(f, plan);
		fprintf(f, ", &c.plan, err, sizeof(err))) {\n"
		           "\t\tfprintf(stderr, \"%%s: bad fault plan: %%s\\n\", test_name, err);\n"
		           "\t\treturn 2;\n\t}\n");
	}
	fprintf(f, "\tif (kh_run(&c, &r) < 0) {\n"
	           "\t\tprintf(\"%%s: the runtime did not start (bad config)\\n\", test_name);\n"
	           "\t\treturn 1;\n\t}\n"
	           "\tif (!r.started)\n"
	           "\t\tprintf(\"%%s: the runtime did not start (a fault fired in nrt_init)\\n\", "
	           "test_name);\n"
	           "\telse\n"
	           "\t\tprintf(\"%%s: PASS (%%llu scheduling points, %%llu preemptions)\\n\", "
	           "test_name,\n\t\t       (unsigned long long)r.steps, "
	           "(unsigned long long)r.preemptions);\n"
	           "\treturn 0;\n}\n");
}

/* Write errors stay in the stream for kfile_commit to report. */
static void emit_program(emit_t *e, const kr_input_t *in)
{
	collect_models(e);
	header(e, in);
	if (e->shared_prelude)
		fprintf(e->f, "#include \"harness/embed.c\" /* fuzz/harness/embed.c */\n");
	else
		fwrite(kr_harness, 1, sizeof(kr_harness) - 1, e->f);
	data_out(e, in);
	threads(e);
	report_out(e->f);
	main_out(e);
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
