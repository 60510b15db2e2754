/*
 * ksched.c - the production backend's out-of-line parts: object set-up,
 * time, threads and the drain spin.  The hot calls are inline in ksched.h.
 */
#include "ksched.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

/*
 * Every ksched.h call of every thread reads this flag, so it gets a 64-byte
 * line of its own (the struct's alignment pads it; the assertion below
 * keeps it so).  TSan: it keeps four shadow cells per 8 bytes of memory,
 * and when all four are taken it overwrites one picked by trace position.
 * A variable the linker placed in the flag's 8 bytes had its own accesses
 * crowded out by these reads (one cell per thread, two for main: its store
 * and its loads), and a race on it could lose the earlier write its report
 * needs.  That is what made sched_tsan report nothing once ctl.c was split
 * into four files: the new object order put the flag right after the
 * helper's racy counter (fibers) and the eviction fell on the counter's
 * write.  Production: no written neighbour can make the line every call
 * reads bounce between cores.
 */
struct ks_ctl_active ks__ctl_active;
_Static_assert(_Alignof(struct ks_ctl_active) >= 64 && sizeof(struct ks_ctl_active) >= 64,
               "ks__ctl_active must not share its line (TSan shadow cells, false sharing)");

int ks_mutex_init(ks_mutex_t *m)
{
	atomic_init(&m->ctl_owner, 0);
	return pthread_mutex_init(&m->pm, NULL);
}

void ks_mutex_destroy(ks_mutex_t *m)
{
	pthread_mutex_destroy(&m->pm);
}

int ks_rwlock_init(ks_rwlock_t *l)
{
	atomic_init(&l->ctl_writer, 0);
	atomic_init(&l->ctl_readers, 0);
	return pthread_rwlock_init(&l->prw, NULL);
}

void ks_rwlock_destroy(ks_rwlock_t *l)
{
	pthread_rwlock_destroy(&l->prw);
}

int ks_cond_init(ks_cond_t *c)
{
	atomic_init(&c->ctl_seq, 0);
	return pthread_cond_init(&c->pc, NULL);
}

void ks_cond_destroy(ks_cond_t *c)
{
	pthread_cond_destroy(&c->pc);
}

int ks_sem_init(ks_sem_t *s, unsigned value)
{
	int rc = ks_mutex_init(&s->m);

	if (rc)
		return rc;
	rc = ks_cond_init(&s->c);
	if (rc) {
		ks_mutex_destroy(&s->m);
		return rc;
	}
	s->count = value;
	atomic_init(&s->ctl_count, (long)value);
	return 0;
}

void ks_sem_destroy(ks_sem_t *s)
{
	ks_cond_destroy(&s->c);
	ks_mutex_destroy(&s->m);
}

void ks_usleep_prod(uint64_t us)
{
	struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int ks_atfork_child(void (*fn)(void))
{
	return pthread_atfork(NULL, NULL, fn);
}

bool ks_mutex_child_reset(ks_mutex_t *m)
{
	bool held = pthread_mutex_trylock(&m->pm) != 0;

	/* a fresh mutex, whoever held it: the holder is not in this process */
	pthread_mutex_init(&m->pm, NULL);
	atomic_store_explicit(&m->ctl_owner, 0, memory_order_relaxed);
	return held;
}

void ks_yield_prod(void)
{
	sched_yield();
}

uint64_t ks_now_ns_prod(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static _Thread_local const void *tl_tag;

void ks_thread_tag_set(const void *tag)
{
	if (ks_controlled()) {
		ks_ctl_thread_tag_set(tag);
		return;
	}
	tl_tag = tag;
}

const void *ks_thread_tag(void)
{
	if (ks_controlled())
		return ks_ctl_thread_tag();
	return tl_tag;
}

int ks_thread_create_at(ks_thread_t *t, const char *name, void *(*fn)(void *), void *arg,
                        const char *site)
{
	int rc;

	if (ks_controlled())
		return ks_ctl_thread_create(t, name, fn, arg, site);
	t->ctl_id = -1;
	rc = pthread_create(&t->pt, NULL, fn, arg);
	if (rc == 0 && name)
		pthread_setname_np(t->pt, name); /* best effort: names over 15 chars are refused */
	return rc;
}

int ks_thread_join_at(ks_thread_t *t, void **ret, const char *site)
{
	if (t->ctl_id >= 0)
		return ks_ctl_thread_join(t, ret, site);
	return pthread_join(t->pt, ret);
}

uint64_t ks_spin_wait_zero_at(ks_atomic_t *ctr, uint64_t sleep_us, uint64_t warn_every,
                              ks_spin_warn_fn warn, void *ctx, const char *site)
{
	uint64_t iters = 0;

	while (ks_atomic_load_at(ctr, site) != 0) {
		ks_usleep_at(sleep_us, site);
		/* warn at every multiple of warn_every and keep waiting: no timeout */
		if (++iters % (warn_every ? warn_every : UINT64_MAX) == 0 && warn)
			warn(ctx, iters);
	}
	return iters;
}
