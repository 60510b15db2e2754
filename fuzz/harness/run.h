/*
 * run.h - running programs: the runner (run.c) maps a kprog_t onto the
 * harness's operations and runs it on a fresh runtime; the fuzz targets'
 * entry (target.c) decodes, shapes and runs an input.  The program model
 * itself (prog/prog.h) knows nothing of running: a program is data.
 */
#ifndef KH_RUN_H
#define KH_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prog/prog.h"

/* ---- run.c ---- */
typedef enum kprog_backend {
	KPROG_CONTROLLED = 0, /* lib/sched's controlled scheduler, decisions = p->sched */
	KPROG_FREE,           /* free-running real threads (production backend) */
} kprog_backend_t;

typedef struct kprog_run_opts {
	kprog_backend_t backend;
	bool reference;     /* single-threaded runs: check statuses against the reference model */
	bool verbose;       /* each op and its status, and the library's whole log */
	uint64_t max_steps; /* controlled: the hang bound (0 = the scheduler's default) */
	/* Implicit-async runs: also run explicit SCHEDULE ops.  Off by default:
	 * the facade's async unload stops the async worker but not the sync XU
	 * (seed §4), so explicit work outlives its model's unload (a known,
	 * reported hazard: ORACLE exec-after-unload). */
	bool async_mix;
} kprog_run_opts_t;

typedef struct kprog_run_result {
	uint32_t ops_run;       /* ops that reached the library */
	uint32_t ops_ok;        /* ... and returned NRT_SUCCESS */
	uint32_t execs_checked; /* successful executions whose outputs were verified */
	uint64_t steps;         /* controlled: scheduling points passed */
	uint32_t ntrace;        /* controlled: decisions recorded */
} kprog_run_result_t;

void kprog_run_opts_init(kprog_run_opts_t *o);
/* Runs p on a fresh runtime: nrt_init, the threads, everything joined,
 * completed, unloaded and closed; the oracle checks along the way and
 * aborts with "ORACLE: ..." on a violation.  Returns 0, or -1 when the
 * runtime could not even start (bad config: not a finding). */
int kprog_run(const kprog_t *p, const kprog_run_opts_t *o, kprog_run_result_t *r);
/* The decision trace of the last controlled run as text (for reports). */
int kprog_last_trace(char *buf, size_t len);

/* ---- target.c ---- */
/* What a program fuzz target does with an input: decode, kprog_shape as
 * target, kprog_run with the options the environment gives (target.c).
 * Returns 0 (libFuzzer's contract). */
int kfuzz_run(const uint8_t *data, size_t size, const char *target);
/* The once-per-process set-up, before the first input (target.c). */
int kfuzz_initialize(void);
/* The same for a decoded and shaped program (kmgr-repro's child). */
int kfuzz_run_program(const kprog_t *p);

/* ---- slice.c ---- */
/* The time slice a worker asks for (50 ms; the kernel's default here is
 * 1.4 ms): 10, 25, 50 and 100 ms all cut the cost of two workers sharing
 * a CPU alike, 50 ms is the middle of them. */
#define KFUZZ_WORKER_SLICE_NS 50000000u
/* Asks the kernel for KFUZZ_WORKER_SLICE_NS slices for the calling thread
 * and what it starts (a hint: 0 when taken, -1 when the kernel said no or
 * the task is not SCHED_OTHER/SCHED_BATCH; nothing else changes). */
int kfuzz_long_slices(void);

#endif /* KH_RUN_H */
