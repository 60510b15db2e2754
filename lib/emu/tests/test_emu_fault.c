/*
 * test_emu_fault.c - the focus of this file is fault injection at the
 * device: one case per fault kind (failed allocation at a named site,
 * completion status, completion delay, queue full, hang), each showing
 * that the failed call returns its status, nothing leaks and the next call
 * works, and a fail_nth sweep over every allocation of a whole device
 * session.
 */
#include "emu_fixture.h"

static void plan(const char *text)
{
	kfault_plan_t p;
	char err[160];

	KT_EQ(kfault_plan_parse(text, &p, err, sizeof(err)), 0);
	kfault_set_plan(&p);
}

/* fault-1: a failed allocation at a device site (tensor memory, model
 * rings, a work item) fails just that call with NRT_RESOURCE, leaves the
 * accounting as it was and the next call succeeds. */
static void fault_alloc_sites(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	emu_accounting_t a0, a1;
	nrt_tensor_t *t;
	et_model_t m;
	kmgr_exec_resources_t *r;

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	emu_get_accounting(&a0);
	plan("alloc:emu.dev_tensor:1");
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, "t", &t), NRT_RESOURCE);
	emu_get_accounting(&a1);
	KT_EQ(a1.device_allocs, a0.device_allocs);
	KT_EQ(a1.host_allocs, a0.host_allocs);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, "t", &t), NRT_SUCCESS);
	kbl_tensor_free(&t);

	plan("alloc:emu.dev_ring:1");
	KT_EQ(kbl_model_add(emu_tpb(0), kbl_model_handle_new(),
	                    &(kbl_model_param_t){2, m.io, false, 1}, "x", NULL),
	      NRT_RESOURCE);
	emu_get_accounting(&a1);
	KT_EQ(a1.staged_models, a0.staged_models);
	KT_EQ(a1.host_allocs, a0.host_allocs);
	KT_EQ(a1.device_allocs, a0.device_allocs);

	plan("alloc:emu.host_work:1");
	KT_EQ(et_res(&m, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r), NRT_SUCCESS);
	KT_EQ(kmgr_sync_exec(m.vc, r, 1), NRT_RESOURCE);
	emu_get_accounting(&a1);
	KT_EQ(a1.host_allocs, a0.host_allocs);
	KT_EQ(a1.inflight_execs, 0);
	KT_EQ(et_exec(&m), NRT_SUCCESS);
	KT_EQ(kfault_fired(), 1);
	kfault_clear();
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

/* fault-2: "complete the n-th execution with status S" for each status a
 * plan accepts: the sync call and the explicit-async exec_ret report S,
 * the outputs are not written, and the next execution succeeds. */
static void fault_exec_status(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	static const NRT_STATUS st[] = {1003, 1004, 1202, 5, 1204};
	et_model_t m;
	uint8_t before[8], after[8];
	char text[32];

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		kmgr_exec_resources_t *r;
		NRT_STATUS ret = 99;
		nrta_seq_t seq;
		bool done = false;

		snprintf(text, sizeof(text), "status:%u:2", (unsigned)st[i]);
		plan(text);
		et_fill(&m, (uint8_t)i);
		KT_EQ(et_exec(&m), NRT_SUCCESS);
		et_check_outputs(&m);
		KT_EQ(kbl_tensor_read(m.t[1], before, 0, 8), NRT_SUCCESS);
		et_fill(&m, (uint8_t)(i + 100));
		KT_EQ(et_exec(&m), st[i]);
		KT_EQ(kbl_tensor_read(m.t[1], after, 0, 8), NRT_SUCCESS);
		KT_MEMEQ(after, before, 8);
		KT_EQ(et_exec(&m), NRT_SUCCESS);
		et_check_outputs(&m);
		plan(text + 0);
		kfault_set_plan(&(kfault_plan_t){1, {{KFAULT_EXEC_STATUS, 0, 1, st[i]}}});
		KT_EQ(et_res(&m, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r), NRT_SUCCESS);
		KT_EQ(tpb_xu_schedule_exec(tpb_xu_get_by_vcore(m.vc), 0, m.h_nn, r, 1, &ret, &seq),
		      NRT_SUCCESS);
		while (!done) {
			KT_EQ(kmgr_xu_is_completed(seq, &done), NRT_SUCCESS);
			ks_usleep(10);
		}
		KT_EQ(ret, st[i]);
	}
	kfault_clear();
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

typedef struct states {
	uint32_t n;
	tpb_xu_state_t st[64];
} states_t;

static void record_state(void *ctx, uint32_t xu_id, tpb_xu_state_t st)
{
	states_t *s = ctx;

	(void)xu_id;
	if (s->n < 64)
		s->st[s->n++] = st;
}

