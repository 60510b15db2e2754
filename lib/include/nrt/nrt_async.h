/*
 * nrt_async.h - the explicit ("NRT 3.0") asynchronous API subset:
 * schedule an execution, poll its sequence number, read the last completed
 * sequence of an execution unit, and a minimal error tracker.
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

/* A sequence number: the execution unit id in the top 16 bits, a strictly
 * ordered sequence number in the low 48: (tail & NRTA_SEQ_NUM_MASK) | (xu_id << 48). */
typedef uint64_t nrta_seq_t;
typedef uint16_t nrta_xu_id_t;

#define NRTA_SEQ_NUM_MAX             ((1ull << 48) - 1)
#define NRTA_SEQ_NUM_MASK            NRTA_SEQ_NUM_MAX
#define NRTA_SEQ_GET_SEQ_NUM(seq_id) (seq_id & NRTA_SEQ_NUM_MASK)
#define NRTA_SEQ_GET_XU_ID(seq_id)   (seq_id >> 48)
#define NRTA_SEQ_XU_SHIFT            48 /* kmgr-fuzz addition */

/* Execution units of a logical core. */
typedef enum nrta_xu {
	NRTA_XU_TENSOR_READ = 0,
	NRTA_XU_TENSOR_WRITE,
	NRTA_XU_TENSOR_OP, /* tensor ops other than read and write */
	NRTA_XU_COMPUTE,
	NRTA_XU_COLLECTIVES,
	NRTA_XU_TYPE_NUM
} nrta_xu_t;

typedef struct nrta_error {
	nrta_seq_t seq_id;
	uint64_t error_code; /* NRT_STATUS, typed uint64_t for a fixed layout */
} nrta_error_t;
#ifdef __cplusplus
static_assert(sizeof(nrta_error_t) == 16, "nrta_error_t must be of size 16");
#else
_Static_assert(sizeof(nrta_error_t) == 16, "nrta_error_t must be of size 16");
#endif

typedef struct nrta_error_tracker nrta_error_tracker_t;

NRT_STATUS nrta_error_tracker_create(uint32_t lnc_idx, nrta_error_tracker_t **error_tracker);
void nrta_error_tracker_destroy(nrta_error_tracker_t *error_tracker);
/** The errors recorded since the last call; the list is owned by the tracker. */
NRT_STATUS nrta_error_tracker_get_list(nrta_error_tracker_t *error_tracker,
                                       const nrta_error_t **list, size_t *error_count);

/** Schedule an execution; returns at once with its sequence number.  Host
 *  tensors are rejected with NRT_INVALID; a full queue gives NRT_QUEUE_FULL. */
NRT_STATUS nrta_execute_schedule(nrt_model_t *model, const nrt_tensor_set_t *input,
                                 nrt_tensor_set_t *output, int queue, nrta_error_tracker_t *err,
                                 nrta_seq_t *req_sequence);

/** Has the request with this sequence number completed? */
NRT_STATUS nrta_is_completed(nrta_seq_t seq, bool *is_completed);

/** The last completed sequence number of an execution unit's queue. */
NRT_STATUS nrta_get_sequence(uint32_t lnc, nrta_xu_t xu, int queue, nrta_seq_t *seq);

#ifdef __cplusplus
}
#endif
