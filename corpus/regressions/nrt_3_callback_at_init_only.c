/*
 * nrt_3_callback_at_init_only.c - regression test emitted by kmgr-repro (target api_nrt) from
 *   corpus/regressions/api_nrt/nrt-3-callback-at-init-only
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=async nc=2 qdepth=4 threads=2
 *   t1 load slot=1 tmpl=0 start=-1 count=-1
 *   t1 exec slot=1 in=dev out=dev repeat=2
 *   t0 nrt_callback cb=b
 */
/* ---- the harness and the oracle (fuzz/harness/embed.c) ---- */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"

/* ==== lib/base/kfault.h ==== */
/*
 * kfault.h - fault injection, off unless a plan is installed.
 *
 * Every host allocation in the device, the facade, the container parser and
 * the API layer, every device allocation, and the device's tensor set copy
 * (the DMA of host tensors to and from their device clones), is a numbered
 * fault site (SQLite's sqlite3FaultSim style: 100s emu, 200s kmgr, 300s
 * model, 400s nrt; a number is never reused).  A plan can fail the n-th hit
 * of one site or the n-th hit of any site (syzkaller's fail_nth), complete the
 * n-th execution with a given status, delay a completion by k steps, report
 * a queue full, or never complete an execution.
 *
 * Plans come from kfault_set_plan() or, for the command-line tools, from the
 * environment variable KMGR_FAULT (see kfault_plan_parse for the syntax).
 */
#ifndef KFAULT_H
#define KFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(name, number, "text name", description).  Add a site at the end of its
 * layer's block with the next free number; never renumber. */
#define KFAULT_SITES(X)                                                                            \
	X(EMU_DEV_TENSOR, 100, "emu.dev_tensor", "device memory for a tensor")                     \
	X(EMU_DEV_RING, 101, "emu.dev_ring", "device rings and request buffers at model add")      \
	X(EMU_DEV_CC, 102, "emu.dev_cc", "device collectives resources at first execution")        \
	X(EMU_HOST_TENSOR, 110, "emu.host_tensor", "host record of a tensor")                      \
	X(EMU_HOST_TENSOR_DATA, 111, "emu.host_tensor_data", "host memory of a HOST tensor")       \
	X(EMU_HOST_SET, 112, "emu.host_set", "a tensor set")                                       \
	X(EMU_HOST_SET_ENTRY, 113, "emu.host_set_entry", "growing a tensor set")                   \
	X(EMU_HOST_CLONE, 114, "emu.host_clone", "a shadow clone of a tensor set")                 \
	X(EMU_HOST_MODEL, 115, "emu.host_model", "a per-core model record (kbl_model_add)")        \
	X(EMU_HOST_VCORE, 116, "emu.host_vcore", "a virtual core")                                 \
	X(EMU_HOST_WORK, 117, "emu.host_work", "a work item of an execution unit")                 \
	X(EMU_HOST_BIND, 118, "emu.host_bind", "the IO binding of compute resources")              \
	X(EMU_HOST_ARENA, 119, "emu.host_arena", "the record of a core's device memory arena")     \
	X(EMU_HOST_POOL, 120, "emu.host_pool", "the implicit-async worker pool")                   \
	X(EMU_SET_COPY, 121, "emu.set_copy", "a tensor set copy (fails as a DMA abort)")           \
	X(KMGR_DLR_MODEL, 200, "kmgr.dlr_model", "the 480-byte dlr_model record")                  \
	X(KMGR_EXEC_RESOURCES, 201, "kmgr.exec_resources", "the 56-byte execution tracker")        \
	X(KMGR_TDRV_RESOURCES, 202, "kmgr.tdrv_resources", "tdrv compute resources (0x20)")        \
	X(KMGR_KELF_MODEL, 203, "kmgr.kelf_model", "the 72-byte dlr_kelf_model_t bridge")          \
	X(KMGR_IO_INFO, 204, "kmgr.io_info", "the input/output tensor maps")                       \
	X(KMGR_SHAPE, 205, "kmgr.shape", "the shape array of kmgr_get_io_tensor_info")             \
	X(KMGR_NNS, 206, "kmgr.nns", "the snapshot of kmgr_get_nns")                               \
	X(KMGR_STAGE, 207, "kmgr.stage", "the per-subgraph fan-out of dlr_kelf_stage")             \
	X(KMGR_REGISTRY, 208, "kmgr.registry", "growing the model registry")                       \
	X(KMGR_VTPB_SHARED, 209, "kmgr.vtpb_shared", "vtpb_info_shared_alloc")                     \
	X(MODEL_PARSE, 300, "model.parse", "the parsed model record")                              \
	X(MODEL_TENSORS, 301, "model.tensors", "the parsed tensor records")                        \
	X(MODEL_BUILD, 302, "model.build", "the builder's output buffer")                          \
	X(MODEL_NEW, 303, "model.new", "the builder's model record (kmodel_new)")                  \
	X(MODEL_NEW_TENSORS, 304, "model.new_tensors", "growing the builder's tensor array")       \
	X(NRT_MODEL, 400, "nrt.model", "an nrt_model_t")                                           \
	X(NRT_TENSOR_INFO, 401, "nrt.tensor_info", "the array of nrt_get_model_tensor_info")       \
	X(NRT_ERR_TRACKER, 402, "nrt.err_tracker", "an nrta error tracker")                        \
	X(NRT_EXEC_SLOT, 403, "nrt.exec_slot", "the completion slot of an nrta_execute_schedule")  \
	X(NRT_ERR_LIST, 404, "nrt.err_list", "growing the error list of an nrta error tracker")

typedef enum kfault_site {
	KFAULT_SITE_ANY = 0, /* in a plan: the n-th hit of whatever site */
#define KFAULT_ENUM(name, num, text, desc) KFAULT_##name = num,
	KFAULT_SITES(KFAULT_ENUM)
#undef KFAULT_ENUM
} kfault_site_t;

typedef struct kfault_site_info {
	kfault_site_t site;
	const char *name;
	const char *description;
} kfault_site_info_t;

/* The table of sites, in number order; *n gets its length. */
const kfault_site_info_t *kfault_sites(size_t *n);
/* Site by text name or number; KFAULT_SITE_ANY for "any"; -1 if unknown. */
int kfault_site_lookup(const char *name);
const char *kfault_site_name(kfault_site_t site);

typedef enum kfault_kind {
	KFAULT_FAIL_ALLOC = 1, /* fail the nth allocation at site (or any site) */
	KFAULT_EXEC_STATUS,    /* complete the nth execution with status arg */
	KFAULT_EXEC_DELAY,     /* delay the nth completion by arg scheduler steps */
	KFAULT_QUEUE_FULL,     /* answer the nth queue submission with NRT_QUEUE_FULL */
	KFAULT_EXEC_HANG,      /* the nth execution never completes (for watchdog tests) */
} kfault_kind_t;

typedef struct kfault_entry {
	kfault_kind_t kind;
	uint32_t site; /* KFAULT_FAIL_ALLOC only */
	uint32_t nth;  /* 1-based */
	uint32_t arg;  /* status for EXEC_STATUS, steps for EXEC_DELAY */
} kfault_entry_t;

/* The longest delay:K:N a plan may ask for, in polls of WAIT_CORE. */
#define KFAULT_DELAY_MAX 100000
#define KFAULT_PLAN_MAX  8
/* The longest plan text: eight of the longest entries (alloc:SITE:N with a
 * 20-character site name and ten digits, 38 with the comma) take 304;
 * longer text is refused, never cut, wherever a plan comes from. */
#define KFAULT_PLAN_TEXT_MAX 511
typedef struct kfault_plan {
	uint32_t n;
	kfault_entry_t e[KFAULT_PLAN_MAX];
} kfault_plan_t;

/* Install a plan (copied; counters restart) or clear it.  Call when no
 * library thread is running. */
void kfault_set_plan(const kfault_plan_t *plan);
void kfault_clear(void);
/* Install the plan in KMGR_FAULT if set; 0 on success or unset, -1 on a
 * syntax error (with a message on stderr). */
int kfault_plan_from_env(void);

/*
 * Text form, entries separated by ',':
 *   alloc:SITE:N        SITE a name from the table, a number, or "any"
 *   status:STATUS:N     STATUS one of 1003 1004 1202 5 1204
 *   delay:STEPS:N
 *   qfull:N
 *   hang:N
 * Returns 0, or -1 with a message in err (errlen bytes).
 */
int kfault_plan_parse(const char *text, kfault_plan_t *plan, char *err, size_t errlen);
/* Writes the text form; returns the length snprintf would. */
int kfault_plan_format(const kfault_plan_t *plan, char *buf, size_t len);

/* ---- hooks the library calls ---- */
/* Must the allocation about to happen at site fail? */
bool kfault_alloc_fails(kfault_site_t site);
/* The same for a site that is not an allocation (emu.set_copy): one set of
 * counters, so "alloc:SITE:N" and "alloc:any:N" reach it like any other. */
static inline bool kfault_site_fails(kfault_site_t site)
{
	return kfault_alloc_fails(site);
}
/* Called once per completing execution: the status to report instead of
 * success (0 for none) and the completion delay in steps. */
uint32_t kfault_exec_status(void);
uint32_t kfault_exec_delay(void);
bool kfault_exec_hangs(void);
bool kfault_queue_full(void);

/* How many faults fired since the plan was installed. */
uint64_t kfault_fired(void);

#endif /* KFAULT_H */

/* ==== lib/base/kalloc.h ==== */
/*
 * kalloc.h - the library's accounted host allocations.
 *
 * Every host allocation of lib/ goes through here with its fault site, so
 * that (1) a fault plan can fail it and (2) live host bytes and allocations
 * are counted: after nrt_close both are zero, which the oracle and the leak
 * tests check independently of LeakSanitizer.
 */
#ifndef KALLOC_H
#define KALLOC_H

#include <stddef.h>
#include <stdint.h>


/* Zeroed memory, or NULL when out of memory, on overflow, or when the
 * fault plan fails this site. */
void *kalloc(kfault_site_t site, size_t size);
void *kalloc_array(kfault_site_t site, size_t n, size_t size);
/* Grow or shrink; on failure the old block is untouched and NULL returned.
 * New bytes are zeroed. */
void *krealloc(kfault_site_t site, void *p, size_t size);
void kfree(void *p);
char *kstrdup(kfault_site_t site, const char *s);

int64_t kalloc_live_bytes(void);
int64_t kalloc_live_count(void);

#endif /* KALLOC_H */

/* ==== lib/base/kattr.h ==== */
/*
 * kattr.h - compiler attributes with a reason, spelled once.
 */
#ifndef KATTR_H
#define KATTR_H

/* A byte loop without coverage instrumentation.  Its only features under a
 * fuzzer would be data sizes, while a counter and a comparison callback per
 * byte cost more than the code around it.  noinline keeps the loop out of
 * instrumented callers, where it would be instrumented after all. */
#define KATTR_NO_COVERAGE __attribute__((noinline, no_sanitize("coverage")))

#endif /* KATTR_H */

/* ==== lib/base/klog.h ==== */
/*
 * klog.h - the library's log: levels error/warn/info/debug from
 * KMGR_LOG_LEVEL (default warn), written to stderr or to a sink a test
 * installs to capture what was said.
 */
#ifndef KLOG_H
#define KLOG_H

#include <stdarg.h>

typedef enum klog_level {
	KLOG_ERROR = 0,
	KLOG_WARN = 1,
	KLOG_INFO = 2,
	KLOG_DEBUG = 3,
} klog_level_t;

/* A sink receives each formatted line (no trailing newline). */
typedef void (*klog_sink_fn)(void *ctx, klog_level_t level, const char *line);

/* Asked, before a line is formatted, whether the sink wants it; the format
 * string is the line's wording.  A fuzzer that keeps a handful of lines out
 * of thousands should not pay for formatting the rest. */
typedef _Bool (*klog_filter_fn)(klog_level_t level, const char *fmt);

/* Reads KMGR_LOG_LEVEL again (error|warn|info|debug or 0..3). */
void klog_reload_env(void);
void klog_set_level(klog_level_t level);
klog_level_t klog_get_level(void);
/* NULL restores stderr. */
void klog_set_sink(klog_sink_fn fn, void *ctx);
/* NULL: every line at or above the level is formatted. */
void klog_set_filter(klog_filter_fn fn);

void klog_emit(klog_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define klog_error(...) klog_emit(KLOG_ERROR, __VA_ARGS__)
#define klog_warn(...)  klog_emit(KLOG_WARN, __VA_ARGS__)
#define klog_info(...)  klog_emit(KLOG_INFO, __VA_ARGS__)
#define klog_debug(...) klog_emit(KLOG_DEBUG, __VA_ARGS__)

#endif /* KLOG_H */

/* ==== lib/sched/ksched.h ==== */
/*
 * ksched.h - the one synchronization layer of kmgr-fuzz.
 *
 * Every mutex, reader-writer lock, condition variable, semaphore, atomic
 * operation on a shared counter, sleep, yield, clock read and thread in lib/
 * goes through this header; nothing else in lib/ includes <pthread.h> or
 * <stdatomic.h> for shared state.  That is what lets a test take control of
 * scheduling.
 *
 * Two backends, selected at run time:
 *   - production: straight pthread / C11 atomics, inlined below.  The only
 *     cost over a raw call is one relaxed load of ks__ctl_active and a
 *     predictable branch: at most a cycle a call (BENCHMARKS.md).
 *   - controlled (ctl.c and friends): exactly one logical thread runs at a
 *     time (fibers, or real pthreads passing a baton) and every wrapper call
 *     is a scheduling point.  Lock state is owned by the scheduler; see
 *     docs/scheduler.md.
 *
 * Every call site passes KS_SITE (file:line) through the macros at the
 * bottom so that traces, deadlock reports and hang reports name the site.
 *
 * Rule for mixing: the controlled backend only manages threads it knows
 * (the thread that called ks_ctl_begin and every thread created through
 * ks_thread_create while it is active).  Objects must not be held across
 * ks_ctl_begin / ks_ctl_end.
 */
#ifndef KSCHED_H
#define KSCHED_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KS_STR2(x) #x
#define KS_STR(x)  KS_STR2(x)
/* A scheduling site: a string literal, so it costs nothing to pass. */
#define KS_SITE        (__FILE__ ":" KS_STR(__LINE__))

#define KS_LIKELY(x)   __builtin_expect(!!(x), 1)
#define KS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* .on is nonzero while the controlled backend owns scheduling.  Only
 * written by ks_ctl_begin / ks_ctl_end, when no other logical thread
 * exists.  The flag has a 64-byte line to itself (ksched.c says why). */
struct ks_ctl_active {
	_Alignas(64) _Atomic int on;
};
extern struct ks_ctl_active ks__ctl_active;

#if defined(KSCHED_PRODUCTION_ONLY)
/* The installed library (lib/CMakeLists.txt): nothing in it can start a
 * controlled run (ks_ctl_begin refuses), so every wrapper below compiles to
 * the bare pthread / C11 call. */
static inline bool ks_controlled(void)
{
	return false;
}
#else
static inline bool ks_controlled(void)
{
	return KS_UNLIKELY(atomic_load_explicit(&ks__ctl_active.on, memory_order_relaxed));
}
#endif

/* ---- objects ------------------------------------------------------------
 * The ctl_* fields belong to the controlled backend.  They are atomics so
 * that TSan, which is not told about the baton handoff, does not report the
 * scheduler's own bookkeeping as a race. */

typedef struct ks_mutex {
	pthread_mutex_t pm;
	_Atomic int ctl_owner; /* logical thread id + 1, 0 when free */
} ks_mutex_t;

typedef struct ks_rwlock {
	pthread_rwlock_t prw;
	_Atomic int ctl_writer;  /* logical thread id + 1, 0 when none */
	_Atomic int ctl_readers; /* number of read holders */
} ks_rwlock_t;

typedef struct ks_cond {
	pthread_cond_t pc;
	_Atomic uint64_t ctl_seq; /* bumped by signal/broadcast */
} ks_cond_t;

typedef struct ks_sem {
	ks_mutex_t m;
	ks_cond_t c;
	unsigned count;         /* production backend, under m */
	_Atomic long ctl_count; /* controlled backend */
} ks_sem_t;

typedef struct ks_atomic {
	_Atomic int64_t v;
} ks_atomic_t;

typedef struct ks_thread {
	pthread_t pt;
	int ctl_id; /* logical thread id, -1 when created outside a controlled run */
} ks_thread_t;

#define KS_MUTEX_INITIALIZER                                                                       \
	{                                                                                          \
		PTHREAD_MUTEX_INITIALIZER, 0                                                       \
	}
#define KS_RWLOCK_INITIALIZER                                                                      \
	{                                                                                          \
		PTHREAD_RWLOCK_INITIALIZER, 0, 0                                                   \
	}
#define KS_COND_INITIALIZER                                                                        \
	{                                                                                          \
		PTHREAD_COND_INITIALIZER, 0                                                        \
	}
#define KS_ATOMIC_INIT(x)                                                                          \
	{                                                                                          \
		(x)                                                                                \
	}

/* ---- the controlled backend's entry points (ctl_*.c) -------------------- */
void ks_ctl_mutex_lock(ks_mutex_t *m, const char *site);
bool ks_ctl_mutex_trylock(ks_mutex_t *m, const char *site);
void ks_ctl_mutex_unlock(ks_mutex_t *m, const char *site);
void ks_ctl_rwlock_rdlock(ks_rwlock_t *l, const char *site);
void ks_ctl_rwlock_wrlock(ks_rwlock_t *l, const char *site);
void ks_ctl_rwlock_unlock(ks_rwlock_t *l, const char *site);
void ks_ctl_cond_wait(ks_cond_t *c, ks_mutex_t *m, const char *site);
void ks_ctl_cond_signal(ks_cond_t *c, bool broadcast, const char *site);
void ks_ctl_sem_wait(ks_sem_t *s, const char *site);
bool ks_ctl_sem_trywait(ks_sem_t *s, const char *site);
void ks_ctl_sem_post(ks_sem_t *s, const char *site);
/* A scheduling point before an atomic operation on a shared counter. */
void ks_ctl_point(const char *site);
/* The same before an atomic that gives something up (a subtraction, a
 * negative addition: a reference dropped); memory access points count
 * from these (ctl_access.c). */
void ks_ctl_release_point(const char *site);
void ks_ctl_usleep(uint64_t us, const char *site);
void ks_ctl_yield(const char *site);
uint64_t ks_ctl_now_ns(void);
int ks_ctl_thread_create(ks_thread_t *t, const char *name, void *(*fn)(void *), void *arg,
                         const char *site);
int ks_ctl_thread_join(ks_thread_t *t, void **ret, const char *site);

/* ---- production bodies ------------------------------------------------- */

int ks_mutex_init(ks_mutex_t *m);
void ks_mutex_destroy(ks_mutex_t *m);
int ks_rwlock_init(ks_rwlock_t *l);
void ks_rwlock_destroy(ks_rwlock_t *l);
int ks_cond_init(ks_cond_t *c);
void ks_cond_destroy(ks_cond_t *c);
int ks_sem_init(ks_sem_t *s, unsigned value);
void ks_sem_destroy(ks_sem_t *s);

static inline void ks_mutex_lock_at(ks_mutex_t *m, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_mutex_lock(m, site);
		return;
	}
	pthread_mutex_lock(&m->pm);
}

static inline bool ks_mutex_trylock_at(ks_mutex_t *m, const char *site)
{
	if (ks_controlled())
		return ks_ctl_mutex_trylock(m, site);
	return pthread_mutex_trylock(&m->pm) == 0;
}

static inline void ks_mutex_unlock_at(ks_mutex_t *m, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_mutex_unlock(m, site);
		return;
	}
	pthread_mutex_unlock(&m->pm);
}

static inline void ks_rwlock_rdlock_at(ks_rwlock_t *l, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_rwlock_rdlock(l, site);
		return;
	}
	pthread_rwlock_rdlock(&l->prw);
}

static inline void ks_rwlock_wrlock_at(ks_rwlock_t *l, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_rwlock_wrlock(l, site);
		return;
	}
	pthread_rwlock_wrlock(&l->prw);
}

static inline void ks_rwlock_unlock_at(ks_rwlock_t *l, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_rwlock_unlock(l, site);
		return;
	}
	pthread_rwlock_unlock(&l->prw);
}

static inline void ks_cond_wait_at(ks_cond_t *c, ks_mutex_t *m, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_cond_wait(c, m, site);
		return;
	}
	pthread_cond_wait(&c->pc, &m->pm);
}

static inline void ks_cond_signal_at(ks_cond_t *c, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_cond_signal(c, false, site);
		return;
	}
	pthread_cond_signal(&c->pc);
}

static inline void ks_cond_broadcast_at(ks_cond_t *c, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_cond_signal(c, true, site);
		return;
	}
	pthread_cond_broadcast(&c->pc);
}

static inline void ks_sem_wait_at(ks_sem_t *s, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_sem_wait(s, site);
		return;
	}
	pthread_mutex_lock(&s->m.pm);
	while (s->count == 0)
		pthread_cond_wait(&s->c.pc, &s->m.pm);
	s->count--;
	pthread_mutex_unlock(&s->m.pm);
}

static inline bool ks_sem_trywait_at(ks_sem_t *s, const char *site)
{
	bool ok;

	if (ks_controlled())
		return ks_ctl_sem_trywait(s, site);
	pthread_mutex_lock(&s->m.pm);
	ok = s->count > 0;
	if (ok)
		s->count--;
	pthread_mutex_unlock(&s->m.pm);
	return ok;
}

static inline void ks_sem_post_at(ks_sem_t *s, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_sem_post(s, site);
		return;
	}
	pthread_mutex_lock(&s->m.pm);
	s->count++;
	pthread_cond_signal(&s->c.pc);
	pthread_mutex_unlock(&s->m.pm);
}

/* Atomics on shared counters: sequentially consistent, as the seed's
 * _InterlockedAdd64.  The add/sub forms return the value *before* the op. */
static inline int64_t ks_atomic_load_at(ks_atomic_t *a, const char *site)
{
	if (ks_controlled())
		ks_ctl_point(site);
	return atomic_load(&a->v);
}

static inline void ks_atomic_store_at(ks_atomic_t *a, int64_t v, const char *site)
{
	if (ks_controlled())
		ks_ctl_point(site);
	atomic_store(&a->v, v);
}

static inline int64_t ks_atomic_add_at(ks_atomic_t *a, int64_t v, const char *site)
{
	if (ks_controlled()) {
		if (v < 0)
			ks_ctl_release_point(site);
		else
			ks_ctl_point(site);
	}
	return atomic_fetch_add(&a->v, v);
}

static inline int64_t ks_atomic_sub_at(ks_atomic_t *a, int64_t v, const char *site)
{
	if (ks_controlled())
		ks_ctl_release_point(site);
	return atomic_fetch_sub(&a->v, v);
}

static inline bool ks_atomic_cas_at(ks_atomic_t *a, int64_t *expected, int64_t desired,
                                    const char *site)
{
	if (ks_controlled())
		ks_ctl_point(site);
	return atomic_compare_exchange_strong(&a->v, expected, desired);
}

/* Statistics and accounting counters: atomic, but not a scheduling point,
 * so that bookkeeping never changes the interleavings a run explores.
 * Never use these for a protocol decision (reference counts, flags). */
static inline int64_t ks_atomic_add_quiet(ks_atomic_t *a, int64_t v)
{
	return atomic_fetch_add(&a->v, v);
}

/* The rest of the quiet family, for harness bookkeeping (the fuzz runner's
 * job table, the oracle's history, fault-site hit counters): sequentially
 * consistent like the scheduled forms, but never a scheduling point, so
 * nothing outside lib/sched needs to reach into ks_atomic_t.v. */
static inline int64_t ks_atomic_load_quiet(const ks_atomic_t *a)
{
	return atomic_load((_Atomic int64_t *)&a->v);
}

static inline void ks_atomic_store_quiet(ks_atomic_t *a, int64_t v)
{
	atomic_store(&a->v, v);
}

/* Back to zero between runs. */
static inline void ks_atomic_reset(ks_atomic_t *a)
{
	atomic_store(&a->v, 0);
}

static inline bool ks_atomic_cas_quiet(ks_atomic_t *a, int64_t *expected, int64_t desired)
{
	return atomic_compare_exchange_strong(&a->v, expected, desired);
}

/* Raises *a to v if v is larger; returns the value before. */
static inline int64_t ks_atomic_max_quiet(ks_atomic_t *a, int64_t v)
{
	int64_t cur = atomic_load(&a->v);
	while (cur < v && !atomic_compare_exchange_weak(&a->v, &cur, v))
		;
	return cur;
}

/* Reads without a scheduling point: for statistics and assertions that
 * must not perturb the schedule (never for protocol decisions). */
static inline int64_t ks_atomic_peek(const ks_atomic_t *a)
{
	return atomic_load_explicit((_Atomic int64_t *)&a->v, memory_order_relaxed);
}

void ks_usleep_prod(uint64_t us);
void ks_yield_prod(void);
uint64_t ks_now_ns_prod(void);
/* fn runs in the child of every later fork() (pthread_atfork's child
 * handler): 0, or an errno value. */
int ks_atfork_child(void (*fn)(void));
/* For a fork child handler only (one thread, the others gone): was m held
 * at the fork?  Never waits; m is left free and fresh either way. */
bool ks_mutex_child_reset(ks_mutex_t *m);

static inline void ks_usleep_at(uint64_t us, const char *site)
{
	if (ks_controlled()) {
		ks_ctl_usleep(us, site);
		return;
	}
	ks_usleep_prod(us);
}

static inline void ks_yield_at(const char *site)
{
	if (ks_controlled()) {
		ks_ctl_yield(site);
		return;
	}
	ks_yield_prod();
}

/* Monotonic nanoseconds; virtual time under the controlled backend, so no
 * wall clock leaks into a controlled run. */
static inline uint64_t ks_now_ns(void)
{
	if (ks_controlled())
		return ks_ctl_now_ns();
	return ks_now_ns_prod();
}

/* The real monotonic clock in nanoseconds, under either backend: for
 * harness timing that must stay real inside a controlled run (latency
 * histograms, watchdogs, a tool's elapsed time).  Never for a decision of
 * the library or of a program: that is ks_now_ns, whose virtual time keeps
 * a controlled run reproducible. */
static inline uint64_t ks_wall_ns(void)
{
	return ks_now_ns_prod();
}

/* An explicit scheduling point with no other effect. */
static inline void ks_point_at(const char *site)
{
	if (ks_controlled())
		ks_ctl_point(site);
}

/*
 * An access point: a scheduling point at a plain access to a shared object,
 * opt-in (docs/scheduler.md, "Access points").  The ordinary points sit at
 * synchronization calls only, so a window that lies between a release and
 * a later plain read (a reference dropped before the last read of the
 * object) can never be entered by another thread.  With access points on,
 * a run may switch here, and a thread sleeping in a drain may be chosen as
 * if its sleep had just ended.  On only under the controlled backend and
 * only when the run's config asks (ks_ctl_config_t.access_points, or
 * KMGR_SCHED_ACCESS_POINTS=1 in the environment); otherwise no step, no
 * decision, so schedules and corpora are unchanged.  Nothing at all in the
 * production-only build.
 */
void ks_ctl_access_point(const char *site);

static inline void ks_access_point_at(const char *site)
{
#if defined(KSCHED_PRODUCTION_ONLY)
	(void)site;
#else
	if (ks_controlled())
		ks_ctl_access_point(site);
#endif
}

/* One pointer a thread sets to recognise itself later (e.g. "the worker
 * running on this thread"): thread-local in production, kept per logical
 * thread under the controlled backend (whose fibers share a real thread). */
void ks_thread_tag_set(const void *tag);
const void *ks_thread_tag(void);
const void *ks_ctl_thread_tag(void);
void ks_ctl_thread_tag_set(const void *tag);

int ks_thread_create_at(ks_thread_t *t, const char *name, void *(*fn)(void *), void *arg,
                        const char *site);
int ks_thread_join_at(ks_thread_t *t, void **ret, const char *site);

/*
 * The spin-wait of the unload drain: wait until *ctr == 0, sleeping
 * sleep_us between probes; every warn_every probes call warn(ctx, iters)
 * and keep waiting (it never times out, by design: see the seed's §4).
 * warn_every == 0 disables the warning.  Returns the number of probes.
 */
typedef void (*ks_spin_warn_fn)(void *ctx, uint64_t iters);
uint64_t ks_spin_wait_zero_at(ks_atomic_t *ctr, uint64_t sleep_us, uint64_t warn_every,
                              ks_spin_warn_fn warn, void *ctx, const char *site);

/* ---- the names code uses ------------------------------------------------ */
#define ks_mutex_lock(m)                   ks_mutex_lock_at((m), KS_SITE)
#define ks_mutex_trylock(m)                ks_mutex_trylock_at((m), KS_SITE)
#define ks_mutex_unlock(m)                 ks_mutex_unlock_at((m), KS_SITE)
#define ks_rwlock_rdlock(l)                ks_rwlock_rdlock_at((l), KS_SITE)
#define ks_rwlock_wrlock(l)                ks_rwlock_wrlock_at((l), KS_SITE)
#define ks_rwlock_unlock(l)                ks_rwlock_unlock_at((l), KS_SITE)
#define ks_cond_wait(c, m)                 ks_cond_wait_at((c), (m), KS_SITE)
#define ks_cond_signal(c)                  ks_cond_signal_at((c), KS_SITE)
#define ks_cond_broadcast(c)               ks_cond_broadcast_at((c), KS_SITE)
#define ks_sem_wait(s)                     ks_sem_wait_at((s), KS_SITE)
#define ks_sem_trywait(s)                  ks_sem_trywait_at((s), KS_SITE)
#define ks_sem_post(s)                     ks_sem_post_at((s), KS_SITE)
#define ks_atomic_load(a)                  ks_atomic_load_at((a), KS_SITE)
#define ks_atomic_store(a, v)              ks_atomic_store_at((a), (v), KS_SITE)
#define ks_atomic_add(a, v)                ks_atomic_add_at((a), (v), KS_SITE)
#define ks_atomic_sub(a, v)                ks_atomic_sub_at((a), (v), KS_SITE)
#define ks_atomic_cas(a, e, d)             ks_atomic_cas_at((a), (e), (d), KS_SITE)
#define ks_usleep(us)                      ks_usleep_at((us), KS_SITE)
#define ks_yield()                         ks_yield_at(KS_SITE)
#define ks_point()                         ks_point_at(KS_SITE)
#define ks_access_point()                  ks_access_point_at(KS_SITE)
#define ks_thread_create(t, name, fn, arg) ks_thread_create_at((t), (name), (fn), (arg), KS_SITE)
#define ks_thread_join(t, ret)             ks_thread_join_at((t), (ret), KS_SITE)
#define ks_spin_wait_zero(ctr, us, every, warn, ctx)                                               \
	ks_spin_wait_zero_at((ctr), (us), (every), (warn), (ctx), KS_SITE)

