/*
 * kpt_test.c - the shim's contract (fuzz/pthread/kpt.h, docs/pthread.md),
 * on plain pthread code compiled like a program of kpt_add_program:
 * -include kpt.h and the access instrumentation.  Outside a controlled
 * run every wrapper is the real call; inside one, threads, handles, locks,
 * conditions, time and atomics are the scheduler's, the object table is
 * fresh every run, and the input's bytes choose the interleaving, memory
 * access points included.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ktest.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long counter, ready, detached_ran;
static atomic_long acounter;
static pthread_t seen_self[8];

static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* One worker that touches every mapped call once. */
static void *busy(void *arg)
{
	long id = (long)(intptr_t)arg;

	seen_self[id] = pthread_self();
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
		atomic_fetch_add(&acounter, 1);
	}
	pthread_rwlock_rdlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_rwlock_wrlock(&rw);
	pthread_rwlock_unlock(&rw);
	pthread_mutex_lock(&lock);
	while (!ready)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	sched_yield();
	return (void *)(intptr_t)(id * 10);
}

static void busy_scenario(void)
{
	pthread_t t[4];
	void *ret;

	counter = ready = 0;
	atomic_store(&acounter, 0);
	for (long i = 0; i < 4; i++)
		KT_EQ(pthread_create(&t[i], NULL, busy, (void *)(intptr_t)(i + 1)), 0);
	pthread_mutex_lock(&lock);
	ready = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < 4; i++) {
		KT_EQ(pthread_join(t[i], &ret), 0);
		KT_EQ((intptr_t)ret, (i + 1) * 10);
		KT_ASSERT(pthread_equal(t[i], seen_self[i + 1]));
	}
	KT_EQ(counter, 400);
	KT_EQ(atomic_load(&acounter), 400);
}

/* kpt-1.1: outside a controlled run every wrapper is the real call: real
 * threads with real ids, and usleep sleeps for real. */
static void case_passthrough(void)
{
	uint64_t t0 = wall_ms();

	busy_scenario();
	KT_ASSERT(!pthread_equal(seen_self[1], seen_self[2]));
	KT_GT((uint64_t)seen_self[1], 1024 + 1); /* not a kpt handle */
	usleep(20 * 1000);
	KT_GE(wall_ms() - t0, 20);
}

/* kpt-1.2: in a controlled run the same code runs to the same result on
 * logical threads: pthread_t is the creation index + 1, pthread_self
 * agrees with it, join hands back the return value, and 256 schedules
 * (one decision byte each) all end well. */
static void case_controlled(void)
{
	for (int b = 0; b < 256; b++) {
		uint8_t in[2] = {0, (uint8_t)b};

		kpt_fuzz_run(in, sizeof(in), busy_scenario);
		for (int i = 1; i <= 4; i++)
			KT_EQ((uintptr_t)seen_self[i], i);
	}
}

static void *trylocker(void *arg)
{
	(void)arg;
	KT_EQ(pthread_mutex_trylock(&lock), EBUSY);
	return NULL;
}

static void *mark(void *arg)
{
	(void)arg;
	detached_ran = 1;
	return NULL;
}

static void handles_scenario(void)
{
	pthread_t t, d;

	KT_EQ(pthread_join((pthread_t)77, NULL), ESRCH);
	pthread_mutex_lock(&lock);
	pthread_create(&t, NULL, trylocker, NULL);
	sched_yield(); /* the others first: trylocker meets the held lock */
	pthread_mutex_unlock(&lock);
	KT_EQ(pthread_join(t, NULL), 0);
	KT_EQ(pthread_join(t, NULL), EINVAL);
	KT_ASSERT(!pthread_equal(pthread_self(), t));
	detached_ran = 0;
	pthread_create(&d, NULL, mark, NULL);
	KT_EQ(pthread_detach(d), 0);
	pthread_mutex_lock(&lock); /* left locked: the next run starts afresh */
}

static void sleeper(void)
{
	usleep(10 * 1000 * 1000);
}