/* fault-3: a completion delayed by k steps is harvested k more times in
 * WAIT_CORE before DONE, and still completes successfully and correctly. */
static void fault_exec_delay(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	static const tpb_xu_state_t want[] = {
	    TPB_XU_INIT,      TPB_XU_WAIT_BARRIER, TPB_XU_WAIT_CORE, TPB_XU_WAIT_CORE,
	    TPB_XU_WAIT_CORE, TPB_XU_WAIT_CORE,    TPB_XU_DONE};
	states_t s = {0};
	et_model_t m;

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	et_fill(&m, 5);
	plan("delay:3:1");
	emu_set_xu_state_hook(record_state, &s);
	KT_EQ(et_exec(&m), NRT_SUCCESS);
	emu_set_xu_state_hook(NULL, NULL);
	KT_EQ(kfault_fired(), 1);
	KT_EQ(s.n, 7);
	for (uint32_t i = 0; i < 7; i++)
		KT_EQ(s.st[i], want[i]);
	et_check_outputs(&m);
	kfault_clear();
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

/* fault-4: a queue-full answer fails the submission with NRT_QUEUE_FULL on
 * both engines, releases its tracker, leaves nothing in flight, and the
 * next submission succeeds. */
static void fault_queue_full(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	kmgr_async_exec_worker_threads_t *p;
	kmgr_exec_resources_t *r;
	emu_accounting_t a0, a1;
	et_model_t m;
	uint64_t h;

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	KT_EQ(kmgr_async_exec_init(4, &p), NRT_SUCCESS);
	emu_get_accounting(&a0);
	plan("qfull:1,qfull:2");
	KT_EQ(et_exec(&m), NRT_QUEUE_FULL);
	KT_EQ(et_res(&m, KMGR_EXEC_MODE_ASYNC, &r), NRT_SUCCESS);
	KT_EQ(kmgr_async_exec_add_work(p, m.h_nn, 0, r, &h, 1), NRT_QUEUE_FULL);
	emu_get_accounting(&a1);
	KT_EQ(a1.host_allocs, a0.host_allocs);
	KT_EQ(a1.objects, a0.objects);
	KT_EQ(a1.inflight_execs, 0);
	KT_EQ(et_exec(&m), NRT_SUCCESS);
	KT_EQ(et_res(&m, KMGR_EXEC_MODE_ASYNC, &r), NRT_SUCCESS);
	KT_EQ(kmgr_async_exec_add_work(p, m.h_nn, 0, r, &h, 1), NRT_SUCCESS);
	KT_EQ(kmgr_async_exec_poll(kmgr_async_exec_get_worker(p, 0), h), NRT_SUCCESS);
	KT_EQ(kfault_fired(), 2);
	kfault_clear();
	kmgr_async_exec_destroy(p);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

static NRT_STATUS cb_status[8];
static uint32_t ncb;

static void record_cb(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                      NRT_STATUS status)
{
	(void)params, (void)model_id, (void)vnc, (void)job_id;
	if (ncb < 8)
		cb_status[ncb++] = status;
}

/* fault-5: a hung execution never completes on its own; emu_close (and
 * kmgr_async_exec_destroy) cancel it with NRT_TIMEOUT and drop the work
 * queued behind it (NRT_CLOSED on the XU, NRT_FAILURE in the pool), after
 * which nothing is in flight and nothing leaks. */
static void fault_hang(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	kmgr_async_exec_worker_threads_t *p;
	kmgr_exec_resources_t *r;
	NRT_STATUS ret[2] = {99, 99};
	nrta_seq_t seq[2];
	et_model_t m;
	uint64_t h;
	bool done;

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	KT_EQ(kmgr_async_exec_init(4, &p), NRT_SUCCESS);
	kmgr_async_exec_set_callback(record_cb, NULL);
	ncb = 0;
	plan("hang:1,hang:2");
	for (int i = 0; i < 2; i++) {
		KT_EQ(et_res(&m, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r), NRT_SUCCESS);
		KT_EQ(tpb_xu_schedule_exec(tpb_xu_get_by_vcore(m.vc), 0, m.h_nn, r, 1, &ret[i],
		                           &seq[i]),
		      NRT_SUCCESS);
	}
	for (int i = 0; i < 2; i++) {
		KT_EQ(et_res(&m, KMGR_EXEC_MODE_ASYNC, &r), NRT_SUCCESS);
		KT_EQ(kmgr_async_exec_add_work(p, m.h_nn, 0, r, &h, 1), NRT_SUCCESS);
	}
	ks_usleep(20000);
	KT_EQ(kmgr_xu_is_completed(seq[0], &done), NRT_SUCCESS);
	KT_ASSERT(!done);
	KT_EQ(ncb, 0);
	kmgr_async_exec_destroy(p);
	KT_EQ(ncb, 2);
	KT_EQ(cb_status[0], NRT_TIMEOUT);
	KT_EQ(cb_status[1], NRT_FAILURE);
	KT_EQ(tpb_xu_model_unstage(NULL, m.h), NRT_INVALID);
	emu_close(); /* also frees the model records left staged */
	KT_EQ(ret[0], NRT_TIMEOUT);
	KT_EQ(ret[1], NRT_CLOSED);
	kfault_clear();
	kmgr_async_exec_set_callback(NULL, NULL);
	vtpb_destroy(m.vc);
	kbl_free_feature_map_set(m.in);
	kbl_free_feature_map_set(m.out);
	kbl_tensor_free(&m.t[0]);
	kbl_tensor_free(&m.t[1]);
	kt_assert_accounting_zero();
}

/* One device session that tolerates any failure; returns what failed. */
static void session(void)
{
	kbl_io_desc_t io[2] = {{"in0", NRT_TENSOR_USAGE_INPUT, 8},
	                       {"out0", NRT_TENSOR_USAGE_OUTPUT, 8}};
	kbl_model_param_t prm = {2, io, true, 1};
	kmgr_async_exec_worker_threads_t *p = NULL;
	nrt_tensor_t *t[3] = {NULL, NULL, NULL};
	nrt_tensor_set_t *in = NULL, *out = NULL, *clone = NULL;
	kmgr_exec_resources_t *r;
	virtual_core_t *vc = NULL;
	et_model_t m;
	H_MODEL h = kbl_model_handle_new();
	bool staged = false, dev_out = false;
	uint64_t handle;

	et_open(2);
	if (vtpb_create(1, 1, &vc))
		goto out;
	staged = kbl_model_add(vc->tpbs[0], h, &prm, "s", NULL) == NRT_SUCCESS;
	kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, 8, "in0", &t[0]);
	kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 1, 8, "out0", &t[1]);
	kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, 8, "out0", &t[2]);
	if (kbl_tensor_set_allocate(&in) || kbl_tensor_set_allocate(&out))
		goto out;
	kbl_tensor_set_add(in, "in0", t[0]);
	kbl_tensor_set_add(out, "out0", t[1]);
	clone = kbl_tensor_set_clone_to_physical_mem(out, 1);
	/* the host tensor must not reach the device (it would fault): execute
	 * only when its device replacement made it into the set */
	dev_out = t[2] && kbl_tensor_set_add(out, "out0", t[2]) == NRT_SUCCESS;
	memset(&m, 0, sizeof(m));
	m.vc = vc;
	m.h = h;
	m.in = in;
	m.out = out;
	if (staged && dev_out && !et_res(&m, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r))
		kmgr_sync_exec(vc, r, 1);
	if (staged && dev_out && !kmgr_async_exec_init(2, &p) &&
	    !et_res(&m, KMGR_EXEC_MODE_ASYNC, &r) &&
	    !kmgr_async_exec_add_work(p, 1, 1, r, &handle, 1))
		kmgr_async_exec_poll(kmgr_async_exec_get_worker(p, 1), handle);
