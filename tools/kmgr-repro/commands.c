/*
 * commands.c - show, replay, minimize, emit-c and triage over the pieces in
 * input.c (reading), child.c (running) and signature.c (bucketing).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/knum.h"
#include "kfile.h"
#include "model/kmodel.h"
#include "repro.h"
#include "sched/ksched.h"

/* ---- options ------------------------------------------------------------ */

enum { O_TARGET = 1, O_TIMES = 2, O_OUT = 4, O_TEXT = 8, O_NAME = 16, O_SHARED = 32, O_JSON = 64 };

typedef struct kr_opts {
	const char *target, *out, *name, *file;
	unsigned times;
	bool text, shared_prelude, json;
	kr_run_opts_t run;
} kr_opts_t;

static int number(const char *flag, const char *v, unsigned max, unsigned *out)
{
	uint32_t n;

	/* the one number rule (base/knum.h) */
	if (knum_parse_u32(v, 1, max, &n)) {
		fprintf(stderr, "kmgr-repro: %s needs a number from 1 to %u\n", flag, max);
		return -1;
	}
	*out = (unsigned)n;
	return 0;
}

/* Returns 0 to go on, 1 after --help, -1 on a bad flag (reported). */
static int parse_opts(int argc, char **argv, unsigned allowed, const char *help, kr_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->times = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int used = 1;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(help, stdout);
			return 1;
		}
		if (!strcmp(a, "-v")) {
			o->run.verbose = true;
			used = 0;
		} else if (!strcmp(a, "--timeout")) {
			if (number(a, v, 3600, &o->run.timeout_s))
				return -1;
		} else if (!strcmp(a, "--target") && (allowed & O_TARGET) && v) {
			o->target = v;
		} else if (!strcmp(a, "--times") && (allowed & O_TIMES)) {
			if (number(a, v, 1000, &o->times))
				return -1;
		} else if (!strcmp(a, "-o") && (allowed & O_OUT) && v) {
			o->out = v;
		} else if (!strcmp(a, "--name") && (allowed & O_NAME) && v) {
			o->name = v;
		} else if (!strcmp(a, "--text") && (allowed & O_TEXT)) {
			o->text = true;
			used = 0;
		} else if (!strcmp(a, "--shared-prelude") && (allowed & O_SHARED)) {
			o->shared_prelude = true;
			used = 0;
		} else if (!strcmp(a, "--json") && (allowed & O_JSON)) {
			o->json = true;
			used = 0;
		} else if (a[0] != '-' && !o->file) {
			o->file = a;
			used = 0;
		} else {
			fprintf(stderr, "kmgr-repro %s: bad argument '%s' (see --help)\n", argv[0],
			        a);
			return -1;
		}
		i += used;
	}
	if (!o->file) {
		fprintf(stderr, "kmgr-repro %s: expected a file (see --help)\n", argv[0]);
		return -1;
	}
	if ((allowed & O_OUT) && !o->out) {
		fprintf(stderr, "kmgr-repro %s: -o OUT is required\n", argv[0]);
		return -1;
	}
	return 0;
}

static unsigned nonzero(const uint8_t *b, uint32_t n)
{
	unsigned c = 0;

	for (uint32_t i = 0; i < n; i++)
		c += b[i] != 0;
	return c;
}

/* ---- show ---------------------------------------------------------------- */

static const char show_help[] =
    "usage: kmgr-repro show FILE [--target NAME]\n"
    "Prints what FILE is (binary fuzz input, program text, model container, stress repro),\n"
    "the target it is read for, and the program as that target runs it: config, fault\n"
    "plan, operations per logical thread and the scheduling decisions.\n";

static void show_model(const kr_input_t *in)
{
	kmodel_t *m = NULL;
	NRT_STATUS rc = kmodel_parse(in->data, in->size, &m);

	printf("model container: %zu bytes, kmodel_parse -> %d\n", in->size, (int)rc);
	if (rc == NRT_SUCCESS)
		printf("  name %s, %u subgraph(s), %u tensor(s)\n", m->name, m->nkbin,
		       m->n_tensors);
	kmodel_free(m);
}

