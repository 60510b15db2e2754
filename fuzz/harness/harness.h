/*
 * harness.h - the one harness behind the fuzz runner and the regression
 * tests kmgr-repro emits: a fresh runtime per run, model slots shared by
 * the logical threads, tensor slots per thread, the executions still
 * pending, and every operation of a program as a call with named
 * arguments:
 *
 *   kh_load(0, 0, &(kh_args_t){.slot = 1, .model = 0, .start = -1, .count = -1});
 *   kh_exec(3, 1, &(kh_args_t){.slot = 1, .in = KPROG_PLACE_DEV, .repeat = 2});
 *
 * (op index, logical thread, arguments named as the fields of the op's row
 * in prog/kinds.c).  The fuzz runner (harness/run.c) interprets a kprog_t
 * into these calls; an emitted test makes them in straight lines.  Both
 * therefore make the same library calls and the same scheduling points
 * in the same order, which is what lets a test spend the program's
 * decision bytes as the fuzz target did.  Every check is the oracle's
 * (oracle/oracle.h); the harness only reports through kh_hooks_t.
 */
#ifndef KHARNESS_H
#define KHARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt.h>

#include "base/kfault.h"
#include "oracle/oracle.h"
#include "prog/prog.h"
#include "sched/kctl.h"

/* A container a program loads: its bytes and the oracle's description
 * (kh_run describes every entry not yet described, before the runtime
 * starts; a caller may keep described entries across runs). */
typedef struct kh_model {
	const uint8_t *bytes;
	size_t len;
	bool described;
	oracle_io_t io;
} kh_model_t;

/* The arguments of every operation, by the field names of prog/kinds.c
 * (LOAD names its container by index in kh_config_t.models, not by
 * template).  An operation reads only its own fields.  One list, KH_ARGS:
 * the struct's members and kh_field_offset's table; a kinds.c field it
 * lacks stops the runner at its first program (run.c). */
/* clang-format off */
#define KH_ARGS(X) \
	X(slot) X(model) X(start) X(count)          /* load (slot: every model op) */ \
	X(in) X(out) X(repeat) X(queue)             /* exec, schedule */ \
	X(which) X(bogus)                           /* is_completed */ \
	X(lnc) X(xu)                                /* get_sequence (and queue) */ \
	X(index) X(name) X(io) X(on) X(mac) X(what) /* metadata, stale, badargs */ \
	X(site) X(nth)                              /* fault */ \
	X(ts) X(place) X(size) X(off) X(len)        /* tensor slots */ \
	X(tmpl)                                     /* load: the program's, unused here */ \
	X(old)                                      /* the handle the last nrt_unload retired */ \
	X(fw) X(visible) X(core) X(inflight)        /* nrt_init: framework, env forms */ \
	X(cb)                                       /* nrt_callback: a, b or NULL */
/* clang-format on */

#define KH_MEMBER(f) int16_t f;
typedef struct kh_args {
	KH_ARGS(KH_MEMBER)
} kh_args_t;
#undef KH_MEMBER

/* The `what` selectors (prog/prog.h lists them, with their names):
 * STALE's, the entry point an unloaded id goes to; BADARGS's, the wrong
 * argument a loaded model is called with; nrt_meta's, the public call on
 * the slot's handle.  The last of each also stands for every larger value. */
#define KH_ENUM(id, name) id,
enum kh_stale_call { KPROG_STALE_WHATS(KH_ENUM) };
enum kh_bad_call { KPROG_BAD_WHATS(KH_ENUM) };
enum kh_nrt_meta_what { KPROG_NRT_META_WHATS(KH_ENUM) };
enum kh_nrt_callback { KPROG_NRT_CALLBACK_WHATS(KH_ENUM) };
#undef KH_ENUM

/* One operation: op is its index in the program (reports, tensor data),
 * thread the logical thread that runs it. */
typedef void (*kh_op_fn)(unsigned op, unsigned thread, const kh_args_t *a);

