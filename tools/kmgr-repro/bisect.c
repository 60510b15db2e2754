/*
 * bisect.c - which commit made a crash file fail: `kmgr-repro bisect CRASH
 * --good REV --bad REV`, and `verify CRASH --rev REV` for one commit.
 *
 * Each commit's tree is unpacked (`git archive`, no worktree: the
 * repository is never touched) into a cache keyed by its commit id,
 * ~/.cache/kmgr-fuzz/bisect/<commit>/src, and built there once per preset
 * into <commit>/<preset>/build.  The tree stays in the cache, so the build
 * tool's sanitizer options (suppressions=<tree>/sanitizers/X.supp) point
 * at files that exist as long as that build does; the replays get those
 * options from the commit's own sanitizers/X.options all the same, so that
 * nothing depends on the caller's shell.
 *
 * A commit is tested by replaying the crash --times N with that build: the
 * program through its kmgr-repro's `__run`, a stress repro file through
 * its stress binary.  This tool signs every report (signature.c), so one
 * crash state is compared across all commits: bad when the crash state of
 * --bad came back at least once in N, good when no run failed, skipped
 * (as `git bisect skip`, and said why) when the commit does not build,
 * its tool refuses the file, the binary is missing or it fails another
 * way.  Both ends are tested first: a crash that does not reproduce at
 * --bad, or reproduces at --good, is an error (exit 2).
 *
 * Every child (git, cmake, ninja, the compilers, the replays) runs under a
 * guard process (child.c: kr_spawn_guarded) that dies with this tool and
 * kills all its descendants first, so even a SIGKILL here leaves nothing
 * running.  An interrupted build is not marked either way: the next run
 * goes on with it.  No shell runs anything but the user's own
 * KMGR_BISECT_BUILD / KMGR_BISECT_TEST (docs/reproducer.md), which see
 * KMGR_BISECT_SRC (the commit's tree), KMGR_BISECT_OUT (its build folder),
 * KMGR_BISECT_CRASH, KMGR_BISECT_TARGET, KMGR_BISECT_TIMES and
 * KMGR_BISECT_PRESET; the test's exit status: 0 good, 1 bad, else skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/knum.h"
#include "repro.h"
#include "sched/ksched.h"

static const char bisect_help[] =
    "usage: kmgr-repro bisect CRASH --good REV --bad REV [--target NAME] [--times N]\n"
    "                         [--preset P] [--repo DIR] [--timeout S]\n"
    "       kmgr-repro verify CRASH --rev REV [--target NAME] [--times N] [--preset P]\n"
    "                         [--repo DIR] [--timeout S]\n"
    "bisect: the first commit between REV good and REV bad whose build reproduces\n"
    "CRASH with the same crash state as --bad (at least once in --times N, default\n"
    "10).  Both ends are tested first.  Each commit is unpacked and built once into\n"
    "~/.cache/kmgr-fuzz/bisect/<commit> ($XDG_CACHE_HOME); a commit that does not\n"
    "build, or whose build cannot replay CRASH, is skipped and said so.  verify: the\n"
    "answer for one commit (fixed, or still reproduces K/N).  --preset: default the\n"
    "preset a folder of CRASH's path names (fuzz-work/tsan/...), else asan.  --target:\n"
    "default CRASH's own (header or path).  --repo: default the git repository of the\n"
    "current folder.  KMGR_BISECT_BUILD / KMGR_BISECT_TEST replace the build and the\n"
    "test (docs/reproducer.md).  Exit: bisect 0 found, 1 not found (only skipped\n"
    "commits left); verify 0 fixed, 1 still reproduces; 2 bad usage, an end that\n"
    "contradicts its flag, a cache that cannot be written, or (verify) no answer.\n";

typedef struct bopts {
	const char *crash, *good, *bad, *rev, *target, *preset, *repo;
	unsigned times, timeout_s;
} bopts_t;

typedef struct bstate {
	bopts_t o;
	char cache[PATH_MAX], crash[PATH_MAX], repo[PATH_MAX];
	kr_input_t in;   /* the crash, read by this tool: its target and kind */
	char state[512]; /* the crash state bad means ("" until known) */
	unsigned builds, tests;
	double t0;
	bool cache_error; /* one line said; exit 2 */
} bstate_t;

/* One commit's verdict. */
enum { V_GOOD, V_BAD, V_SKIP };

