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
#include <unistd.h>

#if defined(KMGR_ASAN) || defined(KMGR_TSAN) || defined(KMGR_MSAN)
#include <sanitizer/common_interface_defs.h>
#define TORTURE_SANITIZER 1
#endif

#include "base/kfault.h"
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
	    "exit status: 0 every check held, 1 a check failed, 2 usage, 3 stall\n",
	    t->ops->name, t->ops->summary, TORTURE_MAX_MODELS);
}

static int torture_num(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!s || !*s || *s == '-')
		goto bad;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, "%s: expected a number up to %" PRIu64 ", got '%s'\n", opt, max,
	        s ? s : "(nothing)");
	return -1;
}

static int torture_str(const char *opt, const char *s, char *dst, size_t len)
{
	if (!s || strlen(s) >= len) {
		fprintf(stderr, "%s: expected a value of fewer than %zu characters\n", opt, len);
		return -1;
	}
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

static int torture_set_u32(const char *opt, const char *v, uint32_t min, uint32_t max,
                           uint32_t *dst)
{
	uint64_t n;

	if (torture_num(opt, v, max, &n) != 0)
		return -1;
	if (n < min) {
		fprintf(stderr, "%s: at least %u\n", opt, min);
		return -1;
	}
	*dst = (uint32_t)n;
	return 0;
}

static int torture_load_replay(torture_t *t, const char *path);

/* One option with its value (NULL for flags); -1 on a bad one. */
static int torture_option(torture_t *t, const char *opt, const char *v, bool *seconds_set)
{
	torture_knobs_t *k = &t->k;

	if (!strcmp(opt, "threads"))
		return torture_set_u32("--threads", v, 1, TORTURE_MAX_THREADS - 8, &k->threads);
	if (!strcmp(opt, "seconds")) {
		*seconds_set = true;
		return torture_set_u32("--seconds", v, 0, 7 * 24 * 3600, &k->seconds);
	}
	if (!strcmp(opt, "ops"))
		return torture_num("--ops", v, UINT64_MAX >> 8, &k->ops);
	if (!strcmp(opt, "seed"))
		return torture_num("--seed", v, UINT64_MAX, &k->seed);
	if (!strcmp(opt, "models"))
		return torture_set_u32("--models", v, 1, TORTURE_MAX_MODELS, &k->models);
	if (!strcmp(opt, "queue-depth"))
		return torture_set_u32("--queue-depth", v, 1, 4096, &k->queue_depth);
	if (!strcmp(opt, "stall-seconds"))
		return torture_set_u32("--stall-seconds", v, 1, 24 * 3600, &k->stall_seconds);
	if (!strcmp(opt, "pct-depth"))
		return torture_set_u32("--pct-depth", v, 1, 64, &k->pct_depth);
	if (!strcmp(opt, "max-steps"))
		return torture_num("--max-steps", v, UINT64_MAX >> 8, &k->max_steps);
	if (!strcmp(opt, "controlled")) {
		k->controlled = !v || strcmp(v, "0") != 0;
		return 0;
	}
	if (!strcmp(opt, "fault")) {
		kfault_plan_t plan;
		char err[200];

		if (torture_str("--fault", v, k->fault, sizeof(k->fault)) != 0)
			return -1;
		if (k->fault[0] && kfault_plan_parse(k->fault, &plan, err, sizeof(err)) != 0) {
			fprintf(stderr, "--fault '%s': %s\n", k->fault, err);
			return -1;
		}
		return 0;
	}
	if (!strcmp(opt, "json"))
		return torture_str("--json", v, k->json, sizeof(k->json));
	if (!strcmp(opt, "repro-dir"))
		return torture_str("--repro-dir", v, k->repro_dir, sizeof(k->repro_dir));
	if (!strcmp(opt, "replay"))
		return torture_load_replay(t, v);
	if (!strcmp(opt, "trace")) {
		free(k->trace);
		k->trace = NULL;
		k->ntrace = 0;
		if (!v || !*v)
			return 0;
		if (ks_ctl_trace_parse(v, &k->trace, &k->ntrace) != 0) {
			fprintf(stderr, "trace: not a decision list\n");
			return -1;
		}
		return 0;
	}
	fprintf(stderr, "unknown option --%s\n", opt);
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

/* A repro file: "key value" lines; '#' comments; unknown keys are errors
 * except the informational ones. */
static int torture_load_replay(torture_t *t, const char *path)
{
	char *line = NULL;
	size_t cap = 0;
	bool dummy = false;
	int rc = 0, lineno = 0;
	FILE *f;

	if (!path || !(f = fopen(path, "r"))) {
		fprintf(stderr, "--replay %s: %s\n", path ? path : "(nothing)",
		        path ? strerror(errno) : "expected a file");
		return -1;
	}
	snprintf(t->k.trace_file, sizeof(t->k.trace_file), "%s", path);
	while (rc == 0 && getline(&line, &cap, f) >= 0) {
		char *sp, *val;
		size_t n = strlen(line);

		lineno++;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (!n || line[0] == '#')
			continue;
		sp = strchr(line, ' ');
		val = sp ? sp + 1 : "";
		if (sp)
			*sp = 0;
		if (!strcmp(line, "binary")) {
			if (strcmp(val, t->ops->name) != 0) {
				fprintf(stderr, "--replay %s: a repro of %s, not of %s\n", path,
				        val, t->ops->name);
				rc = -1;
			}
			continue;
		}
		if (!strcmp(line, "why") || !strcmp(line, "command") || !strcmp(line, "result"))
			continue;
		rc = torture_option(t, line, val, &dummy);
		if (rc)
			fprintf(stderr, "--replay %s:%d: bad line\n", path, lineno);
	}
	free(line);
	fclose(f);
	return rc;
}

int torture_parse_args(torture_t *t, int argc, char **argv)
{
	torture_knobs_t *k = &t->k;
	bool seconds_set = false;

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
			if ((size_t)(eq - opt) >= sizeof(name))
				goto bad;
			memcpy(name, opt, (size_t)(eq - opt));
			name[eq - opt] = 0;
			opt = name;
			v = eq + 1;
		}
		if (!strcmp(opt, "help")) {
			torture_usage(t, stdout);
			return TORTURE_EXIT_OK;
		}
		if (!strcmp(opt, "quiet")) {
			k->quiet = true;
			continue;
		}
		if (!strcmp(opt, "progress")) {
			k->progress = true;
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
		if (torture_option(t, opt, v, &seconds_set) != 0)
			goto bad;
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
	return -1;
bad:
	fprintf(stderr, "%s: bad option (see --help)\n", t->ops->name);
	return TORTURE_EXIT_USAGE;
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

int torture_write_repro(torture_t *t, const char *trace_text, const char *why, char *path,
                        size_t len)
{
	char buf[4096];
	int n = torture_format_repro(t, "", why, buf, sizeof(buf));
	FILE *f;

	/* The trace can be megabytes: the text ends with "trace \n"; the
	 * decisions go after it straight from the caller's buffer. */
	torture_repro_path(t, path, len);
	f = fopen(path, "w");
	if (n > 0 && (size_t)n < sizeof(buf))
		n--; /* drop the newline after "trace " */
	if (!f || n < 0 || (size_t)n >= sizeof(buf) || fwrite(buf, 1, (size_t)n, f) != (size_t)n ||
	    fprintf(f, "%s\n", trace_text ? trace_text : "") < 0) {
		fprintf(stderr, "%s: cannot write the repro file %s: %s\n", t->ops->name, path,
		        strerror(errno));
		if (f)
			fclose(f);
		path[0] = 0;
		return -1;
	}
	fclose(f);
	return 0;
}

/* Prepared at start, written with write(2) only: the crash handlers run in
 * a dying process. */
static char torture_crash_text[4096];
static char torture_crash_path[1024];
static volatile sig_atomic_t torture_crash_done;

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
