/*
 * kt_fault.c - the fault plans of ktest_fault.h.
 */
#include "ktest_fault.h"

#include "base/kfault.h"

void kt_fault_alloc(uint32_t site, uint32_t nth)
{
	kfault_plan_t plan = {.n = 1};

	plan.e[0] = (kfault_entry_t){KFAULT_FAIL_ALLOC, site, nth, 0};
	kfault_set_plan(&plan);
}

uint32_t kt_faultsim(uint32_t site, uint32_t max, int (*body)(void *ctx),
                     void (*check)(void *ctx, const kt_faultsim_run_t *run), void *ctx)
{
	kt_faultsim_run_t run;

	for (run.n = 1; run.n < max; run.n++) {
		kt_fault_alloc(site, run.n);
		run.rc = body(ctx);
		run.fired = kfault_fired();
		kfault_clear();
		if (check)
			check(ctx, &run);
		if (run.fired == 0)
			break;
	}
	return run.n;
}
