/*
 * child.c - running a finding that may crash: in a child process (this
 * tool's hidden `__run`, or a stress binary's --replay) in its own process
 * group, with the sanitizer options of sanitizers/<tool>.options (abort on
 * error) unless the caller set them, stderr captured, and a time limit
 * after which the group is killed and the signature is "timeout".
 *
 * Interrupted (SIGINT, SIGTERM, SIGHUP to this tool): the handler passes
 * SIGKILL to the running child's group at once and records the signal; the
 * command in progress sees kr_interrupted(), stops, removes its scratch
 * files, says what it has and exits 128+signal.  The child also dies with
 * this tool (PR_SET_PDEATHSIG), so even a SIGKILL here leaves nothing
 * running.  Scratch files go under $TMPDIR (default /tmp).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kr_supp.h"
#include "ksignal.h"
#include "repro.h"
#include "repro_config.h"
#include "sched/ksched.h"

#define REPORT_CAP (1u << 20)

extern char **environ;

const char *kr_self_path(void)
{
	static char path[PATH_MAX];
	ssize_t n;

	if (path[0])
		return path;
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0)
		return "kmgr-repro";
	path[n] = 0;
	return path;
}

double kr_now_s(void)
{
	return (double)ks_wall_ns() / 1e9;
}

/* The running child's process group (0: none) and the signal that stopped
 * this tool (0: none); written by the handler. */
static volatile sig_atomic_t running_child, running_guard, stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
	if (running_child > 0)
		kill(-(pid_t)running_child, SIGKILL);
	if (running_guard > 0) /* it kills every descendant, then itself */
		kill((pid_t)running_guard, SIGUSR1);
}

void kr_signals_install(void)
{
	ksignal_on_stop(on_stop);
}

void kr_child_running(int pid)
{
	running_child = pid;
}

int kr_interrupted(void)
{
	return stop_signal;
}

const char *kr_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

/* A suppression file's text as a memfd this process keeps open and its
 * children inherit: "/proc/self/fd/N" names it in any of them.  NULL when
 * it cannot be made (the child then runs without the suppressions). */
static const char *supp_path(const char *tool)
{
	static const struct {
		const char *tool, *text;
	} supp[] = {{"asan", kr_supp_asan},
	            {"ubsan", kr_supp_ubsan},
	            {"lsan", kr_supp_lsan},
	            {"tsan", kr_supp_tsan}};
	static char paths[4][32];

	for (size_t i = 0; i < sizeof(supp) / sizeof(supp[0]); i++) {
		size_t n = strlen(supp[i].text);
		int fd;

		if (strcmp(tool, supp[i].tool))
			continue;
		if (paths[i][0])
			return paths[i];
		fd = memfd_create(supp[i].tool, 0); /* inherited: no MFD_CLOEXEC */
		if (fd < 0 || write(fd, supp[i].text, n) != (ssize_t)n) {
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		snprintf(paths[i], sizeof(paths[i]), "/proc/self/fd/%d", fd);
		return paths[i];
	}
	return NULL;
}

/* opts with each "@SUPP_tool@" replaced by supp_path(tool). */
static void expand_supp(const char *opts, char *out, size_t len)
{
	size_t n = 0;

	while (*opts && n + 1 < len) {
		char tool[8];
		const char *end, *path;

		if (strncmp(opts, "@SUPP_", 6) || !(end = strchr(opts + 6, '@')) ||
		    end - opts - 6 >= (long)sizeof(tool)) {
			out[n++] = *opts++;
			continue;
		}
		snprintf(tool, sizeof(tool), "%.*s", (int)(end - opts - 6), opts + 6);
		path = supp_path(tool);
		n += (size_t)snprintf(out + n, len - n, "%s", path ? path : "/dev/null");
		opts = end + 1;
	}
	out[n < len ? n : len - 1] = 0;
}

static void set_default_env(void)
{
	static const char *const opts[][2] = {
	    {"ASAN_OPTIONS", KREPRO_ASAN_OPTIONS}, {"UBSAN_OPTIONS", KREPRO_UBSAN_OPTIONS},
	    {"LSAN_OPTIONS", KREPRO_LSAN_OPTIONS}, {"TSAN_OPTIONS", KREPRO_TSAN_OPTIONS},
	    {"MSAN_OPTIONS", KREPRO_MSAN_OPTIONS},
	};

	const char *asan;
	char buf[4096];

	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		if (getenv(opts[i][0]))
			continue; /* the caller's own */
		expand_supp(opts[i][1], buf, sizeof(buf));
		setenv(opts[i][0], buf, 0);
	}
	/* an abort() (library assertion, oracle) gets a stack to sign with */
	asan = getenv("ASAN_OPTIONS");
	if (asan && !strstr(asan, "handle_abort")) {
		snprintf(buf, sizeof(buf), "%s%shandle_abort=1", asan, asan[0] ? ":" : "");
		setenv("ASAN_OPTIONS", buf, 1);
	}
}

