/*
 * ctl_thread.c - a logical thread's life: its start (a pthread's trampoline
 * or a fiber's entry loop), its body and exit, and ks_thread_create /
 * ks_thread_join under the controlled backend, with the modelled
 * create -> start and finish -> join edges for TSan.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include "ctl_int.h"

/* A logical thread's life once it first holds the baton: run, wake the
 * joiner, choose who runs next.  Returns inside ks__enter; the threads
 * engine has passed the baton on by then, the fiber engine does it next. */
static void lthread_body(struct ks_lthread *t)
{
	void *volatile ret = NULL; /* volatile: live across the setjmp */

	if (!ks__failed() && setjmp(t->jb) == 0)
		ret = t->fn(t->arg);
	ks__tsan_release(t->hb);
	ks__enter();
	/* Stored inside the ignore region, like every other field of the slot:
	 * a joined thread's slot is given to the next thread created, maybe by
	 * a thread that never synchronized with the joiner, and TSan would take
	 * the two logical threads' stores for a race (the scheduler orders them;
	 * its switches carry no edge, docs/scheduler.md). */
	t->ret = ret;
	t->has_jb = false;
	if (!ks__failed()) {
		set_tstate(t, KS_T_FINISHED);
		ks__wake_all(KS_W_JOIN, t);
		ks__point(t, "(thread exit)");
	}
	set_tstate(t, KS_T_FINISHED);
}

static void *trampoline(void *p)
{
	struct ks_lthread *t = p;

	ks__tl_self = t;
	ks__tsan_acquire(t->hb);
	ks__enter();
	ks__baton_wait(t);
	ks__leave();
	lthread_body(t);
	ks__leave();
	ks__tl_self = NULL;
	return NULL;
}

/* One logical thread after another: a parked fiber resumes here carrying
 * the next logical thread that got its id. */
static void fiber_entry(void)
{
	struct ks_lthread *t = ks__tl_self;

	ks__fiber_started(t->id);
	for (;;) {
		struct ks_lthread *next;

		ks__tsan_acquire(t->hb);
		lthread_body(t);
		next = ks__g.exit_to;
		ks__g.exit_to = NULL;
		if (!next || ks__failed())
			next = &ks__g.thr[0]; /* main is unwinding a failed run */
		ks__tl_self = next;
		ks__leave();
		ks__fiber_switch(t->id, next->id, KS_FIBER_PARK);
		t = ks__tl_self;
	}
}

/* Start t's real thread or make its fiber. */
static int lthread_start(struct ks_lthread *t)
{
	if (ks__g.fibers)
		return ks__fiber_make(t->id, t->name, fiber_entry);
	return pthread_create(&t->pt, NULL, trampoline, t);
}

/* A sync address per created thread (not per slot: a reused slot must not
 * hand its new thread the release of the one before).  Wraps only after
 * KS_HB_POOL creations in one run, far more than any program makes. */
#define KS_HB_POOL 4096
static char hb_pool[KS_HB_POOL];

/* The lowest id whose thread finished and was joined, else a new one: a
 * program that keeps creating and joining threads (the stage fan-out of
 * every load) never runs out of the KS_CTL_MAX_THREADS ids, and ids stay a
 * function of the schedule alone. */
static struct ks_lthread *free_slot(void)
{
	for (int i = 1; i < ks__g.nthreads; i++) {
		struct ks_lthread *t = &ks__g.thr[i];

		if (t->joined && tstate(t) == KS_T_FINISHED) {
			if (ks__g.fibers)
				ks__fiber_release(i);
			ks__ap_set(t, 0); /* the slot is cleared next: disarm it */
			return t;
		}
	}
	if (ks__g.nthreads >= KS_CTL_MAX_THREADS)
		return NULL;
	return &ks__g.thr[ks__g.nthreads++];
}

int ks_ctl_thread_create(ks_thread_t *kt, const char *name, void *(*fn)(void *), void *arg,
                         const char *site)
{
	struct ks_lthread *self = ks__enter_self();
	struct ks_lthread *t;
	int rc;

	t = free_slot();
	if (ks__failed() || !t) {
		ks__leave();
		return EAGAIN;
	}
	memset(t, 0, sizeof(*t));
	t->id = (int)(t - ks__g.thr);
	t->hb = &hb_pool[ks__g.created++ % KS_HB_POOL];
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "thread");
	set_tstate(t, KS_T_RUNNABLE);
	t->fn = fn;
	t->arg = arg;
	t->has_jb = true;
	ks__strat_new_thread(t);
	ks__leave();

	ks__tsan_release(t->hb);
	rc = lthread_start(t);

	ks__enter();
	if (rc != 0) {
		set_tstate(t, KS_T_FINISHED);
		ks__leave();
		return rc;
	}
	t->started = true;
	kt->ctl_id = t->id;
	kt->pt = t->pt;
	ks__point(self, site);
	ks__leave();
	return 0;
}

int ks_ctl_thread_join(ks_thread_t *kt, void **ret, const char *site)
{
	struct ks_lthread *self;
	struct ks_lthread *t;
	pthread_t pt;
	bool started;
	void *value;

	if (!ks_controlled()) /* ks_ctl_end joined it already */
		return 0;
	self = ks__enter_self();

	if (kt->ctl_id >= ks__g.nthreads || kt->ctl_id == self->id ||
	    !atomic_load(&ks__ctl_active.on) || ks__g.thr[kt->ctl_id].joined) {
		ks__leave();
		return EINVAL;
	}
	t = &ks__g.thr[kt->ctl_id];
	if (!ks__failed())
		ks__point(self, site);
	while (!ks__failed() && tstate(t) != KS_T_FINISHED)
		ks__block(self, KS_W_JOIN, t, site);
	t->joined = true;
	pt = t->pt;
	started = t->started;
	value = t->ret;
	ks__leave();
	if (started && !ks__g.fibers)
		pthread_join(pt, NULL);
	ks__tsan_acquire(t->hb);
	if (ret)
		*ret = value;
	return 0;
}
