/*
 * templates.c - the built-in model templates a LOAD names by number: small
 * containers made once with the kmodel builder, covering one and several
 * inputs and outputs, a collectives model and multi-core (LNC) models.
 * Names are in every order, never repeated: sorted (u8x64, cc, lnc2),
 * reversed within each side (two_io, lnc4's outputs) and shuffled (wide's
 * inputs), since the facade answers metadata by name and the device
 * computes in model order, and only a container whose two orders differ
 * tells them apart.
 */
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "model/kmodel.h"
#include "prog/prog.h"

struct tt {
	const char *name;
	nrt_tensor_usage_t usage;
	nrt_dtype_t dtype;
	uint32_t ndim;
	uint32_t shape[2];
};

struct tmpl_def {
	const char *name;
	uint32_t nkbin;
	bool has_cc;
	unsigned nt;
	struct tt t[6];
};

#define IN  NRT_TENSOR_USAGE_INPUT
#define OUT NRT_TENSOR_USAGE_OUTPUT

static const struct tmpl_def defs[KPROG_NTMPL] = {
    {"u8x64",
     1,
     false,
     2,
     {{"in0", IN, NRT_DTYPE_UINT8, 1, {64}}, {"out0", OUT, NRT_DTYPE_UINT8, 1, {64}}}},
    {"two_io",
     1,
     false,
     4,
     {{"b", IN, NRT_DTYPE_FLOAT32, 2, {4, 4}},
      {"a", IN, NRT_DTYPE_UINT8, 1, {8}},
      {"z", OUT, NRT_DTYPE_UINT8, 1, {32}},
      {"y", OUT, NRT_DTYPE_INT16, 2, {2, 4}}}},
    {"cc", 1, true, 2, {{"x", IN, NRT_DTYPE_UINT8, 1, {16}}, {"y", OUT, NRT_DTYPE_UINT8, 1, {16}}}},
    {"lnc2",
     2,
     false,
     2,
     {{"x", IN, NRT_DTYPE_UINT8, 1, {32}}, {"y", OUT, NRT_DTYPE_UINT8, 1, {32}}}},
    {"lnc4",
     4,
     false,
     3,
     {{"x", IN, NRT_DTYPE_UINT8, 1, {8}},
      {"y2", OUT, NRT_DTYPE_UINT8, 1, {8}},
      {"y", OUT, NRT_DTYPE_UINT8, 1, {8}}}},
    {"wide",
     1,
     false,
     5,
     {{"i2", IN, NRT_DTYPE_UINT8, 1, {4}},
      {"i0", IN, NRT_DTYPE_UINT8, 1, {4}},
      {"i3", IN, NRT_DTYPE_UINT8, 1, {4}},
      {"i1", IN, NRT_DTYPE_UINT8, 1, {4}},
      {"o", OUT, NRT_DTYPE_UINT8, 1, {16}}}},
};

/* the tests' amalgam (harness/embed.c) goes on after this file */
#undef IN
#undef OUT

static struct {
	uint8_t *bytes;
	size_t len;
} built[KPROG_NTMPL];

/* Serialized with the library's builder, then copied out of the library's
 * accounting so that templates never count as live host memory. */
static void build(unsigned i)
{
	const struct tmpl_def *d = &defs[i];
	kmodel_t *m = kmodel_new(d->name, d->nkbin, d->has_cc);
	uint8_t *bytes = NULL;
	size_t len = 0;

	if (!m)
		abort();
	for (unsigned j = 0; j < d->nt; j++)
		if (kmodel_add_tensor(m, d->t[j].name, d->t[j].usage, d->t[j].dtype, d->t[j].ndim,
		                      d->t[j].shape) != NRT_SUCCESS)
			abort();
	if (kmodel_serialize(m, &bytes, &len) != NRT_SUCCESS)
		abort();
	built[i].bytes = malloc(len);
	if (!built[i].bytes)
		abort();
	memcpy(built[i].bytes, bytes, len);
	built[i].len = len;
	kfree(bytes);
	kmodel_free(m);
}

/* Called first from the runner's single-threaded setup, before any fault
 * plan is installed (the builder allocates through kalloc). */
const uint8_t *kprog_template(unsigned tmpl, size_t *len)
{
	if (tmpl >= KPROG_NTMPL)
		return NULL;
	if (!built[tmpl].bytes)
		build(tmpl);
	*len = built[tmpl].len;
	return built[tmpl].bytes;
}

const char *kprog_template_name(unsigned tmpl)
{
	return tmpl < KPROG_NTMPL ? defs[tmpl].name : "inline";
}
