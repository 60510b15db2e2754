/*
 * model.h - the oracle's reference model of the facade's sequential
 * semantics: what a container says about its tensors (the description a
 * program's operations are checked against) and, for every operation,
 * the status its arguments and the model's state predict.  Pure functions
 * of their arguments: no library call, no scheduling point.
 *
 * Adding an operation: its prediction goes here (oracle_predict_<op>),
 * next to its row in prog/kinds.c and its kh_<op> in harness/harness.c
 * (docs/harness.md).
 */
#ifndef KORACLE_MODEL_H
#define KORACLE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt.h>
#include <nrt/nrt_experimental.h> /* NRT_TENSOR_NAME_MAX */

#define ORACLE_MAX_IO           16
#define ORACLE_MAX_TENSOR_BYTES 65536

/* A container's inputs then outputs, each in model order (the order the
 * device computes in, docs/device.md).  The facade answers tensor info in
 * another order: each side by name (the seed's walk of its IO maps, which
 * are keyed by name); by_name[k] is the model-order index of the facade's
 * k-th tensor (inputs then outputs, as the model order). */
typedef struct oracle_io {
	bool parsed;
	bool ok; /* small enough for the harness to execute */
	uint32_t nkbin, n_in, n_out;
	char name[ORACLE_MAX_IO][NRT_TENSOR_NAME_MAX];
	uint64_t size[ORACLE_MAX_IO];
	uint8_t by_name[ORACLE_MAX_IO];
} oracle_io_t;

/* What the reference model says about one op's status. */
typedef struct oracle_expect {
	bool known;      /* a prediction exists */
	NRT_STATUS want; /* the predicted status */
	NRT_STATUS alt;  /* a second acceptable status (e.g. QUEUE_FULL), or want */
} oracle_expect_t;

/* Describes a container (kmodel_parse; allocates through kalloc, so call
 * it before a fault plan is installed).  An unparsable one is !parsed. */
void oracle_describe(oracle_io_t *io, const uint8_t *bytes, size_t len);

/* The predictions, one per operation kind that reaches the library. */
oracle_expect_t oracle_predict_ok(void);
oracle_expect_t oracle_predict_load(const oracle_io_t *io, unsigned nc, int start, int count);
/* Where an execution's input or output tensors are (the oracle's own
 * names; the harness maps its operands onto them). */
typedef enum oracle_place {
	ORACLE_PLACE_DEV = 0,
	ORACLE_PLACE_HOST,
	ORACLE_PLACE_VIRT,    /* VIRTUAL with a host buffer attached */
	ORACLE_PLACE_MISSING, /* the first tensor left out of the set */
} oracle_place_t;

/* device_only: an explicit SCHEDULE, or EXEC in implicit-async mode */
oracle_expect_t oracle_predict_exec(const oracle_io_t *io, oracle_place_t in, oracle_place_t out,
                                    bool device_only);
oracle_expect_t oracle_predict_is_completed(bool bogus);
/* nrta_error_tracker_create on core 0, or (bogus) on one no device has */
oracle_expect_t oracle_predict_tracker(bool bogus);
oracle_expect_t oracle_predict_get_sequence(unsigned nc, int lnc, int xu, int queue);
oracle_expect_t oracle_predict_tensor_info(const oracle_io_t *io, bool is_input, uint32_t idx);
/* sel: a model tensor index (inputs then outputs), 6 a bogus name, 7 NULL;
 * *name is the name to ask about, *valid what the answer must be */
oracle_expect_t oracle_predict_is_valid_ifmap(const oracle_io_t *io, unsigned sel,
                                              const char **name, bool *valid);
oracle_expect_t oracle_predict_stale(void);
oracle_expect_t oracle_predict_badargs(void);

/* Where a model loaded with (start, count) runs: count cores from start,
 * or from wherever the library placed it when start is -1. */
typedef struct oracle_placement {
	int start;
	uint32_t count;
} oracle_placement_t;

/* The placement a successful load with these arguments made. */
oracle_placement_t oracle_predict_placement(const oracle_io_t *io, int start, int count);
/* kmgr_get_nc_info's answer (start, count) on an nc-core device is that
 * placement. */
bool oracle_placement_is(oracle_placement_t want, unsigned nc, uint32_t start, uint32_t count);

#endif /* KORACLE_MODEL_H */
