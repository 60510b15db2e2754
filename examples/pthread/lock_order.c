/*
 * lock_order.c - a lock-order deadlock: two transfers in opposite
 * directions between the same two accounts, each locking its source
 * account, then its destination (A then B against B then A).  When each
 * has its first lock, each waits for the other's forever; the scheduler
 * reports it as KSCHED DEADLOCK, naming both threads and where they wait.
 * Twin (KPT_TWIN): both lock in one global order, the lower account first.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

struct account {
	pthread_mutex_t lock;
	int id;
	long balance;
};

struct transfer {
	struct account *from, *to;
	long amount;
};

static struct account accounts[2];

static void *transfer(void *arg)
{
	struct transfer *x = arg;
#ifdef KPT_TWIN
	struct account *first = x->from->id < x->to->id ? x->from : x->to;
	struct account *second = first == x->from ? x->to : x->from;
#else
	struct account *first = x->from, *second = x->to;
#endif

	pthread_mutex_lock(&first->lock);
	pthread_mutex_lock(&second->lock);
	x->from->balance -= x->amount;
	x->to->balance += x->amount;
	pthread_mutex_unlock(&second->lock);
	pthread_mutex_unlock(&first->lock);
	return NULL;
}

static void bank(void)
{
	struct transfer x[2] = {
	    {&accounts[0], &accounts[1], 30},
	    {&accounts[1], &accounts[0], 20},
	};
	pthread_t t[2];

	for (int i = 0; i < 2; i++) {
		pthread_mutex_init(&accounts[i].lock, NULL);
		accounts[i].id = i;
		accounts[i].balance = 100;
	}
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, transfer, &x[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	assert(accounts[0].balance + accounts[1].balance == 200);
	for (int i = 0; i < 2; i++)
		pthread_mutex_destroy(&accounts[i].lock);
}

int main(void)
{
	bank();
	printf("balances %ld %ld\n", accounts[0].balance, accounts[1].balance);
	return 0;
}
