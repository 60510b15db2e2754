/*
 * torture_models.c - what the roles of the stress binaries load and run: a
 * model with n inputs and outputs of TORTURE_IO_BYTES, and its tensors, on
 * the test kit's status-returning fixtures (lib/ktest/ktest_model.h), with
 * the inputs filled from the thread's PRNG and the outputs verified
 * against the device's formula.
 */
#include "torture.h"

#include <stdio.h>
#include <string.h>

NRT_STATUS torture_model_bytes(uint32_t n_in, uint32_t n_out, uint32_t nkbin, uint8_t **bytes,
                               size_t *len)
{
	static const uint32_t sizes[TORTURE_MAX_IO] = {TORTURE_IO_BYTES, TORTURE_IO_BYTES,
	                                               TORTURE_IO_BYTES, TORTURE_IO_BYTES};
	char name[32];

	if (n_in > TORTURE_MAX_IO || n_out > TORTURE_MAX_IO)
		return NRT_INVALID;
	snprintf(name, sizeof(name), "t%u%u%u", n_in, n_out, nkbin);
	/* A malloc copy: the bytes must not count as library memory in the
	 * accounting checks. */
	return kt_model_try(name, nkbin, false, n_in, sizes, n_out, sizes, true, bytes, len);
}

NRT_STATUS torture_io_alloc(torture_io_t *io, uint32_t n_in, uint32_t n_out,
                            nrt_tensor_placement_t placement, int nc)
{
	memset(io, 0, sizeof(*io));
	if (n_in > TORTURE_MAX_IO || n_out > TORTURE_MAX_IO)
		return NRT_INVALID;
	io->t.n_in = n_in;
	io->t.n_out = n_out;
	for (uint32_t i = 0; i < TORTURE_MAX_IO; i++)
		io->t.in_sizes[i] = io->t.out_sizes[i] = TORTURE_IO_BYTES;
	return kt_nrt_io_open(&io->t, placement, nc, false);
}

void torture_io_free(torture_io_t *io)
{
	kt_nrt_io_free(&io->t);
}

NRT_STATUS torture_io_fill(torture_io_t *io, uint64_t r)
{
	NRT_STATUS st = NRT_SUCCESS;

	for (uint32_t i = 0; i < io->t.n_in && st == NRT_SUCCESS; i++) {
		for (uint32_t k = 0; k < TORTURE_IO_BYTES; k++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			io->data[i][k] = (uint8_t)(r >> 56);
		}
		st = nrt_tensor_write(io->t.in[i], io->data[i], 0, TORTURE_IO_BYTES);
	}
	return st;
}

int torture_io_verify(torture_io_t *io)
{
	const uint8_t *in[TORTURE_MAX_IO];
	uint64_t in_size[TORTURE_MAX_IO];
	uint8_t want[TORTURE_IO_BYTES], got[TORTURE_IO_BYTES];

	for (uint32_t i = 0; i < io->t.n_in; i++) {
		in[i] = io->data[i];
		in_size[i] = TORTURE_IO_BYTES;
	}
	for (uint32_t j = 0; j < io->t.n_out; j++) {
		emu_compute_expected(io->t.n_in, in, in_size, j, want, TORTURE_IO_BYTES);
		if (nrt_tensor_read(io->t.out[j], got, 0, TORTURE_IO_BYTES) != NRT_SUCCESS)
			return (int)j + 1;
		if (memcmp(want, got, TORTURE_IO_BYTES) != 0)
			return (int)j + 1;
	}
	return 0;
}