#endif /* KSCHED_H */

/* ==== lib/sched/kctl.h ==== */
/*
 * kctl.h - driving the controlled backend: run a piece of code with exactly
 * one logical thread at a time, every ksched.h call a scheduling point, and
 * the choice at each point taken from a decision source.  Used by the fuzz
 * targets, stress --controlled and the reproducer.  docs/scheduler.md
 * explains scheduling points, the byte encoding, PCT, replay and divergence.
 *
 * Usage:
 *	ks_ctl_config_t cfg;
 *	ks_ctl_config_init(&cfg);
 *	cfg.strategy = KS_STRAT_BYTES; cfg.bytes = data; cfg.nbytes = n;
 *	ks_ctl_begin(&cfg);     // the calling thread becomes logical thread 0
 *	... create threads with ks_thread_create, join them ...
 *	ks_ctl_end(&result);    // every other logical thread must be joined
 */
#ifndef KCTL_H
#define KCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#define KS_CTL_MAX_THREADS 64
/* Memory access points an input may ask for in one run (ks_ctl_config_t.ap). */
#define KS_CTL_MAX_AP 8

typedef enum ks_strategy {
	KS_STRAT_BYTES = 0, /* decisions from bytes; deterministic fallback when they run out */
	KS_STRAT_PCT,       /* PCT with a seed and depth d */
	KS_STRAT_RR,        /* round-robin */
	KS_STRAT_REPLAY,    /* a recorded trace */
} ks_strategy_t;

/*
 * How logical threads are carried.  Both take the same decisions at the
 * same scheduling points, so a trace recorded on one replays on the other
 * with the same step hash.
 *   FIBERS: every logical thread is a fiber (its own stack, swapcontext) on
 *     the thread that called ks_ctl_begin: a switch costs well under a
 *     microsecond, and no real thread is created.  The default.
 *   THREADS: every logical thread is a real pthread and a baton (a futex
 *     word per thread) lets exactly one run, as Coyote does; a switch is a
 *     futex wake plus wait (microseconds).  Selected by the config, or for
 *     every run of a process by KMGR_SCHED_ENGINE=threads in the
 *     environment (read by ks_ctl_config_init).
 */
typedef enum ks_engine {
	KS_ENGINE_FIBERS = 0,
	KS_ENGINE_THREADS,
} ks_engine_t;

/* What ended a controlled run badly.  Each has a stable signature line. */
typedef enum ks_failure {
	KS_OK = 0,
	KS_DEADLOCK,   /* every logical thread blocked: "KSCHED DEADLOCK" */
	KS_HANG,       /* the step bound was hit: "KSCHED HANG" (livelock, endless drain) */
	KS_DIVERGENCE, /* replay named a thread that is not runnable: "KSCHED DIVERGENCE" */
} ks_failure_t;

/* Called on a failure with the kind and a multi-line report (each thread's
 * name, state and wait site).  The default prints the report to stderr and
 * aborts, so fuzzers see a crash with a stable signature. */
typedef void (*ks_ctl_failure_fn)(void *ctx, ks_failure_t kind, const char *report);

typedef struct ks_ctl_config {
	ks_engine_t engine;
	ks_strategy_t strategy;
	const uint8_t *bytes; /* KS_STRAT_BYTES */
	size_t nbytes;
	uint64_t seed;        /* KS_STRAT_PCT */
	uint32_t pct_depth;   /* d >= 1 */
	uint64_t pct_k_hint;  /* expected number of steps, for change points */
	const uint8_t *trace; /* KS_STRAT_REPLAY: a recorded trace (ks_ctl_result_t) */
	size_t ntrace;
	uint64_t max_steps; /* the hang bound; 0 = default (1,000,000) */
	/* ks_access_point() is a scheduling point (docs/scheduler.md, "Access
	 * points"); also on for every run of a process with
	 * KMGR_SCHED_ACCESS_POINTS=1 in the environment.  Off by default: it
	 * adds steps and decisions, so schedules recorded without it replay
	 * differently with it. */
	bool access_points;
	/* Memory access points (ctl_access.c, docs/scheduler.md): in a build
	 * whose code under test carries the compiler's load/store callbacks,
	 * the k-th heap or global access of logical thread `thread` (its id:
	 * 0 is main) after that thread's `point`-th release (an unlock, a post,
	 * an atomic subtraction) is itself a scheduling point, at which
	 * sleepers are candidates, as at ks_access_point().  A window opens at
	 * a release and the access that races it follows within a few.  Chosen by the input, a few per run, so a run adds
	 * ap_n decisions, not one per access.  ap_n = 0: no access is a point
	 * (the default; every schedule recorded before replays as it was). */
	uint32_t ap_n;
	struct {
		uint8_t thread;
		uint32_t point; /* the thread's releases counted from 0 */
		uint32_t k;     /* >= 1 */
		/* the k-th access after each release from `point` on, not only
		 * after that one: a window late in a long-lived thread is hit by
		 * any point before it (ctl_access.c) */
		bool every;
	} ap[KS_CTL_MAX_AP];
	ks_ctl_failure_fn on_failure;
	void *failure_ctx;
} ks_ctl_config_t;

void ks_ctl_config_init(ks_ctl_config_t *cfg);

/* Start a controlled run; the caller becomes logical thread 0 ("main").
 * Returns 0, or -1 if a run is already active. */
int ks_ctl_begin(const ks_ctl_config_t *cfg);

typedef struct ks_ctl_result {
	ks_failure_t failure;
	uint64_t steps;       /* scheduling points passed */
	uint64_t switches;    /* times the running thread changed */
	uint64_t preemptions; /* switches away from a thread that could have continued */
	uint32_t threads;     /* logical threads created, main included */
	/* The decisions taken: one byte each, the chosen logical thread's id, at
	 * every scheduling point where more than one thread was runnable.  Owned
	 * by the scheduler until the next ks_ctl_begin. */
	const uint8_t *trace;
	size_t ntrace;
	bool trace_truncated; /* more decisions than KS_CTL_TRACE_MAX were taken */
	/* FNV-1a over every (thread id, site text) step: equal hashes mean the
	 * same step sequence (a replay check that does not store the steps). */
	uint64_t step_hash;
} ks_ctl_result_t;

/* End the run (only thread 0).  Logical threads still alive are waited for
 * as by a join (a deadlock among them is reported as usual) and every real
 * thread of the run is joined; a later ks_thread_join of one returns 0. */
void ks_ctl_end(ks_ctl_result_t *result);

/*
 * Run body(arg) as logical thread 0 between ks_ctl_begin and ks_ctl_end.
 * When on_failure returns instead of aborting, every logical thread is
 * unwound (longjmp) out of the failed run, main back to here, so the
 * caller can start the next run; objects the body touched are then in an
 * undefined state and must be initialised again.  Returns 0, or -1 if a
 * run is already active.
 */
int ks_ctl_run(const ks_ctl_config_t *cfg, void (*body)(void *), void *arg, ks_ctl_result_t *res);

/* The trace as text ("0 1 1 0 2 ...") and back, for crash reports. */
int ks_ctl_trace_format(const uint8_t *trace, size_t n, char *buf, size_t len);
int ks_ctl_trace_parse(const char *text, uint8_t **trace, size_t *n); /* malloc'd */

/* The current logical thread's id (0 = main), -1 outside a controlled run. */
int ks_ctl_self(void);

const char *ks_ctl_engine_name(ks_engine_t e);

/* The spin detector (ctl_spin.c), for every later run of the process:
 * KS_SPIN_BOUND heap or global accesses without a scheduling point are a
 * yield, and a loop no other thread ends is KSCHED HANG.  Off by default
 * (kpt turns it on). */
void ks_ctl_spin_detect(bool on);

#endif /* KCTL_H */

/* ==== lib/model/kmodel.h ==== */
/*
 * kmodel.h - the model container: the project's stand-in for a NEFF.
 *
 * Byte format: docs/model-format.md.  The parser is strict: every malformed
 * field gives NRT_INVALID (or NRT_UNSUPPORTED_NEFF_VERSION for a version it
 * does not know) and one log line naming the field; it never reads past the
 * buffer and never allocates a size it has not checked against the buffer.
 */
#ifndef KMODEL_H
#define KMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt_experimental.h>
#include <nrt/nrt_status.h>

#define KMODEL_MAX_NDIM      8
#define KMODEL_MAX_TENSORS   64
#define KMODEL_MAX_SUBGRAPHS 256 /* the stage fan-out's thread bound */
#define KMODEL_NAME_MAX      64

/* Container constants (docs/model-format.md). */
#define KMODEL_MAGIC            "KMGRNEFF" /* 8 bytes, no NUL in the container */
#define KMODEL_VERSION          1u
#define KMODEL_HEADER_SIZE      108u
#define KMODEL_FLAG_CC          0x1u
#define KMODEL_MAX_TENSOR_BYTES (1ull << 32) /* keeps device allocations sane */

typedef struct kmodel_tensor {
	char name[NRT_TENSOR_NAME_MAX]; /* NUL-terminated, 1..255 characters */
	nrt_tensor_usage_t usage;
	nrt_dtype_t dtype;
	uint32_t ndim;
	uint32_t shape[KMODEL_MAX_NDIM];
	uint64_t size; /* bytes: product of shape times the dtype's size */
} kmodel_tensor_t;

typedef struct kmodel {
	uint32_t version;
	char name[KMODEL_NAME_MAX];
	uint8_t uuid[16];
	uint32_t nkbin; /* subgraph count: 1, or one per core of the virtual core */
	bool has_cc;    /* collectives context: bootstrap on first execution */
	uint32_t n_tensors;
	kmodel_tensor_t *tensors; /* inputs and outputs, each kind in model order */
} kmodel_t;

/* Parse a container; *out is freed with kmodel_free. */
NRT_STATUS kmodel_parse(const void *buf, size_t len, kmodel_t **out);
void kmodel_free(kmodel_t *m);

/* Bytes per element of a dtype, 0 for NRT_DTYPE_UNKNOWN or out of range. */
uint32_t kmodel_dtype_size(nrt_dtype_t dtype);
/* "f32", "u8", ...; NULL when unknown.  And back: -1 when unknown. */
const char *kmodel_dtype_name(nrt_dtype_t dtype);
int kmodel_dtype_from_name(const char *name);

uint32_t kmodel_input_count(const kmodel_t *m);
uint32_t kmodel_output_count(const kmodel_t *m);

/* ---- builder ---------------------------------------------------------- */
/* A model in memory, built field by field, then serialized. */
kmodel_t *kmodel_new(const char *name, uint32_t nkbin, bool has_cc);
/* Adds a tensor; size is computed from dtype and shape.  NRT_INVALID for a
 * bad name, dtype or shape, NRT_RESOURCE beyond KMODEL_MAX_TENSORS. */
NRT_STATUS kmodel_add_tensor(kmodel_t *m, const char *name, nrt_tensor_usage_t usage,
                             nrt_dtype_t dtype, uint32_t ndim, const uint32_t *shape);
/* Container bytes (kalloc'd; free with kfree) with a correct checksum. */
NRT_STATUS kmodel_serialize(const kmodel_t *m, uint8_t **out, size_t *len);

#endif /* KMODEL_H */

/* ==== lib/model/kmodel_int.h ==== */
/*
 * kmodel_int.h - what the parser and the builder share: the checks both
 * apply (so a model the builder accepts is exactly one the parser accepts),
 * the rejection log line, and the checksum.
 */
#ifndef KMODEL_INT_H
#define KMODEL_INT_H

#include <stddef.h>
#include <stdint.h>


/* Smallest and largest encoded tensor record. */
#define KMODEL_REC_MIN  (1u + 1u + 3u + 4u + 8u)
#define KMODEL_REC_MAX  (1u + 255u + 3u + 4u * KMODEL_MAX_NDIM + 8u)
#define KMODEL_CRC_SIZE 4u

/* Log "model: bad field 'F': ..." where F is the field, prefixed by
 * "tensor[idx]." when idx >= 0. */
