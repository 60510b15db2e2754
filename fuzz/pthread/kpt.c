/*
 * kpt.c - the shim behind kpt.h: a pthreads program's calls forwarded to
 * the real pthread functions outside a controlled run, and to the
 * controlled backend of lib/sched inside one (docs/pthread.md).
 *
 * Objects.  The scheduler keeps a lock's state in the ctl_* fields of a
 * ks_mutex_t / ks_rwlock_t / ks_cond_t; a pthread_mutex_t has no room for
 * them, so each pthread object gets one from a side table keyed by its
 * address and kind, created on first use (a PTHREAD_*_INITIALIZER object
 * needs no init call) and reset by init and destroy.  The table belongs to
 * one run: kpt_fuzz_run starts a new generation, which empties it without a
 * memset.  No lock: exactly one logical thread runs at a time, and outside
 * a run the table is not used.
 *
 * Threads.  pthread_create is ks_ctl_thread_create through a trampoline
 * whose first act is a release point ("thread start"): memory access points
 * count from a thread's releases, and without it a thread that makes no
 * synchronization call would have none to count from.  The pthread_t handed
 * back is the index + 1 of the thread in this run's table (main has its own
 * value); pthread_join maps it back.  Deadlocks and hangs are the
 * scheduler's to report (KSCHED DEADLOCK, KSCHED HANG: abort).
 *
 * The raw pthread calls here are the forwarding itself (ci/layering-allow.txt).
 */
#define KPT_NO_MACROS
#include "kpt.h"

#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/kctl.h"

/* The shim's tables are handed from one logical thread to the next by the
 * scheduler's switches, which carry no happens-before edge on purpose
 * (docs/scheduler.md, "Sanitizers"): TSan is told to look away from them,
 * as from the scheduler's own state, so that it reports the program's
 * races and not the shim's bookkeeping.  Never held across a call that
 * can switch threads. */
#if defined(KMGR_TSAN)
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);

static void quiet_begin(void)
{
	AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
	AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
}

static void quiet_end(void)
{
	AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
	AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
}
#else
static void quiet_begin(void)
{
}

static void quiet_end(void)
{
}
#endif

/* ---- the side table of pthread objects --------------------------------- */

enum kpt_kind {
	KPT_MUTEX = 1,
	KPT_RWLOCK,
	KPT_COND,
	KPT_SEM,
	KPT_ONCE,
	KPT_BARRIER,
	KPT_SPIN,
};

/* A mutex's pthread type (recursive, error-checking) and owner: the
 * scheduler's mutex knows neither. */
struct kpt_mutex {
	ks_mutex_t m;
	int type;
	int owner; /* logical thread id + 1, 0: free */
	unsigned depth;
};

struct kpt_once {
	ks_mutex_t m;
	bool done;
};

struct kpt_barrier {
	ks_mutex_t m;
	ks_cond_t c;
	unsigned n, arrived, gen;
};

struct kpt_obj {
	const void *addr;
	uint32_t gen; /* in use in run `gen` only: an older one is an empty slot */
	uint32_t kind;
	union {
		struct kpt_mutex m;
		ks_rwlock_t rw;
		ks_cond_t c;
		ks_sem_t s;
		struct kpt_once o;
		struct kpt_barrier b;
	} u;
};

#define KPT_OBJ_BITS 12
#define KPT_MAX_OBJS (1u << KPT_OBJ_BITS)
static struct kpt_obj kpt_objs[KPT_MAX_OBJS];
static uint32_t kpt_gen;

/* The object's scheduler state, made on first use; fresh: reset it (init,
 * destroy).  Open addressing with no deletion within a run, so a probe
 * ends at the first slot of an older generation. */
static struct kpt_obj *obj_find(const void *addr, enum kpt_kind kind, bool fresh, const char *site)
{
	uint64_t h = ((uint64_t)(uintptr_t)addr ^ kind) * 0x9E3779B97F4A7C15ull;

