/*
 * ctl_sync.c - the modelled synchronization objects of the controlled
 * backend: mutex, reader-writer lock, condition variable, semaphore, the
 * bare scheduling point, sleep and yield.
 *
 * The scheduler owns the lock state (the ctl_* fields): a thread that
 * cannot take a lock is marked blocked on it and the baton moves on; an
 * unlock makes every waiter runnable again and they retry.  Acquire-like
 * calls schedule before they take the object, release-like calls after they
 * let it go, so another thread can always slip in between.
 *
 * The happens-before edges TSan sees are exactly those of the real objects
 * (__tsan_release on unlock/post, __tsan_acquire on lock/wait), made
 * outside the ignore region of ks__enter.
 */
#include "ctl_int.h"

static int owner_of(ks_mutex_t *m)
{
	return atomic_load_explicit(&m->ctl_owner, memory_order_relaxed);
}

/* The scheduling point an acquire-like call starts with.  After a failed
 * run there is none: the call passes through without effect (false). */
static bool point_first(struct ks_lthread *t, const char *site)
{
	if (ks__failed()) {
		ks__failed_point();
		return false;
	}
	ks__point(t, site);
	return true;
}

static void mutex_acquire(struct ks_lthread *t, ks_mutex_t *m, const char *site)
{
	while (!ks__failed() && owner_of(m) != 0)
		ks__block(t, KS_W_MUTEX, m, site);
	if (!ks__failed())
		atomic_store_explicit(&m->ctl_owner, t->id + 1, memory_order_relaxed);
}

static void mutex_release(struct ks_lthread *t, ks_mutex_t *m, const char *site)
{
	if (owner_of(m) != t->id + 1)
		ks__misuse("unlock of a mutex the thread does not hold", site);
	atomic_store_explicit(&m->ctl_owner, 0, memory_order_relaxed);
	ks__wake_all(KS_W_MUTEX, m);
}

void ks_ctl_mutex_lock(ks_mutex_t *m, const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	if (point_first(t, site))
		mutex_acquire(t, m, site);
	ks__leave();
	ks__tsan_acquire(m);
}

/* The lock now, or after a wait that a deadline ns of virtual time from now
 * ends, then one more try (POSIX: never a timeout while the mutex is free);
 * ns 0: a try only.  After a failed run it passes through (true). */
static bool mutex_take(ks_mutex_t *m, uint64_t ns, const char *site)
{
	struct ks_lthread *t = ks__enter_self();
	bool ok = true;

	if (point_first(t, site)) {
		uint64_t deadline = ks_ctl_now_ns() + ns;

		while (ns > 0 && !ks__failed() && owner_of(m) != 0)
			if (ks__block_until(t, KS_W_MUTEX, m, deadline, site))
				break;
		ok = !ks__failed() && owner_of(m) == 0;
		if (ok)
			atomic_store_explicit(&m->ctl_owner, t->id + 1, memory_order_relaxed);
	}
	ks__leave();
	if (ok)
		ks__tsan_acquire(m);
	return ok;
}

bool ks_ctl_mutex_trylock(ks_mutex_t *m, const char *site)
{
	return mutex_take(m, 0, site);
}

bool ks_ctl_mutex_timedlock(ks_mutex_t *m, uint64_t ns, const char *site)
{
	return mutex_take(m, ns, site);
}

void ks_ctl_mutex_unlock(ks_mutex_t *m, const char *site)
{
	struct ks_lthread *t;

	ks__tsan_release(m);
	t = ks__enter_self();
	if (!ks__failed()) {
		mutex_release(t, m, site);
		t->releasing = true;
		ks__point(t, site);
	}
	ks__leave();
}

/* Readers synchronize with writers, never with each other (as TSan models
 * pthread rwlocks): writers release into ctl_writer, readers into
 * ctl_readers; a reader acquires the first, a writer both. */
