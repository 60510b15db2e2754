/*
 * ksched.h - the one synchronization layer of kmgr-fuzz.
 *
 * Every mutex, reader-writer lock, condition variable, semaphore, atomic
 * operation on a shared counter, sleep, yield, clock read and thread in lib/
 * goes through this header; nothing else in lib/ includes <pthread.h> or
 * <stdatomic.h> for shared state.  That is what lets a test take control of
 * scheduling.
 *
 * Two backends, selected at run time:
 *   - production: straight pthread / C11 atomics, inlined below.  The only
 *     cost over a raw call is one relaxed load of ks__ctl_active and a
 *     predictable branch: at most a cycle a call (BENCHMARKS.md).
 *   - controlled (ctl.c and friends): exactly one logical thread runs at a
 *     time (fibers, or real pthreads passing a baton) and every wrapper call
 *     is a scheduling point.  Lock state is owned by the scheduler; see
 *     docs/scheduler.md.
 *
 * Every call site passes KS_SITE (file:line) through the macros at the
 * bottom so that traces, deadlock reports and hang reports name the site.
 *
 * Rule for mixing: the controlled backend only manages threads it knows
 * (the thread that called ks_ctl_begin and every thread created through
 * ks_thread_create while it is active).  Objects must not be held across
 * ks_ctl_begin / ks_ctl_end.
 */
#ifndef KSCHED_H
#define KSCHED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KS_STR2(x) #x
#define KS_STR(x)  KS_STR2(x)
/* A scheduling site: a string literal, so it costs nothing to pass. */
#define KS_SITE        (__FILE__ ":" KS_STR(__LINE__))

#define KS_LIKELY(x)   __builtin_expect(!!(x), 1)
#define KS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* .on is nonzero while the controlled backend owns scheduling.  Only
 * written by ks_ctl_begin / ks_ctl_end, when no other logical thread
 * exists.  The flag has a 64-byte line to itself (ksched.c says why). */
struct ks_ctl_active {
	_Alignas(64) _Atomic int on;
};
extern struct ks_ctl_active ks__ctl_active;

#if defined(KSCHED_PRODUCTION_ONLY)
/* The installed library (lib/CMakeLists.txt): nothing in it can start a
 * controlled run (ks_ctl_begin refuses), so every wrapper below compiles to
 * the bare pthread / C11 call. */
static inline bool ks_controlled(void)
{
	return false;
}
#else
static inline bool ks_controlled(void)
{
	return KS_UNLIKELY(atomic_load_explicit(&ks__ctl_active.on, memory_order_relaxed));
}
#endif

/* ---- objects ------------------------------------------------------------
 * The ctl_* fields belong to the controlled backend.  They are atomics so
 * that TSan, which is not told about the baton handoff, does not report the
 * scheduler's own bookkeeping as a race. */

typedef struct ks_mutex {
	pthread_mutex_t pm;
	_Atomic int ctl_owner; /* logical thread id + 1, 0 when free */
} ks_mutex_t;

typedef struct ks_rwlock {
	pthread_rwlock_t prw;
	_Atomic int ctl_writer;  /* logical thread id + 1, 0 when none */
	_Atomic int ctl_readers; /* number of read holders */
} ks_rwlock_t;

typedef struct ks_cond {
	pthread_cond_t pc;
	_Atomic uint64_t ctl_seq; /* bumped by signal/broadcast */
} ks_cond_t;

typedef struct ks_sem {
	ks_mutex_t m;
	ks_cond_t c;
	unsigned count;         /* production backend, under m */
	_Atomic long ctl_count; /* controlled backend */
} ks_sem_t;

typedef struct ks_atomic {
	_Atomic int64_t v;
} ks_atomic_t;

typedef struct ks_thread {
	pthread_t pt;
	int ctl_id; /* logical thread id, -1 when created outside a controlled run */
} ks_thread_t;

#define KS_MUTEX_INITIALIZER                                                                       \
	{                                                                                          \
		PTHREAD_MUTEX_INITIALIZER, 0                                                       \
	}
