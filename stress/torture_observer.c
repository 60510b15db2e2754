/*
 * torture_observer.c - the checks of the stress binaries that watch the
 * library from outside: the exec observer's per-handle table (no event
 * after an unload returned, nothing in flight when it returns), ids that
 * only grow, and the accounting that must be zero after nrt_close.
 */
#include "torture.h"

#include <inttypes.h>

#include "kmgr/kmgr.h"
#include "torture_int.h"

/* ----------------------------------------------------------- observer */

static torture_nn_t torture_nn_tab[TORTURE_NN_SLOTS];
static ks_atomic_t torture_unload_clock; /* counts unloads that returned */

torture_nn_t *torture_nn_get(uint32_t id)
{
	torture_nn_t *e = &torture_nn_tab[id % TORTURE_NN_SLOTS];

	return (uint32_t)ks_atomic_peek(&e->id) == id ? e : NULL;
}

void torture_nn_track(uint32_t id)
{
	torture_nn_t *e = &torture_nn_tab[id % TORTURE_NN_SLOTS];

	/* Reset the counters before the id, so an observer that matches the id
	 * sees a clean entry.  Only the loader of id writes here. */
	torture_atomic_set(&e->id, 0);
	torture_atomic_set(&e->h_model, 0);
	torture_atomic_set(&e->unloaded, 0);
	torture_atomic_set(&e->inflight, 0);
	torture_atomic_set(&e->submits, 0);
	torture_atomic_set(&e->completes, 0);
	torture_atomic_set(&e->id, id);
}

/* One bit per id handed out (the first 16M ids): ids are never reused. */
static ks_atomic_t torture_id_seen[1u << 18];

void torture_nn_check_grows(torture_t *t, uint32_t id)
{
	ks_atomic_t *word;
	int64_t bit, cur;

	/* kmgr_last_nn_id is read after the load returned, so it is at least
	 * id unless the allocator is not monotone. */
	if (id == 0 || id > kmgr_last_nn_id())
		torture_fail(t, "load returned id %u, but kmgr_last_nn_id() is %u", id,
		             kmgr_last_nn_id());
	if (id / 64 >= sizeof(torture_id_seen) / sizeof(torture_id_seen[0]))
		return;
	word = &torture_id_seen[id / 64];
	bit = (int64_t)(1ull << (id % 64));
	cur = ks_atomic_load_quiet(word);
	/* fetch_or: set the bit unless it was set already */
	while (!(cur & bit) && !ks_atomic_cas_quiet(word, &cur, cur | bit))
		;
	if (cur & bit)
		torture_fail(t, "ids only grow: id %u was handed out twice", id);
}

static void torture_observer(void *ctx, emu_exec_event_t ev, uint64_t h_model, uint32_t h_nn,
                             NRT_STATUS status)
{
	torture_t *t = ctx;
	torture_nn_t *e = torture_nn_get(h_nn);
	static const char *const evname[] = {"SUBMIT", "START", "COMPLETE", "CANCEL"};

	(void)status;
	if (ev == EMU_EXEC_SUBMIT)
		ks_atomic_add_quiet(&t->inflight, 1);
	else if (ev != EMU_EXEC_START)
		ks_atomic_add_quiet(&t->inflight, -1);
	if (!e)
		return;
	if (ev == EMU_EXEC_SUBMIT) {
		ks_atomic_add_quiet(&e->inflight, 1);
		ks_atomic_add_quiet(&e->submits, 1);
		if (!ks_atomic_peek(&e->h_model))
			torture_atomic_set(&e->h_model, (int64_t)h_model);
	} else if (ev != EMU_EXEC_START) {
		ks_atomic_add_quiet(&e->inflight, -1);
		ks_atomic_add_quiet(&e->completes, 1);
	}
	if (ks_atomic_peek(&e->unloaded) && ev != EMU_EXEC_COMPLETE && ev != EMU_EXEC_CANCEL)
		torture_fail(
		    t, "%s event for model %u (h_model %" PRIu64 ") after its unload returned",
		    evname[ev], h_nn, h_model);
}

void torture_observe(torture_t *t)
{
	emu_set_exec_observer(torture_observer, t);
}

void torture_nn_unloaded(torture_t *t, uint32_t id)
{
	torture_nn_t *e = torture_nn_get(id);
	int64_t h_model, left;

	ks_atomic_add_quiet(&t->drains, 1);
	if (!e)
		return;
	h_model = ks_atomic_peek(&e->h_model);
	left = ks_atomic_peek(&e->inflight);
	if (left != 0)
		torture_fail(t,
		             "unload of model %u returned with %" PRId64
		             " execution(s) still in flight (observer: %" PRId64
		             " submitted, %" PRId64 " completed)",
		             id, left, ks_atomic_peek(&e->submits), ks_atomic_peek(&e->completes));
	if (h_model && kbl_model_inflight((H_MODEL)h_model) != 0)
		torture_fail(t, "unload of model %u returned with kbl_model_inflight = %" PRId64,
		             id, kbl_model_inflight((H_MODEL)h_model));
	torture_atomic_set(&e->unloaded, ks_atomic_add_quiet(&torture_unload_clock, 1) + 1);
}

int64_t torture_unload_clock_now(void)
{
	return ks_atomic_peek(&torture_unload_clock);
}

void torture_check_accounting_zero(torture_t *t, const char *when)
{
	emu_accounting_t a;

	emu_get_accounting(&a);
	if (a.device_bytes || a.device_allocs || a.host_bytes || a.host_allocs || a.objects ||
	    a.staged_models || a.inflight_execs || a.async_marks)
		torture_fail(t,
		             "accounting not zero %s: device_bytes=%" PRId64
		             " device_allocs=%" PRId64 " host_bytes=%" PRId64
		             " host_allocs=%" PRId64 " objects=%" PRId64 " staged_models=%" PRId64
		             " inflight_execs=%" PRId64 " async_marks=%" PRId64,
		             when, a.device_bytes, a.device_allocs, a.host_bytes, a.host_allocs,
		             a.objects, a.staged_models, a.inflight_execs, a.async_marks);
}
