/*
 * kmodel_int.h - what the parser and the builder share: the checks both
 * apply (so a model the builder accepts is exactly one the parser accepts),
 * the rejection log line, and the checksum.
 */
#ifndef KMODEL_INT_H
#define KMODEL_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kmodel.h"

/* Smallest and largest encoded tensor record. */
#define KMODEL_REC_MIN  (1u + 1u + 3u + 4u + 8u)
#define KMODEL_REC_MAX  (1u + 255u + 3u + 4u * KMODEL_MAX_NDIM + 8u)
#define KMODEL_CRC_SIZE 4u

/* Log "model: bad field 'F': ..." where F is the field, prefixed by
 * "tensor[idx]." when idx >= 0. */
void kmodel__bad(int idx, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* n bytes, 1 <= n <= max, all printable ASCII. */
bool kmodel__name_ok(const char *s, size_t n, size_t max);
NRT_STATUS kmodel__check_model_name(const char *name, size_t n);
NRT_STATUS kmodel__check_nkbin(uint32_t nkbin);
/* usage, dtype and ndim of tensor idx: checked before its dims are read. */
NRT_STATUS kmodel__check_kind(int idx, uint32_t usage, uint32_t dtype, uint32_t ndim);
/* dims of tensor idx (dtype and ndim already checked); *size gets the bytes. */
NRT_STATUS kmodel__check_dims(int idx, uint32_t dtype, uint32_t ndim, const uint32_t *shape,
                              uint64_t *size);
/* name, the name of tensor idx, differs from those of tensors[0..idx). */
NRT_STATUS kmodel__check_unique(const kmodel_t *m, uint32_t idx, const char *name);
/* At least one input and one output. */
NRT_STATUS kmodel__check_io(const kmodel_t *m);

uint32_t kmodel__crc32(const uint8_t *p, size_t n);
size_t kmodel__count_zeros(const char *s, size_t n); /* leading NUL bytes of s[0..n) */

#endif /* KMODEL_INT_H */
