/*
 * kt_kmgr.h - what the facade's tests share: bring the device and the
 * facade up and down, build a small model container, build tensor sets
 * (device or host), check outputs against the device's formula, compare
 * accounting snapshots.  The container builder, the expected outputs,
 * the log capture and the fault plans are lib/ktest's (ktest_model.h,
 * ktest_log.h, ktest_fault.h).
 */
#ifndef KT_KMGR_H
#define KT_KMGR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/kalloc.h"
#include "base/kfault.h"
#include "base/klog.h"
#include "emu/emu.h"
#include "kmgr/dlr.h"
#include "kmgr/kmgr.h"
#include "ktest.h"
#include "ktest_fault.h"
#include "ktest_log.h"
#include "ktest_model.h"
#include "model/kmodel.h"
#include "sched/ksched.h"

#define KT_MAX_IO 8

static inline uint8_t *kt_model_bytes(const char *name, uint32_t nkbin, bool has_cc, uint32_t n_in,
                                      uint32_t n_out, uint32_t elems, size_t *len);

/* One load and unload per core, so that what the device and the registry
 * keep for their lifetime (arena pools, the registry's table) exists before
 * a test takes its accounting baseline. */
static inline void kt_warm(uint32_t nc)
{
	size_t len;
	uint8_t *b = kt_model_bytes("warm", 1, false, 1, 1, 4, &len);
	H_NN h;

	for (uint32_t c = 0; c < nc; c++) {
		KT_EQ(kmgr_load_nn(b, len, (int32_t)c, 1, &h), NRT_SUCCESS);
		KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
	}
	kfree(b);
}

static inline void kt_up(uint32_t nc, bool async, uint64_t warn_iters)
{
	emu_config_t cfg;
	kmgr_config_t kc = {.async_queue_depth = 0, .drain_warn_iters = warn_iters};

	KT_EQ(emu_config_default(&cfg), NRT_SUCCESS);
	cfg.nc_count = nc;
	KT_EQ(emu_open(&cfg), NRT_SUCCESS);
	KT_EQ(kmgr_init(async, &kc), NRT_SUCCESS);
	kt_warm(nc);
}

static inline void kt_down(void)
{
	kmgr_destroy();
	emu_close();
}

/* A model of n_in u8 inputs "in<i>" and n_out u8 outputs "out<j>" of elems
 * bytes each; container bytes kalloc'd (kfree). */
static inline uint8_t *kt_model_bytes(const char *name, uint32_t nkbin, bool has_cc, uint32_t n_in,
                                      uint32_t n_out, uint32_t elems, size_t *len)
{
	uint32_t sizes[64];

	KT_LE(n_in, 64);
	KT_LE(n_out, 64);
	for (uint32_t i = 0; i < 64; i++)
		sizes[i] = elems;
	return kt_model_build(name, nkbin, has_cc, n_in, sizes, n_out, sizes, len);
}

static inline H_NN kt_load(const char *name, uint32_t nkbin, int32_t start, int32_t count)
{
	size_t len;
	uint8_t *b = kt_model_bytes(name, nkbin, false, 2, 1, 16, &len);
	H_NN h = {0};

	KT_EQ(kmgr_load_nn(b, len, start, count, &h), NRT_SUCCESS);
	kfree(b);
	return h;
}

typedef struct kt_io {
	nrt_tensor_set_t *in, *out;
	nrt_tensor_t *t[2 * KT_MAX_IO];
	uint32_t n_in, n_out, elems;
} kt_io_t;

/* Input i holds bytes (i * 7 + k) & 0xff. */
static inline void kt_io_make(kt_io_t *io, nrt_tensor_placement_t placement, int nc, uint32_t n_in,
                              uint32_t n_out, uint32_t elems)
{
	uint8_t buf[256];
	char tn[32];

	memset(io, 0, sizeof(*io));
	io->n_in = n_in;
	io->n_out = n_out;
	io->elems = elems;
	KT_EQ(kbl_tensor_set_allocate(&io->in), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_allocate(&io->out), NRT_SUCCESS);
	for (uint32_t i = 0; i < n_in + n_out; i++) {
		bool is_in = i < n_in;

		snprintf(tn, sizeof(tn), is_in ? "in%u" : "out%u", is_in ? i : i - n_in);
		KT_EQ(kbl_tensor_allocate(placement, nc, elems, tn, &io->t[i]), NRT_SUCCESS);
		for (uint32_t k = 0; k < elems && k < sizeof(buf); k++)
			buf[k] = (uint8_t)(is_in ? i * 7 + k : 0xEE);
		KT_EQ(kbl_tensor_write(io->t[i], buf, 0, elems), NRT_SUCCESS);
		KT_EQ(kbl_tensor_set_add(is_in ? io->in : io->out, tn, io->t[i]), NRT_SUCCESS);
	}
}

static inline void kt_io_free(kt_io_t *io)
{
	kbl_free_feature_map_set(io->in);
	kbl_free_feature_map_set(io->out);
	for (uint32_t i = 0; i < io->n_in + io->n_out; i++)
		kbl_tensor_free(&io->t[i]);
}

/* Every output holds what the device's formula says. */
static inline void kt_io_check(const kt_io_t *io)
{
	uint8_t in[KT_MAX_IO][256], got[256];
	const uint8_t *inp[KT_MAX_IO];
	uint64_t sizes[KT_MAX_IO];

	for (uint32_t i = 0; i < io->n_in; i++) {
		KT_EQ(kbl_tensor_read(io->t[i], in[i], 0, io->elems), NRT_SUCCESS);
		inp[i] = in[i];
		sizes[i] = io->elems;
	}
	for (uint32_t j = 0; j < io->n_out; j++) {
		KT_EQ(kbl_tensor_read(io->t[io->n_in + j], got, 0, io->elems), NRT_SUCCESS);
		kt_expect_output(io->n_in, inp, sizes, j, got, io->elems);
	}
}

static inline void kt_acct_eq(const emu_accounting_t *a, const emu_accounting_t *b)
{
	KT_EQ(a->host_bytes, b->host_bytes);
	KT_EQ(a->host_allocs, b->host_allocs);
	KT_EQ(a->device_bytes, b->device_bytes);
	KT_EQ(a->device_allocs, b->device_allocs);
	KT_EQ(a->objects, b->objects);
	KT_EQ(a->staged_models, b->staged_models);
	KT_EQ(a->async_marks, b->async_marks);
}

#endif /* KT_KMGR_H */