/* kpt-1.3: trylock of a mutex another logical thread holds is EBUSY, a
 * handle joins once, a detached thread is waited for by the run's end, a
 * mutex left locked by one run is free in the next (the object table
 * is per run), and virtual time: a 10 s usleep costs no real second. */
static void case_handles(void)
{
	uint64_t t0;

	for (int i = 0; i < 3; i++) {
		kpt_fuzz_run(NULL, 0, handles_scenario);
		KT_EQ(detached_ran, 1);
	}
	t0 = wall_ms();
	kpt_fuzz_run(NULL, 0, sleeper);
	KT_LT(wall_ms() - t0, 1000);
}

static long plain;

/* The race kpt-1.4 is about, on purpose: not TSan's to report (tsan preset). */
__attribute__((no_sanitize("thread"))) static void *bump_plain(void *arg)
{
	(void)arg;
	plain++;
	return NULL;
}

static void *bump_atomics(void *arg)
{
	long v;

	(void)arg;
	v = atomic_load(&acounter);
	atomic_store(&acounter, v + 1);
	return NULL;
}

static void two(void *(*fn)(void *))
{
	pthread_t t[2];

	plain = 0;
	atomic_store(&acounter, 0);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, fn, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

static void lost_plain(void)
{
	two(bump_plain);
}

static void lost_atomics(void)
{
	two(bump_atomics);
}

/* kpt-1.4: the input's access points reach a window between two plain
 * accesses: thread 1's 2nd access after its start (release 0) is the
 * store of `plain++`, where the point hands over to thread 2, and the
 * update is lost, every time; without the point it never is.  Atomics are
 * scheduling points: some decision byte splits a load and a store. */
static void case_access_points(void)
{
	const uint8_t ap[] = {0x01, 1, 0, 1}; /* t1:0+2 */
	int lost = 0;

	for (int i = 0; i < 3; i++) {
		kpt_fuzz_run(ap, sizeof(ap), lost_plain);
		KT_EQ(plain, 1);
		kpt_fuzz_run(NULL, 0, lost_plain);
		KT_EQ(plain, 2);
	}
	for (int b = 0; b < 256; b++) {
		uint8_t in[2] = {0, (uint8_t)b};

		kpt_fuzz_run(in, sizeof(in), lost_atomics);
		lost += atomic_load(&acounter) == 1;
	}
	KT_GT(lost, 0);
	KT_LT(lost, 256);
}

/* ---- kpt-1.5: the calls real programs make (issue 37) ------------------- */

static sem_t items;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_barrier_t bar;
static pthread_spinlock_t spin;
static pthread_mutex_t rec, chk;
static long once_runs, spin_in, spin_max, serial, consumed;

static void once_fn(void)
{
	once_runs++;
}

static void *member(void *arg)
{
	(void)arg;
	pthread_once(&once, once_fn);
	if (pthread_barrier_wait(&bar) == PTHREAD_BARRIER_SERIAL_THREAD)
		serial++;
	pthread_spin_lock(&spin);
	spin_in++;
	if (spin_in > spin_max)
		spin_max = spin_in;
	sched_yield(); /* a point inside the spin lock: the others must wait */
	spin_in--;
	pthread_spin_unlock(&spin);
	sem_wait(&items);
	__sync_fetch_and_add(&consumed, 1); /* three can pass the semaphore at once */
	__sync_fetch_and_add(&serial, 0);
	pthread_exit((void *)(intptr_t)7); /* the join's value */
}

static void members_scenario(void)
{
	pthread_t t[3];
	void *ret;

	once_runs = spin_in = spin_max = serial = consumed = 0;
	KT_EQ(sem_init(&items, 0, 0), 0);
	KT_EQ(pthread_barrier_init(&bar, NULL, 3), 0);
	KT_EQ(pthread_spin_init(&spin, 0), 0);
	for (int i = 0; i < 3; i++)
		KT_EQ(pthread_create(&t[i], NULL, member, NULL), 0);
	for (int i = 0; i < 3; i++)
		KT_EQ(sem_post(&items), 0);
	for (int i = 0; i < 3; i++) {
		KT_EQ(pthread_join(t[i], &ret), 0);
		KT_EQ((intptr_t)ret, 7);
	}
	KT_EQ(once_runs, 1);
	KT_EQ(serial, 1);
	KT_EQ(spin_max, 1);
	KT_EQ(consumed, 3);
	KT_EQ(sem_trywait(&items), -1);
	KT_EQ(errno, EAGAIN);
}

static void *try_other(void *arg)
{
	(void)arg;
	KT_EQ(pthread_rwlock_tryrdlock(&rw), EBUSY);
	KT_EQ(pthread_rwlock_trywrlock(&rw), EBUSY);
	KT_EQ(pthread_mutex_unlock(&chk), EPERM); /* not its owner */
	KT_EQ(pthread_mutex_trylock(&rec), EBUSY);
	return NULL;
}

static void locks_scenario(void)
{
	pthread_mutexattr_t a;
	pthread_t t;
	struct timespec ts = {0, 0};

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	KT_EQ(pthread_mutex_init(&rec, &a), 0);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	KT_EQ(pthread_mutex_init(&chk, &a), 0);
	pthread_mutexattr_destroy(&a);
	KT_EQ(pthread_mutex_lock(&rec), 0);
	KT_EQ(pthread_mutex_lock(&rec), 0); /* recursive: depth 2 */
	KT_EQ(pthread_mutex_lock(&chk), 0);
	KT_EQ(pthread_mutex_lock(&chk), EDEADLK);
	KT_EQ(pthread_rwlock_trywrlock(&rw), 0);
	KT_EQ(pthread_create(&t, NULL, try_other, NULL), 0);
	KT_EQ(pthread_join(t, NULL), 0);
	KT_EQ(pthread_rwlock_unlock(&rw), 0);
	KT_EQ(pthread_rwlock_tryrdlock(&rw), 0);
	KT_EQ(pthread_rwlock_unlock(&rw), 0);
	KT_EQ(pthread_mutex_unlock(&rec), 0);
	KT_EQ(pthread_mutex_unlock(&rec), 0);
	KT_EQ(pthread_mutex_unlock(&chk), 0);
	KT_EQ(pthread_join(pthread_self(), NULL), EDEADLK); /* glibc's answer */
	/* virtual time: each would take real seconds */
	KT_EQ(sleep(5), 0);
	ts.tv_sec = 5;
	KT_EQ(nanosleep(&ts, NULL), 0);
	pthread_mutex_lock(&lock);
	KT_EQ(pthread_cond_timedwait(&cond, &lock, &ts), ETIMEDOUT);
	pthread_mutex_unlock(&lock);
	KT_EQ(sem_init(&items, 0, 0), 0);
	KT_EQ(sem_timedwait(&items, &ts), -1);
	KT_EQ(errno, ETIMEDOUT);
}

static void *sync_bump(void *arg)
{
	long v;

	(void)arg;
	v = __atomic_load_n(&counter, __ATOMIC_SEQ_CST);
	__atomic_store_n(&counter, v + 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static void sync_lost(void)
{
	pthread_t t[2];

	counter = 0;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, sync_bump, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

/* kpt-1.5: semaphores, once, barriers, spin locks, pthread_exit; rwlock
 * try-locks, recursive and error-checking mutexes, a self-join (EDEADLK),
 * sleeps and timed waits on virtual time, and GCC's __atomic builtins as
 * scheduling points, over 256 schedules each, in no real second. */
static void case_real_calls(void)
{
	uint64_t t0 = wall_ms();
	int lost = 0;

	for (int b = 0; b < 256; b++) {
		uint8_t in[3] = {0, (uint8_t)b, (uint8_t)(b * 7)};

		kpt_fuzz_run(in, sizeof(in), members_scenario);
		kpt_fuzz_run(in, sizeof(in), locks_scenario);
		kpt_fuzz_run(in, sizeof(in), sync_lost);
		lost += counter == 1;
	}
	KT_GT(lost, 0);
	KT_LT(lost, 256);
	KT_LT(wall_ms() - t0, 20000); /* 256 x 15 virtual seconds */
}

static void *parked(void *arg)
{
	pthread_mutex_lock(&lock);
	pthread_mutex_unlock(&lock);
	return arg;
}

static void too_many(void)
{
	static pthread_t t[100];

	pthread_mutex_lock(&lock);
	for (int i = 0; i < 100; i++)
		pthread_create(&t[i], NULL, parked, NULL);
}

/* Run fn under kpt in a child, its stderr in buf: 0, or the signal. */
static int child_run(void (*fn)(void), char *buf, size_t len)
{
	char path[] = "/tmp/kpt_test.XXXXXX";
	int fd = mkstemp(path), st = 0;
	pid_t pid;

	KT_ASSERT(fd >= 0);
	pid = fork();
	KT_ASSERT(pid >= 0);
	if (pid == 0) {
		dup2(fd, 2);
		kpt_fuzz_run(NULL, 0, fn);
		_exit(0);
	}
	KT_EQ(waitpid(pid, &st, 0), pid);
	memset(buf, 0, len);
	KT_GE(pread(fd, buf, len - 1, 0), 0);
	close(fd);
	unlink(path);
	return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

/* kpt-1.6: a limit of kpt is a "KPT LIMIT" line that says how to raise
 * it, not the program's own failure (an EAGAIN it would assert on). */
static void case_limit(void)
{
	char buf[512];

	KT_EQ(child_run(too_many, buf, sizeof(buf)), SIGABRT);
	KT_ASSERT(strstr(buf, "KPT LIMIT: more than 64 live threads") != NULL);
	KT_ASSERT(strstr(buf, "KS_CTL_MAX_THREADS") != NULL);
}

static volatile int flag_set;

static void *setter(void *arg)
{
	(void)arg;
	flag_set = 1;
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	while (!flag_set) {
	}
	return NULL;
}

static void spin_then_set(void)
{
	pthread_t a, b;

	flag_set = 0;
	pthread_create(&a, NULL, spinner, NULL);
	pthread_create(&b, NULL, setter, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

static void spin_forever(void)
{
	pthread_t a;

	flag_set = 0;
	pthread_create(&a, NULL, spinner, NULL);
	pthread_join(a, NULL);
}

/* kpt-1.7: a spin on a plain flag (no scheduling point in the loop)
 * yields, so the thread that sets the flag runs and the spinner ends, on
 * every schedule; one nobody ends is KSCHED HANG naming the loop. */
static void case_spin(void)
{
	static char buf[4096];

	/* Under TSan the setter's plain store and the spinner's plain load
	 * are the data race TSan exists to report (the program is racy by
	 * design: that is what a plain-flag spin is), so only the hang half,
	 * one thread and no race, runs there. */
#if !defined(KMGR_TSAN)
	for (int b = 0; b < 64; b++) {
		uint8_t in[2] = {0, (uint8_t)b};

		kpt_fuzz_run(in, sizeof(in), spin_then_set);
	}
#else
	(void)spin_then_set;
#endif
	KT_EQ(child_run(spin_forever, buf, sizeof(buf)), SIGABRT);
	KT_ASSERT(strstr(buf, "KSCHED HANG") != NULL);
	KT_ASSERT(strstr(buf, "a spin loop at ") != NULL);
	KT_ASSERT(strstr(buf, "kpt_test+0x") != NULL);
}

/* ---- kpt-1.8: timed waits and the program's clock ---- */

static pthread_mutex_t tlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t tcond = PTHREAD_COND_INITIALIZER;
static sem_t tsem;
static long tready, trc, t_waited_ns, t_sleep_us, t_now[2];
static int tkind; /* 0 condition, 1 mutex, 2 semaphore */

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static struct timespec in_1s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 1;
	return ts;
}

/* The other side: after t_sleep_us of virtual time, the signal or the
 * post the waiter is waiting for (main unlocks the mutex: timed_scenario). */
static void *t_other(void *arg)
{
	(void)arg;
	usleep((useconds_t)t_sleep_us);
	if (tkind == 2) {
		sem_post(&tsem);
		return NULL;
	}
	pthread_mutex_lock(&tlock);
	tready = 1;
	pthread_cond_signal(&tcond);
	pthread_mutex_unlock(&tlock);
	return NULL;
}

static void *t_waiter(void *arg)
{
	long t0 = now_ns(); /* before the deadline's own read of the clock */
	struct timespec dl = in_1s();

	(void)arg;
	if (tkind == 1) {
		trc = pthread_mutex_timedlock(&tlock, &dl);
		if (trc == 0)
			pthread_mutex_unlock(&tlock);
	} else if (tkind == 2) {
		trc = sem_timedwait(&tsem, &dl) == 0 ? 0 : errno;
	} else {
		pthread_mutex_lock(&tlock);
		trc = 0;
		while (!tready && trc == 0)
			trc = pthread_cond_timedwait(&tcond, &tlock, &dl);
		pthread_mutex_unlock(&tlock);
	}
	t_waited_ns = now_ns() - t0;
	return NULL;
}

static void timed_scenario(void)
{
	pthread_t w, o;

	tready = 0;
	trc = -1;
	sem_init(&tsem, 0, 0);
	if (tkind == 1) { /* main holds the mutex and is the other side */
		pthread_mutex_lock(&tlock);
		pthread_create(&w, NULL, t_waiter, NULL);
		usleep((useconds_t)t_sleep_us);
		pthread_mutex_unlock(&tlock);
		pthread_join(w, NULL);
		return;
	}
	pthread_create(&w, NULL, t_waiter, NULL);
	pthread_create(&o, NULL, t_other, NULL);
	pthread_join(w, NULL);
	pthread_join(o, NULL);
}

static void bad_deadline(void)
{
	struct timespec bad = {0, -1};

	pthread_mutex_lock(&tlock);
	trc = pthread_cond_timedwait(&tcond, &tlock, &bad);
	pthread_mutex_unlock(&tlock);
}

static void clock_scenario(void)
{
	t_now[0] = now_ns();
	sleep(5);
	t_now[1] = now_ns();
}

/* waits 1 ms for the clock by polling it, never sleeping */
static void poll_scenario(void)
{
	long end = now_ns() + 1000000L;

	t_now[0] = 0;
	while (now_ns() < end) {
		t_now[0]++;
		sched_yield();
	}
}

/* kpt-1.8: a timed wait (condition, mutex, semaphore) ends with what it
 * waits for when that comes before the deadline, on every schedule, and
 * with ETIMEDOUT when the other side sleeps past it, the virtual clock then
 * at least at the deadline; the program reads virtual time, the same in
 * every run (so a deadline it computes is the same in a replay), each read
 * 1 us later (so a loop that polls it ends), and a bad deadline is EINVAL. */
static void case_timed(void)
{
	long first;

	for (tkind = 0; tkind < 3; tkind++) {
		for (int b = 0; b < 64; b++) {
			uint8_t in[3] = {0, (uint8_t)b, (uint8_t)(b * 13)};

			t_sleep_us = 1000; /* 1 ms: before the 1 s deadline */
			kpt_fuzz_run(in, sizeof(in), timed_scenario);
			KT_EQ(trc, 0);
			KT_LT(t_waited_ns, 1000000000L);
			t_sleep_us = 10 * 1000 * 1000; /* 10 s: past it */
			kpt_fuzz_run(in, sizeof(in), timed_scenario);
			KT_EQ(trc, ETIMEDOUT);
			KT_GE(t_waited_ns, 1000000000L);
			KT_LT(t_waited_ns, 10L * 1000000000L);
		}
	}
	/* the sleep's 5 s and the first read's tick of 1 us */
	kpt_fuzz_run(NULL, 0, clock_scenario);
	first = t_now[0];
	KT_EQ(t_now[1] - t_now[0], 5L * 1000000000L + 1000L);
	kpt_fuzz_run(NULL, 0, clock_scenario);
	KT_EQ(t_now[0], first);
	/* a loop that polls the clock ends: 1 ms is 1,000 reads of 1 us (the
	 * first sets the end, 999 in the loop) */
	kpt_fuzz_run(NULL, 0, poll_scenario);
	KT_EQ(t_now[0], 999);
	kpt_fuzz_run(NULL, 0, bad_deadline);
	KT_EQ(trc, EINVAL);
}

/* ---- kpt-1.9: the time the reads move wakes the sleepers it passes ---- */

static atomic_long s_flag;
static long s_polls, s_seen;

static void *s_setter(void *arg)
{
	(void)arg;
	usleep(1000);
	atomic_store(&s_flag, 1);
	return NULL;
}

/* polls the clock for up to 10 ms for a flag that a thread asleep for 1 ms
 * sets */
static void sleeper_scenario(void)
{
	pthread_t t;
	long end;

	atomic_store(&s_flag, 0);
	s_polls = 0;
	pthread_create(&t, NULL, s_setter, NULL);
	end = now_ns() + 10L * 1000000L;
	while (!atomic_load(&s_flag) && now_ns() < end) {
		s_polls++;
		sched_yield();
	}
	s_seen = atomic_load(&s_flag);
	pthread_join(t, NULL);
}

static void *s_timed(void *arg)
{
	struct timespec dl;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += 1000000L; /* 1 ms */
	if (dl.tv_nsec >= 1000000000L) {
		dl.tv_sec++;
		dl.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&tlock);
	trc = 0;
	while (!tready && trc == 0)
		trc = pthread_cond_timedwait(&tcond, &tlock, &dl);
	pthread_mutex_unlock(&tlock);
	return NULL;
}

/* signals, after 2 ms of polling the clock, a timed wait of 1 ms */
static void late_signal_scenario(void)
{
	pthread_t t;
	long end;

	tready = 0;
	trc = -1;
	pthread_create(&t, NULL, s_timed, NULL);
	end = now_ns() + 2L * 1000000L;
	while (now_ns() < end)
		sched_yield();
	pthread_mutex_lock(&tlock);
	tready = 1;
	pthread_cond_signal(&tcond);
	pthread_mutex_unlock(&tlock);
	pthread_join(t, NULL);
}

/* kpt-1.9: virtual time that clock reads move wakes a sleeper or ends a
 * timed wait once it passes their time, as the real clock would: on every
 * schedule a loop that polls the clock for 10 ms sees the flag a thread
 * asleep for 1 ms sets (it timed out, a wrong answer for a correct
 * program, while sleepers woke only when no thread could run), within
 * about 1 ms of reads; and a timed wait of 1 ms signalled after 2 ms of
 * reads times out instead of taking the late signal. */
static void case_sleepers(void)
{
	for (int b = 0; b < 64; b++) {
		uint8_t in[3] = {0, (uint8_t)b, (uint8_t)(b * 13)};

		kpt_fuzz_run(in, sizeof(in), sleeper_scenario);
		KT_EQ(s_seen, 1);
		KT_LT(s_polls, 1100);
		kpt_fuzz_run(in, sizeof(in), late_signal_scenario);
		KT_EQ(trc, ETIMEDOUT);
	}
}

int main(int argc, char **argv)
{
	kt_only = argc > 1 ? argv[1] : NULL;
	KT_CASE("kpt-1.1 pass-through", case_passthrough);
	KT_CASE("kpt-1.2 controlled", case_controlled);
	KT_CASE("kpt-1.3 handles", case_handles);
	KT_CASE("kpt-1.4 access points", case_access_points);
	KT_CASE("kpt-1.5 real calls", case_real_calls);
	KT_CASE("kpt-1.6 limits", case_limit);
	KT_CASE("kpt-1.7 spin", case_spin);
	KT_CASE("kpt-1.8 timed waits", case_timed);
	KT_CASE("kpt-1.9 sleepers and the clock", case_sleepers);
	KT_DONE();
}
