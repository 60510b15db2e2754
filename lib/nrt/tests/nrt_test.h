/*
 * nrt_test.h - what the lib/nrt tests share: lib/ktest's model and IO
 * fixtures (a u8 model in memory, its tensors bound, outputs checked
 * against the device's compute formula), the accounting assertion, and
 * nrt_init from a known environment.
 */
#ifndef NRT_TEST_H
#define NRT_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <nrt/nrt.h>
#include <nrt/nrt_async.h>
#include <nrt/nrt_experimental.h>

#include "base/kalloc.h"
#include "base/kfault.h"
#include "emu/emu.h"
#include "ktest.h"
#include "ktest_emu.h"
#include "ktest_fault.h"
#include "ktest_log.h"
#include "ktest_model.h"
#include "model/kmodel.h"

static inline void nt_init(void)
{
	KT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS);
}

/* The environment nrt_init reads, cleared, so that a test starts from the
 * defaults (every core visible, synchronous execution, the default core
 * count) whatever the caller's environment says.  KMGR_FAULT is left to
 * each test (the ones with fault plans of their own clear it). */
static inline void nt_env_clear(void)
{
	unsetenv("NEURON_RT_VISIBLE_CORES");
	unsetenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS");
	unsetenv("KMGR_EMU_NC_COUNT");
}

#endif /* NRT_TEST_H */
