/*
 * lifecycle.c - the frame of every checked run, the same for the fuzz
 * harness and the stress binaries: the runtime up with the execution
 * observer attached, quiescence before the refcount check, and a close
 * that says whether a fault fired inside it (a close a fault cut short
 * may leave what it could not unload: the caller then skips the leak
 * check).  The checks themselves stay with their callers, which order
 * them differently (oracle.h says what each checks).
 */
#include <nrt/nrt.h>

#include "base/kfault.h"
#include "emu/emu.h"
#include "oracle/oracle.h"
#include "sched/ksched.h"

NRT_STATUS oracle_open(void)
{
	NRT_STATUS rc = nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "");

	if (rc == NRT_SUCCESS)
		oracle_attach();
	return rc;
}

/* Polled with a sleep: a scheduling point at which, under the controlled
 * scheduler, the device's threads run to completion. */
void oracle_quiesce(void)
{
	while (emu_inflight_execs() != 0)
		ks_usleep(50);
}

bool oracle_close_runtime(void)
{
	uint64_t fired = kfault_fired();

	nrt_close();
	return kfault_fired() != fired;
}
