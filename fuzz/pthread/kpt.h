/*
 * kpt.h - a plain pthreads / C11-atomics program under the controlled
 * scheduler, unchanged: compile it with `-include kpt.h` (kpt_add_program
 * in fuzz/pthread/CMakeLists.txt does, docs/pthread.md says how) and every
 * pthread call listed below, sched_yield, usleep and every C11 atomic
 * operation becomes a call into kpt.c that passes the call's file:line.
 *
 * Outside a controlled run (ks_controlled() false) every wrapper is the
 * real call.  Inside one (kpt_fuzz_run, KPT_FUZZ_BODY) the objects get
 * their state from the scheduler (lib/sched), threads are logical threads,
 * each call is a scheduling point, and the unlocks, atomic stores and
 * subtractions and every thread's start are releases from which memory
 * access points count (docs/scheduler.md).
 *
 * The shim must see the system headers before it renames what they
 * declare (a macro named like a function would rewrite its prototype), so
 * they come first; the program's own #include of them is then a no-op.
 * The program's wall and monotonic clocks read virtual time inside a run
 * (kpt_clock_gettime), so the deadline of a timed wait is on it.  Calls
 * kpt does not model (pthread_cancel) stop a controlled run with "KPT
 * UNSUPPORTED" instead of blocking a fiber for real; outside a run they
 * are the real call.  clang only (the __c11_atomic builtins).
 */
#ifndef KPT_H
#define KPT_H

#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define KPT_STR2(x) #x
#define KPT_STR(x)  KPT_STR2(x)
/* The user's file:line, in the form of ksched.h's KS_SITE. */
#define KPT_SITE (__FILE__ ":" KPT_STR(__LINE__))

/* ---- the shim (fuzz/pthread/kpt.c) ------------------------------------- */
int kpt_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a, const char *site);
int kpt_mutex_destroy(pthread_mutex_t *m, const char *site);
int kpt_mutex_lock(pthread_mutex_t *m, const char *site);
int kpt_mutex_trylock(pthread_mutex_t *m, const char *site);
int kpt_mutex_unlock(pthread_mutex_t *m, const char *site);
int kpt_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a, const char *site);
int kpt_rwlock_destroy(pthread_rwlock_t *l, const char *site);
int kpt_rwlock_rdlock(pthread_rwlock_t *l, const char *site);
int kpt_rwlock_wrlock(pthread_rwlock_t *l, const char *site);
int kpt_rwlock_unlock(pthread_rwlock_t *l, const char *site);
int kpt_cond_init(pthread_cond_t *c, const pthread_condattr_t *a, const char *site);
int kpt_cond_destroy(pthread_cond_t *c, const char *site);
int kpt_cond_wait(pthread_cond_t *c, pthread_mutex_t *m, const char *site);
int kpt_cond_signal(pthread_cond_t *c, const char *site);
int kpt_cond_broadcast(pthread_cond_t *c, const char *site);
int kpt_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *), void *arg,
               const char *site);
int kpt_join(pthread_t t, void **ret, const char *site);
int kpt_detach(pthread_t t, const char *site);
pthread_t kpt_self(void);
int kpt_sched_yield(const char *site);
int kpt_usleep(useconds_t us, const char *site);
unsigned kpt_sleep(unsigned s, const char *site);
int kpt_nanosleep(const struct timespec *t, struct timespec *rem, const char *site);
int kpt_clock_gettime(clockid_t id, struct timespec *ts, const char *site);
int kpt_gettimeofday(struct timeval *tv, void *tz, const char *site);
time_t kpt_time(time_t *t, const char *site);
int kpt_timespec_get(struct timespec *ts, int base, const char *site);
int kpt_mutex_timedlock(pthread_mutex_t *m, const struct timespec *t, const char *site);
int kpt_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t,
                       const char *site);
int kpt_rwlock_tryrdlock(pthread_rwlock_t *l, const char *site);
int kpt_rwlock_trywrlock(pthread_rwlock_t *l, const char *site);
void kpt_exit(void *ret, const char *site) __attribute__((noreturn));
int kpt_sem_init(sem_t *s, int pshared, unsigned value, const char *site);
int kpt_sem_destroy(sem_t *s, const char *site);
int kpt_sem_wait(sem_t *s, const char *site);
int kpt_sem_trywait(sem_t *s, const char *site);
int kpt_sem_timedwait(sem_t *s, const struct timespec *t, const char *site);
int kpt_sem_post(sem_t *s, const char *site);
int kpt_sem_getvalue(sem_t *s, int *v, const char *site);
int kpt_once(pthread_once_t *o, void (*fn)(void), const char *site);
int kpt_barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a, unsigned n,
                     const char *site);
