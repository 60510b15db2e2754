/*
 * ctl_access.c - access points, where a thread may be preempted between
 * plain accesses, not only at a synchronization call: the explicit hint
 * ks_access_point() (on with ks_ctl_config_t.access_points or
 * KMGR_SCHED_ACCESS_POINTS=1), and memory access points, below.
 *
 * Memory access points: the compiler's load/store callbacks
 * (-fsanitize-coverage=trace-loads,trace-stores, on the code under test in
 * the fuzz builds: lib/kmgr and lib/nrt) turned into scheduling
 * points of the controlled backend.
 *
 * The scheduler otherwise preempts only at synchronization calls, so a
 * window between a release and a plain access (a read after the last
 * reference is dropped, a check-then-act on a plain field) has no point in
 * it and no input can put another thread there.  Every heap or global
 * access can be one, but only the few the run's config names are:
 * ks_ctl_config_t.ap lists (logical thread, m, k) triples, and the k-th
 * such access of that thread after its m-th release (an unlock, a post,
 * an atomic subtraction: a reference dropped) is a point at which the
 * sleeping threads are candidates too, as at ks_access_point().  A window
 * opens at a release and the access that races it follows within a few,
 * and a thread makes few releases: both numbers stay small, so an input
 * finds them.  A long-lived thread makes hundreds, and an exact index is
 * one value in a thousand: a triple may also name every release from m
 * on (`every`), so that any m before a late window reaches it.  Since the input asked for the point, its first choice is
 * another thread (runnable ones, then sleepers) and continuing is the
 * last: an entry alone, with no decision byte for it, already preempts.
 * A run costs ap_n decisions, not one per access; with ap_n = 0 every
 * access returns at once.
 *
 * Stack accesses are not points: a thread's own locals cannot be another
 * thread's window.  The filter is the current frame's neighbourhood (a
 * local lives above the frame that reads it, within a few hundred KiB):
 * cheap, and an object it misjudges only loses or gains a candidate
 * point, never changes what the program computes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_int.h"

/* How far above the current frame the stack is taken to reach. */
#define KS_STACK_WINDOW (256u * 1024u)

_Atomic uint32_t ks__mem_watch;

void ks__ap_set(struct ks_lthread *t, uint32_t k)
{
	/* the count changes only when a point is armed or disarmed */
	if (k && !t->ap_k)
		atomic_fetch_add_explicit(&ks__mem_watch, 1, memory_order_relaxed);
	else if (!k && t->ap_k)
		atomic_fetch_sub_explicit(&ks__mem_watch, 1, memory_order_relaxed);
	t->ap_k = k;
}

void ks__ap_on_point(struct ks_lthread *t)
{
	uint64_t m;

	ks__spin_on_point(t);
	if (!t->releasing)
		return;
	t->releasing = false;
	t->release_site = t->site;
	m = t->releases++;
	t->accesses = 0;
	ks__ap_set(t, 0);
	for (uint32_t i = 0; i < ks__g.cfg.ap_n && i < KS_CTL_MAX_AP; i++)
		if (ks__g.cfg.ap[i].thread == t->id &&
		    (ks__g.cfg.ap[i].point == m ||
		     (ks__g.cfg.ap[i].every && m > ks__g.cfg.ap[i].point))) {
			ks__ap_set(t, ks__g.cfg.ap[i].k);
			return;
		}
}

/* ---- explicit access points (ks_access_point) ------------------------- */

/* KMGR_SCHED_ACCESS_POINTS=1: access points on for every run of the
 * process.  Read once: a run must not change behaviour mid-process. */
bool ks__access_points_env(void)
{
	static int on = -1;

	if (on < 0) {
		const char *s = getenv("KMGR_SCHED_ACCESS_POINTS");

		on = s && strcmp(s, "1") == 0;
	}
	return on;
}

/* Off: no step, no decision, so a run is exactly what it was without the
 * call (corpora recorded without access points replay unchanged). */
void ks_ctl_access_point(const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	if (!ks__g.access_points) {
		ks__leave();
		return;
	}
	if (ks__failed()) {
		ks__failed_point();
	} else {
		t->at_access = true;
		ks__point(t, site);
		t->at_access = false;
	}
	ks__leave();
}

/* A sleeping thread is not runnable while anyone else is (virtual time),
 * so a drain that polls with usleep never probes inside another thread's
 * window.  At an access point real time may have passed: the sleepers are
 * candidates too, after the runnable ones. */
int ks__access_sleepers(const struct ks_lthread *self, struct ks_lthread **cand, int n)
{
	int j = self->id;

	for (int i = 0; i < ks__g.nthreads; i++, j++) {
		if (j >= ks__g.nthreads)
			j -= ks__g.nthreads;
		if (tstate_at(j) == KS_T_SLEEPING)
			cand[n++] = &ks__g.thr[j];
	}
	return n;
}

/* A sleeper chosen at an access point: its sleep ends now. */
void ks__access_chosen(struct ks_lthread *t)
{
	if (tstate(t) != KS_T_SLEEPING)
		return;
	if (t->wake_ns > atomic_load_explicit(&ks__g.vtime, memory_order_relaxed))
		atomic_store_explicit(&ks__g.vtime, t->wake_ns, memory_order_relaxed);
	set_tstate(t, KS_T_RUNNABLE);
}