int kr_cmd_show(int argc, char **argv)
{
	static char text[1 << 18];
	kr_opts_t o;
	kr_input_t in;
	int rc = parse_opts(argc, argv, O_TARGET, show_help, &o);

	if (rc)
		return rc > 0 ? KR_EXIT_OK : KR_EXIT_USAGE;
	if (kr_input_load(&in, o.file, o.target))
		return KR_EXIT_USAGE;
	printf("file: %s (%zu bytes)\n", in.path, in.size);
	if (in.kind == KR_STRESS) {
		printf("kind: stress repro file of %s (replay runs `%s --replay FILE`)\n",
		       in.stress_bin, in.stress_bin);
		fputs((const char *)in.data, stdout);
	} else if (in.kind == KR_MODEL) {
		printf("target: model_parse (from the %s)\n", in.target_from);
		show_model(&in);
	} else {
		const kprog_t *p = in.prog;

		printf("kind: program (%s)\ntarget: %s (from the %s)\n",
		       in.text ? "text form" : "binary fuzz input", in.target, in.target_from);
		printf("ops %u, threads %u, faults %u, schedule bytes %u (%u nonzero)\n", p->nops,
		       p->nthreads, p->plan.n, p->nsched, nonzero(p->sched, p->nsched));
		kprog_print(p, text, sizeof(text));
		fputs(text, stdout);
	}
	kr_input_free(&in);
	return KR_EXIT_OK;
}

/* ---- replay -------------------------------------------------------------- */

static const char replay_help[] =
    "usage: kmgr-repro replay FILE [--times N] [--target NAME] [--timeout S] [-v]\n"
    "Runs FILE N times (default 1) in a child under this build, with its recorded\n"
    "schedule (the program's decision bytes; stress files through `stress_X --replay`),\n"
    "and prints each run's outcome and crash signature (-v: the whole report).\n"
    "Exit 0 when every run reproduced the same signature, 1 otherwise, 2 when the\n"
    "child refused the file (its exit 2 without a report: a usage error, no crash).\n";

int kr_cmd_replay(int argc, char **argv)
{
	char first[512] = "";
	unsigned same = 0;
	kr_opts_t o;
	kr_input_t in;
	int rc = parse_opts(argc, argv, O_TARGET | O_TIMES, replay_help, &o);

	if (rc)
		return rc > 0 ? KR_EXIT_OK : KR_EXIT_USAGE;
	if (kr_input_load(&in, o.file, o.target))
		return KR_EXIT_USAGE;
	printf("replay %s (target %s, from the %s), %u run(s)\n", in.path, in.target,
	       in.target_from ? in.target_from : "file", o.times);
	unsigned done = 0;

	for (unsigned i = 0; i < o.times; i++) {
		kr_outcome_t out;

		int run = kr_run_child(&in, &o.run, &out);

		if (run && kr_interrupted()) {
			kr_outcome_free(&out);
			break; /* main says so and exits 128+signal */
		}
		if (run || out.usage) {
			if (out.usage)
				fprintf(stderr,
				        "kmgr-repro replay: %s: usage error of the child: %.*s\n",
				        in.path, (int)strcspn(out.report, "\n"), out.report);
			kr_outcome_free(&out);
			kr_input_free(&in);
			return KR_EXIT_USAGE;
		}
		if (out.failed && !first[0])
			snprintf(first, sizeof(first), "%s", out.signature);
		same += out.failed && !strcmp(out.signature, first);
		printf("run %u/%u: %s%s (%.2f s)\n", i + 1, o.times,
		       out.failed ? "crashed: " : "no failure", out.signature, out.seconds);
		kr_outcome_free(&out);
		done++;
	}
	printf("reproduced %u/%u%s%s%s\n", same, done, first[0] ? ": " : "", first,
	       done < o.times ? " (interrupted)" : "");
	kr_input_free(&in);
	return same == o.times ? KR_EXIT_OK : KR_EXIT_NO;
}

/* ---- minimize ------------------------------------------------------------ */