int kpt_barrier_destroy(pthread_barrier_t *b, const char *site);
int kpt_barrier_wait(pthread_barrier_t *b, const char *site);
int kpt_spin_init(pthread_spinlock_t *l, int pshared, const char *site);
int kpt_spin_destroy(pthread_spinlock_t *l, const char *site);
int kpt_spin_lock(pthread_spinlock_t *l, const char *site);
int kpt_spin_trylock(pthread_spinlock_t *l, const char *site);
int kpt_spin_unlock(pthread_spinlock_t *l, const char *site);
/* A scheduling point before an atomic operation; kpt_release_point before
 * one that gives something up (a store, a subtraction, a flag cleared). */
void kpt_point(const char *site);
void kpt_release_point(const char *site);
/* The next byte of the input for the program's own choices (kpt_svcomp.c:
 * __VERIFIER_nondet_*), taken from its end; 0 when they run out. */
uint8_t kpt_input_byte(void);
/* This path is not one of the program's (an assumption failed): the
 * thread stops here and the run ends without a finding. */
void kpt_infeasible(const char *what) __attribute__((noreturn));
/* In a controlled run: report "KPT UNSUPPORTED: <what> at <site>" and abort. */
void kpt_unsupported(const char *what, const char *site);

/*
 * Run body under the controlled scheduler, the schedule decoded from the
 * fuzz input (kpt_decode in kpt.c; docs/pthread.md has the layout).  The
 * body is the program's main: it creates its threads, joins them and checks
 * its result (assert); it runs once per input in the same process, so it
 * sets its globals afresh first.  A deadlock or hang aborts with KSCHED
 * DEADLOCK / KSCHED HANG.  Returns 0 (libFuzzer's contract).
 */
int kpt_fuzz_run(const uint8_t *data, size_t size, void (*body)(void));

/* The program's main, renamed by the forced header (`main` below): the
 * default scenario.  kpt.c's weak LLVMFuzzerTestOneInput runs it with
 * argc 1 and argv {program name, NULL} once per input, in a controlled
 * run, after restoring the program's globals (kpt_state_restore). */
#define KPT_FUZZ_MAIN kpt_fuzz_main

/* Globals and function statics of the program's file start every run with
 * their initial values: the forced header puts them in the sections
 * kpt_data / kpt_bss (`#pragma clang section`), and kpt_fuzz_run copies
 * them back from a snapshot taken before the first run.  Heap blocks the
 * old values pointed to are kept (handed to LeakSanitizer as ignored, as a
 * process exit would leave them), never reported as a leak. */
void kpt_state_restore(void);

/* LLVMFuzzerTestOneInput running body: put `KPT_FUZZ_BODY(scenario)` at
 * the end of the program (fuzz/driver/replay.c and afl.c call the same). */
#define KPT_FUZZ_BODY(body)                                                                        \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                              \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                               \
	{                                                                                          \
		return kpt_fuzz_run(data, size, (body));                                           \
	}

/* ---- the user's names -------------------------------------------------- */
#ifndef KPT_NO_MACROS

#ifndef KPT_NO_RESET
#pragma clang section bss = "kpt_bss" data = "kpt_data"
#endif
#ifndef KPT_NO_MAIN
#define main KPT_FUZZ_MAIN
#endif
/* SV-COMP programs (kpt_svcomp.c): abort() ends an infeasible path, not
 * the program; reaching reach_error() is the finding. */
#ifdef KPT_SVCOMP
#define abort kpt_sv_abort
void kpt_sv_abort(void) __attribute__((noreturn));
#endif

