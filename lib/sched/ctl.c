/*
 * ctl.c - the controlled backend's core: the scheduler's state, the TSan
 * ignore region around it, the baton that lets exactly one logical thread
 * run, and the scheduling point that chooses who runs next.
 *
 * Two engines carry logical threads (kctl.h, ks_engine_t).  THREADS: each
 * logical thread is a pthread parked on its own futex word; the running
 * thread picks the next one (ctl_strategy.c), sets that word and parks on
 * its own.  FIBERS: each is a fiber and passing the baton is a context
 * switch (ctl_fiber.c).  No real lock is ever held by program code in a
 * controlled run, so a thread never blocks anywhere but on the baton.
 * The failures are ctl_report.c, the threads' lives ctl_thread.c, runs
 * ctl_run.c.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/kattr.h"
#include "ctl_int.h"

#if defined(KMGR_TSAN)
#include <sanitizer/tsan_interface.h>
/* From the TSan runtime (tsan_interface_ann.cpp); not in a public header. */
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
void AnnotateIgnoreSyncBegin(const char *file, int line);
void AnnotateIgnoreSyncEnd(const char *file, int line);
#endif

struct ks_sched ks__g;
uint8_t ks__trace[KS_CTL_TRACE_MAX];
_Thread_local struct ks_lthread *ks__tl_self;

void ks__enter(void)
{
#if defined(KMGR_TSAN)
	AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
	AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
	AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
#endif
}

void ks__leave(void)
{
#if defined(KMGR_TSAN)
	AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
	AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
	AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
#endif
}

void ks__tsan_acquire(const void *addr)
{
#if defined(KMGR_TSAN)
	__tsan_acquire((void *)addr);
#else
	(void)addr;
#endif
}

void ks__tsan_release(const void *addr)
{
#if defined(KMGR_TSAN)
	__tsan_release((void *)addr);
#else
	(void)addr;
#endif
}

/* ---- the baton ---------------------------------------------------------- */