	for (uint32_t i = 0; i < KPT_MAX_OBJS; i++) {
		struct kpt_obj *o =
		    &kpt_objs[((h >> (64 - KPT_OBJ_BITS)) + i) & (KPT_MAX_OBJS - 1)];

		if (o->gen != kpt_gen) {
			o->gen = kpt_gen;
			o->addr = addr;
			o->kind = kind;
			memset(&o->u, 0, sizeof(o->u));
			return o;
		}
		if (o->addr == addr && o->kind == kind) {
			if (fresh)
				memset(&o->u, 0, sizeof(o->u));
			return o;
		}
	}
	fprintf(stderr,
	        "KPT LIMIT: more than %u pthread objects in one run, at %s "
	        "(raise KPT_OBJ_BITS in fuzz/pthread/kpt.c)\n",
	        KPT_MAX_OBJS, site);
	abort();
}

static struct kpt_obj *kpt_obj(const void *addr, enum kpt_kind kind, bool fresh, const char *site)
{
	struct kpt_obj *o;

	quiet_begin();
	o = obj_find(addr, kind, fresh, site);
	quiet_end();
	return o;
}

static struct kpt_mutex *kpmutex(pthread_mutex_t *m, const char *site)
{
	return &kpt_obj(m, KPT_MUTEX, false, site)->u.m;
}

static ks_rwlock_t *krwlock(pthread_rwlock_t *l, const char *site)
{
	return &kpt_obj(l, KPT_RWLOCK, false, site)->u.rw;
}

static ks_cond_t *kcond(pthread_cond_t *c, const char *site)
{
	return &kpt_obj(c, KPT_COND, false, site)->u.c;
}

void kpt_unsupported(const char *what, const char *site)
{
	if (!ks_controlled())
		return;
	fprintf(stderr,
	        "KPT UNSUPPORTED: %s at %s is not modelled under the controlled scheduler "
	        "(docs/pthread.md)\n",
	        what, site);
	abort();
}

/* ---- mutexes, rwlocks, conditions -------------------------------------- */

/* In a controlled run the real object is never touched (the scheduler's
 * state is in the side table): a program built for another ABI, such as a
 * preprocessed 32-bit file, has smaller objects than this libc's. */
int kpt_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a, const char *site)
{
	int type = PTHREAD_MUTEX_DEFAULT;

	if (!ks_controlled())
		return pthread_mutex_init(m, a);
	if (a)
		pthread_mutexattr_gettype(a, &type);
	kpt_obj(m, KPT_MUTEX, true, site)->u.m.type = type;
	return 0;
}

int kpt_mutex_destroy(pthread_mutex_t *m, const char *site)
{
	if (!ks_controlled())
		return pthread_mutex_destroy(m);
	kpt_obj(m, KPT_MUTEX, true, site);
	return 0;
}

static int lself(void)
{
	return ks_ctl_self() + 1;
}

int kpt_mutex_lock(pthread_mutex_t *m, const char *site)
{
	struct kpt_mutex *km;

	if (!ks_controlled())
		return pthread_mutex_lock(m);
	km = kpmutex(m, site);
	if (km->owner == lself() && km->type == PTHREAD_MUTEX_RECURSIVE) {
		km->depth++;
		return 0;
	}
	if (km->owner == lself() && km->type == PTHREAD_MUTEX_ERRORCHECK)
		return EDEADLK;
	ks_ctl_mutex_lock(&km->m, site);
	km->owner = lself();
	km->depth = 1;
	return 0;
}

int kpt_mutex_trylock(pthread_mutex_t *m, const char *site)
{
	struct kpt_mutex *km;

	if (!ks_controlled())
		return pthread_mutex_trylock(m);
	km = kpmutex(m, site);
	if (km->owner == lself() && km->type == PTHREAD_MUTEX_RECURSIVE) {
		km->depth++;
		return 0;
	}
	if (!ks_ctl_mutex_trylock(&km->m, site))
		return EBUSY;
	km->owner = lself();
	km->depth = 1;
	return 0;
}

int kpt_mutex_unlock(pthread_mutex_t *m, const char *site)
{
	struct kpt_mutex *km;

	if (!ks_controlled())
		return pthread_mutex_unlock(m);
	km = kpmutex(m, site);
	if (km->type == PTHREAD_MUTEX_RECURSIVE || km->type == PTHREAD_MUTEX_ERRORCHECK) {
		if (km->owner != lself())
			return EPERM;
		if (--km->depth > 0)
			return 0;
	}
	km->owner = 0;
	ks_ctl_mutex_unlock(&km->m, site);
	return 0;
}

/* Timed lock on virtual time: the lock, or, held, a sleep until the others
 * cannot run, then one more try; ETIMEDOUT if still held. */
