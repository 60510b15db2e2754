/*
 * kpt.c - the shim behind kpt.h: a pthreads program's calls forwarded to
 * the real pthread functions outside a controlled run, and to the
 * controlled backend of lib/sched inside one (docs/pthread.md).
 *
 * Objects.  The scheduler keeps a lock's state in the ctl_* fields of a
 * ks_mutex_t / ks_rwlock_t / ks_cond_t; a pthread_mutex_t has no room for
 * them, so each pthread object gets one from a side table keyed by its
 * address and kind, created on first use (a PTHREAD_*_INITIALIZER object
 * needs no init call) and reset by init and destroy.  The table belongs to
 * one run: kpt_fuzz_run starts a new generation, which empties it without a
 * memset.  No lock: exactly one logical thread runs at a time, and outside
 * a run the table is not used.
 *
 * Threads.  pthread_create is ks_ctl_thread_create through a trampoline
 * whose first act is a release point ("thread start"): memory access points
 * count from a thread's releases, and without it a thread that makes no
 * synchronization call would have none to count from.  The pthread_t handed
 * back is the index + 1 of the thread in this run's table (main has its own
 * value); pthread_join maps it back.  Deadlocks and hangs are the
 * scheduler's to report (KSCHED DEADLOCK, KSCHED HANG: abort).
 *
 * The calls themselves are in kpt_locks.c, kpt_threads.c and kpt_sync.c
 * (kpt_int.h); this file keeps the object table and the run.  The raw
 * pthread calls there are the forwarding itself (ci/layering-allow.txt).
 */
#include "kpt_int.h"

#define KPT_OBJ_BITS 12
#define KPT_MAX_OBJS (1u << KPT_OBJ_BITS)
static struct kpt_obj kpt_objs[KPT_MAX_OBJS];
static uint32_t kpt_gen;

/* The object's scheduler state, made on first use; fresh: reset it (init,
 * destroy).  Open addressing with no deletion within a run, so a probe
 * ends at the first slot of an older generation. */
static struct kpt_obj *obj_find(const void *addr, enum kpt_kind kind, bool fresh, const char *site)
{
	uint64_t h = ((uint64_t)(uintptr_t)addr ^ kind) * 0x9E3779B97F4A7C15ull;

	for (uint32_t i = 0; i < KPT_MAX_OBJS; i++) {
		struct kpt_obj *o =
		    &kpt_objs[((h >> (64 - KPT_OBJ_BITS)) + i) & (KPT_MAX_OBJS - 1)];

		if (o->gen != kpt_gen) {
			o->gen = kpt_gen;
			o->addr = addr;
			o->kind = kind;
			memset(&o->u, 0, sizeof(o->u));
			return o;
		}
		if (o->addr == addr && o->kind == kind) {
			if (fresh)
				memset(&o->u, 0, sizeof(o->u));
			return o;
		}
	}
	fprintf(stderr,
	        "KPT LIMIT: more than %u pthread objects in one run, at %s "
	        "(raise KPT_OBJ_BITS in fuzz/pthread/kpt.c)\n",
	        KPT_MAX_OBJS, site);
	abort();
}

struct kpt_obj *kpt_obj(const void *addr, enum kpt_kind kind, bool fresh, const char *site)
{
	struct kpt_obj *o;

	quiet_begin();
	o = obj_find(addr, kind, fresh, site);
	quiet_end();
	return o;
}

void kpt_unsupported(const char *what, const char *site)
{
	if (!ks_controlled())
		return;
	fprintf(stderr,
	        "KPT UNSUPPORTED: %s at %s is not modelled under the controlled scheduler "
	        "(docs/pthread.md)\n",
	        what, site);
	abort();
}
/* ---- one input, one controlled run -------------------------------------- */

/*
 * The input: byte 0's low 2 bits are the number n of memory access points
 * (0..3), then 3 bytes each: the logical thread (bits 0-2: 0 is main, the
 * program's threads 1.. in creation order, a joined thread's id going to
 * the next one created), its release (bits 0-4: 0 is
 * the thread's start, then every unlock, atomic store or subtraction) and
 * k (bits 0-3, plus 1: the k-th heap or global access after that release
 * is the point).  The rest are the decision bytes (KS_STRAT_BYTES: each
 * decision takes ceil(log2(candidates)) bits; when they run out, no
 * preemption).  Every input is valid and means one schedule.
 */