static const char minimize_help[] =
    "usage: kmgr-repro minimize FILE -o OUT [--target NAME] [--timeout S] [--text]\n"
    "Shrinks a program while its crash signature stays the same: first fewer\n"
    "preemptions (schedule bytes cut or zeroed: 0 is 'no preemption'), then operations,\n"
    "per-thread operations, fault entries, threads and schedule bytes\n"
    "(kprog_minimize), then the schedule again.  OUT is the binary fuzz input, shaped\n"
    "for its target (--text: the text form with a '# kmgr-repro target=' header).\n";

typedef struct minctx {
	const char *target;
	const char *sig;
	const kr_run_opts_t *run;
	unsigned runs;
	int err; /* a candidate could not be run (its scratch file): errno */
} minctx_t;

/* A candidate that cannot even be written (TMPDIR full, unwritable, a file
 * size limit) says nothing about the crash: the first such failure stops
 * the search (err), instead of passing for "does not reproduce". */
static bool same_crash(const kprog_t *p, void *arg)
{
	minctx_t *c = arg;
	kr_outcome_t out;
	bool ok;

	if (c->err || kr_interrupted())
		return false;
	c->runs++;
	errno = 0;
	if (kr_run_program(p, c->target, c->run, &out)) {
		c->err = kr_interrupted() ? 0 : (errno ? errno : EIO);
		kr_outcome_free(&out);
		return false;
	}
	ok = out.failed && !strcmp(out.signature, c->sig);
	kr_outcome_free(&out);
	return ok;
}

/* Fewer preemptions first: no decisions at all, then each nonzero
 * decision byte set to 0 (the current thread continues). */
static unsigned fewer_preemptions(kprog_t *p, minctx_t *c)
{
	static kprog_t q;
	unsigned done = 0;

	if (!p->nsched)
		return 0;
	q = *p;
	q.nsched = 0;
	if (same_crash(&q, c)) {
		*p = q;
		return 1;
	}
	for (uint32_t i = 0; i < p->nsched && i < 256; i++) {
		if (!p->sched[i])
			continue;
		q = *p;
		q.sched[i] = 0;
		if (same_crash(&q, c)) {
			*p = q;
			done++;
		}
	}
	while (p->nsched && !p->sched[p->nsched - 1])
		p->nsched--; /* trailing zeros are the fallback anyway */
	return done;
}

/* The search stopped on c->err; out: where the smallest program found so
 * far went (NULL: none yet). */
static int scratch_failed(const minctx_t *c, const char *out)
{
	fprintf(stderr,
	        "kmgr-repro minimize: cannot run a candidate program: its scratch file under %s "
	        "(TMPDIR) failed: %s\n",
	        kr_tmpdir(), strerror(c->err));
	if (out)
		fprintf(stderr,
		        "kmgr-repro minimize: incomplete: %s holds the smallest program "
		        "found before that\n",
		        out);
	return KR_EXIT_USAGE;
}

static int minimize_run(const kr_opts_t *o, kr_input_t *in)
{
	static kprog_t p;
	kr_outcome_t out;
	minctx_t c = {in->target, NULL, &o->run, 0, 0};
	double t0 = kr_now_s();
	char sig[512];

	if (kr_run_child(in, &o->run, &out)) {
		kr_outcome_free(&out);
		return KR_EXIT_USAGE;
	}
	snprintf(sig, sizeof(sig), "%s", out.signature);
	kr_outcome_free(&out);
	if (!sig[0]) {
		printf("%s does not fail under this build: nothing to minimize\n", in->path);
		return KR_EXIT_NO;
	}
	c.sig = sig;
	p = *in->prog;
	printf("signature: %s\n", sig);
	if (!same_crash(&p, &c)) {
		if (c.err)
			return scratch_failed(&c, NULL);
		printf("the program re-encoded from %s does not reproduce it\n", in->path);
		return KR_EXIT_NO;
	}
	fewer_preemptions(&p, &c);
	kprog_minimize(&p, same_crash, &c);
	fewer_preemptions(&p, &c);
	/* interrupted, or stopped by a scratch failure, p is still the smallest
	 * program that reproduced: kept */
	if (kr_write_program(o->out, &p, in->target, o->text))
		return KR_EXIT_USAGE;
	if (c.err)
		return scratch_failed(&c, o->out);
	if (kr_interrupted())
		printf("interrupted: %s holds the smallest program found so far\n", o->out);
	printf("ops %u -> %u, threads %u -> %u, faults %u -> %u, schedule bytes %u -> %u "
	       "(nonzero %u -> %u)\n",
	       in->prog->nops, p.nops, in->prog->nthreads, p.nthreads, in->prog->plan.n, p.plan.n,
	       in->prog->nsched, p.nsched, nonzero(in->prog->sched, in->prog->nsched),
	       nonzero(p.sched, p.nsched));
	printf("%u runs, %.1f s; written to %s\n", c.runs + 1, kr_now_s() - t0, o->out);
	/* a binary OUT cannot say its target; this line does */
	char self[PATH_MAX + 64], outw[PATH_MAX + 64];

	kr_shell_word(kr_self_path(), self, sizeof(self));
	kr_shell_word(o->out, outw, sizeof(outw));
	printf("replay: %s replay %s --target %s\n", self, outw, in->target);
	return KR_EXIT_OK;
}

