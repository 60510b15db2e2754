/*
 * lost_update.c - a lost update on a plain counter.  Two request handlers
 * count what they served in a shared statistics struct with `++`: a load,
 * then a store.  A handler preempted between the two stores a stale value
 * over the other's increments, and main's check of the total after joining
 * both fails.  There is no synchronization call inside `++`, so the
 * scheduler reaches the window only through a memory access point (the
 * store, after the handler's start).
 * Twin (KPT_TWIN): the increment under the statistics lock.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define HANDLERS 2
#define REQUESTS 3

static struct {
	pthread_mutex_t lock;
	long served;
} stats = {PTHREAD_MUTEX_INITIALIZER, 0};

static void *handler(void *arg)
{
	(void)arg;
	for (int i = 0; i < REQUESTS; i++) {
		/* ... serve the request ... */
#ifdef KPT_TWIN
		pthread_mutex_lock(&stats.lock);
#endif
		stats.served++;
#ifdef KPT_TWIN
		pthread_mutex_unlock(&stats.lock);
#endif
	}
	return NULL;
}

static void serve(void)
{
	pthread_t t[HANDLERS];

	stats.served = 0;
	for (int i = 0; i < HANDLERS; i++)
		pthread_create(&t[i], NULL, handler, NULL);
	for (int i = 0; i < HANDLERS; i++)
		pthread_join(t[i], NULL);
	assert(stats.served == HANDLERS * REQUESTS);
}

int main(void)
{
	serve();
	printf("served %ld\n", stats.served);
	return 0;
}
