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

/* ---- the program's clock ------------------------------------------------ */

/* Inside a run the program reads the wall and monotonic clocks as virtual
 * time from a fixed start (2026-01-01T00:00:00Z), the same every run:
 * a deadline it computes (now + 5 s) is then 5 s of virtual time away,
 * whatever the real clock did, and a replay computes the same one.  The
 * process and thread CPU clocks stay real. */
#define KPT_EPOCH_S 1767225600ull

static bool virtual_clock(clockid_t id)
{
	switch (id) {
	case CLOCK_REALTIME:
	case CLOCK_MONOTONIC:
#ifdef CLOCK_MONOTONIC_RAW
	case CLOCK_MONOTONIC_RAW:
#endif
#ifdef CLOCK_REALTIME_COARSE
	case CLOCK_REALTIME_COARSE:
#endif
#ifdef CLOCK_MONOTONIC_COARSE
	case CLOCK_MONOTONIC_COARSE:
#endif
#ifdef CLOCK_BOOTTIME
	case CLOCK_BOOTTIME:
#endif
#ifdef CLOCK_TAI
	case CLOCK_TAI:
#endif
		return true;
	default:
		return false;
	}
}

/* Each read of the clock moves it 1 us: a loop that polls it for a time
 * to pass (with sched_yield, never sleeping) ends, as it did on the real
 * clock, where virtual time alone would never move under it. */
#define KPT_CLOCK_TICK_NS 1000u

static void virtual_now(struct timespec *ts)
{
	uint64_t ns = ks_ctl_clock_read(KPT_CLOCK_TICK_NS);

	ts->tv_sec = (time_t)(KPT_EPOCH_S + ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
}

int kpt_clock_gettime(clockid_t id, struct timespec *ts, const char *site)
{
	(void)site;
	if (!ks_controlled() || !virtual_clock(id) || !ts)
		return clock_gettime(id, ts);
	virtual_now(ts);
	return 0;
}

int kpt_gettimeofday(struct timeval *tv, void *tz, const char *site)
{
	struct timespec ts;

	(void)site;
	if (!ks_controlled() || tz)
		return gettimeofday(tv, tz);
	if (tv) {
		virtual_now(&ts);
		tv->tv_sec = ts.tv_sec;
		tv->tv_usec = (suseconds_t)(ts.tv_nsec / 1000);
	}
	return 0;
}

time_t kpt_time(time_t *t, const char *site)
{
	struct timespec ts;

	(void)site;
	if (!ks_controlled())
		return time(t);
	virtual_now(&ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}

int kpt_timespec_get(struct timespec *ts, int base, const char *site)
{
	(void)site;
	if (!ks_controlled() || base != TIME_UTC || !ts)
		return timespec_get(ts, base);
	virtual_now(ts);
	return base;
}

int kpt_timeout_ns(const struct timespec *abstime, uint64_t *ns)
{
	/* the clock now, in ns since 1970 (kpt's own read: no tick) */
	uint64_t cur = KPT_EPOCH_S * 1000000000u + ks_ctl_now_ns(), at;

	*ns = 0;
	if (!abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000)
		return EINVAL;
	if (abstime->tv_sec < 0)
		return 0;
	/* seconds past ~584 years from now saturate: a wait without end */
	if ((uint64_t)abstime->tv_sec > cur / 1000000000u + (UINT64_MAX / 2000000000u)) {
		*ns = UINT64_MAX / 2;
		return 0;
	}
	at = (uint64_t)abstime->tv_sec * 1000000000u + (uint64_t)abstime->tv_nsec;
	*ns = at > cur ? at - cur : 0;
	return 0;
}

int kpt_nanosleep(const struct timespec *t, struct timespec *rem, const char *site)
{
	if (!ks_controlled())
		return nanosleep(t, rem);
	ks_ctl_usleep(t ? (uint64_t)t->tv_sec * 1000000u + (uint64_t)t->tv_nsec / 1000u : 0, site);
	return 0;
}
