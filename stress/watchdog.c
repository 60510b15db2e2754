/*
 * watchdog.c - the stall detector and the progress line (rcutorture's stall
 * warning, locktorture's stats thread).
 *
 * It is a raw pthread created before the run (and before ks_ctl_begin), never
 * a logical thread, and it measures progress in real time: under the
 * controlled scheduler virtual time says nothing about a stuck process.  It
 * only reads atomics of the run.  When a worker (or the main thread) makes
 * no progress for --stall-seconds it signals every thread of the process
 * with SIGUSR1, whose handler captures a backtrace, symbolizes each stack
 * (llvm-symbolizer, else dladdr), names the innermost lib/ frame as the
 * thread's wait site, and exits with TORTURE_EXIT_STALL.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "torture_int.h"

#define WD_FRAMES  48
#define WD_TICK_MS 100

static pthread_t wd_thread;
static atomic_int wd_quit;
static atomic_int wd_running;

/* The backtrace handoff between the SIGUSR1 handler and the watchdog: one
 * thread at a time. */
static struct {
	atomic_int tid;
	atomic_int n; /* -1 while pending */
	void *frames[WD_FRAMES];
} wd_slot;

static int wd_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

static void wd_sigusr1(int sig)
{
	int saved = errno;

	(void)sig;
	if (wd_gettid() == atomic_load(&wd_slot.tid)) {
		int n = backtrace(wd_slot.frames, WD_FRAMES);

		atomic_store_explicit(&wd_slot.n, n, memory_order_release);
	}
	errno = saved;
}

void torture_thread_register(torture_thread_t *w)
{
	torture_atomic_set(&w->tid, wd_gettid());
}

void torture_main_progress(torture_t *t, const char *phase)
{
	torture_atomic_set(&t->main_phase, (int64_t)(intptr_t)phase);
	ks_atomic_add_quiet(&t->main_progress, 1);
}

/* ------------------------------------------------------------ symbolize */

typedef struct wd_frame {
	char func[160];
	char file[320]; /* file:line, "" when unknown */
} wd_frame_t;

static int wd_exe_is_pie(const char *exe)
{
	Elf64_Ehdr eh;
	int fd = open(exe, O_RDONLY), pie = 1;

	if (fd < 0)
		return 1;
	if (read(fd, &eh, sizeof(eh)) == (ssize_t)sizeof(eh))
		pie = eh.e_type == ET_DYN;
	close(fd);
	return pie;
}

static const char *wd_symbolizer(void)
{
	const char *env = getenv("KMGR_SYMBOLIZER");

	if (env && *env)
		return env;
	if (access("/usr/bin/llvm-symbolizer", X_OK) == 0)
		return "/usr/bin/llvm-symbolizer";
	if (access("/usr/bin/llvm-symbolizer-14", X_OK) == 0)
		return "/usr/bin/llvm-symbolizer-14";
	return NULL;
}

/* The symbolizer on argv, its stdout a stream to read (stdin and stderr
 * /dev/null), run directly: KMGR_SYMBOLIZER is a path, never a shell
 * command (it was given to popen).  NULL when it cannot be started. */
static FILE *wd_spawn(char *const argv[], pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	int pfd[2], rc;
	FILE *f;

	if (pipe2(pfd, O_CLOEXEC))
		return NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	f = rc ? NULL : fdopen(pfd[0], "r");
	if (!f)
		close(pfd[0]);
	if (rc == 0 && !f)
		waitpid(*pid, NULL, 0);
	return f;
}

/* One llvm-symbolizer run for the frames of the main executable (it
 * expands inlined frames, so ks_usleep inlined into its caller shows both);
 * the others by dladdr.  Returns the number of entries written. */
