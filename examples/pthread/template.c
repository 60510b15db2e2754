/*
 * template.c - the shape of a program for kpt (docs/pthread.md): a plain
 * pthreads program, nothing kpt-specific in it.  Build it with
 *	kpt_add_program(my_prog my_prog.c)
 * in a CMakeLists.txt of this tree, or run `ci/kpt.sh my_prog.c`.
 *
 * Under kpt, main runs once per fuzz input, in the same process, each time
 * under a new controlled run and from the program's initial state (its
 * globals and statics restored, what it left on the heap kept).  Check the
 * outcome with assert (the oracle); a deadlock needs no check: the
 * scheduler reports it.  Without kpt it builds and runs on its own
 * (cc -pthread template.c).
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

	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(size_t)(i + 1));
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	assert(total == THREADS * (THREADS + 1) / 2);
}

int main(void)
{
	scenario();
	printf("total %ld\n", total);
	return 0;
}