int kpt_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t, const char *site)
{
	int rc;

	if (!ks_controlled())
		return pthread_mutex_timedlock(m, t);
	rc = kpt_mutex_trylock(m, site);
	if (rc != EBUSY)
		return rc;
	ks_ctl_usleep(1, site);
	rc = kpt_mutex_trylock(m, site);
	return rc == EBUSY ? ETIMEDOUT : rc;
}

int kpt_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a, const char *site)
{
	if (!ks_controlled())
		return pthread_rwlock_init(l, a);
	kpt_obj(l, KPT_RWLOCK, true, site);
	return 0;
}

int kpt_rwlock_destroy(pthread_rwlock_t *l, const char *site)
{
	if (!ks_controlled())
		return pthread_rwlock_destroy(l);
	kpt_obj(l, KPT_RWLOCK, true, site);
	return 0;
}

int kpt_rwlock_rdlock(pthread_rwlock_t *l, const char *site)
{
	if (!ks_controlled())
		return pthread_rwlock_rdlock(l);
	ks_ctl_rwlock_rdlock(krwlock(l, site), site);
	return 0;
}

int kpt_rwlock_wrlock(pthread_rwlock_t *l, const char *site)
{
	if (!ks_controlled())
		return pthread_rwlock_wrlock(l);
	ks_ctl_rwlock_wrlock(krwlock(l, site), site);
	return 0;
}

/* Try-locks: a scheduling point, then the lock if it is free now (no
 * switch between the look and the taking: one logical thread runs). */
int kpt_rwlock_tryrdlock(pthread_rwlock_t *l, const char *site)
{
	ks_rwlock_t *k;

	if (!ks_controlled())
		return pthread_rwlock_tryrdlock(l);
	ks_ctl_point(site);
	k = krwlock(l, site);
	if (atomic_load(&k->ctl_writer))
		return EBUSY;
	atomic_fetch_add(&k->ctl_readers, 1);
	return 0;
}

int kpt_rwlock_trywrlock(pthread_rwlock_t *l, const char *site)
{
	ks_rwlock_t *k;

	if (!ks_controlled())
		return pthread_rwlock_trywrlock(l);
	ks_ctl_point(site);
	k = krwlock(l, site);
	if (atomic_load(&k->ctl_writer) || atomic_load(&k->ctl_readers))
		return EBUSY;
	atomic_store(&k->ctl_writer, ks_ctl_self() + 1);
	return 0;
}

int kpt_rwlock_unlock(pthread_rwlock_t *l, const char *site)
{
	if (!ks_controlled())
		return pthread_rwlock_unlock(l);
	ks_ctl_rwlock_unlock(krwlock(l, site), site);
	return 0;
}

int kpt_cond_init(pthread_cond_t *c, const pthread_condattr_t *a, const char *site)
{
	if (!ks_controlled())
		return pthread_cond_init(c, a);
	kpt_obj(c, KPT_COND, true, site);
	return 0;
}

int kpt_cond_destroy(pthread_cond_t *c, const char *site)
{
	if (!ks_controlled())
		return pthread_cond_destroy(c);
	kpt_obj(c, KPT_COND, true, site);
	return 0;
}

int kpt_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const char *site)
{
	struct kpt_mutex *km;
	unsigned depth;

	if (!ks_controlled())
		return pthread_cond_wait(c, m);
	km = kpmutex(m, site);
	depth = km->depth;
	km->owner = 0;
	ks_ctl_cond_wait(kcond(c, site), &km->m, site);
	km->owner = lself();
	km->depth = depth;
	return 0;
}

/* A timed wait on virtual time: the mutex given up, a sleep until the
 * others cannot run, the mutex taken back, ETIMEDOUT (a signal meanwhile
 * is lost to it, as one that comes after the deadline is). */
int kpt_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t,
                       const char *site)
{
	if (!ks_controlled())
		return pthread_cond_timedwait(c, m, t);
	kpt_mutex_unlock(m, site);
	ks_ctl_usleep(1, site);
	kpt_mutex_lock(m, site);
	return ETIMEDOUT;
}

int kpt_cond_signal(pthread_cond_t *c, const char *site)
{
	if (!ks_controlled())
		return pthread_cond_signal(c);
	ks_ctl_cond_signal(kcond(c, site), false, site);
	return 0;
}

