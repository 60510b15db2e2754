/*
 * model.c - the reference model of model.h: container descriptions and
 * the status each operation's arguments predict.
 */
#include <string.h>

#include <nrt/nrt_async.h>

#include "model/kmodel.h"
#include "oracle/model.h"

/* by_name[from..from+n): that side's indices sorted by name, strcmp's
 * order (the facade's qsort, the seed's std::map of std::string: both
 * compare bytes as unsigned char).  An insertion sort: at most 16. */
static void sort_side(oracle_io_t *io, uint32_t from, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++) {
		uint32_t j = k;

		while (j > 0 &&
		       strcmp(io->name[io->by_name[from + j - 1]], io->name[from + k]) > 0) {
			io->by_name[from + j] = io->by_name[from + j - 1];
			j--;
		}
		io->by_name[from + j] = (uint8_t)(from + k);
	}
}

void oracle_describe(oracle_io_t *io, const uint8_t *bytes, size_t len)
{
	kmodel_t *m = NULL;
	uint32_t n = 0;

	memset(io, 0, sizeof(*io));
	if (kmodel_parse(bytes, len, &m) != NRT_SUCCESS)
		return;
	io->parsed = true;
	io->nkbin = m->nkbin;
	io->n_in = kmodel_input_count(m);
	io->n_out = kmodel_output_count(m);
	io->ok = io->n_in + io->n_out <= ORACLE_MAX_IO;
	for (int pass = 0; pass < 2 && io->ok; pass++)
		for (uint32_t i = 0; i < m->n_tensors; i++) {
			const kmodel_tensor_t *t = &m->tensors[i];

			if ((t->usage == NRT_TENSOR_USAGE_INPUT) != (pass == 0))
				continue;
			memcpy(io->name[n], t->name, NRT_TENSOR_NAME_MAX);
			io->size[n] = t->size;
			if (t->size == 0 || t->size > ORACLE_MAX_TENSOR_BYTES)
				io->ok = false;
			n++;
		}
	if (io->ok) {
		sort_side(io, 0, io->n_in);
		sort_side(io, io->n_in, io->n_out);
	}
	kmodel_free(m);
}

static oracle_expect_t expect2(NRT_STATUS want, NRT_STATUS alt)
{
	return (oracle_expect_t){true, want, alt};
}

static oracle_expect_t expect1(NRT_STATUS want)
{
	return expect2(want, want);
}

oracle_expect_t oracle_predict_ok(void)
{
	return expect1(NRT_SUCCESS);
}

/* A bad container may also be refused as an unsupported version. */
static oracle_expect_t load_status(const oracle_io_t *io, unsigned nc, int start, int count)
{
	uint32_t c;

	if (!io || !io->parsed)
		return expect1(NRT_INVALID);
	if (start < -1 || count < -1 || count == 0)
		return expect1(NRT_INVALID);
	c = count == -1 ? io->nkbin : (uint32_t)count;
	if (c > nc || (start >= 0 && (uint32_t)start > nc - c))
		return expect1(NRT_LOAD_NOT_ENOUGH_NC);
	if (io->nkbin == 0 || (io->nkbin != 1 && io->nkbin != c))
		return expect1(NRT_INVALID);
	return expect1(NRT_SUCCESS);
}

oracle_expect_t oracle_predict_load(const oracle_io_t *io, unsigned nc, int start, int count)
{
	oracle_expect_t e = load_status(io, nc, start, count);

	if (e.want == NRT_INVALID)
		e.alt = NRT_UNSUPPORTED_NEFF_VERSION;
	return e;
}

static bool is_host(oracle_place_t place)
{
	return place == ORACLE_PLACE_HOST || place == ORACLE_PLACE_VIRT;
}

/* What the arguments alone decide for an execution: a missing tensor is
 * a bind error; the device-only paths refuse host tensors and may answer
 * QUEUE_FULL. */
oracle_expect_t oracle_predict_exec(const oracle_io_t *io, oracle_place_t in, oracle_place_t out,
                                    bool device_only)
{
	bool missing =
	    (in == ORACLE_PLACE_MISSING && io->n_in) || (out == ORACLE_PLACE_MISSING && io->n_out);
	bool host = (is_host(in) && io->n_in) || (is_host(out) && io->n_out);

	if ((device_only && host) || missing)
		return expect1(NRT_INVALID);
	return expect2(NRT_SUCCESS, device_only ? NRT_QUEUE_FULL : NRT_SUCCESS);
}

oracle_expect_t oracle_predict_is_completed(bool bogus)
{
	return expect1(bogus ? NRT_INVALID : NRT_SUCCESS);
}

oracle_expect_t oracle_predict_tracker(bool bogus)
{
	return expect1(bogus ? NRT_INVALID : NRT_SUCCESS);
}

oracle_expect_t oracle_predict_get_sequence(unsigned nc, int lnc, int xu, int queue)
{
	return expect1(lnc >= 0 && (unsigned)lnc < nc && xu == NRTA_XU_COMPUTE && queue == 0
	                   ? NRT_SUCCESS
	                   : NRT_INVALID);
}

oracle_expect_t oracle_predict_tensor_info(const oracle_io_t *io, bool is_input, uint32_t idx)
{
	return expect1(idx < (is_input ? io->n_in : io->n_out) ? NRT_SUCCESS : NRT_INVALID);
}

oracle_expect_t oracle_predict_is_valid_ifmap(const oracle_io_t *io, unsigned sel,
                                              const char **name, bool *valid)
{
	*name = sel == 7                                ? NULL
	        : sel < 6 && sel < io->n_in + io->n_out ? io->name[sel]
	                                                : "no-such-ifmap";
	*valid = sel < 6 && sel < io->n_in;
	return expect1(*name ? NRT_SUCCESS : NRT_INVALID);
}

oracle_expect_t oracle_predict_stale(void)
{
	return expect1(NRT_INVALID_HANDLE);
}

oracle_expect_t oracle_predict_badargs(void)
{
	return expect1(NRT_INVALID);
}

/* count -1: a core per subgraph (load_status's c). */
oracle_placement_t oracle_predict_placement(const oracle_io_t *io, int start, int count)
{
	return (oracle_placement_t){start, count == -1 ? io->nkbin : (uint32_t)count};
}

bool oracle_placement_is(oracle_placement_t want, unsigned nc, uint32_t start, uint32_t count)
{
	if (count != want.count || count > nc || start > nc - count)
		return false;
	return want.start < 0 || start == (uint32_t)want.start;
}
