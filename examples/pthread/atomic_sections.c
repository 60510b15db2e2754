/*
 * atomic_sections.c - SV-COMP's atomic sections (sv-benchmarks' pthread
 * programs): a function whose name starts with __VERIFIER_atomic_ runs
 * without interruption, and so does the code between
 * __VERIFIER_atomic_begin() and __VERIFIER_atomic_end().  Three threads add
 * to one plain counter: two through atomic functions, one through an
 * atomic section.  The bug: the functions' increment is split in two
 * atomic functions, a read and a write, and a thread preempted between
 * the two writes a stale value; main's check after the joins reaches
 * reach_error().  Built as an SV-COMP program (kpt_add_program SVCOMP,
 * ci/kpt.sh --svcomp).
 * Twin (KPT_TWIN): one atomic function reads and writes; correct, as long
 * as the atomic functions and the section are atomic.
 */
#include <pthread.h>

extern void __VERIFIER_atomic_begin(void);
extern void __VERIFIER_atomic_end(void);
void reach_error(void)
{
}

#define N 3
int counter;

#ifdef KPT_TWIN
void __VERIFIER_atomic_add(void)
{
	int seen = counter;

	counter = seen + 1;
}
#else
int __VERIFIER_atomic_read(void)
{
	return counter;
}

void __VERIFIER_atomic_write(int value)
{
	counter = value;
}

#endif

static void add_one(void)
{
#ifdef KPT_TWIN
	__VERIFIER_atomic_add();
#else
	__VERIFIER_atomic_write(__VERIFIER_atomic_read() + 1);
#endif
}

void *by_function(void *arg)
{
	for (int i = 0; i < N; i++)
		add_one();
	return arg;
}

void *by_section(void *arg)
{
	for (int i = 0; i < N; i++) {
		__VERIFIER_atomic_begin();
		int seen = counter;
		counter = seen + 1;
		__VERIFIER_atomic_end();
	}
	return arg;
}

int main(void)
{
	pthread_t a, b, c;

	counter = 0;
	pthread_create(&a, 0, by_function, 0);
	pthread_create(&b, 0, by_function, 0);
	pthread_create(&c, 0, by_section, 0);
	pthread_join(a, 0);
	pthread_join(b, 0);
	pthread_join(c, 0);
	if (counter != 3 * N)
		reach_error();
	return 0;
}
