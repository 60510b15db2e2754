/*
 * nrt_kmgr.h - test hook, not installed: the facade handle behind a public
 * nrt_model_t, so tests can reach lib/kmgr (a stale or foreign handle, the
 * refcount) where the pointer-based public API cannot express a case.
 */
#ifndef NRT_KMGR_H
#define NRT_KMGR_H

#include <nrt/nrt.h>
#include <nrt/nrt_status.h>

#include "kmgr/kmgr.h"

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
