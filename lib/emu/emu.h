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