#define KS_RWLOCK_INITIALIZER                                                                      \
	{                                                                                          \
		PTHREAD_RWLOCK_INITIALIZER, 0, 0                                                   \
	}
#define KS_COND_INITIALIZER                                                                        \
	{                                                                                          \
		PTHREAD_COND_INITIALIZER, 0                                                        \
	}
#define KS_ATOMIC_INIT(x)                                                                          \
	{                                                                                          \
		(x)                                                                                \
	}

/* ---- the controlled backend's entry points (ctl_*.c) -------------------- */
void ks_ctl_mutex_lock(ks_mutex_t *m, const char *site);
bool ks_ctl_mutex_trylock(ks_mutex_t *m, const char *site);
/* The timed ones wait at most ns of virtual time (ctl_sync.c): a deadline
 * ends the wait only when no other thread can run before it, as a sleep
 * does; false when it did. */
bool ks_ctl_mutex_timedlock(ks_mutex_t *m, uint64_t ns, const char *site);
void ks_ctl_mutex_unlock(ks_mutex_t *m, const char *site);
void ks_ctl_rwlock_rdlock(ks_rwlock_t *l, const char *site);
void ks_ctl_rwlock_wrlock(ks_rwlock_t *l, const char *site);
void ks_ctl_rwlock_unlock(ks_rwlock_t *l, const char *site);
void ks_ctl_cond_wait(ks_cond_t *c, ks_mutex_t *m, const char *site);
bool ks_ctl_cond_timedwait(ks_cond_t *c, ks_mutex_t *m, uint64_t ns, const char *site);
void ks_ctl_cond_signal(ks_cond_t *c, bool broadcast, const char *site);
void ks_ctl_sem_wait(ks_sem_t *s, const char *site);
bool ks_ctl_sem_trywait(ks_sem_t *s, const char *site);
bool ks_ctl_sem_timedwait(ks_sem_t *s, uint64_t ns, const char *site);
void ks_ctl_sem_post(ks_sem_t *s, const char *site);
/* A scheduling point before an atomic operation on a shared counter. */
void ks_ctl_point(const char *site);
/* The same before an atomic that gives something up (a subtraction, a
 * negative addition: a reference dropped); memory access points count
 * from these (ctl_access.c). */
void ks_ctl_release_point(const char *site);
/* SV-COMP's atomic sections (kpt_svcomp.c): no other thread runs between
 * begin and end while this one can; they nest. */
void ks_ctl_atomic_begin(const char *site);
void ks_ctl_atomic_end(const char *site);
void ks_ctl_usleep(uint64_t us, const char *site);
void ks_ctl_yield(const char *site);
uint64_t ks_ctl_now_ns(void);
/* Virtual time now, then tick_ns more: a program's clock read (kpt), so
 * that time passes as it runs and a loop that polls the clock ends (ctl.c
 * moves time otherwise only when no thread can run); the sleepers and
 * timed waits whose time that passes become runnable. */
uint64_t ks_ctl_clock_read(uint64_t tick_ns);
int ks_ctl_thread_create(ks_thread_t *t, const char *name, void *(*fn)(void *), void *arg,
                         const char *site);
int ks_ctl_thread_join(ks_thread_t *t, void **ret, const char *site);

/* ---- production bodies ------------------------------------------------- */

int ks_mutex_init(ks_mutex_t *m);
void ks_mutex_destroy(ks_mutex_t *m);
int ks_rwlock_init(ks_rwlock_t *l);
void ks_rwlock_destroy(ks_rwlock_t *l);
int ks_cond_init(ks_cond_t *c);
void ks_cond_destroy(ks_cond_t *c);
int ks_sem_init(ks_sem_t *s, unsigned value);
void ks_sem_destroy(ks_sem_t *s);

static inline void ks_mutex_lock_at(ks_mutex_t *m, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_mutex_lock(m, site);
		return;
	}
	pthread_mutex_lock(&m->pm);
}

