/*
 * misuse.c - wrong handles and wrong arguments to the facade (stale ids,
 * NULL and mismatched arguments), and the fault op that arms an
 * allocation failure. */
#include <nrt/nrt.h>
#include <nrt/nrt_async.h>

#include "base/kalloc.h"
#include "base/kfault.h"
#include "emu/emu.h"
#include "harness/state.h"
#include "kmgr/kmgr.h"

/* One of nine entry points with id h; what selects it. */
static NRT_STATUS kh_call_with(H_NN h, int what)
{
	uint32_t count = 0, nout = 0, ndim = 0, *shape = NULL;
	char name[NRT_TENSOR_NAME_MAX];
	nrt_dtype_t dtype;
	nrta_seq_t seq;
	NRT_STATUS rc, ret;
	size_t size;
	bool valid;

	switch (what) {
	case KH_STALE_EXEC:
		return kmgr_exec(h, NULL, NULL, 0);
	case KH_STALE_IFMAP_COUNT:
		return kmgr_get_ifmap_count(h, &count);
	case KH_STALE_UNLOAD:
		return kmgr_unload_nn(h);
	case KH_STALE_PROFILING:
		return kmgr_set_profiling(h, true);
	case KH_STALE_TENSOR_INFO:
		rc = kmgr_get_io_tensor_info(h, true, 0, name, &size, &dtype, &ndim, &shape);
		if (rc == NRT_SUCCESS)
			kfree(shape);
		return rc;
	case KH_STALE_VALID_IFMAP:
		return kmgr_is_valid_ifmap(h, "x", &valid);
	case KH_STALE_IO_COUNT:
		return kmgr_get_io_tensor_count(h, &count, &nout);
	case KH_STALE_SCHEDULE:
		return kmgr_tpb_xu_schedule(0, h, NULL, NULL, &ret, &seq);
	default: /* KH_STALE_MAC_COUNT */
		return kmgr_set_mac_count(h, 1);
	}
}

/* An id that was unloaded (or was never issued) answers INVALID_HANDLE
 * everywhere. */
KH_FACADE_OP(kh_stale)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	NRT_STATUS rc;
	kh_slot_t s;
	H_NN h;

	(void)thread;
	kh_get_slot((unsigned)a->slot, &s);
	h.id = s.stale ? s.stale : 0xfffffff0u - op;
	t0 = oracle_tick();
	rc = kh_call_with(h, a->what);
	kh_finish(op, "stale", ORACLE_READ, h.id, t0, rc, oracle_predict_stale(), fired0);
	if (rc == NRT_SUCCESS)
		oracle_fail("stale-handle", "op %u: unloaded id %u accepted", op, h.id);
}

/* A NULL or mismatched argument on a loaded model (what selects it). */
static NRT_STATUS kh_call_badly(const kh_slot_t *s, int what, nrt_tensor_set_t *set)
{
	uint32_t count = 0, ndim = 0, *shape = NULL;
	H_NN h = {s->id}, out;
	nrt_dtype_t dtype;
	nrta_seq_t seq;
	NRT_STATUS ret;
	size_t size;

	switch (what) {
	case KH_BAD_EXEC_NO_INPUT:
		return kmgr_exec(h, NULL, set, 0);
	case KH_BAD_EXEC_NO_OUTPUT:
		return kmgr_exec(h, set, NULL, 0);
	case KH_BAD_TENSOR_INFO_NO_NAME:
		return kmgr_get_io_tensor_info(h, true, 0, NULL, &size, &dtype, &ndim, &shape);
	case KH_BAD_VALID_IFMAP_NO_RESULT:
		return kmgr_is_valid_ifmap(h, "x", NULL);
	case KH_BAD_IFMAP_COUNT_NO_RESULT:
		return kmgr_get_ifmap_count(h, NULL);
	case KH_BAD_IO_COUNT_NO_RESULT:
		return kmgr_get_io_tensor_count(h, &count, NULL);
	case KH_BAD_LOAD_NO_BYTES:
		return kmgr_load_nn(NULL, 16, -1, -1, &out);
	case KH_BAD_SCHEDULE_OTHER_CORE:
		/* the model's own core plus one: the seed asserts, we refuse */
		return kmgr_tpb_xu_schedule(s->start_nc + 1, h, NULL, NULL, &ret, &seq);
	case KH_BAD_SCHEDULE_NO_SEQ:
		return kmgr_tpb_xu_schedule(s->start_nc, h, NULL, NULL, &ret, NULL);
	default: /* KH_BAD_NC_INFO_NO_RESULT */
		return kmgr_get_nc_info(h, &count, NULL);
	}
}

/* NRT_INVALID, never a crash (a model that went away meanwhile answers
 * INVALID_HANDLE). */
KH_FACADE_OP(kh_badargs)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired();
	nrt_tensor_set_t *set = NULL;
	NRT_STATUS rc;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_slot((unsigned)a->slot, &s))
		return;
	if (a->what <= KH_BAD_EXEC_NO_OUTPUT && nrt_allocate_tensor_set(&set) != NRT_SUCCESS)
		return;
	rc = kh_call_badly(&s, a->what, set);
	if (set)
		nrt_destroy_tensor_set(&set);
	kh_done(op, "badargs", rc);
	kh_check(op, "badargs", rc, oracle_predict_badargs(), fired0);
}

/* Arms "fail the nth next allocation at site" from now on; only in
 * single-threaded sync programs, where no library thread is busy when the
 * plan changes. */
void kh_fault(unsigned op, unsigned thread, const kh_args_t *a)
{
	kfault_plan_t plan = {.n = 1};
	size_t n = 0;
	const kfault_site_info_t *sites = kfault_sites(&n);

	(void)op;
	(void)thread;
	if (kh_state.c->nthreads != 1 || kh_state.c->async)
		return;
	/* an explicit execution (schedule, nrt_schedule) may still run on an
	 * XU, which reads the plan: wait for it (TSan saw the race); a quiet
	 * read, so a program with nothing in flight gets no extra decision */
	while (emu_inflight_execs_quiet() != 0)
		ks_usleep(50);
	plan.e[0] = (kfault_entry_t){KFAULT_FAIL_ALLOC, 0, (uint32_t)a->nth, 0};
	plan.e[0].site = a->site && (size_t)a->site <= n ? (uint32_t)sites[a->site - 1].site : 0;
	kfault_set_plan(&plan);
	kh_state.faults = true;
}
