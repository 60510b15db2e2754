/*
 * kpt_threads.c - pthread_create/join/detach/exit/self, sched_yield and the sleeps
 * (virtual time) of a kpt program under the controlled scheduler.
 */
#include "kpt_int.h"

/* ---- threads ------------------------------------------------------------ */

static struct kpt_thread kpt_thr[KPT_MAX_THREADS];
unsigned kpt_nthr; /* threads created in this run */

static void *kpt_trampoline(void *p)
{
	struct kpt_thread *t = p;

	ks_ctl_thread_tag_set(t);
	/* release 0 of every thread: access points can count from its start */
	ks_ctl_release_point("thread start");
	if (setjmp(t->exit_jb))
		return t->exit_ret;
	return t->fn(t->arg);
}

/* main's pthread_exit: back to kpt_main_body, which then returns as main
 * would have, and the run's end waits for the other threads (POSIX: the
 * process lives on until the last thread ends). */
jmp_buf kpt_main_exit_jb;
bool kpt_main_exit_armed;

void kpt_exit(void *ret, const char *site)
{
	struct kpt_thread *t;

	(void)site;
	if (!ks_controlled())
		pthread_exit(ret);
	t = (struct kpt_thread *)ks_ctl_thread_tag();
	if (t) {
		t->exit_ret = ret;
		longjmp(t->exit_jb, 1);
	}
	if (kpt_main_exit_armed)
		longjmp(kpt_main_exit_jb, 1);
	fprintf(stderr,
	        "KPT LIMIT: pthread_exit in main at %s outside a program's main "
	        "(a KPT_FUZZ_BODY scenario must return)\n",
	        site);
	abort();
}

int kpt_create(pthread_t *pt, const pthread_attr_t *a, void *(*fn)(void *), void *arg,
               const char *site)
{
	struct kpt_thread *t;
	char name[32];
	int rc;

	if (!ks_controlled())
		return pthread_create(pt, a, fn, arg);
	quiet_begin();
	if (kpt_nthr >= KPT_MAX_THREADS) {
		quiet_end();
		fprintf(stderr,
		        "KPT LIMIT: more than %d threads created in one run, at %s "
		        "(raise KPT_MAX_THREADS in fuzz/pthread/kpt.c)\n",
		        KPT_MAX_THREADS, site);
		abort();
	}
	/* Taken, and *pt set (as glibc does, unseen by TSan), before the new
	 * thread can run: it may create threads or read its handle at once
	 * (the creation's scheduling point comes after both). */
	t = &kpt_thr[kpt_nthr++];
	memset(t, 0, sizeof(*t));
	t->fn = fn;
	t->arg = arg;
	*pt = (pthread_t)kpt_nthr;
	snprintf(name, sizeof(name), "pthread %u", kpt_nthr);
	quiet_end();
	rc = ks_ctl_thread_create(&t->kt, name, kpt_trampoline, t, site);
	if (rc == EAGAIN) {
		fprintf(stderr,
		        "KPT LIMIT: more than %d live threads at %s "
		        "(raise KS_CTL_MAX_THREADS in lib/sched/kctl.h)\n",
		        KS_CTL_MAX_THREADS, site);
		abort();
	}
	if (rc != 0) {
		quiet_begin();
		kpt_nthr--; /* failed before any scheduling point: still the last one */
		quiet_end();
	}
	return rc;
}

/* The thread of handle h, if it can still be joined or detached: 0, or
 * ESRCH (no such thread) or EINVAL (joined or detached already). */
static int kpt_handle(pthread_t h, struct kpt_thread **tp)
{
	uintptr_t i = (uintptr_t)h;
	int rc = 0;

	quiet_begin();
	if (i < 1 || i > kpt_nthr)
		rc = ESRCH;
	else if (kpt_thr[i - 1].joined || kpt_thr[i - 1].detached)
		rc = EINVAL;
	else
		*tp = &kpt_thr[i - 1];
	quiet_end();
	return rc;
}

int kpt_join(pthread_t h, void **ret, const char *site)
{
	struct kpt_thread *t = NULL;
	int rc;

	if (!ks_controlled())
		return pthread_join(h, ret);
	if (pthread_equal(h, kpt_self()))
		return EDEADLK; /* glibc's answer to a self-join */
	rc = kpt_handle(h, &t);
	if (rc == 0)
		rc = ks_ctl_thread_join(&t->kt, ret, site);
	if (rc == 0) {
		quiet_begin();
		t->joined = true;
		quiet_end();
	}
	return rc;
}

/* A detached thread is still waited for at the end of the run (ks_ctl_end). */
int kpt_detach(pthread_t h, const char *site)
{
	struct kpt_thread *t = NULL;
	int rc;

	(void)site;
	if (!ks_controlled())
		return pthread_detach(h);
	rc = kpt_handle(h, &t);
	if (rc == 0) {
		quiet_begin();
		t->detached = true;
		quiet_end();
	}
	return rc;
}

pthread_t kpt_self(void)
{
	const struct kpt_thread *t;

	if (!ks_controlled())
		return pthread_self();
	t = ks_ctl_thread_tag();
	return t ? (pthread_t)(t - kpt_thr + 1) : KPT_MAIN_HANDLE;
}

/* ---- yield, sleep, atomics ---------------------------------------------- */

int kpt_sched_yield(const char *site)
{
	if (!ks_controlled())
		return sched_yield();
	ks_ctl_yield(site);
	return 0;
}

int kpt_usleep(useconds_t us, const char *site)
{
	if (!ks_controlled())
		return usleep(us);
	ks_ctl_usleep(us, site);
	return 0;
}

unsigned kpt_sleep(unsigned s, const char *site)
{
	if (!ks_controlled())
		return sleep(s);
	ks_ctl_usleep((uint64_t)s * 1000000u, site);
	return 0;
}

int kpt_nanosleep(const struct timespec *t, struct timespec *rem, const char *site)
{
	if (!ks_controlled())
		return nanosleep(t, rem);
	ks_ctl_usleep(t ? (uint64_t)t->tv_sec * 1000000u + (uint64_t)t->tv_nsec / 1000u : 0, site);
	return 0;
}