int kpt_cond_broadcast(pthread_cond_t *c, const char *site)
{
	if (!ks_controlled())
		return pthread_cond_broadcast(c);
	ks_ctl_cond_signal(kcond(c, site), true, site);
	return 0;
}

/* ---- threads ------------------------------------------------------------ */

struct kpt_thread {
	ks_thread_t kt;
	void *(*fn)(void *);
	void *arg;
	bool joined, detached;
	jmp_buf exit_jb; /* pthread_exit: back to the trampoline */
	void *exit_ret;
};

#define KPT_MAX_THREADS 1024
/* pthread_self() of the run's main thread: no index of the table. */
#define KPT_MAIN_HANDLE ((pthread_t)KPT_MAX_THREADS + 1)
static struct kpt_thread kpt_thr[KPT_MAX_THREADS];
static unsigned kpt_nthr; /* threads created in this run */

static void *kpt_trampoline(void *p)
{
	struct kpt_thread *t = p;

	ks_ctl_thread_tag_set(t);
	/* release 0 of every thread: access points can count from its start */
	ks_ctl_release_point("thread start");
	if (setjmp(t->exit_jb))
		return t->exit_ret;
	return t->fn(t->arg);
}

/* main's pthread_exit: back to kpt_main_body, which then returns as main
 * would have, and the run's end waits for the other threads (POSIX: the
 * process lives on until the last thread ends). */
static jmp_buf kpt_main_exit_jb;
static bool kpt_main_exit_armed;

void kpt_exit(void *ret, const char *site)
{
	struct kpt_thread *t;

	(void)site;
	if (!ks_controlled())
		pthread_exit(ret);
	t = (struct kpt_thread *)ks_ctl_thread_tag();
	if (t) {
		t->exit_ret = ret;
		longjmp(t->exit_jb, 1);
	}
	if (kpt_main_exit_armed)
		longjmp(kpt_main_exit_jb, 1);
	fprintf(stderr,
	        "KPT LIMIT: pthread_exit in main at %s outside a program's main "
	        "(a KPT_FUZZ_BODY scenario must return)\n",
	        site);
	abort();
}

int kpt_create(pthread_t *pt, const pthread_attr_t *a, void *(*fn)(void *), void *arg,
               const char *site)
{
	struct kpt_thread *t;
	char name[32];
	int rc;

	if (!ks_controlled())
		return pthread_create(pt, a, fn, arg);
	quiet_begin();
	if (kpt_nthr >= KPT_MAX_THREADS) {
		quiet_end();
		fprintf(stderr,
		        "KPT LIMIT: more than %d threads created in one run, at %s "
		        "(raise KPT_MAX_THREADS in fuzz/pthread/kpt.c)\n",
		        KPT_MAX_THREADS, site);
		abort();
	}
	/* Taken, and *pt set (as glibc does, unseen by TSan), before the new
	 * thread can run: it may create threads or read its handle at once
	 * (the creation's scheduling point comes after both). */
	t = &kpt_thr[kpt_nthr++];
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->arg = arg;
	*pt = (pthread_t)kpt_nthr;
	snprintf(name, sizeof(name), "pthread %u", kpt_nthr);
	quiet_end();
	rc = ks_ctl_thread_create(&t->kt, name, kpt_trampoline, t, site);
	if (rc == EAGAIN) {
		fprintf(stderr,
		        "KPT LIMIT: more than %d live threads at %s "
		        "(raise KS_CTL_MAX_THREADS in lib/sched/kctl.h)\n",
		        KS_CTL_MAX_THREADS, site);
		abort();
	}
	if (rc != 0) {
		quiet_begin();
		kpt_nthr--; /* failed before any scheduling point: still the last one */
		quiet_end();
	}
	return rc;
}

/* The thread of handle h, if it can still be joined or detached: 0, or
 * ESRCH (no such thread) or EINVAL (joined or detached already). */
static int kpt_handle(pthread_t h, struct kpt_thread **tp)
{
	uintptr_t i = (uintptr_t)h;
	int rc = 0;

	quiet_begin();
	if (i < 1 || i > kpt_nthr)
		rc = ESRCH;
	else if (kpt_thr[i - 1].joined || kpt_thr[i - 1].detached)
		rc = EINVAL;
	else
		*tp = &kpt_thr[i - 1];
	quiet_end();
	return rc;
}