typedef struct verdict {
	int kind;            /* V_GOOD, V_BAD, V_SKIP */
	unsigned same, runs; /* runs that gave the crash state, runs done */
	char why[600];       /* skip: the reason; bad: the state */
} verdict_t;

static const char *const presets[] = {"asan",    "asan-clang14", "tsan", "msan",
                                      "release", "coverage",     "afl"};

static int parse(int argc, char **argv, bool verify, bopts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->times = 10;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **slot = !strcmp(a, "--good")     ? &o->good
		                    : !strcmp(a, "--bad")    ? &o->bad
		                    : !strcmp(a, "--rev")    ? &o->rev
		                    : !strcmp(a, "--target") ? &o->target
		                    : !strcmp(a, "--preset") ? &o->preset
		                    : !strcmp(a, "--repo")   ? &o->repo
		                                             : NULL;
		unsigned *num = !strcmp(a, "--times")     ? &o->times
		                : !strcmp(a, "--timeout") ? &o->timeout_s
		                                          : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(bisect_help, stdout);
			return 1;
		}
		if (num) {
			unsigned max = num == &o->times ? 1000 : 3600;
			uint32_t n;

			if (knum_parse_u32(v, 1, max, &n)) {
				fprintf(stderr, "kmgr-repro: %s needs a number from 1 to %u\n", a,
				        max);
				return -1;
			}
			*num = (unsigned)n;
			i++;
		} else if (slot && v) {
			*slot = v;
			i++;
		} else if (a[0] != '-' && !o->crash) {
			o->crash = a;
		} else {
			fprintf(stderr,
			        "kmgr-repro: unknown or incomplete argument '%s' (see --help)\n",
			        a);
			return -1;
		}
	}
	if (!o->crash || (verify ? !o->rev : !o->good || !o->bad)) {
		fprintf(stderr, "kmgr-repro: %s (see --help)\n",
		        !o->crash ? "which crash file?"
		        : verify  ? "verify needs --rev"
		                  : "bisect needs --good and --bad");
		return -1;
	}
	return 0;
}

/* git -C repo ARGS...: its stdout (first line in line, or all of it in
 * *all when all is not NULL); 0 when git exited 0. */
static int git(const bstate_t *s, char *line, size_t len, char **all, const char *a1,
               const char *a2, const char *a3, const char *a4, const char *a5)
{
	char *argv[] = {"git",      "-C",       (char *)s->repo, (char *)a1, (char *)a2,
	                (char *)a3, (char *)a4, (char *)a5,      NULL};
	char *out = NULL;
	int rc = kr_spawn_guarded(argv, NULL, &out);

	if (line) {
		snprintf(line, len, "%s", out ? out : "");
		line[strcspn(line, "\n")] = 0;
	}
	if (all)
		*all = out;
	else
		free(out);
	return rc;
}

/* rev to a full commit id in id (41 bytes); -1 with one line if none. */
static int resolve(const bstate_t *s, const char *rev, char *id)
{
	char spec[300];

	snprintf(spec, sizeof(spec), "%s^{commit}", rev);
	if (rev[0] == '-' || git(s, id, 41, NULL, "rev-parse", "--verify", "-q", spec, NULL) ||
	    strlen(id) != 40) {
		fprintf(stderr, "kmgr-repro: %s: no such commit in %s\n", rev, s->repo);
		return -1;
	}
	return 0;
}

/* mkdir -p, without a shell. */
static int mkdirs(const char *path)
{
	char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s", path);
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		if (mkdir(p, 0755) && errno != EEXIST)
			return -1;
		*q = '/';
	}
	return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

static int cache_fail(bstate_t *s, const char *what, const char *path, int err)
{
	fprintf(stderr, "kmgr-repro: cannot %s %s in the bisect cache: %s\n", what, path,
	        strerror(err));
	s->cache_error = true;
	return -1;
}

/* An empty marker file; -1 (said) when it cannot be written. */
static int mark(bstate_t *s, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || close(fd))
		return cache_fail(s, "write", path, errno);
	return 0;
}

/* Nearly no room left where path is: a failed build there is the disk's
 * fault, not the commit's. */
static bool disk_full(const char *path)
{
	struct statvfs v;

	return !statvfs(path, &v) && (unsigned long long)v.f_bavail * v.f_frsize < (64ull << 20);
}

