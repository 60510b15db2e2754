/*
 * ctl_spin.c - the spin detector: a logical thread that makes
 * KS_SPIN_BOUND heap or global accesses without a scheduling point is
 * taken to spin on a plain flag (`while (!flag) { }`), which under one
 * thread at a time would run forever: it yields (the others come first,
 * so the thread it waits for can set the flag), and after KS_SPIN_YIELDS
 * such yields with no other scheduling point between them, nobody did,
 * and the run fails with KSCHED HANG naming the loop's code address
 * (binary+offset, for addr2line).  Counted by the same load/store
 * callbacks as the memory access points (ctl_access.c): only code built
 * with them (the fuzz builds' code under test, a kpt program) is seen.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "ctl_int.h"

/* Off by default: the fuzz targets' code under test (a parser's long
 * loop) must keep the schedules its corpora were recorded with.  kpt
 * turns it on (kpt_fuzz_run). */
bool ks__spin_detect;

void ks_ctl_spin_detect(bool on)
{
	ks__spin_detect = on;
	if (on)
		atomic_fetch_or_explicit(&ks__mem_watch, KS_WATCH_SPIN, memory_order_relaxed);
	else
		atomic_fetch_and_explicit(&ks__mem_watch, ~KS_WATCH_SPIN, memory_order_relaxed);
}

/* The loop's address as binary+offset: the same for every run of the
 * binary, whatever address it was loaded at. */
static void spin_where(const void *pc, char *buf, size_t len)
{
	Dl_info di;

	if (dladdr(pc, &di) && di.dli_fname)
		snprintf(buf, len, "%s+0x%lx", di.dli_fname,
		         (unsigned long)((uintptr_t)pc - (uintptr_t)di.dli_fbase));
	else
		snprintf(buf, len, "%p", pc);
}

void ks__spin(struct ks_lthread *t, const void *pc)
{
	static char what[512];
	char where[384];
	bool yield;

	/* The slot's fields inside the ignore region, like all its others (a
	 * joined thread's slot goes to the next thread created); not across
	 * the yield: an aborted run unwinds out of it leaving one region. */
	ks__enter();
	t->spin_n = 0;
	yield = ++t->spin_yields <= KS_SPIN_YIELDS;
	t->spinning = yield;
	ks__leave();
	if (yield) {
		/* a fixed site text: the step hash must not depend on where
		 * the binary was loaded */
		ks_ctl_yield("spin loop (plain accesses, no scheduling point)");
		ks__enter();
		t->spinning = false;
		ks__leave();
		return;
	}
	spin_where(pc, where, sizeof(where));
	snprintf(what, sizeof(what),
	         "a spin loop at %s: %u yields of %u plain accesses each without a "
	         "scheduling point, and no other thread set what it waits for",
	         where, KS_SPIN_YIELDS, KS_SPIN_BOUND);
	ks__enter();
	ks__fail(t, KS_HANG, what);
	ks__leave();
}