int kpt_join(pthread_t h, void **ret, const char *site)
{
	struct kpt_thread *t = NULL;
	int rc;

	if (!ks_controlled())
		return pthread_join(h, ret);
	if (pthread_equal(h, kpt_self()))
		return EDEADLK; /* glibc's answer to a self-join */
	rc = kpt_handle(h, &t);
	if (rc == 0)
		rc = ks_ctl_thread_join(&t->kt, ret, site);
	if (rc == 0) {
		quiet_begin();
		t->joined = true;
		quiet_end();
	}
	return rc;
}

/* A detached thread is still waited for at the end of the run (ks_ctl_end). */
int kpt_detach(pthread_t h, const char *site)
{
	struct kpt_thread *t = NULL;
	int rc;

	(void)site;
	if (!ks_controlled())
		return pthread_detach(h);
	rc = kpt_handle(h, &t);
	if (rc == 0) {
		quiet_begin();
		t->detached = true;
		quiet_end();
	}
	return rc;
}

pthread_t kpt_self(void)
{
	const struct kpt_thread *t;

	if (!ks_controlled())
		return pthread_self();
	t = ks_ctl_thread_tag();
	return t ? (pthread_t)(t - kpt_thr + 1) : KPT_MAIN_HANDLE;
}

/* ---- yield, sleep, atomics ---------------------------------------------- */

int kpt_sched_yield(const char *site)
{
	if (!ks_controlled())
		return sched_yield();
	ks_ctl_yield(site);
	return 0;
}

int kpt_usleep(useconds_t us, const char *site)
{
	if (!ks_controlled())
		return usleep(us);
	ks_ctl_usleep(us, site);
	return 0;
}

unsigned kpt_sleep(unsigned s, const char *site)
{
	if (!ks_controlled())
		return sleep(s);
	ks_ctl_usleep((uint64_t)s * 1000000u, site);
	return 0;
}

int kpt_nanosleep(const struct timespec *t, struct timespec *rem, const char *site)
{
	if (!ks_controlled())
		return nanosleep(t, rem);
	ks_ctl_usleep(t ? (uint64_t)t->tv_sec * 1000000u + (uint64_t)t->tv_nsec / 1000u : 0, site);
	return 0;
}

/* ---- semaphores, once, barriers, spin locks ----------------------------- */

static ks_sem_t *ksem(sem_t *s, const char *site)
{
	return &kpt_obj(s, KPT_SEM, false, site)->u.s;
}

int kpt_sem_init(sem_t *s, int pshared, unsigned value, const char *site)
{
	if (!ks_controlled())
		return sem_init(s, pshared, value);
	atomic_store(&kpt_obj(s, KPT_SEM, true, site)->u.s.ctl_count, (long)value);
	return 0;
}

int kpt_sem_destroy(sem_t *s, const char *site)
{
	if (!ks_controlled())
		return sem_destroy(s);
	kpt_obj(s, KPT_SEM, true, site);
	return 0;
}

int kpt_sem_wait(sem_t *s, const char *site)
{
	if (!ks_controlled())
		return sem_wait(s);
	ks_ctl_sem_wait(ksem(s, site), site);
	return 0;
}

int kpt_sem_trywait(sem_t *s, const char *site)
{
	if (!ks_controlled())
		return sem_trywait(s);
	if (ks_ctl_sem_trywait(ksem(s, site), site))
		return 0;
	errno = EAGAIN;
	return -1;
}

/* On virtual time, as kpt_mutex_timedlock. */
int kpt_sem_timedwait(sem_t *s, const struct timespec *t, const char *site)
{
	if (!ks_controlled())
		return sem_timedwait(s, t);
	if (ks_ctl_sem_trywait(ksem(s, site), site))
		return 0;
	ks_ctl_usleep(1, site);
	if (ks_ctl_sem_trywait(ksem(s, site), site))
		return 0;
	errno = ETIMEDOUT;
	return -1;
}

int kpt_sem_post(sem_t *s, const char *site)
{
	if (!ks_controlled())
		return sem_post(s);
	ks_ctl_sem_post(ksem(s, site), site);
	return 0;
}

int kpt_sem_getvalue(sem_t *s, int *v, const char *site)
{
	if (!ks_controlled())
		return sem_getvalue(s, v);
	*v = (int)atomic_load(&ksem(s, site)->ctl_count);
	return 0;
}

/* The first caller runs fn under the once's own lock; the others wait on
 * it and find it done. */
