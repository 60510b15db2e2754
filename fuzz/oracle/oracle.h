/*
 * oracle.h - the fuzz oracle: a reference model of the facade's sequential
 * semantics for single-threaded runs (the differential half, as OpenSSL's
 * bignum target), and invariants for concurrent runs: outputs follow the
 * compute formula, nothing executes on a model after its unload returned,
 * every per-model history is linearizable, reference counts return to
 * zero, ids are never reused, and after close the device and the host
 * accounting are back where they started.
 *
 * A violation prints one stable line "ORACLE: <invariant>: <details>" (the
 * crash signature) followed by context, and aborts.
 */
#ifndef KORACLE_H
#define KORACLE_H

#include <stdbool.h>
#include <stdint.h>

#include <nrt/nrt_status.h>

#include "prog/prog.h"

#define ORACLE_MAX_HIST 256

/* What the reference model says about one op's status. */
typedef struct oracle_expect {
	bool known;      /* a prediction exists */
	NRT_STATUS want; /* the predicted status */
	NRT_STATUS alt;  /* a second acceptable status (e.g. QUEUE_FULL), or want */
} oracle_expect_t;

__attribute__((noreturn, format(printf, 2, 3))) void oracle_fail(const char *invariant,
                                                                 const char *fmt, ...);

/* Per program: reset the history and note the host allocation baseline. */
void oracle_begin(const kprog_t *p);
/* Installs the device execution observer (call after nrt_init). */
void oracle_attach(void);
void oracle_detach(void);

/* A logical clock for op intervals (no scheduling point). */
uint64_t oracle_tick(void);

/* The history: an op on model id (0 for none) over [t0, t1]. */
void oracle_record(unsigned op_index, unsigned kind, uint32_t id, uint64_t t0, uint64_t t1,
                   NRT_STATUS status);

/* kmgr_unload_nn(id) returned success at tick t. */
void oracle_note_unloaded(uint32_t id, uint64_t t);
/* A new id from a successful load: must exceed every id seen before. */
void oracle_note_loaded(uint32_t id);

/* Checks a status against the reference model's prediction. */
void oracle_check_status(unsigned op_index, const char *what, NRT_STATUS got,
                         const oracle_expect_t *e);

/* Per-model linearizability of the recorded history (call at quiescence).
 * faults_possible relaxes it to SUCCESS / INVALID_HANDLE ops only. */
void oracle_check_history(void);
/* Every loaded model's reference count is back to zero (quiescence).  With
 * faults_possible a failed snapshot allocation skips the check. */
void oracle_check_refcounts(bool faults_possible);
/* After nrt_close: device and host accounting back to the baseline. */
void oracle_check_closed(void);

/* For reports: the program text is printed by oracle_fail when set. */
void oracle_set_context(const kprog_t *p);

#endif /* KORACLE_H */
