/*
 * stage.c - dlr_kelf_stage (seed §6, kmgr/dlr_kelf.cpp): the KMGR<->KBL
 * seam where a parsed model becomes the dlr_kelf_model_t bridge plus one
 * per-core model record per subgraph; single-core inline, multi-core one
 * thread per subgraph, joined, rolled back with kbl_model_remove on any
 * failure.  And its inverse, dlr_kelf_unstage.
 */
#include <string.h>

#include "dlr.h"

/* The seed's vtpb_info_shared_t: the placement plan shared by the
 * subgraphs of one stage.  Ours only records which cores take part. */
typedef struct vtpb_info_shared {
	const virtual_core_t *vcore;
	uint32_t n_cores;
} vtpb_info_shared_t;

static vtpb_info_shared_t *vtpb_info_shared_alloc(void)
{
	return kalloc(KFAULT_KMGR_VTPB_SHARED, sizeof(vtpb_info_shared_t));
}

static void vtpb_info_shared_init_vtpb(vtpb_info_shared_t *shared, const virtual_core_t *vcore,
                                       uint32_t nkbin)
{
	shared->vcore = vcore;
	shared->n_cores = nkbin;
}

static void vtpb_info_shared_free(vtpb_info_shared_t *shared)
{
	kfree(shared);
}

typedef struct stage_arg {
	tpb_t *tpb;
	H_MODEL h_model;
	const kbl_model_param_t *param;
	const char *name;
	const uint8_t *uuid;
	NRT_STATUS rc;
	bool started;
} stage_arg_t;

static NRT_STATUS dlr_kelf_stage_model_add(stage_arg_t *a)
{
	return kbl_model_add(a->tpb, a->h_model, a->param, a->name, a->uuid);
}

static void *stage_thread(void *p)
{
	stage_arg_t *a = p;

	a->rc = dlr_kelf_stage_model_add(a);
	return NULL;
}

/* One thread per subgraph (<= KMODEL_MAX_SUBGRAPHS); every thread that
 * started is joined before anything is judged. */
static NRT_STATUS dlr_kelf_stage_multi_tpb_model_add(const kmodel_t *kg,
                                                     const virtual_core_t *vcore,
                                                     const kbl_model_param_t *param,
                                                     H_MODEL h_model, const char *name,
                                                     const uint8_t *uuid)
{
	uint32_t n = kg->nkbin;
	stage_arg_t *args = kalloc_array(KFAULT_KMGR_STAGE, n, sizeof(*args));
	ks_thread_t *th = kalloc_array(KFAULT_KMGR_STAGE, n, sizeof(*th));
	NRT_STATUS rc = NRT_SUCCESS;

	if (!args || !th) {
		rc = NRT_RESOURCE;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++) {
		args[i] =
		    (stage_arg_t){vcore->tpbs[i], h_model, param, name, uuid, NRT_FAILURE, false};
		args[i].started =
		    ks_thread_create(&th[i], "kmgr-stage", stage_thread, &args[i]) == 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (args[i].started)
			ks_thread_join(&th[i], NULL);
		if (args[i].rc && rc == NRT_SUCCESS)
			rc = args[i].rc;
	}
	for (uint32_t i = 0; rc && i < n; i++)
		if (args[i].rc == NRT_SUCCESS)
			kbl_model_remove(args[i].tpb, h_model);
out:
	kfree(th);
	kfree(args);
	return rc;
}

NRT_STATUS dlr_kelf_stage(const kmodel_t *kg, const virtual_core_t *vcore,
                          const kbl_model_param_t *param, H_MODEL h_model, const char *name,
                          const uint8_t *uuid, dlr_kelf_model_t **out)
{
	uint32_t core_size = vtpb_get_vtpb_core_size(vcore);
	vtpb_info_shared_t *shared;
	dlr_kelf_model_t *km;
	NRT_STATUS rc;

	km = kalloc(KFAULT_KMGR_KELF_MODEL, sizeof(*km));
	if (!km)
		return NRT_RESOURCE;
	memcpy(km->uuid, uuid, sizeof(km->uuid));
	km->sg_count = kg->nkbin;
	km->has_cc = kg->has_cc;
	km->vcore = vcore;
	if (vcore->num_tpbs < kg->nkbin) {
		klog_error("Insufficient number of pncs, required %u, available %u", kg->nkbin,
		           vcore->num_tpbs);
		kfree(km);
		return NRT_INVALID;
	}
	KMGR_ASSERT(kg->nkbin == 1 || kg->nkbin == core_size, "kmgr/dlr_kelf.cpp:0xA7");
	shared = vtpb_info_shared_alloc();
	if (!shared) {
		kfree(km);
		return NRT_RESOURCE;
	}
	vtpb_info_shared_init_vtpb(shared, vcore, kg->nkbin);
	if (kg->nkbin == 1) {
		stage_arg_t a = {vcore->tpbs[0], h_model, param, name, uuid, NRT_SUCCESS, true};

		rc = dlr_kelf_stage_model_add(&a);
	} else {
		rc = dlr_kelf_stage_multi_tpb_model_add(kg, vcore, param, h_model, name, uuid);
	}
	vtpb_info_shared_free(shared);
	if (rc) {
		kfree(km);
		return rc;
	}
	km->h_model = h_model;
	*out = km;
	return NRT_SUCCESS;
}

/* Per-core kbl_model_remove, then the bridge. */
void dlr_kelf_unstage(dlr_kelf_model_t *km)
{
	for (uint32_t i = 0; i < km->sg_count; i++)
		kbl_model_remove(km->vcore->tpbs[i], km->h_model);
	kfree(km);
}
