/*
 * test_emu_ctl.c - the focus of this file is the device under the
 * controlled scheduler: every engine (sync XU, explicit async, the async
 * pool with model stop) runs to completion under many schedules, with no
 * deadlock or hang reported and the accounting back to zero, because the
 * device synchronizes only through ksched.h.
 */
#include "emu_fixture.h"
#include "sched/kctl.h"

static void session(void *arg)
{
	static const uint64_t in[] = {16, 8}, out[] = {16};
	kmgr_async_exec_worker_threads_t *p;
	kmgr_exec_resources_t *r;
	NRT_STATUS ret = 99;
	et_model_t m;
	nrta_seq_t seq;
	uint64_t h, stop;
	bool done = false, need;

	(void)arg;
	et_open(2);
	KT_EQ(et_load(&m, 1, 1, 2, in, 1, out, true), NRT_SUCCESS);
	KT_EQ(kmgr_async_exec_init(2, &p), NRT_SUCCESS);
	et_fill(&m, 1);
	KT_EQ(et_exec(&m), NRT_SUCCESS);
	et_check_outputs(&m);
	KT_EQ(et_res(&m, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r), NRT_SUCCESS);
	KT_EQ(tpb_xu_schedule_exec(tpb_xu_get_by_vcore(m.vc), 0, m.h_nn, r, 1, &ret, &seq),
	      NRT_SUCCESS);
	while (!done) {
		KT_EQ(kmgr_xu_is_completed(seq, &done), NRT_SUCCESS);
		ks_usleep(5);
	}
	KT_EQ(ret, NRT_SUCCESS);
	for (int i = 0; i < 2; i++) {
		KT_EQ(et_res(&m, KMGR_EXEC_MODE_ASYNC, &r), NRT_SUCCESS);
		KT_EQ(kmgr_async_exec_add_work(p, m.h_nn, 1, r, &h, (uint64_t)i), NRT_SUCCESS);
	}
	KT_EQ(kmgr_async_exec_model_stop(kmgr_async_exec_get_worker(p, 1), m.h_nn, &stop, &need),
	      NRT_SUCCESS);
	kmgr_async_exec_poll(kmgr_async_exec_get_worker(p, 1), stop);
	KT_EQ(kbl_model_inflight(m.h), 0);
	kmgr_async_exec_destroy(p);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

/* ctl-1: under PCT (20 seeds, depth 3) and round-robin, a device session
 * using every engine ends without a scheduler failure. */
static void ctl_engines(void)
{
	ks_ctl_config_t cfg;
	ks_ctl_result_t res;

	for (uint64_t seed = 1; seed <= 21; seed++) {
		ks_ctl_config_init(&cfg);
		cfg.strategy = seed == 21 ? KS_STRAT_RR : KS_STRAT_PCT;
		cfg.seed = seed;
		cfg.pct_depth = 3;
		cfg.pct_k_hint = 2000;
		KT_EQ(ks_ctl_run(&cfg, session, NULL, &res), 0);
		KT_EQ(res.failure, KS_OK);
		KT_GT(res.threads, 2);
	}
}

int main(void)
{
	kt_log_errors_only();
	KT_CASE("ctl-1 engines under the controlled scheduler", ctl_engines);
	KT_DONE();
}