void kmodel__bad(int idx, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* n bytes, 1 <= n <= max, all printable ASCII. */
bool kmodel__name_ok(const char *s, size_t n, size_t max);
NRT_STATUS kmodel__check_model_name(const char *name, size_t n);
NRT_STATUS kmodel__check_nkbin(uint32_t nkbin);
/* usage, dtype and ndim of tensor idx: checked before its dims are read. */
NRT_STATUS kmodel__check_kind(int idx, uint32_t usage, uint32_t dtype, uint32_t ndim);
/* dims of tensor idx (dtype and ndim already checked); *size gets the bytes. */
NRT_STATUS kmodel__check_dims(int idx, uint32_t dtype, uint32_t ndim, const uint32_t *shape,
                              uint64_t *size);
/* name, the name of tensor idx, differs from those of tensors[0..idx). */
NRT_STATUS kmodel__check_unique(const kmodel_t *m, uint32_t idx, const char *name);
/* At least one input and one output. */
NRT_STATUS kmodel__check_io(const kmodel_t *m);

uint32_t kmodel__crc32(const uint8_t *p, size_t n);
size_t kmodel__count_zeros(const char *s, size_t n); /* leading NUL bytes of s[0..n) */

#endif /* KMODEL_INT_H */

/* ==== lib/emu/emu.h ==== */
/*
 * emu.h - the emulated device: everything below the facade's seams.
 *
 * It stands in for the kbl_* kernel backend, tdrv_*, the sync XU work-queue,
 * the implicit-async worker pool and the completion engine.  Functions that
 * the seed (../shared/seed/kmgr-facade.txt) names keep the seed's names, so
 * that lib/kmgr reads like the seed; where the seed's argument is a facade
 * type the device cannot see (dlr_model), the device takes the virtual core
 * or handle it needs instead.
 *
 * Ownership rule at the engine seams: kmgr_sync_exec, tpb_xu_schedule_exec
 * and kmgr_async_exec_add_work always take ownership of the execution
 * tracker (kmgr_exec_resources_t), on success and on failure; the engine
 * releases it through the release hook the facade installs (emu_hooks_t).
 *
 * Every lock, condition, atomic counter, sleep and thread in lib/emu goes
 * through lib/sched/ksched.h; every host allocation through kalloc with a
 * fault site; every device allocation through the arena, which is a fault
 * site too.
 */
#ifndef EMU_H
#define EMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_async.h>
#include <nrt/nrt_experimental.h>
#include <nrt/nrt_status.h>

#define EMU_MAX_NC              64
#define EMU_DEFAULT_NC          4
#define EMU_DEFAULT_ARENA_BYTES (64u << 20)

/* ---- the device --------------------------------------------------------- */

typedef struct emu_config {
	uint32_t nc_count;          /* emulated NeuronCores, 1..EMU_MAX_NC */
	uint64_t arena_bytes;       /* device memory per core */
	uint32_t async_queue_depth; /* implicit-async queue bound per worker */
	uint32_t xu_queue_depth;    /* sync/explicit XU queue bound per core */
	uint32_t first_visible_nc;  /* NEURON_RT_VISIBLE_CORES: first core */
	uint32_t visible_nc_count;  /* ... and how many (0 = all) */
} emu_config_t;

/* Defaults, then KMGR_EMU_NC_COUNT (1..64) from the environment.  Returns
 * NRT_INVALID on a malformed variable (and logs it). */
NRT_STATUS emu_config_default(emu_config_t *cfg);

/* Bring the device up: cores, arenas, one sync XU worker per core. */
NRT_STATUS emu_open(const emu_config_t *cfg);
/* Stop and join every device thread and release the device.  Tensors the
 * user still holds stay valid until freed (the arena goes with the last). */
void emu_close(void);
bool emu_is_open(void);
uint32_t emu_nc_count(void);
const emu_config_t *emu_config(void);

/* ---- upward hooks the facade installs (calls never flow upward by name) */
typedef struct kmgr_exec_resources kmgr_exec_resources_t;

typedef struct emu_hooks {
	/* Frees an execution tracker (the facade's kmgr_exec_resources_free). */
	void (*release_resources)(kmgr_exec_resources_t **res);
	/* dlr_db_get_nn_cached_interned_model_id: the async submitter attaches
	 * the interned id to its trace (it takes the registry's read lock). */
	uint32_t (*interned_model_id)(uint32_t h_nn);
} emu_hooks_t;

void emu_set_hooks(const emu_hooks_t *hooks);

/* An observer of execution events, for oracles and stress checks. */
typedef enum emu_exec_event {
	EMU_EXEC_SUBMIT,   /* a work item was accepted by an engine */
	EMU_EXEC_START,    /* the device began computing it */
	EMU_EXEC_COMPLETE, /* its completion was published (status given) */
	EMU_EXEC_CANCEL,   /* it was cancelled before it started (model stop) */
} emu_exec_event_t;

typedef void (*emu_exec_observer_fn)(void *ctx, emu_exec_event_t ev, uint64_t h_model,
                                     uint32_t h_nn, NRT_STATUS status);
void emu_set_exec_observer(emu_exec_observer_fn fn, void *ctx);

/* ---- accounting --------------------------------------------------------- */
typedef struct emu_accounting {
	int64_t device_bytes;   /* live device bytes, all arenas */
	int64_t device_allocs;  /* live device allocations */
	int64_t host_bytes;     /* live kalloc bytes (whole library) */
	int64_t host_allocs;    /* live kalloc blocks (whole library) */
	int64_t objects;        /* live emulator objects: tensors, sets, vcores, ... */
	int64_t staged_models;  /* per-core model records (kbl_model_add) */
	int64_t inflight_execs; /* submitted and not yet completed or cancelled */
	int64_t async_marks;    /* tensor sets marked for async execution */
} emu_accounting_t;

void emu_get_accounting(emu_accounting_t *acct);
/* Device bytes live on one core. */
int64_t emu_core_device_bytes(uint32_t nc);

/* ---- tensors (struct nrt_tensor is private to lib/emu) ----------------- */
NRT_STATUS kbl_tensor_allocate(nrt_tensor_placement_t placement, int logical_nc_id, size_t size,
                               const char *name, nrt_tensor_t **tensor);
NRT_STATUS kbl_tensor_allocate_empty(const char *name, nrt_tensor_t **tensor);
NRT_STATUS kbl_tensor_attach_buffer(nrt_tensor_t *tensor, void *buffer, size_t size);
NRT_STATUS kbl_tensor_allocate_slice(const nrt_tensor_t *src, size_t offset, size_t size,
                                     const char *name, nrt_tensor_t **slice);
void kbl_tensor_free(nrt_tensor_t **tensor);
NRT_STATUS kbl_tensor_read(const nrt_tensor_t *tensor, void *buf, size_t offset, size_t size);
NRT_STATUS kbl_tensor_write(nrt_tensor_t *tensor, const void *buf, size_t offset, size_t size);
NRT_STATUS kbl_tensor_copy(const nrt_tensor_t *src, size_t src_offset, nrt_tensor_t *dst,
                           size_t dst_offset, size_t size);
NRT_STATUS kbl_tensor_memset(nrt_tensor_t *tensor, uint64_t offset, int value, size_t size);
size_t kbl_tensor_get_size(const nrt_tensor_t *tensor);
void *kbl_tensor_get_va(const nrt_tensor_t *tensor);
const char *kbl_tensor_get_name(const nrt_tensor_t *tensor);
nrt_tensor_placement_t kbl_tensor_get_placement(const nrt_tensor_t *tensor);
/* -1 for host tensors. */
int kbl_tensor_get_nc(const nrt_tensor_t *tensor);
/* Host-resident (CPU memory): HOST, or VIRTUAL with a buffer attached. */
bool kbl_tensor_is_malloc(const nrt_tensor_t *tensor);

/* ---- tensor sets ("feature map sets"), reference counted --------------- */
NRT_STATUS kbl_tensor_set_allocate(nrt_tensor_set_t **set); /* one reference */
/* Drop one reference; the last one frees the set (not its tensors, except
 * the device tensors a clone allocated). */
void kbl_free_feature_map_set(nrt_tensor_set_t *set);
/* Take a reference (not a copy): *ref is the same set. */
NRT_STATUS kbl_create_reference_feature_map_set(const nrt_tensor_set_t *set,
                                                nrt_tensor_set_t **ref);
/* Add or replace by name. */
NRT_STATUS kbl_tensor_set_add(nrt_tensor_set_t *set, const char *name, nrt_tensor_t *tensor);
NRT_STATUS kbl_tensor_set_get(const nrt_tensor_set_t *set, const char *name, nrt_tensor_t **tensor);
uint32_t kbl_tensor_set_count(const nrt_tensor_set_t *set);
/* The i-th entry in insertion order (name may be NULL). */
nrt_tensor_t *kbl_tensor_set_at(const nrt_tensor_set_t *set, uint32_t i, const char **name);
/* How many entries are host-resident (kbl_tensor_is_malloc). */
uint32_t kbl_tensor_set_get_malloc_tensor_count(const nrt_tensor_set_t *set);
/* A new set (one reference) where every host-resident tensor is replaced by
 * a device tensor of the same name and size on core nc (allocated, not
 * copied); device tensors are shared.  NULL on allocation failure. */
nrt_tensor_set_t *kbl_tensor_set_clone_to_physical_mem(const nrt_tensor_set_t *set, int nc);
/* Copy every tensor of src into the same-named tensor of dst. */
NRT_STATUS kbl_tensor_set_copy(const nrt_tensor_set_t *src, nrt_tensor_set_t *dst);
/* The async mark pair: mark takes a reference and a mark; unmark drops
 * both.  Unmarking a set with no mark is reported and aborts (it is the
 * symptom of freeing the wrong arm of an execution tracker). */
void kbl_tensor_set_mark_async_exec(nrt_tensor_set_t *set);
void kbl_tensor_set_unmark_async_exec(nrt_tensor_set_t *set);

/* ---- cores, virtual cores and models on the device ---------------------- */
typedef struct tpb tpb_t; /* one emulated NeuronCore */
typedef uint64_t H_MODEL;

typedef struct virtual_core {
	uint32_t vtpb_idx; /* index of the first core: selects the XU and async worker */
	uint32_t num_tpbs;
	tpb_t **tpbs; /* num_tpbs cores */
} virtual_core_t;

/* A virtual core over cores [start_nc, start_nc + nc_count). */
NRT_STATUS vtpb_create(uint32_t start_nc, uint32_t nc_count, virtual_core_t **vcore);
void vtpb_destroy(virtual_core_t *vcore);
uint32_t vtpb_get_vtpb_core_size(const virtual_core_t *vcore);
/* Number of models staged on a core (for first-free-core placement). */
uint32_t emu_core_model_count(uint32_t nc);

/* What the device needs to know of one model (copied by kbl_model_add). */
typedef struct kbl_io_desc {
	char name[NRT_TENSOR_NAME_MAX];
	nrt_tensor_usage_t usage;
	uint64_t size;
} kbl_io_desc_t;

typedef struct kbl_model_param {
	uint32_t n_io;
	const kbl_io_desc_t *io; /* inputs and outputs, each in model order */
	bool has_cc;             /* needs the collectives bootstrap on first execution */
	uint32_t sg_count;       /* subgraphs (the seed's nkbin) */
} kbl_model_param_t;

typedef struct kbl_model kbl_model_t; /* the per-core model_t */

H_MODEL kbl_model_handle_new(void); /* monotone, never 0 */
/* Stage one subgraph on one core: allocates the model's rings and request
 * buffers on the core's device memory (fault sites). */
NRT_STATUS kbl_model_add(tpb_t *tpb, H_MODEL h_model, const kbl_model_param_t *param,
                         const char *name, const uint8_t uuid[16]);
NRT_STATUS kbl_model_remove(tpb_t *tpb, H_MODEL h_model);
/* Find the model on tpbs[0] and take a reference on it. */
NRT_STATUS kbl_get_model_ref_count(tpb_t **tpbs, H_MODEL h_model, kbl_model_t **kmod);
void kbl_model_ref_decrement(kbl_model_t *kmod);
void kbl_acquire_hw_exec_queue_lock(kbl_model_t *kmod);
void kbl_release_hw_exec_queue_lock(kbl_model_t *kmod);
/* Naming follows the binary: true once the first-execution bootstrap has
 * run, so the seed's "if !kbl_cc_get_model_is_first_exec" is the first
 * execution.  Call under the hardware-exec-queue lock. */
bool kbl_cc_get_model_is_first_exec(kbl_model_t *kmod);
/* The first-execution bootstrap: collectives resources for has_cc models
 * (device memory, a fault site); marks the bootstrap done. */
NRT_STATUS kbl_exec_build_and_load_cc_resources(kbl_model_t *kmod, uint32_t sg_count,
                                                uint64_t exec_id);
/* In-flight executions of a model (submitted, not completed). */
int64_t kbl_model_inflight(H_MODEL h_model);
/* Executions submitted and not yet completed or cancelled, read with
 * acquire order (a scheduling point): a caller that sees 0 sees every
 * completion's effects, observer calls included.  emu_get_accounting's
 * figure is a statistic (no ordering). */
int64_t emu_inflight_execs(void);
/* The same without a scheduling point (the fuzz harness's waits, which
 * must not add decisions to programs that never wait). */
int64_t emu_inflight_execs_quiet(void);

/* ---- compute resources (tdrv) ------------------------------------------ */
typedef struct tdrv_compute_resources {
	const virtual_core_t *vcore;
	H_MODEL h_model;
	uint32_t sg_count;
	uint32_t n_bound;
	struct kbl_binding *bound; /* the IO binding, host memory (fault site) */
} tdrv_compute_resources_t;

void kbl_init_compute_resources(tdrv_compute_resources_t *res, uint32_t sg_count);
/* IO bind: every model input and output resolved by name in the sets, on
 * device memory, of the model's size.  NRT_INVALID when one is missing. */
NRT_STATUS kbl_compute_build_compute_resources(const virtual_core_t *vcore, uint32_t sg_count,
                                               H_MODEL h_model, const nrt_tensor_set_t *in,
                                               const nrt_tensor_set_t *out,
                                               tdrv_compute_resources_t *res);
/* Frees the binding and res itself (res was kalloc'd by the facade). */
void kbl_free_compute_resources(tdrv_compute_resources_t *res);

/* ---- the execution tracker the facade builds (the seed's 56 bytes) ----- */
typedef enum kmgr_exec_mode {
	KMGR_EXEC_MODE_ASYNC = 0,          /* implicit async (async_exec_workers != NULL) */
	KMGR_EXEC_MODE_EXPLICIT_ASYNC = 1, /* sync nrt_execute and nrta_* (see the seed's QUIRK) */
} kmgr_exec_mode_t;

struct kmgr_exec_resources {
	uint64_t trace_exec_id;                   /* +0x00 */
	uint32_t trace_nc_idx;                    /* +0x08 */
	uint32_t model_id;                        /* +0x0c interned model id */
	tdrv_compute_resources_t *tdrv_resources; /* +0x10 */
	nrt_tensor_set_t *in_fmap_set;            /* +0x18 */
	uint32_t exec_mode;                       /* +0x20 selects the fmap arm */
	uint32_t h_nn;                            /* +0x24 */
	nrt_tensor_set_t *out_fmap_set;           /* +0x28 */
	uint64_t tracking_id;                     /* +0x30 */
};
_Static_assert(sizeof(struct kmgr_exec_resources) == 0x38, "the seed's tracker is 56 bytes");

/*
 * Compute, so that every answer is checkable (docs/device.md): a successful
 * execution writes output j (model order) as
 *   out_j[k] = (uint8_t)(j + 1 + sum over inputs i of in_i[k mod size_i])
 * emu_compute_expected() applies the same formula for oracles.
 */
void emu_compute_expected(uint32_t n_in, const uint8_t *const *in, const uint64_t *in_size,
                          uint32_t out_index, uint8_t *out, uint64_t out_size);

/* ---- the sync XU (one per core; a virtual core uses its first core's) -- */
typedef struct tpb_xu tpb_xu_t;

tpb_xu_t *tpb_xu_get_by_vcore(const virtual_core_t *vcore);
uint32_t tpb_xu_id(const tpb_xu_t *xu);
/* Submit one work item for all sg_count cores of the model and poll its
 * completion flag until the worker harvests it (INIT -> WAIT_BARRIER ->
 * WAIT_CORE -> DONE).  Takes ownership of res.  Returns the completion
 * status. */
NRT_STATUS kmgr_sync_exec(const virtual_core_t *vcore, kmgr_exec_resources_t *res,
                          uint64_t tracking_id);
/* Model stop on the sync XU: returns once no work of h_model is queued or
 * running on this XU. */
NRT_STATUS tpb_xu_model_unstage(tpb_xu_t *xu, H_MODEL h_model);

/* Explicit async: enqueue and return at once with the sequence number
 * ((tail & 0xFFFFFFFFFFFF) | (xu_id << 48)).  NRT_QUEUE_FULL when the XU
 * queue is full.  *exec_ret receives the status at completion.  Takes
 * ownership of res. */
NRT_STATUS tpb_xu_schedule_exec(tpb_xu_t *xu, uint32_t repeat, uint32_t h_nn,
                                kmgr_exec_resources_t *res, uint64_t trace_id, NRT_STATUS *exec_ret,
                                nrta_seq_t *seq);
/* Last completed sequence number of an XU (NRT_INVALID for a bad xu). */
NRT_STATUS kmgr_xu_get_compl_seq(uint32_t xu_id, nrta_seq_t *seq);
/* Completed? NRT_INVALID for a sequence number never issued. */
NRT_STATUS kmgr_xu_is_completed(nrta_seq_t seq, bool *done);

/* ---- the implicit-async worker pool (one worker per core) ------------- */
typedef struct kmgr_async_exec_worker kmgr_async_exec_worker_t;
typedef struct kmgr_async_exec_worker_threads kmgr_async_exec_worker_threads_t;

NRT_STATUS kmgr_async_exec_init(uint32_t queue_depth, kmgr_async_exec_worker_threads_t **out);
/* Cancels what is still queued, joins the workers, frees the pool. */
void kmgr_async_exec_destroy(kmgr_async_exec_worker_threads_t *pool);
/* The seed's async_exec_workers->workers[vtpb_idx]. */
kmgr_async_exec_worker_t *kmgr_async_exec_get_worker(kmgr_async_exec_worker_threads_t *pool,
                                                     uint32_t vtpb_idx);
/* Enqueue; NRT_QUEUE_FULL when the worker's queue is full.  Takes ownership
 * of res.  Calls the interned_model_id hook. */
NRT_STATUS kmgr_async_exec_add_work(kmgr_async_exec_worker_threads_t *pool, uint32_t h_nn,
                                    uint32_t vtpb_idx, kmgr_exec_resources_t *res, uint64_t *handle,
                                    uint64_t tracking_id);
/* Wait until the work item (or stop request) 'handle' is done; returns its
 * status. */
NRT_STATUS kmgr_async_exec_poll(kmgr_async_exec_worker_t *worker, uint64_t handle);
/* Post MODEL_STOP for h_nn: the worker finishes the model's running item
 * and cancels its queued ones (their callbacks report NRT_FAILURE... see
 * docs/device.md) before the stop completes.  *handle is what to poll;
 * *need_stop false when nothing of the model was queued. */
NRT_STATUS kmgr_async_exec_model_stop(kmgr_async_exec_worker_t *worker, uint32_t h_nn,
                                      uint64_t *handle, bool *need_stop);
/* Wait until the worker of a virtual core has no queued execution. */
void kmgr_async_drain_queued_execs(kmgr_async_exec_worker_threads_t *pool, uint32_t vtpb_idx);
/* nrt_register_async_exec_callback semantics: one callback, process-wide. */
void kmgr_async_exec_set_callback(nrt_async_exec_callback_t cb, void *params);

#endif /* EMU_H */

/* ==== lib/kmgr/kmgr.h ==== */
/*
 * kmgr.h - the KMGR exec-manager facade (../shared/seed/kmgr-facade.txt).
 *
 * The model registry (dlr_model_set), the refcount protocol
 * (db_get_nn_ref_count / nn_ref_decrement), the sync/async execute fork
 * (kmgr_exec), the execution-resource lifecycle (kmgr_exec_pre /
 * kmgr_exec_resources_free), the unload state machine (kmgr_unload_nn),
 * the metadata accessors, the stage seam (dlr_kelf_stage) and the
 * explicit-async submit (kmgr_tpb_xu_schedule).  Seed names throughout.
 *
 * This interface is what lib/nrt funnels into, and what tests use when the
 * public pointer-based API cannot express a case (a stale or foreign
 * handle).
 */
#ifndef KMGR_H
#define KMGR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_async.h>
#include <nrt/nrt_experimental.h>
#include <nrt/nrt_status.h>

/* The model handle: H_NN.id, ids never reused within a process. */
typedef struct H_NN {
	uint32_t id;
} H_NN;

typedef struct dlr_model dlr_model; /* lib/kmgr/dlr.h */

typedef struct kmgr_config {
	uint32_t async_queue_depth; /* implicit-async queue bound per worker */
	/* Probes between "still waiting for model[%u] ref count 0" warnings in
	 * the unload drain; the seed's 1e8 when 0. */
	uint64_t drain_warn_iters;
} kmgr_config_t;

/* implicit_async_exec creates the async worker pool (asserts it does not
 * exist yet, as the seed does). */
NRT_STATUS kmgr_init(bool implicit_async_exec, const kmgr_config_t *cfg);
void kmgr_destroy(void);
/* Is the facade in implicit-async mode (async_exec_workers != NULL)? */
bool kmgr_is_async(void);

NRT_STATUS kmgr_load_nn(const void *bytes, size_t size, int32_t start_nc, int32_t nc_count,
                        H_NN *out);
NRT_STATUS kmgr_unload_nn(H_NN h_nn);
NRT_STATUS kmgr_unload_all_nns(void);
/* A snapshot of the loaded ids under the read lock; free with kfree. */
NRT_STATUS kmgr_get_nns(H_NN **ids, uint32_t *count);

NRT_STATUS kmgr_exec(H_NN h_nn, const nrt_tensor_set_t *in, nrt_tensor_set_t *out,
                     uint64_t tracking_id);
/* The explicit-async submit; vtpb_idx names the virtual core the caller
 * believes the model is on (asserted equal, as the seed asserts vcore). */
NRT_STATUS kmgr_tpb_xu_schedule(uint32_t vtpb_idx, H_NN h_nn, const nrt_tensor_set_t *in,
                                nrt_tensor_set_t *out, NRT_STATUS *exec_ret, nrta_seq_t *seq);

/* ---- metadata ---- */
NRT_STATUS kmgr_get_io_tensor_count(H_NN h_nn, uint32_t *in_count, uint32_t *out_count);
/* name gets up to 255 characters and a NUL; *shape is kalloc'd (kfree). */
NRT_STATUS kmgr_get_io_tensor_info(H_NN h_nn, bool is_input, uint32_t index,
                                   char name[NRT_TENSOR_NAME_MAX], size_t *size, nrt_dtype_t *dtype,
                                   uint32_t *ndim, uint32_t **shape);
NRT_STATUS kmgr_is_valid_ifmap(H_NN h_nn, const char *name, bool *valid);
NRT_STATUS kmgr_get_ifmap_count(H_NN h_nn, uint32_t *count);
/* Where the model is: first core (vtpb_idx) and core count. */
NRT_STATUS kmgr_get_nc_info(H_NN h_nn, uint32_t *start_nc, uint32_t *nc_count);

/* ---- setters ---- */
NRT_STATUS kmgr_set_profiling(H_NN h_nn, bool enable);
NRT_STATUS kmgr_set_mac_count(H_NN h_nn, uint64_t mac_count);

/* ---- the refcount protocol (exposed for tests and the oracle) ---- */
dlr_model *db_get_nn_ref_count(H_NN h_nn);
void nn_ref_decrement(dlr_model *mod);
uint32_t dlr_db_get_nn_cached_interned_model_id(H_NN h_nn);
/* Current ref_count, read without a scheduling point (tests only). */
int64_t dlr_model_peek_ref_count(const dlr_model *mod);

/* Whether h_nn is loaded, quietly (no "Failed to find model" line). */
bool kmgr_nn_loaded(H_NN h_nn);
/* The largest id handed out so far (ids only grow). */
uint32_t kmgr_last_nn_id(void);

#endif /* KMGR_H */

/* ==== lib/nrt/nrt_kmgr.h ==== */
/*
 * nrt_kmgr.h - test hook, not installed: the facade handle behind a public
 * nrt_model_t, so tests can reach lib/kmgr (a stale or foreign handle, the
 * refcount) where the pointer-based public API cannot express a case.
 */
#ifndef NRT_KMGR_H
#define NRT_KMGR_H

#include <nrt/nrt.h>
#include <nrt/nrt_status.h>


/* NRT_INVALID for a NULL argument. */
NRT_STATUS nrt_model_get_nn(const nrt_model_t *model, H_NN *h_nn);

/* The two variables nrt_init reads (NULL: unset), as strings.  nrt_init
 * and nrt_get_visible_nc_count take them from getenv; these take them from
 * the caller, so that threads of one process can each try their own
 * values without setenv, which races every getenv (the api_nrt target's
 * nrt_init op). */
typedef struct nrt_env {
	const char *visible_cores; /* NEURON_RT_VISIBLE_CORES */
	const char *max_inflight;  /* NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS */
} nrt_env_t;

NRT_STATUS nrt_init_env(nrt_framework_type_t framework, const nrt_env_t *env);
NRT_STATUS nrt_get_visible_nc_count_env(const nrt_env_t *env, uint32_t *nc_count);

#endif /* NRT_KMGR_H */
#pragma GCC diagnostic pop

/* ==== fuzz/prog/prog.h ==== */
/*
 * prog.h - the program model shared by the fuzz targets, the reproducer
 * and kprog: a program is data (syzkaller's prog/).
 *
 * A program is a config header (sync or implicit-async mode, emulated
 * cores, queue depth, fault plan, logical threads), a list of operations
 * each tagged with the logical thread that runs it, and a tail of
 * scheduling decisions for the controlled scheduler (KS_STRAT_BYTES).
 * Operations name models by small slot numbers so that sequences stay
 * meaningful under mutation; tensors live in per-thread tensor slots.
 *
 * Binary form (what a fuzz input and a program file on disk are), every
 * byte string decodes (missing bytes read as zero, every field is reduced
 * into its range), so a small byte change is a small program change:
 *
 *   byte 0   flags: bit0 implicit-async, bits1-2 cores {1,2,4,8},
 *            bits3-4 threads-1, bits5-7 memory access points (0..7)
 *   byte 1   queue depth - 1 (mod 8)
 *   byte 2   fault entries (mod KPROG_MAX_FAULTS+1), each 4 bytes:
 *            kind, site index, nth-1, arg   (see decode.c)
 *   byte 3   operations (mod KPROG_MAX_OPS+1), each 6 bytes:
 *            kind, thread, a0, a1, a2, a3; a LOAD of the inline template
 *            is followed by a 2-byte little-endian length and that many
 *            container bytes.  The kind byte: kind b % KPROG_KINDS_V1 for
 *            the first kinds; a kind added later has a byte value of its
 *            own, counting down from KPROG_KIND_BYTE_TOP (kinds.c), so
 *            that every other input keeps its meaning
 *   rest     scheduling decisions (at most KPROG_MAX_SCHED bytes used),
 *            less the last 2 bytes per access point: logical thread
 *            (bits 0-2), k-1 (bits 3-5) and r's bits 8-9 (bits 6-7), then
 *            r's bits 0-7 (r: 0..1023; before issue 36 r was the second
 *            byte mod 32, bits 6-7 unused: corpus inputs were re-derived so
 *            that they name the same points): the k-th heap
 *            or global access of that thread after its r-th release is a
 *            scheduling point (lib/sched/ctl_access.c; none, bits 5-7
 *            of byte 0 all zero, changes nothing); r >= 512: after each
 *            of its releases from r-512 on ("every", text "R.."), so that
 *            any r before a window late in a long-lived thread reaches it
 *
 * Text form (print.c / parse.c): one line per item, '#' comments:
 *   config mode=sync nc=4 qdepth=4 threads=2
 *   fault alloc:kmgr.exec_resources:1
 *   access t1:3+1
 *   access t0:40..+1
 *   t0 load slot=0 tmpl=0 start=-1 count=-1
 *   t0 load slot=1 inline=4b4d4f44... start=0 count=1
 *   t1 exec slot=0 in=dev out=host repeat=1
 *   sched 00 01 01 00
 */
#ifndef KPROG_H
#define KPROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


#define KPROG_MAX_THREADS    4
#define KPROG_MAX_OPS        48
#define KPROG_MAX_FAULTS     3
#define KPROG_MAX_AP         7    /* memory access points (byte 0, bits 5-7) */
#define KPROG_AP_THREADS     8    /* logical thread ids an access point names */
#define KPROG_AP_MAX_RELEASE 511  /* the release index an access point names */
#define KPROG_SLOTS          4    /* model slots, shared by all threads */
#define KPROG_TSLOTS         4    /* tensor slots, per thread */
#define KPROG_MAX_BLOB       4096 /* inline container bytes, whole program */
#define KPROG_MAX_INLINE     1024 /* one inline container */
#define KPROG_MAX_SCHED      4096 /* scheduling decisions kept */
#define KPROG_HEADER_BYTES   4
#define KPROG_OP_BYTES       6
#define KPROG_FAULT_BYTES    4

typedef enum kprog_kind {
	KOP_LOAD = 0,       /* slot, tmpl, start, count */
	KOP_UNLOAD,         /* slot */
	KOP_UNLOAD_ALL,     /* - */
	KOP_EXEC,           /* slot, in, out, repeat */
	KOP_SCHEDULE,       /* slot, in, out, queue (explicit async: nrta_execute_schedule) */
	KOP_IS_COMPLETED,   /* which (a previous SCHEDULE of this thread), bogus */
	KOP_GET_SEQUENCE,   /* lnc, xu, queue */
	KOP_TENSOR_INFO,    /* slot, index */
	KOP_IS_VALID_IFMAP, /* slot, name (model tensor index; 6 bogus; 7 NULL) */
	KOP_IFMAP_COUNT,    /* slot, io (0 ifmap count, 1 io tensor count) */
	KOP_SET_PROFILING,  /* slot, on, mac (1: kmgr_set_mac_count instead) */
	KOP_STALE,          /* slot, what: an unloaded id through 9 entry points */
	KOP_FAULT,          /* site (index in the site table, 0 = any), nth */
	KOP_TALLOC,         /* tslot, place, size */
	KOP_TFREE,          /* tslot */
	KOP_TWRITE,         /* tslot, off, len */
	KOP_TREAD,          /* tslot, off, len */
	KOP_BADARGS,        /* slot, what: a NULL or mismatched argument on a loaded model */
	/* later kinds: each has one kind byte of its own (KPROG_KIND_BYTE_TOP
	 * down), which named kind b % KPROG_KINDS_V1 before */
	KOP_NC_INFO, /* slot: kmgr_get_nc_info, the cores the model runs on; byte 0xfd */
	/* the public API on a model (the api_nrt target, docs/harness.md): the
	 * slot's nrt_model_t handle, or with old the one its last nrt_unload
	 * retired */
	KOP_NRT_LOAD,     /* slot, model (a template), start, count: nrt_load; 0xfc */
	KOP_NRT_UNLOAD,   /* slot, old: nrt_unload; 0xfb */
	KOP_NRT_EXEC,     /* slot, in, out, repeat: nrt_execute(_repeat); 0xfa */
	KOP_NRT_META,     /* slot, what, old: nc_count, tensor_info, misuse (2-5); 0xf9 */
	KOP_NRT_SCHEDULE, /* slot, in, out: nrta_execute_schedule; 0xf8 */
	KOP_NRT_CLOSE,    /* nrt_close while the other threads go on calling; 0xf7 */
	KOP_NRT_INIT,     /* fw, visible, core, inflight: nrt_init and the visible
	                   * count with the environment the fields spell; 0xf6 */
	KOP_NRT_TRACKER,  /* slot, in, out, bogus: nrta_error_tracker_create (bogus: a core
	                   * no device has), a schedule with it, get_list; 0xf5 */
	KOP_NRT_CALLBACK, /* cb: nrt_register_async_exec_callback with the harness's
	                   * callback a, b or NULL, in any state; 0xf4 */
	KOP__COUNT
} kprog_kind_t;

/* The kinds every byte value names by b % KPROG_KINDS_V1 (LOAD..BADARGS). */
#define KPROG_KINDS_V1      18
#define KPROG_KIND_BYTE_TOP 0xfd

/* Tensor placement of an EXEC/SCHEDULE operand or a TALLOC. */
enum {
	KPROG_PLACE_DEV = 0,
	KPROG_PLACE_HOST = 1,
	KPROG_PLACE_VIRT = 2,    /* VIRTUAL with a host buffer attached */
	KPROG_PLACE_MISSING = 3, /* exec: leave the first tensor out; talloc: no buffer */
	KPROG_PLACE__N = 4
};

/* Built-in model templates (templates.c); tmpl == KPROG_TMPL_INLINE means
 * the op carries container bytes. */
#define KPROG_NTMPL       6
#define KPROG_TMPL_INLINE KPROG_NTMPL

typedef struct kprog_op {
	uint8_t kind;
	uint8_t thread;
	int16_t a[4];      /* semantic values, each within its field's range */
	uint16_t blob_off; /* LOAD inline: offset in kprog_t.blob */
	uint16_t blob_len;
} kprog_op_t;

typedef struct kprog {
	bool async;         /* implicit-async mode */
	uint8_t nc;         /* emulated cores: 1, 2, 4, 8 */
	uint8_t qdepth;     /* 1..8 */
	uint8_t nthreads;   /* 1..4 */
	kfault_plan_t plan; /* installed before nrt_init */
	uint8_t nap;        /* memory access points, 0..KPROG_MAX_AP */
	struct {
		uint8_t thread; /* the run's logical thread id (0: main) */
		uint16_t point; /* after its point-th release (0..KPROG_AP_MAX_RELEASE) */
		uint8_t k;      /* its k-th heap or global access, 1..8 */
		bool every;     /* after each release from point on */
	} ap[KPROG_MAX_AP];
	uint32_t nops;
	kprog_op_t ops[KPROG_MAX_OPS];
	uint32_t blob_used;
	uint8_t blob[KPROG_MAX_BLOB];
	uint32_t nsched;
	uint8_t sched[KPROG_MAX_SCHED];
} kprog_t;

/* ---- the `what` selectors, named once ---------------------------------
 * X(IDENT, "name"), in value order from 0: the harness's enums (harness.h)
 * are the IDENTs, the text form prints and parses the names, and emit-c
 * writes the IDENTs.  The last of each list also stands for every larger
 * value. */
#define KPROG_STALE_WHATS(X)                                                                       \
	X(KH_STALE_EXEC, "exec")                                                                   \
	X(KH_STALE_IFMAP_COUNT, "ifmap_count")                                                     \
	X(KH_STALE_UNLOAD, "unload")                                                               \
	X(KH_STALE_PROFILING, "profiling")                                                         \
	X(KH_STALE_TENSOR_INFO, "tensor_info")                                                     \
	X(KH_STALE_VALID_IFMAP, "valid_ifmap")                                                     \
	X(KH_STALE_IO_COUNT, "io_count")                                                           \
	X(KH_STALE_SCHEDULE, "schedule")                                                           \
	X(KH_STALE_MAC_COUNT, "mac_count")
#define KPROG_BAD_WHATS(X)                                                                         \
	X(KH_BAD_EXEC_NO_INPUT, "exec_no_input")                                                   \
	X(KH_BAD_EXEC_NO_OUTPUT, "exec_no_output")                                                 \
	X(KH_BAD_TENSOR_INFO_NO_NAME, "tensor_info_no_name")                                       \
	X(KH_BAD_VALID_IFMAP_NO_RESULT, "valid_ifmap_no_result")                                   \
	X(KH_BAD_IFMAP_COUNT_NO_RESULT, "ifmap_count_no_result")                                   \
	X(KH_BAD_IO_COUNT_NO_RESULT, "io_count_no_result")                                         \
	X(KH_BAD_LOAD_NO_BYTES, "load_no_bytes")                                                   \
	X(KH_BAD_SCHEDULE_OTHER_CORE, "schedule_other_core")                                       \
	X(KH_BAD_SCHEDULE_NO_SEQ, "schedule_no_seq")                                               \
	X(KH_BAD_NC_INFO_NO_RESULT, "nc_info_no_result")
#define KPROG_NRT_META_WHATS(X)                                                                    \
	X(KH_NRT_NC_COUNT, "nc_count")                                                             \
	X(KH_NRT_TENSOR_INFO, "tensor_info")                                                       \
	X(KH_NRT_NULL_ARGS, "null_args")                                                           \
	X(KH_NRT_BAD_EXEC, "bad_exec")                                                             \
	X(KH_NRT_INFO_TWICE, "info_twice")                                                         \
	X(KH_NRT_COUNTS, "counts")
#define KPROG_NRT_CALLBACK_WHATS(X)                                                                \
	X(KH_CB_A, "a")                                                                            \
	X(KH_CB_B, "b")                                                                            \
	X(KH_CB_NULL, "null")

/* ---- field table (one row per kind; shared by decode/encode/print/parse) */
typedef struct kprog_field {
	const char *name; /* NULL: unused */
	int16_t min, max; /* semantic range */
} kprog_field_t;

typedef struct kprog_kind_info {
	const char *name;
	bool uses_slot; /* a0 is a model slot */
	kprog_field_t f[4];
} kprog_kind_info_t;

const kprog_kind_info_t *kprog_kind(unsigned kind);
int kprog_kind_lookup(const char *name);
/* A selector field's value (the `what` lists above): its name in the text
 * form, its C identifier for emit-c; NULL when field f of kind is not a
 * selector or the value is out of its range.  kprog_field_value: the
 * value a name gives, -1 for none. */
const char *kprog_field_name(unsigned kind, int f, int value);
const char *kprog_field_ident(unsigned kind, int f, int value);
int kprog_field_value(unsigned kind, int f, const char *name);
/* The binary form's kind byte: the kind a byte names, and the byte that
 * names a kind (the smallest one). */
unsigned kprog_kind_of_byte(uint8_t b);
uint8_t kprog_kind_byte(unsigned kind);

/* ---- decode.c / encode.c ---- */
/* Total: every byte string gives a program.  Never fails. */
void kprog_decode(const uint8_t *data, size_t size, kprog_t *p);
/* Bytes that decode to p (p must be in range, as decode and parse leave
 * it).  Returns the length, or the length needed if it exceeds cap. */
size_t kprog_encode(const kprog_t *p, uint8_t *out, size_t cap);
/* Semantic equality (what decode(encode(p)) must preserve). */
bool kprog_equal(const kprog_t *a, const kprog_t *b);

/* ---- print.c / parse.c ---- */
/* Writes the text form (NUL-terminated); returns the length snprintf
 * would. */
size_t kprog_print(const kprog_t *p, char *buf, size_t cap);
/* Parses the text form; -1 with a message in err (line number included). */
int kprog_parse(const char *text, kprog_t *p, char *err, size_t errlen);

/* ---- templates.c ---- */
/* Container bytes of a built-in template (built once, process lifetime,
 * outside the library's accounting). */
const uint8_t *kprog_template(unsigned tmpl, size_t *len);
const char *kprog_template_name(unsigned tmpl);

/* ---- minimize.c ---- */
/* Greedy delta debugging: drop ops, threads' ops, fault entries and
 * schedule bytes while pred still holds.  Returns the number of
 * successful reductions. */
typedef bool (*kprog_pred_fn)(const kprog_t *p, void *ctx);
unsigned kprog_minimize(kprog_t *p, kprog_pred_fn pred, void *ctx);

/* ---- shape.c ---- */
/* The program targets (model_parse is not one), NULL-terminated. */
extern const char *const kprog_targets[];
/* Shapes a decoded program the way the named fuzz target does before it
 * runs it (threads, mode, fault plan).  Returns 0, or -1 for an unknown
 * target. */
int kprog_shape(const char *target, kprog_t *p);

#endif /* KPROG_H */

/* ==== fuzz/oracle/model.h ==== */
/*
 * model.h - the oracle's reference model of the facade's sequential
 * semantics: what a container says about its tensors (the description a
 * program's operations are checked against) and, for every operation,
 * the status its arguments and the model's state predict.  Pure functions
 * of their arguments: no library call, no scheduling point.
 *
 * Adding an operation: its prediction goes here (oracle_predict_<op>),
 * next to its row in prog/kinds.c and its kh_<op> in harness/harness.c
 * (docs/harness.md).
 */
#ifndef KORACLE_MODEL_H
#define KORACLE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_experimental.h> /* NRT_TENSOR_NAME_MAX */

#define ORACLE_MAX_IO           16
#define ORACLE_MAX_TENSOR_BYTES 65536

/* A container's inputs then outputs, each in model order (the order the
 * device computes in, docs/device.md).  The facade answers tensor info in
 * another order: each side by name (the seed's walk of its IO maps, which
 * are keyed by name); by_name[k] is the model-order index of the facade's
 * k-th tensor (inputs then outputs, as the model order). */
typedef struct oracle_io {
	bool parsed;
	bool ok; /* small enough for the harness to execute */
	uint32_t nkbin, n_in, n_out;
	char name[ORACLE_MAX_IO][NRT_TENSOR_NAME_MAX];
	uint64_t size[ORACLE_MAX_IO];
	uint8_t by_name[ORACLE_MAX_IO];
} oracle_io_t;

/* What the reference model says about one op's status. */
typedef struct oracle_expect {
	bool known;      /* a prediction exists */
	NRT_STATUS want; /* the predicted status */
	NRT_STATUS alt;  /* a second acceptable status (e.g. QUEUE_FULL), or want */
} oracle_expect_t;

/* Describes a container (kmodel_parse; allocates through kalloc, so call
 * it before a fault plan is installed).  An unparsable one is !parsed. */
void oracle_describe(oracle_io_t *io, const uint8_t *bytes, size_t len);

/* The predictions, one per operation kind that reaches the library. */
oracle_expect_t oracle_predict_ok(void);
oracle_expect_t oracle_predict_load(const oracle_io_t *io, unsigned nc, int start, int count);
/* Where an execution's input or output tensors are (the oracle's own
 * names; the harness maps its operands onto them). */
typedef enum oracle_place {
	ORACLE_PLACE_DEV = 0,
	ORACLE_PLACE_HOST,
	ORACLE_PLACE_VIRT,    /* VIRTUAL with a host buffer attached */
	ORACLE_PLACE_MISSING, /* the first tensor left out of the set */
} oracle_place_t;

/* device_only: an explicit SCHEDULE, or EXEC in implicit-async mode */
oracle_expect_t oracle_predict_exec(const oracle_io_t *io, oracle_place_t in, oracle_place_t out,
                                    bool device_only);
oracle_expect_t oracle_predict_is_completed(bool bogus);
/* nrta_error_tracker_create on core 0, or (bogus) on one no device has */
oracle_expect_t oracle_predict_tracker(bool bogus);
oracle_expect_t oracle_predict_get_sequence(unsigned nc, int lnc, int xu, int queue);
oracle_expect_t oracle_predict_tensor_info(const oracle_io_t *io, bool is_input, uint32_t idx);
/* sel: a model tensor index (inputs then outputs), 6 a bogus name, 7 NULL;
 * *name is the name to ask about, *valid what the answer must be */
oracle_expect_t oracle_predict_is_valid_ifmap(const oracle_io_t *io, unsigned sel,
                                              const char **name, bool *valid);
oracle_expect_t oracle_predict_stale(void);
oracle_expect_t oracle_predict_badargs(void);

/* Where a model loaded with (start, count) runs: count cores from start,
 * or from wherever the library placed it when start is -1. */
typedef struct oracle_placement {
	int start;
	uint32_t count;
} oracle_placement_t;

/* The placement a successful load with these arguments made. */
oracle_placement_t oracle_predict_placement(const oracle_io_t *io, int start, int count);
/* kmgr_get_nc_info's answer (start, count) on an nc-core device is that
 * placement. */
bool oracle_placement_is(oracle_placement_t want, unsigned nc, uint32_t start, uint32_t count);

#endif /* KORACLE_MODEL_H */

/* ==== fuzz/oracle/oracle.h ==== */
/*
 * oracle.h - the fuzz oracle, one module for the fuzz runner, the tests
 * kmgr-repro emits and the stress binaries (which use its observer, ids,
 * reference count and accounting checks through the failure hook):
 *   - the reference model (model.h): container descriptions and the
 *     status every operation's arguments predict;
 *   - the checks (check.c, values.c): outputs follow the compute formula, metadata
 *     matches the container, nothing executes on a model after its unload
 *     returned (the device execution observer and its per-handle table),
 *     ids only grow and are never reused, reference counts are back to
 *     zero at quiescence, after close the device and the host accounting
 *     are back where they started, and the model_parse target's
 *     canonical-form check;
 *   - the history (oracle.c): every per-model history of a concurrent run
 *     is linearizable, and single-threaded statuses match the model.
 *
 * A violation prints one stable line "ORACLE: <invariant>: <details>" (the
 * crash signature), lets the report hook add context, and aborts; unless a
 * failure hook is installed (oracle_set_fail_hook), which takes it instead.
 * Bookkeeping uses the quiet atomics of ksched.h: the oracle never adds a
 * scheduling point, so it never changes the interleavings a run explores.
 */
#ifndef KORACLE_H
#define KORACLE_H

#include <stdbool.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_async.h>


#define ORACLE_MAX_HIST 256

/* ---- failures (check.c) ---- */
/* Called after the ORACLE line, before abort(): adds context (the program,
 * the test's name). */
typedef void (*oracle_report_fn)(void *ctx, const char *invariant, const char *msg);
void oracle_set_report(oracle_report_fn fn, void *ctx);
/* The failure hook.  NULL (the default: the fuzz runner, the emitted
 * tests): oracle_fail prints the ORACLE line, calls the report hook and
 * aborts.  Installed (the stress binaries, which count a failure, stop the
 * run and report at the end): oracle_fail hands it the violation instead,
 * from whichever thread found it (a device thread, for the observer), and
 * returns; the check goes on as if it had held.  Set it before the run. */
typedef void (*oracle_fail_fn)(void *ctx, const char *invariant, const char *msg);
void oracle_set_fail_hook(oracle_fail_fn fn, void *ctx);
/* Returns only when a failure hook is installed.  Never a tail call: the
 * frame of the check that failed stays under it in the abort's stack, which
 * is the crash signature (tools/kmgr-repro/signature.c). */
#if defined(__has_attribute)
#if __has_attribute(not_tail_called)
#define ORACLE_NOT_TAIL_CALLED __attribute__((not_tail_called))
#endif
#endif
#ifndef ORACLE_NOT_TAIL_CALLED
#define ORACLE_NOT_TAIL_CALLED
#endif
ORACLE_NOT_TAIL_CALLED __attribute__((format(printf, 2, 3))) void oracle_fail(const char *invariant,
                                                                              const char *fmt, ...);

/* ---- a run (check.c) ---- */
/* Before nrt_init: the host accounting baseline and a fresh id window. */
void oracle_begin(void);
/* The device execution observer (after nrt_init, until before close). */
void oracle_attach(void);
void oracle_detach(void);

/* ---- the per-handle table the observer keeps (check.c) ---- */
#define ORACLE_NN_SLOTS 4096
typedef struct oracle_nn {
	ks_atomic_t id;        /* which H_NN this entry tracks */
	ks_atomic_t h_model;   /* learned from its first SUBMIT */
	ks_atomic_t unloaded;  /* 0, or the unload clock once its unload returned */
	ks_atomic_t inflight;  /* SUBMIT - COMPLETE - CANCEL */
	ks_atomic_t submits;   /* SUBMIT */
	ks_atomic_t completes; /* COMPLETE + CANCEL */
} oracle_nn_t;

/* A successful load returned id: it is above every id issued before and
 * was never handed out (ids only grow), kmgr_last_nn_id() has reached it
 * (a read lock: two scheduling points, the same in every caller), and the
 * observer tracks it from now on (call before the id is published). */
void oracle_note_loaded(uint32_t id);
oracle_nn_t *oracle_nn_get(uint32_t id); /* NULL when the slot moved on */
/* kmgr_unload_nn(id) returned success: from now on a SUBMIT or START of
 * id is a finding.  drained: also check that nothing of id is in flight
 * (the sync paths; the explicit-async work may outlive an async unload,
 * seed §4).  Returns the unload clock it was marked with. */
int64_t oracle_note_unloaded(uint32_t id, bool drained);
/* How many unloads have returned so far: an id whose 'unloaded' is <= a
 * value read before an operation was gone before it. */
int64_t oracle_unload_clock(void);
/* Executions submitted and not yet completed or cancelled, all models. */
int64_t oracle_inflight(void);

/* ---- end-of-run checks (check.c) ---- */
/* Every loaded model's reference count is back to zero (quiescence).  With
 * faults_possible a failed snapshot allocation skips the check. */
void oracle_check_refcounts(bool faults_possible);
/* After nrt_close: device accounting zero, host back to the baseline. */
void oracle_check_closed(const char *when);

/* ---- values against the reference model (values.c) ---- */
/* The outputs of a successful execution follow the compute formula (the
 * oracle's own, values.c); in[] the bytes each input held, out[] the
 * output tensors (NULL: left out), both in model order. */
void oracle_check_outputs(unsigned op, const oracle_io_t *io, const uint8_t *const *in,
                          nrt_tensor_t *const *out);
/* idx: inputs then outputs, each side in the facade's (name) order. */
void oracle_check_tensor_info(unsigned op, const oracle_io_t *io, uint32_t idx, const char *name,
                              size_t size);
void oracle_check_ifmap_valid(unsigned op, const char *name, bool valid, bool want);
void oracle_check_counts(unsigned op, const oracle_io_t *io, uint32_t n_in, bool with_out,
                         uint32_t n_out);
/* kmgr_get_nc_info's answer (start, count) for model id: the placement
 * its load asked for on an nc-core device, and the start core the harness
 * found right after the load (a placement never moves). */
void oracle_check_nc_info(unsigned op, uint32_t id, oracle_placement_t want, unsigned nc,
                          uint32_t found_start, uint32_t start, uint32_t count);
/* nrta_error_tracker_get_list answered rc, list[0..n) (docs/api-contract.md,
 * "Error trackers"), for a tracker that holds the one execution seq: the
 * failures completed since the previous call, so seq at most once over
 * all calls (*reported: named before; set when named now), with a status
 * other than success, and only when it may fail (may_fail: a fault, an
 * unload or a close could end it); faults: a kalloc fault may refuse the
 * list (NRT_RESOURCE). */
void oracle_check_error_list(unsigned op, nrta_seq_t seq, NRT_STATUS rc, const nrta_error_t *list,
                             size_t n, bool may_fail, bool faults, bool *reported);
/* The model_parse target: an accepted container re-serializes to exactly
 * its bytes, a failed parse hands out no model, the live kalloc count is
 * unchanged; then the same with the trailing CRC-32 recomputed, so that
 * mutations reach the field checks behind the checksum. */
void oracle_model_parse(const uint8_t *data, size_t size);

/* ---- the history (oracle.c) ---- */
/* What a history record is to the linearizability check. */
typedef enum oracle_rec {
	ORACLE_LOAD,
	ORACLE_UNLOAD,
	ORACLE_UNLOAD_ALL,
	ORACLE_EXEC,
	ORACLE_READ, /* any other op on a model: it sees it or not */
} oracle_rec_t;

/* Per run: empty history. */
void oracle_history_begin(void);
/* A logical clock for op intervals (no scheduling point). */
uint64_t oracle_tick(void);
/* An op (what: its name) on model id (0 for none) over [t0, t1]. */
void oracle_record(unsigned op, oracle_rec_t rec, const char *what, uint32_t id, uint64_t t0,
                   uint64_t t1, NRT_STATUS status);
/* nrt_close as an operation (the api_nrt target): its interval on the
 * clock (the first close of the run; a later one finds nothing to close). */
void oracle_close_begin(uint64_t t0);
void oracle_close_end(uint64_t t1);
/* A public call over [t0, t1] answered got: NRT_CLOSED only once a close
 * had begun, and nothing else once one had returned before t0.  Returns
 * true for NRT_CLOSED (the caller checks nothing more). */
bool oracle_check_lifecycle(unsigned op, const char *what, NRT_STATUS got, uint64_t t0,
                            uint64_t t1);
/* A call that answers in every state (nrt_init, the core counts) over
 * [t0, t1]: one that ended before any close began must have given the
 * runtime's answer (up_ok), one that began after nrt_close returned the
 * closed one (closed_ok), one that overlaps a close either. */
void oracle_check_either(unsigned op, const char *what, bool up_ok, bool closed_ok, uint64_t t0,
                         uint64_t t1);
/* Per-model linearizability of the recorded history (at quiescence). */
void oracle_check_history(void);
/* A status against a prediction: exact where the reference model applies
 * (single-threaded, no fault fired since the op began); otherwise the
 * argument contract only (a call whose arguments demand an error never
 * succeeds; without faults only the predicted statuses or INVALID_HANDLE,
 * a concurrent unload, come back). */
void oracle_check_status(unsigned op, const char *what, NRT_STATUS got, oracle_expect_t e,
                         bool exact, bool faults);

/* ---- lifecycle.c: the frame of a checked run (harness and stress) ---- */
/* nrt_init, then the observer attached (only on success). */
NRT_STATUS oracle_open(void);
/* Waits until no execution is in flight on the device. */
void oracle_quiesce(void);
/* nrt_close; true when a fault fired inside it. */
bool oracle_close_runtime(void);

/* Silences the library's log (fuzz inputs are wrong on purpose, and the
 * chatter costs exec/s) except the lines it writes just before aborting on
 * a broken invariant of its own, which keep a crash readable, and the lines
 * of a broken invariant it survives, which fail the run (oracle_fail:
 * inflight-on-removed-model, staged-at-close).  Lives here,
 * below the targets: the sink runs on library threads, and under TSan only
 * the target files carry libFuzzer's (racy) counters. */
void oracle_log_quiet(void); /* logfilter.c */
/* Error lines that answered the harness's own misuse, counted instead of
 * printed (a line at exit says how many). */
uint64_t oracle_log_misuse_lines(void);

#endif /* KORACLE_H */

/* ==== fuzz/harness/harness.h ==== */
/*
 * harness.h - the one harness behind the fuzz runner and the regression
 * tests kmgr-repro emits: a fresh runtime per run, model slots shared by
 * the logical threads, tensor slots per thread, the executions still
 * pending, and every operation of a program as a call with named
 * arguments:
 *
 *   kh_load(0, 0, &(kh_args_t){.slot = 1, .model = 0, .start = -1, .count = -1});
 *   kh_exec(3, 1, &(kh_args_t){.slot = 1, .in = KPROG_PLACE_DEV, .repeat = 2});
 *
 * (op index, logical thread, arguments named as the fields of the op's row
 * in prog/kinds.c).  The fuzz runner (harness/run.c) interprets a kprog_t
 * into these calls; an emitted test makes them in straight lines.  Both
 * therefore make the same library calls and the same scheduling points
 * in the same order, which is what lets a test spend the program's
 * decision bytes as the fuzz target did.  Every check is the oracle's
 * (oracle/oracle.h); the harness only reports through kh_hooks_t.
 */
#ifndef KHARNESS_H
#define KHARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt.h>


/* A container a program loads: its bytes and the oracle's description
 * (kh_run describes every entry not yet described, before the runtime
 * starts; a caller may keep described entries across runs). */
typedef struct kh_model {
	const uint8_t *bytes;
	size_t len;
	bool described;
	oracle_io_t io;
} kh_model_t;

/* The arguments of every operation, by the field names of prog/kinds.c
 * (LOAD names its container by index in kh_config_t.models, not by
 * template).  An operation reads only its own fields.  One list, KH_ARGS:
 * the struct's members and kh_field_offset's table; a kinds.c field it
 * lacks stops the runner at its first program (run.c). */
/* clang-format off */
#define KH_ARGS(X) \
	X(slot) X(model) X(start) X(count)          /* load (slot: every model op) */ \
	X(in) X(out) X(repeat) X(queue)             /* exec, schedule */ \
	X(which) X(bogus)                           /* is_completed */ \
	X(lnc) X(xu)                                /* get_sequence (and queue) */ \
	X(index) X(name) X(io) X(on) X(mac) X(what) /* metadata, stale, badargs */ \
	X(site) X(nth)                              /* fault */ \
	X(ts) X(place) X(size) X(off) X(len)        /* tensor slots */ \
	X(tmpl)                                     /* load: the program's, unused here */ \
	X(old)                                      /* the handle the last nrt_unload retired */ \
	X(fw) X(visible) X(core) X(inflight)        /* nrt_init: framework, env forms */ \
	X(cb)                                       /* nrt_callback: a, b or NULL */
/* clang-format on */

#define KH_MEMBER(f) int16_t f;
typedef struct kh_args {
	KH_ARGS(KH_MEMBER)
} kh_args_t;
#undef KH_MEMBER

/* The `what` selectors (prog/prog.h lists them, with their names):
 * STALE's, the entry point an unloaded id goes to; BADARGS's, the wrong
 * argument a loaded model is called with; nrt_meta's, the public call on
 * the slot's handle.  The last of each also stands for every larger value. */
#define KH_ENUM(id, name) id,
enum kh_stale_call { KPROG_STALE_WHATS(KH_ENUM) };
enum kh_bad_call { KPROG_BAD_WHATS(KH_ENUM) };
enum kh_nrt_meta_what { KPROG_NRT_META_WHATS(KH_ENUM) };
enum kh_nrt_callback { KPROG_NRT_CALLBACK_WHATS(KH_ENUM) };
#undef KH_ENUM

/* One operation: op is its index in the program (reports, tensor data),
 * thread the logical thread that runs it. */
typedef void (*kh_op_fn)(unsigned op, unsigned thread, const kh_args_t *a);

/* kh_<name> for every kind (the kinds table's names). */
void kh_load(unsigned op, unsigned thread, const kh_args_t *a);
void kh_unload(unsigned op, unsigned thread, const kh_args_t *a);
void kh_unload_all(unsigned op, unsigned thread, const kh_args_t *a);
void kh_exec(unsigned op, unsigned thread, const kh_args_t *a);
void kh_schedule(unsigned op, unsigned thread, const kh_args_t *a);
void kh_is_completed(unsigned op, unsigned thread, const kh_args_t *a);
void kh_get_sequence(unsigned op, unsigned thread, const kh_args_t *a);
void kh_tensor_info(unsigned op, unsigned thread, const kh_args_t *a);
void kh_is_valid_ifmap(unsigned op, unsigned thread, const kh_args_t *a);
void kh_ifmap_count(unsigned op, unsigned thread, const kh_args_t *a);
void kh_set_profiling(unsigned op, unsigned thread, const kh_args_t *a);
void kh_stale(unsigned op, unsigned thread, const kh_args_t *a);
void kh_fault(unsigned op, unsigned thread, const kh_args_t *a);
void kh_talloc(unsigned op, unsigned thread, const kh_args_t *a);
void kh_tfree(unsigned op, unsigned thread, const kh_args_t *a);
void kh_twrite(unsigned op, unsigned thread, const kh_args_t *a);
void kh_tread(unsigned op, unsigned thread, const kh_args_t *a);
void kh_badargs(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nc_info(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_load(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_unload(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_exec(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_meta(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_schedule(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_close(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_init(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_tracker(unsigned op, unsigned thread, const kh_args_t *a);
void kh_nrt_callback(unsigned op, unsigned thread, const kh_args_t *a);

/* The same, indexed by kind (the interpreter's dispatch). */
extern const kh_op_fn kh_ops[KOP__COUNT];
/* Where the field named name (a kinds-table field) lives in kh_args_t:
 * its offset, or -1. */
int kh_field_offset(const char *name);

/* What the harness reports; any hook may be NULL. */
typedef struct kh_hooks {
	/* after each call that reached the library */
	void (*op_done)(void *ctx, unsigned op, const char *what, NRT_STATUS rc);
	/* an oracle failure, after its ORACLE line (oracle_set_report) */
	oracle_report_fn report;
	void *ctx;
} kh_hooks_t;

typedef struct kh_config {
	bool async;         /* implicit-async mode */
	unsigned nc;        /* emulated cores */
	unsigned qdepth;    /* async queue depth */
	unsigned nthreads;  /* logical threads, 1..KPROG_MAX_THREADS */
	kfault_plan_t plan; /* installed before nrt_init (n == 0: none) */
	kh_model_t *models;
	unsigned nmodels;
	/* runs logical thread t's operations (thread 0 on the caller), with
	 * thread_ctx: the caller's program, never a global of the harness's */
	void (*thread)(void *thread_ctx, unsigned t);
	void *thread_ctx;
	bool free_running;    /* real threads instead of the controlled scheduler */
	const uint8_t *sched; /* controlled: the decision bytes */
	size_t nsched;
	/* controlled: memory access points (ks_ctl_config_t.ap) */
	unsigned nap;
	struct {
		uint8_t thread;
		uint32_t point, k;
		bool every; /* after each release from point on */
	} ap[KS_CTL_MAX_AP];
	uint64_t max_steps; /* controlled: the hang bound (0 = the default) */
	bool reference;     /* single-threaded: statuses checked exactly */
	bool async_mix;     /* implicit async: run explicit SCHEDULE ops too */
	/* the library's whole log, as the process set it up (kprog run -v,
	 * KMGR_FUZZ_VERBOSE); otherwise every run has the oracle's log filter
	 * (oracle_log_quiet):
	 * broken-invariant lines fail the run, the answers to the harness's own
	 * misuse are counted, not printed */
	bool full_log;
	kh_hooks_t hooks;
} kh_config_t;

typedef struct kh_result {
	bool started;           /* nrt_init succeeded */
	uint32_t ops_run;       /* ops that reached the library */
	uint32_t ops_ok;        /* ... and returned NRT_SUCCESS */
	uint32_t execs_checked; /* successful executions whose outputs were verified */
	uint64_t steps;         /* controlled: scheduling points passed */
	uint64_t preemptions;
	const uint8_t *trace; /* controlled: the decisions taken (until the next run) */
	size_t ntrace;
} kh_result_t;

void kh_config_init(kh_config_t *c);
/* Runs the program on a fresh runtime: nrt_init with its config and fault
 * plan, the threads, everything joined and completed, the oracle's end
 * checks, every tensor freed, nrt_close and the accounting check.  The
 * oracle aborts on a violation.  Returns 0, or -1 when the runtime did not
 * start without a fault plan to blame (a bad config: not a finding). */
int kh_run(const kh_config_t *c, kh_result_t *r);

#endif /* KHARNESS_H */

/* ==== fuzz/harness/state.h ==== */
/*
 * state.h - the harness's own seams (not harness.h's interface): the
 * tensors of one execution, the pending executions, the model and tensor
 * slots, the run's state every operation file shares (kh_state, state.c),
 * and the helpers the operation files call: iob.c's tensors, state.c's
 * bookkeeping and the facade guard, nrt_model.c's handle checks.
 */
#ifndef KHARNESS_STATE_H
#define KHARNESS_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_async.h>


#define KH_MAX_IO      ORACLE_MAX_IO
#define KH_MAX_PENDING 160
#define KH_MAX_SEQS    8
#define KH_MAX_JOBS    1024
#define KH_MAX_GONE    64
#define KH_MAX_REGS    64           /* callback registrations: kh_run's, one an op */
#define KH_MAX_ANON    KPROG_MAX_OPS /* nrt_execute submissions (one an op) */
#define KH_BOGUS_SEQ   ((nrta_seq_t)0x7fff << NRTA_SEQ_XU_SHIFT | 0x123)

/* The tensors of one execution: a model's inputs then outputs. */
typedef struct kh_iob {
	const oracle_io_t *io;
	uint32_t seed;
	nrt_tensor_t *t[KH_MAX_IO];
	void *buf[KH_MAX_IO];     /* attached buffers of VIRT tensors */
	uint8_t *data[KH_MAX_IO]; /* what each input holds */
	nrt_tensor_set_t *in, *out;
} kh_iob_t;

/* An execution whose tensors stay in use after its op returned. */
typedef struct kh_pend {
	bool used, sched;
	bool unchecked; /* nrt_schedule: no status to verify the outputs by */
	/* nrt_tracker: the error tracker it was scheduled with (destroyed at
	 * quiescence), and whether a get_list named it as failed */
	nrta_error_tracker_t *tracker;
	bool reported;
	uint32_t model; /* nrt_tracker: the model's facade id */
	unsigned op;
	uint64_t job_first, job_last;
	nrta_seq_t seq;
	NRT_STATUS ret; /* written by the device at completion */
	kh_iob_t b;
} kh_pend_t;

typedef struct kh_slot {
	bool used;
	uint32_t id, start_nc, stale;
	const oracle_io_t *io;
	oracle_placement_t place; /* what its load asked for */
	nrt_model_t *m;           /* nrt_load's handle (NULL: loaded by id) */
	nrt_model_t *old_m;       /* the handle of the slot's last unloaded model */
	uint32_t old_id;
	bool old_retired; /* old_m's nrt_unload succeeded: it must stay dead */
} kh_slot_t;

typedef struct kh_tslot {
	nrt_tensor_t *t;
	void *buf;
} kh_tslot_t;

typedef struct kh_state {
	const kh_config_t *c;
	bool reference;  /* statuses predicted exactly */
	bool faults;     /* a fault may fire: error statuses are not findings */
	ks_mutex_t lock; /* slots and pend reservation */
	kh_slot_t slot[KPROG_SLOTS];
	kh_pend_t pend[KH_MAX_PENDING];
	kh_tslot_t ts[KPROG_MAX_THREADS][KPROG_TSLOTS];
	nrta_seq_t seqs[KPROG_MAX_THREADS][KH_MAX_SEQS];
	unsigned nseq[KPROG_MAX_THREADS];
	unsigned pend_hw; /* pend[] entries ever used this run */
	ks_atomic_t ops_run, ops_ok, checked, next_job;
	ks_atomic_t job_hw; /* the highest job id a callback reported */
	/* per job id (completion.c): its callbacks, those with a status other
	 * than success, what its submission did (KH_JOB_*), its model */
	ks_atomic_t job_calls[KH_MAX_JOBS], job_ok[KH_MAX_JOBS], job_failed[KH_MAX_JOBS];
	ks_atomic_t job_sub[KH_MAX_JOBS], job_model[KH_MAX_JOBS];
	/* the tick before each job's submission, and the registration whose
	 * callback called it first (+1; 0: none) */
	ks_atomic_t job_t0[KH_MAX_JOBS], job_reg[KH_MAX_JOBS];
	/* nrt_execute's executions (job id 0): callbacks, and per submission
	 * its tick and how many its status says were queued, at least and at
	 * most; how many of the callbacks each registration made */
	ks_atomic_t anon_calls, anon_n;
	ks_atomic_t anon_t0[KH_MAX_ANON], anon_lo[KH_MAX_ANON], anon_hi[KH_MAX_ANON];
	ks_atomic_t anon_reg[KH_MAX_REGS];
	/* callback registrations (registration 0: kh_run's, before nrt_init):
	 * each one's callback (KH_CB_* + 1), the ticks before and after its
	 * call; the latest tick after an nrt_close op returned (0: none) */
	ks_atomic_t next_reg, reg_cb[KH_MAX_REGS], reg_t0[KH_MAX_REGS], reg_t1[KH_MAX_REGS];
	ks_atomic_t close_t1;
	uint32_t gone[KH_MAX_GONE]; /* models unloaded this run (under lock) */
	unsigned ngone;
	ks_atomic_t unload_all;    /* an unload_all succeeded: every model may be gone */
	ks_atomic_t facade;        /* ops in a direct facade call (kh_facade_enter) */
	ks_atomic_t closing;       /* an nrt_close op began: no more direct facade calls */
	ks_atomic_t close_faulted; /* a fault fired inside an nrt_close op */
} kh_state_t;

/* The run's state (state.c). */
extern kh_state_t kh_state;

/* ---- iob.c: the tensors of one execution ---------------------------------- */

NRT_STATUS kh_iob_build(kh_iob_t *b, const oracle_io_t *io, uint32_t seed, int in_place,
                        int out_place, int nc);
void kh_iob_free(kh_iob_t *b);
void kh_iob_verify(kh_iob_t *b, unsigned op);

/* ---- state.c: bookkeeping ------------------------------------------------- */

/* An operand's placement (prog's numbering) as the oracle names it: the
 * same order, checked at compile time. */
_Static_assert(KPROG_PLACE_DEV == (int)ORACLE_PLACE_DEV &&
                   KPROG_PLACE_HOST == (int)ORACLE_PLACE_HOST &&
                   KPROG_PLACE_VIRT == (int)ORACLE_PLACE_VIRT &&
                   KPROG_PLACE_MISSING == (int)ORACLE_PLACE_MISSING,
               "prog's and the oracle's placements in one order");

static inline oracle_place_t kh_place(int16_t place)
{
	return (oracle_place_t)place;
}

bool kh_get_slot(unsigned s, kh_slot_t *out);
bool kh_get_runnable(unsigned s, kh_slot_t *out);
void kh_keep_loaded(const kh_args_t *a, H_NN h, const oracle_io_t *io, nrt_model_t *m);
void kh_clear_slot_if(unsigned s, uint32_t id, bool retired);
bool kh_facade_enter(void);
void kh_facade_leave(void);

/* kh_<name>, a direct facade op: the body that follows the macro, inside
 * the guard above. */
#define KH_FACADE_OP(name)                                                                         \
	static void name##_in(unsigned op, unsigned thread, const kh_args_t *a);                   \
	void name(unsigned op, unsigned thread, const kh_args_t *a)                                \
	{                                                                                          \
		if (!kh_facade_enter())                                                            \
			return;                                                                    \
		name##_in(op, thread, a);                                                          \
		kh_facade_leave();                                                                 \
	}                                                                                          \
	static void name##_in

kh_pend_t *kh_pend_build(const kh_slot_t *s, unsigned op, int in, int out);
void kh_pend_put(kh_pend_t *pe);
void kh_done(unsigned op, const char *what, NRT_STATUS rc);
void kh_check(unsigned op, const char *what, NRT_STATUS rc, oracle_expect_t e, uint64_t fired0);
uint64_t kh_finish(unsigned op, const char *what, oracle_rec_t rec, uint32_t id, uint64_t t0,
                   NRT_STATUS rc, oracle_expect_t e, uint64_t fired0);

/* A model operation under way: the slot it found, when it began. */
typedef struct kh_call {
	unsigned op;
	const char *what;
	uint64_t fired0, t0;
	kh_slot_t s;
} kh_call_t;

bool kh_begin(kh_call_t *c, unsigned op, const char *what, int slot, bool runnable);
void kh_end(const kh_call_t *c, oracle_rec_t rec, NRT_STATUS rc, oracle_expect_t e);

/* ---- nrt_model.c, nrt_meta.c: the public API through a handle ------------- */

bool kh_get_handle(const kh_args_t *a, kh_slot_t *s, nrt_model_t **m);
oracle_expect_t kh_handle_expect(const kh_args_t *a, const kh_slot_t *s, oracle_expect_t e);
bool kh_nrt_end(unsigned op, const char *what, oracle_rec_t rec, uint32_t id, uint64_t t0,
                NRT_STATUS rc, oracle_expect_t e, uint64_t fired0);
void kh_check_retired(unsigned op, const char *what, const kh_args_t *a, const kh_slot_t *s,
                      NRT_STATUS rc);
void kh_nrt_want(unsigned op, const char *what, NRT_STATUS got, NRT_STATUS want);
bool kh_tracker_list(kh_pend_t *pe, bool may_fail);

/* ---- completion.c: exactly-once accounting of implicit-async executions -- */

/* What submitting job id did: queued (the implicit-async worker owes it
 * one callback) or not (it owes none). */
enum { KH_JOB_NONE, KH_JOB_QUEUED, KH_JOB_REFUSED };
/* t0: the tick taken before the submission began */
void kh_job_submitted(uint64_t job, uint32_t model, bool queued, uint64_t t0);
/* nrt_execute(_repeat) of repeat executions, begun at tick t0, answered rc
 * (job id 0). */
void kh_anon_submitted(int repeat, NRT_STATUS rc, uint64_t t0);
/* kh_run's registration (registration 0, callback a), before nrt_init. */
void kh_register_first(void);
/* At quiescence: every pending execution completed, outputs verified. */
void kh_finish_pending(bool closed);
/* After nrt_close joined the device threads: every job accounted for. */
void kh_check_completions(bool closed);
void kh_clear_jobs(void);

/* ---- tensor.c ------------------------------------------------------------- */

void kh_tslot_free(kh_tslot_t *ts);

#endif /* KHARNESS_STATE_H */

/* ==== fuzz/harness/regression.h ==== */
/*
 * regression.h - what a test kmgr-repro emit-c writes declares, and the
 * main() that runs it (regression.c).  A test is only its program: one
 * function per logical thread, straight-line kh_<kind>() calls, and one
 * declaration,
 *
 *   const kh_regression_t kh_test = {.sched = {0x00, 0x02}, .nsched = 2,
 *           .name = "fuzz_1_x", .target = "concurrent", .nc = 2, .qdepth = 4,
 *           .nthreads = 2, .threads = {thread_0, thread_1}};
 *
 * The config, the report hook, the run and the verdict are here, once.
 * Only the tests include this (through harness/embed.c): it defines main().
 */
#ifndef KREGRESSION_H
#define KREGRESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


/* An inline container: a LOAD names it as .model = KPROG_NTMPL + its
 * index in kh_regression_t.blobs (a template by its number, as the
 * program does). */
typedef struct kh_blob {
	const uint8_t *bytes;
	size_t len;
} kh_blob_t;

typedef struct kh_regression {
	const char *name;   /* printed with PASS, and FAIL after an ORACLE line */
	const char *target; /* the fuzz target the program came from */
	bool async;         /* the program's config */
	unsigned nc, qdepth, nthreads;
	const char *plan; /* its fault plan (kfault_plan_parse), NULL: none */
	/* logical thread t runs threads[t] (NULL: a thread without operations) */
	void (*threads[KPROG_MAX_THREADS])(void);
	const kh_blob_t *blobs; /* inline containers */
	unsigned nblobs;
	size_t nsched; /* the decision bytes */
	uint8_t sched[KPROG_MAX_SCHED];
	unsigned nap; /* memory access points (prog.h) */
	struct {
		uint8_t thread;
		uint32_t point, k;
	} ap[KPROG_MAX_AP];
	/* bit i: ap[i] fires after each release from its point on (a field of
	 * its own, so that tests emitted before it compile unchanged) */
	uint8_t ap_every;
} kh_regression_t;

/* The test's declaration. */
extern const kh_regression_t kh_test;

/* Runs t once under the controlled scheduler with its decision bytes:
 * prints "NAME: PASS (N scheduling points, M preemptions)" and returns 0 on
 * a correct library; the oracle (or a sanitizer) aborts while the bug is
 * present.  2: the test itself is unusable (a bad fault plan or thread
 * count); 1: the runtime did not start without a fault to blame. */
int kh_regression_main(const kh_regression_t *t);

#endif /* KREGRESSION_H */

/* ==== fuzz/oracle/model.c ==== */
/*
 * model.c - the reference model of model.h: container descriptions and
 * the status each operation's arguments predict.
 */
#include <string.h>

#include <nrt/nrt_async.h>


/* by_name[from..from+n): that side's indices sorted by name, strcmp's
 * order (the facade's qsort, the seed's std::map of std::string: both
 * compare bytes as unsigned char).  An insertion sort: at most 16. */
static void sort_side(oracle_io_t *io, uint32_t from, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t j = k;

		while (j > 0 &&
		       strcmp(io->name[io->by_name[from + j - 1]], io->name[from + k]) > 0) {
			io->by_name[from + j] = io->by_name[from + j - 1];
			j--;
		}
		io->by_name[from + j] = (uint8_t)(from + k);
	}
}

void oracle_describe(oracle_io_t *io, const uint8_t *bytes, size_t len)
{
	kmodel_t *m = NULL;
	uint32_t n = 0;

	memset(io, 0, sizeof(*io));
	if (kmodel_parse(bytes, len, &m) != NRT_SUCCESS)
		return;
	io->parsed = true;
	io->nkbin = m->nkbin;
	io->n_in = kmodel_input_count(m);
	io->n_out = kmodel_output_count(m);
	io->ok = io->n_in + io->n_out <= ORACLE_MAX_IO;
	for (int pass = 0; pass < 2 && io->ok; pass++)
		for (uint32_t i = 0; i < m->n_tensors; i++) {
			const kmodel_tensor_t *t = &m->tensors[i];

			if ((t->usage == NRT_TENSOR_USAGE_INPUT) != (pass == 0))
				continue;
			memcpy(io->name[n], t->name, NRT_TENSOR_NAME_MAX);
			io->size[n] = t->size;
			if (t->size == 0 || t->size > ORACLE_MAX_TENSOR_BYTES)
				io->ok = false;
			n++;
		}
	if (io->ok) {
		sort_side(io, 0, io->n_in);
		sort_side(io, io->n_in, io->n_out);
	}
	kmodel_free(m);
}

static oracle_expect_t expect2(NRT_STATUS want, NRT_STATUS alt)
{
	return (oracle_expect_t){true, want, alt};
}

static oracle_expect_t expect1(NRT_STATUS want)
{
	return expect2(want, want);
}

oracle_expect_t oracle_predict_ok(void)
{
	return expect1(NRT_SUCCESS);
}

/* A bad container may also be refused as an unsupported version. */
static oracle_expect_t load_status(const oracle_io_t *io, unsigned nc, int start, int count)
{
	uint32_t c;

	if (!io || !io->parsed)
		return expect1(NRT_INVALID);
	if (start < -1 || count < -1 || count == 0)
		return expect1(NRT_INVALID);
	c = count == -1 ? io->nkbin : (uint32_t)count;
	if (c > nc || (start >= 0 && (uint32_t)start > nc - c))
		return expect1(NRT_LOAD_NOT_ENOUGH_NC);
	if (io->nkbin == 0 || (io->nkbin != 1 && io->nkbin != c))
		return expect1(NRT_INVALID);
	return expect1(NRT_SUCCESS);
}

oracle_expect_t oracle_predict_load(const oracle_io_t *io, unsigned nc, int start, int count)
{
	oracle_expect_t e = load_status(io, nc, start, count);

	if (e.want == NRT_INVALID)
		e.alt = NRT_UNSUPPORTED_NEFF_VERSION;
	return e;
}

static bool is_host(oracle_place_t place)
{
	return place == ORACLE_PLACE_HOST || place == ORACLE_PLACE_VIRT;
}

/* What the arguments alone decide for an execution: a missing tensor is
 * a bind error; the device-only paths refuse host tensors and may answer
 * QUEUE_FULL. */
oracle_expect_t oracle_predict_exec(const oracle_io_t *io, oracle_place_t in, oracle_place_t out,
                                    bool device_only)
{
	bool missing =
	    (in == ORACLE_PLACE_MISSING && io->n_in) || (out == ORACLE_PLACE_MISSING && io->n_out);
	bool host = (is_host(in) && io->n_in) || (is_host(out) && io->n_out);

	if ((device_only && host) || missing)
		return expect1(NRT_INVALID);
	return expect2(NRT_SUCCESS, device_only ? NRT_QUEUE_FULL : NRT_SUCCESS);
}

oracle_expect_t oracle_predict_is_completed(bool bogus)
{
	return expect1(bogus ? NRT_INVALID : NRT_SUCCESS);
}

oracle_expect_t oracle_predict_tracker(bool bogus)
{
	return expect1(bogus ? NRT_INVALID : NRT_SUCCESS);
}

oracle_expect_t oracle_predict_get_sequence(unsigned nc, int lnc, int xu, int queue)
{
	return expect1(lnc >= 0 && (unsigned)lnc < nc && xu == NRTA_XU_COMPUTE && queue == 0
	                   ? NRT_SUCCESS
	                   : NRT_INVALID);
}

oracle_expect_t oracle_predict_tensor_info(const oracle_io_t *io, bool is_input, uint32_t idx)
{
	return expect1(idx < (is_input ? io->n_in : io->n_out) ? NRT_SUCCESS : NRT_INVALID);
}

oracle_expect_t oracle_predict_is_valid_ifmap(const oracle_io_t *io, unsigned sel,
                                              const char **name, bool *valid)
{
	*name = sel == 7                                ? NULL
	        : sel < 6 && sel < io->n_in + io->n_out ? io->name[sel]
	                                                : "no-such-ifmap";
	*valid = sel < 6 && sel < io->n_in;
	return expect1(*name ? NRT_SUCCESS : NRT_INVALID);
}

oracle_expect_t oracle_predict_stale(void)
{
	return expect1(NRT_INVALID_HANDLE);
}

oracle_expect_t oracle_predict_badargs(void)
{
	return expect1(NRT_INVALID);
}

/* count -1: a core per subgraph (load_status's c). */
oracle_placement_t oracle_predict_placement(const oracle_io_t *io, int start, int count)
{
	return (oracle_placement_t){start, count == -1 ? io->nkbin : (uint32_t)count};
}

bool oracle_placement_is(oracle_placement_t want, unsigned nc, uint32_t start, uint32_t count)
{
	if (count != want.count || count > nc || start > nc - count)
		return false;
	return want.start < 0 || start == (uint32_t)want.start;
}

/* ==== fuzz/oracle/check.c ==== */
/*
 * check.c - the oracle's checks on the run as a whole (oracle.h): failure
 * reports, the device execution observer and its per-handle table, ids,
 * reference counts and accounting (values.c checks what one operation
 * answered).  One copy, used by the fuzz runner (fuzz/harness), the tests
 * kmgr-repro emits (which embed it) and the stress binaries (through the
 * failure hook).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>


/* Ids handed out since oracle_begin, one bit each: the first 16M of a run
 * (a stress run's whole life, a fuzz program's few). */
#define ORACLE_ID_WORDS (1u << 18)

static struct {
	oracle_report_fn report;
	void *report_ctx;
	oracle_fail_fn fail;
	void *fail_ctx;
	int64_t base_host_allocs, base_host_bytes;
	ks_atomic_t max_id; /* process-wide: the largest id seen */
	uint32_t base_id;   /* the largest id issued before this run */
	ks_atomic_t id_hw;  /* the highest id word set this run */
	ks_atomic_t clock;  /* unloads that returned */
	ks_atomic_t inflight;
	oracle_nn_t nn[ORACLE_NN_SLOTS];
	ks_atomic_t ids[ORACLE_ID_WORDS];
} oc;

void oracle_set_report(oracle_report_fn fn, void *ctx)
{
	oc.report = fn;
	oc.report_ctx = ctx;
}

void oracle_set_fail_hook(oracle_fail_fn fn, void *ctx)
{
	oc.fail = fn;
	oc.fail_ctx = ctx;
}

void oracle_fail(const char *invariant, const char *fmt, ...)
{
	/* on the stack: with a failure hook, two threads may fail at once */
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (oc.fail) {
		oc.fail(oc.fail_ctx, invariant, msg);
		return;
	}
	/* the first line is the crash signature: keep it stable */
	fprintf(stderr, "ORACLE: %s: %s\n", invariant, msg);
	fflush(stderr);
	if (oc.report)
		oc.report(oc.report_ctx, invariant, msg);
	fflush(stderr);
	abort();
}

void oracle_begin(void)
{
	int64_t hw = ks_atomic_load_quiet(&oc.id_hw);

	for (int64_t w = 0; w <= hw && w < (int64_t)ORACLE_ID_WORDS; w++)
		ks_atomic_reset(&oc.ids[w]);
	ks_atomic_reset(&oc.id_hw);
	oc.base_id = (uint32_t)ks_atomic_load_quiet(&oc.max_id);
	oc.base_host_allocs = kalloc_live_count();
	oc.base_host_bytes = kalloc_live_bytes();
}

/* ---- the observer --------------------------------------------------- */

oracle_nn_t *oracle_nn_get(uint32_t id)
{
	oracle_nn_t *e = &oc.nn[id % ORACLE_NN_SLOTS];

	return (uint32_t)ks_atomic_peek(&e->id) == id ? e : NULL;
}

/* Reset the counters before the id, so an observer that matches the id
 * sees a clean entry.  Only the loader of id writes here. */
static void nn_track(uint32_t id)
{
	oracle_nn_t *e = &oc.nn[id % ORACLE_NN_SLOTS];

	ks_atomic_store_quiet(&e->id, 0);
	ks_atomic_store_quiet(&e->h_model, 0);
	ks_atomic_store_quiet(&e->unloaded, 0);
	ks_atomic_store_quiet(&e->inflight, 0);
	ks_atomic_store_quiet(&e->submits, 0);
	ks_atomic_store_quiet(&e->completes, 0);
	ks_atomic_store_quiet(&e->id, id);
}

/* Sets id's bit; false when it was set already. */
static bool id_first_time(uint32_t id)
{
	uint64_t k = (uint64_t)id - oc.base_id - 1, w = k / 64;
	int64_t bit = (int64_t)(1ull << (k % 64)), cur;

	if (w >= ORACLE_ID_WORDS)
		return true; /* beyond the window: only the "above base" check */
	ks_atomic_max_quiet(&oc.id_hw, (int64_t)w);
	cur = ks_atomic_load_quiet(&oc.ids[w]);
	while (!(cur & bit) && !ks_atomic_cas_quiet(&oc.ids[w], &cur, cur | bit))
		;
	return !(cur & bit);
}

void oracle_note_loaded(uint32_t id)
{
	/* concurrent loads may return out of id order, so: above every id of
	 * earlier runs, and distinct from every id of this one */
	if (id <= oc.base_id)
		oracle_fail("id-reused", "load returned id %u, ids up to %u were issued before", id,
		            oc.base_id);
	if (!id_first_time(id))
		oracle_fail("id-reused", "load returned id %u twice", id);
	ks_atomic_max_quiet(&oc.max_id, id);
	if (id > kmgr_last_nn_id())
		oracle_fail("id-order", "load returned id %u beyond last_nn_id %u", id,
		            kmgr_last_nn_id());
	nn_track(id);
}

int64_t oracle_note_unloaded(uint32_t id, bool drained)
{
	oracle_nn_t *e = oracle_nn_get(id);
	int64_t h_model, left, clock;

	if (!e)
		return 0;
	h_model = ks_atomic_peek(&e->h_model);
	left = ks_atomic_peek(&e->inflight);
	if (drained && left != 0)
		oracle_fail("unload-not-drained",
		            "unload of model %u returned with %lld execution(s) still in flight "
		            "(observer: %lld submitted, %lld completed)",
		            id, (long long)left, (long long)ks_atomic_peek(&e->submits),
		            (long long)ks_atomic_peek(&e->completes));
	if (drained && h_model && kbl_model_inflight((H_MODEL)h_model) != 0)
		oracle_fail("unload-not-drained",
		            "unload of model %u returned with kbl_model_inflight = %lld", id,
		            (long long)kbl_model_inflight((H_MODEL)h_model));
	clock = ks_atomic_add_quiet(&oc.clock, 1) + 1;
	ks_atomic_store_quiet(&e->unloaded, clock);
	return clock;
}

int64_t oracle_unload_clock(void)
{
	return ks_atomic_peek(&oc.clock);
}

int64_t oracle_inflight(void)
{
	return ks_atomic_peek(&oc.inflight);
}

static const char *ev_name(emu_exec_event_t ev)
{
	static const char *const names[] = {"SUBMIT", "START", "COMPLETE", "CANCEL"};

	return (unsigned)ev < 4 ? names[ev] : "other";
}

/* Runs on device threads: a submit or start of a model whose unload has
 * already returned is the use-after-unload the ref protocol forbids. */
static void oracle_observer(void *ctx, emu_exec_event_t ev, uint64_t h_model, uint32_t h_nn,
                            NRT_STATUS status)
{
	bool begins = ev == EMU_EXEC_SUBMIT || ev == EMU_EXEC_START;
	oracle_nn_t *e = oracle_nn_get(h_nn);

	(void)ctx;
	(void)status;
	if (ev == EMU_EXEC_SUBMIT)
		ks_atomic_add_quiet(&oc.inflight, 1);
	else if (!begins)
		ks_atomic_add_quiet(&oc.inflight, -1);
	if (!e)
		return;
	if (ev == EMU_EXEC_SUBMIT) {
		ks_atomic_add_quiet(&e->inflight, 1);
		ks_atomic_add_quiet(&e->submits, 1);
		if (!ks_atomic_peek(&e->h_model))
			ks_atomic_store_quiet(&e->h_model, (int64_t)h_model);
	} else if (!begins) {
		ks_atomic_add_quiet(&e->inflight, -1);
		ks_atomic_add_quiet(&e->completes, 1);
	}
	if (begins && ks_atomic_peek(&e->unloaded))
		oracle_fail("exec-after-unload",
		            "%s of model %u (h_model %llu) after its unload returned", ev_name(ev),
		            h_nn, (unsigned long long)h_model);
}

void oracle_attach(void)
{
	ks_atomic_reset(&oc.inflight);
	emu_set_exec_observer(oracle_observer, NULL);
}

void oracle_detach(void)
{
	emu_set_exec_observer(NULL, NULL);
}

/* ---- end-of-run checks ---------------------------------------------- */

void oracle_check_refcounts(bool faults_possible)
{
	H_NN *ids = NULL;
	uint32_t count = 0;

	if (kmgr_get_nns(&ids, &count) != NRT_SUCCESS) {
		if (!faults_possible)
			oracle_fail("refcount", "kmgr_get_nns failed at quiescence");
		return;
	}
	for (uint32_t i = 0; i < count; i++) {
		dlr_model *mod = db_get_nn_ref_count(ids[i]);
		int64_t ref;

		if (!mod) {
			oracle_fail("refcount", "model %u listed but not found", ids[i].id);
			continue;
		}
		ref = dlr_model_peek_ref_count(mod);
		nn_ref_decrement(mod);
		if (ref != 1)
			oracle_fail("refcount", "model %u has %lld references at quiescence",
			            ids[i].id, (long long)ref - 1);
	}
	kfree(ids);
}

void oracle_check_closed(const char *when)
{
	emu_accounting_t a;

	emu_get_accounting(&a);
	if (a.device_bytes || a.device_allocs || a.objects || a.staged_models || a.inflight_execs ||
	    a.async_marks)
		oracle_fail("leak-after-close",
		            "%s: device bytes %lld allocs %lld objects %lld staged %lld inflight "
		            "%lld async_marks %lld",
		            when, (long long)a.device_bytes, (long long)a.device_allocs,
		            (long long)a.objects, (long long)a.staged_models,
		            (long long)a.inflight_execs, (long long)a.async_marks);
	if (a.host_allocs != oc.base_host_allocs || a.host_bytes != oc.base_host_bytes)
		oracle_fail("leak-after-close",
		            "%s: host allocations %lld (%lld bytes), %lld (%lld) before the run",
		            when, (long long)a.host_allocs, (long long)a.host_bytes,
		            (long long)oc.base_host_allocs, (long long)oc.base_host_bytes);
}

void oracle_check_error_list(unsigned op, nrta_seq_t seq, NRT_STATUS rc, const nrta_error_t *list,
                             size_t n, bool may_fail, bool faults, bool *reported)
{
	if (rc != NRT_SUCCESS) {
		if (!(faults && rc == NRT_RESOURCE))
			oracle_fail("error-tracker",
			            "op %u: nrta_error_tracker_get_list answered %d", op, (int)rc);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (list[i].seq_id != seq) {
			oracle_fail("error-tracker",
			            "op %u: the list names sequence %llx, never scheduled with the "
			            "tracker (%llx was)",
			            op, (unsigned long long)list[i].seq_id,
			            (unsigned long long)seq);
			continue;
		}
		if (*reported)
			oracle_fail("error-tracker", "op %u: sequence %llx listed twice", op,
			            (unsigned long long)seq);
		if (list[i].error_code == NRT_SUCCESS)
			oracle_fail("error-tracker", "op %u: sequence %llx listed with success", op,
			            (unsigned long long)seq);
		else if (!may_fail)
			oracle_fail(
			    "error-tracker",
			    "op %u: sequence %llx listed as failed (%llu), though no fault, "
			    "unload or close could end it",
			    op, (unsigned long long)seq, (unsigned long long)list[i].error_code);
		*reported = true;
	}
}

/* ==== fuzz/oracle/values.c ==== */
/*
 * values.c - the oracle's checks on what one operation answered
 * (oracle.h): outputs against the compute formula, tensor metadata, counts
 * and core placement against the reference model, and the model_parse
 * target's check (a parse leaves no memory behind and an accepted
 * container re-serializes to its bytes).  Failures go through oracle_fail
 * (check.c).
 */
#include <stdlib.h>
#include <string.h>


/* ---- values against the reference model ----------------------------- */

/* The index of the first byte where a and b differ, or n.  No coverage
 * counters (KATTR_NO_COVERAGE): a comparison callback per byte was the
 * largest single cost of checking an execution. */
KATTR_NO_COVERAGE static uint64_t first_difference(const uint8_t *a, const uint8_t *b, uint64_t n)
{
	uint64_t k = 0;

	while (k < n && a[k] == b[k])
		k++;
	return k;
}

/* The compute formula of docs/device.md, written here once and never
 * taken from the device (lib/emu's own arithmetic would share its
 * mistakes): byte k of output j (outputs numbered from 0 in model order)
 * is j + 1 plus in_i[k mod size_i] over the inputs in model order, an
 * input of size 0 adding nothing, all mod 256.  A division per byte and
 * input: outputs the harness checks are at most 64 KiB, mostly a few
 * dozen bytes.  No coverage counters (see first_difference). */
KATTR_NO_COVERAGE static void formula(const oracle_io_t *io, const uint8_t *const *in, uint32_t j,
                                      uint8_t *out, uint64_t size)
{
	for (uint64_t k = 0; k < size; k++) {
		unsigned v = j + 1;

		for (uint32_t i = 0; i < io->n_in; i++)
			if (io->size[i])
				v += in[i][k % io->size[i]];
		out[k] = (uint8_t)v;
	}
}

/* Output i against the formula.  Template outputs fit the stack buffers;
 * only an inline model's large output takes the heap (two 64 KiB arrays
 * on every call made ASan poison and unpoison 128 KiB of stack shadow per
 * execution checked). */
static void check_output(unsigned op, const oracle_io_t *io, unsigned i, nrt_tensor_t *t,
                         const uint8_t *const *in)
{
	uint64_t size = io->size[i], k;
	uint8_t got_s[256], want_s[256];
	uint8_t *got = got_s, *want = want_s;

	if (size > sizeof(got_s)) {
		got = malloc(size);
		want = malloc(size);
		if (!got || !want)
			abort();
	}
	if (nrt_tensor_read(t, got, 0, size) != NRT_SUCCESS) {
		oracle_fail("exec-output", "op %u: output %s unreadable", op, io->name[i]);
		size = 0; /* a failure hook returned: nothing to compare */
	}
	formula(io, in, i - io->n_in, want, size);
	k = first_difference(got, want, size);
	if (k < size)
		oracle_fail("exec-output",
		            "op %u: output %s byte %llu is 0x%02x, the formula says 0x%02x", op,
		            io->name[i], (unsigned long long)k, got[k], want[k]);
	if (got != got_s) {
		free(got);
		free(want);
	}
}

void oracle_check_outputs(unsigned op, const oracle_io_t *io, const uint8_t *const *in,
                          nrt_tensor_t *const *out)
{
	for (uint32_t j = 0; j < io->n_out; j++)
		if (out[j])
			check_output(op, io, io->n_in + j, out[j], in);
}

/* idx in the facade's order (oracle_io_t.by_name). */
void oracle_check_tensor_info(unsigned op, const oracle_io_t *io, uint32_t idx, const char *name,
                              size_t size)
{
	uint32_t m = io->by_name[idx];

	if (strcmp(name, io->name[m]) || size != io->size[m])
		oracle_fail("metadata",
		            "op %u: tensor %u is '%s' of %zu bytes, the container (by name) says "
		            "'%s' of %llu",
		            op, idx, name, size, io->name[m], (unsigned long long)io->size[m]);
}

void oracle_check_ifmap_valid(unsigned op, const char *name, bool valid, bool want)
{
	if (valid != want)
		oracle_fail("metadata", "op %u: is_valid_ifmap('%s') = %d, the container says %d",
		            op, name, valid, want);
}

void oracle_check_counts(unsigned op, const oracle_io_t *io, uint32_t n_in, bool with_out,
                         uint32_t n_out)
{
	if (n_in != io->n_in || (with_out && n_out != io->n_out))
		oracle_fail("metadata", "op %u: %u inputs %u outputs, the container has %u and %u",
		            op, n_in, with_out ? n_out : io->n_out, io->n_in, io->n_out);
}

void oracle_check_nc_info(unsigned op, uint32_t id, oracle_placement_t want, unsigned nc,
                          uint32_t found_start, uint32_t start, uint32_t count)
{
	if (!oracle_placement_is(want, nc, start, count) || start != found_start)
		oracle_fail("nc-info",
		            "op %u: model %u runs on cores %u+%u; loaded as %d+%u, found at %u", op,
		            id, start, count, want.start, want.count, found_start);
}

/* ---- the model_parse target ------------------------------------------ */

static void parse_once(const uint8_t *data, size_t size)
{
	int64_t live = kalloc_live_count();
	kmodel_t *m = NULL;
	uint8_t *out = NULL;
	size_t len = 0;

	if (kmodel_parse(data, size, &m) == NRT_SUCCESS) {
		if (kmodel_serialize(m, &out, &len) != NRT_SUCCESS || len != size ||
		    memcmp(out, data, size) != 0)
			oracle_fail("model-canonical", "accepted bytes are not canonical");
		kfree(out);
		kmodel_free(m);
	} else if (m) {
		oracle_fail("model-failed-parse", "a failed parse handed out a model");
	}
	if (kalloc_live_count() != live)
		oracle_fail("model-leak", "live kalloc count changed by %lld",
		            (long long)(kalloc_live_count() - live));
}

void oracle_model_parse(const uint8_t *data, size_t size)
{
	uint8_t *fixed;
	uint32_t crc;

	parse_once(data, size);
	if (size < 4)
		return;
	/* an exact-size copy, so a read one past the end is still caught */
	fixed = malloc(size);
	if (!fixed)
		return;
	memcpy(fixed, data, size);
	crc = kmodel__crc32(fixed, size - 4);
	for (int i = 0; i < 4; i++)
		fixed[size - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
	parse_once(fixed, size);
	free(fixed);
}

/* ==== fuzz/oracle/oracle.c ==== */
/*
 * oracle.c - the oracle's history (oracle.h): every op on a model is
 * recorded with its interval on a logical clock, and at quiescence each
 * model's history must be linearizable; statuses against the reference
 * model's predictions.  Bookkeeping uses quiet atomics (no scheduling
 * point), so the oracle never changes the interleavings a run explores.
 */

typedef struct hrec {
	unsigned op;
	oracle_rec_t rec;
	const char *what;
	uint32_t id;
	uint64_t t0, t1;
	NRT_STATUS status;
} hrec_t;

static struct {
	ks_atomic_t clock;
	ks_atomic_t nhist;
	ks_atomic_t close_t0, close_t1; /* the first nrt_close op's interval, 0: none yet */
	hrec_t hist[ORACLE_MAX_HIST];
} oh;

void oracle_history_begin(void)
{
	ks_atomic_reset(&oh.clock);
	ks_atomic_reset(&oh.nhist);
	ks_atomic_reset(&oh.close_t0);
	ks_atomic_reset(&oh.close_t1);
}

/* Only the first close counts: a later one finds the runtime closed. */
void oracle_close_begin(uint64_t t0)
{
	if (!ks_atomic_load_quiet(&oh.close_t0))
		ks_atomic_store_quiet(&oh.close_t0, (int64_t)t0);
}

void oracle_close_end(uint64_t t1)
{
	if (!ks_atomic_load_quiet(&oh.close_t1))
		ks_atomic_store_quiet(&oh.close_t1, (int64_t)t1);
}

/* A close had returned before tick t. */
static bool oracle_closed_by(uint64_t t)
{
	int64_t t1 = ks_atomic_load_quiet(&oh.close_t1);

	return t1 && (uint64_t)t1 < t;
}

/* The contract (docs/api-contract.md): a call that began after nrt_close
 * returned answers NRT_CLOSED; NRT_CLOSED before any close began is as
 * wrong.  A call that overlaps the close may answer either way. */
bool oracle_check_lifecycle(unsigned op, const char *what, NRT_STATUS got, uint64_t t0, uint64_t t1)
{
	int64_t c0 = ks_atomic_load_quiet(&oh.close_t0);

	if (got == NRT_CLOSED && (!c0 || (uint64_t)c0 > t1))
		oracle_fail("closed-early", "op %u %s answered NRT_CLOSED, no nrt_close had begun",
		            op, what);
	if (got != NRT_CLOSED && oracle_closed_by(t0))
		oracle_fail("after-close",
		            "op %u %s began after nrt_close returned and answered %d", op, what,
		            (int)got);
	return got == NRT_CLOSED;
}

void oracle_check_either(unsigned op, const char *what, bool up_ok, bool closed_ok, uint64_t t0,
                         uint64_t t1)
{
	int64_t c0 = ks_atomic_load_quiet(&oh.close_t0);

	if (!up_ok && (!c0 || (uint64_t)c0 > t1))
		oracle_fail("status-mismatch",
		            "op %u %s: not the running runtime's answer, and no nrt_close had "
		            "begun",
		            op, what);
	if (!closed_ok && oracle_closed_by(t0))
		oracle_fail("after-close",
		            "op %u %s began after nrt_close returned; its answer is not the "
		            "closed runtime's",
		            op, what);
	if (!up_ok && !closed_ok)
		oracle_fail("status-mismatch",
		            "op %u %s: neither the running nor the closed "
		            "runtime's answer",
		            op, what);
}

uint64_t oracle_tick(void)
{
	return (uint64_t)ks_atomic_add_quiet(&oh.clock, 1) + 1;
}

void oracle_record(unsigned op, oracle_rec_t rec, const char *what, uint32_t id, uint64_t t0,
                   uint64_t t1, NRT_STATUS status)
{
	int64_t i = ks_atomic_add_quiet(&oh.nhist, 1);

	if (i >= ORACLE_MAX_HIST)
		return;
	oh.hist[i] = (hrec_t){op, rec, what, id, t0, t1, status};
}

void oracle_check_status(unsigned op, const char *what, NRT_STATUS got, oracle_expect_t e,
                         bool exact, bool faults)
{
	if (!e.known || got == e.want || got == e.alt)
		return;
	if (!exact && got == NRT_SUCCESS)
		oracle_fail("status-mismatch", "op %u %s succeeded, its arguments demand %d", op,
		            what, (int)e.want);
	if (!exact && (faults || got == NRT_INVALID_HANDLE))
		return;
	oracle_fail("status-mismatch", "op %u %s returned %d, the reference model says %d", op,
	            what, (int)got, (int)e.want);
}

static bool is_unload(const hrec_t *h)
{
	return h->rec == ORACLE_UNLOAD || h->rec == ORACLE_UNLOAD_ALL;
}

/* The strong unload of id (an UNLOAD that succeeded), else the weak one
 * (UNLOAD_ALL took it), else NULL; two strong ones are a double unload. */
static const hrec_t *find_unload(uint32_t id, size_t n)
{
	const hrec_t *strong = NULL, *weak = NULL;

	for (size_t i = 0; i < n; i++) {
		const hrec_t *h = &oh.hist[i];

		if (h->id != id || !is_unload(h) || h->status != NRT_SUCCESS)
			continue;
		if (h->rec == ORACLE_UNLOAD_ALL) {
			weak = h;
			continue;
		}
		if (strong)
			oracle_fail("double-unload", "model %u unloaded by op %u and op %u", id,
			            strong->op, h->op);
		strong = h;
	}
	return strong ? strong : weak;
}

static bool loaded_here(uint32_t id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (oh.hist[i].id == id && oh.hist[i].rec == ORACLE_LOAD &&
		    oh.hist[i].status == NRT_SUCCESS)
			return true;
	return false;
}

/* An UNLOAD_ALL is recorded once with id 0 as well: it may take models
 * loaded while it ran, which the harness's before/after probes can miss. */
static bool wildcard_unload_before(uint64_t t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (oh.hist[i].id == 0 && oh.hist[i].rec == ORACLE_UNLOAD_ALL && oh.hist[i].t0 < t)
			return true;
	return false;
}

/* An unload of id that began before t, whatever it answered: nrt_unload
 * claims the handle first ("being unloaded": INVALID_HANDLE to everyone
 * else) and gives it back only if the facade's unload fails (another
 * framework's UNLOAD_ALL took the model meanwhile), so a failed attempt
 * explains an INVALID_HANDLE it overlapped. */
static bool unload_attempt_before(uint32_t id, uint64_t t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (oh.hist[i].id == id && oh.hist[i].rec == ORACLE_UNLOAD && oh.hist[i].t0 < t)
			return true;
	return false;
}

/* Linearizability is local: check each model on its own.  A model's ops
 * are reads except its one unload, so an order exists iff every op that
 * saw the model (SUCCESS) started before the unload ended, and every op
 * that did not (INVALID_HANDLE) ended after the unload started. */
static void check_one(const hrec_t *h, const hrec_t *u, size_t n)
{
	if (h->rec == ORACLE_LOAD || h == u || h->rec == ORACLE_UNLOAD_ALL)
		return;
	if (!loaded_here(h->id, n))
		return;
	if (h->status == NRT_SUCCESS && u && h->t0 > u->t1)
		oracle_fail(h->rec == ORACLE_EXEC ? "exec-after-unload" : "not-linearizable",
		            "op %u (%s) on model %u succeeded but started after its unload (op "
		            "%u) returned",
		            h->op, h->what, h->id, u->op);
	if (h->status == NRT_INVALID_HANDLE && (!u || h->t1 < u->t0) &&
	    !wildcard_unload_before(h->t1, n) && !unload_attempt_before(h->id, h->t1, n))
		oracle_fail("not-linearizable",
		            "op %u (%s) on model %u answered INVALID_HANDLE while it was loaded",
		            h->op, h->what, h->id);
}

void oracle_check_history(void)
{
	size_t n = (size_t)ks_atomic_peek(&oh.nhist);

	if (n > ORACLE_MAX_HIST)
		n = ORACLE_MAX_HIST;
	for (size_t i = 0; i < n; i++) {
		if (!oh.hist[i].id)
			continue;
		check_one(&oh.hist[i], find_unload(oh.hist[i].id, n), n);
	}
}

/* ==== fuzz/oracle/lifecycle.c ==== */
/*
 * lifecycle.c - the frame of every checked run, the same for the fuzz
 * harness and the stress binaries: the runtime up with the execution
 * observer attached, quiescence before the refcount check, and a close
 * that says whether a fault fired inside it (a close a fault cut short
 * may leave what it could not unload: the caller then skips the leak
 * check).  The checks themselves stay with their callers, which order
 * them differently (oracle.h says what each checks).
 */
#include <nrt/nrt.h>


NRT_STATUS oracle_open(void)
{
	NRT_STATUS rc = nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "");

	if (rc == NRT_SUCCESS)
		oracle_attach();
	return rc;
}

/* Polled with a sleep: a scheduling point at which, under the controlled
 * scheduler, the device's threads run to completion. */
void oracle_quiesce(void)
{
	while (emu_inflight_execs() != 0)
		ks_usleep(50);
}

bool oracle_close_runtime(void)
{
	uint64_t fired = kfault_fired();

	nrt_close();
	return kfault_fired() != fired;
}

/* ==== fuzz/oracle/logfilter.c ==== */
/*
 * logfilter.c - the fuzz targets' log filter (oracle_log_quiet): the
 * library's log is silenced except
 *   - the lines it writes just before aborting on a broken invariant of
 *     its own, which keep a crash readable (printed);
 *   - the lines that report a broken invariant and go on (a model removed
 *     from the device with executions in flight, model records still
 *     staged at close): each is an oracle failure with its own signature;
 * and the lines that answer the harness's own deliberate misuse (a
 * tensor-info array freed twice, on purpose) are the expected answer, not
 * news: counted, not printed, the count in one line at exit.  Warnings
 * (the drain's "still waiting", normal under load) are never kept.
 */
#include <stdio.h>
#include <stdlib.h>


/* Not strstr: libFuzzer hooks strstr and records its arguments in tables
 * that are not thread-safe, and this runs on library threads.  No coverage
 * either: a byte-by-byte scan of log text would only feed the fuzzer
 * features about the wording of messages. */
KATTR_NO_COVERAGE static bool contains(const char *s, const char *w)
{
	for (; *s; s++) {
		size_t k = 0;

		while (w[k] && s[k] == w[k])
			k++;
		if (!w[k])
			return true;
	}
	return false;
}

/* No coverage here or in keep_line: whether a format is scanned depends on
 * the cache below, i.e. on what earlier inputs of the process logged, and
 * the filter's work says nothing about the facade (ctest cov_stable; the
 * AFL++ allowlist leaves this file out for the same reason). */
enum { LINE_DROP, LINE_PRINT, LINE_MISUSE, LINE_BROKEN };

/* The broken invariants the library reports and survives: a word of the
 * format, the signature. */
static const struct {
	const char *word, *invariant;
} broken[] = {
    {"executions in flight", "inflight-on-removed-model"},
    {"still staged", "staged-at-close"},
};

/* The answers to the harness's own misuse (harness/nrt_meta.c's
 * kh_nrt_info_twice frees an array twice and checks for NRT_INVALID). */
static const char *const misuse[] = {"nrt_free_model_tensor_info: not an array"};

KATTR_NO_COVERAGE static int classify_fmt(const char *fmt)
{
	static const char *const keep[] = {"assertion failed", "without a mark", "below zero",
	                                   "outstanding",      "freed twice",    "USE-AFTER-FREE",
	                                   "DEADLOCK",         "abort"};

	for (size_t i = 0; i < sizeof(misuse) / sizeof(misuse[0]); i++)
		if (contains(fmt, misuse[i]))
			return LINE_MISUSE;
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
		if (contains(fmt, broken[i].word))
			return LINE_BROKEN;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (contains(fmt, keep[i]))
			return LINE_PRINT;
	return LINE_DROP;
}

static ks_atomic_t misuse_lines;

/* The library's error lines a run keeps: those that report a broken
 * invariant.  Chosen by the format string, before the line is formatted,
 * and remembered by its address (a format is a string literal): every
 * failing call logs, and scanning each format for eight words was still
 * a fiftieth of a run.  An entry is one atomic word, address << 2 | class,
 * because free-running runs log from several threads; a lost race only
 * costs a rescan. */
KATTR_NO_COVERAGE static bool keep_line(klog_level_t level, const char *fmt)
{
	static ks_atomic_t seen[256];
	int64_t key = (int64_t)((uint64_t)(uintptr_t)fmt << 2);
	/* Fibonacci hashing of the address, as the scheduler's site cache
	 * (lib/sched/ctl.c): under ASan literals lie 32 or 64 bytes apart, and
	 * the low bits alone would use one slot in four or eight */
	ks_atomic_t *e = &seen[((uint64_t)(uintptr_t)fmt * 0x9E3779B97F4A7C15ull) >> 56];
	int64_t v;
	int cls;

	if (level != KLOG_ERROR)
		return false;
	v = ks_atomic_peek(e);
	if ((v & ~(int64_t)3) == key) {
		cls = (int)(v & 3);
	} else {
		cls = classify_fmt(fmt);
		ks_atomic_store_quiet(e, key | cls);
	}
	if (cls == LINE_MISUSE)
		ks_atomic_add_quiet(&misuse_lines, 1);
	return cls == LINE_PRINT || cls == LINE_BROKEN;
}

/* A kept line: printed; one that reports a broken invariant is also the
 * run's failure (on whichever thread logged it: the stack under the abort
 * is the library's, which is the signature's frame). */
KATTR_NO_COVERAGE static void quiet_sink(void *ctx, klog_level_t level, const char *line)
{
	(void)ctx;
	(void)level;
	fprintf(stderr, "kmgr error: %s\n", line);
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
		if (contains(line, broken[i].word))
			oracle_fail(broken[i].invariant, "the library logged: %s", line);
}

uint64_t oracle_log_misuse_lines(void)
{
	return (uint64_t)ks_atomic_peek(&misuse_lines);
}

static void misuse_summary(void)
{
	uint64_t n = oracle_log_misuse_lines();

	if (n)
		fprintf(stderr,
		        "kmgr log: %llu error line(s) answered the harness's own misuse "
		        "(not shown)\n",
		        (unsigned long long)n);
}

void oracle_log_quiet(void)
{
	static bool once;

	klog_set_filter(keep_line);
	klog_set_sink(quiet_sink, NULL);
	if (!once)
		atexit(misuse_summary);
	once = true;
}

/* ==== fuzz/harness/state.c ==== */
/*
 * state.c - the harness's bookkeeping: the run's state (kh_state), the
 * model slots, the facade guard that keeps direct facade calls off a
 * close, the pending executions, and the counting, recording and checking
 * every operation ends with. */
#include <string.h>


kh_state_t kh_state = {.lock = KS_MUTEX_INITIALIZER};

bool kh_get_slot(unsigned s, kh_slot_t *out)
{
	ks_mutex_lock(&kh_state.lock);
	*out = kh_state.slot[s];
	ks_mutex_unlock(&kh_state.lock);
	return out->used;
}

/* A model loaded into slot s (handle m for nrt_load's): the slot's
 * unloaded handle and stale id stay. */
static void kh_publish(unsigned s, uint32_t id, uint32_t start, const oracle_io_t *io,
                       oracle_placement_t place, nrt_model_t *m)
{
	kh_slot_t *sl = &kh_state.slot[s];

	ks_mutex_lock(&kh_state.lock);
	sl->used = true;
	sl->id = id;
	sl->start_nc = start;
	sl->io = io;
	sl->place = place;
	sl->m = m;
	ks_mutex_unlock(&kh_state.lock);
}

/* A load (by id or through nrt_load, handle m) succeeded with id h: the
 * oracle learns the id, and the slot gets the model with the start core
 * the facade reports and the placement the load asked for. */
void kh_keep_loaded(const kh_args_t *a, H_NN h, const oracle_io_t *io, nrt_model_t *m)
{
	uint32_t start = 0, cnt = 0;

	oracle_note_loaded(h.id);
	if (kmgr_get_nc_info(h, &start, &cnt) != NRT_SUCCESS)
		start = 0;
	kh_publish((unsigned)a->slot, h.id, start, io,
	           oracle_predict_placement(io, a->start, a->count), m);
}

/* A loaded model the harness can execute. */
bool kh_get_runnable(unsigned s, kh_slot_t *out)
{
	return kh_get_slot(s, out) && out->io->ok;
}

/* Model id left slot s (retired: through nrt_unload, whose handle must
 * stay dead; an unload by id leaves an nrt_load's record live). */
void kh_clear_slot_if(unsigned s, uint32_t id, bool retired)
{
	kh_slot_t *sl = &kh_state.slot[s];

	ks_mutex_lock(&kh_state.lock);
	/* whether or not the slot still holds it (another thread may have
	 * loaded over it): its queued executions may now be cancelled */
	if (kh_state.ngone < KH_MAX_GONE)
		kh_state.gone[kh_state.ngone++] = id;
	if (sl->used && sl->id == id) {
		sl->used = false;
		sl->stale = id;
		if (sl->m) {
			sl->old_m = sl->m;
			sl->old_id = id;
			sl->old_retired = retired;
			sl->m = NULL;
		}
	}
	ks_mutex_unlock(&kh_state.lock);
}

/*
 * Direct facade calls and nrt_close never overlap: a framework that calls
 * the facade by id stops before the runtime closes (the facade has no
 * closed state; kmgr_destroy frees its registry), so every op that calls
 * the facade directly counts itself in, the nrt_close op waits for the
 * count to drain, and after it those ops do nothing.  Public calls are not
 * held: racing close is what they are for.  Quiet atomics: no scheduling
 * point, so programs without a close run exactly as before.
 */
bool kh_facade_enter(void)
{
	ks_atomic_add_quiet(&kh_state.facade, 1);
	if (!ks_atomic_load_quiet(&kh_state.closing))
		return true;
	ks_atomic_add_quiet(&kh_state.facade, -1);
	return false;
}

void kh_facade_leave(void)
{
	ks_atomic_add_quiet(&kh_state.facade, -1);
}

static kh_pend_t *kh_pend_get(void)
{
	kh_pend_t *pe = NULL;

	ks_mutex_lock(&kh_state.lock);
	for (unsigned i = 0; i < KH_MAX_PENDING && !pe; i++)
		if (!kh_state.pend[i].used) {
			pe = &kh_state.pend[i];
			memset(pe, 0, sizeof(*pe));
			pe->used = true;
			if (i >= kh_state.pend_hw)
				kh_state.pend_hw = i + 1;
		}
	ks_mutex_unlock(&kh_state.lock);
	return pe;
}

void kh_pend_put(kh_pend_t *pe)
{
	kh_iob_free(&pe->b);
	ks_mutex_lock(&kh_state.lock);
	pe->used = false;
	ks_mutex_unlock(&kh_state.lock);
}

/* A pending entry with the tensors of an execution of slot s. */
kh_pend_t *kh_pend_build(const kh_slot_t *s, unsigned op, int in, int out)
{
	kh_pend_t *pe = kh_pend_get();

	if (!pe)
		return NULL;
	if (kh_iob_build(&pe->b, s->io, op, in, out, (int)s->start_nc)) {
		kh_pend_put(pe);
		return NULL;
	}
	return pe;
}

void kh_done(unsigned op, const char *what, NRT_STATUS rc)
{
	ks_atomic_add_quiet(&kh_state.ops_run, 1);
	if (rc == NRT_SUCCESS)
		ks_atomic_add_quiet(&kh_state.ops_ok, 1);
	if (kh_state.c->hooks.op_done)
		kh_state.c->hooks.op_done(kh_state.c->hooks.ctx, op, what, rc);
}

/* The reference model's verdict where it has one (single-threaded, no
 * fault fired since the op began); the argument contract in every run. */
void kh_check(unsigned op, const char *what, NRT_STATUS rc, oracle_expect_t e, uint64_t fired0)
{
	oracle_check_status(op, what, rc, e, kh_state.reference && kfault_fired() == fired0,
	                    kh_state.faults);
}

/* An op on model id that began at t0 returned rc: counted, recorded in
 * the oracle's history, checked.  Returns the tick it ended at. */
uint64_t kh_finish(unsigned op, const char *what, oracle_rec_t rec, uint32_t id, uint64_t t0,
                   NRT_STATUS rc, oracle_expect_t e, uint64_t fired0)
{
	uint64_t t1 = oracle_tick();

	kh_done(op, what, rc);
	oracle_record(op, rec, what, id, t0, t1, rc);
	kh_check(op, what, rc, e, fired0);
	return t1;
}

/* Begins op on a model slot (runnable: one the harness can execute);
 * false when the slot holds no such model. */
bool kh_begin(kh_call_t *c, unsigned op, const char *what, int slot, bool runnable)
{
	c->op = op;
	c->what = what;
	c->fired0 = kfault_fired();
	if (!(runnable ? kh_get_runnable((unsigned)slot, &c->s)
	               : kh_get_slot((unsigned)slot, &c->s)))
		return false;
	c->t0 = oracle_tick();
	return true;
}

/* The library returned rc: counted, recorded, checked against e. */
void kh_end(const kh_call_t *c, oracle_rec_t rec, NRT_STATUS rc, oracle_expect_t e)
{
	kh_finish(c->op, c->what, rec, c->s.id, c->t0, rc, e, c->fired0);
}

/* ==== fuzz/harness/iob.c ==== */
/*
 * iob.c - the tensors of one execution: a model's inputs, filled with a
 * pattern the op's index seeds, and its outputs, in the placements the
 * op names; the oracle verifies the outputs against the inputs. */
#include <stdlib.h>
#include <string.h>

#include <nrt/nrt.h>


/* No coverage counters on byte loops over tensor data (KATTR_NO_COVERAGE). */
KATTR_NO_COVERAGE static void kh_fill_pattern(uint8_t *p, uint64_t n, uint8_t first, uint8_t step)
{
	for (uint64_t k = 0; k < n; k++)
		p[k] = (uint8_t)(first + k * step);
}

void kh_iob_free(kh_iob_t *b)
{
	if (b->in)
		nrt_destroy_tensor_set(&b->in);
	if (b->out)
		nrt_destroy_tensor_set(&b->out);
	for (unsigned i = 0; i < KH_MAX_IO; i++) {
		if (b->t[i])
			nrt_tensor_free(&b->t[i]);
		free(b->buf[i]);
		free(b->data[i]);
	}
	memset(b, 0, sizeof(*b));
}

static NRT_STATUS kh_make_tensor(kh_iob_t *b, unsigned i, int place, int nc)
{
	uint64_t size = b->io->size[i];
	const char *name = b->io->name[i];
	NRT_STATUS rc;

	if (place == KPROG_PLACE_DEV || place == KPROG_PLACE_HOST)
		return nrt_tensor_allocate(place == KPROG_PLACE_DEV ? NRT_TENSOR_PLACEMENT_DEVICE
		                                                    : NRT_TENSOR_PLACEMENT_HOST,
		                           nc, size, name, &b->t[i]);
	rc = nrt_tensor_allocate_empty(name, &b->t[i]);
	if (rc)
		return rc;
	b->buf[i] = calloc(1, size);
	if (!b->buf[i])
		abort();
	return nrt_tensor_attach_buffer(b->t[i], b->buf[i], size);
}

static NRT_STATUS kh_fill_input(kh_iob_t *b, unsigned i)
{
	uint64_t size = b->io->size[i];

	b->data[i] = malloc(size);
	if (!b->data[i])
		abort();
	kh_fill_pattern(b->data[i], size, (uint8_t)(b->seed * 13u + i * 31u), 7);
	return nrt_tensor_write(b->t[i], b->data[i], 0, size);
}

/* One side (inputs or outputs); MISSING leaves out its first tensor, the
 * bind error edge. */
static NRT_STATUS kh_build_side(kh_iob_t *b, bool input, int place, int nc)
{
	uint32_t from = input ? 0 : b->io->n_in;
	uint32_t n = input ? b->io->n_in : b->io->n_out;
	nrt_tensor_set_t *set = input ? b->in : b->out;
	NRT_STATUS rc = NRT_SUCCESS;

	for (uint32_t j = 0; j < n && rc == NRT_SUCCESS; j++) {
		unsigned i = from + j;

		if (place == KPROG_PLACE_MISSING && j == 0)
			continue;
		rc = kh_make_tensor(b, i, place == KPROG_PLACE_MISSING ? KPROG_PLACE_DEV : place,
		                    nc);
		if (rc == NRT_SUCCESS && input)
			rc = kh_fill_input(b, i);
		if (rc == NRT_SUCCESS)
			rc = nrt_add_tensor_to_tensor_set(set, b->io->name[i], b->t[i]);
	}
	return rc;
}

NRT_STATUS kh_iob_build(kh_iob_t *b, const oracle_io_t *io, uint32_t seed, int in_place,
                        int out_place, int nc)
{
	NRT_STATUS rc;

	memset(b, 0, sizeof(*b));
	b->io = io;
	b->seed = seed;
	rc = nrt_allocate_tensor_set(&b->in);
	if (rc == NRT_SUCCESS)
		rc = nrt_allocate_tensor_set(&b->out);
	if (rc == NRT_SUCCESS)
		rc = kh_build_side(b, true, in_place, nc);
	if (rc == NRT_SUCCESS)
		rc = kh_build_side(b, false, out_place, nc);
	if (rc)
		kh_iob_free(b);
	return rc;
}

/* The oracle compares the outputs with the formula; a missing input
 * leaves nothing to compare against. */
void kh_iob_verify(kh_iob_t *b, unsigned op)
{
	const oracle_io_t *io = b->io;

	for (uint32_t i = 0; i < io->n_in; i++)
		if (!b->data[i])
			return;
	oracle_check_outputs(op, io, (const uint8_t *const *)b->data, b->t + io->n_in);
	ks_atomic_add_quiet(&kh_state.checked, 1);
}

/* ==== fuzz/harness/load.c ==== */
/*
 * load.c - the model operations by id: kmgr_load_nn, kmgr_unload_nn,
 * kmgr_unload_all_nns. */

KH_FACADE_OP(kh_load)(unsigned op, unsigned thread, const kh_args_t *a)
{
	const kh_model_t *m = &kh_state.c->models[a->model];
	uint64_t fired0 = kfault_fired(), t0;
	H_NN h = {0};
	NRT_STATUS rc;

	(void)thread;
	t0 = oracle_tick();
	rc = kmgr_load_nn(m->bytes, m->len, a->start, a->count, &h);
	kh_finish(op, "load", ORACLE_LOAD, rc == NRT_SUCCESS ? h.id : 0, t0, rc,
	          oracle_predict_load(&m->io, kh_state.c->nc, a->start, a->count), fired0);
	if (rc == NRT_SUCCESS)
		kh_keep_loaded(a, h, &m->io, NULL);
}

KH_FACADE_OP(kh_unload)(unsigned op, unsigned thread, const kh_args_t *a)
{
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	/* a model nrt_load placed goes through nrt_unload only: unloaded by id
	 * under it, nrt's record would live on (api_nrt) */
	if (!kh_begin(&c, op, "unload", a->slot, false) || c.s.m)
		return;
	rc = kmgr_unload_nn((H_NN){c.s.id});
	kh_end(&c, ORACLE_UNLOAD, rc, oracle_predict_ok());
	if (rc)
		return;
	/* not drained: explicit-async work may outlive an async unload
	 * (seed §4, the async_mix option) */
	oracle_note_unloaded(c.s.id, false);
	kh_clear_slot_if((unsigned)a->slot, c.s.id, false);
}

KH_FACADE_OP(kh_unload_all)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	kh_slot_t s[KPROG_SLOTS];
	NRT_STATUS rc;

	(void)thread;
	(void)a;
	for (unsigned k = 0; k < KPROG_SLOTS; k++)
		kh_get_slot(k, &s[k]);
	t0 = oracle_tick();
	rc = kmgr_unload_all_nns();
	t1 = kh_finish(op, "unload_all", ORACLE_UNLOAD_ALL, 0, t0, rc, oracle_predict_ok(), fired0);
	/* it erased models no slot holds any more too (loaded over) */
	if (rc == NRT_SUCCESS)
		ks_atomic_store_quiet(&kh_state.unload_all, 1);
	for (unsigned k = 0; k < KPROG_SLOTS; k++) {
		if (!s[k].used || kmgr_nn_loaded((H_NN){s[k].id}))
			continue;
		/* erased, but not necessarily drained: another thread's unload may
		 * still be waiting for the model's references, so this is no
		 * point after which the device must stay quiet (no
		 * oracle_note_unloaded here) */
		oracle_record(op, ORACLE_UNLOAD_ALL, "unload_all", s[k].id, t0, t1, NRT_SUCCESS);
		kh_clear_slot_if(k, s[k].id, false);
	}
}

/* ==== fuzz/harness/exec.c ==== */
/*
 * exec.c - the executions by id: kmgr_exec (sync or implicit async),
 * kmgr_tpb_xu_schedule (explicit async), and the explicit-async polls
 * nrta_is_completed and nrta_get_sequence. */
#include <nrt/nrt_async.h>


KH_FACADE_OP(kh_exec)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0, first, job, last_ok = 0;
	NRT_STATUS rc = NRT_SUCCESS;
	oracle_expect_t e;
	kh_pend_t *pe;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_runnable((unsigned)a->slot, &s) || !(pe = kh_pend_build(&s, op, a->in, a->out)))
		return;
	e = oracle_predict_exec(s.io, kh_place(a->in), kh_place(a->out), kh_state.c->async);
	/* One block of job ids for the whole op: the pending check looks at
	 * first..last_ok, and ids taken one by one interleaved with other
	 * threads' (a success of another op's job then passed for one of ours;
	 * the faults and async targets found this in the oracle) */
	first =
	    (uint64_t)ks_atomic_add_quiet(&kh_state.next_job, a->repeat > 0 ? a->repeat : 0) + 1;
	for (int r = 0; r < a->repeat && rc == NRT_SUCCESS; r++) {
		job = first + (uint64_t)r;
		t0 = oracle_tick();
		rc = kmgr_exec((H_NN){s.id}, pe->b.in, pe->b.out, job);
		kh_job_submitted(job, s.id, rc == NRT_SUCCESS && kh_state.c->async, t0);
		kh_finish(op, "exec", ORACLE_EXEC, s.id, t0, rc, e, fired0);
		if (rc == NRT_SUCCESS)
			last_ok = job;
	}
	/* implicit async: any queued execution still uses the tensors */
	if (last_ok && kh_state.c->async) {
		pe->op = op;
		pe->job_first = first;
		pe->job_last = last_ok;
		return;
	}
	if (rc == NRT_SUCCESS)
		kh_iob_verify(&pe->b, op);
	kh_pend_put(pe);
}

/* Explicit async (nrta_execute_schedule's path): off in implicit-async
 * runs unless async_mix, since the facade's async unload stops the async
 * worker but not the sync XU (seed §4). */
KH_FACADE_OP(kh_schedule)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	NRT_STATUS rc;
	kh_pend_t *pe;
	kh_slot_t s;

	if (kh_state.c->async && !kh_state.c->async_mix)
		return;
	if (!kh_get_runnable((unsigned)a->slot, &s) || !(pe = kh_pend_build(&s, op, a->in, a->out)))
		return;
	t0 = oracle_tick();
	rc =
	    kmgr_tpb_xu_schedule(s.start_nc, (H_NN){s.id}, pe->b.in, pe->b.out, &pe->ret, &pe->seq);
	kh_finish(op, "schedule", ORACLE_READ, s.id, t0, rc,
	          oracle_predict_exec(s.io, kh_place(a->in), kh_place(a->out), true), fired0);
	if (rc) {
		kh_pend_put(pe);
		return;
	}
	pe->op = op;
	pe->sched = true;
	if (kh_state.nseq[thread] < KH_MAX_SEQS)
		kh_state.seqs[thread][kh_state.nseq[thread]++] = pe->seq;
}

KH_FACADE_OP(kh_is_completed)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired();
	bool is_done = false;
	nrta_seq_t seq;
	NRT_STATUS rc;

	if (!a->bogus && !kh_state.nseq[thread])
		return;
	seq = a->bogus ? KH_BOGUS_SEQ
	               : kh_state.seqs[thread][(unsigned)a->which % kh_state.nseq[thread]];
	rc = nrta_is_completed(seq, &is_done);
	kh_done(op, "is_completed", rc);
	kh_check(op, "is_completed", rc, oracle_predict_is_completed(a->bogus), fired0);
}

KH_FACADE_OP(kh_get_sequence)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired();
	nrta_seq_t seq = 0;
	NRT_STATUS rc;

	(void)thread;
	rc = nrta_get_sequence((uint32_t)a->lnc, (nrta_xu_t)a->xu, a->queue, &seq);
	kh_done(op, "get_sequence", rc);
	kh_check(op, "get_sequence", rc,
	         oracle_predict_get_sequence(kh_state.c->nc, a->lnc, a->xu, a->queue), fired0);
}

/* ==== fuzz/harness/metadata.c ==== */
/*
 * metadata.c - the reads of a loaded model by id: tensor info, ifmap
 * validity and counts, profiling and MAC count, core placement. */
#include <nrt/nrt.h>


KH_FACADE_OP(kh_tensor_info)(unsigned op, unsigned thread, const kh_args_t *a)
{
	bool is_input = !(a->index & 1);
	uint32_t idx = (uint32_t)a->index >> 1, ndim = 0, *shape = NULL;
	char name[NRT_TENSOR_NAME_MAX];
	nrt_dtype_t dtype;
	size_t size = 0;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "tensor_info", a->slot, true))
		return;
	rc = kmgr_get_io_tensor_info((H_NN){c.s.id}, is_input, idx, name, &size, &dtype, &ndim,
	                             &shape);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_tensor_info(c.s.io, is_input, idx));
	if (rc)
		return;
	kfree(shape);
	oracle_check_tensor_info(op, c.s.io, idx + (is_input ? 0 : c.s.io->n_in), name, size);
}

