/*
 * ktest_fault.h - fault plans for tests: fail one allocation, and the
 * fail-nth sweep (SQLite's do_faultsim_test, syzkaller's fail_nth): fail
 * the 1st, 2nd, ... allocation of a body in turn until it runs clean.
 */
#ifndef KTEST_FAULT_H
#define KTEST_FAULT_H

#include <stdint.h>

/* Install a plan failing the nth allocation at site (KFAULT_SITE_ANY: the
 * nth of any site). */
void kt_fault_alloc(uint32_t site, uint32_t nth);

/* One run of a sweep, as check sees it. */
typedef struct kt_faultsim_run {
	uint32_t n;     /* the allocation this run failed (1, 2, ...) */
	uint64_t fired; /* faults the plan fired: 0 is the clean run, the last */
	int rc;         /* what body returned */
} kt_faultsim_run_t;

/* For n = 1 .. max - 1: install a plan failing the nth allocation at site,
 * rc = body(ctx), note kfault_fired() and clear the plan, then
 * check(ctx, &run) (with no plan installed); stop after the first run in
 * which no fault fired.  Returns that run's n, or max when every run fired
 * (callers assert KT_LT(n, max) and a lower bound of their own). */
uint32_t kt_faultsim(uint32_t site, uint32_t max, int (*body)(void *ctx),
                     void (*check)(void *ctx, const kt_faultsim_run_t *run), void *ctx);

#endif /* KTEST_FAULT_H */