/* The commit's tree at <cache>/<id>/src, unpacked once (into a scratch
 * folder beside it, renamed when whole: an interrupted unpack leaves
 * nothing that looks done). */
static int unpack(bstate_t *s, const char *id, char *src, size_t len)
{
	char dir[PATH_MAX], part[PATH_MAX + 32], tar[PATH_MAX + 48];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/%s", s->cache, id);
	snprintf(src, len, "%s/src", dir);
	if (!stat(src, &st))
		return 0;
	if (mkdirs(dir))
		return cache_fail(s, "create", dir, errno);
	snprintf(part, sizeof(part), "%s/src.part-XXXXXX", dir);
	if (!mkdtemp(part))
		return cache_fail(s, "create", dir, errno);
	snprintf(tar, sizeof(tar), "%s.tar", part);
	char *untar[] = {"tar", "-x", "-f", tar, "-C", part, NULL};
	char out[32];
	int rc = git(s, NULL, 0, NULL, "archive", "--format=tar", "-o", tar, id) ||
	         kr_spawn_guarded(untar, NULL, NULL);

	(void)out;
	unlink(tar);
	if (!rc && rename(part, src))
		rc = -1;
	if (rc) {
		char *rm[] = {"rm", "-rf", "--", part, NULL};

		kr_spawn_guarded(rm, NULL, NULL);
		if (!kr_interrupted())
			return cache_fail(s, "unpack the tree of", id,
			                  disk_full(dir) ? ENOSPC : EIO);
		return -1;
	}
	return 0;
}

static int run_user(const char *cmd, const char *log)
{
	char *argv[] = {"/bin/sh", "-c", (char *)cmd, NULL};

	return kr_spawn_guarded(argv, log, NULL);
}

/* Builds commit id into out (<cache>/<id>/<preset>) unless it is there:
 * 0 built (or cached), 1 does not build (why says so), -1 interrupted or
 * the cache failed (said). */
static int build(bstate_t *s, const char *id, char *out, size_t outlen, char *why, size_t wlen)
{
	char src[PATH_MAX], done[PATH_MAX + 16], log[PATH_MAX + 16], bdir[PATH_MAX + 16];
	const char *user = getenv("KMGR_BISECT_BUILD");
	struct stat st;
	int rc;

	if (unpack(s, id, src, sizeof(src)))
		return -1;
	snprintf(out, outlen, "%s/%s/%s", s->cache, id, s->o.preset);
	snprintf(log, sizeof(log), "%s/build.log", out);
	snprintf(done, sizeof(done), "%s/.built", out);
	if (!stat(done, &st))
		return 0;
	snprintf(done, sizeof(done), "%s/.broken", out);
	if (!stat(done, &st)) {
		snprintf(why, wlen, "does not build (%s)", log);
		return 1;
	}
	if (mkdirs(out))
		return cache_fail(s, "create", out, errno);
	s->builds++;
	printf("  %.12s: building (%s)\n", id, log);
	fflush(stdout);
	setenv("KMGR_BISECT_SRC", src, 1);
	setenv("KMGR_BISECT_OUT", out, 1);
	snprintf(bdir, sizeof(bdir), "%s/build", out);
	if (user) {
		rc = run_user(user, log);
	} else {
		char *conf[] = {"cmake", "--preset", (char *)s->o.preset, "-S", src, "-B",
		                bdir,    NULL};
		char *make[] = {"cmake",      "--build",        bdir, "--target",
		                "kmgr-repro", s->in.stress_bin, NULL};

		if (s->in.kind != KR_STRESS)
			make[5] = NULL;
		rc = kr_spawn_guarded(conf, log, NULL);
		if (!rc)
			rc = kr_spawn_guarded(make, log, NULL);
	}
	if (kr_interrupted())
		return -1; /* neither built nor broken: the next run goes on */
	if (rc && disk_full(out))
		return cache_fail(s, "build", id, ENOSPC);
	snprintf(done, sizeof(done), "%s/%s", out, rc == 0 ? ".built" : ".broken");
	if (mark(s, done))
		return -1;
	snprintf(why, wlen, "does not build (%s)", log);
	return rc == 0 ? 0 : 1;
}

/* The commit's own sanitizer options (src/sanitizers/<tool>.options, as
 * cmake/sanitizer_env.cmake reads them) for the replays. */