/* kh_<name> for every kind (the kinds table's names). */
void kh_load(unsigned op, unsigned thread, const kh_args_t *a);
void kh_unload(unsigned op, unsigned thread, const kh_args_t *a);
void kh_unload_all(unsigned op, unsigned thread, const kh_args_t *a);
void kh_exec(unsigned op, unsigned thread, const kh_args_t *a);
void kh_schedule(unsigned op, unsigned thread, const kh_args_t *a);
void kh_is_completed(unsigned op, unsigned thread, const kh_args_t *a);
void kh_get_sequence(unsigned op, unsigned thread, const kh_args_t *a);
void kh_tensor_info(unsigned op, unsigned thread, const kh_args_t *a);
void kh_is_valid_ifmap(unsigned op, unsigned thread, const kh_args_t *a);
void kh_ifmap_count(unsigned op, unsigned thread, const kh_args_t *a);
void kh_set_profiling(unsigned op, unsigned thread, const kh_args_t *a);
void kh_stale(unsigned op, unsigned thread, const kh_args_t *a);
void kh_fault(unsigned op, unsigned thread, const kh_args_t *a);
void kh_talloc(unsigned op, unsigned thread, const kh_args_t *a);
void kh_tfree(unsigned op, unsigned thread, const kh_args_t *a);
void kh_twrite(unsigned op, unsigned thread, const kh_args_t *a);
void kh_tread(unsigned op, unsigned thread, const kh_args_t *a);
void kh_badargs(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nc_info(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_load(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_unload(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_exec(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_meta(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_schedule(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_close(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_init(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_tracker(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_callback(unsigned op, unsigned thread, const kh_args_t *a);

/* The same, indexed by kind (the interpreter's dispatch). */
extern const kh_op_fn kh_ops[KOP__COUNT];
/* Where the field named name (a kinds-table field) lives in kh_args_t:
 * its offset, or -1. */
int kh_field_offset(const char *name);

/* What the harness reports; any hook may be NULL. */
typedef struct kh_hooks {
	/* after each call that reached the library */
	void (*op_done)(void *ctx, unsigned op, const char *what, NRT_STATUS rc);
	/* an oracle failure, after its ORACLE line (oracle_set_report) */
	oracle_report_fn report;
	void *ctx;
} kh_hooks_t;

typedef struct kh_config {
	bool async;         /* implicit-async mode */
	unsigned nc;        /* emulated cores */
	unsigned qdepth;    /* async queue depth */
	unsigned nthreads;  /* logical threads, 1..KPROG_MAX_THREADS */
	kfault_plan_t plan; /* installed before nrt_init (n == 0: none) */
	kh_model_t *models;
	unsigned nmodels;
	/* runs logical thread t's operations (thread 0 on the caller), with
	 * thread_ctx: the caller's program, never a global of the harness's */
	void (*thread)(void *thread_ctx, unsigned t);
	void *thread_ctx;
	bool free_running;    /* real threads instead of the controlled scheduler */
	const uint8_t *sched; /* controlled: the decision bytes */
	size_t nsched;
	/* controlled: memory access points (ks_ctl_config_t.ap) */
	unsigned nap;
	struct {
		uint8_t thread;
		uint32_t point, k;
		bool every; /* after each release from point on */
	} ap[KS_CTL_MAX_AP];
	uint64_t max_steps; /* controlled: the hang bound (0 = the default) */
	bool reference;     /* single-threaded: statuses checked exactly */
	bool async_mix;     /* implicit async: run explicit SCHEDULE ops too */
	/* the library's whole log, as the process set it up (kprog run -v,
	 * KMGR_FUZZ_VERBOSE); otherwise every run has the oracle's log filter
	 * (oracle_log_quiet):
	 * broken-invariant lines fail the run, the answers to the harness's own
	 * misuse are counted, not printed */
	bool full_log;
	kh_hooks_t hooks;
} kh_config_t;

typedef struct kh_result {
	bool started;           /* nrt_init succeeded */
	uint32_t ops_run;       /* ops that reached the library */
	uint32_t ops_ok;        /* ... and returned NRT_SUCCESS */
	uint32_t execs_checked; /* successful executions whose outputs were verified */
	uint64_t steps;         /* controlled: scheduling points passed */
	uint64_t preemptions;
	const uint8_t *trace; /* controlled: the decisions taken (until the next run) */
	size_t ntrace;
} kh_result_t;

void kh_config_init(kh_config_t *c);
/* Runs the program on a fresh runtime: nrt_init with its config and fault
 * plan, the threads, everything joined and completed, the oracle's end
 * checks, every tensor freed, nrt_close and the accounting check.  The
 * oracle aborts on a violation.  Returns 0, or -1 when the runtime did not
 * start without a fault plan to blame (a bad config: not a finding). */
int kh_run(const kh_config_t *c, kh_result_t *r);

#endif /* KHARNESS_H */
