/*
 * ktest_model.h - model and IO fixtures on the public API: a container of
 * n u8 inputs "in<i>" and outputs "out<j>", tensors allocated and bound in
 * sets, inputs filled, outputs checked against the device's compute
 * formula (emu_compute_expected).
 */
#ifndef KTEST_MODEL_H
#define KTEST_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt.h>

#define KT_NRT_MAX_IO 8

/* Container bytes of a model with u8 inputs in_sizes[] and outputs
 * out_sizes[] (elements), nkbin subgraphs, collectives when cc, or the
 * builder's status: the variant for programs that must outlive an injected
 * fault (the stress binaries).  *bytes is kalloc'd, or malloc'd when
 * malloc_copy (outside the library's accounting). */
NRT_STATUS kt_model_try(const char *name, uint32_t nkbin, bool cc, uint32_t n_in,
                        const uint32_t *in_sizes, uint32_t n_out, const uint32_t *out_sizes,
                        bool malloc_copy, uint8_t **bytes, size_t *len);

/* Container bytes of a model with u8 inputs in_sizes[] and outputs
 * out_sizes[] (elements), nkbin subgraphs, collectives when cc; allocated
 * with kalloc (kfree them), so they count as library memory. */
uint8_t *kt_model_build(const char *name, uint32_t nkbin, bool cc, uint32_t n_in,
                        const uint32_t *in_sizes, uint32_t n_out, const uint32_t *out_sizes,
                        size_t *len);

/* The same bytes copied to malloc (free them), outside the library's
 * accounting. */
uint8_t *kt_model_malloc(const char *name, uint32_t nkbin, bool cc, uint32_t n_in,
                         const uint32_t *in_sizes, uint32_t n_out, const uint32_t *out_sizes,
                         size_t *len);

/* Assert that got[0..n) is output j of a model whose n_in inputs are
 * in[i] (sizes[i] bytes), as the device computes it. */
void kt_expect_output(uint32_t n_in, const uint8_t *const *in, const uint64_t *sizes, uint32_t j,
                      const uint8_t *got, uint32_t n);

/* Tensors and sets bound to one model through the public API: set n_in,
 * n_out, in_sizes and out_sizes, then kt_nrt_io_make. */
typedef struct kt_nrt_io {
	uint32_t n_in, n_out;
	uint32_t in_sizes[KT_NRT_MAX_IO], out_sizes[KT_NRT_MAX_IO];
	nrt_tensor_t *in[KT_NRT_MAX_IO], *out[KT_NRT_MAX_IO];
	nrt_tensor_set_t *in_set, *out_set;
} kt_nrt_io_t;

/* Allocate placement tensors on core nc, each added to its set under its
 * model name; when init, input i filled with (i*7 + k*3) and outputs with
 * 0xEE.  On an error, what was allocated is freed and the status returned. */
NRT_STATUS kt_nrt_io_open(kt_nrt_io_t *io, nrt_tensor_placement_t placement, int nc, bool init);

/* kt_nrt_io_open with init, asserted to succeed. */
void kt_nrt_io_make(kt_nrt_io_t *io, nrt_tensor_placement_t placement, int nc);

/* Every output holds out_j[k] = j + 1 + sum_i in_i[k mod size_i], checked
 * against that formula written out and against the device's own. */
void kt_nrt_io_check(const kt_nrt_io_t *io);

/* Destroy the sets, free the tensors (what was allocated: both frees take
 * NULL). */
void kt_nrt_io_free(kt_nrt_io_t *io);

#endif /* KTEST_MODEL_H */
