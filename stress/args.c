/*
 * args.c - the knob block from argv (locktorture's module parameters), the
 * --replay file, the repro file, and the crash handlers that save the repro
 * when a run dies (a sanitizer report, an abort, a segfault) instead of
 * ending with a summary.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(KMGR_ASAN) || defined(KMGR_TSAN) || defined(KMGR_MSAN)
#include <sanitizer/common_interface_defs.h>
#define TORTURE_SANITIZER 1
#endif

#include "base/kfault.h"
#include "base/knum.h"
#include "kfile.h"
#include "ksignal.h"
#include "sched/kctl.h"
#include "torture_int.h"

static void torture_usage(const torture_t *t, FILE *f)
{
	fprintf(
	    f,
	    "usage: %s [options]\n"
	    "  %s\n\n"
	    "  --threads N         worker threads, split among the roles (default 4)\n"
	    "  --seconds N         run for N seconds (default 10 unless --ops is given)\n"
	    "  --ops N             stop after N operations over all threads\n"
	    "  --seed N            seed of every worker's PRNG and of PCT (default 1)\n"
	    "  --models N          model slots (default 2, at most %d)\n"
	    "  --queue-depth N     implicit-async queue bound per worker (default 4)\n"
	    "  --fault PLAN        fault plan, kfault syntax (alloc:SITE:N, status:S:N,\n"
	    "                      delay:K:N, qfull:N, hang:N); default: $KMGR_FAULT\n"
	    "  --stall-seconds N   watchdog: no progress for N s dumps and exits 3 (default 30)\n"
	    "  --controlled        run under the controlled scheduler (PCT, --seed); bound by\n"
	    "                      --ops (default 1000), --seconds is ignored\n"
	    "  --pct-depth N       PCT depth (default 3)\n"
	    "  --max-steps N       controlled hang bound (default: the scheduler's)\n"
	    "  --json FILE         write the summary as JSON\n"
	    "  --repro-dir DIR     where a failure saves its repro file (default .)\n"
	    "  --replay FILE       rerun a saved repro file (later options override it)\n"
	    "  --quiet             only the final SUCCESS/FAILURE line\n"
	    "  --progress          the progress line even when stdout is not a terminal\n"
	    "  --help\n\n"
	    "exit status: 0 every check held, 1 a check failed, 2 usage (or the --json file\n"
	    "could not be written), 3 stall\n",
	    t->ops->name, t->ops->summary, TORTURE_MAX_MODELS);
}

/* Every error is one line: "WHERE: OPT: what", WHERE the binary's name or
 * "NAME: --replay FILE:LINE" for a line of a repro file. */
static int torture_num(const char *where, const char *opt, const char *s, uint64_t max,
                       uint64_t *out)
{
	/* the one number rule (base/knum.h): base 0 read 010 as 8 and 0x10 as 16 */
	if (knum_parse(s, max, out) == 0)
		return 0;
	fprintf(stderr, "%s: %s: expected a decimal number up to %" PRIu64 ", got '%s'\n", where,
	        opt, max, s ? s : "(nothing)");
	return -1;
}