KH_FACADE_OP(kh_is_valid_ifmap)(unsigned op, unsigned thread, const kh_args_t *a)
{
	bool valid = false, want;
	const char *name;
	oracle_expect_t e;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "is_valid_ifmap", a->slot, true))
		return;
	e = oracle_predict_is_valid_ifmap(c.s.io, (unsigned)a->name, &name, &want);
	rc = kmgr_is_valid_ifmap((H_NN){c.s.id}, name, &valid);
	kh_end(&c, ORACLE_READ, rc, e);
	if (rc == NRT_SUCCESS)
		oracle_check_ifmap_valid(op, name, valid, want);
}

KH_FACADE_OP(kh_ifmap_count)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint32_t count = 0, nout = 0;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "ifmap_count", a->slot, true))
		return;
	if (a->io)
		rc = kmgr_get_io_tensor_count((H_NN){c.s.id}, &count, &nout);
	else
		rc = kmgr_get_ifmap_count((H_NN){c.s.id}, &count);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_ok());
	if (rc == NRT_SUCCESS)
		oracle_check_counts(op, c.s.io, count, a->io, nout);
}

KH_FACADE_OP(kh_set_profiling)(unsigned op, unsigned thread, const kh_args_t *a)
{
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "set_profiling", a->slot, false))
		return;
	rc = a->mac ? kmgr_set_mac_count((H_NN){c.s.id}, 1000u + (uint64_t)op)
	            : kmgr_set_profiling((H_NN){c.s.id}, a->on);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_ok());
}

