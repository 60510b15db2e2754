/*
 * torture.h - the common module of the stress binaries, after the Linux
 * kernel's locktorture: one knob block parsed from argv, per-thread counters
 * and latency histograms, a progress line, a watchdog that dumps every
 * thread's role, last operation and wait site when progress stops, a text +
 * JSON summary ending in one rerunnable SUCCESS/FAILURE line, and a repro
 * file that `stress_X --replay FILE` reruns.  Each binary (refdrain.c,
 * async.c, churn.c, faults.c) is a small file of roles on top of it.
 *
 * Exit status: 0 every check held, 1 a check failed, 2 usage, 3 stall (the
 * watchdog fired, or the controlled scheduler reported a hang or deadlock).
 * docs/stress.md describes the binaries, the checks and the files.
 */
#ifndef TORTURE_H
#define TORTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_status.h>

#include "base/kfault.h"
#include "emu/emu.h"
#include "ktest_model.h"
#include "oracle/oracle.h"
#include "sched/ksched.h"

#define TORTURE_EXIT_OK     0
#define TORTURE_EXIT_CHECK  1
#define TORTURE_EXIT_USAGE  2
#define TORTURE_EXIT_STALL  3

#define TORTURE_MAX_THREADS 64
#define TORTURE_MAX_MODELS  64
#define TORTURE_MAX_HISTS   4
#define TORTURE_MAX_FAILS   8

/* The knob block: every parameter of a run, printed in the final line. */
typedef struct torture_knobs {
	uint32_t threads;       /* worker threads, split among the roles */
	uint32_t seconds;       /* free-running duration (0 = bounded by ops only) */
	uint64_t ops;           /* operations over all threads (0 = bounded by seconds) */
	uint64_t seed;          /* every worker's PRNG and PCT */
	uint32_t models;        /* model slots */
	uint32_t stall_seconds; /* watchdog bound */
	uint32_t pct_depth;     /* --controlled */
	uint64_t max_steps;     /* --controlled hang bound (0 = scheduler default) */
	uint32_t queue_depth;   /* implicit-async queue bound (stress_async) */
	bool controlled;
	bool quiet;
	bool progress; /* force the progress line even when stdout is no tty */
	char fault[KFAULT_PLAN_TEXT_MAX +
	           1];  /* fault plan text (kfault_plan_parse form), "" for none */
	char json[512]; /* --json FILE */
	char repro_dir[512];
	char trace_file[512]; /* --replay: the file it came from */
	uint8_t *trace;       /* --replay of a controlled run: the decisions */
	size_t ntrace;
} torture_knobs_t;

/* Statuses counted by name; everything else lands in "other". */
#define TORTURE_NSTAT 29 /* the 28 NRT_STATUS values and "other" */

typedef struct torture_hist {
	uint64_t count;
	uint64_t sum;
	uint64_t max;
	uint64_t bucket[64 * 8];
} torture_hist_t;

struct torture;

/* One worker (a logical thread under --controlled). */
typedef struct torture_thread {
	struct torture *t;
	const char *role;
	uint32_t idx;      /* index among all workers */
	uint32_t role_idx; /* index among its role */
	ks_thread_t th;
	void *(*fn)(struct torture_thread *);
	uint64_t rng;
	ks_atomic_t ops;     /* operations done (progress) */
	ks_atomic_t tid;     /* kernel thread id, for the watchdog */
	ks_atomic_t done;    /* the thread function returned */
	ks_atomic_t last_op; /* index into torture_op_names */
	ks_atomic_t stat[TORTURE_NSTAT];
	torture_hist_t hist[TORTURE_MAX_HISTS];
	void *priv; /* the binary's per-thread state */
} torture_thread_t;

/* What a binary contributes: its roles and its checks. */
typedef struct torture_ops {
	const char *name;                          /* "stress_refdrain" */
	const char *summary;                       /* one line for --help */
	const char *hist_names[TORTURE_MAX_HISTS]; /* latency histograms, NULL-terminated */
	bool async_mode;                           /* nrt_init with implicit async */
	/* Called in the (controlled or free) run after nrt_init: load models,
	 * create workers with torture_spawn.  Nonzero aborts the run. */
	int (*setup)(struct torture *t);
	/* After every worker was joined, before nrt_close: final checks. */
	void (*teardown)(struct torture *t);
	/* Instead of the standard body (nrt_init, setup, run, join, teardown,
	 * nrt_close): a binary that needs rounds of its own (stress_faults). */
	void (*run)(struct torture *t);
	uint32_t default_models; /* 0: 2 */
	/* Extra lines for the text summary and members for the JSON. */
	void (*report)(struct torture *t, bool json, void *file);
} torture_ops_t;