static int torture_str(const char *where, const char *opt, const char *s, char *dst, size_t len)
{
	if (!s || strlen(s) >= len) {
		fprintf(stderr, "%s: %s: expected a value of fewer than %zu characters\n", where,
		        opt, len);
		return -1;
	}
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

static int torture_set_u32(const char *where, const char *opt, const char *v, uint32_t min,
                           uint32_t max, uint32_t *dst)
{
	uint64_t n;

	if (torture_num(where, opt, v, max, &n) != 0)
		return -1;
	if (n < min) {
		fprintf(stderr, "%s: %s: at least %u\n", where, opt, min);
		return -1;
	}
	*dst = (uint32_t)n;
	return 0;
}

/* A flag: no value (on), or =1 (on) or =0 (off), the one rule of every
 * flag; --quiet=0 was quiet. */
static int torture_flag(const char *where, const char *opt, const char *v, bool *dst)
{
	if (v && strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
		fprintf(stderr, "%s: --%s: expected no value, 0 or 1, got '%s'\n", where, opt, v);
		return -1;
	}
	*dst = !v || strcmp(v, "0") != 0;
	return 0;
}

static int torture_load_replay(torture_t *t, const char *path);

/* One option with its value (NULL for flags); -1 after its one error line. */
static int torture_option(torture_t *t, const char *where, const char *opt, const char *v,
                          bool *seconds_set)
{
	torture_knobs_t *k = &t->k;

	if (!strcmp(opt, "threads"))
		return torture_set_u32(where, "--threads", v, 1, TORTURE_MAX_THREADS - 8,
		                       &k->threads);
	if (!strcmp(opt, "seconds")) {
		*seconds_set = true;
		return torture_set_u32(where, "--seconds", v, 0, 7 * 24 * 3600, &k->seconds);
	}
	if (!strcmp(opt, "ops"))
		return torture_num(where, "--ops", v, UINT64_MAX >> 8, &k->ops);
	if (!strcmp(opt, "seed"))
		return torture_num(where, "--seed", v, UINT64_MAX, &k->seed);
	if (!strcmp(opt, "models"))
		return torture_set_u32(where, "--models", v, 1, TORTURE_MAX_MODELS, &k->models);
	if (!strcmp(opt, "queue-depth"))
		return torture_set_u32(where, "--queue-depth", v, 1, 4096, &k->queue_depth);
	if (!strcmp(opt, "stall-seconds"))
		return torture_set_u32(where, "--stall-seconds", v, 1, 24 * 3600,
		                       &k->stall_seconds);
	if (!strcmp(opt, "pct-depth"))
		return torture_set_u32(where, "--pct-depth", v, 1, 64, &k->pct_depth);
	if (!strcmp(opt, "max-steps"))
		return torture_num(where, "--max-steps", v, UINT64_MAX >> 8, &k->max_steps);
	if (!strcmp(opt, "controlled")) /* a repro file writes 0 or 1 */
		return torture_flag(where, opt, v, &k->controlled);
	if (!strcmp(opt, "fault")) {
		kfault_plan_t plan;
		char err[200];

		/* parsed first: a plan too long gets the words KMGR_FAULT's does */
		if (v && *v && kfault_plan_parse(v, &plan, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s: --fault '%s': %s\n", where, v, err);
			return -1;
		}
		return torture_str(where, "--fault", v, k->fault, sizeof(k->fault));
	}
	if (!strcmp(opt, "json")) {
		if (v && !*v) { /* not "no JSON": a value that names no file */
			fprintf(stderr, "%s: --json: expected a file name, got ''\n", where);
			return -1;
		}
		return torture_str(where, "--json", v, k->json, sizeof(k->json));
	}
	if (!strcmp(opt, "repro-dir"))
		return torture_str(where, "--repro-dir", v, k->repro_dir, sizeof(k->repro_dir));
	if (!strcmp(opt, "replay"))
		return torture_load_replay(t, v);
	if (!strcmp(opt, "trace")) {
		free(k->trace);
		k->trace = NULL;
		k->ntrace = 0;
		if (!v || !*v)
			return 0;
		if (ks_ctl_trace_parse(v, &k->trace, &k->ntrace) != 0) {
			fprintf(stderr, "%s: trace: not a decision list\n", where);
			return -1;
		}
		return 0;
	}
	fprintf(stderr, "%s: unknown option --%s\n", where, opt);
	return -1;
}

static bool torture_is_known(const char *opt)
{
	static const char *const known[] = {
	    "threads",       "seconds",   "ops",       "seed",       "models",   "queue-depth",
	    "stall-seconds", "pct-depth", "max-steps", "controlled", "fault",    "json",
	    "repro-dir",     "replay",    "trace",     "quiet",      "progress", "help"};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(opt, known[i]))
			return true;
	return false;
}

static bool torture_is_flag(const char *opt)
{
	return !strcmp(opt, "quiet") || !strcmp(opt, "progress") || !strcmp(opt, "controlled") ||
	       !strcmp(opt, "help");
}

/* The largest repro file a run writes: a header of a few lines and a trace
 * of at most KS_CTL_TRACE_MAX (2^20) decisions of up to 4 characters each. */
#define TORTURE_REPLAY_MAX (8u << 20)

/* Opens a repro file: a regular file (not a directory, /dev/zero or a
 * FIFO) of at most TORTURE_REPLAY_MAX bytes, with one line on error. */
static FILE *torture_open_replay(const torture_t *t, const char *path)
{
	struct stat st;
	FILE *f;

	if (!path || !*path) {
		fprintf(stderr, "%s: --replay: expected a file\n", t->ops->name);
		return NULL;
	}
	f = kfile_open_input(path); /* a FIFO is refused, not waited on */
	if (!f || fstat(fileno(f), &st) != 0) {
		fprintf(stderr, "%s: --replay %s: %s\n", t->ops->name, path,
		        kfile_input_error(errno));
		if (f)
			fclose(f);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > (off_t)TORTURE_REPLAY_MAX) {
		fprintf(stderr, "%s: --replay %s: %s\n", t->ops->name, path,
		        S_ISREG(st.st_mode) ? "larger than a repro file can be (8 MiB)"
		                            : "not a regular file");
		fclose(f);
		return NULL;
	}
	return f;
}

/* One "key value" line of a repro file: its binary (must be this one),
 * informational keys, or an option; a nested replay would recurse. */
static int torture_replay_line(torture_t *t, const char *where, char *line, bool *binary)
{
	char *sp = strchr(line, ' ');
	const char *val = sp ? sp + 1 : "";
	bool dummy = false;

	if (sp)
		*sp = 0;
	if (!strcmp(line, "binary")) {
		*binary = true;
		if (strcmp(val, t->ops->name) == 0)
			return 0;
		fprintf(stderr, "%s: a repro of %s, not of %s\n", where, val, t->ops->name);
		return -1;
	}
	if (!strcmp(line, "why") || !strcmp(line, "command") || !strcmp(line, "result"))
		return 0;
	if (!strcmp(line, "replay")) {
		fprintf(stderr, "%s: a repro file cannot replay another\n", where);
		return -1;
	}
	/* A finding carries run parameters only: a path it named would be
	 * written by whoever replays it (a file downloaded from elsewhere). */
	if (!strcmp(line, "json") || !strcmp(line, "repro-dir")) {
		fprintf(stderr,
		        "%s: '%s' names a path, which a repro file may not (give it on the command "
		        "line)\n",
		        where, line);
		return -1;
	}
	return torture_option(t, where, line, val, &dummy);
}

/* A line of a repro file is text of a sane length, or one line saying
 * not: the errors below echo keys and values, and a binary file's "line"
 * was echoed whole (up to 8 MiB of raw bytes on the terminal).  Only the
 * trace line is long (4 characters a decision); the others hold a fault
 * plan at most. */
static int torture_replay_text(const char *where, const char *line, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)line[i];

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			fprintf(stderr, "%s: byte 0x%02x at column %zu: not a text file\n", where,
			        c, i + 1);
			return -1;
		}
	}
	if (n > KFAULT_PLAN_TEXT_MAX + 64 && strncmp(line, "trace ", 6) != 0) {
		fprintf(stderr, "%s: a line of %zu characters, longer than any a repro holds\n",
		        where, n);
		return -1;
	}
	return 0;
}