int kpt_once(pthread_once_t *o, void (*fn)(void), const char *site)
{
	struct kpt_once *ko;

	if (!ks_controlled())
		return pthread_once(o, fn);
	ko = &kpt_obj(o, KPT_ONCE, false, site)->u.o;
	ks_ctl_mutex_lock(&ko->m, site);
	if (!ko->done) {
		fn();
		ko->done = true;
	}
	ks_ctl_mutex_unlock(&ko->m, site);
	return 0;
}

int kpt_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned n,
                     const char *site)
{
	if (!ks_controlled())
		return pthread_barrier_init(b, a, n);
	if (n == 0)
		return EINVAL;
	kpt_obj(b, KPT_BARRIER, true, site)->u.b.n = n;
	return 0;
}

int kpt_barrier_destroy(pthread_barrier_t *b, const char *site)
{
	if (!ks_controlled())
		return pthread_barrier_destroy(b);
	kpt_obj(b, KPT_BARRIER, true, site);
	return 0;
}

int kpt_barrier_wait(pthread_barrier_t *b, const char *site)
{
	struct kpt_barrier *kb;
	int rc = 0;

	if (!ks_controlled())
		return pthread_barrier_wait(b);
	kb = &kpt_obj(b, KPT_BARRIER, false, site)->u.b;
	if (kb->n == 0) {
		fprintf(stderr,
		        "KPT MISUSE: pthread_barrier_wait on a barrier never initialised, at %s\n",
		        site);
		abort();
	}
	ks_ctl_mutex_lock(&kb->m, site);
	if (++kb->arrived == kb->n) {
		kb->arrived = 0;
		kb->gen++;
		ks_ctl_cond_signal(&kb->c, true, site);
		rc = PTHREAD_BARRIER_SERIAL_THREAD;
	} else {
		unsigned gen = kb->gen;

		while (gen == kb->gen)
			ks_ctl_cond_wait(&kb->c, &kb->m, site);
	}
	ks_ctl_mutex_unlock(&kb->m, site);
	return rc;
}

/* A spin lock is a mutex to the scheduler: a spinner is a blocked thread,
 * and two spinning on each other a deadlock. */
static ks_mutex_t *kspin(pthread_spinlock_t *l, const char *site)
{
	return &kpt_obj((const void *)(uintptr_t)l, KPT_SPIN, false, site)->u.m.m;
}

int kpt_spin_init(pthread_spinlock_t *l, int pshared, const char *site)
{
	if (!ks_controlled())
		return pthread_spin_init(l, pshared);
	kpt_obj((const void *)(uintptr_t)l, KPT_SPIN, true, site);
	return 0;
}

int kpt_spin_destroy(pthread_spinlock_t *l, const char *site)
{
	if (!ks_controlled())
		return pthread_spin_destroy(l);
	kpt_obj((const void *)(uintptr_t)l, KPT_SPIN, true, site);
	return 0;
}

int kpt_spin_lock(pthread_spinlock_t *l, const char *site)
{
	if (!ks_controlled())
		return pthread_spin_lock(l);
	ks_ctl_mutex_lock(kspin(l, site), site);
	return 0;
}

int kpt_spin_trylock(pthread_spinlock_t *l, const char *site)
{
	if (!ks_controlled())
		return pthread_spin_trylock(l);
	return ks_ctl_mutex_trylock(kspin(l, site), site) ? 0 : EBUSY;
}

int kpt_spin_unlock(pthread_spinlock_t *l, const char *site)
{
	if (!ks_controlled())
		return pthread_spin_unlock(l);
	ks_ctl_mutex_unlock(kspin(l, site), site);
	return 0;
}

void kpt_point(const char *site)
{
	if (ks_controlled())
		ks_ctl_point(site);
}

void kpt_release_point(const char *site)
{
	if (ks_controlled())
		ks_ctl_release_point(site);
}

/* ---- one input, one controlled run -------------------------------------- */

/*
 * The input: byte 0's low 2 bits are the number n of memory access points
 * (0..3), then 3 bytes each: the logical thread (bits 0-2: 0 is main, the
 * program's threads 1.. in creation order, a joined thread's id going to
 * the next one created), its release (bits 0-4: 0 is
 * the thread's start, then every unlock, atomic store or subtraction) and
 * k (bits 0-3, plus 1: the k-th heap or global access after that release
 * is the point).  The rest are the decision bytes (KS_STRAT_BYTES: each
 * decision takes ceil(log2(candidates)) bits; when they run out, no
 * preemption).  Every input is valid and means one schedule.
 */