static int wd_symbolize(void *const *frames, int n, wd_frame_t *out, int max)
{
	char exe[PATH_MAX], rp[PATH_MAX], line[1024], obj[PATH_MAX + 8];
	static char addr[WD_FRAMES][24];
	char *argv[WD_FRAMES + 3];
	const char *sym = wd_symbolizer();
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	Dl_info di[WD_FRAMES];
	bool in_exe[WD_FRAMES];
	int pie, m = 0, nexe = 0;
	pid_t pid = 0;
	FILE *p = NULL;

	if (el <= 0 || n > WD_FRAMES)
		return 0;
	exe[el] = 0;
	pie = wd_exe_is_pie(exe);
	snprintf(obj, sizeof(obj), "--obj=%s", exe);
	argv[0] = (char *)sym;
	argv[1] = obj;
	for (int i = 0; i < n; i++) {
		uintptr_t pc = (uintptr_t)frames[i] - (i ? 1 : 0);

		memset(&di[i], 0, sizeof(di[i]));
		in_exe[i] = dladdr((void *)pc, &di[i]) && di[i].dli_fname &&
		            realpath(di[i].dli_fname, rp) && strcmp(rp, exe) == 0 && sym;
		if (!in_exe[i])
			continue;
		snprintf(addr[nexe], sizeof(addr[nexe]), "0x%" PRIxPTR,
		         pie ? pc - (uintptr_t)di[i].dli_fbase : pc);
		argv[2 + nexe] = addr[nexe];
		nexe++;
	}
	argv[2 + nexe] = NULL;
	if (nexe)
		p = wd_spawn(argv, &pid);
	for (int i = 0; i < n && m < max; i++) {
		uintptr_t pc = (uintptr_t)frames[i] - (i ? 1 : 0);
		int got = 0;

		/* A block per address: (function, file:line) pairs, inlined
		 * first, then an empty line. */
		while (in_exe[i] && p && m < max && fgets(line, sizeof(line), p)) {
			line[strcspn(line, "\n")] = 0;
			if (!line[0])
				break;
			snprintf(out[m].func, sizeof(out[m].func), "%s", line);
			if (!fgets(line, sizeof(line), p))
				line[0] = 0;
			line[strcspn(line, "\n")] = 0;
			snprintf(out[m].file, sizeof(out[m].file), "%s", line);
			m++;
			got++;
		}
		if (got || m >= max)
			continue;
		snprintf(out[m].func, sizeof(out[m].func), "%s+0x%" PRIxPTR,
		         di[i].dli_sname ? di[i].dli_sname : "??",
		         pc - (uintptr_t)(di[i].dli_saddr ? di[i].dli_saddr : di[i].dli_fbase));
		snprintf(out[m].file, sizeof(out[m].file), "(%s)",
		         di[i].dli_fname ? di[i].dli_fname : "?");
		m++;
	}
	if (p) {
		fclose(p);
		waitpid(pid, NULL, 0);
	}
	return m;
}

/* FILE is under the source folder DIR ("lib/kmgr/"): at the start of a
 * relative path, as the builds compile them (CMakeLists.txt:
 * KMGR_RELATIVE_PATHS), or after a '/' of an absolute one. */
static bool wd_under(const char *file, const char *dir)
{
	for (const char *at = strstr(file, dir); at; at = strstr(at + 1, dir))
		if (at == file || at[-1] == '/')
			return true;
	return false;
}

