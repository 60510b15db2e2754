/*
 * ctl.c - the controlled backend's core: logical threads, the baton that
 * lets exactly one of them run, the scheduling point, and the failures
 * (deadlock, hang, divergence) with their stable signatures.
 *
 * Two engines carry logical threads (kctl.h, ks_engine_t).  THREADS: each
 * logical thread is a pthread parked on its own futex word; the running
 * thread picks the next one (ctl_strategy.c), sets that word and parks on
 * its own.  FIBERS: each is a fiber and passing the baton is a context
 * switch (ctl_fiber.c).  No real lock is ever held by program code in a
 * controlled run, so a thread never blocks anywhere but on the baton.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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
static _Thread_local struct ks_lthread *tl_self;
static char report[KS_CTL_REPORT_MAX];

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

bool ks__failed(void)
{
	return atomic_load_explicit(&ks__g.failed, memory_order_relaxed) != KS_OK;
}

static int tstate(const struct ks_lthread *t)
{
	return atomic_load_explicit(&t->state, memory_order_relaxed);
}

static void set_tstate(struct ks_lthread *t, int s)
{
	atomic_store_explicit(&t->state, s, memory_order_relaxed);
}

/* ---- the baton ---------------------------------------------------------- */

static void baton_give(struct ks_lthread *t)
{
	atomic_store(&t->go, 1);
	syscall(SYS_futex, (int *)&t->go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void baton_wait(struct ks_lthread *t)
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
		tl_self = next;
		ks__fiber_switch(self->id, next->id, KS_FIBER_RUN);
		return;
	}
	baton_give(next);
	if (tstate(self) != KS_T_FINISHED)
		baton_wait(self);
}

/* ---- failures ----------------------------------------------------------- */

static const char *wait_name(enum ks_wait w)
{
	static const char *const names[] = {"",          "mutex",     "rwlock",
	                                    "condition", "semaphore", "join"};

	return names[w];
}

static int describe_thread(char *p, size_t len, const struct ks_lthread *t)
{
	const char *site = t->site ? t->site : "(start)";

	switch (tstate(t)) {
	case KS_T_RUNNABLE:
		return snprintf(p, len, "  thread %d \"%s\": runnable, last at %s\n", t->id,
		                t->name, site);
	case KS_T_BLOCKED:
		return snprintf(p, len, "  thread %d \"%s\": blocked on %s at %s\n", t->id, t->name,
		                wait_name(t->wait_kind), site);
	case KS_T_SLEEPING:
		return snprintf(p, len, "  thread %d \"%s\": sleeping until %llu ns at %s\n", t->id,
		                t->name, (unsigned long long)t->wake_ns, site);
	default:
		return snprintf(p, len, "  thread %d \"%s\": finished\n", t->id, t->name);
	}
}

/* Append s to the report at *off, never past its end. */
static void put(size_t *off, int n)
{
	if (n > 0)
		*off += (size_t)n;
	if (*off >= sizeof(report))
		*off = sizeof(report) - 1;
}

static void build_report(ks_failure_t kind, const char *what)
{
	static const char *const sig[] = {"", "KSCHED DEADLOCK", "KSCHED HANG",
	                                  "KSCHED DIVERGENCE"};
	size_t off = 0;

	put(&off, snprintf(report, sizeof(report), "%s: %s (step %llu, %d threads, strategy %s)\n",
	                   sig[kind], what, (unsigned long long)ks__g.steps, ks__g.nthreads,
	                   ks__strat_name(ks__g.cfg.strategy)));
	for (int i = 0; i < ks__g.nthreads; i++)
		put(&off, describe_thread(report + off, sizeof(report) - off, &ks__g.thr[i]));
	put(&off, snprintf(report + off, sizeof(report) - off,
	                   "  trace (%zu decisions): ", ks__g.ntrace));
	if (ks__g.ntrace * 3 < sizeof(report) - off - 8)
		put(&off, ks_ctl_trace_format(ks__trace, ks__g.ntrace, report + off,
		                              sizeof(report) - off));
	else
		put(&off, snprintf(report + off, sizeof(report) - off, "(too long to print)"));
	snprintf(report + off, sizeof(report) - off, "\n");
}

static void default_failure(void *ctx, ks_failure_t kind, const char *text)
{
	(void)ctx;
	(void)kind;
	fputs(text, stderr);
	fflush(stderr);
	abort();
}