static void kpt_decode(const uint8_t *data, size_t size, ks_ctl_config_t *cfg)
{
	size_t p = 1;
	uint32_t n;

	ks_ctl_config_init(cfg);
	cfg->strategy = KS_STRAT_BYTES;
	if (size == 0)
		return;
	n = data[0] & 3u;
	for (cfg->ap_n = 0; cfg->ap_n < n && p + 3 <= size; cfg->ap_n++, p += 3) {
		cfg->ap[cfg->ap_n].thread = data[p] & 7u;
		cfg->ap[cfg->ap_n].point = data[p + 1] & 31u;
		cfg->ap[cfg->ap_n].k = (data[p + 2] & 15u) + 1;
	}
	cfg->bytes = data + p;
	cfg->nbytes = size - p;
}

struct kpt_run {
	void (*body)(void);
};

static void kpt_run_body(void *arg)
{
	((struct kpt_run *)arg)->body();
}

/* ---- the input's own bytes, infeasible paths ----------------------------- */

static const uint8_t *kpt_in;
static size_t kpt_in_left;
static bool kpt_path_infeasible;
static ks_sem_t kpt_never; /* a semaphore nobody posts */

uint8_t kpt_input_byte(void)
{
	if (!kpt_in_left)
		return 0;
	return kpt_in[--kpt_in_left];
}

void kpt_infeasible(const char *what)
{
	if (!ks_controlled()) {
		fprintf(stderr, "kpt: %s: assumption false outside a run\n", what);
		exit(0);
	}
	kpt_path_infeasible = true;
	for (;;)
		ks_ctl_sem_wait(&kpt_never, what);
}

/* A deadlock after an infeasible path is not the program's: the run is
 * dropped (every thread unwound), not reported. */
static void kpt_on_failure(void *ctx, ks_failure_t kind, const char *report)
{
	(void)ctx;
	if (kind == KS_DEADLOCK && kpt_path_infeasible)
		return;
	fputs(report, stderr);
	fflush(stderr);
	abort();
}

/* ---- the program's initial state, every run ----------------------------- */

/* The program's writable globals (kpt.h's #pragma clang section): weak, so
 * that a program without any links too (the bounds are then NULL). */
extern char __start_kpt_data[] __attribute__((weak));
extern char __stop_kpt_data[] __attribute__((weak));
extern char __start_kpt_bss[] __attribute__((weak));
extern char __stop_kpt_bss[] __attribute__((weak));

static char *kpt_snap; /* the data section as it was before the first run */

/* Plain word copies, not seen by the sanitizers: the sections hold ASan's
 * global redzones between the program's variables, and a checked copy
 * would report them. */
#define KPT_NOSAN __attribute__((no_sanitize("address", "memory", "thread", "undefined")))

KPT_NOSAN static void raw_copy(char *dst, const char *src, size_t n)
{
	volatile char *d = dst;

	for (size_t i = 0; i < n; i++)
		d[i] = src[i];
}

KPT_NOSAN static void raw_zero(char *dst, size_t n)
{
	volatile char *d = dst;

	for (size_t i = 0; i < n; i++)
		d[i] = 0;
}

#if defined(KMGR_ASAN)
#include <sanitizer/lsan_interface.h>

/* LLVM 17's (allocator_interface.h); weak, for the clang-14 fallback
 * toolchain, whose runtime has none: then only a pointer to a block's
 * start is kept (LeakSanitizer ignores the call for any other). */
const void *__sanitizer_get_allocated_begin(const void *p) __attribute__((weak));

/* What a process exit would leave: the heap blocks the globals point to
 * are kept, as ignored by LeakSanitizer (and what they point to with
 * them), instead of becoming a leak when the globals are restored. */
KPT_NOSAN static void keep_heap(const char *lo, const char *hi)
{
	for (const char *p = lo; p + sizeof(void *) <= hi; p += sizeof(void *)) {
		const void *v = *(const void *const volatile *)p;
		const void *b;

		if (!v)
			continue;
		b = __sanitizer_get_allocated_begin ? __sanitizer_get_allocated_begin(v) : v;
		if (b)
			__lsan_ignore_object(b);
	}
}
#else
static void keep_heap(const char *lo, const char *hi)
{
	(void)lo;
	(void)hi;
}
#endif

