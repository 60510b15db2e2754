/*
 * nrt_test.h - helpers the lib/nrt tests share: build a u8 model in
 * memory, bind tensors for it, check outputs against the device's compute
 * formula, and assert that every accounting figure is zero.
 */
#ifndef NRT_TEST_H
#define NRT_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <nrt/nrt.h>
#include <nrt/nrt_async.h>
#include <nrt/nrt_experimental.h>

#include "base/kalloc.h"
#include "base/kfault.h"
#include "emu/emu.h"
#include "ktest.h"
#include "ktest_emu.h"
#include "model/kmodel.h"

#define NT_MAX_IO 8

/* A model with u8 inputs in_sizes[] and outputs out_sizes[], named in0..,
 * out0..; nkbin subgraphs.  Returns container bytes (free with free()). */
static inline uint8_t *nt_model(uint32_t nkbin, bool cc, uint32_t n_in, const uint32_t *in_sizes,
                                uint32_t n_out, const uint32_t *out_sizes, size_t *len)
{
	kmodel_t *m = kmodel_new("nt", nkbin, cc);
	uint8_t *kbytes = NULL, *bytes;
	char name[16];

	KT_ASSERT(m != NULL);
	for (uint32_t i = 0; i < n_in; i++) {
		snprintf(name, sizeof(name), "in%u", i);
		KT_EQ(kmodel_add_tensor(m, name, NRT_TENSOR_USAGE_INPUT, NRT_DTYPE_UINT8, 1,
		                        &in_sizes[i]),
		      NRT_SUCCESS);
	}
	for (uint32_t i = 0; i < n_out; i++) {
		snprintf(name, sizeof(name), "out%u", i);
		KT_EQ(kmodel_add_tensor(m, name, NRT_TENSOR_USAGE_OUTPUT, NRT_DTYPE_UINT8, 1,
		                        &out_sizes[i]),
		      NRT_SUCCESS);
	}
	KT_EQ(kmodel_serialize(m, &kbytes, len), NRT_SUCCESS);
	kmodel_free(m);
	/* Copy out of kalloc so the container does not count as library memory. */
	bytes = malloc(*len);
	KT_ASSERT(bytes != NULL);
	memcpy(bytes, kbytes, *len);
	kfree(kbytes);
	return bytes;
}

/* Tensors and sets bound to one model. */
typedef struct nt_io {
	uint32_t n_in, n_out;
	uint32_t in_sizes[NT_MAX_IO], out_sizes[NT_MAX_IO];
	nrt_tensor_t *in[NT_MAX_IO], *out[NT_MAX_IO];
	nrt_tensor_set_t *in_set, *out_set;
} nt_io_t;

/* Allocate placement tensors on core nc, fill input i with (i*7 + k*3). */
static inline void nt_io_make(nt_io_t *io, nrt_tensor_placement_t placement, int nc)
{
	char name[16];
	uint8_t buf[4096];

	KT_EQ(nrt_allocate_tensor_set(&io->in_set), NRT_SUCCESS);
	KT_EQ(nrt_allocate_tensor_set(&io->out_set), NRT_SUCCESS);
	for (uint32_t i = 0; i < io->n_in; i++) {
		KT_LE(io->in_sizes[i], sizeof(buf));
		snprintf(name, sizeof(name), "in%u", i);
		KT_EQ(nrt_tensor_allocate(placement, nc, io->in_sizes[i], name, &io->in[i]),
		      NRT_SUCCESS);
		for (uint32_t k = 0; k < io->in_sizes[i]; k++)
			buf[k] = (uint8_t)(i * 7 + k * 3);
		KT_EQ(nrt_tensor_write(io->in[i], buf, 0, io->in_sizes[i]), NRT_SUCCESS);
		KT_EQ(nrt_add_tensor_to_tensor_set(io->in_set, name, io->in[i]), NRT_SUCCESS);
	}
	for (uint32_t j = 0; j < io->n_out; j++) {
		snprintf(name, sizeof(name), "out%u", j);
		KT_EQ(nrt_tensor_allocate(placement, nc, io->out_sizes[j], name, &io->out[j]),
		      NRT_SUCCESS);
		KT_EQ(nrt_tensor_memset(io->out[j], 0, 0xEE, io->out_sizes[j]), NRT_SUCCESS);
		KT_EQ(nrt_add_tensor_to_tensor_set(io->out_set, name, io->out[j]), NRT_SUCCESS);
	}
}

/* Every output holds out_j[k] = j + 1 + sum_i in_i[k mod size_i]. */
static inline void nt_io_check(const nt_io_t *io)
{
	uint8_t in[NT_MAX_IO][4096], got[4096], want[4096];
	const uint8_t *inp[NT_MAX_IO];
	uint64_t in_size[NT_MAX_IO];

	for (uint32_t i = 0; i < io->n_in; i++) {
		KT_EQ(nrt_tensor_read(io->in[i], in[i], 0, io->in_sizes[i]), NRT_SUCCESS);
		inp[i] = in[i];
		in_size[i] = io->in_sizes[i];
	}
	for (uint32_t j = 0; j < io->n_out; j++) {
		uint32_t n = io->out_sizes[j];

		KT_EQ(nrt_tensor_read(io->out[j], got, 0, n), NRT_SUCCESS);
		for (uint32_t k = 0; k < n; k++) {
			unsigned s = j + 1;

			for (uint32_t i = 0; i < io->n_in; i++)
				s += in[i][k % io->in_sizes[i]];
			want[k] = (uint8_t)s;
		}
		KT_MEMEQ(got, want, n);
		/* The device's own oracle agrees with the formula written out here. */
		emu_compute_expected(io->n_in, inp, in_size, j, want, n);
		KT_MEMEQ(got, want, n);
	}
}

static inline void nt_io_free(nt_io_t *io)
{
	nrt_destroy_tensor_set(&io->in_set);
	nrt_destroy_tensor_set(&io->out_set);
	for (uint32_t i = 0; i < io->n_in; i++)
		nrt_tensor_free(&io->in[i]);
	for (uint32_t j = 0; j < io->n_out; j++)
		nrt_tensor_free(&io->out[j]);
}

static inline void nt_init(void)
{
	KT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS);
}

/* The environment nrt_init reads, cleared, so that a test starts from the
 * defaults (every core visible, synchronous execution, the default core
 * count) whatever the caller's environment says.  KMGR_FAULT is left to
 * each test (the ones with fault plans of their own clear it). */
static inline void nt_env_clear(void)
{
	unsetenv("NEURON_RT_VISIBLE_CORES");
	unsetenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS");
	unsetenv("KMGR_EMU_NC_COUNT");
}

#endif /* NRT_TEST_H */