/* Unwind the calling thread out of an aborted run: a worker back to its
 * trampoline, main back to ks_ctl_run; main under ks_ctl_begin just returns
 * and every later call passes through. */
static void abort_self(struct ks_lthread *t)
{
	if (tstate(t) == KS_T_FINISHED || !t->has_jb)
		return;
	ks__leave();
	longjmp(t->jb, 1);
}

static void fail(struct ks_lthread *self, ks_failure_t kind, const char *what)
{
	build_report(kind, what);
	atomic_store(&ks__g.failed, kind);
	ks__g.cfg.on_failure(ks__g.cfg.failure_ctx, kind, report);
	if (ks__g.fibers) {
		/* Main unwinds first; ks_ctl_end then resumes every other fiber
		 * once, to unwind it out of the run (unwind_fibers). */
		if (self->id != 0) {
			tl_self = &ks__g.thr[0];
			ks__fiber_switch(self->id, 0, KS_FIBER_RUN);
		}
		abort_self(self);
		return;
	}
	/* Every parked thread wakes, sees the failure and unwinds. */
	for (int i = 0; i < ks__g.nthreads; i++) {
		struct ks_lthread *t = &ks__g.thr[i];

		if (t != self && tstate(t) != KS_T_FINISHED && (t->started || t->id == 0))
			baton_give(t);
	}
	abort_self(self);
}

_Noreturn void ks__misuse(const char *what, const char *site)
{
	fprintf(stderr, "KSCHED MISUSE: %s at %s\n", what, site);
	abort();
}

/* ---- choosing ----------------------------------------------------------- */

/* Nobody can run: advance virtual time to the earliest wake, if any. */
static bool wake_sleepers(void)
{
	uint64_t earliest = UINT64_MAX;

	for (int i = 0; i < ks__g.nthreads; i++)
		if (tstate(&ks__g.thr[i]) == KS_T_SLEEPING && ks__g.thr[i].wake_ns < earliest)
			earliest = ks__g.thr[i].wake_ns;
	if (earliest == UINT64_MAX)
		return false;
	if (earliest > atomic_load_explicit(&ks__g.vtime, memory_order_relaxed))
		atomic_store_explicit(&ks__g.vtime, earliest, memory_order_relaxed);
	for (int i = 0; i < ks__g.nthreads; i++)
		if (tstate(&ks__g.thr[i]) == KS_T_SLEEPING && ks__g.thr[i].wake_ns <= earliest)
			set_tstate(&ks__g.thr[i], KS_T_RUNNABLE);
	return true;
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
		struct ks_lthread *t;

		if (j >= ks__g.nthreads)
			j -= ks__g.nthreads;
		t = &ks__g.thr[j];
		if (tstate(t) == KS_T_RUNNABLE)
			cand[n++] = t;
	}
	if (self->yielding && tstate(self) == KS_T_RUNNABLE)
		cand[n++] = (struct ks_lthread *)self;
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
	fail(self, KS_DIVERGENCE, what);
}

static struct ks_lthread *pick_next(struct ks_lthread *self)
{
	struct ks_lthread *cand[KS_CTL_MAX_THREADS];
	int n, idx;

	while ((n = candidates(self, cand)) == 0) {
		if (!wake_sleepers()) {
			fail(self, KS_DEADLOCK, "every logical thread is blocked");
			return NULL;
		}
	}
	if (n == 1)
		return cand[0];
	idx = ks__strat_pick(cand, n, cand[0] == self);
	if (idx < 0) {
		divergence(self, cand, n);
		return NULL;
	}
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
 * alone, so step hashes stay equal across processes. */
static uint64_t site_hash(const char *site)
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
	h = (h ^ site_hash(site)) * FNV_PRIME;
	ks__g.step_hash = h;
}

