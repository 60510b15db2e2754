/*
 * kpt_pre.c - the targets of kpt_pre.h's renames: kpt_w_<name> is <name>
 * through the shim (kpt.c), with the call's name as its site.
 */
#define KPT_NO_MACROS
#include "kpt.h"

/* One row a call, as kpt.h's renames: KPT_W(type, name, shim, (params),
 * args...) is `type kpt_w_<name>(params)` returning shim(args..., "<name>"),
 * declared first (each is the only declaration of its name); KPT_W0 is one
 * with neither parameters nor arguments. */
#define KPT_W(type, name, shim, params, ...)                                                       \
	type kpt_w_##name params;                                                                  \
	type kpt_w_##name params                                                                   \
	{                                                                                          \
		return shim(__VA_ARGS__, #name);                                                   \
	}
#define KPT_W0(type, name, shim)                                                                   \
	type kpt_w_##name(void);                                                                   \
	type kpt_w_##name(void)                                                                    \
	{                                                                                          \
		return shim(#name);                                                                \
	}

/* one row a line, as kpt_pre.h's renames */
/* clang-format off */
KPT_W(int, pthread_mutex_init, kpt_mutex_init, (pthread_mutex_t *m, const pthread_mutexattr_t *a), m, a)
KPT_W(int, pthread_mutex_destroy, kpt_mutex_destroy, (pthread_mutex_t *m), m)
KPT_W(int, pthread_mutex_lock, kpt_mutex_lock, (pthread_mutex_t *m), m)
KPT_W(int, pthread_mutex_trylock, kpt_mutex_trylock, (pthread_mutex_t *m), m)
KPT_W(int, pthread_mutex_unlock, kpt_mutex_unlock, (pthread_mutex_t *m), m)
KPT_W(int, pthread_mutex_timedlock, kpt_mutex_timedlock, (pthread_mutex_t *m, const struct timespec *t), m, t)
KPT_W(int, pthread_rwlock_init, kpt_rwlock_init, (pthread_rwlock_t *l, const pthread_rwlockattr_t *a), l, a)
KPT_W(int, pthread_rwlock_destroy, kpt_rwlock_destroy, (pthread_rwlock_t *l), l)
KPT_W(int, pthread_rwlock_rdlock, kpt_rwlock_rdlock, (pthread_rwlock_t *l), l)
KPT_W(int, pthread_rwlock_wrlock, kpt_rwlock_wrlock, (pthread_rwlock_t *l), l)
KPT_W(int, pthread_rwlock_tryrdlock, kpt_rwlock_tryrdlock, (pthread_rwlock_t *l), l)
KPT_W(int, pthread_rwlock_trywrlock, kpt_rwlock_trywrlock, (pthread_rwlock_t *l), l)
KPT_W(int, pthread_rwlock_unlock, kpt_rwlock_unlock, (pthread_rwlock_t *l), l)
KPT_W(int, pthread_cond_init, kpt_cond_init, (pthread_cond_t *c, const pthread_condattr_t *a), c, a)
KPT_W(int, pthread_cond_destroy, kpt_cond_destroy, (pthread_cond_t *c), c)
KPT_W(int, pthread_cond_wait, kpt_cond_wait, (pthread_cond_t *c, pthread_mutex_t *m), c, m)
KPT_W(int, pthread_cond_timedwait, kpt_cond_timedwait, (pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t), c, m, t)
KPT_W(int, pthread_cond_signal, kpt_cond_signal, (pthread_cond_t *c), c)
KPT_W(int, pthread_cond_broadcast, kpt_cond_broadcast, (pthread_cond_t *c), c)
KPT_W(int, pthread_create, kpt_create, (pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg), t, a, fn, arg)
KPT_W(int, pthread_join, kpt_join, (pthread_t t, void **r), t, r)
KPT_W(int, pthread_detach, kpt_detach, (pthread_t t), t)
KPT_W(int, pthread_once, kpt_once, (pthread_once_t *o, void (*fn)(void)), o, fn)
KPT_W(int, pthread_barrier_init, kpt_barrier_init, (pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned n), b, a, n)
KPT_W(int, pthread_barrier_destroy, kpt_barrier_destroy, (pthread_barrier_t *b), b)
KPT_W(int, pthread_barrier_wait, kpt_barrier_wait, (pthread_barrier_t *b), b)
KPT_W(int, pthread_spin_init, kpt_spin_init, (pthread_spinlock_t *l, int p), l, p)
KPT_W(int, pthread_spin_destroy, kpt_spin_destroy, (pthread_spinlock_t *l), l)
KPT_W(int, pthread_spin_lock, kpt_spin_lock, (pthread_spinlock_t *l), l)
KPT_W(int, pthread_spin_trylock, kpt_spin_trylock, (pthread_spinlock_t *l), l)
KPT_W(int, pthread_spin_unlock, kpt_spin_unlock, (pthread_spinlock_t *l), l)
KPT_W(int, sem_init, kpt_sem_init, (sem_t *s, int p, unsigned v), s, p, v)
KPT_W(int, sem_destroy, kpt_sem_destroy, (sem_t *s), s)
KPT_W(int, sem_wait, kpt_sem_wait, (sem_t *s), s)
KPT_W(int, sem_trywait, kpt_sem_trywait, (sem_t *s), s)
KPT_W(int, sem_timedwait, kpt_sem_timedwait, (sem_t *s, const struct timespec *t), s, t)
KPT_W(int, sem_post, kpt_sem_post, (sem_t *s), s)
KPT_W(int, sem_getvalue, kpt_sem_getvalue, (sem_t *s, int *v), s, v)
KPT_W0(int, sched_yield, kpt_sched_yield)
KPT_W(int, usleep, kpt_usleep, (useconds_t us), us)
KPT_W(unsigned, sleep, kpt_sleep, (unsigned s), s)
KPT_W(int, nanosleep, kpt_nanosleep, (const struct timespec *t, struct timespec *r), t, r)
KPT_W(int, clock_gettime, kpt_clock_gettime, (clockid_t id, struct timespec *ts), id, ts)
KPT_W(int, gettimeofday, kpt_gettimeofday, (struct timeval *tv, void *tz), tv, tz)
/* clang-format on */

/* the two that do not fit a row: no site, and no value */
pthread_t kpt_w_pthread_self(void);
void kpt_w_pthread_exit(void *r);

pthread_t kpt_w_pthread_self(void)
{
	return kpt_self();
}

void kpt_w_pthread_exit(void *r)
{
	kpt_exit(r, "pthread_exit");
}