int kr_cmd_minimize(int argc, char **argv)
{
	kr_opts_t o;
	kr_input_t in;
	int rc = parse_opts(argc, argv, O_TARGET | O_OUT | O_TEXT, minimize_help, &o);

	if (rc)
		return rc > 0 ? KR_EXIT_OK : KR_EXIT_USAGE;
	if (kr_input_load(&in, o.file, o.target))
		return KR_EXIT_USAGE;
	if (in.kind != KR_PROGRAM) {
		fprintf(stderr,
		        "kmgr-repro minimize: %s is not a program (model_parse inputs: "
		        "libFuzzer -minimize_crash; stress: --replay)\n",
		        in.path);
		kr_input_free(&in);
		return KR_EXIT_USAGE;
	}
	/* found out now, not after the minimization; OUT stays as it is until
	 * there is a smaller program to write */
	const char *why;

	if (kfile_output_ok(o.out, in.path, &why)) {
		fprintf(stderr, "kmgr-repro minimize: %s %s\n", o.out, why);
		kr_input_free(&in);
		return KR_EXIT_USAGE;
	}
	if (kfile_probe(o.out)) {
		fprintf(stderr, "kmgr-repro minimize: cannot write %s: %s\n", o.out,
		        strerror(errno));
		kr_input_free(&in);
		return KR_EXIT_USAGE;
	}
	rc = minimize_run(&o, &in);
	kr_input_free(&in);
	return rc;
}

/* ---- emit-c -------------------------------------------------------------- */

static const char emit_help[] =
    "usage: kmgr-repro emit-c FILE -o TEST.c [--target NAME] [--name NAME] [--shared-prelude]\n"
    "Writes a standalone C regression test: the program spelled out as straight-line\n"
    "calls of the fuzz runner's harness (kh_load, kh_exec, ...; one function per\n"
    "logical thread) under the scheduler (KS_STRAT_BYTES with the program's decision\n"
    "bytes), with the runner's oracle; it links libnrt only.  It aborts (sanitizer\n"
    "report, ORACLE line) or exits 1 while the bug is there and exits 0 on a correct\n"
    "library.  corpus/regressions/*.c are built and run by ctest (label\n"
    "fuzz-regression).  --shared-prelude writes #include \"harness/embed.c\" instead of\n"
    "a copy of the harness and the oracle: for tests kept in corpus/regressions/.\n";

int kr_cmd_emit_c(int argc, char **argv)
{
	kr_opts_t o;
	kr_input_t in;
	int rc = parse_opts(argc, argv, O_TARGET | O_OUT | O_NAME | O_SHARED, emit_help, &o);

	if (rc)
		return rc > 0 ? KR_EXIT_OK : KR_EXIT_USAGE;
	if (kr_input_load(&in, o.file, o.target))
		return KR_EXIT_USAGE;
	rc = kr_emit_c(&in, o.out, o.name, o.shared_prelude) ? KR_EXIT_USAGE : KR_EXIT_OK;
	kr_input_free(&in);
	return rc;
}

