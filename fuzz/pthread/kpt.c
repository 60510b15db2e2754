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
};

struct kpt_obj {
	const void *addr;
	uint32_t gen; /* in use in run `gen` only: an older one is an empty slot */
	uint32_t kind;
	union {
		ks_mutex_t m;
		ks_rwlock_t rw;
		ks_cond_t c;
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
	fprintf(stderr, "KPT TABLE FULL: more than %u pthread objects in one run, at %s\n",
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

static ks_mutex_t *kmutex(pthread_mutex_t *m, const char *site)
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

int kpt_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a, const char *site)
{
	int type = PTHREAD_MUTEX_DEFAULT;

	if (a && ks_controlled() && pthread_mutexattr_gettype(a, &type) == 0 &&
	    type == PTHREAD_MUTEX_RECURSIVE)
		kpt_unsupported("a recursive mutex", site);
	if (ks_controlled())
		kpt_obj(m, KPT_MUTEX, true, site);
	return pthread_mutex_init(m, a);
}

int kpt_mutex_destroy(pthread_mutex_t *m, const char *site)
{
	if (ks_controlled())
		kpt_obj(m, KPT_MUTEX, true, site);
	return pthread_mutex_destroy(m);
}

int kpt_mutex_lock(pthread_mutex_t *m, const char *site)
{
	if (!ks_controlled())
		return pthread_mutex_lock(m);
	ks_ctl_mutex_lock(kmutex(m, site), site);
	return 0;
}

int kpt_mutex_trylock(pthread_mutex_t *m, const char *site)
{
	if (!ks_controlled())
		return pthread_mutex_trylock(m);
	return ks_ctl_mutex_trylock(kmutex(m, site), site) ? 0 : EBUSY;
}

int kpt_mutex_unlock(pthread_mutex_t *m, const char *site)
{
	if (!ks_controlled())
		return pthread_mutex_unlock(m);
	ks_ctl_mutex_unlock(kmutex(m, site), site);
	return 0;
}

int kpt_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a, const char *site)
{
	if (ks_controlled())
		kpt_obj(l, KPT_RWLOCK, true, site);
	return pthread_rwlock_init(l, a);
}

int kpt_rwlock_destroy(pthread_rwlock_t *l, const char *site)
{
	if (ks_controlled())
		kpt_obj(l, KPT_RWLOCK, true, site);
	return pthread_rwlock_destroy(l);
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

int kpt_rwlock_unlock(pthread_rwlock_t *l, const char *site)
{
	if (!ks_controlled())
		return pthread_rwlock_unlock(l);
	ks_ctl_rwlock_unlock(krwlock(l, site), site);
	return 0;
}

int kpt_cond_init(pthread_cond_t *c, const pthread_condattr_t *a, const char *site)
{
	if (ks_controlled())
		kpt_obj(c, KPT_COND, true, site);
	return pthread_cond_init(c, a);
}

int kpt_cond_destroy(pthread_cond_t *c, const char *site)
{
	if (ks_controlled())
		kpt_obj(c, KPT_COND, true, site);
	return pthread_cond_destroy(c);
}

int kpt_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const char *site)
{
	if (!ks_controlled())
		return pthread_cond_wait(c, m);
	ks_ctl_cond_wait(kcond(c, site), kmutex(m, site), site);
	return 0;
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
	return t->fn(t->arg);
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
		return EAGAIN;
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
