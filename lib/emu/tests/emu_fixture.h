/*
 * emu_fixture.h - what the device tests share: a small device, a model
 * staged straight on the device (no facade), an execution tracker built
 * the way kmgr_exec_pre builds it, an execution observer that records,
 * the all-zero accounting check and a death-test helper.
 */
#ifndef EMU_FIXTURE_H
#define EMU_FIXTURE_H

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu/emu_int.h"
#include "ktest.h"
#include "ktest_emu.h"
#include "ktest_fault.h"
#include "ktest_log.h"

#define ET_ARENA (1u << 20)

static inline void et_open_depth(uint32_t nc, uint32_t depth)
{
	emu_config_t c;

	KT_EQ(emu_config_default(&c), NRT_SUCCESS);
	c.nc_count = nc;
	c.arena_bytes = ET_ARENA;
	c.xu_queue_depth = depth;
	c.async_queue_depth = depth;
	KT_EQ(emu_open(&c), NRT_SUCCESS);
}

static inline void et_open(uint32_t nc)
{
	et_open_depth(nc, 4);
}

#define ET_MAX_IO 6

typedef struct et_model {
	virtual_core_t *vc;
	H_MODEL h;
	uint32_t h_nn;
	uint32_t n_in, n_out;
	kbl_io_desc_t io[ET_MAX_IO];
	nrt_tensor_t *t[ET_MAX_IO];
	nrt_tensor_set_t *in, *out;
} et_model_t;

/* Stage a model with inputs of in_sz[] and outputs of out_sz[] bytes on
 * cores [start, start+ncores), and device tensors + sets for it on start. */
static inline NRT_STATUS et_load(et_model_t *m, uint32_t start, uint32_t ncores, uint32_t n_in,
                                 const uint64_t *in_sz, uint32_t n_out, const uint64_t *out_sz,
                                 bool has_cc)
{
	kbl_model_param_t p = {n_in + n_out, m->io, has_cc, ncores};
	static const uint8_t uuid[16] = {1, 2, 3};
	static uint32_t next_nn = 100;
	NRT_STATUS rc;
	uint32_t c;

	memset(m, 0, sizeof(*m));
	m->n_in = n_in;
	m->n_out = n_out;
	m->h_nn = next_nn++;
	for (uint32_t i = 0; i < n_in + n_out; i++) {
		bool is_in = i < n_in;

		snprintf(m->io[i].name, sizeof(m->io[i].name), "%s%u", is_in ? "in" : "out",
		         is_in ? i : i - n_in);
		m->io[i].usage = is_in ? NRT_TENSOR_USAGE_INPUT : NRT_TENSOR_USAGE_OUTPUT;
		m->io[i].size = is_in ? in_sz[i] : out_sz[i - n_in];
	}
	rc = vtpb_create(start, ncores, &m->vc);
	if (rc)
		return rc;
	m->h = kbl_model_handle_new();
	for (c = 0; c < ncores; c++) {
		rc = kbl_model_add(m->vc->tpbs[c], m->h, &p, "et", uuid);
		if (rc)
			goto undo;
	}
	KT_EQ(kbl_tensor_set_allocate(&m->in), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_allocate(&m->out), NRT_SUCCESS);
	for (uint32_t i = 0; i < n_in + n_out; i++) {
		KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, (int)start, m->io[i].size,
		                          m->io[i].name, &m->t[i]),
		      NRT_SUCCESS);
		KT_EQ(kbl_tensor_set_add(i < n_in ? m->in : m->out, m->io[i].name, m->t[i]),
		      NRT_SUCCESS);
	}
	return NRT_SUCCESS;
undo:
	while (c--)
		kbl_model_remove(m->vc->tpbs[c], m->h);
	vtpb_destroy(m->vc);
	m->vc = NULL;
	return rc;
}

static inline void et_unload(et_model_t *m)
{
	for (uint32_t c = 0; c < m->vc->num_tpbs; c++)
		KT_EQ(kbl_model_remove(m->vc->tpbs[c], m->h), NRT_SUCCESS);
	vtpb_destroy(m->vc);
	kbl_free_feature_map_set(m->in);
	kbl_free_feature_map_set(m->out);
	for (uint32_t i = 0; i < m->n_in + m->n_out; i++)
		kbl_tensor_free(&m->t[i]);
}

/* The tracker as kmgr_exec_pre builds it, including the first-execution
 * bootstrap under the hardware-exec-queue lock. */
