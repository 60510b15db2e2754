/*
 * uaf_handoff.c - a use after free after a flag handoff.  The owner
 * publishes a message, waits for the reader's `done` and frees it.  The
 * reader says `done` as soon as it has the length, before it reads the
 * data: the owner frees the message under the reader's feet, and ASan
 * reports the heap-use-after-free.  The window opens at the reader's
 * atomic store (a release) and ends at its next plain read, with no
 * synchronization call in between: found through a memory access point.
 * Twin (KPT_TWIN): `done` after the last read.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

struct message {
	size_t len;
	unsigned char data[32];
};

static struct message *_Atomic mailbox;
static atomic_int done;
static unsigned sum;

static void *reader(void *arg)
{
	struct message *m;
	unsigned s = 0;
	size_t len;

	(void)arg;
	while (!(m = atomic_load(&mailbox)))
		sched_yield();
	len = m->len;
#ifndef KPT_TWIN
	atomic_store(&done, 1); /* "got it", but the data is still to be read */
#endif
	for (size_t i = 0; i < len; i++)
		s += m->data[i];
#ifdef KPT_TWIN
	atomic_store(&done, 1);
#endif
	sum = s;
	return NULL;
}

static void handoff(void)
{
	struct message *m = malloc(sizeof(*m));
	pthread_t t;

	assert(m);
	atomic_store(&mailbox, NULL);
	atomic_store(&done, 0);
	sum = 0;
	pthread_create(&t, NULL, reader, NULL);
	m->len = sizeof(m->data);
	for (size_t i = 0; i < m->len; i++)
		m->data[i] = (unsigned char)i;
	atomic_store(&mailbox, m);
	while (!atomic_load(&done))
		sched_yield();
	free(m);
	pthread_join(t, NULL);
	assert(sum == 31 * 32 / 2);
}

int main(void)
{
	handoff();
	printf("sum %u\n", sum);
	return 0;
}
