/*
 * ctl_int.h - the controlled backend's private state, shared by its files:
 * ctl.c (the state, the TSan ignore region, the baton, scheduling points),
 * ctl_report.c (failures: reports, unwinding), ctl_thread.c (a logical
 * thread's life, create and join), ctl_run.c (begin, end, run),
 * ctl_fiber.c (the fiber engine's context switch and its sanitizer hooks),
 * ctl_sync.c (the modelled locks, conditions, semaphores, sleep),
 * ctl_strategy.c (bytes, PCT, round-robin, replay), ctl_access.c (access
 * points) and ctl_trace.c.
 *
 * Exactly one logical thread holds the baton and only that thread touches
 * this state, so plain fields suffice; the baton handoff (a seq_cst atomic
 * plus a futex) orders the accesses for the hardware.  TSan is told to look
 * away from all of it (ks__enter / ks__leave), because the handoff must
 * not create happens-before edges between logical threads.  The only fields
 * read outside the baton (after a failure, when threads unwind at once)
 * are atomics.
 */
#ifndef KSCHED_CTL_INT_H
#define KSCHED_CTL_INT_H

#include <setjmp.h>

#include "kctl.h"

/* Decisions recorded per run; a longer run keeps running but its trace is
 * marked truncated (replay then falls back once it runs out). */
#define KS_CTL_TRACE_MAX     (1u << 20)
#define KS_CTL_DEFAULT_STEPS 1000000u
#define KS_CTL_REPORT_MAX    16384

enum ks_tstate {
	KS_T_UNUSED = 0,
	KS_T_RUNNABLE,
	KS_T_BLOCKED,
	KS_T_SLEEPING,
	KS_T_FINISHED,
};

enum ks_wait {
	KS_W_NONE = 0,
	KS_W_MUTEX,
	KS_W_RWLOCK,
	KS_W_COND,
	KS_W_SEM,
	KS_W_JOIN,
};

struct ks_lthread {
	int id;
	char name[32];
	_Atomic int go; /* the baton: 1 = run, futex word */
	enum ks_wait wait_kind;
	const void *wait_obj;
	const char *site; /* last scheduling point, or where it waits */
	uint64_t wait_order;
	uint64_t wake_ns; /* sleeping, or blocked with a deadline (timed) */
	bool timed;       /* blocked with a deadline: wake_ns ends the wait */
	bool timed_out;   /* the deadline, not the object, woke it */
	int64_t prio;     /* PCT */
	bool started, joined, has_jb;
	bool yielding;         /* at a ks_yield: the others come first (ctl.c) */
	uint32_t atomic_depth; /* in an atomic section: no other thread runs
	                        * while it can (ks_ctl_atomic_begin) */
	bool at_access;        /* at an access point: sleepers are candidates too */
	bool mem_point;        /* at a memory access point the input asked for: the
	                 * others come first (ctl_access.c) */
	/* memory access points (ctl_access.c) */
	bool releasing;           /* this point is an unlock, a post, a reference dropped */
	uint64_t releases;        /* such points this thread has passed */
	uint32_t accesses;        /* heap and global accesses since the last one */
	uint32_t ap_k;            /* the access after it that is a point; 0: none */
	uint32_t spin_n;          /* heap and global accesses since the last point (ctl_spin.c) */
	uint32_t spin_yields;     /* spin yields since the last other point */
	bool spinning;            /* at a spin yield */
	const char *release_site; /* where the last release was */
	uint8_t ap_chose;         /* at the last memory access point: 1 self, 2 a
	                           * sleeper, 3 another runnable thread */
	jmp_buf jb;               /* where an aborted run unwinds this thread to */
	void *(*fn)(void *);
	void *arg;
	void *ret;
	const void *tag; /* ks_thread_tag */
	pthread_t pt;    /* KS_ENGINE_THREADS */
	char *hb;        /* TSan sync address for create -> start and finish -> join */
};