static inline NRT_STATUS et_res(et_model_t *m, uint32_t mode, kmgr_exec_resources_t **out)
{
	kmgr_exec_resources_t *r = kalloc(KFAULT_KMGR_EXEC_RESOURCES, sizeof(*r));
	kbl_model_t *kmod;
	NRT_STATUS rc;

	*out = NULL;
	if (!r)
		return NRT_RESOURCE;
	r->trace_nc_idx = m->vc->vtpb_idx;
	r->exec_mode = mode;
	r->h_nn = m->h_nn;
	kbl_create_reference_feature_map_set(m->in, &r->in_fmap_set);
	kbl_create_reference_feature_map_set(m->out, &r->out_fmap_set);
	r->tdrv_resources = kalloc(KFAULT_KMGR_TDRV_RESOURCES, sizeof(*r->tdrv_resources));
	rc = r->tdrv_resources ? NRT_SUCCESS : NRT_RESOURCE;
	if (!rc) {
		kbl_init_compute_resources(r->tdrv_resources, m->vc->num_tpbs);
		rc = kbl_compute_build_compute_resources(m->vc, m->vc->num_tpbs, m->h, m->in,
		                                         m->out, r->tdrv_resources);
	}
	if (!rc)
		rc = kbl_get_model_ref_count(m->vc->tpbs, m->h, &kmod);
	if (!rc) {
		kbl_acquire_hw_exec_queue_lock(kmod);
		if (!kbl_cc_get_model_is_first_exec(kmod))
			rc = kbl_exec_build_and_load_cc_resources(kmod, m->vc->num_tpbs, 1);
		kbl_release_hw_exec_queue_lock(kmod);
		kbl_model_ref_decrement(kmod);
	}
	if (rc) {
		kbl_free_compute_resources(r->tdrv_resources);
		kbl_free_feature_map_set(r->in_fmap_set);
		kbl_free_feature_map_set(r->out_fmap_set);
		kfree(r);
		return rc;
	}
	*out = r;
	return NRT_SUCCESS;
}

/* One sync execution through the device. */
static inline NRT_STATUS et_exec(et_model_t *m)
{
	kmgr_exec_resources_t *r;
	NRT_STATUS rc = et_res(m, KMGR_EXEC_MODE_EXPLICIT_ASYNC, &r);

	return rc ? rc : kmgr_sync_exec(m->vc, r, 7);
}

/* Fill input i with a pattern, and check every output against the formula. */
static inline void et_fill(et_model_t *m, uint8_t seed)
{
	for (uint32_t i = 0; i < m->n_in; i++) {
		uint8_t buf[4096];

		for (uint64_t k = 0; k < m->io[i].size && k < sizeof(buf); k++)
			buf[k] = (uint8_t)(seed + 31 * i + 7 * k);
		KT_EQ(kbl_tensor_write(m->t[i], buf, 0, m->io[i].size), NRT_SUCCESS);
	}
}

static inline void et_check_outputs(et_model_t *m)
{
	const uint8_t *in[ET_MAX_IO];
	uint64_t sz[ET_MAX_IO];

	for (uint32_t i = 0; i < m->n_in; i++) {
		in[i] = kbl_tensor_get_va(m->t[i]);
		sz[i] = m->io[i].size;
	}
	for (uint32_t j = 0; j < m->n_out; j++) {
		uint8_t want[4096], got[4096];
		uint64_t n = m->io[m->n_in + j].size;

		KT_LE(n, sizeof(want));
		emu_compute_expected(m->n_in, in, sz, j, want, n);
		KT_EQ(kbl_tensor_read(m->t[m->n_in + j], got, 0, n), NRT_SUCCESS);
		KT_MEMEQ(got, want, n);
	}
}

/* ---- an observer that records ---- */
typedef struct et_event {
	emu_exec_event_t ev;
	uint64_t h_model;
	uint32_t h_nn;
	NRT_STATUS status;
} et_event_t;

typedef struct et_events {
	ks_mutex_t lock;
	uint32_t n;
	et_event_t e[256];
} et_events_t;

static inline void et_observer(void *ctx, emu_exec_event_t ev, uint64_t h_model, uint32_t h_nn,
                               NRT_STATUS status)
{
	et_events_t *r = ctx;

	ks_mutex_lock(&r->lock);
	if (r->n < 256)
		r->e[r->n++] = (et_event_t){ev, h_model, h_nn, status};
	ks_mutex_unlock(&r->lock);
}

static inline uint32_t et_count(et_events_t *r, emu_exec_event_t ev)
{
	uint32_t n = 0;

	ks_mutex_lock(&r->lock);
	for (uint32_t i = 0; i < r->n; i++)
		n += r->e[i].ev == ev;
	ks_mutex_unlock(&r->lock);
	return n;
}

/* Run fn in a child; true when it died (signal or non-zero exit) and its
 * stderr contains needle. */
static inline bool et_dies(void (*fn)(void), const char *needle)
{
	int fd[2], st;
	char out[8192];
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	KT_EQ(pipe(fd), 0);
	fflush(NULL);
	pid = fork();
	KT_GE(pid, 0);
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		fn();
		_exit(0);
	}
	close(fd[1]);
	while (n < sizeof(out) - 1 && (r = read(fd[0], out + n, sizeof(out) - 1 - n)) > 0)
		n += (size_t)r;
	out[n] = 0;
	close(fd[0]);
	KT_EQ(waitpid(pid, &st, 0), pid);
	if (!strstr(out, needle))
		fprintf(stderr, "child said: %s\n", out);
	return !(WIFEXITED(st) && WEXITSTATUS(st) == 0) && strstr(out, needle) != NULL;
}

#endif /* EMU_FIXTURE_H */