void ks__baton_give(struct ks_lthread *t)
{
	atomic_store(&t->go, 1);
	syscall(SYS_futex, (int *)&t->go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void ks__baton_wait(struct ks_lthread *t)
{
	while (atomic_exchange(&t->go, 0) == 0)
		syscall(SYS_futex, (int *)&t->go, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
}

/* Let next run; come back when self is chosen again.  A finished fiber
 * leaves from the bottom of its entry loop instead (fiber_entry). */
static void transfer(struct ks_lthread *self, struct ks_lthread *next)
{
	if (ks__g.fibers) {
		if (tstate(self) == KS_T_FINISHED) {
			ks__g.exit_to = next;
			return;
		}
		ks__tl_self = next;
		ks__fiber_switch(self->id, next->id, KS_FIBER_RUN);
		return;
	}
	ks__baton_give(next);
	if (tstate(self) != KS_T_FINISHED)
		ks__baton_wait(self);
}

/* ---- choosing ----------------------------------------------------------- */

/* thr[i] waits for a time: a sleep, or a timed wait's deadline */
static bool wakes_at_time(int i)
{
	int st = tstate_at(i);

	return st == KS_T_SLEEPING || (st == KS_T_BLOCKED && ks__g.thr[i].timed);
}

/* Every thread whose sleep or timed wait is over by now becomes runnable;
 * a timed wait ends without its object: timed_out. */
static void wake_due(uint64_t now)
{
	for (int i = 0; i < ks__g.nthreads; i++) {
		struct ks_lthread *t = &ks__g.thr[i];

		if (!wakes_at_time(i) || t->wake_ns > now)
			continue;
		if (tstate_at(i) == KS_T_BLOCKED) {
			t->wait_kind = KS_W_NONE;
			t->wait_obj = NULL;
			t->timed_out = true;
		}
		set_tstate(t, KS_T_RUNNABLE);
	}
}

/* Nobody can run: advance virtual time to the earliest wake, if any. */
static bool wake_sleepers(void)
{
	uint64_t earliest = UINT64_MAX;

	for (int i = 0; i < ks__g.nthreads; i++)
		if (wakes_at_time(i) && ks__g.thr[i].wake_ns < earliest)
			earliest = ks__g.thr[i].wake_ns;
	if (earliest == UINT64_MAX)
		return false;
	if (earliest > atomic_load_explicit(&ks__g.vtime, memory_order_relaxed))
		atomic_store_explicit(&ks__g.vtime, earliest, memory_order_relaxed);
	wake_due(earliest);
	return true;
}

void ks__wake_due(void)
{
	wake_due(atomic_load_explicit(&ks__g.vtime, memory_order_relaxed));
}

/* The runnable threads, starting at self and in id order after it.  A
 * thread that yields goes last instead: it asked for the others to run, so
 * index 0 (and the fallback once the decisions run out) is the next thread,
 * and a polling loop does not spend the input's bits, or a hundred steps,
 * on choosing to poll again. */
static int candidates(const struct ks_lthread *self, struct ks_lthread **cand)
{
	int skip = self->yielding ? 1 : 0;
	int j = self->id + skip;
	int n = 0;

	/* j wraps by a compare, not a modulo: a division per slot per step
	 * was a fifth of every scheduling point */
	for (int i = skip; i < ks__g.nthreads; i++, j++) {
		if (j >= ks__g.nthreads)
			j -= ks__g.nthreads;
		if (tstate_at(j) == KS_T_RUNNABLE)
			cand[n++] = &ks__g.thr[j];
	}
	if (self->yielding && tstate(self) == KS_T_RUNNABLE)
		cand[n++] = (struct ks_lthread *)self;
	if (self->at_access)
		n = ks__access_sleepers(self, cand, n);
	return n;
}

static void divergence(struct ks_lthread *self, struct ks_lthread *const *cand, int n)
{
	char what[256];
	size_t off;
	size_t at = ks__g.tracepos - 1;

	off = (size_t)snprintf(
	    what, sizeof(what),
	    "trace decision %zu names thread %d, which is not runnable (runnable:", at,
	    ks__g.cfg.trace[at]);
	for (int i = 0; i < n && off < sizeof(what) - 8; i++)
		off += (size_t)snprintf(what + off, sizeof(what) - off, " %d", cand[i]->id);
	snprintf(what + off, sizeof(what) - off, ")");
	ks__fail(self, KS_DIVERGENCE, what);
}

static struct ks_lthread *pick_next(struct ks_lthread *self)
{
	struct ks_lthread *cand[KS_CTL_MAX_THREADS];
	int n, idx;

	/* an atomic section goes on while its thread can: not a decision */
	if (self->atomic_depth > 0 && tstate(self) == KS_T_RUNNABLE)
		return self;
	while ((n = candidates(self, cand)) == 0) {
		if (!wake_sleepers()) {
			ks__fail(self, KS_DEADLOCK, "every logical thread is blocked");
			return NULL;
		}
	}
	if (n == 1)
		return cand[0];
	if (self->mem_point && cand[0] == self) {
		/* asked for by the input, so index 0 (also what a run without
		 * decision bytes left takes) is a preemption; continuing is last */
		memmove(cand, cand + 1, (size_t)(n - 1) * sizeof(cand[0]));
		cand[n - 1] = self;
	}
	idx = ks__strat_pick(cand, n, cand[0] == self);
	if (idx < 0) {
		divergence(self, cand, n);
		return NULL;
	}
	if (self->mem_point)
		self->ap_chose = cand[idx] == self ? 1 : tstate(cand[idx]) == KS_T_SLEEPING ? 2 : 3;
	ks__access_chosen(cand[idx]);
	if (ks__g.ntrace < KS_CTL_TRACE_MAX)
		ks__trace[ks__g.ntrace++] = (uint8_t)cand[idx]->id;
	else
		ks__g.trace_truncated = true;
	return cand[idx];
}

#define FNV_PRIME       1099511628211ull
#define SITE_CACHE_BITS 9

/* FNV-1a of a site's text, remembered by the site's address: a site is a
 * string literal, and hashing its ~40 bytes at every step was a tenth of a
 * fuzz run.  The address is only a cache key; the value depends on the text
 * alone, so step hashes stay equal across processes.  Which sites share a
 * slot, though, follows where the binary was loaded: where a build gives
 * this file coverage (OSS-Fuzz's CFLAGS reach every file), the hits, the
 * misses and the loop's trips would be features that moved with ASLR
 * (features_stable, fuzz/tests).  So none here. */
KATTR_NO_COVERAGE uint64_t ks__site_hash(const char *site)
{
	static struct {
		const char *site;
		uint64_t hash;
	} cache[1 << SITE_CACHE_BITS];
	/* Fibonacci hashing of the address: under ASan string literals sit
	 * 32 or 64 bytes apart (redzones), so the low bits alone used one slot
	 * in four or eight and sites evicted each other at every step */
	size_t slot =
	    (size_t)(((uint64_t)(uintptr_t)site * 0x9E3779B97F4A7C15ull) >> (64 - SITE_CACHE_BITS));
	uint64_t h = 14695981039346656037ull;

	if (cache[slot].site == site)
		return cache[slot].hash;
	for (const char *p = site; *p; p++)
		h = (h ^ (uint8_t)*p) * FNV_PRIME;
	cache[slot].site = site;
	cache[slot].hash = h;
	return h;
}

/* The step hash: FNV-1a over (thread id, site hash) per step. */
static void hash_step(const struct ks_lthread *t, const char *site)
{
	uint64_t h = ks__g.step_hash;

	h = (h ^ (uint64_t)(t->id + 1)) * FNV_PRIME;
	h = (h ^ ks__site_hash(site)) * FNV_PRIME;
	ks__g.step_hash = h;
}

void ks__point(struct ks_lthread *self, const char *site)
{
	struct ks_lthread *next;

	self->site = site;
	ks__ap_on_point(self);
	ks__g.steps++;
	hash_step(self, site);
	if (ks__g.steps > ks__g.max_steps) {
		ks__fail(self, KS_HANG, "the step bound was reached (livelock or endless wait)");
		return;
	}
	ks__strat_step(self);
	next = pick_next(self);
	if (!next || next == self)
		return;
	ks__g.switches++;
	if (tstate(self) == KS_T_RUNNABLE)
		ks__g.preemptions++;
	ks__g.cur = next->id;
	transfer(self, next);
	if (tstate(self) == KS_T_FINISHED)
		return;
	if (ks__failed())
		ks__abort_self(self);
}

void ks__block(struct ks_lthread *t, enum ks_wait kind, const void *obj, const char *site)
{
	set_tstate(t, KS_T_BLOCKED);
	t->wait_kind = kind;
	t->wait_obj = obj;
	t->wait_order = ++ks__g.order;
	ks__point(t, site);
}

/* A timed wait: blocked on obj as ks__block, and also woken, when nobody
 * else can run, by virtual time reaching wake_ns (wake_sleepers).  The
 * deadline orders it among the sleepers, so a wait of 1 s outlasts a sleep
 * of 1 ms and gives way to one of 10 s, as on a real clock. */
bool ks__block_until(struct ks_lthread *t, enum ks_wait kind, const void *obj, uint64_t wake_ns,
                     const char *site)
{
	bool timed_out;

	t->timed = true;
	t->timed_out = false;
	t->wake_ns = wake_ns;
	ks__block(t, kind, obj, site);
	timed_out = t->timed_out;
	t->timed = false;
	t->timed_out = false;
	return timed_out;
}

static void wake(struct ks_lthread *t)
{
	t->wait_kind = KS_W_NONE;
	t->wait_obj = NULL;
	set_tstate(t, KS_T_RUNNABLE);
}

/* thr[i] waits for (kind, obj): its state byte first, so the scan of a
 * wake touches the slot of a blocked thread only */
static bool waits_on(int i, enum ks_wait kind, const void *obj)
{
	return tstate_at(i) == KS_T_BLOCKED && ks__g.thr[i].wait_kind == kind &&
	       ks__g.thr[i].wait_obj == obj;
}

void ks__wake_all(enum ks_wait kind, const void *obj)
{
	for (int i = 0; i < ks__g.nthreads; i++)
		if (waits_on(i, kind, obj))
			wake(&ks__g.thr[i]);
}

/* The longest waiter: FIFO by the order counter, never by address. */
void ks__wake_first(enum ks_wait kind, const void *obj)
{
	struct ks_lthread *first = NULL;

	for (int i = 0; i < ks__g.nthreads; i++) {
		struct ks_lthread *t = &ks__g.thr[i];

		if (waits_on(i, kind, obj) && (!first || t->wait_order < first->wait_order))
			first = t;
	}
	if (first)
		wake(first);
}

void ks__failed_point(void)
{
	if (++ks__g.failed_steps <= ks__g.max_steps)
		return;
	fputs("KSCHED HANG: main keeps running after a failed run (use ks_ctl_run to unwind it)\n",
	      stderr);
	abort();
}

struct ks_lthread *ks__enter_self(void)
{
	ks__enter();
	if (!ks__tl_self) {
		fputs("KSCHED MISUSE: a thread unknown to the controlled run called ksched\n",
		      stderr);
		abort();
	}
	return ks__tl_self;
}
