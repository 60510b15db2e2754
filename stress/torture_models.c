/*
 * torture_models.c - what the roles of the stress binaries load and run: a
 * serialized model with n inputs and outputs, and its tensors (allocate,
 * fill with a seeded pattern, verify against the device's formula).
 */
#include "torture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "model/kmodel.h"

/* ------------------------------------------------------------ models */

NRT_STATUS torture_model_bytes(uint32_t n_in, uint32_t n_out, uint32_t nkbin, uint8_t **bytes,
                               size_t *len)
{
	uint32_t shape[1] = {TORTURE_IO_BYTES};
	char name[32];
	NRT_STATUS st = NRT_SUCCESS;
	uint8_t *k = NULL;
	kmodel_t *m;

	snprintf(name, sizeof(name), "t%u%u%u", n_in, n_out, nkbin);
	m = kmodel_new(name, nkbin, false);
	if (!m)
		return NRT_RESOURCE;
	for (uint32_t i = 0; i < n_in + n_out && st == NRT_SUCCESS; i++) {
		bool in = i < n_in;

		snprintf(name, sizeof(name), "%s%u", in ? "in" : "out", in ? i : i - n_in);
		st = kmodel_add_tensor(m, name,
		                       in ? NRT_TENSOR_USAGE_INPUT : NRT_TENSOR_USAGE_OUTPUT,
		                       NRT_DTYPE_UINT8, 1, shape);
	}
	if (st == NRT_SUCCESS)
		st = kmodel_serialize(m, &k, len);
	kmodel_free(m);
	if (st != NRT_SUCCESS)
		return st;
	/* A plain malloc copy: the bytes must not count as library memory in
	 * the accounting checks. */
	*bytes = malloc(*len);
	if (*bytes)
		memcpy(*bytes, k, *len);
	kfree(k);
	return *bytes ? NRT_SUCCESS : NRT_RESOURCE;
}

NRT_STATUS torture_io_alloc(torture_io_t *io, uint32_t n_in, uint32_t n_out,
                            nrt_tensor_placement_t placement, int nc)
{
	NRT_STATUS st;
	char name[16];

	memset(io, 0, sizeof(*io));
	io->n_in = n_in;
	io->n_out = n_out;
	st = nrt_allocate_tensor_set(&io->in);
	if (st == NRT_SUCCESS)
		st = nrt_allocate_tensor_set(&io->out);
	for (uint32_t i = 0; i < n_in + n_out && st == NRT_SUCCESS; i++) {
		bool in = i < n_in;
		nrt_tensor_t **tp = in ? &io->tin[i] : &io->tout[i - n_in];

		snprintf(name, sizeof(name), "%s%u", in ? "in" : "out", in ? i : i - n_in);
		st = nrt_tensor_allocate(placement, nc, TORTURE_IO_BYTES, name, tp);
		if (st == NRT_SUCCESS)
			st = nrt_add_tensor_to_tensor_set(in ? io->in : io->out, name, *tp);
	}
	if (st != NRT_SUCCESS)
		torture_io_free(io);
	return st;
}

void torture_io_free(torture_io_t *io)
{
	if (io->in)
		nrt_destroy_tensor_set(&io->in);
	if (io->out)
		nrt_destroy_tensor_set(&io->out);
	for (int i = 0; i < 4; i++) {
		if (io->tin[i])
			nrt_tensor_free(&io->tin[i]);
		if (io->tout[i])
			nrt_tensor_free(&io->tout[i]);
	}
}

NRT_STATUS torture_io_fill(torture_io_t *io, uint64_t r)
{
	NRT_STATUS st = NRT_SUCCESS;

	for (uint32_t i = 0; i < io->n_in && st == NRT_SUCCESS; i++) {
		for (uint32_t k = 0; k < TORTURE_IO_BYTES; k++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			io->data[i][k] = (uint8_t)(r >> 56);
		}
		st = nrt_tensor_write(io->tin[i], io->data[i], 0, TORTURE_IO_BYTES);
	}
	return st;
}

int torture_io_verify(torture_io_t *io)
{
	const uint8_t *in[4];
	uint64_t in_size[4];
	uint8_t want[TORTURE_IO_BYTES], got[TORTURE_IO_BYTES];

	for (uint32_t i = 0; i < io->n_in; i++) {
		in[i] = io->data[i];
		in_size[i] = TORTURE_IO_BYTES;
	}
	for (uint32_t j = 0; j < io->n_out; j++) {
		emu_compute_expected(io->n_in, in, in_size, j, want, TORTURE_IO_BYTES);
		if (nrt_tensor_read(io->tout[j], got, 0, TORTURE_IO_BYTES) != NRT_SUCCESS)
			return (int)j + 1;
		if (memcmp(want, got, TORTURE_IO_BYTES) != 0)
			return (int)j + 1;
	}
	return 0;
}
