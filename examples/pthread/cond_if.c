/*
 * cond_if.c - a job queue whose consumers wait with `if` instead of
 * `while` around pthread_cond_wait.  A consumer woken by the producer's
 * signal does not look again; when the other consumer took the job while
 * it waited for the mutex, it takes one from an empty queue.  Two
 * consumers, one producer of two jobs; the count must never go negative.
 * Every step of it is a synchronization call: the decision bytes find it.
 * Twin (KPT_TWIN): `while`.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define JOBS 2

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t nonempty = PTHREAD_COND_INITIALIZER;
static int queue[JOBS];
static int queued, done;

static void *consumer(void *arg)
{
	int job;

	(void)arg;
	pthread_mutex_lock(&lock);
#ifdef KPT_TWIN
	while (queued == 0)
#else
	if (queued == 0)
#endif
		pthread_cond_wait(&nonempty, &lock);
	queued--;
	assert(queued >= 0);
	job = queue[queued];
	done += job;
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < JOBS; i++) {
		pthread_mutex_lock(&lock);
		queue[queued++] = i + 1;
		pthread_cond_signal(&nonempty);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static void run_queue(void)
{
	pthread_t c[2], p;

	queued = done = 0;
	for (int i = 0; i < 2; i++)
		pthread_create(&c[i], NULL, consumer, NULL);
	pthread_create(&p, NULL, producer, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(c[i], NULL);
	pthread_join(p, NULL);
	assert(done == 1 + 2);
}

int main(void)
{
	run_queue();
	printf("jobs done: %d\n", done);
	return 0;
}
