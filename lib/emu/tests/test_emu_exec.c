/*
 * test_emu_exec.c - the focus of this file is execution on the device:
 * the compute formula, the sync XU (one work item per execution, the
 * INIT -> WAIT_BARRIER -> WAIT_CORE -> DONE harvest, the completion flag),
 * steady-state executions that allocate no device memory, explicit async
 * sequence numbers, model unstage, and concurrent callers.
 */
#include "emu_fixture.h"

/* exec-1: a successful execution writes out_j[k] = j + 1 + sum_i
 * in_i[k mod size_i] (mod 256), checked by hand and by the oracle helper. */
static void exec_formula(void)
{
	static const uint64_t in[] = {5, 7}, out[] = {16, 3};
	et_model_t m;
	uint8_t a[5], b[7], o0[16], o1[3];

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 2, in, 2, out, false), NRT_SUCCESS);
	for (int i = 0; i < 5; i++)
		a[i] = (uint8_t)(200 + i);
	for (int i = 0; i < 7; i++)
		b[i] = (uint8_t)(10 * i);
	KT_EQ(kbl_tensor_write(m.t[0], a, 0, 5), NRT_SUCCESS);
	KT_EQ(kbl_tensor_write(m.t[1], b, 0, 7), NRT_SUCCESS);
	KT_EQ(et_exec(&m), NRT_SUCCESS);
	KT_EQ(kbl_tensor_read(m.t[2], o0, 0, 16), NRT_SUCCESS);
	KT_EQ(kbl_tensor_read(m.t[3], o1, 0, 3), NRT_SUCCESS);
	for (int k = 0; k < 16; k++)
		KT_EQ(o0[k], (uint8_t)(1 + a[k % 5] + b[k % 7]));
	for (int k = 0; k < 3; k++)
		KT_EQ(o1[k], (uint8_t)(2 + a[k % 5] + b[k % 7]));
	et_fill(&m, 3);
	KT_EQ(et_exec(&m), NRT_SUCCESS);
	et_check_outputs(&m);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

typedef struct states {
	uint32_t n;
	uint32_t xu[64];
	tpb_xu_state_t st[64];
} states_t;

static void record_state(void *ctx, uint32_t xu_id, tpb_xu_state_t st)
{
	states_t *s = ctx;

	if (s->n < 64) {
		s->xu[s->n] = xu_id;
		s->st[s->n++] = st;
	}
}

/* exec-2: one sync execution of a two-core model is one work item on the
 * XU of its first core, harvested INIT -> WAIT_BARRIER -> WAIT_CORE ->
 * DONE, observed SUBMIT -> START -> COMPLETE, and nothing is in flight
 * once kmgr_sync_exec returned. */
static void exec_xu_state_machine(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	static et_events_t ev = {.lock = KS_MUTEX_INITIALIZER};
	states_t st = {0};
	et_model_t m;
	emu_accounting_t a;

	et_open(4);
	KT_EQ(et_load(&m, 2, 2, 1, in, 1, out, false), NRT_SUCCESS);
	emu_set_xu_state_hook(record_state, &st);
	emu_set_exec_observer(et_observer, &ev);
	KT_EQ(et_exec(&m), NRT_SUCCESS);
	emu_set_xu_state_hook(NULL, NULL);
	emu_set_exec_observer(NULL, NULL);
	KT_EQ(st.n, 4);
	for (uint32_t i = 0; i < 4; i++) {
		KT_EQ(st.st[i], (tpb_xu_state_t)i);
		KT_EQ(st.xu[i], 2);
	}
	KT_EQ(ev.n, 3);
	KT_EQ(ev.e[0].ev, EMU_EXEC_SUBMIT);
	KT_EQ(ev.e[1].ev, EMU_EXEC_START);
	KT_EQ(ev.e[2].ev, EMU_EXEC_COMPLETE);
	KT_EQ(ev.e[2].status, NRT_SUCCESS);
	KT_EQ(ev.e[2].h_model, m.h);
	KT_EQ(ev.e[2].h_nn, m.h_nn);
	emu_get_accounting(&a);
	KT_EQ(a.inflight_execs, 0);
	KT_EQ(kbl_model_inflight(m.h), 0);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

/* exec-3: once the model is loaded and its first execution ran (rings at
 * load, collectives at the first execution), N more executions leave the
 * device and host accounting exactly as they were. */
static void exec_steady_state(void)
{
	static const uint64_t in[] = {64, 32}, out[] = {128};
	et_model_t m;
	emu_accounting_t a0, a1;
	int64_t core0, calls;

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 2, in, 1, out, true), NRT_SUCCESS);
	KT_EQ(et_exec(&m), NRT_SUCCESS);
	emu_get_accounting(&a0);
	core0 = emu_core_device_bytes(0);
	calls = ks_atomic_peek(&emu_cnt.device_alloc_calls);
	for (int i = 0; i < 50; i++) {
		et_fill(&m, (uint8_t)i);
		KT_EQ(et_exec(&m), NRT_SUCCESS);
		et_check_outputs(&m);
	}
	emu_get_accounting(&a1);
	KT_EQ(a1.device_bytes, a0.device_bytes);
	KT_EQ(a1.device_allocs, a0.device_allocs);
	KT_EQ(emu_core_device_bytes(0), core0);
	KT_EQ(ks_atomic_peek(&emu_cnt.device_alloc_calls), calls); /* not even transiently */
	KT_EQ(a1.host_allocs, a0.host_allocs);
	KT_EQ(a1.objects, a0.objects);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

