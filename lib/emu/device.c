/*
 * device.c - the emulated device as a whole: configuration, open/close,
 * the upward hooks, the execution observer and the accounting.
 */
#include "emu/emu_int.h"

#include "base/knum.h"

#include <stdlib.h>
#include <string.h>

emu_device_t emu_dev;
emu_counters_t emu_cnt;

/* The one number rule (base/knum.h): " 4" and "+4" are refused here as
 * in every other variable. */
static NRT_STATUS emu_parse_nc_count(const char *s, uint32_t *out)
{
	return knum_parse_u32(s, 1, EMU_MAX_NC, out) ? NRT_INVALID : NRT_SUCCESS;
}

NRT_STATUS emu_config_default(emu_config_t *cfg)
{
	const char *s = getenv("KMGR_EMU_NC_COUNT");

	if (!cfg)
		return NRT_INVALID;
	memset(cfg, 0, sizeof(*cfg));
	cfg->nc_count = EMU_DEFAULT_NC;
	cfg->arena_bytes = EMU_DEFAULT_ARENA_BYTES;
	cfg->async_queue_depth = EMU_DEFAULT_QUEUE_DEPTH;
	cfg->xu_queue_depth = EMU_DEFAULT_QUEUE_DEPTH;
	if (s && emu_parse_nc_count(s, &cfg->nc_count)) {
		klog_error("KMGR_EMU_NC_COUNT='%s': want a number of cores from 1 to %d", s,
		           EMU_MAX_NC);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

static NRT_STATUS emu_config_check(const emu_config_t *cfg)
{
	if (cfg->nc_count < 1 || cfg->nc_count > EMU_MAX_NC) {
		klog_error("emu: nc_count %u out of 1..%d", cfg->nc_count, EMU_MAX_NC);
		return NRT_INVALID;
	}
	/* The arena is an offset space of uint64_t; 1 TiB keeps mmap sane. */
	if (cfg->arena_bytes < EMU_GRANULE || cfg->arena_bytes > (1ull << 40)) {
		klog_error("emu: arena_bytes %llu out of range",
		           (unsigned long long)cfg->arena_bytes);
		return NRT_INVALID;
	}
	if (cfg->first_visible_nc >= cfg->nc_count ||
	    cfg->visible_nc_count > cfg->nc_count - cfg->first_visible_nc) {
		klog_error("emu: visible cores %u+%u outside %u cores", cfg->first_visible_nc,
		           cfg->visible_nc_count, cfg->nc_count);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

/* The device shows only the visible cores, numbered from 0: everything
 * above addresses logical cores and cannot reach a hidden one. */
static uint32_t emu_visible(const emu_config_t *cfg)
{
	return cfg->visible_nc_count ? cfg->visible_nc_count
	                             : cfg->nc_count - cfg->first_visible_nc;
}

NRT_STATUS emu_open(const emu_config_t *cfg)
{
	emu_config_t c;

	if (emu_dev.open) {
		klog_error("emu_open: the device is already open");
		return NRT_INVALID;
	}
	if (!cfg) {
		NRT_STATUS rc = emu_config_default(&c);

		if (rc)
			return rc;
	} else {
		c = *cfg;
	}
	if (!c.async_queue_depth)
		c.async_queue_depth = EMU_DEFAULT_QUEUE_DEPTH;
	if (!c.xu_queue_depth)
		c.xu_queue_depth = EMU_DEFAULT_QUEUE_DEPTH;
	if (emu_config_check(&c))
		return NRT_INVALID;
	emu_dev.cfg = c;
	for (uint32_t i = 0; i < emu_visible(&c); i++) {
		struct tpb *t = &emu_dev.tpbs[i];

		memset(t, 0, sizeof(*t));
		t->idx = i;
		ks_mutex_init(&t->lock);
		emu_xu_init(&t->xu, i);
	}
	emu_dev.open = true;
	return NRT_SUCCESS;
}

void emu_close(void)
{
	uint32_t n, left;

	if (!emu_dev.open)
		return;
	n = emu_nc_count();
	for (uint32_t i = 0; i < n; i++)
		emu_xu_shutdown(&emu_dev.tpbs[i].xu);
	left = emu_models_release_all();
	if (left)
		klog_error("emu_close: %u model records were still staged (not removed)", left);
	for (uint32_t i = 0; i < n; i++) {
		emu_arena_release(i);
		ks_mutex_destroy(&emu_dev.tpbs[i].lock);
	}
	emu_dev.open = false;
}

bool emu_is_open(void)
{
	return emu_dev.open;
}

uint32_t emu_nc_count(void)
{
	return emu_dev.open ? emu_visible(&emu_dev.cfg) : 0;
}

const emu_config_t *emu_config(void)
{
	return emu_dev.open ? &emu_dev.cfg : NULL;
}

tpb_t *emu_tpb(uint32_t nc)
{
	if (nc >= emu_nc_count())
		return NULL;
	return &emu_dev.tpbs[nc];
}

void emu_set_hooks(const emu_hooks_t *hooks)
{
	if (hooks)
		emu_dev.hooks = *hooks;
	else
		memset(&emu_dev.hooks, 0, sizeof(emu_dev.hooks));
}

void emu_set_exec_observer(emu_exec_observer_fn fn, void *ctx)
{
	emu_dev.observer = fn;
	emu_dev.observer_ctx = ctx;
}

void emu_observe(emu_exec_event_t ev, const emu_work_t *w, NRT_STATUS status)
{
	if (emu_dev.observer)
		emu_dev.observer(emu_dev.observer_ctx, ev, w->h_model, w->h_nn, status);
}

int64_t emu_inflight_execs(void)
{
	return ks_atomic_load(&emu_cnt.inflight);
}

int64_t emu_inflight_execs_quiet(void)
{
	return ks_atomic_load_quiet(&emu_cnt.inflight);
}

void emu_get_accounting(emu_accounting_t *acct)
{
	if (!acct)
		return;
	acct->device_bytes = ks_atomic_peek(&emu_cnt.device_bytes);
	acct->device_allocs = ks_atomic_peek(&emu_cnt.device_allocs);
	acct->host_bytes = kalloc_live_bytes();
	acct->host_allocs = kalloc_live_count();
	acct->objects = ks_atomic_peek(&emu_cnt.objects);
	acct->staged_models = ks_atomic_peek(&emu_cnt.staged_models);
	acct->inflight_execs = ks_atomic_peek(&emu_cnt.inflight);
	acct->async_marks = ks_atomic_peek(&emu_cnt.async_marks);
}
