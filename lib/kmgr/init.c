/*
 * init.c - kmgr_init / kmgr_destroy (the async_exec_workers switch, seed
 * §2) and the per-model setters (profiling, mac count).
 */
#include "dlr.h"

/* The seed's _ZL18async_exec_workers: the one switch of every sync/async
 * divergence.  Written only by kmgr_init / kmgr_destroy, when no facade
 * call is running. */
kmgr_async_exec_worker_threads_t *async_exec_workers;

static bool kmgr_initialized;
static uint64_t drain_warn_iters = 100000000u; /* the seed's 1e8 */

uint64_t kmgr_drain_warn_iters(void)
{
	return drain_warn_iters;
}

static uint32_t hook_interned_model_id(uint32_t h_nn)
{
	return dlr_db_get_nn_cached_interned_model_id((H_NN){h_nn});
}

static const emu_hooks_t kmgr_hooks = {
    .release_resources = kmgr_exec_resources_free,
    .interned_model_id = hook_interned_model_id,
};

NRT_STATUS kmgr_init(bool implicit_async_exec, const kmgr_config_t *cfg)
{
	uint32_t depth = cfg ? cfg->async_queue_depth : 0;
	NRT_STATUS rc;

	/* A second init is refused before the seed's assertion can fire. */
	if (kmgr_initialized) {
		klog_error("kmgr already initialized");
		return NRT_INVALID;
	}
	drain_warn_iters = cfg && cfg->drain_warn_iters ? cfg->drain_warn_iters : 100000000u;
	emu_set_hooks(&kmgr_hooks);
	if (implicit_async_exec) {
		KMGR_ASSERT(async_exec_workers == NULL, "kmgr/dlr.cpp:0x677");
		rc = kmgr_async_exec_init(depth, &async_exec_workers);
		if (rc) {
			klog_error("Failed to initialize async exec workers");
			async_exec_workers = NULL;
			return rc;
		}
	}
	kmgr_initialized = true;
	klog_debug("kmgr initialized, implicit async exec %d", (int)implicit_async_exec);
	return NRT_SUCCESS;
}

void kmgr_destroy(void)
{
	if (!kmgr_initialized)
		return;
	kmgr_unload_all_nns();
	if (async_exec_workers)
		kmgr_async_exec_destroy(async_exec_workers);
	async_exec_workers = NULL;
	dlr_model_set_release();
	kmgr_initialized = false;
}

bool kmgr_is_async(void)
{
	return async_exec_workers != NULL;
}

bool kmgr_is_initialized(void)
{
	return kmgr_initialized;
}

NRT_STATUS kmgr_set_profiling(H_NN h_nn, bool enable)
{
	dlr_model *mod = kmgr_find_nn(h_nn);

	if (!mod)
		return NRT_INVALID_HANDLE;
	ks_atomic_store(&mod->is_profiling, enable ? 1 : 0);
	nn_ref_decrement(mod);
	return NRT_SUCCESS;
}

NRT_STATUS kmgr_set_mac_count(H_NN h_nn, uint64_t mac_count)
{
	dlr_model *mod = kmgr_find_nn(h_nn);

	if (!mod)
		return NRT_INVALID_HANDLE;
	ks_atomic_store(&mod->mac_count, (int64_t)mac_count);
	nn_ref_decrement(mod);
	return NRT_SUCCESS;
}