static void kpt_decode(const uint8_t *data, size_t size, ks_ctl_config_t *cfg)
{
	size_t p = 1;
	uint32_t n;

	ks_ctl_config_init(cfg);
	cfg->strategy = KS_STRAT_BYTES;
	if (size == 0)
		return;
	n = data[0] & 3u;
	for (cfg->ap_n = 0; cfg->ap_n < n && p + 3 <= size; cfg->ap_n++, p += 3) {
		cfg->ap[cfg->ap_n].thread = data[p] & 7u;
		cfg->ap[cfg->ap_n].point = data[p + 1] & 31u;
		cfg->ap[cfg->ap_n].k = (data[p + 2] & 15u) + 1;
	}
	cfg->bytes = data + p;
	cfg->nbytes = size - p;
}

struct kpt_run {
	void (*body)(void);
};

static void kpt_run_body(void *arg)
{
	((struct kpt_run *)arg)->body();
}

/* ---- the input's own bytes, infeasible paths ----------------------------- */

static const uint8_t *kpt_in;
static size_t kpt_in_left;
static bool kpt_path_infeasible;
static ks_sem_t kpt_never; /* a semaphore nobody posts */

uint8_t kpt_input_byte(void)
{
	if (!kpt_in_left)
		return 0;
	return kpt_in[--kpt_in_left];
}

void kpt_infeasible(const char *what)
{
	if (!ks_controlled()) {
		fprintf(stderr, "kpt: %s: assumption false outside a run\n", what);
		exit(0);
	}
	kpt_path_infeasible = true;
	for (;;)
		ks_ctl_sem_wait(&kpt_never, what);
}

/* A deadlock after an infeasible path is not the program's: the run is
 * dropped (every thread unwound), not reported. */
static void kpt_on_failure(void *ctx, ks_failure_t kind, const char *report)
{
	(void)ctx;
	if (kind == KS_DEADLOCK && kpt_path_infeasible)
		return;
	fputs(report, stderr);
	fflush(stderr);
	abort();
}

/* ---- the program's initial state, every run ----------------------------- */

/* The program's writable globals (kpt.h's #pragma clang section): weak, so
 * that a program without any links too (the bounds are then NULL). */
extern char __start_kpt_data[] __attribute__((weak));
extern char __stop_kpt_data[] __attribute__((weak));
extern char __start_kpt_bss[] __attribute__((weak));
extern char __stop_kpt_bss[] __attribute__((weak));

static char *kpt_snap; /* the data section as it was before the first run */

/* Plain word copies, not seen by the sanitizers: the sections hold ASan's
 * global redzones between the program's variables, and a checked copy
 * would report them. */
#define KPT_NOSAN __attribute__((no_sanitize("address", "memory", "thread", "undefined")))

KPT_NOSAN static void raw_copy(char *dst, const char *src, size_t n)
{
	volatile char *d = dst;

	for (size_t i = 0; i < n; i++)
		d[i] = src[i];
}

KPT_NOSAN static void raw_zero(char *dst, size_t n)
{
	volatile char *d = dst;

	for (size_t i = 0; i < n; i++)
		d[i] = 0;
}

#if defined(KMGR_ASAN)
#include <sanitizer/lsan_interface.h>

/* LLVM 17's (allocator_interface.h); weak, for the clang-14 fallback
 * toolchain, whose runtime has none: then only a pointer to a block's
 * start is kept (LeakSanitizer ignores the call for any other). */
const void *__sanitizer_get_allocated_begin(const void *p) __attribute__((weak));

/* What a process exit would leave: the heap blocks the globals point to
 * are kept, as ignored by LeakSanitizer (and what they point to with
 * them), instead of becoming a leak when the globals are restored. */
KPT_NOSAN static void keep_heap(const char *lo, const char *hi)
{
	for (const char *p = lo; p + sizeof(void *) <= hi; p += sizeof(void *)) {
		const void *v = *(const void *const volatile *)p;
		const void *b;

		if (!v)
			continue;
		b = __sanitizer_get_allocated_begin ? __sanitizer_get_allocated_begin(v) : v;
		if (b)
			__lsan_ignore_object(b);
	}
}
#else
static void keep_heap(const char *lo, const char *hi)
{
	(void)lo;
	(void)hi;
}
#endif