#define pthread_mutex_init(m, a)        kpt_mutex_init((m), (a), KPT_SITE)
#define pthread_mutex_destroy(m)        kpt_mutex_destroy((m), KPT_SITE)
#define pthread_mutex_lock(m)           kpt_mutex_lock((m), KPT_SITE)
#define pthread_mutex_trylock(m)        kpt_mutex_trylock((m), KPT_SITE)
#define pthread_mutex_unlock(m)         kpt_mutex_unlock((m), KPT_SITE)
#define pthread_rwlock_init(l, a)       kpt_rwlock_init((l), (a), KPT_SITE)
#define pthread_rwlock_destroy(l)       kpt_rwlock_destroy((l), KPT_SITE)
#define pthread_rwlock_rdlock(l)        kpt_rwlock_rdlock((l), KPT_SITE)
#define pthread_rwlock_wrlock(l)        kpt_rwlock_wrlock((l), KPT_SITE)
#define pthread_rwlock_unlock(l)        kpt_rwlock_unlock((l), KPT_SITE)
#define pthread_cond_init(c, a)         kpt_cond_init((c), (a), KPT_SITE)
#define pthread_cond_destroy(c)         kpt_cond_destroy((c), KPT_SITE)
#define pthread_cond_wait(c, m)         kpt_cond_wait((c), (m), KPT_SITE)
#define pthread_cond_signal(c)          kpt_cond_signal((c), KPT_SITE)
#define pthread_cond_broadcast(c)       kpt_cond_broadcast((c), KPT_SITE)
#define pthread_create(t, a, fn, p)     kpt_create((t), (a), (fn), (p), KPT_SITE)
#define pthread_join(t, r)              kpt_join((t), (r), KPT_SITE)
#define pthread_detach(t)               kpt_detach((t), KPT_SITE)
#define pthread_self()                  kpt_self()
#define sched_yield()                   kpt_sched_yield(KPT_SITE)
#define usleep(us)                      kpt_usleep((us), KPT_SITE)

#define pthread_mutex_timedlock(m, t)   kpt_mutex_timedlock((m), (t), KPT_SITE)
#define pthread_cond_timedwait(c, m, t) kpt_cond_timedwait((c), (m), (t), KPT_SITE)
#define pthread_rwlock_tryrdlock(l)     kpt_rwlock_tryrdlock((l), KPT_SITE)
#define pthread_rwlock_trywrlock(l)     kpt_rwlock_trywrlock((l), KPT_SITE)
#define pthread_exit(r)                 kpt_exit((r), KPT_SITE)
#define pthread_once(o, fn)             kpt_once((o), (fn), KPT_SITE)
#define pthread_barrier_init(b, a, n)   kpt_barrier_init((b), (a), (n), KPT_SITE)
#define pthread_barrier_destroy(b)      kpt_barrier_destroy((b), KPT_SITE)
#define pthread_barrier_wait(b)         kpt_barrier_wait((b), KPT_SITE)
#define pthread_spin_init(l, p)         kpt_spin_init((l), (p), KPT_SITE)
#define pthread_spin_destroy(l)         kpt_spin_destroy((l), KPT_SITE)
#define pthread_spin_lock(l)            kpt_spin_lock((l), KPT_SITE)
#define pthread_spin_trylock(l)         kpt_spin_trylock((l), KPT_SITE)
#define pthread_spin_unlock(l)          kpt_spin_unlock((l), KPT_SITE)
#define sem_init(s, p, v)               kpt_sem_init((s), (p), (v), KPT_SITE)
#define sem_destroy(s)                  kpt_sem_destroy((s), KPT_SITE)
#define sem_wait(s)                     kpt_sem_wait((s), KPT_SITE)
#define sem_trywait(s)                  kpt_sem_trywait((s), KPT_SITE)
#define sem_timedwait(s, t)             kpt_sem_timedwait((s), (t), KPT_SITE)
#define sem_post(s)                     kpt_sem_post((s), KPT_SITE)
#define sem_getvalue(s, v)              kpt_sem_getvalue((s), (v), KPT_SITE)
#define nanosleep(t, r)                 kpt_nanosleep((t), (r), KPT_SITE)
#define sleep(s)                        kpt_sleep((s), KPT_SITE)
#define clock_gettime(id, ts)           kpt_clock_gettime((id), (ts), KPT_SITE)
#define gettimeofday(tv, tz)            kpt_gettimeofday((tv), (tz), KPT_SITE)
#define time(t)                         kpt_time((t), KPT_SITE)
#define timespec_get(ts, b)             kpt_timespec_get((ts), (b), KPT_SITE)

/* Not modelled: a controlled run stops at it with KPT UNSUPPORTED;
 * outside a run it is the real call.  A macro's own name is not expanded
 * again inside it. */
#define pthread_cancel(t) (kpt_unsupported("pthread_cancel", KPT_SITE), pthread_cancel(t))

/* GCC's __sync_* and __atomic_* builtins: a scheduling point before each,
 * then the builtin itself (a function-like macro does not expand its own
 * name again); the subtractions, stores, clears and releases are releases. */