static void sanitizer_env(const char *src)
{
	static const char *const tools[] = {"asan", "ubsan", "lsan", "tsan", "msan"};

	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		char path[PATH_MAX + 64], var[16], val[8192], line[1024];
		size_t n = 0;
		FILE *f;

		snprintf(path, sizeof(path), "%s/sanitizers/%s.options", src, tools[i]);
		snprintf(var, sizeof(var), "%s_OPTIONS", tools[i]);
		for (char *c = var; *c; c++)
			*c = (char)(*c >= 'a' && *c <= 'z' ? *c - 32 : *c);
		if (!(f = fopen(path, "r")))
			continue;
		val[0] = 0;
		while (fgets(line, sizeof(line), f)) {
			char *hash = strchr(line, '#'), *at, *b = line, *e;

			if (hash)
				*hash = 0;
			while (*b == ' ' || *b == '\t')
				b++;
			e = b + strlen(b);
			while (e > b && strchr(" \t\r\n", e[-1]))
				*--e = 0;
			if (!*b)
				continue;
			at = strstr(b, "@SRC@");
			if (at)
				*at = 0;
			n += (size_t)snprintf(val + n, sizeof(val) - n, "%s%s%s%s", n ? ":" : "", b,
			                      at ? src : "", at ? at + 5 : "");
			if (n >= sizeof(val))
				break;
		}
		fclose(f);
		if (n < sizeof(val))
			setenv(var, val, 1);
	}
}

/* Replays the crash --times N with the build in out: the verdict. */
static void replay(bstate_t *s, const char *src, const char *out, verdict_t *vd)
{
	char tool[PATH_MAX + 64], stress[PATH_MAX + 128], first[512] = "", tmp[PATH_MAX];
	kr_run_opts_t ro = {.timeout_s = s->o.timeout_s};
	bool odd = false;

	snprintf(tool, sizeof(tool), "%s/build/tools/kmgr-repro/kmgr-repro", out);
	snprintf(stress, sizeof(stress), "%s/build/stress/%s", out, s->in.stress_bin);
	const char *bin = s->in.kind == KR_STRESS ? stress : tool;

	if (access(bin, X_OK)) {
		snprintf(vd->why, sizeof(vd->why), "that build has no %s",
		         s->in.kind == KR_STRESS ? s->in.stress_bin : "kmgr-repro");
		return;
	}
	sanitizer_env(src);
	for (unsigned i = 0; i < s->o.times && !kr_interrupted(); i++) {
		char *run[] = {tool, "__run", "--target", s->in.target, s->crash, NULL};
		char *srun[] = {stress, "--replay", s->crash, "--quiet", "--repro-dir", tmp, NULL};
		kr_outcome_t oc;
		int rc;

		snprintf(tmp, sizeof(tmp), "%s/kmgr-bisect-XXXXXX", kr_tmpdir());
		if (s->in.kind == KR_STRESS && !mkdtemp(tmp)) {
			snprintf(vd->why, sizeof(vd->why), "cannot make a scratch folder in %s: %s",
			         kr_tmpdir(), strerror(errno));
			return;
		}
		rc = kr_run_argv(s->in.kind == KR_STRESS ? srun : run, &ro, &oc);
		if (s->in.kind == KR_STRESS)
			kr_remove_flat_dir(tmp);
		s->tests++;
		if (rc || oc.usage) {
			snprintf(vd->why, sizeof(vd->why), "its %s refused the file: %.200s",
			         s->in.kind == KR_STRESS ? s->in.stress_bin : "kmgr-repro",
			         rc ? "could not run" : oc.report);
			vd->why[strcspn(vd->why, "\n")] = 0;
			kr_outcome_free(&oc);
			return;
		}
		vd->runs++;
		if (oc.failed && !first[0])
			snprintf(first, sizeof(first), "%s", oc.signature);
		if (oc.failed && !s->state[0]) /* the first answer names the state */
			snprintf(s->state, sizeof(s->state), "%s", oc.signature);
		if (oc.failed && s->state[0] && !strcmp(oc.signature, s->state))
			vd->same++;
		else if (oc.failed)
			odd = true;
		kr_outcome_free(&oc);
	}
	if (kr_interrupted())
		return;
	if (vd->same) {
		vd->kind = V_BAD;
		snprintf(vd->why, sizeof(vd->why), "%s", s->state);
	} else if (!odd) {
		vd->kind = V_GOOD;
	} else {
		snprintf(vd->why, sizeof(vd->why), "fails with another crash state: %s", first);
	}
}