static inline bool ks_mutex_trylock_at(ks_mutex_t *m, const char *site)
{
	if (ks_controlled())
		return ks_ctl_mutex_trylock(m, site);
	return pthread_mutex_trylock(&m->pm) == 0;
}

static inline void ks_mutex_unlock_at(ks_mutex_t *m, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_mutex_unlock(m, site);
		return;
	}
	pthread_mutex_unlock(&m->pm);
}

static inline void ks_rwlock_rdlock_at(ks_rwlock_t *l, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_rwlock_rdlock(l, site);
		return;
	}
	pthread_rwlock_rdlock(&l->prw);
}

static inline void ks_rwlock_wrlock_at(ks_rwlock_t *l, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_rwlock_wrlock(l, site);
		return;
	}
	pthread_rwlock_wrlock(&l->prw);
}

static inline void ks_rwlock_unlock_at(ks_rwlock_t *l, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_rwlock_unlock(l, site);
		return;
	}
	pthread_rwlock_unlock(&l->prw);
}

static inline void ks_cond_wait_at(ks_cond_t *c, ks_mutex_t *m, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_cond_wait(c, m, site);
		return;
	}
	pthread_cond_wait(&c->pc, &m->pm);
}

static inline void ks_cond_signal_at(ks_cond_t *c, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_cond_signal(c, false, site);
		return;
	}
	pthread_cond_signal(&c->pc);
}

static inline void ks_cond_broadcast_at(ks_cond_t *c, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_cond_signal(c, true, site);
		return;
	}
	pthread_cond_broadcast(&c->pc);
}

static inline void ks_sem_wait_at(ks_sem_t *s, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_sem_wait(s, site);
		return;
	}
	pthread_mutex_lock(&s->m.pm);
	while (s->count == 0)
		pthread_cond_wait(&s->c.pc, &s->m.pm);
	s->count--;
	pthread_mutex_unlock(&s->m.pm);
}

static inline bool ks_sem_trywait_at(ks_sem_t *s, const char *site)
{
	bool ok;

	if (ks_controlled())
		return ks_ctl_sem_trywait(s, site);
	pthread_mutex_lock(&s->m.pm);
	ok = s->count > 0;
	if (ok)
		s->count--;
	pthread_mutex_unlock(&s->m.pm);
	return ok;
}

static inline void ks_sem_post_at(ks_sem_t *s, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_sem_post(s, site);
		return;
	}
	pthread_mutex_lock(&s->m.pm);
	s->count++;
	pthread_cond_signal(&s->c.pc);
	pthread_mutex_unlock(&s->m.pm);
}

/* Atomics on shared counters: sequentially consistent, as the seed's
 * _InterlockedAdd64.  The add/sub forms return the value *before* the op. */
static inline int64_t ks_atomic_load_at(ks_atomic_t *a, const char *site)
{
	if (ks_controlled())
		ks_ctl_point(site);
	return atomic_load(&a->v);
}

static inline void ks_atomic_store_at(ks_atomic_t *a, int64_t v, const char *site)
{
	if (ks_controlled())
		ks_ctl_point(site);
	atomic_store(&a->v, v);
}

static inline int64_t ks_atomic_add_at(ks_atomic_t *a, int64_t v, const char *site)
{
	if (ks_controlled()) {
		if (v < 0)
			ks_ctl_release_point(site);
		else
			ks_ctl_point(site);
	}
	return atomic_fetch_add(&a->v, v);
}

static inline int64_t ks_atomic_sub_at(ks_atomic_t *a, int64_t v, const char *site)
{
	if (ks_controlled())
		ks_ctl_release_point(site);
	return atomic_fetch_sub(&a->v, v);
}

static inline bool ks_atomic_cas_at(ks_atomic_t *a, int64_t *expected, int64_t desired,
                                    const char *site)
{
	if (ks_controlled())
		ks_ctl_point(site);
	return atomic_compare_exchange_strong(&a->v, expected, desired);
}

/* Statistics and accounting counters: atomic, but not a scheduling point,
 * so that bookkeeping never changes the interleavings a run explores.
 * Never use these for a protocol decision (reference counts, flags). */
