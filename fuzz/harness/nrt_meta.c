/*
 * nrt_meta.c - the public reads through a model handle (core count,
 * tensor info) and the contract's misuse of them: NULL arguments, refused
 * executions, a tensor-info array freed twice, the device's counts. */
#include <nrt/nrt.h>

#include "base/kfault.h"
#include "harness/state.h"
#include "nrt/nrt_kmgr.h"

/* NRT_META's what (prog/kinds.c: 0..5). */

/* The model's core count or its tensor descriptions through the handle. */
static NRT_STATUS kh_nrt_meta_call(unsigned op, nrt_model_t *m, const kh_args_t *a,
                                   const kh_slot_t *s)
{
	nrt_tensor_info_array_t *info = NULL;
	uint32_t n = 0;
	NRT_STATUS rc;

	if (a->what == KH_NRT_NC_COUNT) {
		/* the count only: the slot's start core is the one the harness
		 * read after the load, which an unload by id in between leaves 0 */
		rc = nrt_get_model_nc_count(m, &n);
		if (rc == NRT_SUCCESS && !a->old && (n != s->place.count || n > kh_state.c->nc))
			oracle_fail("nc-count",
			            "op %u: nrt_get_model_nc_count says %u cores, the "
			            "load asked for %u",
			            op, n, s->place.count);
		return rc;
	}
	rc = nrt_get_model_tensor_info(m, &info);
	if (rc)
		return rc;
	if (!a->old && info->tensor_count != (uint64_t)s->io->n_in + s->io->n_out)
		oracle_fail("tensor-info", "op %u: %llu tensors, the container has %u", op,
		            (unsigned long long)info->tensor_count, s->io->n_in + s->io->n_out);
	for (uint64_t i = 0; !a->old && i < info->tensor_count; i++)
		oracle_check_tensor_info(op, s->io, (uint32_t)i, info->tensor_array[i].name,
		                         info->tensor_array[i].size);
	nrt_free_model_tensor_info(info);
	return rc;
}

/* A public call its arguments make wrong answered rc: never a success
 * (NRT_CLOSED once a close began). */
static void kh_nrt_refused(unsigned op, const char *what, NRT_STATUS rc, uint64_t t0,
                           uint64_t fired0)
{
	kh_done(op, what, rc);
	if (!oracle_check_lifecycle(op, what, rc, t0, oracle_tick()))
		kh_check(op, what, rc, oracle_predict_badargs(), fired0);
}

/* A call that works in every state answered got, the contract want. */
void kh_nrt_want(unsigned op, const char *what, NRT_STATUS got, NRT_STATUS want)
{
	kh_done(op, what, got);
	if (got != want)
		oracle_fail("status-mismatch", "op %u %s returned %d, the contract says %d", op,
		            what, (int)got, (int)want);
}

/* NULL arguments beside a live handle. */
static void kh_nrt_null_args(unsigned op, nrt_model_t *m, uint64_t fired0)
{
	nrt_tensor_info_array_t *info = NULL;
	nrt_model_t *none = NULL;
	uint64_t t0 = oracle_tick();
	H_NN h;

	kh_nrt_refused(op, "nrt_get_model_nc_count(NULL)", nrt_get_model_nc_count(m, NULL), t0,
	               fired0);
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_get_model_tensor_info(NULL)", nrt_get_model_tensor_info(m, NULL),
	               t0, fired0);
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_load(NULL)", nrt_load(NULL, 0, -1, -1, &none), t0, fired0);
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_unload(NULL)", nrt_unload(NULL), t0, fired0);
	kh_nrt_want(op, "nrt_model_get_nn(NULL)", nrt_model_get_nn(NULL, &h), NRT_INVALID);
	kh_nrt_want(op, "nrt_free_model_tensor_info(NULL)", nrt_free_model_tensor_info(info),
	            NRT_SUCCESS);
}

/* Executions the arguments refuse: no tensor sets, a repeat count of 0. */
static void kh_nrt_bad_exec(unsigned op, nrt_model_t *m, uint64_t fired0)
{
	nrt_tensor_set_t *set = NULL;
	uint64_t t0 = oracle_tick();

	kh_nrt_refused(op, "nrt_execute(NULL sets)", nrt_execute(m, NULL, NULL), t0, fired0);
	if (nrt_allocate_tensor_set(&set) != NRT_SUCCESS)
		return; /* closed meanwhile */
	t0 = oracle_tick();
	kh_nrt_refused(op, "nrt_execute_repeat(0)", nrt_execute_repeat(m, set, set, 0), t0, fired0);
	nrt_destroy_tensor_set(&set);
}

