/*
 * slice.c - a fuzz worker asks the kernel for long time slices.
 *
 * A worker is a CPU-bound batch process: every logical thread of a program
 * is a fiber on one real thread (lib/sched), so its hot loop never blocks.
 * When two workers share a CPU (ci/fuzz.sh --jobs above the CPU count, a
 * busy CI machine, scale-bench's x1cpu row), the kernel switches between
 * them whenever the running one has used its slice: at every tick, with
 * HZ=250 and a default slice of 1.4 ms.  Each switch costs the next slice
 * its caches and TLB (no PCID on the project's VM).  One fixed replay,
 * two copies time-sharing one CPU, against one copy alone: x1.10 CPU per
 * execution with the default slice, x1.03 with 50 ms
 * (docs/bench-notes/2026-12-05-time-slices.md).
 *
 * Linux 6.12 and later take a fair task's slice from sched_attr's
 * sched_runtime (clamped to 0.1-100 ms) and keep it across fork and
 * thread creation, so AFL++'s fork-server children inherit it.  Older
 * kernels ignore the field for SCHED_OTHER, and a refusal (a seccomp
 * filter, EPERM) leaves the default: either way the worker runs as
 * before.  What a longer slice gives up is nothing a worker needs: the
 * other tasks on its CPU with shorter slices still preempt it when they
 * wake (EEVDF picks the earliest deadline).
 */
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness/run.h"

/* The kernel's struct sched_attr (include/uapi/linux/sched/types.h); glibc
 * before 2.41 has neither the struct nor a wrapper. */
struct kfuzz_sched_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};
/* SCHED_FLAG_RESET_ON_FORK of <linux/sched.h>, whose CLONE_* would clash
 * with <sched.h>'s */
#define KFUZZ_SCHED_FLAG_RESET_ON_FORK 0x01u

int kfuzz_long_slices(void)
{
#if defined(SYS_sched_getattr) && defined(SYS_sched_setattr)
	struct kfuzz_sched_attr a;

	memset(&a, 0, sizeof(a));
	if (syscall(SYS_sched_getattr, 0, &a, (unsigned)sizeof(a), 0) != 0)
		return -1;
	/* Only a fair task: a real-time or idle policy was someone's choice.
	 * The rest of the attributes (nice, reset-on-fork) stay as they are. */
	if (a.sched_policy != SCHED_OTHER && a.sched_policy != SCHED_BATCH)
		return -1;
	a.size = sizeof(a);
	a.sched_flags &= KFUZZ_SCHED_FLAG_RESET_ON_FORK;
	a.sched_runtime = KFUZZ_WORKER_SLICE_NS;
	return syscall(SYS_sched_setattr, 0, &a, 0) == 0 ? 0 : -1;
#else
	return -1;
#endif
}