static inline int64_t ks_atomic_add_quiet(ks_atomic_t *a, int64_t v)
{
	return atomic_fetch_add(&a->v, v);
}

/* The rest of the quiet family, for harness bookkeeping (the fuzz runner's
 * job table, the oracle's history, fault-site hit counters): sequentially
 * consistent like the scheduled forms, but never a scheduling point, so
 * nothing outside lib/sched needs to reach into ks_atomic_t.v. */
static inline int64_t ks_atomic_load_quiet(const ks_atomic_t *a)
{
	return atomic_load((_Atomic int64_t *)&a->v);
}

static inline void ks_atomic_store_quiet(ks_atomic_t *a, int64_t v)
{
	atomic_store(&a->v, v);
}

/* Back to zero between runs. */
static inline void ks_atomic_reset(ks_atomic_t *a)
{
	atomic_store(&a->v, 0);
}

static inline bool ks_atomic_cas_quiet(ks_atomic_t *a, int64_t *expected, int64_t desired)
{
	return atomic_compare_exchange_strong(&a->v, expected, desired);
}

/* Raises *a to v if v is larger; returns the value before. */
static inline int64_t ks_atomic_max_quiet(ks_atomic_t *a, int64_t v)
{
	int64_t cur = atomic_load(&a->v);
	while (cur < v && !atomic_compare_exchange_weak(&a->v, &cur, v))
		;
	return cur;
}

/* Reads without a scheduling point: for statistics and assertions that
 * must not perturb the schedule (never for protocol decisions). */
static inline int64_t ks_atomic_peek(const ks_atomic_t *a)
{
	return atomic_load_explicit((_Atomic int64_t *)&a->v, memory_order_relaxed);
}

void ks_usleep_prod(uint64_t us);
void ks_yield_prod(void);
uint64_t ks_now_ns_prod(void);
/* fn runs in the child of every later fork() (pthread_atfork's child
 * handler): 0, or an errno value. */
int ks_atfork_child(void (*fn)(void));
/* For a fork child handler only (one thread, the others gone): was m held
 * at the fork?  Never waits; m is left free and fresh either way. */
bool ks_mutex_child_reset(ks_mutex_t *m);

static inline void ks_usleep_at(uint64_t us, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_usleep(us, site);
		return;
	}
	ks_usleep_prod(us);
}

static inline void ks_yield_at(const char *site)
{
	if (ks_controlled()) {
		ks_ctl_yield(site);
		return;
	}
	ks_yield_prod();
}

/* Monotonic nanoseconds; virtual time under the controlled backend, so no
 * wall clock leaks into a controlled run. */
static inline uint64_t ks_now_ns(void)
{
	if (ks_controlled())
		return ks_ctl_now_ns();
	return ks_now_ns_prod();
}

/* The real monotonic clock in nanoseconds, under either backend: for
 * harness timing that must stay real inside a controlled run (latency
 * histograms, watchdogs, a tool's elapsed time).  Never for a decision of
 * the library or of a program: that is ks_now_ns, whose virtual time keeps
 * a controlled run reproducible. */
static inline uint64_t ks_wall_ns(void)
{
	return ks_now_ns_prod();
}

/* An explicit scheduling point with no other effect. */
static inline void ks_point_at(const char *site)
{
	if (ks_controlled())
		ks_ctl_point(site);
}

/*
 * An access point: a scheduling point at a plain access to a shared object,
 * opt-in (docs/scheduler.md, "Access points").  The ordinary points sit at
 * synchronization calls only, so a window that lies between a release and
 * a later plain read (a reference dropped before the last read of the
 * object) can never be entered by another thread.  With access points on,
 * a run may switch here, and a thread sleeping in a drain may be chosen as
 * if its sleep had just ended.  On only under the controlled backend and
 * only when the run's config asks (ks_ctl_config_t.access_points, or
 * KMGR_SCHED_ACCESS_POINTS=1 in the environment); otherwise no step, no
 * decision, so schedules and corpora are unchanged.  Nothing at all in the
 * production-only build.
 */
