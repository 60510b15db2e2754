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
#include <stdatomic.h>
#include <stdint.h>
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

int main(int argc, char **argv)
{
	kt_only = argc > 1 ? argv[1] : NULL;
	KT_CASE("kpt-1.1 pass-through", case_passthrough);
	KT_CASE("kpt-1.2 controlled", case_controlled);
	KT_CASE("kpt-1.3 handles", case_handles);
	KT_CASE("kpt-1.4 access points", case_access_points);
	KT_DONE();
}