out:
	kmgr_async_exec_destroy(p);
	if (staged)
		kbl_model_remove(vc->tpbs[0], h);
	vtpb_destroy(vc);
	kbl_free_feature_map_set(clone);
	kbl_free_feature_map_set(in);
	kbl_free_feature_map_set(out);
	for (int i = 0; i < 3; i++)
		kbl_tensor_free(&t[i]);
	emu_close();
}

/* fault-6: failing the n-th allocation of a whole session, for every n
 * until the session runs clean, never crashes and always ends with the
 * accounting at zero (syzkaller's fail_nth). */
static int session_body(void *ctx)
{
	(void)ctx;
	session();
	return 0;
}

static void session_check(void *ctx, const kt_faultsim_run_t *run)
{
	(void)ctx;
	(void)run;
	kt_assert_accounting_zero();
}

static void fault_fail_nth_sweep(void)
{
	uint32_t n = kt_faultsim(KFAULT_SITE_ANY, 1000, session_body, session_check, NULL);

	fprintf(stderr, "swept %u allocations\n", n - 1);
	KT_GT(n, 10);
	KT_LT(n, 1000);
}

int main(void)
{
	kt_log_errors_only();
	KT_CASE("fault-1 failed allocations", fault_alloc_sites);
	KT_CASE("fault-2 completion status", fault_exec_status);
	KT_CASE("fault-3 completion delay", fault_exec_delay);
	KT_CASE("fault-4 queue full", fault_queue_full);
	KT_CASE("fault-5 hang", fault_hang);
	KT_CASE("fault-6 fail_nth sweep", fault_fail_nth_sweep);
	KT_DONE();
}