KH_FACADE_OP(kh_nc_info)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint32_t start = 0, count = 0;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "nc_info", a->slot, false))
		return;
	rc = kmgr_get_nc_info((H_NN){c.s.id}, &start, &count);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_ok());
	if (rc == NRT_SUCCESS)
		oracle_check_nc_info(op, c.s.id, c.s.place, kh_state.c->nc, c.s.start_nc, start,
		                     count);
}

/* ==== fuzz/harness/misuse.c ==== */
/*
 * misuse.c - wrong handles and wrong arguments to the facade (stale ids,
 * NULL and mismatched arguments), and the fault op that arms an
 * allocation failure. */
#include <nrt/nrt.h>
#include <nrt/nrt_async.h>


/* One of nine entry points with id h; what selects it. */
static NRT_STATUS kh_call_with(H_NN h, int what)
{
	uint32_t count = 0, nout = 0, ndim = 0, *shape = NULL;
	char name[NRT_TENSOR_NAME_MAX];
	nrt_dtype_t dtype;
	nrta_seq_t seq;
	NRT_STATUS rc, ret;
	size_t size;
	bool valid;

	switch (what) {
	case KH_STALE_EXEC:
		return kmgr_exec(h, NULL, NULL, 0);
	case KH_STALE_IFMAP_COUNT:
		return kmgr_get_ifmap_count(h, &count);
	case KH_STALE_UNLOAD:
		return kmgr_unload_nn(h);
	case KH_STALE_PROFILING:
		return kmgr_set_profiling(h, true);
	case KH_STALE_TENSOR_INFO:
		rc = kmgr_get_io_tensor_info(h, true, 0, name, &size, &dtype, &ndim, &shape);
		if (rc == NRT_SUCCESS)
			kfree(shape);
		return rc;
	case KH_STALE_VALID_IFMAP:
		return kmgr_is_valid_ifmap(h, "x", &valid);
	case KH_STALE_IO_COUNT:
		return kmgr_get_io_tensor_count(h, &count, &nout);
	case KH_STALE_SCHEDULE:
		return kmgr_tpb_xu_schedule(0, h, NULL, NULL, &ret, &seq);
	default: /* KH_STALE_MAC_COUNT */
		return kmgr_set_mac_count(h, 1);
	}
}