/* Builds and tests one commit; -1: interrupted or the cache failed. */
static int check(bstate_t *s, const char *id, verdict_t *vd)
{
	char out[PATH_MAX], src[PATH_MAX + 8];
	const char *user = getenv("KMGR_BISECT_TEST");
	int rc;

	memset(vd, 0, sizeof(*vd));
	vd->kind = V_SKIP;
	rc = build(s, id, out, sizeof(out), vd->why, sizeof(vd->why));
	if (rc < 0)
		return -1;
	if (rc == 0 && user) {
		char times[16];

		snprintf(times, sizeof(times), "%u", s->o.times);
		setenv("KMGR_BISECT_OUT", out, 1);
		setenv("KMGR_BISECT_TIMES", times, 1);
		rc = run_user(user, NULL);
		s->tests++;
		vd->kind = rc == 0 ? V_GOOD : rc == 1 ? V_BAD : V_SKIP;
		snprintf(vd->why, sizeof(vd->why), "%s",
		         rc == 0 || rc == 1 ? "" : "KMGR_BISECT_TEST failed");
	} else if (rc == 0) {
		snprintf(src, sizeof(src), "%s/%s/src", s->cache, id);
		replay(s, src, out, vd);
	}
	if (kr_interrupted())
		return -1;
	if (vd->kind == V_BAD && !user)
		printf("  %.12s: bad (%u/%u): %s\n", id, vd->same, vd->runs, vd->why);
	else
		printf("  %.12s: %s%s%s\n", id,
		       vd->kind == V_GOOD  ? "good"
		       : vd->kind == V_BAD ? "bad"
		                           : "skip: ",
		       vd->kind == V_SKIP ? vd->why : "",
		       vd->kind == V_GOOD && !user ? " (no failure)" : "");
	fflush(stdout);
	return 0;
}

/* The preset a folder of the crash's path names, else asan. */
static const char *crash_preset(const char *path, const char **from)
{
	const char *best = NULL, *at_best = NULL;

	for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++) {
		size_t n = strlen(presets[i]);

		for (const char *p = strstr(path, presets[i]); p; p = strstr(p + 1, presets[i]))
			if (p > path && p[-1] == '/' && p[n] == '/' && (!at_best || p > at_best))
				best = presets[i], at_best = p;
	}
	*from = best ? "the crash's path" : "the default";
	return best ? best : "asan";
}

static int setup(bstate_t *s)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME"), *from = "--preset";
	char line[PATH_MAX];

	s->t0 = kr_now_s();
	if (!realpath(s->o.crash, s->crash)) {
		fprintf(stderr, "kmgr-repro: %s: %s\n", s->o.crash, strerror(errno));
		return -1;
	}
	/* a replaced test may take any file; the default replay needs its target */
	if (!getenv("KMGR_BISECT_TEST") && kr_input_load(&s->in, s->crash, s->o.target))
		return -1;
	if (getenv("KMGR_BISECT_TEST"))
		snprintf(s->in.target, sizeof(s->in.target), "%s", s->o.target ? s->o.target : "");
	snprintf(s->repo, sizeof(s->repo), "%s", s->o.repo ? s->o.repo : ".");
	if (git(s, line, sizeof(line), NULL, "rev-parse", "--show-toplevel", NULL, NULL, NULL) ||
	    !line[0]) {
		fprintf(stderr, "kmgr-repro: %s is not in a git repository (--repo)\n", s->repo);
		return -1;
	}
	snprintf(s->repo, sizeof(s->repo), "%s", line);
	if (!s->o.preset)
		s->o.preset = crash_preset(s->crash, &from);
	if (xdg && xdg[0] == '/')
		snprintf(s->cache, sizeof(s->cache), "%s/kmgr-fuzz/bisect", xdg);
	else if (home && home[0] == '/')
		snprintf(s->cache, sizeof(s->cache), "%s/.cache/kmgr-fuzz/bisect", home);
	else
		snprintf(s->cache, sizeof(s->cache), "%s/kmgr-fuzz-bisect-%d", kr_tmpdir(),
		         (int)getuid());
	if (mkdirs(s->cache)) {
		fprintf(stderr, "kmgr-repro: cannot create the bisect cache %s: %s\n", s->cache,
		        strerror(errno));
		return -1;
	}
	setenv("KMGR_BISECT_CRASH", s->crash, 1);
	setenv("KMGR_BISECT_TARGET", s->in.kind == KR_STRESS ? "" : s->in.target, 1);
	setenv("KMGR_BISECT_PRESET", s->o.preset, 1);
	printf("crash %s: %s %s, preset %s (from %s)\n", s->crash,
	       s->in.kind == KR_STRESS ? "stress repro file of" : "target",
	       s->in.kind == KR_STRESS ? s->in.stress_bin
	       : s->in.target[0]       ? s->in.target
	                               : "(KMGR_BISECT_TEST's)",
	       s->o.preset, from);
	fflush(stdout);
	return 0;
}

