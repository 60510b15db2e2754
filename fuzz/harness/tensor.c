/*
 * tensor.c - the tensor slots of each logical thread: allocate in a
 * placement, free, read and write in and out of range. */
#include <stdlib.h>
#include <string.h>

#include <nrt/nrt.h>

#include "harness/state.h"

static const size_t kh_tsizes[4] = {0, 1, 64, 4096};
static const size_t kh_tlens[4] = {0, 1, 8, 64};

void kh_tslot_free(kh_tslot_t *ts)
{
	if (ts->t)
		nrt_tensor_free(&ts->t);
	free(ts->buf);
	ts->buf = NULL;
}

void kh_talloc(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tslot_t *ts = &kh_state.ts[thread][a->ts];
	size_t size = kh_tsizes[a->size & 3];
	NRT_STATUS rc;

	kh_tslot_free(ts);
	if (a->place <= KPROG_PLACE_HOST) {
		rc = nrt_tensor_allocate(a->place ? NRT_TENSOR_PLACEMENT_HOST
		                                  : NRT_TENSOR_PLACEMENT_DEVICE,
		                         0, size, "t", &ts->t);
	} else {
		rc = nrt_tensor_allocate_empty("t", &ts->t);
		if (rc == NRT_SUCCESS && a->place == KPROG_PLACE_VIRT && size) {
			ts->buf = calloc(1, size);
			rc = nrt_tensor_attach_buffer(ts->t, ts->buf, size);
		}
	}
	kh_done(op, "talloc", rc);
}

void kh_tfree(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tslot_free(&kh_state.ts[thread][a->ts]);
	kh_done(op, "tfree", NRT_SUCCESS);
}

/* Bytes at off*8, len from {0, 1, 8, 64}: in and out of range. */
static void kh_tio(unsigned op, unsigned thread, const kh_args_t *a, bool write)
{
	kh_tslot_t *ts = &kh_state.ts[thread][a->ts];
	size_t off = (size_t)a->off * 8, len = kh_tlens[a->len & 3];
	NRT_STATUS rc = NRT_SUCCESS;
	uint8_t data[64];

	memset(data, (int)op, sizeof(data));
	if (ts->t)
		rc = write ? nrt_tensor_write(ts->t, data, off, len)
		           : nrt_tensor_read(ts->t, data, off, len);
	kh_done(op, write ? "twrite" : "tread", rc);
}

void kh_twrite(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tio(op, thread, a, true);
}

void kh_tread(unsigned op, unsigned thread, const kh_args_t *a)
{
	kh_tio(op, thread, a, false);
}
