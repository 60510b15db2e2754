/*
 * status.c - nrt_get_status_as_str: the enumerator's name for every
 * NRT_STATUS of nrt_status.h, "NRT_UNKNOWN_STATUS" for any other value.
 */
#include <stddef.h>

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

const char *nrt_get_status_as_str(NRT_STATUS status)
{
	/* A switch, not a table: the values are sparse (0..15, 101, 1002...). */
	switch (status) {
#define NRT_STATUS_CASE(name)                                                                      \
	case name:                                                                                 \
		return #name;
		NRT_STATUS_NAMES(NRT_STATUS_CASE)
#undef NRT_STATUS_CASE
	}
	return "NRT_UNKNOWN_STATUS";
}
