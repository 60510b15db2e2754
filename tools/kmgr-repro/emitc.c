/*
 * emitc.c - `emit-c`: a program as a standalone C regression test.  The
 * operations become straight-line calls, one function per logical thread;
 * the prelude (prelude.c, embedded at build time) is the runner's harness
 * without the kprog library; containers and the decision bytes are
 * embedded.  With shared_prelude the test includes prelude.c instead of
 * carrying a copy (the tests kept in corpus/regressions/, which the build
 * compiles with tools/kmgr-repro on the include path).  KS_STRAT_BYTES, not REPLAY: a trace recorded on the buggy
 * build may name a thread that is not runnable on the fixed one, while
 * decision bytes are a valid schedule on every build.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kfile.h"
#include "kr_prelude.h"
#include "model/kmodel.h"
#include "repro.h"

#define MAX_IO            16
#define MAX_TENSOR_BYTES  65536
#define MAX_INLINE_MODELS 8

/* One distinct container of the program: a template or an inline blob. */
typedef struct emodel {
	int tmpl; /* template index, -1 for inline */
	const uint8_t *bytes;
	size_t len;
	bool parse_it; /* the runner describes it (fuzz/prog/run.c: 8 inline at most) */
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
	unsigned ninline = 0;

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
			m->parse_it = tmpl >= 0 || ninline++ < MAX_INLINE_MODELS;
			m->bytes = tmpl >= 0 ? kprog_template((unsigned)tmpl, &m->len)
			                     : e->p->blob + op->blob_off;
			if (tmpl < 0)
				m->len = op->blob_len;
			k = e->nm++;
		}
		e->op_model[i] = (int)k;
	}
}

/* Names (or sizes) of the inputs, then the outputs, in model order. */
static void io_list(FILE *f, const kmodel_t *km, bool sizes)
{
	unsigned n = 0;

	fprintf(f, "{");
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < km->n_tensors; i++) {
			const kmodel_tensor_t *t = &km->tensors[i];

			if ((t->usage == NRT_TENSOR_USAGE_INPUT) != (pass == 0))
				continue;
			fprintf(f, "%s", n++ ? ", " : "");
			if (sizes)
				fprintf(f, "%llu", (unsigned long long)t->size);
			else
				c_string(f, t->name);
		}
	fprintf(f, "}");
}

/* The runner's description of a container (fuzz/prog/run.c mio_from_bytes). */
static void describe(FILE *f, unsigned k, const emodel_t *m)
{
	kmodel_t *km = NULL;
	uint32_t nin, nout;
	bool ok;

	if (!m->parse_it || kmodel_parse(m->bytes, m->len, &km) != NRT_SUCCESS) {
		fprintf(f, "\t{model_%u, sizeof(model_%u), false, false, 0, 0, 0, {0}, {0}},\n", k,
		        k);
		return;
	}
	nin = kmodel_input_count(km);
	nout = kmodel_output_count(km);
	ok = nin + nout <= MAX_IO;
	for (uint32_t i = 0; i < km->n_tensors && ok; i++)
		ok = km->tensors[i].size && km->tensors[i].size <= MAX_TENSOR_BYTES;
	fprintf(f, "\t{model_%u, sizeof(model_%u), true, %s, %u, %u, %u,\n\t ", k, k,
	        ok ? "true" : "false", km->nkbin, nin, nout);
	if (nin + nout <= MAX_IO) {
		io_list(f, km, false);
		fprintf(f, ",\n\t ");
		io_list(f, km, true);
	} else {
		fprintf(f, "{0}, {0}");
	}
	fprintf(f, "},\n");
	kmodel_free(km);
}

static const char *place(int v)
{
	static const char *const names[] = {"DEV", "HOST", "VIRT", "MISSING"};

	return v >= 0 && v < 4 ? names[v] : "DEV";
}

static void op_call(emit_t *e, unsigned i)
{
	const kprog_op_t *op = &e->p->ops[i];
	const int16_t *a = op->a;
	FILE *f = e->f;

	fprintf(f, "\t");
	switch (op->kind) {
	case KOP_LOAD:
		fprintf(f, "op_load(%u, %d, &models[%d], %d, %d);", i, a[0], e->op_model[i], a[2],
		        a[3]);
		break;
	case KOP_UNLOAD:
		fprintf(f, "op_unload(%u, %d);", i, a[0]);
		break;
	case KOP_UNLOAD_ALL:
		fprintf(f, "op_unload_all(%u);", i);
		break;
	case KOP_EXEC:
		fprintf(f, "op_exec(%u, %d, %s, %s, %d);", i, a[0], place(a[1]), place(a[2]), a[3]);
		break;
	case KOP_SCHEDULE:
		fprintf(f, "op_schedule(%u, %u, %d, %s, %s);", i, op->thread, a[0], place(a[1]),
		        place(a[2]));
		break;
	case KOP_IS_COMPLETED:
		fprintf(f, "op_is_completed(%u, %u, %d, %d);", i, op->thread, a[0], a[1]);
		break;
	case KOP_GET_SEQUENCE:
		fprintf(f, "op_get_sequence(%u, %d, %d, %d);", i, a[0], a[1], a[2]);
		break;
	case KOP_TENSOR_INFO:
		fprintf(f, "op_tensor_info(%u, %d, %d);", i, a[0], a[1]);
		break;
	case KOP_IS_VALID_IFMAP:
		fprintf(f, "op_is_valid_ifmap(%u, %d, %d);", i, a[0], a[1]);
		break;
	case KOP_IFMAP_COUNT:
		fprintf(f, "op_ifmap_count(%u, %d);", i, a[0]);
		break;
	case KOP_SET_PROFILING:
		fprintf(f, "op_set_profiling(%u, %d, %d);", i, a[0], a[1]);
		break;
	case KOP_STALE:
		fprintf(f, "op_stale(%u, %d, %d);", i, a[0], a[1]);
		break;
	case KOP_FAULT:
		fprintf(f, "op_fault(%d, %d);", a[0], a[1]);
		break;
	case KOP_TALLOC:
		fprintf(f, "op_talloc(%u, %d, %d, %d);", op->thread, a[0], a[1], a[2]);
		break;
	case KOP_TFREE:
		fprintf(f, "op_tfree(%u, %d);", op->thread, a[0]);
		break;
	case KOP_TWRITE:
	case KOP_TREAD:
		fprintf(f, "op_tio(%u, %u, %d, %s, %d, %d);", i, op->thread, a[0],
		        op->kind == KOP_TWRITE ? "true" : "false", a[1], a[2]);
		break;
	default:
		fprintf(f, "/* unknown op kind %u */", op->kind);
		break;
	}
	fprintf(f, "\n");
}

