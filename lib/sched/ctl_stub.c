/* TEMPORARY: placeholder until the controlled backend lands (lib/sched/ctl*.c).
 * Every entry aborts: nothing may activate the controlled backend yet. */
#include <stdlib.h>

#include "ksched.h"

void ks_ctl_mutex_lock(ks_mutex_t *m, const char *site) { (void)m; (void)site; abort(); }
bool ks_ctl_mutex_trylock(ks_mutex_t *m, const char *site) { (void)m; (void)site; abort(); }
void ks_ctl_mutex_unlock(ks_mutex_t *m, const char *site) { (void)m; (void)site; abort(); }
void ks_ctl_rwlock_rdlock(ks_rwlock_t *l, const char *site) { (void)l; (void)site; abort(); }
void ks_ctl_rwlock_wrlock(ks_rwlock_t *l, const char *site) { (void)l; (void)site; abort(); }
void ks_ctl_rwlock_unlock(ks_rwlock_t *l, const char *site) { (void)l; (void)site; abort(); }
void ks_ctl_cond_wait(ks_cond_t *c, ks_mutex_t *m, const char *site) { (void)c; (void)m; (void)site; abort(); }
void ks_ctl_cond_signal(ks_cond_t *c, bool b, const char *site) { (void)c; (void)b; (void)site; abort(); }
void ks_ctl_sem_wait(ks_sem_t *s, const char *site) { (void)s; (void)site; abort(); }
bool ks_ctl_sem_trywait(ks_sem_t *s, const char *site) { (void)s; (void)site; abort(); }
void ks_ctl_sem_post(ks_sem_t *s, const char *site) { (void)s; (void)site; abort(); }
void ks_ctl_point(const char *site) { (void)site; abort(); }
void ks_ctl_usleep(uint64_t us, const char *site) { (void)us; (void)site; abort(); }
void ks_ctl_yield(const char *site) { (void)site; abort(); }
uint64_t ks_ctl_now_ns(void) { abort(); }
int ks_ctl_thread_create(ks_thread_t *t, const char *n, void *(*fn)(void *), void *a, const char *site) { (void)t; (void)n; (void)fn; (void)a; (void)site; abort(); }
int ks_ctl_thread_join(ks_thread_t *t, void **r, const char *site) { (void)t; (void)r; (void)site; abort(); }
