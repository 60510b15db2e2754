/*
 * emu_int.h - what the files of lib/emu share and the device tests may
 * look at: the device record, the arena, the tensor and set records, the
 * per-core model record, the work items of the engines and the XU states.
 * Nothing outside lib/emu (and its tests) includes this.
 */
#ifndef EMU_INT_H
#define EMU_INT_H

#include "emu/emu.h"

#include "base/kalloc.h"
#include "base/kfault.h"
#include "base/klog.h"
#include "sched/ksched.h"

#define EMU_GRANULE             64u   /* device allocation alignment */
#define EMU_POISON_BYTE         0xdb  /* freed device memory without ASan */
#define EMU_RING_BYTES          4096u /* rings + request buffers of a model, per core */
#define EMU_CC_BYTES            8192u /* collectives resources of a has_cc model */
#define EMU_POLL_US             2u    /* sync completion poll interval */
#define EMU_POLL_YIELDS         64u   /* probes that yield before the poll sleeps */
#define EMU_DEFAULT_QUEUE_DEPTH 64    /* XU and async queue bound */
#define EMU_SEQ_MASK            0xFFFFFFFFFFFFull

/* ---- device memory -------------------------------------------------- */
typedef struct emu_arena emu_arena_t;

/* One device allocation, embedded in its owner (tensor, model). */
typedef struct emu_dev_block {
	struct emu_dev_block *prev, *next; /* the arena's list, by offset */
	emu_arena_t *arena;
	uint64_t off, size; /* size rounded up to EMU_GRANULE */
	uint64_t gen;       /* never reused: tells a reused region from the original */
} emu_dev_block_t;

/* Where a user of device memory (slice, binding) found it. */
typedef struct emu_dev_ref {
	emu_arena_t *arena;
	uint64_t off, size, gen;
} emu_dev_ref_t;

NRT_STATUS emu_arena_alloc(uint32_t nc, kfault_site_t site, uint64_t size, emu_dev_block_t *blk);
void emu_arena_free(emu_dev_block_t *blk);
void *emu_arena_ptr(const emu_arena_t *arena, uint64_t off);
/* Aborts with a clear message when [ref] is no longer the live allocation it
 * was (device memory used after free).  what names the user. */
void emu_dev_check(const emu_dev_ref_t *ref, const char *what);
/* Called by emu_close: free the arena of core nc, or orphan it to the last
 * live allocation. */
void emu_arena_release(uint32_t nc);

/* ---- tensors and sets ------------------------------------------------ */
struct nrt_tensor {
	char name[NRT_TENSOR_NAME_MAX];
	nrt_tensor_placement_t placement;
	int nc;
	uint64_t size;
	uint8_t *data;   /* NULL for an unattached VIRTUAL tensor */
	bool owns_block; /* DEVICE tensor with its own allocation */
	bool is_slice;
	emu_dev_block_t blk; /* owns_block */
	emu_dev_ref_t dev;   /* DEVICE: where data lives (own block or parent's) */
};

typedef struct emu_set_entry {
	char name[NRT_TENSOR_NAME_MAX];
	nrt_tensor_t *t;
	bool owned; /* allocated by a clone: freed with the set */
} emu_set_entry_t;

struct nrt_tensor_set {
	ks_atomic_t refs;
	ks_atomic_t marks;
	uint32_t n, cap;
	emu_set_entry_t *e;
};

/* The device location of a DEVICE tensor (false otherwise). */
bool emu_tensor_dev_ref(const nrt_tensor_t *t, emu_dev_ref_t *ref);

/* ---- models on a core ------------------------------------------------- */
struct kbl_model {
	struct kbl_model *next_on_tpb;
	struct kbl_model *next_global;
	tpb_t *tpb;
	H_MODEL h_model;
	ks_atomic_t refs; /* the staged reference + kbl_get_model_ref_count + work items */
	ks_atomic_t inflight;
	ks_mutex_t hw_exec_queue_lock;
	bool cc_done; /* under hw_exec_queue_lock */
	bool has_cc_blk;
	bool staged;
	emu_dev_block_t ring;
	emu_dev_block_t cc;
	uint32_t sg_count;
	bool has_cc;
	uint32_t n_io;
	kbl_io_desc_t *io; /* n_io, in the same allocation */
	char name[64];
	uint8_t uuid[16];
};

/* The model record of h_model on tpb, with a reference; NULL if absent. */
kbl_model_t *emu_model_get(tpb_t *tpb, H_MODEL h_model);
/* Free every model record still staged (emu_close). */
uint32_t emu_models_release_all(void);