static bool executable(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

int kr_find_stress(const char *name, char *path, size_t len)
{
	char dir[PATH_MAX];
	const char *env = getenv("PATH");
	char *slash;

	snprintf(dir, sizeof(dir), "%s", kr_self_path());
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = 0;
		snprintf(path, len, "%s/%s", dir, name);
		if (executable(path))
			return 0;
	}
	/* a build tree: <bin>/tools/kmgr-repro/kmgr-repro and <bin>/stress/ */
	if (slash && (slash = strrchr(dir, '/')) && (*slash = 0, slash = strrchr(dir, '/'))) {
		*slash = 0;
		snprintf(path, len, "%s/stress/%s", dir, name);
		if (executable(path))
			return 0;
	}
	while (env && *env) {
		const char *end = strchr(env, ':');
		size_t n = end ? (size_t)(end - env) : strlen(env);

		snprintf(path, len, "%.*s/%s", (int)n, env, name);
		if (n && executable(path))
			return 0;
		env = end ? end + 1 : NULL;
	}
	return -1;
}

/*
 * What a child writes, within REPORT_CAP: its first CAP_HEAD bytes and its
 * last CAP_TAIL, with one line saying how much is not shown between them.
 * A sanitizer report comes at the end, after whatever the run printed; kept
 * from the front only, a long run's report was cut off and signed as
 * "exit 1".  The tail is a ring until the child is done.
 */
#define CAP_HEAD (REPORT_CAP / 2)
#define CAP_TAIL (REPORT_CAP - CAP_HEAD - 128)

typedef struct capture {
	char *buf;       /* REPORT_CAP + 1 bytes */
	size_t len;      /* bytes in buf */
	size_t total;    /* bytes the child wrote */
	size_t ring_pos; /* the oldest tail byte, once the tail wrapped */
} capture_t;

static void capture_add(capture_t *c, const char *p, size_t n)
{
	c->total += n;
	for (; n && c->len < CAP_HEAD + CAP_TAIL; n--)
		c->buf[c->len++] = *p++;
	for (; n; n--) {
		c->buf[CAP_HEAD + c->ring_pos] = *p++;
		c->ring_pos = (c->ring_pos + 1) % CAP_TAIL;
	}
}

/* The tail in order, after the line that counts what was dropped. */
static void capture_finish(capture_t *c)
{
	char *tail;
	int m;

	if (c->total <= CAP_HEAD + CAP_TAIL || !(tail = malloc(CAP_TAIL))) {
		c->buf[c->len] = 0;
		return;
	}
	memcpy(tail, c->buf + CAP_HEAD + c->ring_pos, CAP_TAIL - c->ring_pos);
	memcpy(tail + CAP_TAIL - c->ring_pos, c->buf + CAP_HEAD, c->ring_pos);
	m = snprintf(c->buf + CAP_HEAD, 128, "\n[kmgr-repro: %zu bytes of the report not shown]\n",
	             c->total - CAP_HEAD - CAP_TAIL);
	memcpy(c->buf + CAP_HEAD + m, tail, CAP_TAIL);
	c->len = CAP_HEAD + (size_t)m + CAP_TAIL;
	c->buf[c->len] = 0;
	free(tail);
}