struct ks_sched {
	ks_ctl_config_t cfg;
	bool fibers;                /* cfg.engine == KS_ENGINE_FIBERS */
	struct ks_lthread *exit_to; /* whom a finishing fiber switches to */
	uint64_t max_steps;
	int nthreads;     /* slots in use, finished ones included */
	uint64_t created; /* logical threads created, main excluded */
	int cur;
	uint64_t steps, switches, preemptions, order, step_hash;
	uint64_t failed_steps;
	_Atomic uint64_t vtime;
	_Atomic int failed; /* ks_failure_t once a run failed */
	/* decision sources */
	size_t bitpos;   /* KS_STRAT_BYTES */
	size_t tracepos; /* KS_STRAT_REPLAY */
	uint64_t rng;    /* KS_STRAT_PCT */
	uint64_t pct_change[16];
	uint32_t pct_nchange;
	int64_t pct_floor;
	bool trace_truncated;
	bool access_points; /* cfg.access_points or KMGR_SCHED_ACCESS_POINTS=1 */
	size_t ntrace;
	/* thr[i]'s state (enum ks_tstate), here and not in the slot: every
	 * scheduling point scans the states for candidates, and one line of
	 * bytes is cheaper than a 400-byte slot (jmp_buf) a thread */
	_Atomic uint8_t tst[KS_CTL_MAX_THREADS];
	struct ks_lthread thr[KS_CTL_MAX_THREADS];
};

extern struct ks_sched ks__g;
extern uint8_t ks__trace[KS_CTL_TRACE_MAX];
/* The logical thread running on this real thread (fibers: the one whose
 * fiber is switched in); NULL outside a run. */
extern _Thread_local struct ks_lthread *ks__tl_self;

static inline int tstate_at(int i)
{
	return atomic_load_explicit(&ks__g.tst[i], memory_order_relaxed);
}

/* By the slot's place, not t->id: a candidate's state must not cost a
 * load of its slot */
static inline int tstate(const struct ks_lthread *t)
{
	return tstate_at((int)(t - ks__g.thr));
}

static inline void set_tstate(struct ks_lthread *t, int s)
{
	atomic_store_explicit(&ks__g.tst[t - ks__g.thr], (uint8_t)s, memory_order_relaxed);
}

/* At each scheduling point of t (ctl.c): if it is a release, count it
 * and arm the access point cfg.ap asks for after it (ctl_access.c). */
void ks__ap_on_point(struct ks_lthread *t);
/* Is there anything for a memory access to do?  Bit 31: the spin
 * detector counts (ks_ctl_spin_detect); below it, the threads of this run
 * with an access point armed (ks__ap_set; ks_ctl_begin zeroes them).  One
 * word, so the load and store callbacks test one load while it is 0:
 * the code under test makes thousands of accesses a run, most with
 * neither. */
#define KS_WATCH_SPIN (1u << 31)
extern _Atomic uint32_t ks__mem_watch;
/* Set t->ap_k, keeping ks__mem_watch's count of threads with one. */
void ks__ap_set(struct ks_lthread *t, uint32_t k);
/* ctl_spin.c: the spin detector (a loop of plain accesses with no
 * scheduling point); ks__spin_on_point resets it at every point. */
#define KS_SPIN_BOUND  100000u
#define KS_SPIN_YIELDS 100u
extern bool ks__spin_detect;
void ks__spin(struct ks_lthread *t, const void *pc);
static inline void ks__spin_on_point(struct ks_lthread *t)
{
	t->spin_n = 0;
	if (!t->spinning)
		t->spin_yields = 0;
}

/* Tell TSan to ignore the scheduler's own memory accesses and sync. */
void ks__enter(void);
void ks__leave(void);
/* enter, then the calling logical thread (aborts on a thread the run does
 * not know). */
struct ks_lthread *ks__enter_self(void);
/* Inline: every scheduling point and access point asks (out of line it
 * was 0.7% of a fuzz run as a call). */
static inline bool ks__failed(void)
{
	return atomic_load_explicit(&ks__g.failed, memory_order_relaxed) != KS_OK;
}
/* The sleepers and timed waits whose time virtual time has passed become
 * runnable (ctl.c): after a clock read moved it (ks_ctl_clock_read). */
