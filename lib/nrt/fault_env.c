/*
 * fault_env.c - the KMGR_FAULT hook of the test builds: nrt_init installs a
 * fault plan named in the environment, so ci/fault-sweep.sh can run any
 * client unchanged.  A seam of its own, apart from the lifecycle in init.c:
 * the installed library is compiled without it (KMGR_NRT_FAULT_ENV unset),
 * and only the fault sweep, not the fuzz targets, runs it (the harness
 * installs its plans through kfault_set_plan).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/kfault.h"
#include "emu/emu.h"
#include "nrt_internal.h"

#ifdef KMGR_NRT_FAULT_ENV
/*
 * Test builds (CMake option KMGR_NRT_FAULT_ENV, on in the sanitizer presets,
 * never in the installed library): the first nrt_init of a process installs
 * the fault plan in KMGR_FAULT (lib/base/kfault.h), so a fault sweep can run
 * any client unchanged (ci/fault-sweep.sh).  Such a run also checks at exit
 * that every accounting figure is back to zero and prints one line: the
 * faults fired, or what is left and exit status 3 (a client that freed
 * everything must leave nothing).
 */
static bool nrt_fault_env_read;

static void nrt_fault_env_exit_check(void)
{
	emu_accounting_t a;

	emu_get_accounting(&a);
	if (!a.device_bytes && !a.device_allocs && !a.host_allocs && !a.objects &&
	    !a.staged_models && !a.inflight_execs && !a.async_marks) {
		fprintf(stderr,
		        "libnrt: KMGR_FAULT run: %llu faults fired, accounting zero at exit\n",
		        (unsigned long long)kfault_fired());
		return;
	}
	fprintf(stderr,
	        "libnrt: KMGR_FAULT run: accounting not zero at exit: device %lld bytes in %lld "
	        "allocations, host %lld bytes in %lld allocations, %lld objects, %lld staged "
	        "models, %lld executions in flight, %lld async marks\n",
	        (long long)a.device_bytes, (long long)a.device_allocs, (long long)a.host_bytes,
	        (long long)a.host_allocs, (long long)a.objects, (long long)a.staged_models,
	        (long long)a.inflight_execs, (long long)a.async_marks);
	_exit(3);
}

/* A plan that does not parse fails this nrt_init and every later one: a
 * second init must not run the client with no plan as if it had one. */
static bool nrt_fault_env_bad;

NRT_STATUS nrt__fault_env(void)
{
	const char *v = getenv("KMGR_FAULT");

	if (nrt_fault_env_bad)
		return NRT_INVALID;
	if (nrt_fault_env_read || !v || !*v)
		return NRT_SUCCESS;
	if (kfault_plan_from_env()) { /* printed "KMGR_FAULT: <why>" */
		nrt_fault_env_bad = true;
		return NRT_INVALID;
	}
	nrt_fault_env_read = true;
	atexit(nrt_fault_env_exit_check);
	return NRT_SUCCESS;
}
#else
NRT_STATUS nrt__fault_env(void)
{
	return NRT_SUCCESS;
}
#endif