/* Reads the child's stderr until it closes or the deadline passes. */
static bool collect(int fd, pid_t pid, unsigned timeout_s, capture_t *c)
{
	double deadline = kr_now_s() + timeout_s;
	static char chunk[65536];

	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		double left = deadline - kr_now_s();
		ssize_t n;

		if (left <= 0 || stop_signal) {
			kill(-pid, SIGKILL);
			return !stop_signal;
		}
		if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		n = read(fd, chunk, sizeof(chunk));
		if (n == 0)
			return false;
		if (n < 0 && errno != EINTR)
			return false;
		if (n > 0)
			capture_add(c, chunk, (size_t)n);
	}
}

static void classify(kr_outcome_t *o, bool timed_out)
{
	int st = o->status;

	o->failed = timed_out || !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	o->signature[0] = 0;
	if (!o->failed)
		return;
	if (timed_out) {
		snprintf(o->signature, sizeof(o->signature), "timeout");
		return;
	}
	kr_signature(o->report, o->signature, sizeof(o->signature));
	if (o->signature[0])
		return;
	/* exit 2 is every tool's usage error (a stress binary refusing a field
	 * of its repro file): the file is unusable, nothing was reproduced */
	if (WIFEXITED(st) && WEXITSTATUS(st) == KR_EXIT_USAGE) {
		o->failed = false;
		o->usage = true;
		return;
	}
	if (WIFSIGNALED(st))
		snprintf(o->signature, sizeof(o->signature), "signal %s", strsignal(WTERMSIG(st)));
	else
		snprintf(o->signature, sizeof(o->signature), "exit %d", WEXITSTATUS(st));
}

/*
 * The child between vfork() and its exec: its own process group, killed
 * with this tool, stdin from /dev/null, stdout and stderr into the pipe.
 * vfork, not fork: the child borrows this tool's memory until it execs
 * instead of copying its page tables, which under ASan or MSan (their
 * shadow memory, ASan's fork handlers over its stack depot) cost 15-25 ms
 * of CPU a run against 2.5 ms (docs/bench-notes/2026-12-04-suite-time.md,
 * "Night").  So the child makes system calls and nothing else: no
 * allocation, no stdio, no libc wrapper a sanitizer intercepts (signal()
 * under MSan would rewrite the handler table it shares with this tool).
 * errno is this tool's: that is how the exec's error reaches it.  TSan
 * turns vfork into fork: the same steps, on a copy.
 */
typedef struct child_plan {
	char *const *argv;
	int null, wr; /* O_CLOEXEC: the child makes its copies */
	pid_t parent;
	sigset_t mask;    /* the tool's, restored just before the exec */
	volatile int err; /* the exec's errno (0: it did not return) */
} child_plan_t;

/* The kernel's struct sigaction: all zero is SIG_DFL, no flags. */
typedef struct child_sigaction {
	unsigned long handler, flags, restorer, mask;
} child_sigaction_t;

#define CHILD_SYSCALLS_ONLY                                                                        \
	__attribute__((noinline, no_sanitize("address", "memory", "thread", "undefined")))

CHILD_SYSCALLS_ONLY static void child_dup(int from, int to)
{
	if (from == to) /* already in place: keep it across the exec */
		syscall(SYS_fcntl, to, F_SETFD, 0);
	else
		syscall(SYS_dup3, from, to, 0);
}

CHILD_SYSCALLS_ONLY __attribute__((noreturn)) static void child_exec(child_plan_t *c)
{
	static const int dfl[] = {SIGINT, SIGTERM, SIGHUP};
	static const child_sigaction_t sa;

	syscall(SYS_setpgid, 0, 0);
	syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (syscall(SYS_getppid) == c->parent) { /* else the tool died before prctl */
		for (size_t i = 0; i < sizeof(dfl) / sizeof(dfl[0]); i++)
			syscall(SYS_rt_sigaction, dfl[i], &sa, NULL, sizeof(sa.mask));
		if (c->null >= 0)
			child_dup(c->null, 0);
		child_dup(c->wr, 1); /* a stress FAILURE line, for -v */
		child_dup(c->wr, 2);
		syscall(SYS_rt_sigprocmask, SIG_SETMASK, &c->mask, NULL, sizeof(sa.mask));
		syscall(SYS_execve, c->argv[0], c->argv, environ);
		c->err = errno ? errno : ENOEXEC;
	}
	syscall(SYS_exit_group, 127);
	__builtin_unreachable();
}

/* vfork() with every signal blocked, so that no handler of this tool runs
 * in the child before it has reset them; the child's pid, or -1. */