static bool wd_is_lib(const wd_frame_t *f)
{
	static const char *const prefixes[] = {
	    "ks_",   "kmgr_", "dlr_",  "db_",    "nn_ref", "kbl_",   "tpb_", "emu_",
	    "vtpb_", "nrt_",  "nrta_", "kalloc", "kfree",  "kfault", "klog", "kmodel_"};

	static const char *const dirs[] = {"lib/sched/", "lib/base/",  "lib/emu/",
	                                   "lib/kmgr/",  "lib/model/", "lib/nrt/"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (wd_under(f->file, dirs[i]))
			return true;
	if (f->file[0] && f->file[0] != '(')
		return false;
	if (f->file[0] == '(' && !strstr(f->file, "stress_"))
		return false; /* a shared library: libc, the sanitizer runtime */
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(f->func, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

static bool wd_is_sched(const wd_frame_t *f)
{
	return wd_under(f->file, "lib/sched/") || strncmp(f->func, "ks_", 3) == 0;
}

/* The innermost lib/ frame, and the first lib/ frame outside lib/sched
 * (the facade or device code that called the wait). */
static void wd_print_wait_site(FILE *o, const wd_frame_t *fr, int n)
{
	int top = -1, caller = -1;

	for (int i = 0; i < n; i++) {
		if (!wd_is_lib(&fr[i]))
			continue;
		if (top < 0)
			top = i;
		if (!wd_is_sched(&fr[i])) {
			caller = i;
			break;
		}
	}
	if (top < 0) {
		fprintf(o, "    wait site: (no lib/ frame: not inside the library)\n");
		return;
	}
	fprintf(o, "    wait site: %s at %s", fr[top].func, fr[top].file);
	if (caller >= 0 && caller != top)
		fprintf(o, ", in %s at %s", fr[caller].func, fr[caller].file);
	fprintf(o, "\n");
}

/* ------------------------------------------------------------- dump */

static const char *wd_role(torture_t *t, int tid, char *buf, size_t len, int *widx)
{
	uint32_t n = (uint32_t)ks_atomic_load_quiet(&t->nthreads_pub);

	*widx = -1;
	if (tid == (int)ks_atomic_load_quiet(&t->main_tid)) {
		snprintf(buf, len, "main");
		return buf;
	}
	for (uint32_t i = 0; i < n; i++) {
		if ((int)ks_atomic_load_quiet(&t->th[i].tid) == tid) {
			*widx = (int)i;
			snprintf(buf, len, "%s#%u", t->th[i].role, t->th[i].role_idx);
			return buf;
		}
	}
	return NULL;
}

static void wd_dump_thread(torture_t *t, int tid, const uint64_t *idle_ns, uint64_t main_idle)
{
	char path[64], comm[64] = "?", role[96];
	wd_frame_t *fr = calloc(96, sizeof(*fr));
	int widx, nf = 0, n = -1;
	const char *r;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	r = wd_role(t, tid, role, sizeof(role), &widx);
	if (widx >= 0) {
		torture_thread_t *w = &t->th[widx];
		const char *op = (const char *)(intptr_t)ks_atomic_load_quiet(&w->last_op);

		fprintf(stderr,
		        "  thread %d %s (%s): %" PRId64
		        " ops, last op '%s', no progress for %.1f s%s\n",
		        tid, r, comm, (int64_t)ks_atomic_load_quiet(&w->ops), op ? op : "start",
		        (double)idle_ns[widx] / 1e9,
		        ks_atomic_load_quiet(&w->done) ? " (finished)" : "");
	} else if (r) {
		const char *ph = (const char *)(intptr_t)ks_atomic_load_quiet(&t->main_phase);

		fprintf(stderr, "  thread %d main (%s): phase '%s', no progress for %.1f s\n", tid,
		        comm, ph ? ph : "?", (double)main_idle / 1e9);
	} else {
		fprintf(stderr, "  thread %d library thread '%s'\n", tid, comm);
	}
	atomic_store(&wd_slot.n, -1);
	atomic_store(&wd_slot.tid, tid);
	if (fr && syscall(SYS_tgkill, getpid(), tid, SIGUSR1) == 0) {
		for (int i = 0; i < 50 && n < 0; i++) {
			struct timespec ts = {0, 10 * 1000 * 1000};

			nanosleep(&ts, NULL);
			n = atomic_load_explicit(&wd_slot.n, memory_order_acquire);
		}
	}
	atomic_store(&wd_slot.tid, 0);
	if (n < 0 || !fr) {
		fprintf(stderr, "    (no backtrace: the thread did not answer SIGUSR1)\n");
		free(fr);
		return;
	}
	/* Skip the handler's own frames (backtrace, wd_sigusr1, the trampoline). */
	nf = wd_symbolize(wd_slot.frames, n, fr, 96);
	{
		int first = 0;

		for (int i = 0; i < nf; i++)
			if (strstr(fr[i].func, "wd_sigusr1") ||
			    strstr(fr[i].func, "__restore_rt") || strstr(fr[i].func, "sigaction"))
				first = i + 1;
		wd_print_wait_site(stderr, fr + first, nf - first);
		for (int i = first; i < nf && i < first + 24; i++)
			fprintf(stderr, "      #%-2d %s %s\n", i - first, fr[i].func, fr[i].file);
	}
	free(fr);
}

static void wd_dump(torture_t *t, const char *why, const uint64_t *idle_ns, uint64_t main_idle)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int self = wd_gettid();

	fprintf(stderr, "\n=== %s WATCHDOG: %s (--stall-seconds %u); every thread follows ===\n",
	        t->ops->name, why, t->k.stall_seconds);
	while (d && (de = readdir(d))) {
		int tid = atoi(de->d_name);

		if (tid > 0 && tid != self)
			wd_dump_thread(t, tid, idle_ns, main_idle);
	}
	if (d)
		closedir(d);
	fprintf(stderr, "=== end of watchdog dump ===\n");
}

void torture_finish_stalled(torture_t *t, const char *why)
{
	char repro[1024] = "";

	t->stall = 1;
	torture_fail(t, "stall: %s", why);
	torture_write_repro(t, "", why, repro, sizeof(repro));
	torture_summary(t, NULL, TORTURE_EXIT_STALL, repro);
	fflush(NULL);
	_exit(TORTURE_EXIT_STALL);
}

/* ---------------------------------------------------------- the loop */

static void wd_progress_line(torture_t *t, double secs, uint64_t ops_delta, double dt)
{
	uint32_t n = (uint32_t)ks_atomic_load_quiet(&t->nthreads_pub);
	uint64_t stat[TORTURE_NSTAT] = {0};

	for (uint32_t i = 0; i < n; i++)
		for (int s = 0; s < TORTURE_NSTAT; s++)
			stat[s] += (uint64_t)ks_atomic_load_quiet(&t->th[i].stat[s]);
	printf("[%6.1fs] %8.0f ops/s | ops %" PRId64 " | in flight %" PRId64 " | drains %" PRId64
	       " | errors:",
	       secs, dt > 0 ? (double)ops_delta / dt : 0.0,
	       (int64_t)ks_atomic_load_quiet(&t->total_ops), oracle_inflight(),
	       (int64_t)ks_atomic_load_quiet(&t->drains));
	for (int s = 1; s < TORTURE_NSTAT; s++)
		if (stat[s])
			printf(" %s=%" PRIu64, torture_stat_name(s), stat[s]);
	printf("\n");
	fflush(stdout);
}

static void *wd_main(void *arg)
{
	torture_t *t = arg;
	static uint64_t last_ops[TORTURE_MAX_THREADS], last_change[TORTURE_MAX_THREADS];
	static uint64_t idle[TORTURE_MAX_THREADS];
	uint64_t stall_ns = (uint64_t)t->k.stall_seconds * 1000000000ull;
	uint64_t main_last = 0, main_change = torture_now_ns(), last_line = main_change;
	uint64_t line_ops = 0;
	bool show = !t->k.quiet && (t->k.progress || isatty(1));

	for (int i = 0; i < TORTURE_MAX_THREADS; i++)
		last_change[i] = main_change;
	while (!atomic_load(&wd_quit)) {
		struct timespec ts = {0, WD_TICK_MS * 1000 * 1000};
		uint32_t n = (uint32_t)ks_atomic_load_quiet(&t->nthreads_pub);
		uint64_t now, mp, newest = 0;
		const char *ph;
		int stuck = -1;

		nanosleep(&ts, NULL);
		now = torture_now_ns();
		for (uint32_t i = 0; i < n; i++) {
			uint64_t c = (uint64_t)ks_atomic_load_quiet(&t->th[i].ops);

			if (c != last_ops[i] || ks_atomic_load_quiet(&t->th[i].done)) {
				last_ops[i] = c;
				last_change[i] = now;
			}
			idle[i] = now - last_change[i];
			newest = last_change[i] > newest ? last_change[i] : newest;
			if (idle[i] > stall_ns && (stuck < 0 || idle[i] > idle[stuck]))
				stuck = (int)i; /* the one stuck longest */
		}
		mp = (uint64_t)ks_atomic_load_quiet(&t->main_progress);
		ph = (const char *)(intptr_t)ks_atomic_load_quiet(&t->main_phase);
		/* Joining is progress while some worker still progresses. */
		if (mp != main_last || (ph && strcmp(ph, "join") == 0 && now - newest < stall_ns)) {
			main_last = mp;
			main_change = now;
		}
		if (show && now - last_line >= 1000000000ull) {
			uint64_t o = (uint64_t)ks_atomic_load_quiet(&t->total_ops);

			wd_progress_line(t, (double)(now - t->start_ns) / 1e9, o - line_ops,
			                 (double)(now - last_line) / 1e9);
			line_ops = o;
			last_line = now;
		}
		if (stuck >= 0 || now - main_change > stall_ns) {
			char why[160];

			if (stuck >= 0)
				snprintf(why, sizeof(why), "%s#%u made no progress for %u s",
				         t->th[stuck].role, t->th[stuck].role_idx,
				         t->k.stall_seconds);
			else
				snprintf(why, sizeof(why),
				         "the main thread made no progress for %u s in '%s'",
				         t->k.stall_seconds, ph ? ph : "?");
			wd_dump(t, why, idle, now - main_change);
			torture_finish_stalled(t, why);
		}
	}
	return NULL;
}

int torture_watchdog_start(torture_t *t)
{
	struct sigaction sa;
	void *warm[4];

	/* The first backtrace() loads the unwinder (malloc, dlopen): not in a
	 * signal handler. */
	backtrace(warm, 4);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wd_sigusr1;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	torture_atomic_set(&t->main_tid, wd_gettid());
	atomic_store(&wd_quit, 0);
	if (pthread_create(&wd_thread, NULL, wd_main, t) != 0) {
		fprintf(stderr, "%s: cannot start the watchdog thread\n", t->ops->name);
		return -1;
	}
	atomic_store(&wd_running, 1);
	return 0;
}

void torture_watchdog_stop(torture_t *t)
{
	(void)t;
	if (!atomic_load(&wd_running))
		return;
	atomic_store(&wd_quit, 1);
	pthread_join(wd_thread, NULL);
	atomic_store(&wd_running, 0);
}