void kpt_state_restore(void)
{
	size_t nd = (size_t)(__stop_kpt_data - __start_kpt_data);
	size_t nb = (size_t)(__stop_kpt_bss - __start_kpt_bss);

	if (!__start_kpt_data)
		nd = 0;
	if (!__start_kpt_bss)
		nb = 0;
	if (nd && !kpt_snap) {
		kpt_snap = malloc(nd);
		if (!kpt_snap) {
			fprintf(stderr,
			        "KPT LIMIT: no memory for the snapshot of %zu bytes of globals\n",
			        nd);
			abort();
		}
		raw_copy(kpt_snap, __start_kpt_data, nd);
		return; /* the first run starts from the state just saved */
	}
	if (nd) {
		keep_heap(__start_kpt_data, __stop_kpt_data);
		raw_copy(__start_kpt_data, kpt_snap, nd);
	}
	if (nb) {
		keep_heap(__start_kpt_bss, __stop_kpt_bss);
		raw_zero(__start_kpt_bss, nb);
	}
}

int kpt_fuzz_run(const uint8_t *data, size_t size, void (*body)(void))
{
	static int verbose = -1;
	struct kpt_run run = {body};
	ks_ctl_config_t cfg;
	ks_ctl_result_t res;

	if (verbose < 0) {
		const char *v = getenv("KPT_VERBOSE");

		verbose = v && *v && strcmp(v, "0") != 0;
	}
	kpt_decode(data, size, &cfg);
	cfg.on_failure = kpt_on_failure;
	ks_ctl_spin_detect(true); /* a spin on a plain flag: yield, then HANG */
	if (verbose) {
		fprintf(stderr, "kpt: access points:");
		for (uint32_t i = 0; i < cfg.ap_n; i++)
			fprintf(stderr, " t%u:%u+%u", cfg.ap[i].thread, cfg.ap[i].point,
			        cfg.ap[i].k);
		fprintf(stderr, "%s; decision bytes: %zu\n", cfg.ap_n ? "" : " none", cfg.nbytes);
	}
	/* a new generation empties the object table */
	quiet_begin();
	if (++kpt_gen == 0) {
		memset(kpt_objs, 0, sizeof(kpt_objs));
		kpt_gen = 1;
	}
	kpt_nthr = 0;
	kpt_in = data;
	kpt_in_left = size;
	kpt_path_infeasible = false;
	memset(&kpt_never, 0, sizeof(kpt_never));
	kpt_state_restore();
	quiet_end();
	if (ks_ctl_run(&cfg, kpt_run_body, &run, &res) != 0) {
		fprintf(stderr, "KPT MISUSE: kpt_fuzz_run inside a controlled run\n");
		abort();
	}
	if (verbose) {
		char trace[256];

		ks_ctl_trace_format(res.trace, res.ntrace, trace, sizeof(trace));
		fprintf(stderr, "kpt: %llu steps, %u threads, trace %s\n",
		        (unsigned long long)res.steps, res.threads, trace);
	}
	return 0;
}

/* ---- main as the scenario ------------------------------------------------ */

/* The program's main, renamed by kpt.h (KPT_FUZZ_MAIN).  Declared with
 * argc/argv; a main(void) takes the same call (the arguments are ignored,
 * as the C ABI allows). */
extern int KPT_FUZZ_MAIN(int argc, char **argv) __attribute__((weak));

static void kpt_main_body(void)
{
	static char name[] = "kpt_program";
	char *argv[] = {name, NULL};
	int rc = 0;

	kpt_main_exit_armed = true;
	if (!setjmp(kpt_main_exit_jb))
		rc = KPT_FUZZ_MAIN(1, argv);
	kpt_main_exit_armed = false;
	if (rc != 0) {
		fprintf(stderr, "KPT EXIT: main returned %d\n", rc);
		abort();
	}
}

/* Weak: a program that ends with KPT_FUZZ_BODY(fn) brings its own. */
__attribute__((weak)) int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!KPT_FUZZ_MAIN) {
		fprintf(stderr,
		        "KPT MISUSE: the program has neither a main nor KPT_FUZZ_BODY(fn)\n");
		abort();
	}
	return kpt_fuzz_run(data, size, kpt_main_body);
}
