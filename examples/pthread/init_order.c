/*
 * init_order.c - an order violation between initialisation and use: main
 * starts the logger thread, then loads the settings the logger reads.
 * When the logger runs first, it dereferences the settings pointer while
 * it is still NULL (ASan: SEGV).  The thread's creation is a scheduling
 * point: one decision bit finds it.
 * Twin (KPT_TWIN): the settings are loaded before the thread is created.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct settings {
	int level;
	char prefix[16];
};

static struct settings *settings;
static int logged;

static struct settings *load_settings(void)
{
	struct settings *s = malloc(sizeof(*s));

	assert(s);
	s->level = 2;
	strcpy(s->prefix, "app: ");
	return s;
}

static void *logger(void *arg)
{
	(void)arg;
	if (settings->level >= 2)
		logged++;
	return NULL;
}

static void start(void)
{
	pthread_t t;

	settings = NULL;
	logged = 0;
#ifdef KPT_TWIN
	settings = load_settings();
#endif
	pthread_create(&t, NULL, logger, NULL);
#ifndef KPT_TWIN
	settings = load_settings(); /* too late: the logger may be running */
#endif
	pthread_join(t, NULL);
	assert(logged == 1);
	free(settings);
}

int main(void)
{
	start();
	printf("logged %d\n", logged);
	return 0;
}
