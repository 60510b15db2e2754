/*
 * tsan_cov_toy.c - does ThreadSanitizer stay quiet about libFuzzer's inline
 * coverage counters?  The tsan preset instruments the library and the
 * runner for coverage (fuzz/CMakeLists.txt, KMGR_TSAN_FUZZ_COVERAGE), which
 * is only sound if the counters, plain increments hit from every thread,
 * are not reported as races (clang-14 reports them, clang-19 does not:
 * sanitizers/README.md).  Two threads run the same edges; an input starting
 * with 'R' also makes them race on a plain int, so the same binary shows
 * that a real race is still reported.  Built with -fsanitize=fuzzer and run
 * by ctest on one input file each way.  The toy uses pthreads directly: it
 * tests the toolchain, not the library, and must not depend on lib/sched.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

static pthread_mutex_t toy_lock = PTHREAD_MUTEX_INITIALIZER;
static int toy_locked_count; /* under toy_lock: no race */
static int toy_racy_count;   /* unprotected: a race when toy_race is set */
static int toy_race;         /* written before the threads start */

static void *toy_worker(void *arg)
{
	long iters = (long)arg;

	for (long i = 0; i < iters; i++) {
		/* both branches are edges with their own counters */
		if (i & 1) {
			pthread_mutex_lock(&toy_lock);
			toy_locked_count++;
			pthread_mutex_unlock(&toy_lock);
		} else if (toy_race) {
			toy_racy_count++;
		}
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pthread_t a, b;

	toy_race = size > 0 && data[0] == 'R';
	if (pthread_create(&a, NULL, toy_worker, (void *)1000L) != 0)
		return 0;
	if (pthread_create(&b, NULL, toy_worker, (void *)1000L) != 0) {
		pthread_join(a, NULL);
		return 0;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
