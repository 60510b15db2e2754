/*
 * kctl.h - driving the controlled backend: run a piece of code with exactly
 * one logical thread at a time, every ksched.h call a scheduling point, and
 * the choice at each point taken from a decision source.  Used by the fuzz
 * targets, stress --controlled and the reproducer.  docs/scheduler.md
 * explains scheduling points, the byte encoding, PCT, replay and divergence.
 *
 * Usage:
 *	ks_ctl_config_t cfg;
 *	ks_ctl_config_init(&cfg);
 *	cfg.strategy = KS_STRAT_BYTES; cfg.bytes = data; cfg.nbytes = n;
 *	ks_ctl_begin(&cfg);     // the calling thread becomes logical thread 0
 *	... create threads with ks_thread_create, join them ...
 *	ks_ctl_end(&result);    // every other logical thread must be joined
 */
#ifndef KCTL_H
#define KCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ksched.h"

#define KS_CTL_MAX_THREADS 64
/* Memory access points an input may ask for in one run (ks_ctl_config_t.ap). */
#define KS_CTL_MAX_AP 8

typedef enum ks_strategy {
	KS_STRAT_BYTES = 0, /* decisions from bytes; deterministic fallback when they run out */
	KS_STRAT_PCT,       /* PCT with a seed and depth d */
	KS_STRAT_RR,        /* round-robin */
	KS_STRAT_REPLAY,    /* a recorded trace */
} ks_strategy_t;

/*
 * How logical threads are carried.  Both take the same decisions at the
 * same scheduling points, so a trace recorded on one replays on the other
 * with the same step hash.
 *   FIBERS: every logical thread is a fiber (its own stack, swapcontext) on
 *     the thread that called ks_ctl_begin: a switch costs well under a
 *     microsecond, and no real thread is created.  The default.
 *   THREADS: every logical thread is a real pthread and a baton (a futex
 *     word per thread) lets exactly one run, as Coyote does; a switch is a
 *     futex wake plus wait (microseconds).  Selected by the config, or for
 *     every run of a process by KMGR_SCHED_ENGINE=threads in the
 *     environment (read by ks_ctl_config_init).
 */
typedef enum ks_engine {
	KS_ENGINE_FIBERS = 0,
	KS_ENGINE_THREADS,
} ks_engine_t;

/* What ended a controlled run badly.  Each has a stable signature line. */
typedef enum ks_failure {
	KS_OK = 0,
	KS_DEADLOCK,   /* every logical thread blocked: "KSCHED DEADLOCK" */
	KS_HANG,       /* the step bound was hit: "KSCHED HANG" (livelock, endless drain) */
	KS_DIVERGENCE, /* replay named a thread that is not runnable: "KSCHED DIVERGENCE" */
} ks_failure_t;

/* Called on a failure with the kind and a multi-line report (each thread's
 * name, state and wait site).  The default prints the report to stderr and
 * aborts, so fuzzers see a crash with a stable signature. */
typedef void (*ks_ctl_failure_fn)(void *ctx, ks_failure_t kind, const char *report);