void ks__point(struct ks_lthread *self, const char *site)
{
	struct ks_lthread *next;

	self->site = site;
	ks__g.steps++;
	hash_step(self, site);
	if (ks__g.steps > ks__g.max_steps) {
		fail(self, KS_HANG, "the step bound was reached (livelock or endless wait)");
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
		abort_self(self);
}

void ks__block(struct ks_lthread *t, enum ks_wait kind, const void *obj, const char *site)
{
	set_tstate(t, KS_T_BLOCKED);
	t->wait_kind = kind;
	t->wait_obj = obj;
	t->wait_order = ++ks__g.order;
	ks__point(t, site);
}

static void wake(struct ks_lthread *t)
{
	t->wait_kind = KS_W_NONE;
	t->wait_obj = NULL;
	set_tstate(t, KS_T_RUNNABLE);
}

static bool waits_on(const struct ks_lthread *t, enum ks_wait kind, const void *obj)
{
	return tstate(t) == KS_T_BLOCKED && t->wait_kind == kind && t->wait_obj == obj;
}

void ks__wake_all(enum ks_wait kind, const void *obj)
{
	for (int i = 0; i < ks__g.nthreads; i++)
		if (waits_on(&ks__g.thr[i], kind, obj))
			wake(&ks__g.thr[i]);
}

/* The longest waiter: FIFO by the order counter, never by address. */
void ks__wake_first(enum ks_wait kind, const void *obj)
{
	struct ks_lthread *first = NULL;

	for (int i = 0; i < ks__g.nthreads; i++) {
		struct ks_lthread *t = &ks__g.thr[i];

		if (waits_on(t, kind, obj) && (!first || t->wait_order < first->wait_order))
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
	if (!tl_self) {
		fputs("KSCHED MISUSE: a thread unknown to the controlled run called ksched\n",
		      stderr);
		abort();
	}
	return tl_self;
}

/* ---- threads ------------------------------------------------------------ */

/* A logical thread's life once it first holds the baton: run, wake the
 * joiner, choose who runs next.  Returns inside ks__enter; the threads
 * engine has passed the baton on by then, the fiber engine does it next. */
static void lthread_body(struct ks_lthread *t)
{
	void *volatile ret = NULL; /* volatile: live across the setjmp */

	if (!ks__failed() && setjmp(t->jb) == 0)
		ret = t->fn(t->arg);
	ks__tsan_release(t->hb);
	ks__enter();
	/* Stored inside the ignore region, like every other field of the slot:
	 * a joined thread's slot is given to the next thread created, maybe by
	 * a thread that never synchronized with the joiner, and TSan would take
	 * the two logical threads' stores for a race (the scheduler orders them;
	 * its switches carry no edge, docs/scheduler.md). */
	t->ret = ret;
	t->has_jb = false;
	if (!ks__failed()) {
		set_tstate(t, KS_T_FINISHED);
		ks__wake_all(KS_W_JOIN, t);
		ks__point(t, "(thread exit)");
	}
	set_tstate(t, KS_T_FINISHED);
}

static void *trampoline(void *p)
{
	struct ks_lthread *t = p;

	tl_self = t;
	ks__tsan_acquire(t->hb);
	ks__enter();
	baton_wait(t);
	ks__leave();
	lthread_body(t);
	ks__leave();
	tl_self = NULL;
	return NULL;
}

/* One logical thread after another: a parked fiber resumes here carrying
 * the next logical thread that got its id. */
static void fiber_entry(void)
{
	struct ks_lthread *t = tl_self;

	ks__fiber_started(t->id);
	for (;;) {
		struct ks_lthread *next;

		ks__tsan_acquire(t->hb);
		lthread_body(t);
		next = ks__g.exit_to;
		ks__g.exit_to = NULL;
		if (!next || ks__failed())
			next = &ks__g.thr[0]; /* main is unwinding a failed run */
		tl_self = next;
		ks__leave();
		ks__fiber_switch(t->id, next->id, KS_FIBER_PARK);
		t = tl_self;
	}
}

/* Start t's real thread or make its fiber. */
static int lthread_start(struct ks_lthread *t)
{
	if (ks__g.fibers)
		return ks__fiber_make(t->id, t->name, fiber_entry);
	return pthread_create(&t->pt, NULL, trampoline, t);
}

/* A sync address per created thread (not per slot: a reused slot must not
 * hand its new thread the release of the one before).  Wraps only after
 * KS_HB_POOL creations in one run, far more than any program makes. */
#define KS_HB_POOL 4096
static char hb_pool[KS_HB_POOL];

/* The lowest id whose thread finished and was joined, else a new one: a
 * program that keeps creating and joining threads (the stage fan-out of
 * every load) never runs out of the KS_CTL_MAX_THREADS ids, and ids stay a
 * function of the schedule alone. */
static struct ks_lthread *free_slot(void)
{
	for (int i = 1; i < ks__g.nthreads; i++) {
		struct ks_lthread *t = &ks__g.thr[i];

		if (t->joined && tstate(t) == KS_T_FINISHED) {
			if (ks__g.fibers)
				ks__fiber_release(i);
			return t;
		}
	}
	if (ks__g.nthreads >= KS_CTL_MAX_THREADS)
		return NULL;
	return &ks__g.thr[ks__g.nthreads++];
}

int ks_ctl_thread_create(ks_thread_t *kt, const char *name, void *(*fn)(void *), void *arg,
                         const char *site)
{
	struct ks_lthread *self = ks__enter_self();
	struct ks_lthread *t;
	int rc;

	t = free_slot();
	if (ks__failed() || !t) {
		ks__leave();
		return EAGAIN;
	}
	memset(t, 0, sizeof(*t));
	t->id = (int)(t - ks__g.thr);
	t->hb = &hb_pool[ks__g.created++ % KS_HB_POOL];
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "thread");
	set_tstate(t, KS_T_RUNNABLE);
	t->fn = fn;
	t->arg = arg;
	t->has_jb = true;
	ks__strat_new_thread(t);
	ks__leave();

	ks__tsan_release(t->hb);
	rc = lthread_start(t);

	ks__enter();
	if (rc != 0) {
		set_tstate(t, KS_T_FINISHED);
		ks__leave();
		return rc;
	}
	t->started = true;
	kt->ctl_id = t->id;
	kt->pt = t->pt;
	ks__point(self, site);
	ks__leave();
	return 0;
}

int ks_ctl_thread_join(ks_thread_t *kt, void **ret, const char *site)
{
	struct ks_lthread *self;
	struct ks_lthread *t;
	pthread_t pt;
	bool started;
	void *value;

	if (!ks_controlled()) /* ks_ctl_end joined it already */
		return 0;
	self = ks__enter_self();

	if (kt->ctl_id >= ks__g.nthreads || kt->ctl_id == self->id ||
	    !atomic_load(&ks__ctl_active.on) || ks__g.thr[kt->ctl_id].joined) {
		ks__leave();
		return EINVAL;
	}
	t = &ks__g.thr[kt->ctl_id];
	if (!ks__failed())
		ks__point(self, site);
	while (!ks__failed() && tstate(t) != KS_T_FINISHED)
		ks__block(self, KS_W_JOIN, t, site);
	t->joined = true;
	pt = t->pt;
	started = t->started;
	value = t->ret;
	ks__leave();
	if (started && !ks__g.fibers)
		pthread_join(pt, NULL);
	ks__tsan_acquire(t->hb);
	if (ret)
		*ret = value;
	return 0;
}

/* ---- runs --------------------------------------------------------------- */

void ks_ctl_config_init(ks_ctl_config_t *cfg)
{
	const char *engine = getenv("KMGR_SCHED_ENGINE");

	memset(cfg, 0, sizeof(*cfg));
	cfg->engine = engine && !strcmp(engine, "threads") ? KS_ENGINE_THREADS : KS_ENGINE_FIBERS;
	cfg->strategy = KS_STRAT_BYTES;
	cfg->pct_depth = 2;
	cfg->max_steps = KS_CTL_DEFAULT_STEPS;
}

int ks_ctl_begin(const ks_ctl_config_t *cfg)
{
	struct ks_lthread *t = &ks__g.thr[0];

#if defined(KSCHED_PRODUCTION_ONLY)
	(void)t;
	(void)cfg;
	return -1; /* the wrappers of this build never ask the scheduler */
#endif
	if (atomic_load(&ks__ctl_active.on) || tl_self)
		return -1;
	ks__enter();
	memset(&ks__g, 0, sizeof(ks__g));
	ks__g.cfg = *cfg;
	ks__g.fibers = cfg->engine == KS_ENGINE_FIBERS;
	if (!ks__g.cfg.on_failure)
		ks__g.cfg.on_failure = default_failure;
	ks__g.max_steps = cfg->max_steps ? cfg->max_steps : KS_CTL_DEFAULT_STEPS;
	ks__g.nthreads = 1;
	t->id = 0;
	snprintf(t->name, sizeof(t->name), "main");
	set_tstate(t, KS_T_RUNNABLE);
	t->started = false; /* main is not ours to join */
	if (ks__g.fibers)
		ks__fiber_main_init();
	ks__strat_init();
	ks__strat_new_thread(t);
	tl_self = t;
	ks__leave();
	atomic_store(&ks__ctl_active.on, 1);
	return 0;
}

/* After a failure: resume each fiber that has not finished once, so that it
 * unwinds out of the run (longjmp to lthread_body) and parks again. */
static void unwind_fibers(void)
{
	for (int i = 1; i < ks__g.nthreads; i++) {
		struct ks_lthread *t = &ks__g.thr[i];

		if (!t->started || tstate(t) == KS_T_FINISHED)
			continue;
		tl_self = t;
		ks__fiber_switch(0, i, KS_FIBER_RUN);
	}
	tl_self = &ks__g.thr[0];
}

static void wait_all(struct ks_lthread *self)
{
	for (int i = 1; i < ks__g.nthreads; i++)
		while (!ks__failed() && tstate(&ks__g.thr[i]) != KS_T_FINISHED)
			ks__block(self, KS_W_JOIN, &ks__g.thr[i], "(ks_ctl_end)");
}

void ks_ctl_end(ks_ctl_result_t *res)
{
	struct ks_lthread *self = ks__enter_self();
	pthread_t pts[KS_CTL_MAX_THREADS];
	int npt = 0;

	if (self->id != 0)
		ks__misuse("ks_ctl_end outside logical thread 0", "(ks_ctl_end)");
	self->has_jb = false;
	wait_all(self);
	if (ks__g.fibers && ks__failed())
		unwind_fibers();
	for (int i = 1; i < ks__g.nthreads; i++) {
		if (ks__g.fibers)
			ks__fiber_release(i);
		else if (ks__g.thr[i].started && !ks__g.thr[i].joined)
			pts[npt++] = ks__g.thr[i].pt;
		ks__g.thr[i].joined = true;
	}
	ks__leave();
	for (int i = 0; i < npt; i++)
		pthread_join(pts[i], NULL);
	/* ks_ctl_end joins every logical thread: on the fiber engine the edge
	 * a pthread_join gives is the finish -> join one of lthread_body. */
	for (int i = 1; ks__g.fibers && i < ks__g.nthreads; i++)
		ks__tsan_acquire(ks__g.thr[i].hb);
	ks__enter();
	if (res) {
		memset(res, 0, sizeof(*res));
		res->failure = (ks_failure_t)atomic_load(&ks__g.failed);
		res->steps = ks__g.steps;
		res->switches = ks__g.switches;
		res->preemptions = ks__g.preemptions;
		res->threads = (uint32_t)(ks__g.created + 1);
		res->trace = ks__trace;
		res->ntrace = ks__g.ntrace;
		res->step_hash = ks__g.step_hash;
		res->trace_truncated = ks__g.trace_truncated;
	}
	tl_self = NULL;
	ks__leave();
	atomic_store(&ks__ctl_active.on, 0);
}

int ks_ctl_run(const ks_ctl_config_t *cfg, void (*body)(void *), void *arg, ks_ctl_result_t *res)
{
	struct ks_lthread *m = &ks__g.thr[0];

	if (ks_ctl_begin(cfg) != 0)
		return -1;
	ks__enter();
	m->has_jb = true;
	ks__leave();
	if (setjmp(m->jb) == 0)
		body(arg);
	ks_ctl_end(res);
	return 0;
}

/* No scheduling point: a thread reading its own tag races with nobody. */
const void *ks_ctl_thread_tag(void)
{
	const void *tag = ks__enter_self()->tag;

	ks__leave();
	return tag;
}

void ks_ctl_thread_tag_set(const void *tag)
{
	ks__enter_self()->tag = tag;
	ks__leave();
}

const char *ks_ctl_engine_name(ks_engine_t e)
{
	return e == KS_ENGINE_THREADS ? "threads" : "fibers";
}

int ks_ctl_self(void)
{
	return tl_self ? tl_self->id : -1;
}

uint64_t ks_ctl_now_ns(void)
{
	return atomic_load_explicit(&ks__g.vtime, memory_order_relaxed);
}