/* ---- triage -------------------------------------------------------------- */

static const char triage_help[] =
    "usage: kmgr-repro triage DIR [--target NAME] [--timeout S] [--json]\n"
    "Runs every file under DIR (libFuzzer crash-*, AFL++ crashes/id:*, stress repro\n"
    "files; three levels deep, dot files and README.txt skipped) once and groups them\n"
    "by signature: one line per bucket with its count, the signature and its smallest\n"
    "reproducer.  A sanitizer report is grouped by its DEDUP_TOKEN (top three frames,\n"
    "dedup_token_length in sanitizers/*.options) when it has one.  Unusable files and\n"
    "files that do not fail get their own buckets.  --json: the buckets as one JSON\n"
    "object on stdout (signature, dedup_token, count, example, its size and target,\n"
    "and the command that reproduces it).\n";

typedef struct bucket {
	char key[512]; /* what files are grouped by: the dedup token, else sig */
	char sig[512];
	char dedup[256];      /* "" when the report had none */
	char type[256];       /* the crash state: its type ... */
	char frames[512];     /* ... and its frames (kr_crash_state) */
	bool is_log;          /* the example is a stress log */
	char repro[PATH_MAX]; /* the repro file the log names ("": none) */
	unsigned count;
	size_t best_size;
	char best[PATH_MAX];
	char target[32]; /* of the best file; "" for stress files and unusable ones */
} bucket_t;

/* As many buckets as there are distinct keys: the array grows. */
static bucket_t *buckets;
static unsigned nbuckets, cap_buckets;

static bucket_t *new_bucket(void)
{
	if (nbuckets == cap_buckets) {
		unsigned cap = cap_buckets ? 2 * cap_buckets : 64;
		bucket_t *nb = realloc(buckets, cap * sizeof(*nb));

		if (!nb)
			return NULL;
		buckets = nb;
		cap_buckets = cap;
	}
	memset(&buckets[nbuckets], 0, sizeof(buckets[0]));
	return &buckets[nbuckets++];
}

/* key: kr_bucket_key's; "" for the tool's own outcomes, keyed by sig.
 * report: the crash's (NULL for those outcomes).  repro: not NULL when
 * the file is a stress log, the repro file it names ("" none). */
static int add(const char *sig, const char *key, const char *report, const kr_input_t *in,
               const char *path, size_t size, const char *repro)
{
	bucket_t *b = NULL;

	if (!key[0])
		key = sig;
	for (unsigned i = 0; i < nbuckets && !b; i++)
		if (!strcmp(buckets[i].key, key))
			b = &buckets[i];
	if (!b) {
		b = new_bucket();
		if (!b)
			return -1;
		snprintf(b->key, sizeof(b->key), "%s", key);
		snprintf(b->sig, sizeof(b->sig), "%s", sig);
		if (report) {
			kr_dedup_token(report, b->dedup, sizeof(b->dedup));
			kr_crash_state(report, b->type, sizeof(b->type), b->frames,
			               sizeof(b->frames));
		}
		if (!b->type[0])
			snprintf(b->type, sizeof(b->type), "%s", sig);
	}
	if (!b->count || size < b->best_size) {
		b->best_size = size;
		snprintf(b->best, sizeof(b->best), "%s", path);
		snprintf(b->target, sizeof(b->target), "%s",
		         in && in->kind != KR_STRESS ? in->target : "");
		snprintf(b->repro, sizeof(b->repro), "%s", repro ? repro : "");
		b->is_log = repro != NULL;
	}
	b->count++;
	return 0;
}

/*
 * A stress run's log (its output when it died under a sanitizer, an
 * assertion, a check or the watchdog): not an input to run, a report to
 * sign as it is.  Told from a crash file by its text: a report kind
 * (signature.c) in a file that is not a repro file or a program.  The
 * repro file it names ("NAME: reproducer saved to PATH", relative to the
 * log's folder when not absolute) is what reproduces it.
 */
