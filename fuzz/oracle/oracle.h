/*
 * oracle.h - the fuzz oracle, one module for the fuzz runner, the tests
 * kmgr-repro emits and the stress binaries (which use its observer, ids,
 * reference count and accounting checks through the failure hook):
 *   - the reference model (model.h): container descriptions and the
 *     status every operation's arguments predict;
 *   - the checks (check.c, values.c): outputs follow the compute formula, metadata
 *     matches the container, nothing executes on a model after its unload
 *     returned (the device execution observer and its per-handle table),
 *     ids only grow and are never reused, reference counts are back to
 *     zero at quiescence, after close the device and the host accounting
 *     are back where they started, and the model_parse target's
 *     canonical-form check;
 *   - the history (oracle.c): every per-model history of a concurrent run
 *     is linearizable, and single-threaded statuses match the model.
 *
 * A violation prints one stable line "ORACLE: <invariant>: <details>" (the
 * crash signature), lets the report hook add context, and aborts; unless a
 * failure hook is installed (oracle_set_fail_hook), which takes it instead.
 * Bookkeeping uses the quiet atomics of ksched.h: the oracle never adds a
 * scheduling point, so it never changes the interleavings a run explores.
 */
#ifndef KORACLE_H
#define KORACLE_H

#include <stdbool.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_async.h>

#include "oracle/model.h"
#include "sched/ksched.h"

#define ORACLE_MAX_HIST 256

/* ---- failures (check.c) ---- */
/* Called after the ORACLE line, before abort(): adds context (the program,
 * the test's name). */
typedef void (*oracle_report_fn)(void *ctx, const char *invariant, const char *msg);
void oracle_set_report(oracle_report_fn fn, void *ctx);
/* The failure hook.  NULL (the default: the fuzz runner, the emitted
 * tests): oracle_fail prints the ORACLE line, calls the report hook and
 * aborts.  Installed (the stress binaries, which count a failure, stop the
 * run and report at the end): oracle_fail hands it the violation instead,
 * from whichever thread found it (a device thread, for the observer), and
 * returns; the check goes on as if it had held.  Set it before the run. */
typedef void (*oracle_fail_fn)(void *ctx, const char *invariant, const char *msg);
void oracle_set_fail_hook(oracle_fail_fn fn, void *ctx);
/* Returns only when a failure hook is installed.  Never a tail call: the
 * frame of the check that failed stays under it in the abort's stack, which
 * is the crash signature (tools/kmgr-repro/signature.c). */
#if defined(__has_attribute)
#if __has_attribute(not_tail_called)
#define ORACLE_NOT_TAIL_CALLED __attribute__((not_tail_called))
#endif
#endif
#ifndef ORACLE_NOT_TAIL_CALLED
#define ORACLE_NOT_TAIL_CALLED
#endif
ORACLE_NOT_TAIL_CALLED __attribute__((format(printf, 2, 3))) void oracle_fail(const char *invariant,
                                                                              const char *fmt, ...);

/* ---- a run (check.c) ---- */
/* Before nrt_init: the host accounting baseline and a fresh id window. */
void oracle_begin(void);
/* The device execution observer (after nrt_init, until before close). */
void oracle_attach(void);
void oracle_detach(void);

/* ---- the per-handle table the observer keeps (check.c) ---- */
#define ORACLE_NN_SLOTS 4096
typedef struct oracle_nn {
	ks_atomic_t id;        /* which H_NN this entry tracks */
	ks_atomic_t h_model;   /* learned from its first SUBMIT */
	ks_atomic_t unloaded;  /* 0, or the unload clock once its unload returned */
	ks_atomic_t inflight;  /* SUBMIT - COMPLETE - CANCEL */
	ks_atomic_t submits;   /* SUBMIT */
	ks_atomic_t completes; /* COMPLETE + CANCEL */
} oracle_nn_t;

/* A successful load returned id: it is above every id issued before and
 * was never handed out (ids only grow), kmgr_last_nn_id() has reached it
 * (a read lock: two scheduling points, the same in every caller), and the
 * observer tracks it from now on (call before the id is published). */
void oracle_note_loaded(uint32_t id);
oracle_nn_t *oracle_nn_get(uint32_t id); /* NULL when the slot moved on */
/* kmgr_unload_nn(id) returned success: from now on a SUBMIT or START of
 * id is a finding.  drained: also check that nothing of id is in flight
 * (the sync paths; the explicit-async work may outlive an async unload,
 * seed §4).  Returns the unload clock it was marked with. */
int64_t oracle_note_unloaded(uint32_t id, bool drained);
/* How many unloads have returned so far: an id whose 'unloaded' is <= a
 * value read before an operation was gone before it. */
int64_t oracle_unload_clock(void);
/* Executions submitted and not yet completed or cancelled, all models. */
int64_t oracle_inflight(void);

/* ---- end-of-run checks (check.c) ---- */
/* Every loaded model's reference count is back to zero (quiescence).  With
 * faults_possible a failed snapshot allocation skips the check. */
void oracle_check_refcounts(bool faults_possible);
/* After nrt_close: device accounting zero, host back to the baseline. */
void oracle_check_closed(const char *when);