static pid_t child_start(child_plan_t *c)
{
	sigset_t all;
	pid_t pid;

	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &c->mask);
	pid = vfork();
	if (pid == 0)
		child_exec(c);
	sigprocmask(SIG_SETMASK, &c->mask, NULL);
	return pid;
}

int kr_run_argv(char *const argv[], const kr_run_opts_t *o, kr_outcome_t *out)
{
	int pfd[2];
	pid_t pid;
	child_plan_t plan;
	capture_t cap = {0};
	bool timed_out;
	double t0 = kr_now_s();

	memset(out, 0, sizeof(*out));
	out->report = malloc(REPORT_CAP + 1);
	if (!out->report || stop_signal || pipe2(pfd, O_CLOEXEC))
		return -1;
	set_default_env();
	plan = (child_plan_t){.argv = argv,
	                      .wr = pfd[1],
	                      .parent = getpid(),
	                      .null = open("/dev/null", O_RDONLY | O_CLOEXEC)};
	pid = child_start(&plan);
	if (plan.null >= 0)
		close(plan.null);
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	setpgid(pid, pid); /* also here: no window in which a signal misses it */
	running_child = pid;
	if (plan.err)
		dprintf(pfd[1], "kmgr-repro: cannot run %s: %s\n", argv[0], strerror(plan.err));
	close(pfd[1]);
	cap.buf = out->report;
	timed_out = collect(pfd[0], pid, o->timeout_s ? o->timeout_s : 60, &cap);
	close(pfd[0]);
	while (waitpid(pid, &out->status, 0) < 0 && errno == EINTR)
		;
	running_child = 0;
	capture_finish(&cap);
	out->seconds = kr_now_s() - t0;
	if (stop_signal)
		return -1;
	classify(out, timed_out);
	if (o->verbose && out->failed)
		fputs(out->report, stderr);
	return 0;
}

/* The scratch dir holds only the files the stress binary wrote. */
void kr_remove_flat_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

int kr_run_child(const kr_input_t *in, const kr_run_opts_t *o, kr_outcome_t *out)
{
	char bin[PATH_MAX], tmpdir[PATH_MAX];
	int rc;

	memset(out, 0, sizeof(*out)); /* safe to free on every path */
	if (in->kind != KR_STRESS) {
		char *argv[] = {(char *)kr_self_path(), "__run",          "--target",
		                (char *)in->target,     (char *)in->path, NULL};

		return kr_run_argv(argv, o, out);
	}
	if (kr_find_stress(in->stress_bin, bin, sizeof(bin))) {
		fprintf(stderr,
		        "kmgr-repro: %s not found next to the tool, in its build tree's stress/ "
		        "or in PATH\n",
		        in->stress_bin);
		return -1;
	}
	snprintf(tmpdir, sizeof(tmpdir), "%s/kmgr-repro-XXXXXX", kr_tmpdir());
	if (!mkdtemp(tmpdir))
		return -1;
	/* its own failure writes a new repro file: into a scratch dir */
	char *argv[] = {bin, "--replay", (char *)in->path, "--quiet", "--repro-dir", tmpdir, NULL};

	rc = kr_run_argv(argv, o, out);
	kr_remove_flat_dir(tmpdir);
	return rc;
}

int kr_run_program(const kprog_t *p, const char *target, const kr_run_opts_t *o, kr_outcome_t *out)
{
	char path[PATH_MAX];
	int fd, rc;
	kr_input_t in = {.path = path, .kind = KR_PROGRAM};

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "%s/kmgr-repro-prog-XXXXXX", kr_tmpdir());
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	snprintf(in.target, sizeof(in.target), "%s", target);
	rc = kr_write_program(path, p, target, false);
	if (!rc)
		rc = kr_run_child(&in, o, out);
	unlink(path);
	return rc;
}

void kr_outcome_free(kr_outcome_t *o)
{
	free(o->report);
	o->report = NULL;
}

/*
 * The guard (kr_spawn_guarded): a process of its own group, a child
 * subreaper, that runs one command and dies with this tool.  Builds fork
 * deep trees, and ninja puts each compiler in a process group of its own,
 * so a signal to one group misses them: the guard instead kills every
 * process below it (orphans are re-parented to it, so none escapes), on
 * SIGUSR1 (this tool's death: PR_SET_PDEATHSIG; an interrupt: on_stop)
 * and when its command ends, then exits with the command's status.
 */