static bool wait_done(nrta_seq_t seq)
{
	bool done = false;

	for (int i = 0; i < 200000 && !done; i++) {
		KT_EQ(kmgr_xu_is_completed(seq, &done), NRT_SUCCESS);
		if (!done)
			ks_usleep(10);
	}
	return done;
}

/* async-x-1: explicit async returns at once with per-XU sequence numbers
 * (tail | xu_id << 48), consecutive with the sync executions on the same
 * XU; each completes, writes its status, and the completed sequence reads
 * back; a sequence never issued is refused. */
static void explicit_async_seq(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	et_model_t m;
	nrta_seq_t seq[3], last;
	NRT_STATUS ret[3] = {99, 99, 99};
	kmgr_exec_resources_t *r;
	tpb_xu_t *xu;
	bool done;

	et_open(3);
	KT_EQ(et_load(&m, 2, 1, 1, in, 1, out, false), NRT_SUCCESS);
	KT_EQ(et_exec(&m), NRT_SUCCESS); /* sequence 1 */
	xu = tpb_xu_get_by_vcore(m.vc);
	KT_EQ(tpb_xu_id(xu), 2);
	for (int i = 0; i < 3; i++) {
		KT_EQ(et_res(&m, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r), NRT_SUCCESS);
		KT_EQ(tpb_xu_schedule_exec(xu, 0, m.h_nn, r, 5, &ret[i], &seq[i]), NRT_SUCCESS);
		KT_EQ(seq[i], (2ull << 48) | (uint64_t)(i + 2));
	}
	for (int i = 0; i < 3; i++) {
		KT_ASSERT(wait_done(seq[i]));
		KT_EQ(ret[i], NRT_SUCCESS);
	}
	KT_EQ(kmgr_xu_get_compl_seq(2, &last), NRT_SUCCESS);
	KT_EQ(last, seq[2]);
	KT_EQ(kmgr_xu_is_completed(seq[2] + 1, &done), NRT_INVALID);
	KT_EQ(kmgr_xu_is_completed(2ull << 48, &done), NRT_INVALID);
	KT_EQ(kmgr_xu_is_completed((9ull << 48) | 1, &done), NRT_INVALID);
	KT_EQ(kmgr_xu_get_compl_seq(3, &last), NRT_INVALID);
	KT_EQ(kmgr_xu_is_completed((1ull << 48) | 1, &done), NRT_INVALID);
	et_check_outputs(&m);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

/* xu-1: tpb_xu_model_unstage returns only when no work of the model is
 * queued or running on the XU. */
static void xu_model_unstage(void)
{
	static const uint64_t in[] = {4096}, out[] = {4096};
	et_model_t m;
	nrta_seq_t seq[4];
	NRT_STATUS ret[4];
	kmgr_exec_resources_t *r;
	tpb_xu_t *xu;
	bool done;

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	xu = tpb_xu_get_by_vcore(m.vc);
	/* The first item's completion is delayed, so the unstage has to wait. */
	kfault_set_plan(&(kfault_plan_t){1, {{KFAULT_EXEC_DELAY, 0, 1, 20000}}});
	for (int i = 0; i < 4; i++) {
		KT_EQ(et_res(&m, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r), NRT_SUCCESS);
		KT_EQ(tpb_xu_schedule_exec(xu, 0, m.h_nn, r, 5, &ret[i], &seq[i]), NRT_SUCCESS);
	}
	KT_EQ(tpb_xu_model_unstage(xu, m.h), NRT_SUCCESS);
	kfault_clear();
	KT_EQ(kbl_model_inflight(m.h), 0);
	for (int i = 0; i < 4; i++) {
		KT_EQ(kmgr_xu_is_completed(seq[i], &done), NRT_SUCCESS);
		KT_ASSERT(done);
	}
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

static et_model_t conc_models[4];

static void *conc_thread(void *arg)
{
	et_model_t *m = arg;

	for (int i = 0; i < 40; i++) {
		et_fill(m, (uint8_t)(i * 3));
		KT_EQ(et_exec(m), NRT_SUCCESS);
		et_check_outputs(m);
	}
	return NULL;
}

/* exec-4: concurrent sync callers on shared XUs each get their own
 * correct answers and the device ends with nothing in flight. */
static void exec_concurrent(void)
{
	static const uint64_t in[] = {33, 17}, out[] = {64};
	ks_thread_t th[4];

	et_open(2);
	for (int i = 0; i < 4; i++)
		KT_EQ(et_load(&conc_models[i], (uint32_t)(i % 2), 1, 2, in, 1, out, i == 0),
		      NRT_SUCCESS);
	for (int i = 0; i < 4; i++)
		KT_EQ(ks_thread_create(&th[i], "conc", conc_thread, &conc_models[i]), 0);
	for (int i = 0; i < 4; i++)
		KT_EQ(ks_thread_join(&th[i], NULL), 0);
	for (int i = 0; i < 4; i++)
		et_unload(&conc_models[i]);
	emu_close();
	kt_assert_accounting_zero();
}

int main(void)
{
	KT_CASE("exec-1 compute formula", exec_formula);
	KT_CASE("exec-2 sync XU state machine", exec_xu_state_machine);
	KT_CASE("exec-3 steady state allocates nothing", exec_steady_state);
	KT_CASE("async-x-1 explicit async sequence numbers", explicit_async_seq);
	KT_CASE("xu-1 model unstage", xu_model_unstage);
	KT_CASE("exec-4 concurrent sync callers", exec_concurrent);
	KT_DONE();
}
