/*
 * nrt_status_list.h - every NRT_STATUS of nrt_status.h, once, as an X macro:
 * status.c names them (nrt_get_status_as_str), the stress binaries count
 * them (stress/torture_stats.c).  Not installed.
 */
#ifndef NRT_STATUS_LIST_H
#define NRT_STATUS_LIST_H

#include <nrt/nrt_status.h>

#define NRT_STATUS_NAMES(X)                                                                        \
	X(NRT_SUCCESS)                                                                             \
	X(NRT_FAILURE)                                                                             \
	X(NRT_INVALID)                                                                             \
	X(NRT_INVALID_HANDLE)                                                                      \
	X(NRT_RESOURCE)                                                                            \
	X(NRT_TIMEOUT)                                                                             \
	X(NRT_HW_ERROR)                                                                            \
	X(NRT_QUEUE_FULL)                                                                          \
	X(NRT_LOAD_NOT_ENOUGH_NC)                                                                  \
	X(NRT_UNSUPPORTED_NEFF_VERSION)                                                            \
	X(NRT_FAIL_HOST_MEM_ALLOC)                                                                 \
	X(NRT_UNINITIALIZED)                                                                       \
	X(NRT_CLOSED)                                                                              \
	X(NRT_QUEUE_EMPTY)                                                                         \
	X(NRT_EXEC_UNIT_UNRECOVERABLE)                                                             \
	X(NRT_EXEC_BAD_INPUT)                                                                      \
	X(NRT_EXEC_COMPLETED_WITH_NUM_ERR)                                                         \
	X(NRT_EXEC_COMPLETED_WITH_ERR)                                                             \
	X(NRT_EXEC_NC_BUSY)                                                                        \
	X(NRT_EXEC_OOB)                                                                            \
	X(NRT_COLL_PENDING)                                                                        \
	X(NRT_EXEC_HW_ERR_COLLECTIVES)                                                             \
	X(NRT_EXEC_HW_ERR_HBM_UE)                                                                  \
	X(NRT_EXEC_HW_ERR_NC_UE)                                                                   \
	X(NRT_EXEC_HW_ERR_DMA_ABORT)                                                               \
	X(NRT_EXEC_SW_NQ_OVERFLOW)                                                                 \
	X(NRT_EXEC_HW_ERR_REPAIRABLE_HBM_UE)                                                       \
	X(NRT_NETWORK_PROXY_FAILURE)

#endif /* NRT_STATUS_LIST_H */