/* An id that was unloaded (or was never issued) answers INVALID_HANDLE
 * everywhere. */
KH_FACADE_OP(kh_stale)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	NRT_STATUS rc;
	kh_slot_t s;
	H_NN h;

	(void)thread;
	kh_get_slot((unsigned)a->slot, &s);
	h.id = s.stale ? s.stale : 0xfffffff0u - op;
	t0 = oracle_tick();
	rc = kh_call_with(h, a->what);
	kh_finish(op, "stale", ORACLE_READ, h.id, t0, rc, oracle_predict_stale(), fired0);
	if (rc == NRT_SUCCESS)
		oracle_fail("stale-handle", "op %u: unloaded id %u accepted", op, h.id);
}

/* A NULL or mismatched argument on a loaded model (what selects it). */
static NRT_STATUS kh_call_badly(const kh_slot_t *s, int what, nrt_tensor_set_t *set)
{
	uint32_t count = 0, ndim = 0, *shape = NULL;
	H_NN h = {s->id}, out;
	nrt_dtype_t dtype;
	nrta_seq_t seq;
	NRT_STATUS ret;
	size_t size;

	switch (what) {
	case KH_BAD_EXEC_NO_INPUT:
		return kmgr_exec(h, NULL, set, 0);
	case KH_BAD_EXEC_NO_OUTPUT:
		return kmgr_exec(h, set, NULL, 0);
	case KH_BAD_TENSOR_INFO_NO_NAME:
		return kmgr_get_io_tensor_info(h, true, 0, NULL, &size, &dtype, &ndim, &shape);
	case KH_BAD_VALID_IFMAP_NO_RESULT:
		return kmgr_is_valid_ifmap(h, "x", NULL);
	case KH_BAD_IFMAP_COUNT_NO_RESULT:
		return kmgr_get_ifmap_count(h, NULL);
	case KH_BAD_IO_COUNT_NO_RESULT:
		return kmgr_get_io_tensor_count(h, &count, NULL);
	case KH_BAD_LOAD_NO_BYTES:
		return kmgr_load_nn(NULL, 16, -1, -1, &out);
	case KH_BAD_SCHEDULE_OTHER_CORE:
		/* the model's own core plus one: the seed asserts, we refuse */
		return kmgr_tpb_xu_schedule(s->start_nc + 1, h, NULL, NULL, &ret, &seq);
	case KH_BAD_SCHEDULE_NO_SEQ:
		return kmgr_tpb_xu_schedule(s->start_nc, h, NULL, NULL, &ret, NULL);
	default: /* KH_BAD_NC_INFO_NO_RESULT */
		return kmgr_get_nc_info(h, &count, NULL);
	}
}

/* NRT_INVALID, never a crash (a model that went away meanwhile answers
 * INVALID_HANDLE). */
KH_FACADE_OP(kh_badargs)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired();
	nrt_tensor_set_t *set = NULL;
	NRT_STATUS rc;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_slot((unsigned)a->slot, &s))
		return;
	if (a->what <= KH_BAD_EXEC_NO_OUTPUT && nrt_allocate_tensor_set(&set) != NRT_SUCCESS)
		return;
	rc = kh_call_badly(&s, a->what, set);
	if (set)
		nrt_destroy_tensor_set(&set);
	kh_done(op, "badargs", rc);
	kh_check(op, "badargs", rc, oracle_predict_badargs(), fired0);
}

/* Arms "fail the nth next allocation at site" from now on; only in
 * single-threaded sync programs, where no library thread is busy when the
 * plan changes. */
void kh_fault(unsigned op, unsigned thread, const kh_args_t *a)
{
	kfault_plan_t plan = {.n = 1};
	size_t n = 0;
	const kfault_site_info_t *sites = kfault_sites(&n);

	(void)op;
	(void)thread;
	if (kh_state.c->nthreads != 1 || kh_state.c->async)
		return;
	/* an explicit execution (schedule, nrt_schedule) may still run on an
	 * XU, which reads the plan: wait for it (TSan saw the race); a quiet
	 * read, so a program with nothing in flight gets no extra decision */
	while (emu_inflight_execs_quiet() != 0)
		ks_usleep(50);
	plan.e[0] = (kfault_entry_t){KFAULT_FAIL_ALLOC, 0, (uint32_t)a->nth, 0};
	plan.e[0].site = a->site && (size_t)a->site <= n ? (uint32_t)sites[a->site - 1].site : 0;
	kfault_set_plan(&plan);
	kh_state.faults = true;
}

