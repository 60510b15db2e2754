/*
 * kpt_pre.c - the targets of kpt_pre.h's renames: kpt_w_<name> is <name>
 * through the shim (kpt.c), with the call's name as its site.
 */
#define KPT_NO_MACROS
#include "kpt.h"

int kpt_w_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
int kpt_w_pthread_mutex_destroy(pthread_mutex_t *m);
int kpt_w_pthread_mutex_lock(pthread_mutex_t *m);
int kpt_w_pthread_mutex_trylock(pthread_mutex_t *m);
int kpt_w_pthread_mutex_unlock(pthread_mutex_t *m);
int kpt_w_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t);
int kpt_w_pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a);
int kpt_w_pthread_rwlock_destroy(pthread_rwlock_t *l);
int kpt_w_pthread_rwlock_rdlock(pthread_rwlock_t *l);
int kpt_w_pthread_rwlock_wrlock(pthread_rwlock_t *l);
int kpt_w_pthread_rwlock_tryrdlock(pthread_rwlock_t *l);
int kpt_w_pthread_rwlock_trywrlock(pthread_rwlock_t *l);
int kpt_w_pthread_rwlock_unlock(pthread_rwlock_t *l);
int kpt_w_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a);
int kpt_w_pthread_cond_destroy(pthread_cond_t *c);
int kpt_w_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m);
int kpt_w_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t);
int kpt_w_pthread_cond_signal(pthread_cond_t *c);
int kpt_w_pthread_cond_broadcast(pthread_cond_t *c);
int kpt_w_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg);
int kpt_w_pthread_join(pthread_t t, void **r);
int kpt_w_pthread_detach(pthread_t t);
pthread_t kpt_w_pthread_self(void);
void kpt_w_pthread_exit(void *r);
int kpt_w_pthread_once(pthread_once_t *o, void (*fn)(void));
int kpt_w_pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned n);
int kpt_w_pthread_barrier_destroy(pthread_barrier_t *b);
int kpt_w_pthread_barrier_wait(pthread_barrier_t *b);
int kpt_w_pthread_spin_init(pthread_spinlock_t *l, int p);
int kpt_w_pthread_spin_destroy(pthread_spinlock_t *l);
int kpt_w_pthread_spin_lock(pthread_spinlock_t *l);
int kpt_w_pthread_spin_trylock(pthread_spinlock_t *l);
int kpt_w_pthread_spin_unlock(pthread_spinlock_t *l);
int kpt_w_sem_init(sem_t *s, int p, unsigned v);
int kpt_w_sem_destroy(sem_t *s);
int kpt_w_sem_wait(sem_t *s);
int kpt_w_sem_trywait(sem_t *s);
int kpt_w_sem_timedwait(sem_t *s, const struct timespec *t);
int kpt_w_sem_post(sem_t *s);
int kpt_w_sem_getvalue(sem_t *s, int *v);
int kpt_w_sched_yield(void);
int kpt_w_usleep(useconds_t us);
unsigned kpt_w_sleep(unsigned s);
int kpt_w_nanosleep(const struct timespec *t, struct timespec *r);

int kpt_w_pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	return kpt_mutex_init(m, a, "pthread_mutex_init");
}

int kpt_w_pthread_mutex_destroy(pthread_mutex_t *m)
{
	return kpt_mutex_destroy(m, "pthread_mutex_destroy");
}

int kpt_w_pthread_mutex_lock(pthread_mutex_t *m)
{
	return kpt_mutex_lock(m, "pthread_mutex_lock");
}

int kpt_w_pthread_mutex_trylock(pthread_mutex_t *m)
{
	return kpt_mutex_trylock(m, "pthread_mutex_trylock");
}

int kpt_w_pthread_mutex_unlock(pthread_mutex_t *m)
{
	return kpt_mutex_unlock(m, "pthread_mutex_unlock");
}

int kpt_w_pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t)
{
	return kpt_mutex_timedlock(m, t, "pthread_mutex_timedlock");
}

int kpt_w_pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a)
{
	return kpt_rwlock_init(l, a, "pthread_rwlock_init");
}

int kpt_w_pthread_rwlock_destroy(pthread_rwlock_t *l)
{
	return kpt_rwlock_destroy(l, "pthread_rwlock_destroy");
}

int kpt_w_pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	return kpt_rwlock_rdlock(l, "pthread_rwlock_rdlock");
}

int kpt_w_pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	return kpt_rwlock_wrlock(l, "pthread_rwlock_wrlock");
}

