/*
 * kpt_sync.c - semaphores, pthread_once, barriers, spin locks and the scheduling
 * points of atomics, for a kpt program under the controlled scheduler.
 */
#include "kpt_int.h"

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

/* On virtual time, as kpt_mutex_timedlock: a post ends the wait. */
int kpt_sem_timedwait(sem_t *s, const struct timespec *t, const char *site)
{
	uint64_t ns;
	int rc;

	if (!ks_controlled())
		return sem_timedwait(s, t);
	rc = kpt_timeout_ns(t, &ns); /* EINVAL only where it would wait */
	if (ks_ctl_sem_timedwait(ksem(s, site), rc ? 0 : ns, site))
		return 0;
	errno = rc ? rc : ETIMEDOUT;
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
