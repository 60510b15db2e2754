/*
 * dlr.h - the facade's internal records (kmgr/dlr.cpp, kmgr/dlr_kelf.cpp in
 * the seed): dlr_model, the registry dlr_model_set, the dlr_kelf_model_t
 * bridge, the io maps, the assertion macro and the seams between the files
 * of lib/kmgr.  Tests may include it to reach what the handle API cannot.
 */
#ifndef DLR_H
#define DLR_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/kalloc.h"
#include "base/klog.h"
#include "emu/emu.h"
#include "kmgr/kmgr.h"
#include "model/kmodel.h"
#include "sched/ksched.h"

/* The seed's asserts name a source location of the binary; ours log it and
 * abort.  Only invariants reach one: bad input is refused before. */
#define KMGR_ASSERT(cond, where)                                                                   \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			klog_error("assertion failed: %s (%s)", #cond, where);                     \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The state the loader gives a model and the unload guard requires (the
 * seed's QUIRK: READY and STOPPED are the same 4). */
#define DLR_MODEL_STATE_READY 4u

/*
 * One entry of an io map, the seed's io_node_info_t (144 bytes there; ours
 * carries the name inline, where the seed's RB node keeps it as the key).
 */
typedef struct io_node_info {
	char name[NRT_TENSOR_NAME_MAX];
	uint64_t size;
	nrt_dtype_t dtype;
	nrt_tensor_usage_t usage;
	uint32_t ndim;
	uint32_t shape[KMODEL_MAX_NDIM];
	uint32_t model_index; /* position among its kind in model order */
} io_node_info_t;

/*
 * The seed's IO_MAP is a std::map<string, io_node_info_t>: iteration is in
 * key (name) order.  Ours is an array sorted by name, so the index walk of
 * kmgr_get_io_tensor_info visits the same order.  The device computes in
 * MODEL order (kbl_model_param_t.io); model_index links the two.
 */
typedef struct io_map {
	uint32_t count;
	io_node_info_t *nodes;
} io_map_t;

/* The bridge between H_NN and H_MODEL (the seed's 72-byte record). */
typedef struct dlr_kelf_model {
	H_MODEL h_model;             /* +0x00 */
	uint32_t sg_count;           /* +0x08 */
	uint32_t has_cc;             /* +0x0c */
	uint8_t uuid[16];            /* +0x10 */
	const virtual_core_t *vcore; /* +0x20 the cores the subgraphs sit on */
	uint8_t reserved[0x48 - 0x28];
} dlr_kelf_model_t;
_Static_assert(sizeof(dlr_kelf_model_t) == 0x48, "the seed's dlr_kelf_model_t is 72 bytes");

/*
 * The per-model record, 480 bytes as the seed's operator delete(mod, 0x1E0)
 * proves; the fields the seed anchors sit at the seed's offsets.  ref_count
 * is the whole concurrency model between execute and unload (seed §1).
 */
struct dlr_model {
	H_NN h_nn;                  /* +0x000 */
	uint32_t sg_count;          /* +0x004 the seed's nkbin */
	virtual_core_t *vcore;      /* +0x008 */
	char name[KMODEL_NAME_MAX]; /* +0x010 */
	uint8_t uuid[16];           /* +0x050 */
	io_map_t input_info;        /* +0x060 */
	io_map_t output_info;       /* +0x070 */
	io_node_info_t *io_nodes;   /* +0x080 the one block both maps live in */
	uint32_t has_cc;            /* +0x088 */
	uint8_t reserved0[0x118 - 0x08c];
	uint32_t interned_model_id; /* +0x118 */
	uint8_t reserved1[0x1a0 - 0x11c];
	dlr_kelf_model_t *kelf_model; /* +0x1a0 */
	uint32_t state;               /* +0x1a8 */
	uint32_t reserved2;
	ks_atomic_t ref_count; /* +0x1b0 */
	ks_atomic_t mac_count; /* +0x1b8 */
	/* The seed's is_profiling is a 32-bit flag at +0x1c4; ours is the
	 * 8-byte ks_atomic_t over 0x1c0..0x1c8, since setters race with exec. */
	ks_atomic_t is_profiling; /* +0x1c0 */
	uint8_t reserved3[0x1e0 - 0x1c8];
};
_Static_assert(sizeof(struct dlr_model) == 0x1e0, "the seed's dlr_model is 480 bytes");
_Static_assert(offsetof(struct dlr_model, interned_model_id) == 0x118, "seed +0x118");
_Static_assert(offsetof(struct dlr_model, kelf_model) == 0x1a0, "seed +0x1A0");
_Static_assert(offsetof(struct dlr_model, state) == 0x1a8, "seed +0x1A8");
_Static_assert(offsetof(struct dlr_model, ref_count) == 0x1b0, "seed +0x1B0");

/* ---- registry.c ---- */
/* Insert under the write lock with id = ++last_nn_id; NRT_RESOURCE when
 * the map cannot grow (no id is consumed then). */
NRT_STATUS dlr_model_set_insert(dlr_model *mod);
/* Erase under the write lock; the record if it was there, else NULL. */
dlr_model *dlr_model_set_erase(H_NN h_nn);
/* Free the map itself (kmgr_destroy, registry empty). */
void dlr_model_set_release(void);
uint32_t dlr_model_set_min_id(void);
/* db_get_nn_ref_count as every entry point uses it: on a miss the seed's
 * error line, "Failed to find model: <id>", and NULL. */
static inline dlr_model *kmgr_find_nn(H_NN h_nn)
{
	dlr_model *mod = db_get_nn_ref_count(h_nn);

	if (!mod)
		klog_error("Failed to find model: %u", h_nn.id);
	return mod;
}

/* ---- init.c ---- */
/* The seed's async_exec_workers: NULL in sync mode; set by kmgr_init. */
extern kmgr_async_exec_worker_threads_t *async_exec_workers;
uint64_t kmgr_drain_warn_iters(void);
bool kmgr_is_initialized(void);

/* ---- exec_resources.c ---- */
NRT_STATUS dlr_check_valid_io_sets(const dlr_model *mod, const nrt_tensor_set_t *in,
                                   const nrt_tensor_set_t *out);
NRT_STATUS kmgr_exec_pre(dlr_model *mod, const nrt_tensor_set_t *in, nrt_tensor_set_t *out,
                         kmgr_exec_mode_t mode, kmgr_exec_resources_t **out_res);
void kmgr_exec_resources_free(kmgr_exec_resources_t **res_ptr);

/* ---- stage.c ---- */
NRT_STATUS dlr_kelf_stage(const kmodel_t *kg, const virtual_core_t *vcore,
                          const kbl_model_param_t *param, H_MODEL h_model, const char *name,
                          const uint8_t *uuid, dlr_kelf_model_t **out);
void dlr_kelf_unstage(dlr_kelf_model_t *km);

/* ---- unload.c ---- */
/* Teardown leaf, also the load rollback: unstage, free the record. */
NRT_STATUS kmgr_unstage_kelf_model(dlr_model *mod);

#endif /* DLR_H */
