/*
 * bisect.c - which commit made a crash file fail: `kmgr-repro bisect CRASH
 * --good REV --bad REV`, and `verify CRASH --rev REV` for one commit.
 *
 * Each commit is checked out in a scratch git worktree (the repository's
 * own work tree is never touched), built once into a cache keyed by its
 * commit id (a second bisect over the same range builds nothing), and the
 * crash file is replayed with that commit's own kmgr-repro --times N.  A
 * commit is bad when the crash reproduced at least once in N (a race that
 * shows 3 times in 10 is still there), good when it never did, skipped
 * when it does not build (as `git bisect skip`).  The search is binary over
 * the commits on the ancestry path from good to bad; skipped ones are
 * stepped over, and when only skipped commits are left between the last
 * good and the first bad one, all of them are named.
 *
 * The build and the test are shell commands that can be replaced
 * (KMGR_BISECT_BUILD, KMGR_BISECT_TEST), so that the search itself is
 * tested on a small repository of its own; they see KMGR_BISECT_SRC (the
 * commit's tree), KMGR_BISECT_OUT (its build folder), KMGR_BISECT_CRASH,
 * KMGR_BISECT_TARGET, KMGR_BISECT_TIMES and KMGR_BISECT_PRESET.  The test's
 * exit status: 0 good, 1 bad.  Interrupted, the scratch worktree is
 * removed and the tool exits 128+signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "repro.h"

#define MAX_COMMITS 4096

static const char bisect_help[] =
    "usage: kmgr-repro bisect CRASH --good REV --bad REV [--target NAME] [--times N]\n"
    "                         [--preset P] [--repo DIR]\n"
    "       kmgr-repro verify CRASH --rev REV [--target NAME] [--times N] [--preset P] [--repo "
    "DIR]\n"
    "bisect: the first commit between REV good and REV bad whose build replays CRASH\n"
    "(bad: it reproduced at least once in --times N, default 10).  Each commit is built\n"
    "once, in a scratch worktree, into ~/.cache/kmgr-fuzz/bisect/<commit>/<preset>\n"
    "(--preset, default asan); a commit that does not build is skipped.  verify: the\n"
    "answer for one commit.  --repo: the git repository (default: the one this tool\n"
    "was built from).  KMGR_BISECT_BUILD / KMGR_BISECT_TEST replace the build and the\n"
    "test (docs/reproducer.md).  Exit: 0 found (verify: good), 1 not found (verify:\n"
    "bad), 2 bad usage.\n";

typedef struct bopts {
	const char *crash, *good, *bad, *rev, *target, *preset, *repo;
	unsigned times;
} bopts_t;

typedef struct bstate {
	bopts_t o;
	char cache[PATH_MAX], scratch[PATH_MAX], crash[PATH_MAX];
	unsigned builds;
} bstate_t;

static bstate_t *g_state; /* for the interrupt path */

/* sh -c CMD in its own process group, dying with this tool; SIGINT and
 * friends kill it (kr_signals_install's handler knows the group).  Output
 * to out (NULL: /dev/null).  The exit status, or -1. */
