/*
 * nrt.h - the Neuron Runtime C API subset that kmgr-fuzz implements on an
 * emulated device.  Names, types, enum values and semantics follow the
 * public header, so a program written against it compiles unmodified with
 * -I<prefix>/include -L<prefix>/lib -lnrt -pthread.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Major and minor version of the runtime API. */
#define NRT_MAJOR_VERSION 2
#define NRT_MINOR_VERSION 0

typedef enum nrt_tensor_placement {
	NRT_TENSOR_PLACEMENT_DEVICE,  /* the tensor is allocated on Neuron device memory */
	NRT_TENSOR_PLACEMENT_HOST,    /* the tensor is allocated on host memory */
	NRT_TENSOR_PLACEMENT_VIRTUAL, /* the tensor has no memory until a buffer is attached */
} nrt_tensor_placement_t;

typedef enum nrt_framework_type {
	NRT_FRAMEWORK_TYPE_INVALID = 0,
	NRT_FRAMEWORK_TYPE_NO_FW = 1,
	NRT_FRAMEWORK_TYPE_TENSORFLOW,
	NRT_FRAMEWORK_TYPE_PYTORCH,
	NRT_FRAMEWORK_TYPE_MXNET,
} nrt_framework_type_t;

/* Opaque handles.  The public header declares `typedef void nrt_tensor_set_t;`;
 * kmgr-fuzz keeps a distinct struct type so the library is type-checked.
 * Both are object pointers with the same representation, and a program that
 * declares `nrt_tensor_set_t *set` compiles unmodified; only code that passes
 * a `void **` where `nrt_tensor_set_t **` is expected needs a cast. */
typedef struct nrt_model nrt_model_t;
typedef struct nrt_tensor nrt_tensor_t;
typedef struct nrt_tensor_set nrt_tensor_set_t;

/** Initialize the runtime (again after nrt_close is allowed).  NEURON_RT_VISIBLE_CORES
 *  limits the cores; NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS > 0 turns on implicit async. */
NRT_STATUS nrt_init(nrt_framework_type_t framework, const char *fw_version,
                    const char *fal_version);

/** Unload every model and release the device. */
void nrt_close(void);

/** Load a model (the container's bytes) on nc_count cores from start_nc;
 *  -1/-1 picks the first free core and as many cores as the model needs. */
NRT_STATUS nrt_load(const void *neff_bytes, size_t size, int32_t start_nc, int32_t nc_count,
                    nrt_model_t **model);

NRT_STATUS nrt_unload(nrt_model_t *model);

NRT_STATUS nrt_get_model_nc_count(const nrt_model_t *model, uint32_t *nc_count);
NRT_STATUS nrt_get_total_nc_count(uint32_t *nc_count);
NRT_STATUS nrt_get_visible_nc_count(uint32_t *nc_count);

NRT_STATUS nrt_execute(nrt_model_t *model, const nrt_tensor_set_t *input_set,
                       nrt_tensor_set_t *output_set);
NRT_STATUS nrt_execute_repeat(nrt_model_t *model, const nrt_tensor_set_t *input_set,
                              nrt_tensor_set_t *output_set, int repeat_count);

/* NRT_STATUS of every call below before nrt_init: NRT_UNINITIALIZED; after
 * nrt_close: NRT_CLOSED.  nrt_get_total_nc_count and nrt_get_visible_nc_count
 * may be called before nrt_init, as the public header says. */

/* ---- tensors ---- */
NRT_STATUS nrt_tensor_allocate(nrt_tensor_placement_t tensor_placement, int logical_nc_id,
                               size_t size, const char *name, nrt_tensor_t **tensor);
void nrt_tensor_free(nrt_tensor_t **tensor);
NRT_STATUS nrt_tensor_read(const nrt_tensor_t *tensor, void *buf, size_t offset, size_t size);
NRT_STATUS nrt_tensor_write(nrt_tensor_t *tensor, const void *buf, size_t offset, size_t size);
NRT_STATUS nrt_tensor_copy(const nrt_tensor_t *src, size_t src_offset, nrt_tensor_t *dst,
                           size_t dst_offset, size_t size);
size_t nrt_tensor_get_size(const nrt_tensor_t *tensor);
NRT_STATUS nrt_tensor_memset(nrt_tensor_t *tensor, uint64_t offset, int value, size_t size);
NRT_STATUS nrt_tensor_allocate_empty(const char *name, nrt_tensor_t **tensor);
NRT_STATUS nrt_tensor_attach_buffer(nrt_tensor_t *tensor, void *buffer, size_t size);
NRT_STATUS nrt_tensor_allocate_slice(const nrt_tensor_t *tensor_source, size_t offset, size_t size,
                                     const char *name, nrt_tensor_t **tensor_slice);
void *nrt_tensor_get_va(const nrt_tensor_t *tensor);

/* ---- tensor sets ---- */
NRT_STATUS nrt_allocate_tensor_set(nrt_tensor_set_t **result);
void nrt_destroy_tensor_set(nrt_tensor_set_t **tensor_set);
NRT_STATUS nrt_add_tensor_to_tensor_set(nrt_tensor_set_t *tensor_set, const char *tensor_name,
                                        nrt_tensor_t *tensor);
NRT_STATUS nrt_get_tensor_from_tensor_set(nrt_tensor_set_t *tensor_set, const char *tensor_name,
                                          nrt_tensor_t **tensor);

#ifdef __cplusplus
}
#endif
