/*
 * values.c - the oracle's checks on what one operation answered
 * (oracle.h): outputs against the compute formula, tensor metadata, counts
 * and core placement against the reference model, and the model_parse
 * target's check (a parse leaves no memory behind and an accepted
 * container re-serializes to its bytes).  Failures go through oracle_fail
 * (check.c).
 */
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "base/kattr.h"
#include "model/kmodel.h"
#include "model/kmodel_int.h"
#include "oracle/oracle.h"

/* ---- values against the reference model ----------------------------- */

/* The index of the first byte where a and b differ, or n.  No coverage
 * counters (KATTR_NO_COVERAGE): a comparison callback per byte was the
 * largest single cost of checking an execution. */
KATTR_NO_COVERAGE static uint64_t first_difference(const uint8_t *a, const uint8_t *b, uint64_t n)
{
	uint64_t k = 0;

	while (k < n && a[k] == b[k])
		k++;
	return k;
}

/* The compute formula of docs/device.md, written here once and never
 * taken from the device (lib/emu's own arithmetic would share its
 * mistakes): byte k of output j (outputs numbered from 0 in model order)
 * is j + 1 plus in_i[k mod size_i] over the inputs in model order, an
 * input of size 0 adding nothing, all mod 256.  A division per byte and
 * input: outputs the harness checks are at most 64 KiB, mostly a few
 * dozen bytes.  No coverage counters (see first_difference). */
KATTR_NO_COVERAGE static void formula(const oracle_io_t *io, const uint8_t *const *in, uint32_t j,
                                      uint8_t *out, uint64_t size)
{
	for (uint64_t k = 0; k < size; k++) {
		unsigned v = j + 1;

		for (uint32_t i = 0; i < io->n_in; i++)
			if (io->size[i])
				v += in[i][k % io->size[i]];
		out[k] = (uint8_t)v;
	}
}

/* Output i against the formula.  Template outputs fit the stack buffers;
 * only an inline model's large output takes the heap (two 64 KiB arrays
 * on every call made ASan poison and unpoison 128 KiB of stack shadow per
 * execution checked). */
static void check_output(unsigned op, const oracle_io_t *io, unsigned i, nrt_tensor_t *t,
                         const uint8_t *const *in)
{
	uint64_t size = io->size[i], k;
	uint8_t got_s[256], want_s[256];
	uint8_t *got = got_s, *want = want_s;

	if (size > sizeof(got_s)) {
		got = malloc(size);
		want = malloc(size);
		if (!got || !want)
			abort();
	}
	if (nrt_tensor_read(t, got, 0, size) != NRT_SUCCESS) {
		oracle_fail("exec-output", "op %u: output %s unreadable", op, io->name[i]);
		size = 0; /* a failure hook returned: nothing to compare */
	}
	formula(io, in, i - io->n_in, want, size);
	k = first_difference(got, want, size);
	if (k < size)
		oracle_fail("exec-output",
		            "op %u: output %s byte %llu is 0x%02x, the formula says 0x%02x", op,
		            io->name[i], (unsigned long long)k, got[k], want[k]);
	if (got != got_s) {
		free(got);
		free(want);
	}
}

void oracle_check_outputs(unsigned op, const oracle_io_t *io, const uint8_t *const *in,
                          nrt_tensor_t *const *out)
{
	for (uint32_t j = 0; j < io->n_out; j++)
		if (out[j])
			check_output(op, io, io->n_in + j, out[j], in);
}

/* idx in the facade's order (oracle_io_t.by_name). */
void oracle_check_tensor_info(unsigned op, const oracle_io_t *io, uint32_t idx, const char *name,
                              size_t size)
{
	uint32_t m = io->by_name[idx];

	if (strcmp(name, io->name[m]) || size != io->size[m])
		oracle_fail("metadata",
		            "op %u: tensor %u is '%s' of %zu bytes, the container (by name) says "
		            "'%s' of %llu",
		            op, idx, name, size, io->name[m], (unsigned long long)io->size[m]);
}

void oracle_check_ifmap_valid(unsigned op, const char *name, bool valid, bool want)
{
	if (valid != want)
		oracle_fail("metadata", "op %u: is_valid_ifmap('%s') = %d, the container says %d",
		            op, name, valid, want);
}

void oracle_check_counts(unsigned op, const oracle_io_t *io, uint32_t n_in, bool with_out,
                         uint32_t n_out)
{
	if (n_in != io->n_in || (with_out && n_out != io->n_out))
		oracle_fail("metadata", "op %u: %u inputs %u outputs, the container has %u and %u",
		            op, n_in, with_out ? n_out : io->n_out, io->n_in, io->n_out);
}

void oracle_check_nc_info(unsigned op, uint32_t id, oracle_placement_t want, unsigned nc,
                          uint32_t found_start, uint32_t start, uint32_t count)
{
	if (!oracle_placement_is(want, nc, start, count) || start != found_start)
		oracle_fail("nc-info",
		            "op %u: model %u runs on cores %u+%u; loaded as %d+%u, found at %u", op,
		            id, start, count, want.start, want.count, found_start);
}

/* ---- the model_parse target ------------------------------------------ */

static void parse_once(const uint8_t *data, size_t size)
{
	int64_t live = kalloc_live_count();
	kmodel_t *m = NULL;
	uint8_t *out = NULL;
	size_t len = 0;

	if (kmodel_parse(data, size, &m) == NRT_SUCCESS) {
		if (kmodel_serialize(m, &out, &len) != NRT_SUCCESS || len != size ||
		    memcmp(out, data, size) != 0)
			oracle_fail("model-canonical", "accepted bytes are not canonical");
		kfree(out);
		kmodel_free(m);
	} else if (m) {
		oracle_fail("model-failed-parse", "a failed parse handed out a model");
	}
	if (kalloc_live_count() != live)
		oracle_fail("model-leak", "live kalloc count changed by %lld",
		            (long long)(kalloc_live_count() - live));
}

void oracle_model_parse(const uint8_t *data, size_t size)
{
	uint8_t *fixed;
	uint32_t crc;

	parse_once(data, size);
	if (size < 4)
		return;
	/* an exact-size copy, so a read one past the end is still caught */
	fixed = malloc(size);
	if (!fixed)
		return;
	memcpy(fixed, data, size);
	crc = kmodel__crc32(fixed, size - 4);
	for (int i = 0; i < 4; i++)
		fixed[size - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
	parse_once(fixed, size);
	free(fixed);
}
