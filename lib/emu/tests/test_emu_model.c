/*
 * test_emu_model.c - the focus of this file is models on the device:
 * virtual cores, kbl_model_add / kbl_model_remove per core, the model
 * reference count, the first-execution flag and the collectives bootstrap,
 * and the IO binding of compute resources.
 */
#include "emu_fixture.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* vcore-1: a virtual core spans consecutive cores inside the device and
 * anything else is refused. */
static void vcore_bounds(void)
{
	virtual_core_t *v;

	et_open(4);
	KT_EQ(vtpb_create(1, 3, &v), NRT_SUCCESS);
	KT_EQ(v->vtpb_idx, 1);
	KT_EQ(vtpb_get_vtpb_core_size(v), 3);
	KT_ASSERT(v->tpbs[2] == emu_tpb(3));
	vtpb_destroy(v);
	KT_EQ(vtpb_create(2, 3, &v), NRT_INVALID);
	KT_EQ(vtpb_create(4, 1, &v), NRT_INVALID);
	KT_EQ(vtpb_create(0, 0, &v), NRT_INVALID);
	KT_EQ(vtpb_create(UINT32_MAX, 2, &v), NRT_INVALID);
	emu_close();
	kt_assert_accounting_zero();
}

/* model-1: add stages a record per core with its rings on that core's
 * device memory; a second add of the same handle on a core is refused;
 * remove unstages it and frees the rings. */
static void model_add_remove(void)
{
	static const uint64_t in[] = {16}, out[] = {16};
	et_model_t m;
	emu_accounting_t a;
	kbl_model_param_t p = {0, NULL, false, 1};

	et_open(4);
	KT_EQ(et_load(&m, 1, 2, 1, in, 1, out, false), NRT_SUCCESS);
	emu_get_accounting(&a);
	KT_EQ(a.staged_models, 2);
	KT_EQ(emu_core_model_count(1), 1);
	KT_EQ(emu_core_model_count(2), 1);
	KT_EQ(emu_core_model_count(0), 0);
	KT_GE(emu_core_device_bytes(2), EMU_RING_BYTES);
	KT_EQ(kbl_model_add(m.vc->tpbs[0], m.h, &p, "dup", NULL), NRT_INVALID);
	KT_EQ(kbl_model_add(m.vc->tpbs[0], 0, &p, "zero", NULL), NRT_INVALID);
	KT_EQ(kbl_model_add(m.vc->tpbs[0], kbl_model_handle_new(), NULL, "null", NULL),
	      NRT_INVALID);
	p.sg_count = 0;
	KT_EQ(kbl_model_add(m.vc->tpbs[0], kbl_model_handle_new(), &p, "sg0", NULL), NRT_INVALID);
	et_unload(&m);
	KT_EQ(kbl_model_remove(emu_tpb(1), m.h), NRT_INVALID);
	emu_get_accounting(&a);
	KT_EQ(a.staged_models, 0);
	KT_EQ(emu_core_device_bytes(2), 0);
	emu_close();
	kt_assert_accounting_zero();
}

/* model-2: a reference taken with kbl_get_model_ref_count keeps the record
 * (and its rings) alive after remove; the last decrement frees it. */
static void model_refcount(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	et_model_t m;
	kbl_model_t *k;
	emu_accounting_t a;

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, false), NRT_SUCCESS);
	KT_EQ(kbl_get_model_ref_count(m.vc->tpbs, m.h, &k), NRT_SUCCESS);
	KT_EQ(kbl_get_model_ref_count(m.vc->tpbs, m.h + 1000, &k), NRT_INVALID);
	KT_EQ(kbl_get_model_ref_count(m.vc->tpbs, m.h, &k), NRT_SUCCESS);
	KT_EQ(ks_atomic_peek(&k->refs), 3); /* staged + two lookups */
	kbl_model_ref_decrement(k);
	et_unload(&m);
	emu_get_accounting(&a);
	KT_EQ(a.staged_models, 0);
	KT_EQ(a.objects, 1); /* the record, still referenced */
	KT_GE(a.device_bytes, EMU_RING_BYTES);
	kbl_model_ref_decrement(k);
	emu_close();
	kt_assert_accounting_zero();
}