static int run_sh(const char *cmd, const char *out)
{
	pid_t self = getpid(), pid;
	int st = 0;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != self)
			_exit(127);
		int fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	kr_child_running(pid);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	kr_child_running(0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The first line CMD prints (trailing newline removed); -1 when it fails. */
static int sh_line(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");
	int rc;

	buf[0] = 0;
	if (!p)
		return -1;
	if (!fgets(buf, (int)len, p))
		buf[0] = 0;
	rc = pclose(p);
	buf[strcspn(buf, "\n")] = 0;
	return rc == 0 && buf[0] ? 0 : -1;
}

static int parse(int argc, char **argv, bool verify, bopts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->times = 10;
	o->preset = "asan";
	o->repo = KREPRO_SRC_DIR;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		const char **slot = !strcmp(a, "--good")     ? &o->good
		                    : !strcmp(a, "--bad")    ? &o->bad
		                    : !strcmp(a, "--rev")    ? &o->rev
		                    : !strcmp(a, "--target") ? &o->target
		                    : !strcmp(a, "--preset") ? &o->preset
		                    : !strcmp(a, "--repo")   ? &o->repo
		                                             : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(bisect_help, stdout);
			return 1;
		}
		if (!strcmp(a, "--times")) {
			char *end;
			unsigned long n = v ? strtoul(v, &end, 10) : 0;

			if (!v || *end || n == 0 || n > 1000) {
				fprintf(stderr,
				        "kmgr-repro: --times needs a number from 1 to 1000\n");
				return -1;
			}
			o->times = (unsigned)n;
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

/* rev to a full commit id in id (41 bytes); -1 with one line if none. */
static int resolve(const bstate_t *s, const char *rev, char *id)
{
	char cmd[PATH_MAX + 256];

	snprintf(cmd, sizeof(cmd), "git -C '%s' rev-parse --verify -q '%s^{commit}' 2>/dev/null",
	         s->o.repo, rev);
	if (strchr(rev, '\'') || sh_line(cmd, id, 41) || strlen(id) != 40) {
		fprintf(stderr, "kmgr-repro: %s: no such commit in %s\n", rev, s->o.repo);
		return -1;
	}
	return 0;
}

static void remove_scratch(bstate_t *s)
{
	char cmd[2 * PATH_MAX + 64];

	if (!s->scratch[0])
		return;
	snprintf(cmd, sizeof(cmd), "git -C '%s' worktree remove --force '%s/src'", s->o.repo,
	         s->scratch);
	run_sh(cmd, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", s->scratch);
	run_sh(cmd, NULL);
	s->scratch[0] = 0;
}

/* Builds commit id into its cache folder unless it is there: 0 built (or
 * cached), 1 does not build. */
static int build(bstate_t *s, const char *id, char *out, size_t outlen)
{
	char done[PATH_MAX + 16], cmd[4 * PATH_MAX], log[PATH_MAX + 16];
	const char *user = getenv("KMGR_BISECT_BUILD");
	struct stat st;
	int rc;

	snprintf(out, outlen, "%s/%s/%s", s->cache, id, s->o.preset);
	snprintf(done, sizeof(done), "%s/.built", out);
	if (!stat(done, &st))
		return 0;
	snprintf(done, sizeof(done), "%s/.broken", out);
	if (!stat(done, &st))
		return 1;
	snprintf(
	    cmd, sizeof(cmd),
	    "mkdir -p '%s' && git -C '%s' worktree add --detach -f '%s/src' %s >/dev/null 2>&1",
	    out, s->o.repo, s->scratch, id);
	if (run_sh(cmd, NULL) != 0)
		return 1;
	s->builds++;
	snprintf(log, sizeof(log), "%s/build.log", out);
	snprintf(cmd, sizeof(cmd), "%s/src", s->scratch);
	setenv("KMGR_BISECT_SRC", cmd, 1);
	setenv("KMGR_BISECT_OUT", out, 1);
	snprintf(cmd, sizeof(cmd), "%s",
	         user ? user
	              : "cmake --preset \"$KMGR_BISECT_PRESET\" -S \"$KMGR_BISECT_SRC\" -B "
	                "\"$KMGR_BISECT_OUT/build\" && cmake --build \"$KMGR_BISECT_OUT/build\" "
	                "--target kmgr-repro");
	rc = run_sh(cmd, log);
	remove_scratch(s);
	if (kr_interrupted())
		return 1;
	snprintf(done, sizeof(done), "%s/%s", out, rc == 0 ? ".built" : ".broken");
	fclose(fopen(done, "w"));
	return rc == 0 ? 0 : 1;
}

/* 0 good, 1 bad, 2 skipped (does not build). */
static int check(bstate_t *s, const char *id)
{
	char out[PATH_MAX], cmd[PATH_MAX + 512], times[16];
	const char *user = getenv("KMGR_BISECT_TEST");
	int rc;

	if (snprintf(s->scratch, sizeof(s->scratch), "%s/kmgr-bisect-XXXXXX", kr_tmpdir()) < 0 ||
	    !mkdtemp(s->scratch))
		return 2;
	rc = build(s, id, out, sizeof(out));
	remove_scratch(s);
	if (rc)
		return 2;
	setenv("KMGR_BISECT_OUT", out, 1);
	snprintf(times, sizeof(times), "%u", s->o.times);
	setenv("KMGR_BISECT_TIMES", times, 1);
	snprintf(cmd, sizeof(cmd), "%s",
	         user ? user
	              : "\"$KMGR_BISECT_OUT/build/tools/kmgr-repro/kmgr-repro\" replay "
	                "\"$KMGR_BISECT_CRASH\" ${KMGR_BISECT_TARGET:+--target "
	                "\"$KMGR_BISECT_TARGET\"} --times \"$KMGR_BISECT_TIMES\" | tail -n 1 | "
	                "grep -q '^reproduced 0/' && exit 0; exit 1");
	rc = run_sh(cmd, NULL);
	printf("  %.12s: %s\n", id, rc == 0 ? "good" : rc == 1 ? "bad" : "test failed: skipped");
	fflush(stdout);
	return rc == 0 ? 0 : rc == 1 ? 1 : 2;
}

static int setup(bstate_t *s)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char cmd[PATH_MAX + 64], line[64];

	if (!realpath(s->o.crash, s->crash)) {
		fprintf(stderr, "kmgr-repro: %s: %s\n", s->o.crash, strerror(errno));
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "git -C '%s' rev-parse --git-dir 2>/dev/null", s->o.repo);
	if (strchr(s->o.repo, '\'') || sh_line(cmd, line, sizeof(line))) {
		fprintf(stderr, "kmgr-repro: %s is not a git repository (--repo)\n", s->o.repo);
		return -1;
	}
	snprintf(s->cache, sizeof(s->cache), "%s/kmgr-fuzz/bisect",
	         xdg && xdg[0] == '/' ? xdg
	         : home               ? home
	                              : "/tmp");
	if (!(xdg && xdg[0] == '/') && home)
		snprintf(s->cache, sizeof(s->cache), "%s/.cache/kmgr-fuzz/bisect", home);
	setenv("KMGR_BISECT_CRASH", s->crash, 1);
	setenv("KMGR_BISECT_TARGET", s->o.target ? s->o.target : "", 1);
	setenv("KMGR_BISECT_PRESET", s->o.preset, 1);
	g_state = s;
	return 0;
}

static int cleanup_exit(bstate_t *s, int rc)
{
	remove_scratch(s);
	return rc;
}

int kr_cmd_verify(int argc, char **argv)
{
	static bstate_t s;
	char id[48];
	int rc = parse(argc, argv, true, &s.o);

	if (rc)
		return rc > 0 ? KR_EXIT_OK : KR_EXIT_USAGE;
	if (setup(&s) || resolve(&s, s.o.rev, id))
		return KR_EXIT_USAGE;
	rc = check(&s, id);
	printf("%s is %s (%u build(s))\n", s.o.rev,
	       rc == 0   ? "good"
	       : rc == 1 ? "bad"
	                 : "unbuildable",
	       s.builds);
	return cleanup_exit(&s, rc == 0 ? KR_EXIT_OK : rc == 1 ? KR_EXIT_NO : KR_EXIT_USAGE);
}

/* Binary search over c[0..n-1] (oldest first; c[n-1] is bad, the good
 * commit comes before c[0]).  verdict[i]: -1 unknown, 0 good, 1 bad, 2
 * skipped.  Returns the index of the first bad commit, or -1 when
 * skipped commits hide it (then *lo_out, *hi_out bound them). */
static int search(bstate_t *s, char (*c)[48], int n, int *lo_out, int *hi_out)
{
	static signed char verdict[MAX_COMMITS];
	int lo = -1, hi = n - 1; /* lo good (or the good rev), hi bad */

	memset(verdict, -1, sizeof(verdict));
	verdict[n - 1] = 1;
	while (hi - lo > 1 && !kr_interrupted()) {
		int mid = lo + (hi - lo) / 2, pick = -1;

		/* the untested commit nearest the middle */
		for (int d = 0; d < hi - lo && pick < 0; d++) {
			if (mid + d < hi && verdict[mid + d] < 0)
				pick = mid + d;
			else if (mid - d > lo && verdict[mid - d] < 0)
				pick = mid - d;
		}
		if (pick < 0)
			break; /* only skipped commits left in (lo, hi) */
		verdict[pick] = (signed char)check(s, c[pick]);
		if (verdict[pick] == 0)
			lo = pick;
		else if (verdict[pick] == 1)
			hi = pick;
	}
	*lo_out = lo;
	*hi_out = hi;
	return hi - lo == 1 ? hi : -1;
}

int kr_cmd_bisect(int argc, char **argv)
{
	static bstate_t s;
	static char c[MAX_COMMITS][48];
	char good[48], bad[48], cmd[PATH_MAX + 256];
	int n = 0, first, lo, hi, rc = parse(argc, argv, false, &s.o);
	FILE *p;

	if (rc)
		return rc > 0 ? KR_EXIT_OK : KR_EXIT_USAGE;
	if (setup(&s) || resolve(&s, s.o.good, good) || resolve(&s, s.o.bad, bad))
		return KR_EXIT_USAGE;
	snprintf(cmd, sizeof(cmd), "git -C '%s' merge-base --is-ancestor %s %s", s.o.repo, good,
	         bad);
	if (run_sh(cmd, NULL) != 0) {
		fprintf(stderr, "kmgr-repro: %s is not an ancestor of %s\n", s.o.good, s.o.bad);
		return KR_EXIT_USAGE;
	}
	snprintf(cmd, sizeof(cmd), "git -C '%s' rev-list --reverse --ancestry-path %s..%s",
	         s.o.repo, good, bad);
	p = popen(cmd, "r");
	while (p && n < MAX_COMMITS && fgets(c[n], sizeof(c[n]), p))
		c[n][strcspn(c[n], "\n")] = 0, n++;
	if (p)
		pclose(p);
	if (n == 0) {
		fprintf(stderr, "kmgr-repro: no commit between %s and %s\n", s.o.good, s.o.bad);
		return KR_EXIT_USAGE;
	}
	printf("bisect %s: %d commit(s) after %s up to %s, %u replay(s) each\n", s.crash, n,
	       s.o.good, s.o.bad, s.o.times);
	fflush(stdout);
	first = search(&s, c, n, &lo, &hi);
	if (kr_interrupted())
		return cleanup_exit(&s, KR_EXIT_NO);
	if (first >= 0) {
		snprintf(cmd, sizeof(cmd), "git -C '%s' log -1 --format='%%h %%s' %s", s.o.repo,
		         c[first]);
		printf("first bad commit: %s (%u build(s))\n", c[first], s.builds);
		fflush(stdout);
		run_sh(cmd, "/dev/stdout");
		return cleanup_exit(&s, KR_EXIT_OK);
	}
	printf("the first bad commit is one of %d that do not build, after %.12s and up to "
	       "%.12s (%u build(s))\n",
	       hi - lo - 1, lo >= 0 ? c[lo] : good, c[hi], s.builds);
	return cleanup_exit(&s, KR_EXIT_NO);
}