static volatile sig_atomic_t guard_stop;

static void guard_on_signal(int sig)
{
	(void)sig;
	guard_stop = 1;
}

/* SIGKILL to every descendant of this process; true if there was one. */
static bool kill_descendants(void)
{
	pid_t self = getpid(), pids[4096], ppids[4096];
	size_t n = 0;
	bool any = false;
	DIR *d = opendir("/proc");
	struct dirent *e;

	while (d && (e = readdir(d)) && n < 4096) {
		char path[64], buf[512], *rp;
		int fd, pp;
		ssize_t r;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		r = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (r <= 0)
			continue;
		buf[r] = 0;
		rp = strrchr(buf, ')'); /* the name may hold anything */
		if (!rp || sscanf(rp + 1, " %*c %d", &pp) != 1)
			continue;
		pids[n] = (pid_t)atoi(e->d_name);
		ppids[n++] = (pid_t)pp;
	}
	if (d)
		closedir(d);
	/* descendants: parents first is not guaranteed, so iterate to a fixpoint */
	bool mine[4096] = {false}, grew = true;

	while (grew) {
		grew = false;
		for (size_t i = 0; i < n; i++) {
			bool p = ppids[i] == self;

			for (size_t j = 0; !p && j < n; j++)
				p = mine[j] && pids[j] == ppids[i];
			if (p && !mine[i])
				mine[i] = grew = true;
		}
	}
	for (size_t i = 0; i < n; i++)
		if (mine[i]) {
			kill(pids[i], SIGKILL);
			any = true;
		}
	return any;
}

static void guard_reap_all(void)
{
	for (int round = 0; round < 1000; round++) {
		bool any = kill_descendants();

		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!any && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			return;
		ks_usleep_prod(1000);
	}
}

static void guard_main(char *const argv[], int out_fd, int err_fd, pid_t parent)
{
	struct sigaction sa = {.sa_handler = guard_on_signal};
	sigset_t none;
	pid_t pid;
	int st = 0;

	setpgid(0, 0);
	sigemptyset(&none);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGINT, SIG_IGN); /* the tool's on_stop decides, by SIGUSR1 */
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	if (getppid() != parent)
		_exit(127);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		signal(SIGUSR1, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (null >= 0)
			dup2(null, 0);
		dup2(out_fd >= 0 ? out_fd : null, 1);
		dup2(err_fd >= 0 ? err_fd : null, 2);
		execvp(argv[0], argv);
		fprintf(stderr, "kmgr-repro: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (pid > 0 && !guard_stop) {
		pid_t w = waitpid(pid, &st, 0);

		if (w == pid || (w < 0 && errno != EINTR))
			break;
	}
	guard_reap_all();
	if (guard_stop || pid < 0)
		_exit(126);
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
}

int kr_spawn_guarded(char *const argv[], const char *log, char **out)
{
	pid_t self = getpid(), pid;
	int pfd[2] = {-1, -1}, fd = -1, st = 0;
	size_t len = 0, cap = 0;
	char *buf = NULL;

	if (out)
		*out = NULL;
	if (stop_signal)
		return -1;
	if (out && pipe2(pfd, O_CLOEXEC))
		return -1;
	if (log && (fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		/* out: stdout into the pipe, stderr to /dev/null; a log: both there */
		int o = out ? dup(pfd[1]) : fd >= 0 ? dup(fd) : -1;

		guard_main(argv, o, out ? -1 : o, self);
	}
	if (fd >= 0)
		close(fd);
	if (pid < 0) {
		if (out)
			close(pfd[0]), close(pfd[1]);
		return -1;
	}
	running_guard = pid;
	if (out) {
		close(pfd[1]);
		for (;;) {
			ssize_t r;

			if (len + 4096 + 1 > cap) {
				char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);

				if (!nb)
					break;
				buf = nb;
			}
			r = read(pfd[0], buf + len, cap - len - 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			len += (size_t)r;
		}
		close(pfd[0]);
		if (buf)
			buf[len] = 0;
		*out = buf;
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	running_guard = 0;
	if (stop_signal)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
