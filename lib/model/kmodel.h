/*
 * kmodel.h - the model container: the project's stand-in for a NEFF.
 *
 * Byte format: docs/model-format.md.  The parser is strict: every malformed
 * field gives NRT_INVALID (or NRT_UNSUPPORTED_NEFF_VERSION for a version it
 * does not know) and one log line naming the field; it never reads past the
 * buffer and never allocates a size it has not checked against the buffer.
 */
#ifndef KMODEL_H
#define KMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt_experimental.h>
#include <nrt/nrt_status.h>

#define KMODEL_MAX_NDIM      8
#define KMODEL_MAX_TENSORS   64
#define KMODEL_MAX_SUBGRAPHS 256 /* the stage fan-out's thread bound */
#define KMODEL_NAME_MAX      64

/* Container constants (docs/model-format.md). */
#define KMODEL_MAGIC            "KMGRNEFF" /* 8 bytes, no NUL in the container */
#define KMODEL_VERSION          1u
#define KMODEL_HEADER_SIZE      108u
#define KMODEL_FLAG_CC          0x1u
#define KMODEL_MAX_TENSOR_BYTES (1ull << 32) /* keeps device allocations sane */

typedef struct kmodel_tensor {
	char name[NRT_TENSOR_NAME_MAX]; /* NUL-terminated, 1..255 characters */
	nrt_tensor_usage_t usage;
	nrt_dtype_t dtype;
	uint32_t ndim;
	uint32_t shape[KMODEL_MAX_NDIM];
	uint64_t size; /* bytes: product of shape times the dtype's size */
} kmodel_tensor_t;

typedef struct kmodel {
	uint32_t version;
	char name[KMODEL_NAME_MAX];
	uint8_t uuid[16];
	uint32_t nkbin; /* subgraph count: 1, or one per core of the virtual core */
	bool has_cc;    /* collectives context: bootstrap on first execution */
	uint32_t n_tensors;
	kmodel_tensor_t *tensors; /* inputs and outputs, each kind in model order */
} kmodel_t;

/* Parse a container; *out is freed with kmodel_free. */
NRT_STATUS kmodel_parse(const void *buf, size_t len, kmodel_t **out);
void kmodel_free(kmodel_t *m);

/* Bytes per element of a dtype, 0 for NRT_DTYPE_UNKNOWN or out of range. */
uint32_t kmodel_dtype_size(nrt_dtype_t dtype);
/* "f32", "u8", ...; NULL when unknown.  And back: -1 when unknown. */
const char *kmodel_dtype_name(nrt_dtype_t dtype);
int kmodel_dtype_from_name(const char *name);

uint32_t kmodel_input_count(const kmodel_t *m);
uint32_t kmodel_output_count(const kmodel_t *m);

/* ---- builder ---------------------------------------------------------- */
/* A model in memory, built field by field, then serialized. */
kmodel_t *kmodel_new(const char *name, uint32_t nkbin, bool has_cc);
/* Adds a tensor; size is computed from dtype and shape.  NRT_INVALID for a
 * bad name, dtype or shape, NRT_RESOURCE beyond KMODEL_MAX_TENSORS. */
NRT_STATUS kmodel_add_tensor(kmodel_t *m, const char *name, nrt_tensor_usage_t usage,
                             nrt_dtype_t dtype, uint32_t ndim, const uint32_t *shape);
/* Container bytes (kalloc'd; free with kfree) with a correct checksum. */
NRT_STATUS kmodel_serialize(const kmodel_t *m, uint8_t **out, size_t *len);

#endif /* KMODEL_H */