void ks_ctl_access_point(const char *site);

static inline void ks_access_point_at(const char *site)
{
#if defined(KSCHED_PRODUCTION_ONLY)
	(void)site;
#else
	if (ks_controlled())
		ks_ctl_access_point(site);
#endif
}

/* One pointer a thread sets to recognise itself later (e.g. "the worker
 * running on this thread"): thread-local in production, kept per logical
 * thread under the controlled backend (whose fibers share a real thread). */
void ks_thread_tag_set(const void *tag);
const void *ks_thread_tag(void);
const void *ks_ctl_thread_tag(void);
void ks_ctl_thread_tag_set(const void *tag);

int ks_thread_create_at(ks_thread_t *t, const char *name, void *(*fn)(void *), void *arg,
                        const char *site);
int ks_thread_join_at(ks_thread_t *t, void **ret, const char *site);

/*
 * The spin-wait of the unload drain: wait until *ctr == 0, sleeping
 * sleep_us between probes; every warn_every probes call warn(ctx, iters)
 * and keep waiting (it never times out, by design: see the seed's §4).
 * warn_every == 0 disables the warning.  Returns the number of probes.
 */
typedef void (*ks_spin_warn_fn)(void *ctx, uint64_t iters);
uint64_t ks_spin_wait_zero_at(ks_atomic_t *ctr, uint64_t sleep_us, uint64_t warn_every,
                              ks_spin_warn_fn warn, void *ctx, const char *site);

/* ---- the names code uses ------------------------------------------------ */
#define ks_mutex_lock(m)                   ks_mutex_lock_at((m), KS_SITE)
#define ks_mutex_trylock(m)                ks_mutex_trylock_at((m), KS_SITE)
#define ks_mutex_unlock(m)                 ks_mutex_unlock_at((m), KS_SITE)
#define ks_rwlock_rdlock(l)                ks_rwlock_rdlock_at((l), KS_SITE)
#define ks_rwlock_wrlock(l)                ks_rwlock_wrlock_at((l), KS_SITE)
#define ks_rwlock_unlock(l)                ks_rwlock_unlock_at((l), KS_SITE)
#define ks_cond_wait(c, m)                 ks_cond_wait_at((c), (m), KS_SITE)
#define ks_cond_signal(c)                  ks_cond_signal_at((c), KS_SITE)
#define ks_cond_broadcast(c)               ks_cond_broadcast_at((c), KS_SITE)
#define ks_sem_wait(s)                     ks_sem_wait_at((s), KS_SITE)
#define ks_sem_trywait(s)                  ks_sem_trywait_at((s), KS_SITE)
#define ks_sem_post(s)                     ks_sem_post_at((s), KS_SITE)
#define ks_atomic_load(a)                  ks_atomic_load_at((a), KS_SITE)
#define ks_atomic_store(a, v)              ks_atomic_store_at((a), (v), KS_SITE)
#define ks_atomic_add(a, v)                ks_atomic_add_at((a), (v), KS_SITE)
#define ks_atomic_sub(a, v)                ks_atomic_sub_at((a), (v), KS_SITE)
#define ks_atomic_cas(a, e, d)             ks_atomic_cas_at((a), (e), (d), KS_SITE)
#define ks_usleep(us)                      ks_usleep_at((us), KS_SITE)
#define ks_yield()                         ks_yield_at(KS_SITE)
#define ks_point()                         ks_point_at(KS_SITE)
#define ks_access_point()                  ks_access_point_at(KS_SITE)
#define ks_thread_create(t, name, fn, arg) ks_thread_create_at((t), (name), (fn), (arg), KS_SITE)
#define ks_thread_join(t, ret)             ks_thread_join_at((t), (ret), KS_SITE)
#define ks_spin_wait_zero(ctr, us, every, warn, ctx)                                               \
	ks_spin_wait_zero_at((ctr), (us), (every), (warn), (ctx), KS_SITE)

#endif /* KSCHED_H */
