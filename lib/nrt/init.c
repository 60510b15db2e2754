/*
 * init.c - the runtime's lifecycle: nrt_init / nrt_close, the guard every
 * other call opens with, the two environment variables read at init, and
 * the NeuronCore counts.
 *
 * State machine UNINIT -> INIT -> CLOSED; nrt_init after nrt_close starts a
 * fresh runtime (the fuzz targets run every input from one).  A call made
 * before nrt_init answers NRT_UNINITIALIZED, after nrt_close NRT_CLOSED, as
 * the public runtime's guards do (nrt_execute: 14 / 13).
 */
#include <stdlib.h>

#include "base/klog.h"
#include "base/knum.h"
#include "emu/emu.h"
#include "kmgr/kmgr.h"
#include "nrt_internal.h"
#include "nrt_kmgr.h"
#include "sched/ksched.h"

/* One queue bound per worker; deeper than this is a typo, not a plan. */
#define NRT_MAX_INFLIGHT_LIMIT 65536u

/* Sleep between probes while nrt_close waits for in-flight calls. */
#define NRT_CLOSE_DRAIN_SLEEP_US 100
/* Warn every this many probes (about a second) that close is still waiting. */
#define NRT_CLOSE_DRAIN_WARN 10000

static ks_mutex_t nrt_lifecycle_lock = KS_MUTEX_INITIALIZER;
static ks_atomic_t nrt_state_v = KS_ATOMIC_INIT(NRT_STATE_UNINIT);
/* Public calls between nrt__enter and nrt__leave.  Quiet atomics: the count
 * is not a scheduling point, so the guard adds none to the interleavings a
 * controlled run explores; the state load in nrt__enter stays the one point. */
static ks_atomic_t nrt_inflight = KS_ATOMIC_INIT(0);

nrt_state_t nrt__state(void)
{
	return (nrt_state_t)ks_atomic_load(&nrt_state_v);
}

/* A refused call's answer and its log line, written after it no longer
 * counts as in flight. */
static NRT_STATUS nrt__refuse(const char *fn, nrt_state_t st)
{
	if (st == NRT_STATE_FORKED) {
		klog_error("%s: called in a child of fork(); the runtime belongs to the parent "
		           "(exec, or nrt_init before forking)",
		           fn);
		return NRT_FAILURE;
	}
	if (st == NRT_STATE_CLOSED) {
		klog_error("%s: called after nrt_close", fn);
		return NRT_CLOSED;
	}
	klog_error("%s: called before nrt_init", fn);
	return NRT_UNINITIALIZED;
}

/* Count the call in before checking the state, and nrt_close stores CLOSED
 * before waiting for the count to drain (both sequentially consistent): a
 * call either sees CLOSED and backs out, or close sees it and waits, so no
 * call runs on a runtime nrt_close is tearing down.  A refused call backs
 * out before it logs: it counts for the few instructions between its
 * increment and its state load, so threads that keep calling after close
 * cannot keep the count from reaching zero (counted in while they wrote
 * their log lines, they would hold close for seconds). */
static bool nrt_count_in(nrt_state_t *st)
{
	ks_atomic_add_quiet(&nrt_inflight, 1);
	*st = nrt__state();
	if (KS_LIKELY(*st == NRT_STATE_INIT))
		return true;
	ks_atomic_add_quiet(&nrt_inflight, -1);
	return false;
}

NRT_STATUS nrt__enter(const char *fn)
{
	nrt_state_t st;

	if (KS_LIKELY(nrt_count_in(&st)))
		return NRT_SUCCESS;
	return nrt__refuse(fn, st);
}

bool nrt__enter_if_init(void)
{
	nrt_state_t st;

	return nrt_count_in(&st);
}

NRT_STATUS nrt__leave(NRT_STATUS rc)
{
	ks_atomic_add_quiet(&nrt_inflight, -1);
	return rc;
}

static void nrt_close_drain_warn(void *ctx, uint64_t iters)
{
	(void)ctx;
	klog_warn("nrt_close: still waiting for %lld API calls in flight (%llu probes)",
	          (long long)ks_atomic_peek(&nrt_inflight), (unsigned long long)iters);
}

