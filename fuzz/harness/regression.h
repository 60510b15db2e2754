/*
 * regression.h - what a test kmgr-repro emit-c writes declares, and the
 * main() that runs it (regression.c).  A test is only its program: one
 * function per logical thread, straight-line kh_<kind>() calls, and one
 * declaration,
 *
 *   const kh_regression_t kh_test = {.sched = {0x00, 0x02}, .nsched = 2,
 *           .name = "fuzz_1_x", .target = "concurrent", .nc = 2, .qdepth = 4,
 *           .nthreads = 2, .threads = {thread_0, thread_1}};
 *
 * The config, the report hook, the run and the verdict are here, once.
 * Only the tests include this (through harness/embed.c): it defines main().
 */
#ifndef KREGRESSION_H
#define KREGRESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/harness.h"
#include "prog/prog.h"

/* An inline container: a LOAD names it as .model = KPROG_NTMPL + its
 * index in kh_regression_t.blobs (a template by its number, as the
 * program does). */
typedef struct kh_blob {
	const uint8_t *bytes;
	size_t len;
} kh_blob_t;

typedef struct kh_regression {
	const char *name;   /* printed with PASS, and FAIL after an ORACLE line */
	const char *target; /* the fuzz target the program came from */
	bool async;         /* the program's config */
	unsigned nc, qdepth, nthreads;
	const char *plan; /* its fault plan (kfault_plan_parse), NULL: none */
	/* logical thread t runs threads[t] (NULL: a thread without operations) */
	void (*threads[KPROG_MAX_THREADS])(void);
	const kh_blob_t *blobs; /* inline containers */
	unsigned nblobs;
	size_t nsched; /* the decision bytes */
	uint8_t sched[KPROG_MAX_SCHED];
	unsigned nap; /* memory access points (prog.h) */
	struct {
		uint8_t thread;
		uint32_t point, k;
	} ap[KPROG_MAX_AP];
	/* bit i: ap[i] fires after each release from its point on (a field of
	 * its own, so that tests emitted before it compile unchanged) */
	uint8_t ap_every;
} kh_regression_t;

/* The test's declaration. */
extern const kh_regression_t kh_test;
/* With KH_REGRESSION_TABLE, main() runs one of these instead, by name (a
 * table the build generates, NULL-terminated; regression.c). */
extern const kh_regression_t *const kh_regressions[];

/* Runs t once under the controlled scheduler with its decision bytes:
 * prints "NAME: PASS (N scheduling points, M preemptions)" and returns 0 on
 * a correct library; the oracle (or a sanitizer) aborts while the bug is
 * present.  2: the test itself is unusable (a bad fault plan or thread
 * count); 1: the runtime did not start without a fault to blame. */
int kh_regression_main(const kh_regression_t *t);

#endif /* KREGRESSION_H */