void kpt_state_restore(void)
{
	size_t nd = (size_t)(__stop_kpt_data - __start_kpt_data);
	size_t nb = (size_t)(__stop_kpt_bss - __start_kpt_bss);

	if (!__start_kpt_data)
		nd = 0;
	if (!__start_kpt_bss)
		nb = 0;
	if (nd && !kpt_snap) {
		kpt_snap = malloc(nd);
		if (!kpt_snap) {
			fprintf(stderr,
			        "KPT LIMIT: no memory for the snapshot of %zu bytes of globals\n",
			        nd);
			abort();
		}
		raw_copy(kpt_snap, __start_kpt_data, nd);
		return; /* the first run starts from the state just saved */
	}
	if (nd) {
		keep_heap(__start_kpt_data, __stop_kpt_data);
		raw_copy(__start_kpt_data, kpt_snap, nd);
	}
	if (nb) {
		keep_heap(__start_kpt_bss, __stop_kpt_bss);
		raw_zero(__start_kpt_bss, nb);
	}
}

int kpt_fuzz_run(const uint8_t *data, size_t size, void (*body)(void))
{
	static int verbose = -1;
	struct kpt_run run = {body};
	ks_ctl_config_t cfg;
	ks_ctl_result_t res;

	if (verbose < 0) {
		const char *v = getenv("KPT_VERBOSE");

		verbose = v && *v && strcmp(v, "0") != 0;
	}
	kpt_decode(data, size, &cfg);
	cfg.on_failure = kpt_on_failure;
	ks_ctl_spin_detect(true); /* a spin on a plain flag: yield, then HANG */
	if (verbose) {
		fprintf(stderr, "kpt: access points:");
		for (uint32_t i = 0; i < cfg.ap_n; i++)
			fprintf(stderr, " t%u:%u+%u", cfg.ap[i].thread, cfg.ap[i].point,
			        cfg.ap[i].k);
		fprintf(stderr, "%s; decision bytes: %zu\n", cfg.ap_n ? "" : " none", cfg.nbytes);
	}
	/* a new generation empties the object table */
	quiet_begin();
	if (++kpt_gen == 0) {
		memset(kpt_objs, 0, sizeof(kpt_objs));
		kpt_gen = 1;
	}
	kpt_nthr = 0;
	kpt_in = data;
	kpt_in_left = size;
	kpt_path_infeasible = false;
	memset(&kpt_never, 0, sizeof(kpt_never));
	kpt_state_restore();
	quiet_end();
	if (ks_ctl_run(&cfg, kpt_run_body, &run, &res) != 0) {
		fprintf(stderr, "KPT MISUSE: kpt_fuzz_run inside a controlled run\n");
		abort();
	}
	if (verbose) {
		char trace[256];

		ks_ctl_trace_format(res.trace, res.ntrace, trace, sizeof(trace));
		fprintf(stderr, "kpt: %llu steps, %u threads, trace %s\n",
		        (unsigned long long)res.steps, res.threads, trace);
	}
	return 0;
}

/* ---- main as the scenario ------------------------------------------------ */

/* The program's main, renamed by kpt.h (KPT_FUZZ_MAIN).  Declared with
 * argc/argv; a main(void) takes the same call (the arguments are ignored,
 * as the C ABI allows). */
extern int KPT_FUZZ_MAIN(int argc, char **argv) __attribute__((weak));

static void kpt_main_body(void)
{
	static char name[] = "kpt_program";
	char *argv[] = {name, NULL};
	int rc = 0;

	kpt_main_exit_armed = true;
	if (!setjmp(kpt_main_exit_jb))
		rc = KPT_FUZZ_MAIN(1, argv);
	kpt_main_exit_armed = false;
	if (rc != 0) {
		fprintf(stderr, "KPT EXIT: main returned %d\n", rc);
		abort();
	}
}

/* Weak: a program that ends with KPT_FUZZ_BODY(fn) brings its own. */
__attribute__((weak)) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!KPT_FUZZ_MAIN) {
		fprintf(stderr,
		        "KPT MISUSE: the program has neither a main nor KPT_FUZZ_BODY(fn)\n");
		abort();
	}
	return kpt_fuzz_run(data, size, kpt_main_body);
}