/* model-3: the first-execution flag is false until the bootstrap ran;
 * a has_cc model allocates its collectives resources there, once. */
static void model_first_exec_cc(void)
{
	static const uint64_t in[] = {8}, out[] = {8};
	et_model_t m;
	kbl_model_t *k;
	int64_t before;

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 1, in, 1, out, true), NRT_SUCCESS);
	KT_EQ(kbl_get_model_ref_count(m.vc->tpbs, m.h, &k), NRT_SUCCESS);
	before = emu_core_device_bytes(0);
	kbl_acquire_hw_exec_queue_lock(k);
	KT_ASSERT(!kbl_cc_get_model_is_first_exec(k));
	KT_EQ(kbl_exec_build_and_load_cc_resources(k, 1, 1), NRT_SUCCESS);
	KT_ASSERT(kbl_cc_get_model_is_first_exec(k));
	KT_EQ(kbl_exec_build_and_load_cc_resources(k, 1, 2), NRT_SUCCESS);
	kbl_release_hw_exec_queue_lock(k);
	KT_EQ(emu_core_device_bytes(0), before + EMU_CC_BYTES);
	kbl_model_ref_decrement(k);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

/* bind-1: the IO binding resolves every model tensor by name and refuses
 * a missing one, a wrong size and a host tensor. */
static void bind_checks(void)
{
	static const uint64_t in[] = {8, 4}, out[] = {8};
	et_model_t m;
	tdrv_compute_resources_t *r = kalloc(KFAULT_KMGR_TDRV_RESOURCES, sizeof(*r));
	nrt_tensor_t *small, *host;

	et_open(1);
	KT_EQ(et_load(&m, 0, 1, 2, in, 1, out, false), NRT_SUCCESS);
	kbl_init_compute_resources(r, 1);
	KT_EQ(kbl_compute_build_compute_resources(m.vc, 1, m.h, m.in, m.out, r), NRT_SUCCESS);
	KT_EQ(r->n_bound, 3);
	KT_EQ(kbl_compute_build_compute_resources(m.vc, 1, m.h, m.out, m.out, r), NRT_INVALID);
	KT_EQ(kbl_compute_build_compute_resources(m.vc, 1, m.h + 99, m.in, m.out, r), NRT_INVALID);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 7, "in0", &small), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_add(m.in, "in0", small), NRT_SUCCESS);
	KT_EQ(kbl_compute_build_compute_resources(m.vc, 1, m.h, m.in, m.out, r), NRT_INVALID);
	/* a VIRTUAL tensor with no buffer has no memory at all: a clean error */
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, 0, 8, "in0", &host), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_add(m.in, "in0", host), NRT_SUCCESS);
	KT_EQ(kbl_compute_build_compute_resources(m.vc, 1, m.h, m.in, m.out, r), NRT_INVALID);
	kbl_tensor_free(&host);
	/* host memory reaching the device is the facade's bug: the device faults
	 * (abort with "DEVICE FAULT"), checked in a child process */
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 8, "in0", &host), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_add(m.in, "in0", host), NRT_SUCCESS);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		kbl_compute_build_compute_resources(m.vc, 1, m.h, m.in, m.out, r);
		_exit(0);
	}
	int st = 0;
	KT_EQ(waitpid(pid, &st, 0), pid);
	KT_ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	kbl_free_compute_resources(r);
	kbl_tensor_free(&small);
	kbl_tensor_free(&host);
	et_unload(&m);
	emu_close();
	kt_assert_accounting_zero();
}

int main(void)
{
	KT_CASE("vcore-1 bounds", vcore_bounds);
	KT_CASE("model-1 add/remove", model_add_remove);
	KT_CASE("model-2 reference count", model_refcount);
	KT_CASE("model-3 first execution and CC bootstrap", model_first_exec_cc);
	KT_CASE("bind-1 IO binding checks", bind_checks);
	KT_DONE();
}
