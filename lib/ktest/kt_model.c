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

NRT_STATUS kt_model_try(const char *name, uint32_t nkbin, bool cc, uint32_t n_in,
                        const uint32_t *in_sizes, uint32_t n_out, const uint32_t *out_sizes,
                        bool malloc_copy, uint8_t **bytes, size_t *len)
{
	kmodel_t *m = kmodel_new(name, nkbin, cc);
	NRT_STATUS st = NRT_SUCCESS;
	uint8_t *k = NULL;
	char tn[32];

	*bytes = NULL;
	if (!m)
		return NRT_RESOURCE;
	for (uint32_t i = 0; i < n_in + n_out && st == NRT_SUCCESS; i++) {
		bool in = i < n_in;

		snprintf(tn, sizeof(tn), "%s%u", in ? "in" : "out", in ? i : i - n_in);
		st =
		    kmodel_add_tensor(m, tn, in ? NRT_TENSOR_USAGE_INPUT : NRT_TENSOR_USAGE_OUTPUT,
		                      NRT_DTYPE_UINT8, 1, in ? &in_sizes[i] : &out_sizes[i - n_in]);
	}
	if (st == NRT_SUCCESS)
		st = kmodel_serialize(m, &k, len);
	kmodel_free(m);
	if (st != NRT_SUCCESS || !malloc_copy) {
		*bytes = k;
		return st;
	}
	*bytes = malloc(*len);
	if (*bytes)
		memcpy(*bytes, k, *len);
	kfree(k);
	return *bytes ? NRT_SUCCESS : NRT_RESOURCE;
}

static uint8_t *kt_model_asserted(const char *name, uint32_t nkbin, bool cc, uint32_t n_in,
                                  const uint32_t *in_sizes, uint32_t n_out,
                                  const uint32_t *out_sizes, bool malloc_copy, size_t *len)
{
	uint8_t *bytes;

	KT_EQ(kt_model_try(name, nkbin, cc, n_in, in_sizes, n_out, out_sizes, malloc_copy, &bytes,
	                   len),
	      NRT_SUCCESS);
	return bytes;
}

uint8_t *kt_model_build(const char *name, uint32_t nkbin, bool cc, uint32_t n_in,
                        const uint32_t *in_sizes, uint32_t n_out, const uint32_t *out_sizes,
                        size_t *len)
{
	return kt_model_asserted(name, nkbin, cc, n_in, in_sizes, n_out, out_sizes, false, len);
}

uint8_t *kt_model_malloc(const char *name, uint32_t nkbin, bool cc, uint32_t n_in,
                         const uint32_t *in_sizes, uint32_t n_out, const uint32_t *out_sizes,
                         size_t *len)
{
	return kt_model_asserted(name, nkbin, cc, n_in, in_sizes, n_out, out_sizes, true, len);
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

/* One tensor of the kit: allocated, initialized when init (inputs with the
 * pattern, outputs with 0xEE), added to its set. */
static NRT_STATUS kt_nrt_io_tensor(kt_nrt_io_t *io, uint32_t i, nrt_tensor_placement_t placement,
                                   int nc, bool init)
{
	bool in = i < io->n_in;
	uint32_t j = in ? i : i - io->n_in;
	uint32_t size = in ? io->in_sizes[j] : io->out_sizes[j];
	nrt_tensor_t **tp = in ? &io->in[j] : &io->out[j];
	uint8_t buf[4096];
	char name[16];
	NRT_STATUS st;

	snprintf(name, sizeof(name), "%s%u", in ? "in" : "out", j);
	st = nrt_tensor_allocate(placement, nc, size, name, tp);
	if (st == NRT_SUCCESS && init && in) {
		if (size > sizeof(buf))
			return NRT_INVALID;
		for (uint32_t k = 0; k < size; k++)
			buf[k] = (uint8_t)(j * 7 + k * 3);
		st = nrt_tensor_write(*tp, buf, 0, size);
	}
	if (st == NRT_SUCCESS && init && !in)
		st = nrt_tensor_memset(*tp, 0, 0xEE, size);
	if (st == NRT_SUCCESS)
		st = nrt_add_tensor_to_tensor_set(in ? io->in_set : io->out_set, name, *tp);
	return st;
}

NRT_STATUS kt_nrt_io_open(kt_nrt_io_t *io, nrt_tensor_placement_t placement, int nc, bool init)
{
	NRT_STATUS st = nrt_allocate_tensor_set(&io->in_set);

	if (st == NRT_SUCCESS)
		st = nrt_allocate_tensor_set(&io->out_set);
	for (uint32_t i = 0; i < io->n_in + io->n_out && st == NRT_SUCCESS; i++)
		st = kt_nrt_io_tensor(io, i, placement, nc, init);
	if (st != NRT_SUCCESS)
		kt_nrt_io_free(io);
	return st;
}

void kt_nrt_io_make(kt_nrt_io_t *io, nrt_tensor_placement_t placement, int nc)
{
	KT_EQ(kt_nrt_io_open(io, placement, nc, true), NRT_SUCCESS);
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
