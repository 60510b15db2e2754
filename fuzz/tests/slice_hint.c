/*
 * slice_hint.c - a fuzz worker's set-up (kfuzz_initialize, what every
 * program target's LLVMFuzzerInitialize and the AFL++ driver run) leaves
 * the process with KFUZZ_WORKER_SLICE_NS time slices, the way the kernel
 * reports them in /proc/self/sched, and changes nothing else of its
 * scheduling: not its nice value, not its policy.  Free-running threads
 * (KMGR_FUZZ_BACKEND=free) keep the kernel's slice, a task someone put
 * under SCHED_IDLE is left as it is, a SCHED_BATCH one gets the long
 * slice too (and keeps its reset-on-fork flag).  Each case runs in a
 * child: the set-up reads the environment once per process.  Skipped (77)
 * on kernels before 6.12, which have no per-task slice to ask for.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/run.h"
#include "ktest.h"
#include "oracle/oracle.h"

/* se.slice of /proc/self/sched, in ns; -1 when the file has no such line */
static long long own_slice(void)
{
	char buf[16384];
	const char *p;

	kt_slurp("/proc/self/sched", buf, sizeof(buf));
	p = strstr(buf, "\nse.slice ");
	if (!p || !(p = strchr(p, ':')))
		return -1;
	return strtoll(p + 1, NULL, 10);
}

static bool kernel_has_slices(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 12);
}

static long long default_slice;

/* slice-1.1: the set-up takes the long slice and keeps the nice value the
 * worker was started with (ci/test.sh starts some at nice 10). */
static void case_worker(void)
{
	KT_EQ(setpriority(PRIO_PROCESS, 0, 3), 0);
	KT_EQ(kfuzz_initialize(), 0);
	KT_EQ(own_slice(), (long long)KFUZZ_WORKER_SLICE_NS);
	errno = 0;
	KT_EQ(getpriority(PRIO_PROCESS, 0), 3);
	KT_EQ(errno, 0);
	KT_EQ(sched_getscheduler(0), SCHED_OTHER);
}

/* slice-1.2: free-running threads keep the kernel's slice. */
static void case_free_backend(void)
{
	KT_EQ(setenv("KMGR_FUZZ_BACKEND", "free", 1), 0);
	KT_EQ(kfuzz_initialize(), 0);
	KT_EQ(own_slice(), default_slice);
}

/* slice-1.3: a SCHED_IDLE task is left as it is: refused, same policy
 * (the kernel shows no slice for one). */
static void case_idle(void)
{
	struct sched_param sp = {0};

	KT_EQ(sched_setscheduler(0, SCHED_IDLE, &sp), 0);
	KT_EQ(kfuzz_long_slices(), -1);
	KT_EQ(sched_getscheduler(0), SCHED_IDLE);
}

/* slice-1.4: a SCHED_BATCH worker gets the slice and stays SCHED_BATCH,
 * its reset-on-fork flag kept. */
static void case_batch(void)
{
	struct sched_param sp = {0};

	KT_EQ(sched_setscheduler(0, SCHED_BATCH | SCHED_RESET_ON_FORK, &sp), 0);
	KT_EQ(kfuzz_long_slices(), 0);
	KT_EQ(sched_getscheduler(0), SCHED_BATCH | SCHED_RESET_ON_FORK);
	KT_EQ(own_slice(), (long long)KFUZZ_WORKER_SLICE_NS);
}

/* The cases, each run in a child by run_in_child (the set-up reads the
 * environment once per process). */
static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
    {"slice-1.1 worker", case_worker},
    {"slice-1.2 free backend", case_free_backend},
    {"slice-1.3 SCHED_IDLE", case_idle},
    {"slice-1.4 SCHED_BATCH", case_batch},
};
static size_t cur;

static void run_in_child(void)
{
	pid_t pid;
	int st = 0;

	fflush(NULL);
	pid = fork();
	KT_ASSERT(pid >= 0);
	if (pid == 0) {
		oracle_log_quiet();
		cases[cur].fn();
		fflush(NULL);
		_exit(0);
	}
	KT_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		KT_FAIL("%s: the child failed (status 0x%x)", cases[cur].name, st);
}

int main(void)
{
	if (!kernel_has_slices()) {
		printf("skipped: this kernel (before 6.12) has no per-task slice\n");
		return 77;
	}
	default_slice = own_slice();
	KT_ASSERT(default_slice > 0);
	KT_ASSERT(default_slice != (long long)KFUZZ_WORKER_SLICE_NS);
	for (cur = 0; cur < sizeof(cases) / sizeof(cases[0]); cur++)
		KT_CASE(cases[cur].name, run_in_child);
	KT_DONE();
}