/* A repro file: "key value" lines; '#' comments; a `binary` line naming
 * this binary is required, unknown keys are errors except the
 * informational ones. */
static int torture_load_replay(torture_t *t, const char *path)
{
	char *line = NULL, where[700];
	size_t cap = 0, total = 0;
	bool binary = false;
	int rc = 0, lineno = 0;
	ssize_t got;
	FILE *f = torture_open_replay(t, path);

	if (!f)
		return -1;
	snprintf(t->k.trace_file, sizeof(t->k.trace_file), "%s", path);
	while (rc == 0 && (got = getline(&line, &cap, f)) >= 0) {
		size_t n = (size_t)got;

		lineno++;
		snprintf(where, sizeof(where), "%s: --replay %s:%d", t->ops->name, path, lineno);
		total += n;
		if (total > TORTURE_REPLAY_MAX || strlen(line) != n) {
			fprintf(stderr, "%s: %s\n", where,
			        total > TORTURE_REPLAY_MAX ? "the file grew past 8 MiB"
			                                   : "a NUL byte: not a text file");
			rc = -1;
			break;
		}
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (torture_replay_text(where, line, n) != 0) {
			rc = -1;
			break;
		}
		if (n && line[0] != '#')
			rc = torture_replay_line(t, where, line, &binary);
	}
	if (rc == 0 && ferror(f)) { /* a read error is not the end of the file */
		fprintf(stderr, "%s: --replay %s: cannot read: %s\n", t->ops->name, path,
		        strerror(errno));
		rc = -1;
	}
	if (rc == 0 && !binary) {
		fprintf(stderr, "%s: --replay %s: no `binary` line: not a repro file\n",
		        t->ops->name, path);
		rc = -1;
	}
	free(line);
	fclose(f);
	return rc;
}