#define KPT_B(point, call)         (point(KPT_SITE), call)
#define __sync_fetch_and_add(p, v) KPT_B(kpt_point, __sync_fetch_and_add(p, v))
#define __sync_fetch_and_sub(p, v) KPT_B(kpt_release_point, __sync_fetch_and_sub(p, v))
#define __sync_fetch_and_or(p, v)  KPT_B(kpt_point, __sync_fetch_and_or(p, v))
#define __sync_fetch_and_and(p, v) KPT_B(kpt_point, __sync_fetch_and_and(p, v))
#define __sync_fetch_and_xor(p, v) KPT_B(kpt_point, __sync_fetch_and_xor(p, v))
#define __sync_add_and_fetch(p, v) KPT_B(kpt_point, __sync_add_and_fetch(p, v))
#define __sync_sub_and_fetch(p, v) KPT_B(kpt_release_point, __sync_sub_and_fetch(p, v))
#define __sync_or_and_fetch(p, v)  KPT_B(kpt_point, __sync_or_and_fetch(p, v))
#define __sync_and_and_fetch(p, v) KPT_B(kpt_point, __sync_and_and_fetch(p, v))
#define __sync_xor_and_fetch(p, v) KPT_B(kpt_point, __sync_xor_and_fetch(p, v))
#define __sync_bool_compare_and_swap(p, o, n)                                                      \
	KPT_B(kpt_point, __sync_bool_compare_and_swap(p, o, n))
#define __sync_val_compare_and_swap(p, o, n) KPT_B(kpt_point, __sync_val_compare_and_swap(p, o, n))
#define __sync_lock_test_and_set(p, v)       KPT_B(kpt_point, __sync_lock_test_and_set(p, v))
#define __sync_lock_release(p)               KPT_B(kpt_release_point, __sync_lock_release(p))
#define __sync_synchronize()                 KPT_B(kpt_point, __sync_synchronize())
#define __atomic_load_n(p, m)                KPT_B(kpt_point, __atomic_load_n(p, m))
#define __atomic_load(p, r, m)               KPT_B(kpt_point, __atomic_load(p, r, m))
#define __atomic_store_n(p, v, m)            KPT_B(kpt_release_point, __atomic_store_n(p, v, m))
#define __atomic_store(p, v, m)              KPT_B(kpt_release_point, __atomic_store(p, v, m))
#define __atomic_exchange_n(p, v, m)         KPT_B(kpt_point, __atomic_exchange_n(p, v, m))
#define __atomic_compare_exchange_n(p, e, d, w, s, f)                                              \
	KPT_B(kpt_point, __atomic_compare_exchange_n(p, e, d, w, s, f))
#define __atomic_compare_exchange(p, e, d, w, s, f)                                                \
	KPT_B(kpt_point, __atomic_compare_exchange(p, e, d, w, s, f))
#define __atomic_fetch_add(p, v, m) KPT_B(kpt_point, __atomic_fetch_add(p, v, m))
#define __atomic_fetch_sub(p, v, m) KPT_B(kpt_release_point, __atomic_fetch_sub(p, v, m))
#define __atomic_fetch_or(p, v, m)  KPT_B(kpt_point, __atomic_fetch_or(p, v, m))
#define __atomic_fetch_and(p, v, m) KPT_B(kpt_point, __atomic_fetch_and(p, v, m))
#define __atomic_fetch_xor(p, v, m) KPT_B(kpt_point, __atomic_fetch_xor(p, v, m))
#define __atomic_add_fetch(p, v, m) KPT_B(kpt_point, __atomic_add_fetch(p, v, m))
#define __atomic_sub_fetch(p, v, m) KPT_B(kpt_release_point, __atomic_sub_fetch(p, v, m))
#define __atomic_test_and_set(p, m) KPT_B(kpt_point, __atomic_test_and_set(p, m))
#define __atomic_clear(p, m)        KPT_B(kpt_release_point, __atomic_clear(p, m))

/*
 * C11 atomics: every operation is a scheduling point before it, as
 * ksched.h's ks_atomic_* are; a store, a subtraction and a flag cleared
 * are releases (a window opens there: a flag handed back, a reference
 * dropped).  The stdatomic.h macros are replaced by the same __c11_atomic
 * builtins behind a point.  Not points: atomic_init, the fences,
 * atomic_is_lock_free, and the GCC __atomic_* / __sync_* builtins.
 */
#define KPT_ATOMIC(point, op) (point(KPT_SITE), op)

#undef atomic_load
#undef atomic_load_explicit
#undef atomic_store
#undef atomic_store_explicit
#undef atomic_exchange
#undef atomic_exchange_explicit
#undef atomic_compare_exchange_strong
#undef atomic_compare_exchange_strong_explicit
#undef atomic_compare_exchange_weak
#undef atomic_compare_exchange_weak_explicit
#undef atomic_fetch_add
#undef atomic_fetch_add_explicit
#undef atomic_fetch_sub
#undef atomic_fetch_sub_explicit
#undef atomic_fetch_or
#undef atomic_fetch_or_explicit
#undef atomic_fetch_xor
#undef atomic_fetch_xor_explicit
#undef atomic_fetch_and
#undef atomic_fetch_and_explicit
#undef atomic_flag_test_and_set
#undef atomic_flag_test_and_set_explicit
#undef atomic_flag_clear
#undef atomic_flag_clear_explicit