static int finish(bstate_t *s, int rc)
{
	printf("%u build(s), %u test run(s), %.1f s\n", s->builds, s->tests, kr_now_s() - s->t0);
	kr_input_free(&s->in);
	if (s->cache_error)
		return KR_EXIT_USAGE;
	return rc;
}

/* The crash state this tool's own build gives, as verify's reference. */
static void own_state(bstate_t *s)
{
	kr_run_opts_t ro = {.timeout_s = s->o.timeout_s};
	kr_outcome_t oc;

	if (!kr_run_child(&s->in, &ro, &oc) && oc.failed)
		snprintf(s->state, sizeof(s->state), "%s", oc.signature);
	kr_outcome_free(&oc);
}

int kr_cmd_verify(int argc, char **argv)
{
	static bstate_t s;
	char id[48];
	verdict_t vd;
	int rc = parse(argc, argv, true, &s.o);

	if (rc)
		return rc > 0 ? KR_EXIT_OK : KR_EXIT_USAGE;
	if (setup(&s) || resolve(&s, s.o.rev, id))
		return finish(&s, KR_EXIT_USAGE);
	if (!getenv("KMGR_BISECT_TEST"))
		own_state(&s);
	if (s.state[0])
		printf("crash state (this build): %s\n", s.state);
	if (check(&s, id, &vd))
		return finish(&s, KR_EXIT_USAGE);
	if (vd.kind == V_GOOD)
		printf("%s: fixed (reproduced 0/%u)\n", s.o.rev, vd.runs ? vd.runs : s.o.times);
	else if (vd.kind == V_BAD && vd.runs)
		printf("%s: still reproduces %u/%u: %s\n", s.o.rev, vd.same, vd.runs, vd.why);
	else if (vd.kind == V_BAD)
		printf("%s: still reproduces\n", s.o.rev);
	else
		printf("%s: no answer: %s\n", s.o.rev, vd.why);
	return finish(&s, vd.kind == V_GOOD  ? KR_EXIT_OK
	                  : vd.kind == V_BAD ? KR_EXIT_NO
	                                     : KR_EXIT_USAGE);
}

/* Binary search over c[0..n-1] (oldest first; c[n-1] is bad, the good
 * commit comes before c[0]).  verdict[i]: -1 unknown, else V_*.  Returns
 * the index of the first bad commit, -1 when skipped commits hide it
 * (then *lo_out, *hi_out bound them), -2 when interrupted or the cache
 * failed. */
static int search(bstate_t *s, char **c, signed char *verdict, int n, int *lo_out, int *hi_out)
{
	int lo = -1, hi = n - 1; /* lo good (or the good rev), hi bad */

	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2, pick = -1;
		verdict_t vd;

		/* the untested commit nearest the middle */
		for (int d = 0; d < hi - lo && pick < 0; d++) {
			if (mid + d < hi && verdict[mid + d] < 0)
				pick = mid + d;
			else if (mid - d > lo && verdict[mid - d] < 0)
				pick = mid - d;
		}
		if (pick < 0)
			break; /* only skipped commits left in (lo, hi) */
		if (check(s, c[pick], &vd))
			return -2;
		verdict[pick] = (signed char)vd.kind;
		if (vd.kind == V_GOOD)
			lo = pick;
		else if (vd.kind == V_BAD)
			hi = pick;
	}
	*lo_out = lo;
	*hi_out = hi;
	return hi - lo == 1 ? hi : -1;
}