static bool stress_log(const char *path, char **text, char *repro, size_t rlen)
{
	char sig[512], *at;
	struct stat st;
	size_t n;
	FILE *f;

	*text = NULL;
	repro[0] = 0;
	if (kr_has_header(path) || stat(path, &st) || st.st_size <= 0 ||
	    (size_t)st.st_size > KR_MAX_FILE || !(f = fopen(path, "rb")))
		return false;
	*text = malloc((size_t)st.st_size + 1);
	n = *text ? fread(*text, 1, (size_t)st.st_size, f) : 0;
	fclose(f);
	if (!*text)
		return false;
	(*text)[n] = 0;
	if (strlen(*text) != n || strncmp(*text, "binary ", 7) == 0 || !strstr(*text, "stress_") ||
	    (kr_signature(*text, sig, sizeof(sig)), !sig[0])) {
		free(*text);
		*text = NULL;
		return false;
	}
	if ((at = strstr(*text, ": reproducer saved to "))) {
		const char *p = at + strlen(": reproducer saved to ");
		int len = (int)strcspn(p, "\n");
		const char *slash = strrchr(path, '/');

		if (p[0] == '/')
			snprintf(repro, rlen, "%.*s", len, p);
		else
			snprintf(repro, rlen, "%.*s/%.*s", slash ? (int)(slash - path) : 1,
			         slash ? path : ".", len, p);
		if (access(repro, R_OK))
			repro[0] = 0; /* named but not there: no command to give */
	}
	return true;
}

static int triage_file(const char *path, const kr_opts_t *o)
{
	kr_input_t in;
	kr_outcome_t out;
	struct stat st;
	size_t size = stat(path, &st) ? 0 : (size_t)st.st_size;
	char named[32], key[512], sig[512], repro[PATH_MAX], *log;
	/* --target is for the files whose path names no target (a header or a
	 * stress repro file still says its own) */
	bool fallback =
	    o->target && !kr_path_target(path, named, sizeof(named)) && !kr_has_header(path);
	int rc;

	if (stress_log(path, &log, repro, sizeof(repro))) {
		kr_signature(log, sig, sizeof(sig));
		kr_bucket_key(log, sig, key, sizeof(key));
		rc = add(sig, key, log, NULL, path, size, repro);
		free(log);
		return rc;
	}
	rc = kr_input_load(&in, path, fallback ? o->target : NULL);
	if (rc) {
		rc = add("(unusable file)", "", NULL, NULL, path, size, NULL);
		kr_input_free(&in);
		return rc;
	}
	if (kr_run_child(&in, &o->run, &out)) {
		rc = add("(could not run)", "", NULL, &in, path, size, NULL);
	} else if (out.usage) {
		rc =
		    add("(unusable file)", "", NULL, &in, path, size, NULL); /* refused: no crash */
	} else if (!out.failed) {
		rc = add("(no failure)", "", NULL, &in, path, size, NULL);
	} else {
		kr_bucket_key(out.report, out.signature, key, sizeof(key));
		rc = add(out.signature, key, out.report, &in, path, size, NULL);
	}
	kr_outcome_free(&out);
	kr_input_free(&in);
	return rc;
}

static int cmp_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Every regular file under dir, three levels deep.  What is not walked is
 * said, one line each: an unreadable folder, a symbolic link (not
 * followed, so a link cannot pull in files from elsewhere or loop), a
 * folder deeper than that.  -1 when a bucket could not be made (memory). */
