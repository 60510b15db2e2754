/*
 * nrt_status.h - status codes of the Neuron Runtime C API.
 *
 * kmgr-fuzz reimplements the public API for an emulated device; the names
 * and the numeric values are ABI and identical to the public header.
 */
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
	NRT_SUCCESS = 0,
	NRT_FAILURE = 1,        /* non specific failure */
	NRT_INVALID = 2,        /* invalid NEFF, bad instruction, bad DMA descriptor, bad input */
	NRT_INVALID_HANDLE = 3, /* invalid model handle */
	NRT_RESOURCE = 4,       /* failed to allocate a resource for the requested operation */
	NRT_TIMEOUT = 5,        /* operation timed out */
	NRT_HW_ERROR = 6,       /* hardware failure */
	NRT_QUEUE_FULL = 7,     /* not enough space in the execution input queue */
	NRT_LOAD_NOT_ENOUGH_NC = 9,        /* failed to allocate enough NCs for loading a NEFF */
	NRT_UNSUPPORTED_NEFF_VERSION = 10, /* unsupported version of NEFF */
	NRT_FAIL_HOST_MEM_ALLOC = 11,      /* failed to allocate host memory */
	NRT_UNINITIALIZED = 13,            /* API called before nrt_init */
	NRT_CLOSED = 14,                   /* API called after nrt_close */
	NRT_QUEUE_EMPTY = 15,              /* accessing a queue with no data */

	NRT_EXEC_UNIT_UNRECOVERABLE = 101, /* the execution unit is in an unrecoverable state */

	NRT_EXEC_BAD_INPUT = 1002, /* invalid input submitted to exec() */
	NRT_EXEC_COMPLETED_WITH_NUM_ERR =
	    1003,                           /* execution completed with numerical errors (NaN) */
	NRT_EXEC_COMPLETED_WITH_ERR = 1004, /* execution completed with other errors */
	NRT_EXEC_NC_BUSY = 1005,            /* the neuron core is locked by another model/process */
	NRT_EXEC_OOB = 1006,     /* indirect memcopies or embedding updates out of bound */
	NRT_COLL_PENDING = 1100, /* collective operation is still pending */

	NRT_EXEC_HW_ERR_COLLECTIVES = 1200, /* stuck in a collectives op (missing notifications) */
	NRT_EXEC_HW_ERR_HBM_UE = 1201,      /* HBM unrepairable uncorrectable error */
	NRT_EXEC_HW_ERR_NC_UE = 1202,       /* on-chip memory parity error */
	NRT_EXEC_HW_ERR_DMA_ABORT = 1203,   /* a DMA engine encountered an unrecoverable error */
	NRT_EXEC_SW_NQ_OVERFLOW = 1204,     /* software notification queue overflow */
	NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE = 1205, /* HBM repairable uncorrectable error */
	NRT_NETWORK_PROXY_FAILURE = 1206,         /* EFA network proxy operation failed */
} NRT_STATUS;

const char *nrt_get_status_as_str(NRT_STATUS status);

#ifdef __cplusplus
}
#endif