static bool uses_faults(const kprog_t *p)
{
	for (unsigned i = 0; i < p->nops; i++)
		if (p->ops[i].kind == KOP_FAULT)
			return true;
	return p->plan.n > 0;
}

static void header(emit_t *e, const kr_input_t *in)
{
	static char text[1 << 18];
	char plan[512] = "";
	FILE *f = e->f;

	kprog_print(e->p, text, sizeof(text));
	fprintf(f, "/*\n * ");
	c_comment(f, e->name, SIZE_MAX);
	fprintf(f, ".c - regression test emitted by kmgr-repro (target %s) from\n *   ",
	        in->target);
	c_comment(f, in->path, SIZE_MAX);
	fprintf(f, "\n"
	           " * It replays the program below under the controlled scheduler with its\n"
	           " * decision bytes; it aborts (sanitizer report or an ORACLE line) while the\n"
	           " * bug is present and prints PASS on a correct library.\n *\n");
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		fprintf(f, " *   ");
		c_comment(f, l, 96);
		fprintf(f, "\n");
	}
	fprintf(
	    f,
	    " */\n#include <stdarg.h>\n#include <stdbool.h>\n#include <stdint.h>\n"
	    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n\n"
	    "#include <nrt/nrt.h>\n#include <nrt/nrt_async.h>\n#include <nrt/nrt_experimental.h>\n"
	    "\n#include \"base/kalloc.h\" /* kfree of kmgr.h's out-parameters */\n");
	if (uses_faults(e->p))
		fprintf(f, "#include \"base/kfault.h\" /* the program's fault plan */\n");
	fprintf(f, "#include \"emu/emu.h\" /* accounting, the compute formula, the observer */\n"
	           "#include \"kmgr/kmgr.h\"\n#include \"sched/kctl.h\"\n\n");
	if (e->p->plan.n)
		kfault_plan_format(&e->p->plan, plan, sizeof(plan));
	fprintf(f, "#define KR_NAME ");
	c_string(f, e->name);
	fprintf(f, "\n#define KR_TARGET ");
	c_string(f, in->target);
	fprintf(f,
	        "\n#define KR_NC %uu\n#define KR_ASYNC %s\n#define KR_QDEPTH %uu\n"
	        "#define KR_NTHREADS %uu\n#define KR_USE_FAULTS %d\n#define KR_FAULT_PLAN ",
	        e->p->nc, e->p->async ? "true" : "false", e->p->qdepth, e->p->nthreads,
	        uses_faults(e->p));
	c_string(f, plan);
	fprintf(f, "\n#define free_shape kfree\n\n");
}

static void threads(emit_t *e)
{
	FILE *f = e->f;

	for (unsigned t = 0; t < e->p->nthreads; t++) {
		fprintf(f,
		        "\n/* logical thread %u */\nstatic void *thread_%u(void *arg)\n{\n"
		        "\t(void)arg;\n",
		        t, t);
		for (unsigned i = 0; i < e->p->nops; i++)
			if (e->p->ops[i].thread == t)
				op_call(e, i);
		fprintf(f, "\treturn NULL;\n}\n");
	}
	fprintf(f, "\nint main(void)\n{\n\tstatic void *(*const threads[])(void *) = {");
	for (unsigned t = 0; t < e->p->nthreads; t++)
		fprintf(f, "%sthread_%u", t ? ", " : "", t);
	fprintf(f, "};\n\n\treturn kr_run(threads, %u, sched, %u);\n}\n", e->p->nthreads,
	        e->p->nsched);
}

/* Write errors stay in the stream for kfile_commit to report. */
static void emit_program(emit_t *e, const kr_input_t *in)
{
	char name[32];

	collect_models(e);
	header(e, in);
	if (e->shared_prelude)
		fprintf(e->f, "#include \"prelude.c\" /* tools/kmgr-repro/prelude.c */\n");
	else
		fwrite(kr_prelude, 1, sizeof(kr_prelude) - 1, e->f);
	fprintf(e->f, "\n/* ---- the program ---- */\n");
	for (unsigned k = 0; k < e->nm; k++) {
		snprintf(name, sizeof(name), "model_%u", k);
		fprintf(e->f, "/* %s */\n",
		        e->m[k].tmpl >= 0 ? kprog_template_name((unsigned)e->m[k].tmpl) : "inline");
		bytes_out(e->f, name, e->m[k].bytes, e->m[k].len);
	}
	fprintf(e->f, "\nstatic const mio_t models[] = {\n");
	for (unsigned k = 0; k < e->nm; k++)
		describe(e->f, k, &e->m[k]);
	if (!e->nm)
		fprintf(e->f, "\t{0},\n");
	fprintf(e->f, "};\n\n");
	bytes_out(e->f, "sched", e->p->sched, e->p->nsched);
	threads(e);
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
