/*
 * kpt_locks.c - the pthread mutex, rwlock and condition calls of a kpt program:
 * forwarded outside a controlled run, on the scheduler inside one
 * (kpt.c says how the side table holds their state).
 */
#include "kpt_int.h"

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
	quiet_begin();
	kpt_obj(m, KPT_MUTEX, true, site)->u.m.type = type;
	quiet_end();
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

/* A mutex's type, owner and depth are the shim's bookkeeping, read by a
 * thread that does not hold the lock (is it mine?): TSan looks away from
 * them as from the side table (kpt_int.h). */
static bool km_mine(struct kpt_mutex *km, int type)
{
	bool mine;

	quiet_begin();
	mine = km->owner == lself() && km->type == type;
	quiet_end();
	return mine;
}

/* A recursive mutex taken again by its owner: one level deeper. */
static bool km_relock(struct kpt_mutex *km)
{
	bool again;

	quiet_begin();
	again = km->owner == lself() && km->type == PTHREAD_MUTEX_RECURSIVE;
	if (again)
		km->depth++;
	quiet_end();
	return again;
}

static void km_hold(struct kpt_mutex *km, int owner, unsigned depth)
{
	quiet_begin();
	km->owner = owner;
	km->depth = depth;
	quiet_end();
}

/* The unlock of a recursive or error-checking mutex: EPERM if not the
 * owner's, -1 if it stays held (depth), 0 to release it. */
static int km_release(struct kpt_mutex *km)
{
	int rc = 0;

	quiet_begin();
	if (km->type == PTHREAD_MUTEX_RECURSIVE || km->type == PTHREAD_MUTEX_ERRORCHECK) {
		if (km->owner != lself())
			rc = EPERM;
		else if (--km->depth > 0)
			rc = -1;
	}
	if (rc == 0)
		km->owner = 0;
	quiet_end();
	return rc;
}

int kpt_mutex_lock(pthread_mutex_t *m, const char *site)
{
	struct kpt_mutex *km;

	if (!ks_controlled())
		return pthread_mutex_lock(m);
	km = kpmutex(m, site);
	if (km_relock(km))
		return 0;
	if (km_mine(km, PTHREAD_MUTEX_ERRORCHECK))
		return EDEADLK;
	ks_ctl_mutex_lock(&km->m, site);
	km_hold(km, lself(), 1);
	return 0;
}

int kpt_mutex_trylock(pthread_mutex_t *m, const char *site)
{
	struct kpt_mutex *km;

	if (!ks_controlled())
		return pthread_mutex_trylock(m);
	km = kpmutex(m, site);
	if (km_relock(km))
		return 0;
	if (!ks_ctl_mutex_trylock(&km->m, site))
		return EBUSY;
	km_hold(km, lself(), 1);
	return 0;
}

int kpt_mutex_unlock(pthread_mutex_t *m, const char *site)
{
	struct kpt_mutex *km;
	int rc;

	if (!ks_controlled())
		return pthread_mutex_unlock(m);
	km = kpmutex(m, site);
	rc = km_release(km);
	if (rc == EPERM)
		return EPERM;
	if (rc == 0)
		ks_ctl_mutex_unlock(&km->m, site);
	return 0;
}

/* Timed lock on virtual time: the lock, or a wait for it that the
 * deadline ends (only when no other thread can run before it, as a sleep
 * does), one more try, then ETIMEDOUT. */
int kpt_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t, const char *site)
{
	struct kpt_mutex *km;
	uint64_t ns;
	int rc;

	if (!ks_controlled())
		return pthread_mutex_timedlock(m, t);
	km = kpmutex(m, site);
	if (km_relock(km))
		return 0;
	if (km_mine(km, PTHREAD_MUTEX_ERRORCHECK))
		return EDEADLK;
	rc = kpt_timeout_ns(t, &ns); /* EINVAL only where the lock is not free */
	if (!ks_ctl_mutex_timedlock(&km->m, rc ? 0 : ns, site))
		return rc ? rc : ETIMEDOUT;
	km_hold(km, lself(), 1);
	return 0;
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

/* The scheduler's wait on c (timed: at most ns of virtual time) with km
 * given up and held again, its owner and depth as they were; true when a
 * signal ended it. */
static bool cond_wait_km(pthread_cond_t *c, pthread_mutex_t *m, bool timed, uint64_t ns,
                         const char *site)
{
	struct kpt_mutex *km = kpmutex(m, site);
	unsigned depth = km->depth;
	bool signalled = true;

	km->owner = 0;
	if (timed)
		signalled = ks_ctl_cond_timedwait(kcond(c, site), &km->m, ns, site);
	else
		ks_ctl_cond_wait(kcond(c, site), &km->m, site);
	km->owner = lself();
	km->depth = depth;
	return signalled;
}

int kpt_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const char *site)
{
	if (!ks_controlled())
		return pthread_cond_wait(c, m);
	cond_wait_km(c, m, false, 0, site);
	return 0;
}

/* A wait that a signal or a broadcast ends (0) or, when no other thread
 * can run before it, the deadline on virtual time (ETIMEDOUT); the mutex
 * is held again either way. */
int kpt_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t,
                       const char *site)
{
	uint64_t ns;
	int rc;

	if (!ks_controlled())
		return pthread_cond_timedwait(c, m, t);
	rc = kpt_timeout_ns(t, &ns);
	if (rc)
		return rc;
	return cond_wait_km(c, m, true, ns, site) ? 0 : ETIMEDOUT;
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
