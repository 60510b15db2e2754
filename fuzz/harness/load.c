/*
 * load.c - the model operations by id: kmgr_load_nn, kmgr_unload_nn,
 * kmgr_unload_all_nns. */
#include "base/kfault.h"
#include "harness/state.h"
#include "kmgr/kmgr.h"

KH_FACADE_OP(kh_load)(unsigned op, unsigned thread, const kh_args_t *a)
{
	const kh_model_t *m = &kh_state.c->models[a->model];
	uint64_t fired0 = kfault_fired(), t0;
	H_NN h = {0};
	NRT_STATUS rc;

	(void)thread;
	t0 = oracle_tick();
	rc = kmgr_load_nn(m->bytes, m->len, a->start, a->count, &h);
	kh_finish(op, "load", ORACLE_LOAD, rc == NRT_SUCCESS ? h.id : 0, t0, rc,
	          oracle_predict_load(&m->io, kh_state.c->nc, a->start, a->count), fired0);
	if (rc == NRT_SUCCESS)
		kh_keep_loaded(a, h, &m->io, NULL);
}

KH_FACADE_OP(kh_unload)(unsigned op, unsigned thread, const kh_args_t *a)
{
	NRT_STATUS rc;
	kh_call_t c;

	(void)thread;
	/* a model nrt_load placed goes through nrt_unload only: unloaded by id
	 * under it, nrt's record would live on (api_nrt) */
	if (!kh_begin(&c, op, "unload", a->slot, false) || c.s.m)
		return;
	rc = kmgr_unload_nn((H_NN){c.s.id});
	kh_end(&c, ORACLE_UNLOAD, rc, oracle_predict_ok());
	if (rc)
		return;
	/* not drained: explicit-async work may outlive an async unload
	 * (seed §4, the async_mix option) */
	oracle_note_unloaded(c.s.id, false);
	kh_clear_slot_if((unsigned)a->slot, c.s.id, false);
}

KH_FACADE_OP(kh_unload_all)(unsigned op, unsigned thread, const kh_args_t *a)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	kh_slot_t s[KPROG_SLOTS];
	NRT_STATUS rc;

	(void)thread;
	(void)a;
	for (unsigned k = 0; k < KPROG_SLOTS; k++)
		kh_get_slot(k, &s[k]);
	t0 = oracle_tick();
	rc = kmgr_unload_all_nns();
	t1 = kh_finish(op, "unload_all", ORACLE_UNLOAD_ALL, 0, t0, rc, oracle_predict_ok(), fired0);
	/* it erased models no slot holds any more too (loaded over) */
	if (rc == NRT_SUCCESS)
		ks_atomic_store_quiet(&kh_state.unload_all, 1);
	for (unsigned k = 0; k < KPROG_SLOTS; k++) {
		if (!s[k].used || kmgr_nn_loaded((H_NN){s[k].id}))
			continue;
		/* erased, but not necessarily drained: another thread's unload may
		 * still be waiting for the model's references, so this is no
		 * point after which the device must stay quiet (no
		 * oracle_note_unloaded here) */
		oracle_record(op, ORACLE_UNLOAD_ALL, "unload_all", s[k].id, t0, t1, NRT_SUCCESS);
		kh_clear_slot_if(k, s[k].id, false);
	}
}
