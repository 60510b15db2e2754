/*
 * lazy_init.c - check-then-act on a plain field: the first caller of
 * get_table() builds a lookup table and publishes it.  Two workers call it
 * at once; when the second checks between the first's check and its
 * publication, both see NULL and both build one (one of them leaks).  main
 * asserts that exactly one was built.  The window lies between plain
 * accesses: found through a memory access point.
 * Twin (KPT_TWIN): the check and the publication under one mutex.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define SQUARES 16

struct table {
	int n;
	int square[SQUARES];
};

static struct table *table;
static int builds;
#ifdef KPT_TWIN
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
#endif

static struct table *build_table(void)
{
	struct table *t = malloc(sizeof(*t));

	assert(t);
	t->n = SQUARES;
	for (int i = 0; i < SQUARES; i++)
		t->square[i] = i * i;
	builds++;
	return t;
}

static struct table *get_table(void)
{
	struct table *t;

#ifdef KPT_TWIN
	pthread_mutex_lock(&table_lock);
#endif
	if (!table)
		table = build_table();
	t = table;
#ifdef KPT_TWIN
	pthread_mutex_unlock(&table_lock);
#endif
	return t;
}

static void *worker(void *arg)
{
	(void)arg;
	assert(get_table()->square[3] == 9);
	return NULL;
}

static void lookup(void)
{
	pthread_t t[2];

	table = NULL;
	builds = 0;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert(builds == 1);
	free(table);
}

int main(void)
{
	lookup();
	printf("built %d table(s)\n", builds);
	return 0;
}