void ks__wake_due(void);
/* A scheduling point for t, whose state the caller has set. */
void ks__point(struct ks_lthread *t, const char *site);
/* FNV-1a of a site's text (cached by its address): equal in every process,
 * whatever the addresses */
uint64_t ks__site_hash(const char *site);
/* ks__block with a deadline on virtual time: true when the deadline, not
 * the object, ended the wait (ctl.c). */
bool ks__block_until(struct ks_lthread *t, enum ks_wait kind, const void *obj, uint64_t wake_ns,
                     const char *site);
/* Block t on (kind, obj) and schedule until it is woken and chosen. */
void ks__block(struct ks_lthread *t, enum ks_wait kind, const void *obj, const char *site);
void ks__wake_all(enum ks_wait kind, const void *obj);
void ks__wake_first(enum ks_wait kind, const void *obj);
/* After a failure: the point the caller stands at (main only). */
void ks__failed_point(void);
/* A misuse the real primitive would make undefined: report and abort. */
_Noreturn void ks__misuse(const char *what, const char *site);

/* The baton of the threads engine (ctl.c): set t's futex word and wake it;
 * park until the own word is set. */
void ks__baton_give(struct ks_lthread *t);
void ks__baton_wait(struct ks_lthread *t);

/* Failures (ctl_report.c).  Report kind, call cfg.on_failure, then unwind
 * self out of the run (when on_failure returns). */
void ks__fail(struct ks_lthread *self, ks_failure_t kind, const char *what);
/* Unwind the calling thread out of an aborted run (longjmp), if it can. */
void ks__abort_self(struct ks_lthread *t);
/* The on_failure of a config that names none: print and abort(). */
void ks__default_failure(void *ctx, ks_failure_t kind, const char *text);

/* The modelled happens-before edges (no-ops without TSan). */
void ks__tsan_acquire(const void *addr);
void ks__tsan_release(const void *addr);

/* The fiber engine (ctl_fiber.c).  All logical threads of a run are
 * fibers on the thread that called ks_ctl_begin, one pooled fiber slot per
 * logical thread id; a switch creates no happens-before edge for TSan
 * (__tsan_switch_to_fiber_no_sync). */
enum ks_fiber_leave {
	KS_FIBER_RUN = 0, /* the fiber runs again when switched to */
	KS_FIBER_PARK,    /* its logical thread finished: the fiber may carry the next */
};
void ks__fiber_main_init(void);
/* Make (or take from the pool) the fiber for logical thread id, starting
 * in entry() or resuming a parked one; 0 or an errno. */
int ks__fiber_make(int id, const char *name, void (*entry)(void));
/* Switch from the running fiber to next; returns when from is switched to
 * again (after KS_FIBER_PARK: carrying a new logical thread). */
void ks__fiber_switch(int from, int next, enum ks_fiber_leave how);
/* The first thing a new fiber does (finishes the switch into it). */
void ks__fiber_started(int id);
/* Forget logical thread id's sanitizer state at the end of a run. */
void ks__fiber_release(int id);

/* Strategies (ctl_strategy.c). */
void ks__strat_init(void);
void ks__strat_new_thread(struct ks_lthread *t);
void ks__strat_step(struct ks_lthread *cur);
void ks__strat_lower(struct ks_lthread *t);
/* Index into cand (n >= 2, cand[0] is the current thread when runnable,
 * the rest in id order after it), or -1 when a replay diverges. */
int ks__strat_pick(struct ks_lthread *const *cand, int n, bool self_runnable);
const char *ks__strat_name(ks_strategy_t s);
/* Access points (ctl_access.c).  At one, the sleeping threads follow
 * the runnable candidates (in id order after self); a sleeper chosen wakes
 * there, virtual time advancing to its wake time. */
/* KMGR_SCHED_ACCESS_POINTS=1 in the environment (read once). */
bool ks__access_points_env(void);
int ks__access_sleepers(const struct ks_lthread *self, struct ks_lthread **cand, int n);
void ks__access_chosen(struct ks_lthread *t);

#endif /* KSCHED_CTL_INT_H */
