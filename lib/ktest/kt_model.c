/*
 * kt_model.c - the model and IO fixtures of ktest_model.h.
 */
#include "ktest_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "emu/emu.h"
#include "ktest.h"
#include "model/kmodel.h"

uint8_t *kt_model_build(const char *name, uint32_t nkbin, bool cc, uint32_t n_in,
                        const uint32_t *in_sizes, uint32_t n_out, const uint32_t *out_sizes,
                        size_t *len)
{
	kmodel_t *m = kmodel_new(name, nkbin, cc);
	uint8_t *bytes = NULL;
	char tn[32];

	KT_ASSERT(m != NULL);
	for (uint32_t i = 0; i < n_in; i++) {
		snprintf(tn, sizeof(tn), "in%u", i);
		KT_EQ(kmodel_add_tensor(m, tn, NRT_TENSOR_USAGE_INPUT, NRT_DTYPE_UINT8, 1,
		                        &in_sizes[i]),
		      NRT_SUCCESS);
	}
	for (uint32_t j = 0; j < n_out; j++) {
		snprintf(tn, sizeof(tn), "out%u", j);
		KT_EQ(kmodel_add_tensor(m, tn, NRT_TENSOR_USAGE_OUTPUT, NRT_DTYPE_UINT8, 1,
		                        &out_sizes[j]),
		      NRT_SUCCESS);
	}
	KT_EQ(kmodel_serialize(m, &bytes, len), NRT_SUCCESS);
	kmodel_free(m);
	return bytes;
}

uint8_t *kt_model_malloc(const char *name, uint32_t nkbin, bool cc, uint32_t n_in,
                         const uint32_t *in_sizes, uint32_t n_out, const uint32_t *out_sizes,
                         size_t *len)
{
	uint8_t *kbytes = kt_model_build(name, nkbin, cc, n_in, in_sizes, n_out, out_sizes, len);
	uint8_t *bytes = malloc(*len);

	KT_ASSERT(bytes != NULL);
	memcpy(bytes, kbytes, *len);
	kfree(kbytes);
	return bytes;
}

void kt_expect_output(uint32_t n_in, const uint8_t *const *in, const uint64_t *sizes, uint32_t j,
                      const uint8_t *got, uint32_t n)
{
	uint8_t *want = malloc(n ? n : 1);

	KT_ASSERT(want != NULL);
	emu_compute_expected(n_in, in, sizes, j, want, n);
	KT_MEMEQ(got, want, n);
	free(want);
}

void kt_nrt_io_make(kt_nrt_io_t *io, nrt_tensor_placement_t placement, int nc)
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

void kt_nrt_io_check(const kt_nrt_io_t *io)
{
	uint8_t in[KT_NRT_MAX_IO][4096], got[4096], want[4096];
	const uint8_t *inp[KT_NRT_MAX_IO];
	uint64_t in_size[KT_NRT_MAX_IO];

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
		kt_expect_output(io->n_in, inp, in_size, j, got, n);
	}
}

void kt_nrt_io_free(kt_nrt_io_t *io)
{
	nrt_destroy_tensor_set(&io->in_set);
	nrt_destroy_tensor_set(&io->out_set);
	for (uint32_t i = 0; i < io->n_in; i++)
		nrt_tensor_free(&io->in[i]);
	for (uint32_t j = 0; j < io->n_out; j++)
		nrt_tensor_free(&io->out[j]);
}