int kpt_w_pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	return kpt_rwlock_tryrdlock(l, "pthread_rwlock_tryrdlock");
}

int kpt_w_pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	return kpt_rwlock_trywrlock(l, "pthread_rwlock_trywrlock");
}

int kpt_w_pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	return kpt_rwlock_unlock(l, "pthread_rwlock_unlock");
}

int kpt_w_pthread_cond_init(pthread_cond_t *c, const pthread_condattr_t *a)
{
	return kpt_cond_init(c, a, "pthread_cond_init");
}

int kpt_w_pthread_cond_destroy(pthread_cond_t *c)
{
	return kpt_cond_destroy(c, "pthread_cond_destroy");
}

int kpt_w_pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	return kpt_cond_wait(c, m, "pthread_cond_wait");
}

int kpt_w_pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
	return kpt_cond_timedwait(c, m, t, "pthread_cond_timedwait");
}

int kpt_w_pthread_cond_signal(pthread_cond_t *c)
{
	return kpt_cond_signal(c, "pthread_cond_signal");
}

int kpt_w_pthread_cond_broadcast(pthread_cond_t *c)
{
	return kpt_cond_broadcast(c, "pthread_cond_broadcast");
}

int kpt_w_pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg)
{
	return kpt_create(t, a, fn, arg, "pthread_create");
}

int kpt_w_pthread_join(pthread_t t, void **r)
{
	return kpt_join(t, r, "pthread_join");
}

int kpt_w_pthread_detach(pthread_t t)
{
	return kpt_detach(t, "pthread_detach");
}

pthread_t kpt_w_pthread_self(void)
{
	return kpt_self();
}

void kpt_w_pthread_exit(void *r)
{
	kpt_exit(r, "pthread_exit");
}

int kpt_w_pthread_once(pthread_once_t *o, void (*fn)(void))
{
	return kpt_once(o, fn, "pthread_once");
}

int kpt_w_pthread_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned n)
{
	return kpt_barrier_init(b, a, n, "pthread_barrier_init");
}

int kpt_w_pthread_barrier_destroy(pthread_barrier_t *b)
{
	return kpt_barrier_destroy(b, "pthread_barrier_destroy");
}

int kpt_w_pthread_barrier_wait(pthread_barrier_t *b)
{
	return kpt_barrier_wait(b, "pthread_barrier_wait");
}

int kpt_w_pthread_spin_init(pthread_spinlock_t *l, int p)
{
	return kpt_spin_init(l, p, "pthread_spin_init");
}

int kpt_w_pthread_spin_destroy(pthread_spinlock_t *l)
{
	return kpt_spin_destroy(l, "pthread_spin_destroy");
}

int kpt_w_pthread_spin_lock(pthread_spinlock_t *l)
{
	return kpt_spin_lock(l, "pthread_spin_lock");
}

int kpt_w_pthread_spin_trylock(pthread_spinlock_t *l)
{
	return kpt_spin_trylock(l, "pthread_spin_trylock");
}

int kpt_w_pthread_spin_unlock(pthread_spinlock_t *l)
{
	return kpt_spin_unlock(l, "pthread_spin_unlock");
}

int kpt_w_sem_init(sem_t *s, int p, unsigned v)
{
	return kpt_sem_init(s, p, v, "sem_init");
}

int kpt_w_sem_destroy(sem_t *s)
{
	return kpt_sem_destroy(s, "sem_destroy");
}

int kpt_w_sem_wait(sem_t *s)
{
	return kpt_sem_wait(s, "sem_wait");
}

int kpt_w_sem_trywait(sem_t *s)
{
	return kpt_sem_trywait(s, "sem_trywait");
}

int kpt_w_sem_timedwait(sem_t *s, const struct timespec *t)
{
	return kpt_sem_timedwait(s, t, "sem_timedwait");
}

int kpt_w_sem_post(sem_t *s)
{
	return kpt_sem_post(s, "sem_post");
}

int kpt_w_sem_getvalue(sem_t *s, int *v)
{
	return kpt_sem_getvalue(s, v, "sem_getvalue");
}

int kpt_w_sched_yield(void)
{
	return kpt_sched_yield("sched_yield");
}

int kpt_w_usleep(useconds_t us)
{
	return kpt_usleep(us, "usleep");
}

unsigned kpt_w_sleep(unsigned s)
{
	return kpt_sleep(s, "sleep");
}

int kpt_w_nanosleep(const struct timespec *t, struct timespec *r)
{
	return kpt_nanosleep(t, r, "nanosleep");
}
