/*
 * bench_sched.c - what the wrapper layer costs: every hot ks_* call of the
 * production backend against the same raw pthread / C11 call, in ns per
 * operation, single thread; and how many controlled runs of a trivial
 * 4-thread program fit in a second.
 *
 * Usage: bench_sched [trials [us-per-trial]]   (defaults 101 and 2000)
 * Run it from the release preset, pinned: taskset -c 0 bench_sched
 *
 * Method, chosen so that noise can neither pose as overhead nor hide it:
 *  - a trial times one loop of n calls on this thread's CPU clock; n is set
 *    once per operation so that a raw trial takes about us-per-trial;
 *  - raw and ks trials are paired and interleaved, the order flipping every
 *    pair (AB BA AB ...), so drift and "the second one runs warmer" hit both
 *    sides alike;
 *  - each side is summarised by median, min and IQR, and the verdict is the
 *    median of the per-pair differences with a distribution-free 95%
 *    confidence interval (sign test), plus how many pairs had ks slower;
 *  - every loop is compiled the same way (no unrolling, noinline), because
 *    a raw loop unrolled 8x against a rolled wrapper loop measures the
 *    compiler, not the wrapper;
 *  - A/A control rows time two identical copies of a raw loop: their
 *    interval is what "zero" looks like for this method.
 * What the method cannot remove: where the linker puts a loop.  A cost of
 * a cycle or less per call comes and goes with layout (the same wrapper
 * measured 0 or 1 cycle per call in builds that differed only in code
 * placement), so read a row as "at most one cycle", not as an exact figure.
 */
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "ktest.h"
#include "sched/kctl.h"

#define MAX_TRIALS 1001

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Thread CPU time, so that time the machine's other processes take from us
 * is not charged to either side. */
