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