static int walk(const char *dir, int depth, const kr_opts_t *o)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, cmp_name), rc = 0;

	if (n < 0) {
		fprintf(stderr, "kmgr-repro triage: skipped %s: %s\n", dir, strerror(errno));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];
		struct stat st;
		const char *name = ents[i]->d_name;

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		if (rc || kr_interrupted() || name[0] == '.' || !strcmp(name, "README.txt")) {
			/* the tool's own notes and hidden files are not inputs */
		} else if (lstat(path, &st)) {
			fprintf(stderr, "kmgr-repro triage: skipped %s: %s\n", path,
			        strerror(errno));
		} else if (S_ISLNK(st.st_mode)) {
			fprintf(stderr,
			        "kmgr-repro triage: skipped %s: a symbolic link (not followed)\n",
			        path);
		} else if (S_ISDIR(st.st_mode) && depth >= 3) {
			fprintf(stderr, "kmgr-repro triage: skipped %s: deeper than 3 levels\n",
			        path);
		} else if (S_ISDIR(st.st_mode)) {
			rc = walk(path, depth + 1, o);
		} else if (S_ISREG(st.st_mode)) {
			rc = triage_file(path, o);
		} else {
			fprintf(stderr,
			        "kmgr-repro triage: skipped %s: not a regular file (a %s)\n", path,
			        S_ISFIFO(st.st_mode)   ? "FIFO"
			        : S_ISSOCK(st.st_mode) ? "socket"
			        : S_ISCHR(st.st_mode)  ? "character device"
			        : S_ISBLK(st.st_mode)  ? "block device"
			                               : "special file");
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

static int by_count(const void *a, const void *b)
{
	const bucket_t *x = a, *y = b;

	return x->count != y->count ? (x->count < y->count ? 1 : -1) : strcmp(x->sig, y->sig);
}

/* The length of the valid UTF-8 sequence at s (1-4), 0 if there is none. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] < 0x80                    ? 1
	           : s[0] >= 0xc2 && s[0] <= 0xdf ? 2
	           : s[0] >= 0xe0 && s[0] <= 0xef ? 3
	           : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
	                                          : 0;

	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* s as a JSON string.  A byte that is not part of valid UTF-8 (a file name
 * may hold any) is written as \u00XX, its Latin-1 reading, so that the
 * output stays JSON whatever the name; the reproduce command has the exact
 * bytes (kr_shell_word). */
static void json_str(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	putchar('"');
	while (*p) {
		size_t n = utf8_len(p);

		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if (*p < 0x20 || !n)
			printf("\\u%04x", *p);
		else
			fwrite(p, 1, n, stdout);
		p += n ? n : 1;
	}
	putchar('"');
}

/* s as one POSIX sh word: single quotes, a ' as '\'' , every other byte
 * of valid UTF-8 (control bytes, $, `, \ included) as it is, since
 * nothing is special inside single quotes in any sh.  (bash's $'...' is
 * not sh: dash reads $'a' as $ and 'a'.)  A byte that is not UTF-8 cannot
 * pass through JSON or a terminal as itself, so it is written as
 * "$(printf '\ooo')", POSIX too, between the quoted parts (such a byte is
 * never a newline, which command substitution would drop).  Truncated to
 * whole pieces when len is short. */
size_t kr_shell_word(const char *s, char *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	if (len < 3)
		return len ? (out[0] = 0) : 0;
	out[n++] = '\'';
	while (*p && n + 24 < len) {
		size_t u = utf8_len(p);

		if (*p == '\'') {
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else if (u) {
			memcpy(out + n, p, u);
			n += u;
		} else {
			n += (size_t)snprintf(out + n, len - n, "'\"$(printf '\\%03o')\"'", *p);
		}
		p += u ? u : 1;
	}
	out[n++] = '\'';
	out[n] = 0;
	return n;
}

/* The command that reruns a bucket's example: a shell word for each part
 * (kr_shell_word: POSIX sh), so it can be pasted as it is.  A stress log
 * is rerun through the repro file it names; "" when it names none. */
static void reproduce_cmd(const bucket_t *b, char *cmd, size_t len)
{
	const char *verb = strcmp(b->sig, "(unusable file)") ? "replay" : "show";
	const char *file = b->repro[0] ? b->repro : b->best;
	size_t n;

	cmd[0] = 0;
	if (b->is_log && !b->repro[0])
		return;
	n = kr_shell_word(kr_self_path(), cmd, len);
	n += (size_t)snprintf(cmd + n, len - n, " %s ", verb);
	if (n < len)
		n += kr_shell_word(file, cmd + n, len - n);
	if (n < len && b->target[0])
		snprintf(cmd + n, len - n, " --target %s", b->target);
}

/* The frames of a crash state as a JSON array: "a < b < c" is [a, b, c];
 * a TSan report's second access follows a "vs" element, a free site a
 * "freed in" element. */
static void json_frames(const bucket_t *b)
{
	char buf[1200], *p = buf;
	const char *freed = strstr(b->sig, ", freed in ");
	bool first = true;

	snprintf(buf, sizeof(buf), "%s%s%s", b->frames, freed ? " < freed in < " : "",
	         freed ? freed + 11 : "");
	putchar('[');
	while (*p) {
		char *sep = strstr(p, " < "), *vs = strstr(p, " vs ");
		char *end = sep && (!vs || sep < vs) ? sep : vs;

		if (end)
			*end = 0;
		printf("%s", first ? "" : ", ");
		json_str(p);
		first = false;
		if (!end)
			break;
		if (end == vs) {
			printf(", \"vs\"");
			p = end + 4;
		} else {
			p = end + 3;
		}
	}
	putchar(']');
}

static void print_json(const char *dir, unsigned files)
{
	char cmd[2 * PATH_MAX + 512];

	printf("{\"dir\": ");
	json_str(dir);
	printf(", \"files\": %u, \"buckets\": [", files);
	for (unsigned i = 0; i < nbuckets; i++) {
		const bucket_t *b = &buckets[i];

		reproduce_cmd(b, cmd, sizeof(cmd));
		printf("%s\n  {\"crash_type\": ", i ? "," : "");
		json_str(b->type);
		printf(", \"crash_state\": ");
		json_frames(b);
		printf(", \"signature\": ");
		json_str(b->sig);
		printf(", \"key\": ");
		json_str(b->key);
		printf(", \"dedup_token\": ");
		if (b->dedup[0])
			json_str(b->dedup);
		else
			printf("null");
		printf(", \"count\": %u, \"example\": ", b->count);
		json_str(b->best);
		printf(", \"example_bytes\": %zu, \"target\": ", b->best_size);
		if (b->target[0])
			json_str(b->target);
		else
			printf("null");
		printf(", \"repro_file\": ");
		if (b->repro[0])
			json_str(b->repro);
		else
			printf("null");
		printf(", \"reproduce\": ");
		if (cmd[0])
			json_str(cmd);
		else
			printf("null");
		putchar('}');
	}
	printf("\n]}\n");
}

int kr_cmd_triage(int argc, char **argv)
{
	kr_opts_t o;
	struct stat st;
	unsigned files = 0;
	int rc = parse_opts(argc, argv, O_TARGET | O_JSON, triage_help, &o);

	if (rc)
		return rc > 0 ? KR_EXIT_OK : KR_EXIT_USAGE;
	if (stat(o.file, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "kmgr-repro triage: %s is not a directory\n", o.file);
		return KR_EXIT_USAGE;
	}
	if (o.target && !kr_is_target(o.target)) {
		fprintf(stderr, "kmgr-repro triage: unknown target '%s'\n", o.target);
		return KR_EXIT_USAGE;
	}
	nbuckets = 0;
	if (walk(o.file, 0, &o)) {
		fprintf(stderr, "kmgr-repro triage: out of memory for the buckets\n");
		rc = KR_EXIT_NO;
		goto out;
	}
	qsort(buckets, nbuckets, sizeof(buckets[0]), by_count);
	for (unsigned i = 0; i < nbuckets; i++)
		files += buckets[i].count;
	if (o.json)
		print_json(o.file, files);
	for (unsigned i = 0; !o.json && i < nbuckets; i++) {
		printf("%5u  %s%s%s%s  smallest: %s (%zu bytes)\n", buckets[i].count,
		       buckets[i].sig, buckets[i].dedup[0] ? " [DEDUP_TOKEN " : "",
		       buckets[i].dedup, buckets[i].dedup[0] ? "]" : "", buckets[i].best,
		       buckets[i].best_size);
	}
	if (!o.json)
		printf("%u file(s), %u bucket(s)\n", files, nbuckets);
	rc = kfile_stdout_done("kmgr-repro triage") ? KR_EXIT_NO : KR_EXIT_OK;
out:
	free(buckets);
	buckets = NULL;
	nbuckets = cap_buckets = 0;
	return rc;
}
