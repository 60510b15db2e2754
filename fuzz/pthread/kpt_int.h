/*
 * kpt_int.h - what the files of the kpt shim share (docs/pthread.md): the
 * side table of pthread objects, the run's thread table, and the TSan
 * quiet zone around the shim's own bookkeeping.  kpt.c holds the table and
 * the run; kpt_locks.c mutexes, rwlocks and conditions; kpt_threads.c
 * threads, yield and sleeps; kpt_sync.c semaphores, once, barriers, spin
 * locks and the scheduling points of atomics.
 */
#ifndef KPT_INT_H
#define KPT_INT_H

#define KPT_NO_MACROS
#include "kpt.h"

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/kctl.h"

/* The shim's tables are handed from one logical thread to the next by the
 * scheduler's switches, which carry no happens-before edge on purpose
 * (docs/scheduler.md, "Sanitizers"): TSan is told to look away from them,
 * as from the scheduler's own state, so that it reports the program's
 * races and not the shim's bookkeeping.  Never held across a call that
 * can switch threads. */
#if defined(KMGR_TSAN)
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);

static inline void quiet_begin(void)
{
	AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
	AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
}

static inline void quiet_end(void)
{
	AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
	AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
}
#else
static inline void quiet_begin(void)
{
}

static inline void quiet_end(void)
{
}
#endif

/* ---- the side table of pthread objects --------------------------------- */

enum kpt_kind {
	KPT_MUTEX = 1,
	KPT_RWLOCK,
	KPT_COND,
	KPT_SEM,
	KPT_ONCE,
	KPT_BARRIER,
	KPT_SPIN,
};

/* A mutex's pthread type (recursive, error-checking) and owner: the
 * scheduler's mutex knows neither. */
struct kpt_mutex {
	ks_mutex_t m;
	int type;
	int owner; /* logical thread id + 1, 0: free */
	unsigned depth;
};

struct kpt_once {
	ks_mutex_t m;
	bool done;
};

struct kpt_barrier {
	ks_mutex_t m;
	ks_cond_t c;
	unsigned n, arrived, gen;
};

struct kpt_obj {
	const void *addr;
	uint32_t gen; /* in use in run `gen` only: an older one is an empty slot */
	uint32_t kind;
	union {
		struct kpt_mutex m;
		ks_rwlock_t rw;
		ks_cond_t c;
		ks_sem_t s;
		struct kpt_once o;
		struct kpt_barrier b;
	} u;
};

/* The object's scheduler state, made on first use (kpt.c); fresh: reset it
 * (init, destroy). */
struct kpt_obj *kpt_obj(const void *addr, enum kpt_kind kind, bool fresh, const char *site);

/* ---- the run's threads (kpt_threads.c) ---------------------------------- */

struct kpt_thread {
	ks_thread_t kt;
	void *(*fn)(void *);
	void *arg;
	bool joined, detached;
	jmp_buf exit_jb; /* pthread_exit: back to the trampoline */
	void *exit_ret;
};

#define KPT_MAX_THREADS 1024
/* pthread_self() of the run's main thread: no index of the table. */
#define KPT_MAIN_HANDLE ((pthread_t)KPT_MAX_THREADS + 1)
extern unsigned kpt_nthr; /* threads created in this run */
/* pthread_exit from the scenario's main: back to kpt_main_body */
extern jmp_buf kpt_main_exit_jb;
extern bool kpt_main_exit_armed;

/* A timed call's abstime as a wait on virtual time (kpt_threads.c): the ns
 * from the program's clock now (kpt_clock_gettime) to it, 0 when it has
 * passed; EINVAL for a nanosecond field out of range or no abstime. */
int kpt_timeout_ns(const struct timespec *abstime, uint64_t *ns);

#endif /* KPT_INT_H */
