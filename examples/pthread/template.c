/*
 * template.c - the shape of a program for kpt (docs/pthread.md).  Copy it,
 * put your threads in scenario(), and build it with
 *	kpt_add_program(my_prog my_prog.c)
 * in a CMakeLists.txt of this tree (or cmake -DKPT_PROGRAMS=/path/my_prog.c).
 * The file stays a plain pthreads program: without kpt it builds and runs
 * on its own (cc -pthread template.c).
 *
 * scenario() runs once per fuzz input, in the same process, each time
 * under a new controlled run: set your globals afresh at its start, create
 * and join your threads in it, check the outcome with assert (the oracle),
 * and free what it allocated (LeakSanitizer is on).  A deadlock needs no
 * check: the scheduler reports it.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 2

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *worker(void *arg)
{
	long n = (long)(size_t)arg;

	pthread_mutex_lock(&lock);
	total += n;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void scenario(void)
{
	pthread_t t[THREADS];

	total = 0;
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(size_t)(i + 1));
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert(total == THREADS * (THREADS + 1) / 2);
}

#ifdef KPT_FUZZ_BODY
KPT_FUZZ_BODY(scenario)
#else
int main(void)
{
	scenario();
	printf("total %ld\n", total);
	return 0;
}
#endif