int torture_parse_args(torture_t *t, int argc, char **argv)
{
	torture_knobs_t *k = &t->k;
	bool seconds_set = false;
	const char *why;

	*k = (torture_knobs_t){.threads = 4,
	                       .seconds = 10,
	                       .seed = 1,
	                       .models = 2,
	                       .stall_seconds = 30,
	                       .pct_depth = 3,
	                       .queue_depth = 4};
	snprintf(k->repro_dir, sizeof(k->repro_dir), ".");
	if (t->ops->default_models)
		k->models = t->ops->default_models;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *opt, *v = NULL, *eq;
		char name[64];

		if (strncmp(a, "--", 2) != 0) {
			fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", t->ops->name,
			        a);
			return TORTURE_EXIT_USAGE;
		}
		opt = a + 2;
		eq = strchr(opt, '=');
		if (eq) {
			if ((size_t)(eq - opt) >= sizeof(name)) {
				fprintf(stderr, "%s: unknown option %.*s (see --help)\n",
				        t->ops->name, (int)(eq - a), a);
				return TORTURE_EXIT_USAGE;
			}
			memcpy(name, opt, (size_t)(eq - opt));
			name[eq - opt] = 0;
			opt = name;
			v = eq + 1;
		}
		if (!strcmp(opt, "help")) {
			torture_usage(t, stdout);
			return TORTURE_EXIT_OK;
		}
		if (!strcmp(opt, "quiet") || !strcmp(opt, "progress")) {
			if (torture_flag(t->ops->name, opt, v,
			                 opt[0] == 'q' ? &k->quiet : &k->progress))
				return TORTURE_EXIT_USAGE;
			continue;
		}
		if (!torture_is_known(opt)) {
			fprintf(stderr, "%s: unknown option --%s (see --help)\n", t->ops->name,
			        opt);
			return TORTURE_EXIT_USAGE;
		}
		if (!v && !torture_is_flag(opt)) {
			if (i + 1 >= argc) {
				fprintf(stderr, "%s: --%s needs a value\n", t->ops->name, opt);
				return TORTURE_EXIT_USAGE;
			}
			v = argv[++i];
		}
		if (torture_option(t, t->ops->name, opt, v, &seconds_set) != 0)
			return TORTURE_EXIT_USAGE;
	}
	if (k->ops && !seconds_set)
		k->seconds = 0;
	if (k->controlled) {
		k->seconds = 0;
		if (!k->ops)
			k->ops = 1000;
	}
	if (!k->seconds && !k->ops) {
		fprintf(stderr, "%s: give --seconds or --ops\n", t->ops->name);
		return TORTURE_EXIT_USAGE;
	}
	/* now, not after the run: a bad --json path loses nothing yet */
	if (k->json[0] && kfile_output_ok(k->json, NULL, &why) != 0) {
		fprintf(stderr, "%s: --json %s %s\n", t->ops->name, k->json, why);
		return TORTURE_EXIT_USAGE;
	}
	if (k->json[0] && kfile_probe(k->json) != 0) {
		fprintf(stderr, "%s: --json %s: %s\n", t->ops->name, k->json, strerror(errno));
		return TORTURE_EXIT_USAGE;
	}
	return -1;
}

/* ------------------------------------------------------------ repro */

static int torture_format_repro(const torture_t *t, const char *trace, const char *why, char *buf,
                                size_t len)
{
	const torture_knobs_t *k = &t->k;
	char cmd[1024];

	torture_cmdline(t, cmd, sizeof(cmd));
	return snprintf(buf, len,
	                "# kmgr-fuzz stress reproducer: rerun with `%s --replay THIS_FILE`\n"
	                "binary %s\nwhy %s\nthreads %u\nseconds %u\nops %" PRIu64 "\nseed %" PRIu64
	                "\nmodels %u\nqueue-depth %u\nstall-seconds %u\nfault %s\ncontrolled %d\n"
	                "pct-depth %u\nmax-steps %" PRIu64 "\ncommand %s\ntrace %s\n",
	                t->ops->name, t->ops->name, why, k->threads, k->seconds, k->ops, k->seed,
	                k->models, k->queue_depth, k->stall_seconds, k->fault,
	                k->controlled ? 1 : 0, k->pct_depth, k->max_steps, cmd, trace ? trace : "");
}

