/*
 * kpt_pre.h - the forced header for a preprocessed program (a *.i file, or
 * one that carries its own expanded system headers): it cannot include
 * <pthread.h> (the file's own copies of its types would be redefined), so
 * it renames, by object-like macros, every pthread, semaphore and sleep
 * call the shim models, declaration and call alike, to kpt_w_<name>
 * (kpt_pre.c), which forwards to kpt.c.  The file's objects may then have
 * another ABI's sizes (a 32-bit preprocessed file): kpt never touches them
 * inside a controlled run.  Sites are the call's name (no file:line).
 * Its globals are restored every run and its main is the scenario, as
 * with kpt.h.  Generated list: keep it in step with kpt_pre.c.
 */
#ifndef KPT_PRE_H
#define KPT_PRE_H
#pragma clang section bss = "kpt_bss" data = "kpt_data"
#define main kpt_fuzz_main
#ifdef KPT_SVCOMP
#define abort kpt_sv_abort
#endif
#define pthread_mutex_init       kpt_w_pthread_mutex_init
#define pthread_mutex_destroy    kpt_w_pthread_mutex_destroy
#define pthread_mutex_lock       kpt_w_pthread_mutex_lock
#define pthread_mutex_trylock    kpt_w_pthread_mutex_trylock
#define pthread_mutex_unlock     kpt_w_pthread_mutex_unlock
#define pthread_mutex_timedlock  kpt_w_pthread_mutex_timedlock
#define pthread_rwlock_init      kpt_w_pthread_rwlock_init
#define pthread_rwlock_destroy   kpt_w_pthread_rwlock_destroy
#define pthread_rwlock_rdlock    kpt_w_pthread_rwlock_rdlock
#define pthread_rwlock_wrlock    kpt_w_pthread_rwlock_wrlock
#define pthread_rwlock_tryrdlock kpt_w_pthread_rwlock_tryrdlock
#define pthread_rwlock_trywrlock kpt_w_pthread_rwlock_trywrlock
#define pthread_rwlock_unlock    kpt_w_pthread_rwlock_unlock
#define pthread_cond_init        kpt_w_pthread_cond_init
#define pthread_cond_destroy     kpt_w_pthread_cond_destroy
#define pthread_cond_wait        kpt_w_pthread_cond_wait
#define pthread_cond_timedwait   kpt_w_pthread_cond_timedwait
#define pthread_cond_signal      kpt_w_pthread_cond_signal
#define pthread_cond_broadcast   kpt_w_pthread_cond_broadcast
#define pthread_create           kpt_w_pthread_create
#define pthread_join             kpt_w_pthread_join
#define pthread_detach           kpt_w_pthread_detach
#define pthread_self             kpt_w_pthread_self
#define pthread_exit             kpt_w_pthread_exit
#define pthread_once             kpt_w_pthread_once
#define pthread_barrier_init     kpt_w_pthread_barrier_init
#define pthread_barrier_destroy  kpt_w_pthread_barrier_destroy
#define pthread_barrier_wait     kpt_w_pthread_barrier_wait
#define pthread_spin_init        kpt_w_pthread_spin_init
#define pthread_spin_destroy     kpt_w_pthread_spin_destroy
#define pthread_spin_lock        kpt_w_pthread_spin_lock
#define pthread_spin_trylock     kpt_w_pthread_spin_trylock
#define pthread_spin_unlock      kpt_w_pthread_spin_unlock
#define sem_init                 kpt_w_sem_init
#define sem_destroy              kpt_w_sem_destroy
#define sem_wait                 kpt_w_sem_wait
#define sem_trywait              kpt_w_sem_trywait
#define sem_timedwait            kpt_w_sem_timedwait
#define sem_post                 kpt_w_sem_post
#define sem_getvalue             kpt_w_sem_getvalue
#define sched_yield              kpt_w_sched_yield
#define usleep                   kpt_w_usleep
#define sleep                    kpt_w_sleep
#define nanosleep                kpt_w_nanosleep
#define clock_gettime            kpt_w_clock_gettime
#define gettimeofday             kpt_w_gettimeofday
#endif /* KPT_PRE_H */
