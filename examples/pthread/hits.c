/*
 * hits.c - a correct program that only passes if every input starts from
 * the program's initial state (issue 37): two threads increment a global
 * under a mutex that main mallocs and never frees, each also counts its
 * calls in a function static, and main joins both and asserts.  Without
 * the globals restored, `hits` keeps the last run's value and the assert
 * fails from the second input on; without the old lock kept, the next
 * run's malloc leaves it unreachable and LeakSanitizer reports it.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int hits = 0;
pthread_mutex_t *lock;

void *worker(void *arg)
{
	static int calls;

	pthread_mutex_lock(lock);
	hits++;
	calls++;
	assert(calls <= 2);
	pthread_mutex_unlock(lock);
	return arg;
}

int main()
{
	pthread_t a, b;

	lock = malloc(sizeof(*lock));
	pthread_mutex_init(lock, NULL);
	pthread_create(&a, NULL, worker, NULL);
	pthread_create(&b, NULL, worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	assert(hits == 2);
	printf("hits %d\n", hits);
	return 0;
}