/* ==== fuzz/harness/nrt_model.c ==== */
/*
 * nrt_model.c - the public API on a model (api_nrt): nrt_load,
 * nrt_unload, nrt_execute(_repeat) and nrta_execute_schedule through the
 * handle, live or retired, with the close checked by the lifecycle
 * oracle. */
#include <nrt/nrt.h>
#include <nrt/nrt_async.h>


/* The handle an nrt op uses: the slot's live one, or (old) the one its
 * last unload left behind; false when there is none. */
bool kh_get_handle(const kh_args_t *a, kh_slot_t *s, nrt_model_t **m)
{
	kh_get_slot((unsigned)a->slot, s);
	*m = a->old ? s->old_m : (s->used ? s->m : NULL);
	return *m != NULL;
}

/* What an op through handle m of slot s may answer: a retired handle
 * only INVALID_HANDLE; a handle whose model went by id anything; the live
 * one e. */
oracle_expect_t kh_handle_expect(const kh_args_t *a, const kh_slot_t *s, oracle_expect_t e)
{
	if (!a->old)
		return e;
	return s->old_retired ? oracle_predict_stale() : (oracle_expect_t){0};
}

/* A public call over [t0, now] answered rc: counted; NRT_CLOSED checked
 * against the close and nothing more (returns false); else recorded and
 * checked against e (returns true). */
bool kh_nrt_end(unsigned op, const char *what, oracle_rec_t rec, uint32_t id, uint64_t t0,
                NRT_STATUS rc, oracle_expect_t e, uint64_t fired0)
{
	uint64_t t1 = oracle_tick();

	kh_done(op, what, rc);
	if (oracle_check_lifecycle(op, what, rc, t0, t1))
		return false;
	oracle_record(op, rec, what, id, t0, t1, rc);
	kh_check(op, what, rc, e, fired0);
	return true;
}

/* A retired handle answered success: the record was found live again. */
void kh_check_retired(unsigned op, const char *what, const kh_args_t *a, const kh_slot_t *s,
                      NRT_STATUS rc)
{
	if (a->old && s->old_retired && rc == NRT_SUCCESS)
		oracle_fail("retired-handle", "op %u %s: the handle of unloaded model %u accepted",
		            op, what, s->old_id);
}

void kh_nrt_load(unsigned op, unsigned thread, const kh_args_t *a)
{
	const kh_model_t *km = &kh_state.c->models[a->model];
	uint64_t fired0 = kfault_fired(), t0;
	nrt_model_t *m = NULL;
	H_NN h = {0};
	NRT_STATUS rc;
	bool seen;

	(void)thread;
	t0 = oracle_tick();
	rc = nrt_load(km->bytes, km->len, a->start, a->count, &m);
	/* the id and the placement come from the facade, which a close after
	 * nrt_load returned takes away, and the model with it: nothing to
	 * keep then.  Counted in, close waits for this op: the handle is live */
	if (rc == NRT_SUCCESS && !kh_facade_enter()) {
		kh_done(op, "nrt_load", rc);
		return;
	}
	if (rc == NRT_SUCCESS && nrt_model_get_nn(m, &h) != NRT_SUCCESS)
		oracle_fail("nrt-handle", "op %u: nrt_load's handle has no facade model", op);
	seen = kh_nrt_end(op, "nrt_load", ORACLE_LOAD, h.id, t0, rc,
	                  oracle_predict_load(&km->io, kh_state.c->nc, a->start, a->count), fired0);
	if (seen && rc == NRT_SUCCESS && h.id)
		kh_keep_loaded(a, h, &km->io, m);
	if (rc == NRT_SUCCESS)
		kh_facade_leave();
}

void kh_nrt_unload(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	nrt_model_t *m;
	NRT_STATUS rc;
	uint32_t id;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_handle(a, &s, &m))
		return;
	id = a->old ? s.old_id : s.id;
	t0 = oracle_tick();
	rc = nrt_unload(m);
	if (!kh_nrt_end(op, "nrt_unload", ORACLE_UNLOAD, id, t0, rc,
	                kh_handle_expect(a, &s, oracle_predict_ok()), fired0))
		return;
	kh_check_retired(op, "nrt_unload", a, &s, rc);
	if (rc || a->old)
		return;
	oracle_note_unloaded(id, false);
	kh_clear_slot_if((unsigned)a->slot, id, true);
}

void kh_nrt_exec(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	oracle_expect_t e;
	kh_pend_t *pe;
	NRT_STATUS rc;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_runnable((unsigned)a->slot, &s) || !s.m ||
	    !(pe = kh_pend_build(&s, op, a->in, a->out)))
		return;
	e = oracle_predict_exec(s.io, kh_place(a->in), kh_place(a->out), kh_state.c->async);
	t0 = oracle_tick();
	rc = a->repeat > 1 ? nrt_execute_repeat(s.m, pe->b.in, pe->b.out, a->repeat)
	                   : nrt_execute(s.m, pe->b.in, pe->b.out);
	if (kh_state.c->async)
		kh_anon_submitted(a->repeat, rc, t0);
	/* the outputs are read through the public API, which a close in
	 * between refuses: the check holds close off as a facade op does */
	if (kh_nrt_end(op, "nrt_exec", ORACLE_EXEC, s.id, t0, rc, e, fired0) && rc == NRT_SUCCESS &&
	    !kh_state.c->async && kh_facade_enter()) {
		kh_iob_verify(&pe->b, op);
		kh_facade_leave();
	}
	/* implicit async: some of a repeat may be queued whatever the status
	 * (QUEUE_FULL after two), under job id 0, which no callback names:
	 * unchecked, the tensors wait for quiescence */
	if (kh_state.c->async) {
		pe->op = op;
		return;
	}
	kh_pend_put(pe);
}

/* nrta_execute_schedule on the handle: as kh_schedule, off in implicit
 * async runs unless async_mix. */
void kh_nrt_schedule(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	kh_pend_t *pe;
	NRT_STATUS rc;
	kh_slot_t s;

	if (kh_state.c->async && !kh_state.c->async_mix)
		return;
	if (!kh_get_runnable((unsigned)a->slot, &s) || !s.m ||
	    !(pe = kh_pend_build(&s, op, a->in, a->out)))
		return;
	t0 = oracle_tick();
	rc = nrta_execute_schedule(s.m, pe->b.in, pe->b.out, 0, NULL, &pe->seq);
	if (!kh_nrt_end(op, "nrt_schedule", ORACLE_READ, s.id, t0, rc,
	                oracle_predict_exec(s.io, kh_place(a->in), kh_place(a->out), true),
	                fired0) ||
	    rc) {
		kh_pend_put(pe);
		return;
	}
	pe->op = op;
	pe->sched = true;
	pe->unchecked = true; /* the status went to the anonymous tracker */
	if (kh_state.nseq[thread] < KH_MAX_SEQS)
		kh_state.seqs[thread][kh_state.nseq[thread]++] = pe->seq;
}

/* A logical core no device has: nrta_error_tracker_create refuses it. */
#define KH_BOGUS_LNC 0x7fffffffu

/* nrta_error_tracker_get_list on pe's tracker, checked by the oracle;
 * false when it gave no list. */
bool kh_tracker_list(kh_pend_t *pe, bool may_fail)
{
	const nrta_error_t *list = NULL;
	size_t n = 0;
	NRT_STATUS rc = nrta_error_tracker_get_list(pe->tracker, &list, &n);

	oracle_check_error_list(pe->op, pe->seq, rc, list, n, may_fail, kh_state.faults,
	                        &pe->reported);
	return rc == NRT_SUCCESS;
}

/* nrta_error_tracker_create on core 0 (bogus: on one no device has), then
 * on the slot's handle an execution scheduled with the tracker (off in
 * implicit async runs unless async_mix, as kh_nrt_schedule) and its list
 * asked for at once, while the execution may still run; the tracker stays
 * with the execution until quiescence, where kh_finish_pending asks again
 * and destroys it (docs/api-contract.md, "Error trackers"). */
void kh_nrt_tracker(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0 = oracle_tick();
	nrta_error_tracker_t *t = NULL;
	kh_pend_t *pe = NULL;
	NRT_STATUS rc;
	kh_slot_t s;

	rc = nrta_error_tracker_create(a->bogus ? KH_BOGUS_LNC : 0, &t);
	kh_done(op, "nrt_tracker_create", rc);
	if (!oracle_check_lifecycle(op, "nrt_tracker_create", rc, t0, oracle_tick()))
		kh_check(op, "nrt_tracker_create", rc, oracle_predict_tracker(a->bogus), fired0);
	if (rc != NRT_SUCCESS)
		return;
	if ((kh_state.c->async && !kh_state.c->async_mix) ||
	    !kh_get_runnable((unsigned)a->slot, &s) || !s.m ||
	    !(pe = kh_pend_build(&s, op, a->in, a->out))) {
		nrta_error_tracker_destroy(t);
		return;
	}
	fired0 = kfault_fired();
	t0 = oracle_tick();
	rc = nrta_execute_schedule(s.m, pe->b.in, pe->b.out, 0, t, &pe->seq);
	if (!kh_nrt_end(op, "nrt_tracker_schedule", ORACLE_READ, s.id, t0, rc,
	                oracle_predict_exec(s.io, kh_place(a->in), kh_place(a->out), true),
	                fired0) ||
	    rc) {
		nrta_error_tracker_destroy(t);
		kh_pend_put(pe);
		return;
	}
	pe->op = op;
	pe->sched = true;
	pe->tracker = t;
	pe->model = s.id;
	/* another thread may unload the model or close under it */
	kh_tracker_list(pe, kh_state.faults || kh_state.c->nthreads > 1);
	if (kh_state.nseq[thread] < KH_MAX_SEQS)
		kh_state.seqs[thread][kh_state.nseq[thread]++] = pe->seq;
}

/* ==== fuzz/harness/nrt_meta.c ==== */
/*
 * nrt_meta.c - the public reads through a model handle (core count,
 * tensor info) and the contract's misuse of them: NULL arguments, refused
 * executions, a tensor-info array freed twice, the device's counts. */
#include <nrt/nrt.h>


/* NRT_META's what (prog/kinds.c: 0..5). */

/* The model's core count or its tensor descriptions through the handle. */
static NRT_STATUS kh_nrt_meta_call(unsigned op, nrt_model_t *m, const kh_args_t *a,
                                   const kh_slot_t *s)
{
	nrt_tensor_info_array_t *info = NULL;
	uint32_t n = 0;
	NRT_STATUS rc;

	if (a->what == KH_NRT_NC_COUNT) {
		/* the count only: the slot's start core is the one the harness
		 * read after the load, which an unload by id in between leaves 0 */
		rc = nrt_get_model_nc_count(m, &n);
		if (rc == NRT_SUCCESS && !a->old && (n != s->place.count || n > kh_state.c->nc))
			oracle_fail("nc-count",
			            "op %u: nrt_get_model_nc_count says %u cores, the "
			            "load asked for %u",
			            op, n, s->place.count);
		return rc;
	}
	rc = nrt_get_model_tensor_info(m, &info);
	if (rc)
		return rc;
	if (!a->old && info->tensor_count != (uint64_t)s->io->n_in + s->io->n_out)
		oracle_fail("tensor-info", "op %u: %llu tensors, the container has %u", op,
		            (unsigned long long)info->tensor_count, s->io->n_in + s->io->n_out);
	for (uint64_t i = 0; !a->old && i < info->tensor_count; i++)
		oracle_check_tensor_info(op, s->io, (uint32_t)i, info->tensor_array[i].name,
		                         info->tensor_array[i].size);
	nrt_free_model_tensor_info(info);
	return rc;
}

/* A public call its arguments make wrong answered rc: never a success
 * (NRT_CLOSED once a close began). */
static void kh_nrt_refused(unsigned op, const char *what, NRT_STATUS rc, uint64_t t0,
                           uint64_t fired0)
{
	kh_done(op, what, rc);
	if (!oracle_check_lifecycle(op, what, rc, t0, oracle_tick()))
		kh_check(op, what, rc, oracle_predict_badargs(), fired0);
}

/* A call that works in every state answered got, the contract want. */
void kh_nrt_want(unsigned op, const char *what, NRT_STATUS got, NRT_STATUS want)
{
	kh_done(op, what, got);
	if (got != want)
		oracle_fail("status-mismatch", "op %u %s returned %d, the contract says %d", op,
		            what, (int)got, (int)want);
}

/* NULL arguments beside a live handle. */
static void kh_nrt_null_args(unsigned op, nrt_model_t *m, uint64_t fired0)
{
	nrt_tensor_info_array_t *info = NULL;
	nrt_model_t *none = NULL;
	uint64_t t0 = oracle_tick();
	H_NN h;

	kh_nrt_refused(op, "nrt_get_model_nc_count(NULL)", nrt_get_model_nc_count(m, NULL), t0,
	               fired0);
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_get_model_tensor_info(NULL)", nrt_get_model_tensor_info(m, NULL),
	               t0, fired0);
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_load(NULL)", nrt_load(NULL, 0, -1, -1, &none), t0, fired0);
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_unload(NULL)", nrt_unload(NULL), t0, fired0);
	kh_nrt_want(op, "nrt_model_get_nn(NULL)", nrt_model_get_nn(NULL, &h), NRT_INVALID);
	kh_nrt_want(op, "nrt_free_model_tensor_info(NULL)", nrt_free_model_tensor_info(info),
	            NRT_SUCCESS);
}

/* Executions the arguments refuse: no tensor sets, a repeat count of 0. */
static void kh_nrt_bad_exec(unsigned op, nrt_model_t *m, uint64_t fired0)
{
	nrt_tensor_set_t *set = NULL;
	uint64_t t0 = oracle_tick();

	kh_nrt_refused(op, "nrt_execute(NULL sets)", nrt_execute(m, NULL, NULL), t0, fired0);
	if (nrt_allocate_tensor_set(&set) != NRT_SUCCESS)
		return; /* closed meanwhile */
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_execute_repeat(0)", nrt_execute_repeat(m, set, set, 0), t0, fired0);
	nrt_destroy_tensor_set(&set);
}

/* A tensor-info array freed twice: the second free is refused. */
static void kh_nrt_info_twice(unsigned op, nrt_model_t *m)
{
	nrt_tensor_info_array_t *info = NULL;

	if (nrt_get_model_tensor_info(m, &info) != NRT_SUCCESS)
		return;
	kh_nrt_want(op, "nrt_free_model_tensor_info", nrt_free_model_tensor_info(info),
	            NRT_SUCCESS);
	kh_nrt_want(op, "nrt_free_model_tensor_info(again)", nrt_free_model_tensor_info(info),
	            NRT_INVALID);
}

/* The device's core counts, in every state: the program's nc (no
 * NEURON_RT_VISIBLE_CORES in a run); a second nrt_init while up fails. */
static void kh_nrt_counts(unsigned op)
{
	uint32_t n = 0;
	NRT_STATUS rc;

	rc = nrt_get_total_nc_count(&n);
	kh_nrt_want(op, "nrt_get_total_nc_count", rc, NRT_SUCCESS);
	if (n != kh_state.c->nc)
		oracle_fail("nc-count", "op %u: nrt_get_total_nc_count says %u, the device has %u",
		            op, n, kh_state.c->nc);
	rc = nrt_get_visible_nc_count(&n);
	kh_nrt_want(op, "nrt_get_visible_nc_count", rc, NRT_SUCCESS);
	if (n != kh_state.c->nc)
		oracle_fail("nc-count",
		            "op %u: nrt_get_visible_nc_count says %u, the device has %u", op, n,
		            kh_state.c->nc);
	kh_nrt_want(op, "nrt_get_total_nc_count(NULL)", nrt_get_total_nc_count(NULL), NRT_INVALID);
	kh_nrt_want(op, "nrt_get_visible_nc_count(NULL)", nrt_get_visible_nc_count(NULL),
	            NRT_INVALID);
	/* held off a close as a facade call is: after one it would start a
	 * second runtime under the harness */
	if (!kh_facade_enter())
		return;
	kh_nrt_want(op, "nrt_init(again)", nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_FAILURE);
	kh_facade_leave();
}

/* nrt_meta what >= 2: the contract's refusals and the calls that work in
 * every state. */
static void kh_nrt_misuse(unsigned op, nrt_model_t *m, int what, uint64_t fired0)
{
	switch (what) {
	case KH_NRT_NULL_ARGS:
		kh_nrt_null_args(op, m, fired0);
		break;
	case KH_NRT_BAD_EXEC:
		kh_nrt_bad_exec(op, m, fired0);
		break;
	case KH_NRT_INFO_TWICE:
		kh_nrt_info_twice(op, m);
		break;
	default: /* KH_NRT_COUNTS */
		kh_nrt_counts(op);
		break;
	}
}

void kh_nrt_meta(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	nrt_model_t *m;
	NRT_STATUS rc;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_handle(a, &s, &m))
		return;
	if (a->what >= KH_NRT_NULL_ARGS) {
		kh_nrt_misuse(op, m, a->what, fired0);
		return;
	}
	t0 = oracle_tick();
	rc = kh_nrt_meta_call(op, m, a, &s);
	/* nc_count answers from nrt's own record, which an unload by id (a
	 * facade UNLOAD_ALL of another framework) leaves live: it is no read
	 * of the facade model, so it stays out of that model's history (id 0);
	 * the retired-handle check still holds it to nrt_unload */
	if (kh_nrt_end(op, "nrt_meta", ORACLE_READ,
	               a->what == KH_NRT_NC_COUNT ? 0
	               : a->old                   ? s.old_id
	                                          : s.id,
	               t0, rc, kh_handle_expect(a, &s, oracle_predict_ok()), fired0))
		kh_check_retired(op, "nrt_meta", a, &s, rc);
}

/* ==== fuzz/harness/nrt_lifecycle.c ==== */
/*
 * nrt_lifecycle.c - nrt_close while other threads call, and nrt_init with
 * the environment an op spells (NEURON_RT_VISIBLE_CORES,
 * NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS) in any state. */
#include <stdio.h>

#include <nrt/nrt.h>


/* nrt_close while the other threads go on calling: they answer
 * NRT_CLOSED from its end on (oracle_check_lifecycle), and a close that
 * never returns is the run's hang bound. */
void kh_nrt_close(unsigned op, unsigned thread, const kh_args_t *a)
{
	bool faulted;

	(void)thread;
	(void)a;
	ks_atomic_store_quiet(&kh_state.closing, 1);
	while (ks_atomic_load_quiet(&kh_state.facade) != 0)
		ks_usleep(50);
	oracle_close_begin(oracle_tick());
	faulted = oracle_close_runtime();
	/* the latest: a second close may return before the first is done */
	ks_atomic_max_quiet(&kh_state.close_t1, (int64_t)oracle_tick());
	oracle_close_end(oracle_tick());
	if (faulted)
		ks_atomic_store_quiet(&kh_state.close_faulted, 1);
	kh_done(op, "nrt_close", NRT_SUCCESS);
}

/* NEURON_RT_VISIBLE_CORES as an nrt_init op spells it (visible: the
 * form, core: c): the string, printed from fmt with c + d[0..2], and the
 * visible count a closed runtime's nrt_get_visible_nc_count must give for
 * it on a device of nc cores, or -1 where the parser must refuse it.  The
 * verdicts are the forms' own, not a second parser's: a form that parses
 * names the cores lo..c + hi (lo: 0, or c itself when from_c). */
static const struct {
	const char *fmt; /* NULL: unset */
	int d[3];
	bool parses, from_c;
	int hi;
} kh_visible_forms[] = {
    {NULL, {0}, true, false, -1},       /* unset: every core */
    {"", {0}, true, false, -1},         /* empty: unset too */
    {"%d", {0}, true, true, 0},         /* N */
    {"0-%d", {0}, true, false, 0},      /* 0-N */
    {"%d-%d", {0, 1}, true, true, 1},   /* N-N+1 */
    {"%d-%d", {1, 0}, false, false, 0}, /* backwards */
    {"%d,%d", {0, 0}, false, false, 0}, /* a list: not supported */
    {"-%d", {0}, false, false, 0},
    {"%d-", {0}, false, false, 0},
    {"x%d", {0}, false, false, 0},
    {"%d-4294967296", {0}, false, false, 0}, /* past UINT32_MAX */
    {" %d", {0}, false, false, 0},
    {"%d-%d-%d", {0, 0, 0}, false, false, 0}, /* three parts */
};

static const char *kh_env_visible(const kh_args_t *a, unsigned nc, char *b, size_t len, int *count)
{
	size_t n = sizeof(kh_visible_forms) / sizeof(kh_visible_forms[0]);
	unsigned f = (unsigned)a->visible < n ? (unsigned)a->visible : (unsigned)n - 1;
	int c = a->core, lo = kh_visible_forms[f].from_c ? c : 0, hi = c + kh_visible_forms[f].hi;

	*count = -1;
	if (kh_visible_forms[f].parses)
		*count = kh_visible_forms[f].hi < 0 ? (int)nc
		         : (unsigned)hi < nc        ? hi - lo + 1
		                                    : -1;
	if (!kh_visible_forms[f].fmt || !*kh_visible_forms[f].fmt)
		return kh_visible_forms[f].fmt;
	snprintf(b, len, kh_visible_forms[f].fmt, c + kh_visible_forms[f].d[0],
	         c + kh_visible_forms[f].d[1], c + kh_visible_forms[f].d[2]);
	return b;
}

/* NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS likewise; *ok: it parses. */
static const char *kh_env_inflight(const kh_args_t *a, char *b, size_t len, bool *ok)
{
	*ok = a->inflight == 0 || a->inflight == 1 || a->inflight == 3;
	switch (a->inflight) {
	case 0:
		return NULL;
	case 1:
		snprintf(b, len, "%d", a->core);
		return b;
	case 2: /* past the limit */
		return "65537";
	case 3:
		return "";
	default:
		return "1x";
	}
}

/* nrt_init and nrt_get_visible_nc_count with the environment the op
 * spells (nrt_init_env: no setenv, which would race the other threads'
 * getenv), in whatever state the runtime is.  While it is up both answer
 * from it: the count is the device's, a second init NRT_FAILURE.  Once
 * closed both parse the op's variables: the count is the one they name or
 * NRT_INVALID, and an init whose framework or variables are wrong is
 * NRT_INVALID and starts nothing.  An init that would start a runtime is
 * only made while the facade guard holds a close off (it must fail). */
void kh_nrt_init(unsigned op, unsigned thread, const kh_args_t *a)
{
	char vb[48], ib[16];
	int count;
	bool iok;
	nrt_env_t env = {kh_env_visible(a, kh_state.c->nc, vb, sizeof(vb), &count),
	                 kh_env_inflight(a, ib, sizeof(ib), &iok)};
	nrt_framework_type_t fw = (nrt_framework_type_t)a->fw;
	bool fw_ok = fw > NRT_FRAMEWORK_TYPE_INVALID && fw <= NRT_FRAMEWORK_TYPE_MXNET;
	uint32_t n = 0;
	uint64_t t0 = oracle_tick();
	NRT_STATUS rc = nrt_get_visible_nc_count_env(&env, &n);
	bool closed_ok;

	(void)thread;
	kh_done(op, "nrt_get_visible_nc_count(env)", rc);
	closed_ok =
	    count >= 0 && iok ? rc == NRT_SUCCESS && n == (uint32_t)count : rc == NRT_INVALID;
	oracle_check_either(op, "nrt_get_visible_nc_count(env)",
	                    rc == NRT_SUCCESS && n == kh_state.c->nc, closed_ok, t0, oracle_tick());
	if (fw_ok && count >= 0 && iok) {
		if (!kh_facade_enter())
			return;
		kh_nrt_want(op, "nrt_init(env, again)", nrt_init_env(fw, &env), NRT_FAILURE);
		kh_facade_leave();
		return;
	}
	t0 = oracle_tick();
	rc = nrt_init_env(fw, &env);
	kh_done(op, "nrt_init(env)", rc);
	oracle_check_either(op, "nrt_init(env)", rc == NRT_FAILURE, rc == NRT_INVALID, t0,
	                    oracle_tick());
}

/* ==== fuzz/harness/tensor.c ==== */
/*
 * tensor.c - the tensor slots of each logical thread: allocate in a
 * placement, free, read and write in and out of range. */
#include <stdlib.h>
#include <string.h>

#include <nrt/nrt.h>


static const size_t kh_tsizes[4] = {0, 1, 64, 4096};
static const size_t kh_tlens[4] = {0, 1, 8, 64};

void kh_tslot_free(kh_tslot_t *ts)
{
	if (ts->t)
		nrt_tensor_free(&ts->t);
	free(ts->buf);
	ts->buf = NULL;
}

void kh_talloc(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tslot_t *ts = &kh_state.ts[thread][a->ts];
	size_t size = kh_tsizes[a->size & 3];
	NRT_STATUS rc;

	kh_tslot_free(ts);
	if (a->place <= KPROG_PLACE_HOST) {
		rc = nrt_tensor_allocate(a->place ? NRT_TENSOR_PLACEMENT_HOST
		                                  : NRT_TENSOR_PLACEMENT_DEVICE,
		                         0, size, "t", &ts->t);
	} else {
		rc = nrt_tensor_allocate_empty("t", &ts->t);
		if (rc == NRT_SUCCESS && a->place == KPROG_PLACE_VIRT && size) {
			ts->buf = calloc(1, size);
			rc = nrt_tensor_attach_buffer(ts->t, ts->buf, size);
		}
	}
	kh_done(op, "talloc", rc);
}

void kh_tfree(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tslot_free(&kh_state.ts[thread][a->ts]);
	kh_done(op, "tfree", NRT_SUCCESS);
}

/* Bytes at off*8, len from {0, 1, 8, 64}: in and out of range. */
static void kh_tio(unsigned op, unsigned thread, const kh_args_t *a, bool write)
{
	kh_tslot_t *ts = &kh_state.ts[thread][a->ts];
	size_t off = (size_t)a->off * 8, len = kh_tlens[a->len & 3];
	NRT_STATUS rc = NRT_SUCCESS;
	uint8_t data[64];

	memset(data, (int)op, sizeof(data));
	if (ts->t)
		rc = write ? nrt_tensor_write(ts->t, data, off, len)
		           : nrt_tensor_read(ts->t, data, off, len);
	kh_done(op, write ? "twrite" : "tread", rc);
}

void kh_twrite(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tio(op, thread, a, true);
}

void kh_tread(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tio(op, thread, a, false);
}

/* ==== fuzz/harness/completion.c ==== */
/*
 * completion.c - every implicit-async execution accounted for, exactly
 * once (docs/api-contract.md, "Completions"): the worker owes each queued
 * execution one callback, success or a cancellation, and none to one it
 * refused.  The callback counts what it is told per job id; at quiescence
 * the pending executions' outputs are verified, and after nrt_close has
 * joined the device threads (no callback can come later) every job id the
 * run handed out is checked: a queued one called back once, a refused one
 * never, nrt_execute's (job id 0) as often as their statuses allow, and a
 * failure status only where something may cancel (an unload of its model,
 * a close, a fault).
 */
#include <stdlib.h>

#include <nrt/nrt.h>


void kh_job_submitted(uint64_t job, uint32_t model, bool queued, uint64_t t0)
{
	if (job >= KH_MAX_JOBS)
		return;
	ks_atomic_store_quiet(&kh_state.job_model[job], model);
	ks_atomic_store_quiet(&kh_state.job_t0[job], (int64_t)t0);
	ks_atomic_store_quiet(&kh_state.job_sub[job], queued ? KH_JOB_QUEUED : KH_JOB_REFUSED);
}

/* nrt_execute_repeat stops at the first status other than success: all
 * of them queued, or fewer than repeat. */
void kh_anon_submitted(int repeat, NRT_STATUS rc, uint64_t t0)
{
	int n = repeat > 0 ? repeat : 1;
	int64_t i = ks_atomic_add_quiet(&kh_state.anon_n, 1);

	if (i >= KH_MAX_ANON)
		abort(); /* one submission an op: KPROG_MAX_OPS */
	ks_atomic_store_quiet(&kh_state.anon_t0[i], (int64_t)t0);
	ks_atomic_store_quiet(&kh_state.anon_lo[i], rc == NRT_SUCCESS ? n : 0);
	ks_atomic_store_quiet(&kh_state.anon_hi[i], rc == NRT_SUCCESS ? n : n - 1);
}

#define KH_CB_NAME(id, name) name,
static const char *const kh_cb_names[] = {KPROG_NRT_CALLBACK_WHATS(KH_CB_NAME)};

/* A completion through callback cb (KH_CB_A or KH_CB_B) with params, the
 * registration that installed it: it must be the one that registration
 * named.  The job flags are cleared only up to the highest id a run
 * touched (a full sweep was a tenth of a short run); ids the callback
 * reports are counted too, in case the library names one the harness
 * never reserved. */
static void kh_completion(int cb, void *params, uint64_t job_id, NRT_STATUS status)
{
	uintptr_t k = (uintptr_t)params;
	int64_t named = k < KH_MAX_REGS ? ks_atomic_load_quiet(&kh_state.reg_cb[k]) : 0;

	if (named != cb + 1)
		oracle_fail("wrong-callback",
		            "job %llu came through callback %s with the parameters of "
		            "registration %llu, which registered %s",
		            (unsigned long long)job_id, kh_cb_names[cb], (unsigned long long)k,
		            named >= 1 && named <= KH_CB_NULL + 1 ? kh_cb_names[named - 1] : "nothing");
	if (k >= KH_MAX_REGS) /* a failure hook went on: nothing to count it under */
		return;
	if (job_id == 0) {
		ks_atomic_add_quiet(&kh_state.anon_reg[k], 1);
		ks_atomic_add_quiet(&kh_state.anon_calls, 1);
		return;
	}
	if (job_id >= KH_MAX_JOBS)
		return;
	ks_atomic_max_quiet(&kh_state.job_hw, (int64_t)job_id);
	if (status == NRT_SUCCESS)
		ks_atomic_store_quiet(&kh_state.job_ok[job_id], 1);
	else
		ks_atomic_add_quiet(&kh_state.job_failed[job_id], 1);
	if (ks_atomic_add_quiet(&kh_state.job_calls[job_id], 1) == 0)
		ks_atomic_store_quiet(&kh_state.job_reg[job_id], (int64_t)k + 1);
}

static void kh_async_callback(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                              NRT_STATUS status)
{
	(void)model_id;
	(void)vnc;
	kh_completion(KH_CB_A, params, job_id, status);
}

static void kh_async_callback_b(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                                NRT_STATUS status)
{
	(void)model_id;
	(void)vnc;
	kh_completion(KH_CB_B, params, job_id, status);
}

/* Registration k, callback cb: recorded before the call (a completion it
 * installs finds it), its ticks around the call. */
