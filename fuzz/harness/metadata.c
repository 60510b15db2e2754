/*
 * metadata.c - the reads of a loaded model by id: tensor info, ifmap
 * validity and counts, profiling and MAC count, core placement. */
#include <nrt/nrt.h>

#include "base/kalloc.h"
#include "harness/state.h"
#include "kmgr/kmgr.h"

KH_FACADE_OP(kh_tensor_info)(unsigned op, unsigned thread, const kh_args_t *a)
{
	bool is_input = !(a->index & 1);
	uint32_t idx = (uint32_t)a->index >> 1, ndim = 0, *shape = NULL;
	char name[NRT_TENSOR_NAME_MAX];
	nrt_dtype_t dtype;
	size_t size = 0;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "tensor_info", a->slot, true))
		return;
	rc = kmgr_get_io_tensor_info((H_NN){c.s.id}, is_input, idx, name, &size, &dtype, &ndim,
	                             &shape);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_tensor_info(c.s.io, is_input, idx));
	if (rc)
		return;
	kfree(shape);
	oracle_check_tensor_info(op, c.s.io, idx + (is_input ? 0 : c.s.io->n_in), name, size);
}

KH_FACADE_OP(kh_is_valid_ifmap)(unsigned op, unsigned thread, const kh_args_t *a)
{
	bool valid = false, want;
	const char *name;
	oracle_expect_t e;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "is_valid_ifmap", a->slot, true))
		return;
	e = oracle_predict_is_valid_ifmap(c.s.io, (unsigned)a->name, &name, &want);
	rc = kmgr_is_valid_ifmap((H_NN){c.s.id}, name, &valid);
	kh_end(&c, ORACLE_READ, rc, e);
	if (rc == NRT_SUCCESS)
		oracle_check_ifmap_valid(op, name, valid, want);
}

KH_FACADE_OP(kh_ifmap_count)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint32_t count = 0, nout = 0;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "ifmap_count", a->slot, true))
		return;
	if (a->io)
		rc = kmgr_get_io_tensor_count((H_NN){c.s.id}, &count, &nout);
	else
		rc = kmgr_get_ifmap_count((H_NN){c.s.id}, &count);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_ok());
	if (rc == NRT_SUCCESS)
		oracle_check_counts(op, c.s.io, count, a->io, nout);
}

KH_FACADE_OP(kh_set_profiling)(unsigned op, unsigned thread, const kh_args_t *a)
{
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "set_profiling", a->slot, false))
		return;
	rc = a->mac ? kmgr_set_mac_count((H_NN){c.s.id}, 1000u + (uint64_t)op)
	            : kmgr_set_profiling((H_NN){c.s.id}, a->on);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_ok());
}

KH_FACADE_OP(kh_nc_info)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint32_t start = 0, count = 0;
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	if (!kh_begin(&c, op, "nc_info", a->slot, false))
		return;
	rc = kmgr_get_nc_info((H_NN){c.s.id}, &start, &count);
	kh_end(&c, ORACLE_READ, rc, oracle_predict_ok());
	if (rc == NRT_SUCCESS)
		oracle_check_nc_info(op, c.s.id, c.s.place, kh_state.c->nc, c.s.start_nc, start,
		                     count);
}