typedef struct torture {
	const torture_ops_t *ops;
	torture_knobs_t k;
	int argc;
	char **argv;
	torture_thread_t th[TORTURE_MAX_THREADS];
	uint32_t nthreads;         /* main's count */
	ks_atomic_t nthreads_pub;  /* the same, published to the watchdog */
	ks_atomic_t stop;          /* set: every worker finishes its operation and returns */
	ks_atomic_t total_ops;     /* for the --ops bound */
	ks_atomic_t fails;         /* checks that failed */
	ks_atomic_t drains;        /* unloads that returned */
	ks_atomic_t main_progress; /* bumped by the main thread at each phase */
	ks_atomic_t main_phase;    /* a string literal: what main is doing */
	ks_atomic_t main_tid;
	char fail_msg[TORTURE_MAX_FAILS][256];
	uint64_t start_ns, end_ns; /* real time */
	int stall;                 /* 1: the run ended by a stall */
	void *priv;                /* the binary's state */
} torture_t;

/* ---- the entry point ---- */
int torture_main(const torture_ops_t *ops, int argc, char **argv);

/* ---- for the roles ---- */
/* Create a worker; fn runs until torture_should_stop.  0 or -1. */
int torture_spawn(torture_t *t, const char *role, void *(*fn)(torture_thread_t *), void *priv);
/* Count one operation; true when the run must end (stop flag or ops). */
bool torture_op_done(torture_thread_t *w);
bool torture_should_stop(const torture_t *t);
/* Start worker i again (same role and function; counters kept), after it
 * was joined: for binaries that run in rounds. */
int torture_respawn(torture_t *t, uint32_t i);
/* Join every worker (the standard body does it). */
void torture_join_all(torture_t *t);
/* The main thread's phase for the watchdog ("join" waits on workers). */
void torture_phase(torture_t *t, const char *phase);
/* Name the operation the thread is about to do (for the stall dump). */
void torture_set_op(torture_thread_t *w, const char *op);
/* Count a status. */
void torture_count(torture_thread_t *w, NRT_STATUS st);
/* A failed check: logged at once, first ones kept for the summary; stops
 * the run.  Safe from any thread, including the library's. */
void torture_fail(torture_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool torture_failed(const torture_t *t);
/* Latency sample (ns) into histogram h of this thread. */
void torture_hist_add(torture_thread_t *w, int h, uint64_t ns);
/* Real monotonic ns (latencies; never for decisions). */
uint64_t torture_now_ns(void);
/* The worker's PRNG (splitmix64). */
uint64_t torture_rand(torture_thread_t *w);
uint64_t torture_rand_below(torture_thread_t *w, uint64_t n);
/* A status this library may legitimately return (a known NRT_STATUS). */
bool torture_status_known(NRT_STATUS st);

/* ---- models and tensors shared by the binaries ---- */
#define TORTURE_IO_BYTES 64u
#define TORTURE_MAX_IO   4u /* inputs, and outputs, of one model */
_Static_assert(TORTURE_MAX_IO <= KT_NRT_MAX_IO, "the kit holds a model's tensors");
/* Container bytes of a model "tN": n_in inputs and n_out outputs of
 * TORTURE_IO_BYTES u8 each, nkbin subgraphs.  Caller free()s. */
NRT_STATUS torture_model_bytes(uint32_t n_in, uint32_t n_out, uint32_t nkbin, uint8_t **bytes,
                               size_t *len);

/* Per-thread tensors for a model of that shape (at most TORTURE_MAX_IO
 * inputs and outputs): the kit's tensors and sets (t.in_set, t.out_set), and what
 * each input was last filled with. */
typedef struct torture_io {
	kt_nrt_io_t t;
	uint8_t data[TORTURE_MAX_IO][TORTURE_IO_BYTES];
} torture_io_t;

NRT_STATUS torture_io_alloc(torture_io_t *io, uint32_t n_in, uint32_t n_out,
                            nrt_tensor_placement_t placement, int nc);
void torture_io_free(torture_io_t *io);
/* Fill the inputs with fresh bytes from the PRNG value. */
NRT_STATUS torture_io_fill(torture_io_t *io, uint64_t r);
/* Read the outputs and compare them with the compute formula; 0 when equal,
 * else the index of the first bad output plus one. */
int torture_io_verify(torture_io_t *io);

/* ---- the checks that watch the library from outside ---- */
/* The exec observer, its per-handle table, ids, reference counts and the
 * accounting after close are the oracle's (fuzz/oracle/oracle.h: the
 * fuzz runner and the emitted tests use the same code).  torture_main
 * installs its failure hook, which makes each violation a failed check
 * (torture_fail: "CHECK FAILED: <invariant>: <details>") and lets the run
 * end and report; the observer is attached from nrt_init to nrt_close.
 * A load publishes its id only after oracle_note_loaded(id). */
/* Call right after nrt_unload of id returned: counts a drain and marks
 * id unloaded (oracle_note_unloaded: nothing of it in flight any more,
 * and from now on a SUBMIT or START of it is a failed check). */
void torture_unloaded(torture_t *t, uint32_t id);
/* At quiescence (workers joined): once no execution is in flight, every
 * loaded model's reference count is back to zero (faults: a fault plan is
 * installed, and a failed registry snapshot skips the check).  When one is
 * not, the teardown's unload would wait for it forever: the run ends here
 * (repro file, FAILURE line, exit 1). */
void torture_check_refcounts(torture_t *t, bool faults);

#endif /* TORTURE_H */