/* The commits after good up to bad, oldest first, every one of them (a
 * range is never cut): *n of them in *c (one malloc'd block). */
static int commits(bstate_t *s, const char *good, const char *bad, char ***c, int *n)
{
	char range[100], *all = NULL, *p;
	size_t cap = 0;

	snprintf(range, sizeof(range), "%s..%s", good, bad);
	*c = NULL;
	*n = 0;
	if (git(s, NULL, 0, &all, "rev-list", "--reverse", "--ancestry-path", range, NULL) ||
	    !all) {
		free(all);
		fprintf(stderr, "kmgr-repro: git rev-list %s failed in %s\n", range, s->repo);
		return -1;
	}
	for (p = all; *p; p++)
		cap += *p == '\n';
	*c = malloc((cap + 1) * sizeof(**c));
	if (!*c) {
		free(all);
		fprintf(stderr, "kmgr-repro: out of memory for %zu commits\n", cap);
		return -1;
	}
	for (p = strtok(all, "\n"); p; p = strtok(NULL, "\n"))
		(*c)[(*n)++] = p;
	if (!*n)
		free(all);
	return 0;
}

int kr_cmd_bisect(int argc, char **argv)
{
	static bstate_t s;
	char good[48], bad[48], line[400], **c = NULL;
	signed char *verdict = NULL;
	verdict_t vd;
	int n = 0, first, lo, hi, rc = parse(argc, argv, false, &s.o);

	if (rc)
		return rc > 0 ? KR_EXIT_OK : KR_EXIT_USAGE;
	if (setup(&s) || resolve(&s, s.o.good, good) || resolve(&s, s.o.bad, bad))
		return finish(&s, KR_EXIT_USAGE);
	if (git(&s, NULL, 0, NULL, "merge-base", "--is-ancestor", good, bad, NULL)) {
		fprintf(stderr, "kmgr-repro: %s is not an ancestor of %s\n", s.o.good, s.o.bad);
		return finish(&s, KR_EXIT_USAGE);
	}
	if (commits(&s, good, bad, &c, &n))
		return finish(&s, KR_EXIT_USAGE);
	if (n == 0) {
		fprintf(stderr, "kmgr-repro: no commit between %s and %s\n", s.o.good, s.o.bad);
		return finish(&s, KR_EXIT_USAGE);
	}
	printf("bisect: %d commit(s) after %s up to %s, %u replay(s) each\n", n, s.o.good, s.o.bad,
	       s.o.times);
	fflush(stdout);
	rc = KR_EXIT_USAGE;
	/* the ends first: --bad names the crash state, --good must not have it */
	if (check(&s, bad, &vd))
		goto out;
	if (vd.kind != V_BAD) {
		fprintf(stderr, "kmgr-repro: the crash does not reproduce at --bad %s%s%s\n",
		        s.o.bad, vd.kind == V_SKIP ? ": " : "", vd.kind == V_SKIP ? vd.why : "");
		goto out;
	}
	if (check(&s, good, &vd))
		goto out;
	if (vd.kind != V_GOOD) {
		fprintf(stderr, "kmgr-repro: %s at --good %s%s%s\n",
		        vd.kind == V_BAD ? "the crash reproduces" : "cannot test", s.o.good,
		        vd.kind == V_SKIP ? ": " : "", vd.kind == V_SKIP ? vd.why : "");
		goto out;
	}
	verdict = malloc((size_t)n);
	if (!verdict)
		goto out;
	memset(verdict, -1, (size_t)n);
	verdict[n - 1] = V_BAD;
	first = search(&s, c, verdict, n, &lo, &hi);
	if (first == -2)
		goto out;
	if (first >= 0) {
		git(&s, line, sizeof(line), NULL, "log", "-1", "--format=%h %s", c[first], NULL);
		printf("first bad commit: %s\n  %s\n", c[first], line);
		rc = KR_EXIT_OK;
	} else {
		printf("the first bad commit is one of %d skipped commit(s) after %.12s and up to "
		       "%.12s\n",
		       hi - lo - 1, lo >= 0 ? c[lo] : good, c[hi]);
		rc = KR_EXIT_NO;
	}
out:
	free(verdict);
	if (c && n)
		free(c[0]);
	free(c);
	return finish(&s, rc);
}