/* ---- values against the reference model (values.c) ---- */
/* The outputs of a successful execution follow the compute formula (the
 * oracle's own, values.c); in[] the bytes each input held, out[] the
 * output tensors (NULL: left out), both in model order. */
void oracle_check_outputs(unsigned op, const oracle_io_t *io, const uint8_t *const *in,
                          nrt_tensor_t *const *out);
/* idx: inputs then outputs, each side in the facade's (name) order. */
void oracle_check_tensor_info(unsigned op, const oracle_io_t *io, uint32_t idx, const char *name,
                              size_t size);
void oracle_check_ifmap_valid(unsigned op, const char *name, bool valid, bool want);
void oracle_check_counts(unsigned op, const oracle_io_t *io, uint32_t n_in, bool with_out,
                         uint32_t n_out);
/* kmgr_get_nc_info's answer (start, count) for model id: the placement
 * its load asked for on an nc-core device, and the start core the harness
 * found right after the load (a placement never moves). */
void oracle_check_nc_info(unsigned op, uint32_t id, oracle_placement_t want, unsigned nc,
                          uint32_t found_start, uint32_t start, uint32_t count);
/* nrta_error_tracker_get_list answered rc, list[0..n) (docs/api-contract.md,
 * "Error trackers"), for a tracker that holds the one execution seq: the
 * failures completed since the previous call, so seq at most once over
 * all calls (*reported: named before; set when named now), with a status
 * other than success, and only when it may fail (may_fail: a fault, an
 * unload or a close could end it); faults: a kalloc fault may refuse the
 * list (NRT_RESOURCE). */
void oracle_check_error_list(unsigned op, nrta_seq_t seq, NRT_STATUS rc, const nrta_error_t *list,
                             size_t n, bool may_fail, bool faults, bool *reported);
/* The model_parse target: an accepted container re-serializes to exactly
 * its bytes, a failed parse hands out no model, the live kalloc count is
 * unchanged; then the same with the trailing CRC-32 recomputed, so that
 * mutations reach the field checks behind the checksum. */
void oracle_model_parse(const uint8_t *data, size_t size);

/* ---- the history (oracle.c) ---- */
/* What a history record is to the linearizability check. */
typedef enum oracle_rec {
	ORACLE_LOAD,
	ORACLE_UNLOAD,
	ORACLE_UNLOAD_ALL,
	ORACLE_EXEC,
	ORACLE_READ, /* any other op on a model: it sees it or not */
} oracle_rec_t;

/* Per run: empty history. */
void oracle_history_begin(void);
/* A logical clock for op intervals (no scheduling point). */
uint64_t oracle_tick(void);
/* An op (what: its name) on model id (0 for none) over [t0, t1]. */
void oracle_record(unsigned op, oracle_rec_t rec, const char *what, uint32_t id, uint64_t t0,
                   uint64_t t1, NRT_STATUS status);
/* nrt_close as an operation (the api_nrt target): its interval on the
 * clock (the first close of the run; a later one finds nothing to close). */
void oracle_close_begin(uint64_t t0);
void oracle_close_end(uint64_t t1);
/* A public call over [t0, t1] answered got: NRT_CLOSED only once a close
 * had begun, and nothing else once one had returned before t0.  Returns
 * true for NRT_CLOSED (the caller checks nothing more). */
bool oracle_check_lifecycle(unsigned op, const char *what, NRT_STATUS got, uint64_t t0,
                            uint64_t t1);
/* A call that answers in every state (nrt_init, the core counts) over
 * [t0, t1]: one that ended before any close began must have given the
 * runtime's answer (up_ok), one that began after nrt_close returned the
 * closed one (closed_ok), one that overlaps a close either. */
void oracle_check_either(unsigned op, const char *what, bool up_ok, bool closed_ok, uint64_t t0,
                         uint64_t t1);
/* Per-model linearizability of the recorded history (at quiescence). */
void oracle_check_history(void);
/* A status against a prediction: exact where the reference model applies
 * (single-threaded, no fault fired since the op began); otherwise the
 * argument contract only (a call whose arguments demand an error never
 * succeeds; without faults only the predicted statuses or INVALID_HANDLE,
 * a concurrent unload, come back). */
void oracle_check_status(unsigned op, const char *what, NRT_STATUS got, oracle_expect_t e,
                         bool exact, bool faults);

/* ---- lifecycle.c: the frame of a checked run (harness and stress) ---- */
/* nrt_init, then the observer attached (only on success). */
NRT_STATUS oracle_open(void);
/* Waits until no execution is in flight on the device. */
void oracle_quiesce(void);
/* nrt_close; true when a fault fired inside it. */
bool oracle_close_runtime(void);

/* Silences the library's log (fuzz inputs are wrong on purpose, and the
 * chatter costs exec/s) except the lines it writes just before aborting on
 * a broken invariant of its own, which keep a crash readable, and the lines
 * of a broken invariant it survives, which fail the run (oracle_fail:
 * inflight-on-removed-model, staged-at-close).  Lives here,
 * below the targets: the sink runs on library threads, and under TSan only
 * the target files carry libFuzzer's (racy) counters. */
void oracle_log_quiet(void); /* logfilter.c */
/* Error lines that answered the harness's own misuse, counted instead of
 * printed (a line at exit says how many). */
uint64_t oracle_log_misuse_lines(void);

#endif /* KORACLE_H */