/* ---- memory access points ---------------------------------------------- */

#if !defined(KSCHED_PRODUCTION_ONLY)
/* Interleaving feedback: one counter per (the release a memory access
 * point followed, its k, what it chose: to continue, a sleeper, another
 * runnable thread), in the section libFuzzer reads as extra coverage
 * (it clears them before each input).  A point that opens a new kind of
 * window is new coverage, so the input that placed it is kept and mutated
 * further, instead of the fuzzer having to guess thread, release and
 * access at once.  A section, not a call: other engines ignore it. */
#if defined(KS_NO_AP_FEEDBACK) /* the comparison build (fuzz/CMakeLists.txt) */
static void ks_ap_feedback_note(const struct ks_lthread *t, uint32_t k)
{
	(void)t;
	(void)k;
}
#else
__attribute__((section("__libfuzzer_extra_counters"), used)) static uint8_t ks_ap_feedback[4096];

static void ks_ap_feedback_note(const struct ks_lthread *t, uint32_t k)
{
	/* the site's text, not its address: under ASLR the address moves
	 * with every process, and with it which counters two windows share,
	 * so the same input had other features in each run (and a fuzzing
	 * run with a fixed -seed went elsewhere every time) */
	uint64_t s = t->release_site ? ks__site_hash(t->release_site) : 0;
	uint64_t h = (s * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)k << 8 | t->ap_chose);

	h *= 0xff51afd7ed558ccdull;
	if (ks_ap_feedback[h >> 52] < 255)
		ks_ap_feedback[h >> 52]++;
}
#endif

/* Nothing in the installed library is instrumented, so it has neither
 * this nor the callbacks below.
 * Not instrumented for TSan: outside its ks__enter region it touches only
 * the running thread's slot (spin_n, ap_k), scheduler state TSan must not
 * see (ctl_int.h), and at every load and store that region would cost too
 * much.  A joined thread's slot goes to the next thread created, maybe by
 * one that never synchronized with the joiner, so an instrumented spin_n
 * count was reported as a race between the two (sched_tsan, tsan-1.3). */
__attribute__((no_sanitize("thread"))) static void ks_ctl_mem_access(const void *addr,
                                                                     const void *pc)
{
	struct ks_lthread *t = ks__tl_self;
	uintptr_t a = (uintptr_t)addr, fp = (uintptr_t)__builtin_frame_address(0);

	if (!ks_controlled() || !t || a - fp < KS_STACK_WINDOW)
		return;
	/* counted only when the detector is on (kpt): the fuzz targets' code
	 * under test makes a store per access fewer */
	if (KS_UNLIKELY(ks__spin_detect) && ++t->spin_n >= KS_SPIN_BOUND)
		ks__spin(t, pc);
	if (!t->ap_k)
		return;
	ks__enter();
	if (++t->accesses == t->ap_k) {
		uint32_t k = t->ap_k;

		ks__ap_set(t, 0);
		if (ks__failed()) {
			ks__failed_point();
		} else {
			t->at_access = t->mem_point = true;
			t->ap_chose = 1; /* unless pick_next chooses another (ctl.c) */
			ks__point(t, "memory access point");
			t->at_access = t->mem_point = false;
			ks_ap_feedback_note(t, k);
		}
	}
	ks__leave();
}

/* Is there anything for an access to do?  Only while some thread has an
 * access point armed or the spin detector counts (ks__mem_watch): the
 * code under test makes thousands of accesses a run, most of them with
 * neither (ks_ctl_mem_access alone was 3.6% of a concurrent fuzz run).
 * Outside a controlled run ks_ctl_mem_access returns at once. */
__attribute__((no_sanitize("thread"))) static inline bool ks_mem_watched(void)
{
	return KS_UNLIKELY(atomic_load_explicit(&ks__mem_watch, memory_order_relaxed) != 0);
}

/* The callbacks clang calls before each instrumented load and store.
 * nodebug: the calls clang inserts carry no source location, and LLVM's
 * verifier refuses a call without one to a function that has debug info
 * once LTO can inline it (the afl preset: afl-clang-lto links lib/sched
 * and the instrumented layers into one module).  Not instrumented for
 * TSan, like ks_ctl_mem_access: they read the scheduler's state. */
#define KS_ACCESS_CALLBACKS(n, type)                                                               \
	void __sanitizer_cov_load##n(type *addr) __attribute__((nodebug));                         \
	void __sanitizer_cov_store##n(type *addr) __attribute__((nodebug));                        \
	__attribute__((no_sanitize("thread"))) void __sanitizer_cov_load##n(type *addr)            \
	{                                                                                          \
		if (ks_mem_watched())                                                              \
			ks_ctl_mem_access(addr, __builtin_return_address(0));                      \
	}                                                                                          \
	__attribute__((no_sanitize("thread"))) void __sanitizer_cov_store##n(type *addr)           \
	{                                                                                          \
		if (ks_mem_watched())                                                              \
			ks_ctl_mem_access(addr, __builtin_return_address(0));                      \
	}

KS_ACCESS_CALLBACKS(1, uint8_t)
KS_ACCESS_CALLBACKS(2, uint16_t)
KS_ACCESS_CALLBACKS(4, uint32_t)
KS_ACCESS_CALLBACKS(8, uint64_t)
KS_ACCESS_CALLBACKS(16, __int128)
#endif