/* ---- engines ------------------------------------------------------------ */
typedef enum tpb_xu_state {
	TPB_XU_INIT = 0,
	TPB_XU_WAIT_BARRIER,
	TPB_XU_WAIT_CORE,
	TPB_XU_DONE,
} tpb_xu_state_t;

typedef enum emu_work_kind {
	EMU_WORK_EXEC = 0,
	EMU_WORK_STOP,
} emu_work_kind_t;

typedef struct emu_work {
	struct emu_work *next;
	emu_work_kind_t kind;
	kmgr_exec_resources_t *res;
	kbl_model_t *kmod; /* referenced */
	H_MODEL h_model;
	uint32_t h_nn;
	uint32_t interned_id;
	uint64_t tracking_id;
	uint64_t seq;   /* XU sequence, or async handle */
	bool sync;      /* a caller polls done and frees the item */
	bool cancelled; /* async: model stop dropped it */
	NRT_STATUS *exec_ret;
	NRT_STATUS status;
	ks_atomic_t done;
} emu_work_t;

struct tpb_xu {
	uint32_t id;
	ks_mutex_t lock;
	ks_cond_t cv;
	ks_thread_t thread;
	bool started, stop;
	emu_work_t *head, *tail;
	uint32_t queued;
	emu_work_t *running;
	ks_atomic_t issued;    /* last sequence handed out */
	ks_atomic_t completed; /* last sequence completed (FIFO, so monotone) */
};

struct tpb {
	uint32_t idx;
	ks_mutex_t lock; /* models */
	kbl_model_t *models;
	uint32_t n_models;
	emu_arena_t *arena;
	struct tpb_xu xu;
};

/* Compute an execution's outputs from its binding (the formula). */
void emu_compute_run(const tdrv_compute_resources_t *tdrv);
/* Run one work item through the device: INIT -> WAIT_BARRIER -> WAIT_CORE
 * -> DONE.  A hang waits on cv under lock until *stop_flag.  Returns the
 * status; the outputs are written only on success. */
NRT_STATUS emu_exec_item(emu_work_t *w, uint32_t xu_id, ks_mutex_t *lock, ks_cond_t *cv,
                         const bool *stop_flag);
/* A work item for tracker res on the model it names (vcore's first core),
 * with a model reference.  On failure res is released and *rc set. */
emu_work_t *emu_work_new(const virtual_core_t *vcore, kmgr_exec_resources_t *res, uint32_t h_nn,
                         uint64_t tracking_id, NRT_STATUS *rc);
/* Release the tracker through the facade's hook (or a default) and
 * the model reference; the item itself stays. */
void emu_work_release(emu_work_t *w);
/* Release and free an item that was never accepted by an engine. */
void emu_work_discard(emu_work_t *w);
void emu_work_free(emu_work_t *w);
/* The end of an accepted item: counters down, tracker released, observer
 * told (COMPLETE, or CANCEL when cancelled). */
void emu_work_finish(emu_work_t *w, NRT_STATUS status, bool cancelled);

void emu_xu_init(struct tpb_xu *xu, uint32_t id);
void emu_xu_shutdown(struct tpb_xu *xu);

/* ---- the device record ------------------------------------------------- */
typedef struct emu_device {
	bool open;
	emu_config_t cfg;
	struct tpb tpbs[EMU_MAX_NC];
	emu_hooks_t hooks;
	emu_exec_observer_fn observer;
	void *observer_ctx;
} emu_device_t;

extern emu_device_t emu_dev;

typedef struct emu_counters {
	ks_atomic_t device_bytes, device_allocs, objects, staged_models, inflight, async_marks;
	ks_atomic_t device_alloc_calls; /* every device allocation ever made (tests) */
} emu_counters_t;

extern emu_counters_t emu_cnt;

static inline void emu_count(ks_atomic_t *c, int64_t d)
{
	ks_atomic_add_quiet(c, d);
}

void emu_observe(emu_exec_event_t ev, const emu_work_t *w, NRT_STATUS status);
tpb_t *emu_tpb(uint32_t nc); /* NULL when out of range or closed */

/* Tests: called on every XU state transition (NULL to remove). */
typedef void (*emu_xu_state_hook_fn)(void *ctx, uint32_t xu_id, tpb_xu_state_t state);
void emu_set_xu_state_hook(emu_xu_state_hook_fn fn, void *ctx);

#endif /* EMU_INT_H */
