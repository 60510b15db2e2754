/*
 * ktest_emu.h - assertions on the emulated device's accounting, shared by
 * the device, API and facade tests.
 */
#ifndef KTEST_EMU_H
#define KTEST_EMU_H

#include "emu/emu.h"
#include "ktest.h"

/* Every figure of the device's accounting is zero (host figures are the
 * whole library's kalloc). */
static inline void kt_assert_accounting_zero(void)
{
	emu_accounting_t a;

	emu_get_accounting(&a);
	KT_EQ(a.device_bytes, 0);
	KT_EQ(a.device_allocs, 0);
	KT_EQ(a.host_bytes, 0);
	KT_EQ(a.host_allocs, 0);
	KT_EQ(a.objects, 0);
	KT_EQ(a.staged_models, 0);
	KT_EQ(a.inflight_execs, 0);
	KT_EQ(a.async_marks, 0);
}

#endif /* KTEST_EMU_H */