static double now_s(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

static pthread_mutex_t raw_m = PTHREAD_MUTEX_INITIALIZER;
static ks_mutex_t ks_m = KS_MUTEX_INITIALIZER;
static pthread_rwlock_t raw_rw = PTHREAD_RWLOCK_INITIALIZER;
static ks_rwlock_t ks_rw = KS_RWLOCK_INITIALIZER;
static pthread_cond_t raw_c = PTHREAD_COND_INITIALIZER;
static ks_cond_t ks_c = KS_COND_INITIALIZER;
static _Atomic int64_t raw_a;
static ks_atomic_t ks_a;

/* The raw twin of ks_sem_t's production protocol: the same mutex, condition
 * and count, so the rows differ only by the wrapper. */
static struct {
	pthread_mutex_t m;
	pthread_cond_t c;
	unsigned count;
} raw_s = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
static ks_sem_t ks_s;

/* Loads must feed something the compiler cannot drop. */
static volatile int64_t sink;

/* One timed loop: seconds for n operations.  acc carries values between
 * iterations where an operation needs them (load, cas).  Formatting is off
 * because clang-format glues the _Pragma to the for line. */
/* clang-format off */
#define TIMED(fn, op)                                                                              \
	__attribute__((noinline)) static double fn(long n)                                         \
	{                                                                                          \
		int64_t acc = 0;                                                                   \
		double t0 = now_s();                                                               \
                                                                                                   \
		_Pragma("clang loop unroll(disable) vectorize(disable)")                           \
		for (long i = 0; i < n; i++) {                                                     \
			op;                                                                        \
		}                                                                                  \
		t0 = now_s() - t0;                                                                 \
		sink = acc;                                                                        \
		return t0;                                                                         \
	}
/* clang-format on */

static inline void raw_sem_post(void)
{
	pthread_mutex_lock(&raw_s.m);
	raw_s.count++;
	pthread_cond_signal(&raw_s.c);
	pthread_mutex_unlock(&raw_s.m);
}

static inline void raw_sem_wait(void)
{
	pthread_mutex_lock(&raw_s.m);
	while (raw_s.count == 0)
		pthread_cond_wait(&raw_s.c, &raw_s.m);
	raw_s.count--;
	pthread_mutex_unlock(&raw_s.m);
}

/* A CAS that always succeeds: acc tracks the value, and a failure (the first
 * call of a trial) resynchronises it. */
static inline int64_t raw_cas(int64_t acc)
{
	return atomic_compare_exchange_strong(&raw_a, &acc, acc + 1) ? acc + 1 : acc;
}

static inline int64_t ks_cas(int64_t acc)
{
	return ks_atomic_cas(&ks_a, &acc, acc + 1) ? acc + 1 : acc;
}

TIMED(raw_mutex, pthread_mutex_lock(&raw_m); pthread_mutex_unlock(&raw_m))
TIMED(raw_mutex2, pthread_mutex_lock(&raw_m); pthread_mutex_unlock(&raw_m))
TIMED(ks_mutex, ks_mutex_lock(&ks_m); ks_mutex_unlock(&ks_m))
TIMED(raw_rd, pthread_rwlock_rdlock(&raw_rw); pthread_rwlock_unlock(&raw_rw))
TIMED(ks_rd, ks_rwlock_rdlock(&ks_rw); ks_rwlock_unlock(&ks_rw))
TIMED(raw_wr, pthread_rwlock_wrlock(&raw_rw); pthread_rwlock_unlock(&raw_rw))
TIMED(ks_wr, ks_rwlock_wrlock(&ks_rw); ks_rwlock_unlock(&ks_rw))
TIMED(raw_signal, pthread_cond_signal(&raw_c))
TIMED(ks_signal, ks_cond_signal(&ks_c))
TIMED(raw_sem, raw_sem_post(); raw_sem_wait())
TIMED(ks_sem, ks_sem_post(&ks_s); ks_sem_wait(&ks_s))
TIMED(raw_load, acc += atomic_load(&raw_a))
TIMED(raw_load2, acc += atomic_load(&raw_a))
TIMED(ks_load, acc += ks_atomic_load(&ks_a))
TIMED(raw_add, atomic_fetch_add(&raw_a, 1))
TIMED(ks_add, ks_atomic_add(&ks_a, 1))
TIMED(raw_cas_loop, acc = raw_cas(acc))
TIMED(ks_cas_loop, acc = ks_cas(acc))

struct row {
	const char *name;
	double (*a)(long);
	double (*b)(long);
};

static const struct row rows[] = {
    {"mutex lock+unlock", raw_mutex, ks_mutex},
    {"rwlock rdlock+unlock", raw_rd, ks_rd},
    {"rwlock wrlock+unlock", raw_wr, ks_wr},
    {"cond signal, no waiter", raw_signal, ks_signal},
    {"sem post+wait, uncontended", raw_sem, ks_sem},
    {"atomic load (seq_cst)", raw_load, ks_load},
    {"atomic add (seq_cst)", raw_add, ks_add},
    {"atomic cas (seq_cst)", raw_cas_loop, ks_cas_loop},
    {"A/A control: mutex, raw vs raw copy", raw_mutex, raw_mutex2},
    {"A/A control: atomic load, raw vs raw copy", raw_load, raw_load2},
};

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* Quantile q of sorted v[0..n-1], linear between neighbours. */
static double quantile(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int lo = (int)pos;

	if (lo >= n - 1)
		return v[n - 1];
	return v[lo] + (pos - lo) * (v[lo + 1] - v[lo]);
}

/* Sign-test confidence interval for a median: the largest k with
 * P(Binomial(n, 1/2) < k) <= 2.5%; the interval is [v(k), v(n+1-k)]
 * (1-based order statistics), coverage at least 95%. */
static int sign_ci_rank(int n)
{
	double pmf = 1, cdf = 0;
	int k = 0;

	for (int j = 0; j < n; j++)
		pmf *= 0.5;
	for (int j = 0; j <= n / 2; j++) {
		cdf += pmf; /* P(B <= j) */
		if (cdf > 0.025)
			break;
		k = j + 1;
		pmf = pmf * (n - j) / (j + 1);
	}
	return k;
}

struct summary {
	double med, min, q1, q3;
};

static struct summary summarise(double *v, int n)
{
	struct summary s;

	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	s.med = quantile(v, n, 0.5);
	s.min = v[0];
	s.q1 = quantile(v, n, 0.25);
	s.q3 = quantile(v, n, 0.75);
	return s;
}

/* Operations per trial so that one trial of fn lasts about target_s. */
static long calibrate(double (*fn)(long), double target_s)
{
	long n = 1000;
	double t;

	while ((t = fn(n)) < 0.01 * target_s && n < (1L << 40))
		n *= 4;
	n = (long)((double)n * target_s / (t > 0 ? t : 1e-9));
	return n > 0 ? n : 1;
}

static void bench_row(const struct row *r, int trials, double target_s)
{
	static double a[MAX_TRIALS], b[MAX_TRIALS], d[MAX_TRIALS];
	long n = calibrate(r->a, target_s);
	struct summary sa, sb, sd;
	int slower = 0, k = sign_ci_rank(trials); /* >= 1: main asks for 6+ trials */

	r->a(n); /* warm-up pair, not counted */
	r->b(n);
	for (int t = 0; t < trials; t++) {
		if (t % 2 == 0) {
			a[t] = r->a(n);
			b[t] = r->b(n);
		} else {
			b[t] = r->b(n);
			a[t] = r->a(n);
		}
		a[t] *= 1e9 / (double)n;
		b[t] *= 1e9 / (double)n;
		d[t] = b[t] - a[t];
		slower += d[t] > 0;
	}
	sa = summarise(a, trials);
	sb = summarise(b, trials);
	sd = summarise(d, trials);
	printf("| %s | %.2f (%.2f, %.2f) | %.2f (%.2f, %.2f) | %+.3f [%+.3f, %+.3f] | %+.1f%% | "
	       "%d/%d |\n",
	       r->name, sa.med, sa.min, sa.q3 - sa.q1, sb.med, sb.min, sb.q3 - sb.q1, sd.med,
	       d[k - 1], d[trials - k], sd.med / sa.med * 100, slower, trials);
}

static void *worker(void *arg)
{
	(void)arg;
	ks_mutex_lock(&ks_m);
	ks_atomic_add(&ks_a, 1);
	ks_mutex_unlock(&ks_m);
	return NULL;
}

static void four_threads(void *arg)
{
	ks_thread_t t[3];

	(void)arg;
	for (int i = 0; i < 3; i++)
		ks_thread_create(&t[i], "w", worker, NULL);
	worker(NULL);
	for (int i = 0; i < 3; i++)
		ks_thread_join(&t[i], NULL);
}

static void controlled_runs(void)
{
	uint8_t bytes[8] = {0x5a, 0xc3, 0x17, 0x88, 0x21, 0xfe, 0x03, 0x9b};
	double t0 = clock_s(CLOCK_MONOTONIC), el;
	long runs = 0;
	uint64_t steps = 0;

	do {
		ks_ctl_config_t cfg;
		ks_ctl_result_t r;

		ks_ctl_config_init(&cfg);
		cfg.bytes = bytes;
		cfg.nbytes = sizeof(bytes);
		bytes[0] = (uint8_t)runs;
		ks_ctl_run(&cfg, four_threads, NULL, &r);
		steps += r.steps;
		runs++;
	} while ((el = clock_s(CLOCK_MONOTONIC) - t0) < 2.0);
	printf("controlled 4-thread run: %.0f runs/s, %.1f steps/run, %.2f us/step\n",
	       (double)runs / el, (double)steps / (double)runs, el * 1e6 / (double)steps);
}

/* The conditions go into the output, so that a table pasted from it says
 * how busy the machine was and whether the run was pinned. */
static void print_conditions(int trials, long us)
{
	cpu_set_t set;
	double load = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &load) != 1)
			load = -1;
		fclose(f);
	}
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	printf("%d interleaved pairs a row, ~%ld us a trial, %d CPU(s) allowed%s, load %.2f\n",
	       trials, us, CPU_COUNT(&set),
	       CPU_COUNT(&set) > 1 ? " (not pinned: use taskset -c 0)" : "", load);
	printf("ns/op: median (min, IQR); ks - raw: median of paired differences "
	       "[95%% sign-test CI]\n\n");
}

int main(int argc, char **argv)
{
	int trials = argc > 1 ? atoi(argv[1]) : 101;
	long us = argc > 2 ? atol(argv[2]) : 2000;

	if (trials < 6 || trials > MAX_TRIALS || us <= 0) {
		fprintf(stderr, "usage: %s [trials 6..%d [us-per-trial > 0]]\n", argv[0],
		        MAX_TRIALS);
		return 2;
	}
	if (ks_sem_init(&ks_s, 0) != 0) {
		fprintf(stderr, "ks_sem_init failed\n");
		return 1;
	}
	print_conditions(trials, us);
	printf("| operation | raw | ks_* wrapper | ks - raw | %% of raw | pairs ks slower |\n");
	printf("|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		bench_row(&rows[i], trials, (double)us * 1e-6);
	printf("\n");
#if defined(KSCHED_PRODUCTION_ONLY)
	printf("wrappers as the installed library compiles them (KSCHED_PRODUCTION_ONLY)\n");
	(void)controlled_runs; /* its program needs the switchable wrappers */
#else
	controlled_runs();
#endif
	ks_sem_destroy(&ks_s);
	return 0;
}