#define KPT_SEQ                           __ATOMIC_SEQ_CST
#define atomic_load(o)                    KPT_ATOMIC(kpt_point, __c11_atomic_load(o, KPT_SEQ))
#define atomic_load_explicit(o, m)        KPT_ATOMIC(kpt_point, __c11_atomic_load(o, m))
#define atomic_store(o, v)                KPT_ATOMIC(kpt_release_point, __c11_atomic_store(o, v, KPT_SEQ))
#define atomic_store_explicit(o, v, m)    KPT_ATOMIC(kpt_release_point, __c11_atomic_store(o, v, m))
#define atomic_exchange(o, v)             KPT_ATOMIC(kpt_point, __c11_atomic_exchange(o, v, KPT_SEQ))
#define atomic_exchange_explicit(o, v, m) KPT_ATOMIC(kpt_point, __c11_atomic_exchange(o, v, m))
#define atomic_compare_exchange_strong(o, e, d)                                                    \
	KPT_ATOMIC(kpt_point, __c11_atomic_compare_exchange_strong(o, e, d, KPT_SEQ, KPT_SEQ))
#define atomic_compare_exchange_strong_explicit(o, e, d, s, f)                                     \
	KPT_ATOMIC(kpt_point, __c11_atomic_compare_exchange_strong(o, e, d, s, f))
#define atomic_compare_exchange_weak(o, e, d)                                                      \
	KPT_ATOMIC(kpt_point, __c11_atomic_compare_exchange_weak(o, e, d, KPT_SEQ, KPT_SEQ))
#define atomic_compare_exchange_weak_explicit(o, e, d, s, f)                                       \
	KPT_ATOMIC(kpt_point, __c11_atomic_compare_exchange_weak(o, e, d, s, f))
#define atomic_fetch_add(o, v)             KPT_ATOMIC(kpt_point, __c11_atomic_fetch_add(o, v, KPT_SEQ))
#define atomic_fetch_add_explicit(o, v, m) KPT_ATOMIC(kpt_point, __c11_atomic_fetch_add(o, v, m))
#define atomic_fetch_sub(o, v)             KPT_ATOMIC(kpt_release_point, __c11_atomic_fetch_sub(o, v, KPT_SEQ))
#define atomic_fetch_sub_explicit(o, v, m)                                                         \
	KPT_ATOMIC(kpt_release_point, __c11_atomic_fetch_sub(o, v, m))
#define atomic_fetch_or(o, v)              KPT_ATOMIC(kpt_point, __c11_atomic_fetch_or(o, v, KPT_SEQ))
#define atomic_fetch_or_explicit(o, v, m)  KPT_ATOMIC(kpt_point, __c11_atomic_fetch_or(o, v, m))
#define atomic_fetch_xor(o, v)             KPT_ATOMIC(kpt_point, __c11_atomic_fetch_xor(o, v, KPT_SEQ))
#define atomic_fetch_xor_explicit(o, v, m) KPT_ATOMIC(kpt_point, __c11_atomic_fetch_xor(o, v, m))
#define atomic_fetch_and(o, v)             KPT_ATOMIC(kpt_point, __c11_atomic_fetch_and(o, v, KPT_SEQ))
#define atomic_fetch_and_explicit(o, v, m) KPT_ATOMIC(kpt_point, __c11_atomic_fetch_and(o, v, m))
#define atomic_flag_test_and_set(o)                                                                \
	KPT_ATOMIC(kpt_point, __c11_atomic_exchange(&(o)->_Value, 1, KPT_SEQ))
#define atomic_flag_test_and_set_explicit(o, m)                                                    \
	KPT_ATOMIC(kpt_point, __c11_atomic_exchange(&(o)->_Value, 1, m))
#define atomic_flag_clear(o)                                                                       \
	KPT_ATOMIC(kpt_release_point, __c11_atomic_store(&(o)->_Value, 0, KPT_SEQ))
#define atomic_flag_clear_explicit(o, m)                                                           \
	KPT_ATOMIC(kpt_release_point, __c11_atomic_store(&(o)->_Value, 0, m))

#endif /* KPT_NO_MACROS */
#endif /* KPT_H */
