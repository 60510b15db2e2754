/*
 * nrt_experimental.h - model tensor metadata, as in the public header.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Usage of a tensor in the NEFF. */
typedef enum nrt_tensor_usage {
	NRT_TENSOR_USAGE_INPUT = 0, /* tensor is used for ifmap */
	NRT_TENSOR_USAGE_OUTPUT,    /* tensor is used for ofmap */
} nrt_tensor_usage_t;

#define NRT_TENSOR_NAME_MAX 256

/** dtypes for tensor data (the nrt_experimental.h of the 2.x headers; the
 *  newest public nrt.h moved this enum into nrt.h with the device's encoding,
 *  FLOAT32 = 0xA ...: names are the same, so sources compile either way). */
typedef enum nrt_dtype {
	NRT_DTYPE_UNKNOWN = 0,
	NRT_DTYPE_FLOAT32,
	NRT_DTYPE_FLOAT16,
	NRT_DTYPE_BFLOAT16,
	NRT_DTYPE_INT8,
	NRT_DTYPE_UINT8,
	NRT_DTYPE_INT16,
	NRT_DTYPE_UINT16,
	NRT_DTYPE_INT32,
	NRT_DTYPE_UINT32,
	NRT_DTYPE_INT64,
	NRT_DTYPE_UINT64
} nrt_dtype_t;

typedef struct nrt_tensor_info {
	char name[NRT_TENSOR_NAME_MAX]; /* name of the tensor */
	nrt_tensor_usage_t usage;       /* type of the tensor */
	size_t size;                    /* tensor size in bytes */
	nrt_dtype_t dtype;              /* data type */
	uint32_t *shape;                /* an array representing data shape */
	uint32_t ndim;                  /* the number of dimensions */
} nrt_tensor_info_t;

typedef struct nrt_tensor_info_array {
	uint64_t tensor_count;            /* total number of input and output tensors */
	nrt_tensor_info_t tensor_array[]; /* array of tensor info */
} nrt_tensor_info_array_t;

/* Function definition for async exec status callbacks (public name). */
typedef void (*NRT_ASYNC_EXEC_STATUS_CALLBACK)(void *params, uint32_t model_id, uint32_t vnc,
                                               uint64_t job_id, NRT_STATUS status);
/* kmgr-fuzz's lower-case alias of the same type (used by lib/emu). */
typedef NRT_ASYNC_EXEC_STATUS_CALLBACK nrt_async_exec_callback_t;

/** Return input/output tensor information of a model; free it with
 *  nrt_free_model_tensor_info. */
NRT_STATUS nrt_get_model_tensor_info(nrt_model_t *model, nrt_tensor_info_array_t **tensor_info);
NRT_STATUS nrt_free_model_tensor_info(nrt_tensor_info_array_t *tensor_info);

/** Register the callback that receives the status of every implicit-async
 *  execution (NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS > 0); a second call
 *  replaces the first.  params may be NULL. */
NRT_STATUS nrt_register_async_exec_callback(NRT_ASYNC_EXEC_STATUS_CALLBACK callback, void *params);

#ifdef __cplusplus
}
#endif