typedef struct ks_ctl_config {
	ks_engine_t engine;
	ks_strategy_t strategy;
	const uint8_t *bytes; /* KS_STRAT_BYTES */
	size_t nbytes;
	uint64_t seed;        /* KS_STRAT_PCT */
	uint32_t pct_depth;   /* d >= 1 */
	uint64_t pct_k_hint;  /* expected number of steps, for change points */
	const uint8_t *trace; /* KS_STRAT_REPLAY: a recorded trace (ks_ctl_result_t) */
	size_t ntrace;
	uint64_t max_steps; /* the hang bound; 0 = default (1,000,000) */
	/* ks_access_point() is a scheduling point (docs/scheduler.md, "Access
	 * points"); also on for every run of a process with
	 * KMGR_SCHED_ACCESS_POINTS=1 in the environment.  Off by default: it
	 * adds steps and decisions, so schedules recorded without it replay
	 * differently with it. */
	bool access_points;
	/* Memory access points (ctl_access.c, docs/scheduler.md): in a build
	 * whose code under test carries the compiler's load/store callbacks,
	 * the k-th heap or global access of logical thread `thread` (its id:
	 * 0 is main) after that thread's `point`-th release (an unlock, a post,
	 * an atomic subtraction) is itself a scheduling point, at which
	 * sleepers are candidates, as at ks_access_point().  A window opens at
	 * a release and the access that races it follows within a few.  Chosen by the input, a few per run, so a run adds
	 * ap_n decisions, not one per access.  ap_n = 0: no access is a point
	 * (the default; every schedule recorded before replays as it was). */
	uint32_t ap_n;
	struct {
		uint8_t thread;
		uint32_t point; /* the thread's releases counted from 0 */
		uint32_t k;     /* >= 1 */
		/* the k-th access after each release from `point` on, not only
		 * after that one: a window late in a long-lived thread is hit by
		 * any point before it (ctl_access.c) */
		bool every;
	} ap[KS_CTL_MAX_AP];
	ks_ctl_failure_fn on_failure;
	void *failure_ctx;
} ks_ctl_config_t;

void ks_ctl_config_init(ks_ctl_config_t *cfg);

/* Start a controlled run; the caller becomes logical thread 0 ("main").
 * Returns 0, or -1 if a run is already active. */
int ks_ctl_begin(const ks_ctl_config_t *cfg);

typedef struct ks_ctl_result {
	ks_failure_t failure;
	uint64_t steps;       /* scheduling points passed */
	uint64_t switches;    /* times the running thread changed */
	uint64_t preemptions; /* switches away from a thread that could have continued */
	uint32_t threads;     /* logical threads created, main included */
	/* The decisions taken: one byte each, the chosen logical thread's id, at
	 * every scheduling point where more than one thread was runnable.  Owned
	 * by the scheduler until the next ks_ctl_begin. */
	const uint8_t *trace;
	size_t ntrace;
	bool trace_truncated; /* more decisions than KS_CTL_TRACE_MAX were taken */
	/* FNV-1a over every (thread id, site text) step: equal hashes mean the
	 * same step sequence (a replay check that does not store the steps). */
	uint64_t step_hash;
} ks_ctl_result_t;

/* End the run (only thread 0).  Logical threads still alive are waited for
 * as by a join (a deadlock among them is reported as usual) and every real
 * thread of the run is joined; a later ks_thread_join of one returns 0. */
void ks_ctl_end(ks_ctl_result_t *result);

/*
 * Run body(arg) as logical thread 0 between ks_ctl_begin and ks_ctl_end.
 * When on_failure returns instead of aborting, every logical thread is
 * unwound (longjmp) out of the failed run, main back to here, so the
 * caller can start the next run; objects the body touched are then in an
 * undefined state and must be initialised again.  Returns 0, or -1 if a
 * run is already active.
 */
int ks_ctl_run(const ks_ctl_config_t *cfg, void (*body)(void *), void *arg, ks_ctl_result_t *res);

/* The trace as text ("0 1 1 0 2 ...") and back, for crash reports. */
int ks_ctl_trace_format(const uint8_t *trace, size_t n, char *buf, size_t len);
int ks_ctl_trace_parse(const char *text, uint8_t **trace, size_t *n); /* malloc'd */

/* The current logical thread's id (0 = main), -1 outside a controlled run. */
int ks_ctl_self(void);

const char *ks_ctl_engine_name(ks_engine_t e);

/* The spin detector (ctl_spin.c), for every later run of the process:
 * KS_SPIN_BOUND heap or global accesses without a scheduling point are a
 * yield, and a loop no other thread ends is KSCHED HANG.  Off by default
 * (kpt turns it on). */
void ks_ctl_spin_detect(bool on);

#endif /* KCTL_H */