/* A decimal number that fills s..end: the one number rule (base/knum.h). */
static int nrt_parse_u32(const char *s, const char *end, uint32_t *out)
{
	uint64_t v;

	if (knum_parse_range(s, end, UINT32_MAX, &v))
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* NEURON_RT_VISIBLE_CORES: "N" or "A-B" (inclusive), within nc_count cores.
 * The emulated device places a virtual core on contiguous cores, so a list
 * of ranges is not supported and is refused with a message. */
static NRT_STATUS nrt_parse_visible(const char *v, emu_config_t *cfg)
{
	const char *dash, *end;
	uint32_t first, last;

	if (!v || !*v)
		return NRT_SUCCESS;
	end = v;
	while (*end)
		end++;
	dash = v;
	while (*dash && *dash != '-')
		dash++;
	if (*dash) {
		if (nrt_parse_u32(v, dash, &first) || nrt_parse_u32(dash + 1, end, &last))
			goto bad;
	} else {
		if (nrt_parse_u32(v, end, &first))
			goto bad;
		last = first;
	}
	if (first > last || last >= cfg->nc_count) {
		klog_error("NEURON_RT_VISIBLE_CORES='%s': cores %u-%u, the device has %u", v, first,
		           last, cfg->nc_count);
		return NRT_INVALID;
	}
	cfg->first_visible_nc = first;
	cfg->visible_nc_count = last - first + 1;
	return NRT_SUCCESS;
bad:
	klog_error("NEURON_RT_VISIBLE_CORES='%s': expected N or A-B", v);
	return NRT_INVALID;
}

/* NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS: 0 or unset = sync. */
static NRT_STATUS nrt_parse_inflight(const char *v, uint32_t *depth)
{
	const char *end;

	*depth = 0;
	if (!v || !*v)
		return NRT_SUCCESS;
	end = v;
	while (*end)
		end++;
	if (nrt_parse_u32(v, end, depth) || *depth > NRT_MAX_INFLIGHT_LIMIT) {
		klog_error("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS='%s': expected 0..%u", v,
		           NRT_MAX_INFLIGHT_LIMIT);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

/* The two variables as the process's environment has them. */
static nrt_env_t nrt_getenv(void)
{
	return (nrt_env_t){getenv("NEURON_RT_VISIBLE_CORES"),
	                   getenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS")};
}

/* The device configuration nrt_init would use, from env. */
static NRT_STATUS nrt_build_config(const nrt_env_t *env, emu_config_t *cfg, uint32_t *depth)
{
	NRT_STATUS rc = emu_config_default(cfg);

	if (rc)
		return rc;
	rc = nrt_parse_visible(env->visible_cores, cfg);
	if (rc)
		return rc;
	rc = nrt_parse_inflight(env->max_inflight, depth);
	if (rc)
		return rc;
	if (*depth)
		cfg->async_queue_depth = *depth;
	return NRT_SUCCESS;
}

static NRT_STATUS nrt_init_locked(nrt_framework_type_t framework, const nrt_env_t *env)
{
	emu_config_t cfg;
	kmgr_config_t kcfg = {0};
	uint32_t depth;
	NRT_STATUS rc;

	if (nrt__state() == NRT_STATE_INIT) {
		klog_error("nrt_init: the runtime is already initialized");
		return NRT_FAILURE;
	}
	if (framework <= NRT_FRAMEWORK_TYPE_INVALID || framework > NRT_FRAMEWORK_TYPE_MXNET) {
		klog_error("nrt_init: invalid framework type %d", (int)framework);
		return NRT_INVALID;
	}
	rc = nrt_build_config(env, &cfg, &depth);
	if (rc)
		return rc;
	rc = nrt__fault_env();
	if (rc)
		return rc;
	rc = emu_open(&cfg);
	if (rc)
		return rc;
	kcfg.async_queue_depth = depth;
	rc = kmgr_init(depth > 0, &kcfg);
	if (rc) {
		emu_close();
		return rc;
	}
	ks_atomic_store(&nrt_state_v, NRT_STATE_INIT);
	nrt__async_on_init();
	return NRT_SUCCESS;
}

/*
 * fork(): the child has the parent's runtime in memory but none of its
 * device threads, and any lock another thread held at the fork stays held;
 * a call into it waited for a completion that could never come.  So a child
 * forked while the runtime is up answers every call NRT_FAILURE at once
 * (nrt__refuse), nrt_init included, and nrt_close does nothing: neither
 * takes a lock first.  The same for a child forked while another thread
 * was inside nrt_init or nrt_close (it held the lifecycle lock): the
 * runtime is half built or half torn down, and the child cannot know how
 * far; its nrt_init waited for ever on that lock.  Registered when the
 * library is loaded, so no nrt_init can run before it.
 */
static void nrt_forked_child(void)
{
	bool busy = ks_mutex_child_reset(&nrt_lifecycle_lock);

	if (busy || nrt__state() == NRT_STATE_INIT)
		ks_atomic_store_quiet(&nrt_state_v, NRT_STATE_FORKED);
}

__attribute__((constructor)) static void nrt_atfork_register(void)
{
	if (ks_atfork_child(nrt_forked_child) != 0)
		klog_warn("nrt: pthread_atfork failed: a child of fork() is not told apart");
}

static bool nrt_is_forked(const char *fn)
{
	if (ks_atomic_load_quiet(&nrt_state_v) != NRT_STATE_FORKED)
		return false;
	nrt__refuse(fn, NRT_STATE_FORKED);
	return true;
}

NRT_STATUS nrt_init(nrt_framework_type_t framework, const char *fw_version, const char *fal_version)
{
	nrt_env_t env = nrt_getenv();

	/* The version strings are informational only (and may be NULL). */
	(void)fw_version;
	(void)fal_version;
	return nrt_init_env(framework, &env);
}

NRT_STATUS nrt_init_env(nrt_framework_type_t framework, const nrt_env_t *env)
{
	NRT_STATUS rc;

	if (nrt_is_forked("nrt_init"))
		return NRT_FAILURE;
	ks_mutex_lock(&nrt_lifecycle_lock);
	rc = nrt_init_locked(framework, env);
	ks_mutex_unlock(&nrt_lifecycle_lock);
	return rc;
}

void nrt_close(void)
{
	if (nrt_is_forked("nrt_close"))
		return;
	ks_mutex_lock(&nrt_lifecycle_lock);
	if (nrt__state() != NRT_STATE_INIT) {
		klog_warn("nrt_close: the runtime is not initialized");
		goto out;
	}
	/* Later calls see CLOSED first, so none starts into a half-torn device;
	 * calls already past their guard (an nrt_unload between the facade's
	 * unload and the record's unlink) finish before anything is freed. */
	ks_atomic_store(&nrt_state_v, NRT_STATE_CLOSED);
	ks_spin_wait_zero(&nrt_inflight, NRT_CLOSE_DRAIN_SLEEP_US, NRT_CLOSE_DRAIN_WARN,
	                  nrt_close_drain_warn, NULL);
	if (kmgr_unload_all_nns())
		klog_error("nrt_close: unloading the models failed");
	nrt__models_release_all();
	kmgr_destroy();
	emu_close();
	nrt__async_on_close();
out:
	ks_mutex_unlock(&nrt_lifecycle_lock);
}

NRT_STATUS nrt_get_total_nc_count(uint32_t *nc_count)
{
	emu_config_t cfg;
	NRT_STATUS rc;

	if (!nc_count)
		return NRT_INVALID;
	/* Counted in, as every call that reads the device: a close waits for
	 * it instead of closing the device under the read (TSan, api_nrt). */
	if (nrt__enter_if_init()) {
		*nc_count = emu_config()->nc_count;
		return nrt__leave(NRT_SUCCESS);
	}
	rc = emu_config_default(&cfg);
	if (rc)
		return rc;
	*nc_count = cfg.nc_count;
	return NRT_SUCCESS;
}

NRT_STATUS nrt_get_visible_nc_count(uint32_t *nc_count)
{
	nrt_env_t env = nrt_getenv();

	return nrt_get_visible_nc_count_env(&env, nc_count);
}

NRT_STATUS nrt_get_visible_nc_count_env(const nrt_env_t *env, uint32_t *nc_count)
{
	emu_config_t cfg;
	uint32_t depth;
	NRT_STATUS rc;

	if (!nc_count)
		return NRT_INVALID;
	/* The device numbers the visible cores from 0 and shows only those. */
	if (nrt__enter_if_init()) {
		*nc_count = emu_nc_count();
		return nrt__leave(NRT_SUCCESS);
	}
	rc = nrt_build_config(env, &cfg, &depth);
	if (rc)
		return rc;
	*nc_count = cfg.visible_nc_count ? cfg.visible_nc_count : cfg.nc_count;
	return NRT_SUCCESS;
}