static void torture_repro_path(const torture_t *t, char *path, size_t len)
{
	snprintf(path, len, "%s/%s-seed%" PRIu64 "-%d.repro", t->k.repro_dir, t->ops->name,
	         t->k.seed, (int)getpid());
}

/* Set once a repro file is written: by a check failure or a stall (the
 * run's own verdict), or by the crash path; a later death (LSan's report
 * at exit after a check failure, under a sanitizer) must not replace the
 * verdict with "the process died". */
static volatile sig_atomic_t torture_crash_done;

int torture_write_repro(torture_t *t, const char *trace_text, const char *why, char *path,
                        size_t len)
{
	char buf[4096];
	int n = torture_format_repro(t, "", why, buf, sizeof(buf));
	kfile_t kf;

	/* The trace can be megabytes: the text ends with "trace \n"; the
	 * decisions go after it straight from the caller's buffer.  Whole or
	 * not at all (kfile.h): a half-written repro would replay another run. */
	torture_repro_path(t, path, len);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		fprintf(stderr, "%s: the repro file's header is too long\n", t->ops->name);
		path[0] = 0;
		return -1;
	}
	if (!kfile_open(&kf, path)) {
		fprintf(stderr, "%s: cannot write the repro file %s: %s\n", t->ops->name, path,
		        strerror(errno));
		path[0] = 0;
		return -1;
	}
	fwrite(buf, 1, (size_t)n - 1, kf.f); /* without the newline after "trace " */
	fprintf(kf.f, "%s\n", trace_text ? trace_text : "");
	if (kfile_commit(&kf) != 0) {
		fprintf(stderr, "%s: cannot write the repro file %s: %s\n", t->ops->name, path,
		        strerror(errno));
		path[0] = 0;
		return -1;
	}
	torture_crash_done = 1;
	return 0;
}

/* Prepared at start, written with write(2) only: the crash handlers run in
 * a dying process. */
static char torture_crash_text[4096];
static char torture_crash_path[1024];

static void torture_crash_write(void)
{
	static const char msg[] = ": reproducer saved to ";
	const char *name = torture_cur ? torture_cur->ops->name : "stress";
	int fd;

	if (torture_crash_done)
		return;
	torture_crash_done = 1;
	fd = open(torture_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	if (write(fd, torture_crash_text, strlen(torture_crash_text)) < 0) {
		close(fd);
		return;
	}
	close(fd);
	if (write(2, name, strlen(name)) < 0 || write(2, msg, sizeof(msg) - 1) < 0 ||
	    write(2, torture_crash_path, strlen(torture_crash_path)) < 0 || write(2, "\n", 1) < 0)
		return;
}

static void torture_crash_signal(int sig)
{
	torture_crash_write();
	signal(sig, SIG_DFL);
	raise(sig);
}

volatile sig_atomic_t torture_stop_signal;

static void torture_stop(int sig)
{
	torture_stop_signal = sig;
	if (torture_cur) /* a lock-free atomic: safe in a handler */
		ks_atomic_add_quiet(&torture_cur->stop, 1);
}

void torture_stop_handlers(void)
{
	ksignal_on_stop(torture_stop);
}

void torture_crash_handlers(torture_t *t)
{
	struct sigaction sa;

	torture_format_repro(t, "", "the process died (see the report above)", torture_crash_text,
	                     sizeof(torture_crash_text));
	torture_repro_path(t, torture_crash_path, sizeof(torture_crash_path));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = torture_crash_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGABRT, &sa, NULL);
#ifdef TORTURE_SANITIZER
	/* The sanitizer owns SIGSEGV/SIGBUS and prints the report; it calls
	 * this before it exits. */
	__sanitizer_set_death_callback(torture_crash_write);
#else
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
#endif
}
