/*
 * iob.c - the tensors of one execution: a model's inputs, filled with a
 * pattern the op's index seeds, and its outputs, in the placements the
 * op names; the oracle verifies the outputs against the inputs. */
#include <stdlib.h>
#include <string.h>

#include <nrt/nrt.h>

#include "base/kattr.h"
#include "harness/state.h"

/* No coverage counters on byte loops over tensor data (KATTR_NO_COVERAGE). */
KATTR_NO_COVERAGE static void kh_fill_pattern(uint8_t *p, uint64_t n, uint8_t first, uint8_t step)
{
	for (uint64_t k = 0; k < n; k++)
		p[k] = (uint8_t)(first + k * step);
}

void kh_iob_free(kh_iob_t *b)
{
	if (b->in)
		nrt_destroy_tensor_set(&b->in);
	if (b->out)
		nrt_destroy_tensor_set(&b->out);
	for (unsigned i = 0; i < KH_MAX_IO; i++) {
		if (b->t[i])
			nrt_tensor_free(&b->t[i]);
		free(b->buf[i]);
		free(b->data[i]);
	}
	memset(b, 0, sizeof(*b));
}

static NRT_STATUS kh_make_tensor(kh_iob_t *b, unsigned i, int place, int nc)
{
	uint64_t size = b->io->size[i];
	const char *name = b->io->name[i];
	NRT_STATUS rc;

	if (place == KPROG_PLACE_DEV || place == KPROG_PLACE_HOST)
		return nrt_tensor_allocate(place == KPROG_PLACE_DEV ? NRT_TENSOR_PLACEMENT_DEVICE
		                                                    : NRT_TENSOR_PLACEMENT_HOST,
		                           nc, size, name, &b->t[i]);
	rc = nrt_tensor_allocate_empty(name, &b->t[i]);
	if (rc)
		return rc;
	b->buf[i] = calloc(1, size);
	if (!b->buf[i])
		abort();
	return nrt_tensor_attach_buffer(b->t[i], b->buf[i], size);
}

static NRT_STATUS kh_fill_input(kh_iob_t *b, unsigned i)
{
	uint64_t size = b->io->size[i];

	b->data[i] = malloc(size);
	if (!b->data[i])
		abort();
	kh_fill_pattern(b->data[i], size, (uint8_t)(b->seed * 13u + i * 31u), 7);
	return nrt_tensor_write(b->t[i], b->data[i], 0, size);
}

/* One side (inputs or outputs); MISSING leaves out its first tensor, the
 * bind error edge; a mix gives each tensor its own placement. */
static NRT_STATUS kh_build_side(kh_iob_t *b, bool input, int place, int nc)
{
	uint32_t from = input ? 0 : b->io->n_in;
	uint32_t n = input ? b->io->n_in : b->io->n_out;
	nrt_tensor_set_t *set = input ? b->in : b->out;
	NRT_STATUS rc = NRT_SUCCESS;

	for (uint32_t j = 0; j < n && rc == NRT_SUCCESS; j++) {
		unsigned i = from + j;

		int pj = kprog_mix_place(place, j); /* a mix: each tensor its own */

		if (pj == KPROG_PLACE_MISSING && j == 0)
			continue;
		rc = kh_make_tensor(b, i, pj == KPROG_PLACE_MISSING ? KPROG_PLACE_DEV : pj, nc);
		if (rc == NRT_SUCCESS && input)
			rc = kh_fill_input(b, i);
		if (rc == NRT_SUCCESS)
			rc = nrt_add_tensor_to_tensor_set(set, b->io->name[i], b->t[i]);
	}
	return rc;
}

NRT_STATUS kh_iob_build(kh_iob_t *b, const oracle_io_t *io, uint32_t seed, int in_place,
                        int out_place, int nc)
{
	NRT_STATUS rc;

	memset(b, 0, sizeof(*b));
	b->io = io;
	b->seed = seed;
	rc = nrt_allocate_tensor_set(&b->in);
	if (rc == NRT_SUCCESS)
		rc = nrt_allocate_tensor_set(&b->out);
	if (rc == NRT_SUCCESS)
		rc = kh_build_side(b, true, in_place, nc);
	if (rc == NRT_SUCCESS)
		rc = kh_build_side(b, false, out_place, nc);
	if (rc)
		kh_iob_free(b);
	return rc;
}

/* The oracle compares the outputs with the formula; a missing input
 * leaves nothing to compare against. */
void kh_iob_verify(kh_iob_t *b, unsigned op)
{
	const oracle_io_t *io = b->io;

	for (uint32_t i = 0; i < io->n_in; i++)
		if (!b->data[i])
			return;
	oracle_check_outputs(op, io, (const uint8_t *const *)b->data, b->t + io->n_in);
	ks_atomic_add_quiet(&kh_state.checked, 1);
}