/* A tensor-info array freed twice: the second free is refused. */
static void kh_nrt_info_twice(unsigned op, nrt_model_t *m)
{
	nrt_tensor_info_array_t *info = NULL;

	if (nrt_get_model_tensor_info(m, &info) != NRT_SUCCESS)
		return;
	kh_nrt_want(op, "nrt_free_model_tensor_info", nrt_free_model_tensor_info(info),
	            NRT_SUCCESS);
	kh_nrt_want(op, "nrt_free_model_tensor_info(again)", nrt_free_model_tensor_info(info),
	            NRT_INVALID);
}

/* The device's core counts, in every state: the program's nc (no
 * NEURON_RT_VISIBLE_CORES in a run); a second nrt_init while up fails. */
static void kh_nrt_counts(unsigned op)
{
	uint32_t n = 0;
	NRT_STATUS rc;

	rc = nrt_get_total_nc_count(&n);
	kh_nrt_want(op, "nrt_get_total_nc_count", rc, NRT_SUCCESS);
	if (n != kh_state.c->nc)
		oracle_fail("nc-count", "op %u: nrt_get_total_nc_count says %u, the device has %u",
		            op, n, kh_state.c->nc);
	rc = nrt_get_visible_nc_count(&n);
	kh_nrt_want(op, "nrt_get_visible_nc_count", rc, NRT_SUCCESS);
	if (n != kh_state.c->nc)
		oracle_fail("nc-count",
		            "op %u: nrt_get_visible_nc_count says %u, the device has %u", op, n,
		            kh_state.c->nc);
	kh_nrt_want(op, "nrt_get_total_nc_count(NULL)", nrt_get_total_nc_count(NULL), NRT_INVALID);
	kh_nrt_want(op, "nrt_get_visible_nc_count(NULL)", nrt_get_visible_nc_count(NULL),
	            NRT_INVALID);
	/* held off a close as a facade call is: after one it would start a
	 * second runtime under the harness */
	if (!kh_facade_enter())
		return;
	kh_nrt_want(op, "nrt_init(again)", nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_FAILURE);
	kh_facade_leave();
}

/* nrt_meta what >= 2: the contract's refusals and the calls that work in
 * every state. */
static void kh_nrt_misuse(unsigned op, nrt_model_t *m, int what, uint64_t fired0)
{
	switch (what) {
	case KH_NRT_NULL_ARGS:
		kh_nrt_null_args(op, m, fired0);
		break;
	case KH_NRT_BAD_EXEC:
		kh_nrt_bad_exec(op, m, fired0);
		break;
	case KH_NRT_INFO_TWICE:
		kh_nrt_info_twice(op, m);
		break;
	default: /* KH_NRT_COUNTS */
		kh_nrt_counts(op);
		break;
	}
}

void kh_nrt_meta(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0;
	nrt_model_t *m;
	NRT_STATUS rc;
	kh_slot_t s;

	(void)thread;
	if (!kh_get_handle(a, &s, &m))
		return;
	if (a->what >= KH_NRT_NULL_ARGS) {
		kh_nrt_misuse(op, m, a->what, fired0);
		return;
	}
	t0 = oracle_tick();
	rc = kh_nrt_meta_call(op, m, a, &s);
	/* nc_count answers from nrt's own record, which an unload by id (a
	 * facade UNLOAD_ALL of another framework) leaves live: it is no read
	 * of the facade model, so it stays out of that model's history (id 0);
	 * the retired-handle check still holds it to nrt_unload */
	if (kh_nrt_end(op, "nrt_meta", ORACLE_READ,
	               a->what == KH_NRT_NC_COUNT ? 0
	               : a->old                   ? s.old_id
	                                          : s.id,
	               t0, rc, kh_handle_expect(a, &s, oracle_predict_ok()), fired0))
		kh_check_retired(op, "nrt_meta", a, &s, rc);
}