static NRT_STATUS kh_register(int64_t k, int cb)
{
	static const NRT_ASYNC_EXEC_STATUS_CALLBACK fns[] = {kh_async_callback,
	                                                     kh_async_callback_b, NULL};
	NRT_STATUS rc;

	ks_atomic_store_quiet(&kh_state.reg_cb[k], cb + 1);
	ks_atomic_store_quiet(&kh_state.reg_t0[k], k ? (int64_t)oracle_tick() : 0);
	rc = nrt_register_async_exec_callback(fns[cb], (void *)(uintptr_t)k);
	ks_atomic_store_quiet(&kh_state.reg_t1[k], k ? (int64_t)oracle_tick() : 0);
	return rc;
}

void kh_register_first(void)
{
	ks_atomic_store_quiet(&kh_state.next_reg, 1);
	kh_register(0, KH_CB_A);
}

/* nrt_register_async_exec_callback from any thread, in any state: a, b or
 * NULL, each with its registration's number as params (docs/api-contract.md,
 * "Completions"; checked after close, kh_check_completions). */
void kh_nrt_callback(unsigned op, unsigned thread, const kh_args_t *a)
{
	int cb = a->cb >= KH_CB_A && a->cb <= KH_CB_NULL ? a->cb : KH_CB_NULL;
	int64_t k = ks_atomic_add_quiet(&kh_state.next_reg, 1);

	(void)thread;
	if (k >= KH_MAX_REGS)
		abort(); /* one registration an op: KPROG_MAX_OPS */
	kh_nrt_want(op, "nrt_register_async_exec_callback", kh_register(k, cb), NRT_SUCCESS);
}

/* The registration that had certainly replaced registration k by tick t
 * (one that began after k returned, and returned before t), or -1.  The
 * device takes the callback when it delivers a completion, after the
 * execution ran (lib/emu/async_exec.c, emu_callback), so no completion of
 * an execution submitted at t may come through k then.  After the run:
 * every registration has returned. */
static int64_t kh_replaced_by(int64_t k, uint64_t t)
{
	int64_t n = ks_atomic_peek(&kh_state.next_reg);
	int64_t t1 = ks_atomic_peek(&kh_state.reg_t1[k]);

	for (int64_t m = 0; m < n && m < KH_MAX_REGS; m++)
		if (ks_atomic_peek(&kh_state.reg_t0[m]) > t1 &&
		    ks_atomic_peek(&kh_state.reg_t1[m]) < (int64_t)t)
			return m;
	return -1;
}

/* May a NULL registration have dropped the completion of an execution
 * submitted at tick t?  Only one in place at some time between t and the
 * end of the deliveries (an nrt_close op's return, else the run's end). */
static bool kh_may_drop(uint64_t t)
{
	int64_t n = ks_atomic_peek(&kh_state.next_reg);
	int64_t end = ks_atomic_peek(&kh_state.close_t1);

	for (int64_t k = 0; k < n && k < KH_MAX_REGS; k++)
		if (ks_atomic_peek(&kh_state.reg_cb[k]) == KH_CB_NULL + 1 &&
		    (!end || ks_atomic_peek(&kh_state.reg_t0[k]) < end) && kh_replaced_by(k, t) < 0)
			return true;
	return false;
}

/* Job j came through registration k (kh_completion checked that k's
 * callback made the call): k must not have been replaced before j was
 * submitted. */
static void kh_check_delivery(uint64_t j, int64_t k)
{
	uint64_t t0 = (uint64_t)ks_atomic_peek(&kh_state.job_t0[j]);
	int64_t m = k < KH_MAX_REGS ? kh_replaced_by(k, t0) : -1;

	if (m >= 0)
		oracle_fail("stale-callback",
		            "job %llu (model %lld), submitted at tick %llu, came through "
		            "registration %lld (callback %s), which registration %lld (%s) had "
		            "replaced by tick %lld",
		            (unsigned long long)j, (long long)ks_atomic_peek(&kh_state.job_model[j]),
		            (unsigned long long)t0, (long long)k,
		            kh_cb_names[ks_atomic_peek(&kh_state.reg_cb[k]) - 1], (long long)m,
		            kh_cb_names[ks_atomic_peek(&kh_state.reg_cb[m]) - 1],
		            (long long)ks_atomic_peek(&kh_state.reg_t1[m]));
}

static bool kh_gone(uint32_t id);

/* Every submitted execution completed or was cancelled.  A sleep, not a
 * yield: under control a sleeping thread is not runnable, so the device
 * threads run even when the decisions ran out (whose fallback keeps the
 * current thread). */
void kh_finish_pending(bool closed)
{
	for (unsigned k = 0; k < kh_state.pend_hw; k++) {
		kh_pend_t *pe = &kh_state.pend[k];
		bool is_done = false, ok = false;

		if (!pe->used)
			continue;
		if (pe->sched && closed) {
			/* nrt_close drained and cancelled it, and took the facade */
		} else if (pe->sched) {
			if (kmgr_xu_is_completed(pe->seq, &is_done) != NRT_SUCCESS || !is_done)
				oracle_fail("lost-completion",
				            "op %u: sequence %llx never completed", pe->op,
				            (unsigned long long)pe->seq);
			ok = pe->ret == NRT_SUCCESS && !pe->unchecked;
			/* nrt_tracker: its status is what the tracker lists, now
			 * final; unlisted, it succeeded and its outputs must show it */
			if (pe->tracker)
				ok = kh_tracker_list(pe, kh_state.faults || kh_gone(pe->model)) &&
				     !pe->reported;
		} else {
			/* seq_cst: the callback's store follows the device's writes of
			 * the outputs, so this load orders our reads after them */
			for (uint64_t j = pe->job_first; j <= pe->job_last && j < KH_MAX_JOBS; j++)
				ok |= ks_atomic_load_quiet(&kh_state.job_ok[j]) != 0;
		}
		if (ok && !closed) /* after a close the outputs can no longer be read */
			kh_iob_verify(&pe->b, pe->op);
		/* after a close too: it waits for nothing the close has not joined */
		if (pe->tracker)
			nrta_error_tracker_destroy(pe->tracker);
		kh_pend_put(pe);
	}
}

/* Only after the threads were joined: no lock, which would add
 * scheduling points to the runs that ask. */
static bool kh_gone(uint32_t id)
{
	bool gone = false;

	for (unsigned i = 0; i < kh_state.ngone && !gone; i++)
		gone = kh_state.gone[i] == id;
	return gone || kh_state.ngone >= KH_MAX_GONE || ks_atomic_peek(&kh_state.unload_all);
}

/* Job j's callbacks against its submission. */
static void kh_check_job(uint64_t j, bool closed)
{
	int64_t sub = ks_atomic_peek(&kh_state.job_sub[j]);
	int64_t calls = ks_atomic_peek(&kh_state.job_calls[j]);
	uint32_t model = (uint32_t)ks_atomic_peek(&kh_state.job_model[j]);

	if (sub == KH_JOB_QUEUED && calls == 0 &&
	    !kh_may_drop((uint64_t)ks_atomic_peek(&kh_state.job_t0[j])))
		oracle_fail("lost-completion",
		            "job %llu of model %u was queued and never called back (no NULL "
		            "registration could have dropped it)",
		            (unsigned long long)j, model);
	if (calls)
		kh_check_delivery(j, ks_atomic_peek(&kh_state.job_reg[j]) - 1);
	if (calls > 1)
		oracle_fail("duplicate-completion", "job %llu of model %u called back %lld times",
		            (unsigned long long)j, model, (long long)calls);
	/* a submission a fault refused may have queued first */
	if (sub != KH_JOB_QUEUED && calls && !(sub == KH_JOB_REFUSED && kh_state.faults))
		oracle_fail("unexpected-completion",
		            "job %llu (model %u), never queued, called back", (unsigned long long)j,
		            model);
	if (sub == KH_JOB_QUEUED && ks_atomic_peek(&kh_state.job_failed[j]) && !closed &&
	    !kh_state.faults && !kh_gone(model))
		oracle_fail("cancelled-completion",
		            "job %llu failed, though model %u was never unloaded, nothing closed "
		            "and no fault was planned",
		            (unsigned long long)j, model);
}

/* nrt_execute's completions (job id 0), which no callback can tell
 * apart: at most what the statuses say was queued; at least what they say
 * was queued, less the submissions a NULL registration may have dropped;
 * and through each registration at most the executions submitted before
 * it was replaced. */
static void kh_check_anon(void)
{
	int64_t n = ks_atomic_peek(&kh_state.anon_n), regs = ks_atomic_peek(&kh_state.next_reg);
	int64_t calls = ks_atomic_peek(&kh_state.anon_calls), lo = 0, hi = 0;

	for (int64_t i = 0; i < n; i++) {
		hi += ks_atomic_peek(&kh_state.anon_hi[i]);
		if (!kh_may_drop((uint64_t)ks_atomic_peek(&kh_state.anon_t0[i])))
			lo += ks_atomic_peek(&kh_state.anon_lo[i]);
	}
	if (calls < lo || calls > hi)
		oracle_fail(calls < lo ? "lost-completion" : "duplicate-completion",
		            "nrt_execute: %lld callbacks; its statuses say at most %lld were "
		            "queued, %lld of them where no NULL registration could drop them",
		            (long long)calls, (long long)hi, (long long)lo);
	for (int64_t k = 0; k < regs && k < KH_MAX_REGS; k++) {
		int64_t got = ks_atomic_peek(&kh_state.anon_reg[k]), before = 0;

		for (int64_t i = 0; got && i < n; i++)
			if (kh_replaced_by(k, (uint64_t)ks_atomic_peek(&kh_state.anon_t0[i])) < 0)
				before += ks_atomic_peek(&kh_state.anon_hi[i]);
		if (got > before)
			oracle_fail("stale-callback",
			            "nrt_execute: registration %lld (callback %s) made %lld callbacks; "
			            "only %lld executions were submitted before it was replaced",
			            (long long)k, kh_cb_names[ks_atomic_peek(&kh_state.reg_cb[k]) - 1],
			            (long long)got, (long long)before);
	}
}

void kh_check_completions(bool closed)
{
	int64_t jobs = ks_atomic_peek(&kh_state.next_job);

	if (jobs >= KH_MAX_JOBS)
		jobs = KH_MAX_JOBS - 1;
	for (int64_t j = 1; j <= jobs; j++)
		kh_check_job((uint64_t)j, closed);
	if (ks_atomic_peek(&kh_state.job_hw) > jobs)
		oracle_fail("unexpected-completion", "a callback named job %lld, never handed out",
		            (long long)ks_atomic_peek(&kh_state.job_hw));
	kh_check_anon();
}

/* The job flags a run used, cleared at the end of that run, not at the
 * start of the next: the loop then runs as often as this input had jobs.
 * Cleared by the next run, its length would be the previous input's job
 * count, so the same input would take other edge counts after another (an
 * unstable edge to AFL++, a spurious feature to libFuzzer: ctest
 * cov_stable). */
void kh_clear_jobs(void)
{
	int64_t jobs = ks_atomic_peek(&kh_state.next_job);

	if (ks_atomic_peek(&kh_state.job_hw) > jobs)
		jobs = ks_atomic_peek(&kh_state.job_hw);
	if (jobs >= KH_MAX_JOBS)
		jobs = KH_MAX_JOBS - 1;
	ks_atomic_reset(&kh_state.next_job);
	ks_atomic_reset(&kh_state.job_hw);
	ks_atomic_reset(&kh_state.anon_calls);
	for (int64_t i = 0; i < ks_atomic_peek(&kh_state.anon_n) && i < KH_MAX_ANON; i++) {
		ks_atomic_reset(&kh_state.anon_t0[i]);
		ks_atomic_reset(&kh_state.anon_lo[i]);
		ks_atomic_reset(&kh_state.anon_hi[i]);
	}
	ks_atomic_reset(&kh_state.anon_n);
	for (int64_t k = 0; k < ks_atomic_peek(&kh_state.next_reg) && k < KH_MAX_REGS; k++) {
		ks_atomic_reset(&kh_state.reg_cb[k]);
		ks_atomic_reset(&kh_state.reg_t0[k]);
		ks_atomic_reset(&kh_state.reg_t1[k]);
		ks_atomic_reset(&kh_state.anon_reg[k]);
	}
	ks_atomic_reset(&kh_state.next_reg);
	ks_atomic_reset(&kh_state.close_t1);
	for (int64_t j = 0; j <= jobs; j++) {
		ks_atomic_reset(&kh_state.job_t0[j]);
		ks_atomic_reset(&kh_state.job_reg[j]);
		ks_atomic_reset(&kh_state.job_calls[j]);
		ks_atomic_reset(&kh_state.job_ok[j]);
		ks_atomic_reset(&kh_state.job_failed[j]);
		ks_atomic_reset(&kh_state.job_sub[j]);
		ks_atomic_reset(&kh_state.job_model[j]);
	}
}

/* ==== fuzz/harness/harness.c ==== */
/*
 * harness.c - the operations' tables (harness.h) and the run around them:
 * a fresh runtime, the threads, completion and quiescence, the oracle's
 * end checks and teardown.  The operations live one family a file
 * (load.c, exec.c, metadata.c, misuse.c, tensor.c, nrt_*.c) over the
 * bookkeeping of state.c.
 *
 * Model operations go to the facade by id (kmgr_*), so that threads can
 * race an unload against an execution without the harness itself using a
 * freed nrt_model_t; tensors and the explicit-async polls go through the
 * public API.  Every check is the oracle's; the harness's own bookkeeping
 * (slots, pending executions, job ids) takes its lock, whose scheduling
 * points are part of the schedule the decision bytes drive. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nrt/nrt.h>


/* ---- the tables ----------------------------------------------------------- */

const kh_op_fn kh_ops[KOP__COUNT] = {
    [KOP_LOAD] = kh_load,
    [KOP_UNLOAD] = kh_unload,
    [KOP_UNLOAD_ALL] = kh_unload_all,
    [KOP_EXEC] = kh_exec,
    [KOP_SCHEDULE] = kh_schedule,
    [KOP_IS_COMPLETED] = kh_is_completed,
    [KOP_GET_SEQUENCE] = kh_get_sequence,
    [KOP_TENSOR_INFO] = kh_tensor_info,
    [KOP_IS_VALID_IFMAP] = kh_is_valid_ifmap,
    [KOP_IFMAP_COUNT] = kh_ifmap_count,
    [KOP_SET_PROFILING] = kh_set_profiling,
    [KOP_STALE] = kh_stale,
    [KOP_FAULT] = kh_fault,
    [KOP_TALLOC] = kh_talloc,
    [KOP_TFREE] = kh_tfree,
    [KOP_TWRITE] = kh_twrite,
    [KOP_TREAD] = kh_tread,
    [KOP_BADARGS] = kh_badargs,
    [KOP_NC_INFO] = kh_nc_info,
    [KOP_NRT_LOAD] = kh_nrt_load,
    [KOP_NRT_UNLOAD] = kh_nrt_unload,
    [KOP_NRT_EXEC] = kh_nrt_exec,
    [KOP_NRT_META] = kh_nrt_meta,
    [KOP_NRT_SCHEDULE] = kh_nrt_schedule,
    [KOP_NRT_CLOSE] = kh_nrt_close,
    [KOP_NRT_INIT] = kh_nrt_init,
    [KOP_NRT_TRACKER] = kh_nrt_tracker,
    [KOP_NRT_CALLBACK] = kh_nrt_callback,
};

#define KH_FIELD(f) {#f, offsetof(kh_args_t, f)},

int kh_field_offset(const char *name)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {KH_ARGS(KH_FIELD)};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (!strcmp(fields[i].name, name))
			return (int)fields[i].off;
	return -1;
}

/* ---- completion, quiescence and teardown ------------------------------- */

static void kh_free_tensor_slots(void)
{
	for (unsigned t = 0; t < KPROG_MAX_THREADS; t++)
		for (unsigned k = 0; k < KPROG_TSLOTS; k++)
			kh_tslot_free(&kh_state.ts[t][k]);
}

static void kh_set_env(const kh_config_t *c)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", c->nc);
	setenv("KMGR_EMU_NC_COUNT", v, 1);
	unsetenv("NEURON_RT_VISIBLE_CORES");
	if (c->async) {
		snprintf(v, sizeof(v), "%u", c->qdepth);
		setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", v, 1);
	} else {
		unsetenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS");
	}
}

static void kh_reset(const kh_config_t *c)
{
	kh_state.c = c;
	kh_state.reference = c->reference && c->nthreads == 1;
	kh_state.faults = c->plan.n > 0;
	memset(kh_state.slot, 0, sizeof(kh_state.slot));
	memset(kh_state.pend, 0, kh_state.pend_hw * sizeof(kh_state.pend[0]));
	kh_state.pend_hw = 0;
	kh_state.ngone = 0;
	ks_atomic_reset(&kh_state.unload_all);
	memset(kh_state.nseq, 0, sizeof(kh_state.nseq));
	ks_atomic_reset(&kh_state.facade);
	ks_atomic_reset(&kh_state.closing);
	ks_atomic_reset(&kh_state.close_faulted);
	ks_atomic_reset(&kh_state.ops_run);
	ks_atomic_reset(&kh_state.ops_ok);
	ks_atomic_reset(&kh_state.checked);
}

/* Before any plan is installed: parsing allocates through kalloc. */
static void kh_describe_models(const kh_config_t *c)
{
	for (unsigned k = 0; k < c->nmodels; k++) {
		kh_model_t *m = &c->models[k];

		if (!m->described)
			oracle_describe(&m->io, m->bytes, m->len);
		m->described = true;
	}
}

static void *kh_thread_main(void *arg)
{
	kh_state.c->thread(kh_state.c->thread_ctx, (unsigned)(uintptr_t)arg);
	return NULL;
}

/* Everything from nrt_init to the accounting check after close. */
static int kh_body(const kh_config_t *c, kh_result_t *r)
{
	ks_thread_t th[KPROG_MAX_THREADS];
	bool close_faulted, closed;

	if (c->plan.n)
		kfault_set_plan(&c->plan);
	if (oracle_open() != NRT_SUCCESS) {
		kfault_clear();
		oracle_check_closed("after a failed nrt_init");
		return c->plan.n ? 0 : -1;
	}
	r->started = true;
	if (kmgr_is_async() != c->async)
		oracle_fail("mode", "kmgr_is_async() is %d, the program asked for %s",
		            kmgr_is_async(), c->async ? "async" : "sync");
	for (unsigned t = 1; t < c->nthreads; t++)
		if (ks_thread_create(&th[t], "kprog", kh_thread_main, (void *)(uintptr_t)t))
			abort();
	c->thread(c->thread_ctx, 0);
	for (unsigned t = 1; t < c->nthreads; t++)
		ks_thread_join(&th[t], NULL);
	closed = ks_atomic_load_quiet(&kh_state.closing) != 0;
	oracle_quiesce();
	kh_finish_pending(closed);
	kh_free_tensor_slots();
	if (!closed) /* else the facade is gone, and close unloaded everything */
		oracle_check_refcounts(kh_state.faults);
	oracle_check_history();
	oracle_detach();
	/* The plan stays installed until the device threads are gone: kfault's
	 * contract (and TSan) forbid changing it while they may read it.  A
	 * fault that fires inside nrt_close itself can leave what close could
	 * not unload; that run skips the leak check. */
	close_faulted = oracle_close_runtime() || ks_atomic_load_quiet(&kh_state.close_faulted);
	kfault_clear();
	if (!close_faulted) {
		kh_check_completions(closed);
		oracle_check_closed("after nrt_close");
	}
	return 0;
}

void kh_config_init(kh_config_t *c)
{
	memset(c, 0, sizeof(*c));
	c->nc = 1;
	c->qdepth = 1;
	c->nthreads = 1;
	c->reference = true;
}

/* The log filter, in the one place every run passes: the fuzz targets,
 * kmgr-repro's child, kprog run and the emitted C tests all judge a log
 * line the same way (a broken invariant is a failure in each). */
static void kh_log_filter(const kh_config_t *c)
{
	if (!c->full_log)
		oracle_log_quiet();
}

int kh_run(const kh_config_t *c, kh_result_t *r)
{
	ks_ctl_config_t cfg;
	ks_ctl_result_t res = {0};
	int rc;

	memset(r, 0, sizeof(*r));
	kh_log_filter(c);
	kh_reset(c);
	kh_describe_models(c);
	kh_set_env(c);
	kh_register_first();
	oracle_set_report(c->hooks.report, c->hooks.ctx);
	oracle_begin();
	oracle_history_begin();
	if (!c->free_running) {
		ks_ctl_config_init(&cfg);
		cfg.strategy = KS_STRAT_BYTES;
		cfg.bytes = c->sched;
		cfg.nbytes = c->nsched;
		cfg.max_steps = c->max_steps;
		cfg.ap_n = c->nap < KS_CTL_MAX_AP ? c->nap : KS_CTL_MAX_AP;
		for (unsigned i = 0; i < cfg.ap_n; i++) {
			cfg.ap[i].thread = c->ap[i].thread;
			cfg.ap[i].point = c->ap[i].point;
			cfg.ap[i].k = c->ap[i].k;
			cfg.ap[i].every = c->ap[i].every;
		}
		if (ks_ctl_begin(&cfg))
			abort();
	}
	rc = kh_body(c, r);
	if (!c->free_running)
		ks_ctl_end(&res);
	r->ops_run = (uint32_t)ks_atomic_peek(&kh_state.ops_run);
	r->ops_ok = (uint32_t)ks_atomic_peek(&kh_state.ops_ok);
	r->execs_checked = (uint32_t)ks_atomic_peek(&kh_state.checked);
	r->steps = res.steps;
	r->preemptions = res.preemptions;
	r->trace = res.trace;
	r->ntrace = res.ntrace;
	kh_clear_jobs();
	return rc;
}

/* ==== fuzz/prog/templates.c ==== */
/*
 * templates.c - the built-in model templates a LOAD names by number: small
 * containers made once with the kmodel builder, covering one and several
 * inputs and outputs, a collectives model and multi-core (LNC) models.
 * Names are in every order, never repeated: sorted (u8x64, cc, lnc2),
 * reversed within each side (two_io, lnc4's outputs) and shuffled (wide's
 * inputs), since the facade answers metadata by name and the device
 * computes in model order, and only a container whose two orders differ
 * tells them apart.
 */
#include <stdlib.h>
#include <string.h>


struct tt {
	const char *name;
	nrt_tensor_usage_t usage;
	nrt_dtype_t dtype;
	uint32_t ndim;
	uint32_t shape[2];
};

struct tmpl_def {
	const char *name;
	uint32_t nkbin;
	bool has_cc;
	unsigned nt;
	struct tt t[6];
};

#define IN  NRT_TENSOR_USAGE_INPUT
#define OUT NRT_TENSOR_USAGE_OUTPUT

static const struct tmpl_def defs[KPROG_NTMPL] = {
    {"u8x64",
     1,
     false,
     2,
     {{"in0", IN, NRT_DTYPE_UINT8, 1, {64}}, {"out0", OUT, NRT_DTYPE_UINT8, 1, {64}}}},
    {"two_io",
     1,
     false,
     4,
     {{"b", IN, NRT_DTYPE_FLOAT32, 2, {4, 4}},
      {"a", IN, NRT_DTYPE_UINT8, 1, {8}},
      {"z", OUT, NRT_DTYPE_UINT8, 1, {32}},
      {"y", OUT, NRT_DTYPE_INT16, 2, {2, 4}}}},
    {"cc", 1, true, 2, {{"x", IN, NRT_DTYPE_UINT8, 1, {16}}, {"y", OUT, NRT_DTYPE_UINT8, 1, {16}}}},
    {"lnc2",
     2,
     false,
     2,
     {{"x", IN, NRT_DTYPE_UINT8, 1, {32}}, {"y", OUT, NRT_DTYPE_UINT8, 1, {32}}}},
    {"lnc4",
     4,
     false,
     3,
     {{"x", IN, NRT_DTYPE_UINT8, 1, {8}},
      {"y2", OUT, NRT_DTYPE_UINT8, 1, {8}},
      {"y", OUT, NRT_DTYPE_UINT8, 1, {8}}}},
    {"wide",
     1,
     false,
     5,
     {{"i2", IN, NRT_DTYPE_UINT8, 1, {4}},
      {"i0", IN, NRT_DTYPE_UINT8, 1, {4}},
      {"i3", IN, NRT_DTYPE_UINT8, 1, {4}},
      {"i1", IN, NRT_DTYPE_UINT8, 1, {4}},
      {"o", OUT, NRT_DTYPE_UINT8, 1, {16}}}},
};

/* the tests' amalgam (harness/embed.c) goes on after this file */
#undef IN
#undef OUT

static struct {
	uint8_t *bytes;
	size_t len;
} built[KPROG_NTMPL];

/* Serialized with the library's builder, then copied out of the library's
 * accounting so that templates never count as live host memory. */
static void build(unsigned i)
{
	const struct tmpl_def *d = &defs[i];
	kmodel_t *m = kmodel_new(d->name, d->nkbin, d->has_cc);
	uint8_t *bytes = NULL;
	size_t len = 0;

	if (!m)
		abort();
	for (unsigned j = 0; j < d->nt; j++)
		if (kmodel_add_tensor(m, d->t[j].name, d->t[j].usage, d->t[j].dtype, d->t[j].ndim,
		                      d->t[j].shape) != NRT_SUCCESS)
			abort();
	if (kmodel_serialize(m, &bytes, &len) != NRT_SUCCESS)
		abort();
	built[i].bytes = malloc(len);
	if (!built[i].bytes)
		abort();
	memcpy(built[i].bytes, bytes, len);
	built[i].len = len;
	kfree(bytes);
	kmodel_free(m);
}

/* Called first from the runner's single-threaded setup, before any fault
 * plan is installed (the builder allocates through kalloc). */
const uint8_t *kprog_template(unsigned tmpl, size_t *len)
{
	if (tmpl >= KPROG_NTMPL)
		return NULL;
	if (!built[tmpl].bytes)
		build(tmpl);
	*len = built[tmpl].len;
	return built[tmpl].bytes;
}

const char *kprog_template_name(unsigned tmpl)
{
	return tmpl < KPROG_NTMPL ? defs[tmpl].name : "inline";
}

/* ==== fuzz/harness/regression.c ==== */
/*
 * regression.c - the part every emitted regression test shares
 * (regression.h): the containers, the config, the report hook, the run and
 * the verdict.  Only the tests compile it (harness/embed.c), so it may
 * define main(); the fuzz runner's counterpart is harness/run.c.
 */
#include <stdio.h>
#include <string.h>


/* The templates first, numbered as in a program, then the inline
 * containers (as harness/run.c lays them out). */
#define KR_MODELS (KPROG_NTMPL + KPROG_MAX_OPS)

static const kh_regression_t *kr_test;

static void kr_thread(void *ctx, unsigned t)
{
	const kh_regression_t *test = ctx;

	if (test->threads[t])
		test->threads[t]();
}

/* After an ORACLE line: which test failed. */
static void kr_report(void *ctx, const char *invariant, const char *msg)
{
	(void)ctx;
	(void)invariant;
	(void)msg;
	fprintf(stderr, "FAIL: %s (regression test, fuzz target %s)\n", kr_test->name,
	        kr_test->target);
}

/* Before the runtime starts: the template builder allocates. */
static unsigned kr_models(const kh_regression_t *t, kh_model_t *m)
{
	unsigned n = 0;
	size_t len;

	for (; n < KPROG_NTMPL; n++) {
		const uint8_t *bytes = kprog_template(n, &len);

		m[n] = (kh_model_t){bytes, len, false, {0}};
	}
	for (unsigned k = 0; k < t->nblobs && n < KR_MODELS; k++, n++)
		m[n] = (kh_model_t){t->blobs[k].bytes, t->blobs[k].len, false, {0}};
	return n;
}

/* The test's config into c; -1 when it cannot be run as written. */
static int kr_config(const kh_regression_t *t, kh_config_t *c, kh_model_t *models)
{
	char err[128];

	kh_config_init(c);
	c->async = t->async;
	c->nc = t->nc;
	c->qdepth = t->qdepth;
	c->nthreads = t->nthreads;
	c->models = models;
	c->nmodels = kr_models(t, models);
	c->thread = kr_thread;
	c->thread_ctx = (void *)t;
	c->sched = t->sched;
	c->nsched = t->nsched;
	c->nap = t->nap;
	for (unsigned i = 0; i < t->nap && i < KPROG_MAX_AP; i++) {
		c->ap[i].thread = t->ap[i].thread;
		c->ap[i].point = t->ap[i].point;
		c->ap[i].k = t->ap[i].k;
		c->ap[i].every = (t->ap_every >> i) & 1;
	}
	c->hooks.report = kr_report;
	if (t->nthreads < 1 || t->nthreads > KPROG_MAX_THREADS || t->nsched > KPROG_MAX_SCHED ||
	    t->nap > KPROG_MAX_AP) {
		fprintf(stderr, "%s: %u threads, %zu decision bytes: out of range\n", t->name,
		        t->nthreads, t->nsched);
		return -1;
	}
	if (t->plan && kfault_plan_parse(t->plan, &c->plan, err, sizeof(err))) {
		fprintf(stderr, "%s: bad fault plan: %s\n", t->name, err);
		return -1;
	}
	return 0;
}

int kh_regression_main(const kh_regression_t *t)
{
	static kh_model_t models[KR_MODELS];
	kh_config_t c;
	kh_result_t r;

	kr_test = t;
	if (kr_config(t, &c, models))
		return 2;
	if (kh_run(&c, &r) < 0) {
		printf("%s: the runtime did not start (bad config)\n", t->name);
		return 1;
	}
	if (!r.started)
		printf("%s: the runtime did not start (a fault fired in nrt_init)\n", t->name);
	else
		printf("%s: PASS (%llu scheduling points, %llu preemptions)\n", t->name,
		       (unsigned long long)r.steps, (unsigned long long)r.preemptions);
	return 0;
}

int main(void)
{
	return kh_regression_main(&kh_test);
}

/* logical thread 0 */
static void thread_0(void)
{
	kh_nrt_callback(2, 0, &(kh_args_t){.cb = KH_CB_B});
}

/* logical thread 1 */
static void thread_1(void)
{
	kh_load(0, 1, &(kh_args_t){.slot = 1, .model = 0 /* u8x64 */, .start = -1, .count = -1});
	kh_exec(1, 1, &(kh_args_t){.slot = 1, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 2});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.nsched = 0,
	.name = "nrt_3_callback_at_init_only", .target = "api_nrt", .async = true, .nc = 2, .qdepth = 4, .nthreads = 2, .threads = {thread_0, thread_1}};