void ks_ctl_rwlock_rdlock(ks_rwlock_t *l, const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	if (point_first(t, site)) {
		while (!ks__failed() && atomic_load_explicit(&l->ctl_writer, memory_order_relaxed))
			ks__block(t, KS_W_RWLOCK, l, site);
		if (!ks__failed())
			atomic_fetch_add_explicit(&l->ctl_readers, 1, memory_order_relaxed);
	}
	ks__leave();
	ks__tsan_acquire(&l->ctl_writer);
}

static bool rwlock_busy(ks_rwlock_t *l)
{
	return atomic_load_explicit(&l->ctl_writer, memory_order_relaxed) != 0 ||
	       atomic_load_explicit(&l->ctl_readers, memory_order_relaxed) != 0;
}

void ks_ctl_rwlock_wrlock(ks_rwlock_t *l, const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	if (point_first(t, site)) {
		while (!ks__failed() && rwlock_busy(l))
			ks__block(t, KS_W_RWLOCK, l, site);
		if (!ks__failed())
			atomic_store_explicit(&l->ctl_writer, t->id + 1, memory_order_relaxed);
	}
	ks__leave();
	ks__tsan_acquire(&l->ctl_writer);
	ks__tsan_acquire(&l->ctl_readers);
}

void ks_ctl_rwlock_unlock(ks_rwlock_t *l, const char *site)
{
	struct ks_lthread *t = ks__enter_self();
	bool writer = atomic_load_explicit(&l->ctl_writer, memory_order_relaxed) == t->id + 1;

	ks__leave();
	ks__tsan_release(writer ? (void *)&l->ctl_writer : (void *)&l->ctl_readers);
	ks__enter();
	if (!ks__failed()) {
		if (writer)
			atomic_store_explicit(&l->ctl_writer, 0, memory_order_relaxed);
		else if (atomic_load_explicit(&l->ctl_readers, memory_order_relaxed) > 0)
			atomic_fetch_sub_explicit(&l->ctl_readers, 1, memory_order_relaxed);
		else
			ks__misuse("unlock of a rwlock nobody holds", site);
		ks__wake_all(KS_W_RWLOCK, l);
		t->releasing = true;
		ks__point(t, site);
	}
	ks__leave();
}

/* The mutex given up, a wait on c, the mutex taken again; true when a
 * signal ended the wait.  Only a signal makes t runnable again (timed: or
 * the deadline ns of virtual time from now; ns 0, one scheduling point):
 * no spurious wakeups, and a signal sent before this point is lost, as
 * with the real thing. */
static bool cond_wait_for(ks_cond_t *c, ks_mutex_t *m, bool timed, uint64_t ns, const char *site)
{
	struct ks_lthread *t;
	bool signalled = false;

	ks__tsan_release(m);
	t = ks__enter_self();
	if (ks__failed()) {
		ks__failed_point();
	} else {
		mutex_release(t, m, site);
		if (!timed) {
			ks__block(t, KS_W_COND, c, site);
			signalled = true;
		} else if (ns > 0) {
			signalled = !ks__block_until(t, KS_W_COND, c, ks_ctl_now_ns() + ns, site);
		} else {
			ks__point(t, site);
		}
		mutex_acquire(t, m, site);
	}
	ks__leave();
	ks__tsan_acquire(m);
	return signalled;
}

void ks_ctl_cond_wait(ks_cond_t *c, ks_mutex_t *m, const char *site)
{
	(void)cond_wait_for(c, m, false, 0, site);
}

bool ks_ctl_cond_timedwait(ks_cond_t *c, ks_mutex_t *m, uint64_t ns, const char *site)
{
	return cond_wait_for(c, m, true, ns, site);
}

void ks_ctl_cond_signal(ks_cond_t *c, bool broadcast, const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	if (!ks__failed()) {
		if (broadcast)
			ks__wake_all(KS_W_COND, c);
		else
			ks__wake_first(KS_W_COND, c);
		atomic_fetch_add_explicit(&c->ctl_seq, 1, memory_order_relaxed);
		ks__point(t, site);
	}
	ks__leave();
}

static long sem_count(ks_sem_t *s)
{
	return atomic_load_explicit(&s->ctl_count, memory_order_relaxed);
}

void ks_ctl_sem_wait(ks_sem_t *s, const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	if (point_first(t, site)) {
		while (!ks__failed() && sem_count(s) == 0)
			ks__block(t, KS_W_SEM, s, site);
		if (!ks__failed())
			atomic_fetch_sub_explicit(&s->ctl_count, 1, memory_order_relaxed);
	}
	ks__leave();
	ks__tsan_acquire(s);
}

/* As mutex_take, for a unit of the semaphore. */
static bool sem_take(ks_sem_t *s, uint64_t ns, const char *site)
{
	struct ks_lthread *t = ks__enter_self();
	bool ok = true;

	if (point_first(t, site)) {
		uint64_t deadline = ks_ctl_now_ns() + ns;

		while (ns > 0 && !ks__failed() && sem_count(s) == 0)
			if (ks__block_until(t, KS_W_SEM, s, deadline, site))
				break;
		ok = !ks__failed() && sem_count(s) > 0;
		if (ok)
			atomic_fetch_sub_explicit(&s->ctl_count, 1, memory_order_relaxed);
	}
	ks__leave();
	if (ok)
		ks__tsan_acquire(s);
	return ok;
}

bool ks_ctl_sem_trywait(ks_sem_t *s, const char *site)
{
	return sem_take(s, 0, site);
}

bool ks_ctl_sem_timedwait(ks_sem_t *s, uint64_t ns, const char *site)
{
	return sem_take(s, ns, site);
}

void ks_ctl_sem_post(ks_sem_t *s, const char *site)
{
	struct ks_lthread *t;

	ks__tsan_release(s);
	t = ks__enter_self();
	if (!ks__failed()) {
		atomic_fetch_add_explicit(&s->ctl_count, 1, memory_order_relaxed);
		ks__wake_all(KS_W_SEM, s);
		t->releasing = true;
		ks__point(t, site);
	}
	ks__leave();
}

void ks_ctl_point(const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	point_first(t, site);
	ks__leave();
}

void ks_ctl_release_point(const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	t->releasing = true;
	point_first(t, site);
	ks__leave();
}

/* An atomic section (SV-COMP's __VERIFIER_atomic_*, through kpt): a
 * scheduling point before it, none inside while the thread can run (its
 * memory access points and its own points continue it), one after it.  It
 * is not a lock: a thread that blocks inside lets the others run.  For
 * TSan the sections are ordered as if by one lock. */
static char atomic_sync;

void ks_ctl_atomic_begin(const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	if (point_first(t, site))
		t->atomic_depth++;
	ks__leave();
	ks__tsan_acquire(&atomic_sync);
}

void ks_ctl_atomic_end(const char *site)
{
	struct ks_lthread *t;

	ks__tsan_release(&atomic_sync);
	t = ks__enter_self();
	if (ks__failed()) {
		ks__failed_point();
	} else {
		if (t->atomic_depth == 0)
			ks__misuse("the end of an atomic section that did not begin", site);
		else
			t->atomic_depth--;
		if (t->atomic_depth == 0) {
			t->releasing = true;
			ks__point(t, site);
		}
	}
	ks__leave();
}

/* A sleeper is not runnable while anyone else is; when nobody else can
 * run, virtual time jumps to the earliest wake (ctl.c).  That is what keeps
 * a drain that polls with usleep from starving the thread it waits for. */
void ks_ctl_usleep(uint64_t us, const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	if (ks__failed()) {
		ks__failed_point();
	} else {
		ks__strat_lower(t);
		if (us > 0) {
			t->wake_ns = ks_ctl_now_ns() + us * 1000u;
			set_tstate(t, KS_T_SLEEPING);
		}
		ks__point(t, site);
	}
	ks__leave();
}

void ks_ctl_yield(const char *site)
{
	struct ks_lthread *t = ks__enter_self();

	if (ks__failed()) {
		ks__failed_point();
	} else {
		ks__strat_lower(t);
		t->yielding = true;
		ks__point(t, site);
		t->yielding = false;
	}
	ks__leave();
}
