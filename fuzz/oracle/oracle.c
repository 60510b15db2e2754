/*
 * oracle.c - the invariants and the reference-model check of oracle.h.
 * Bookkeeping uses quiet atomics (no scheduling point), so the oracle
 * never changes the interleavings a controlled run explores.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/kalloc.h"
#include "emu/emu.h"
#include "kmgr/kmgr.h"
#include "oracle/oracle.h"
#include "sched/ksched.h"

#define MAX_UNLOADED 64

typedef struct hrec {
	unsigned op, kind;
	uint32_t id;
	uint64_t t0, t1;
	NRT_STATUS status;
} hrec_t;

static struct {
	const kprog_t *prog;
	ks_atomic_t clock;
	ks_atomic_t nhist;
	hrec_t hist[ORACLE_MAX_HIST];
	ks_atomic_t nunloaded;
	ks_atomic_t unloaded[MAX_UNLOADED];
	int64_t base_host_allocs, base_host_bytes;
	ks_atomic_t max_id; /* process-wide: ids are never reused */
	uint32_t base_id;   /* the largest id issued before this program */
	ks_atomic_t nids;
	ks_atomic_t ids[KPROG_MAX_OPS];
} o;

static char ctx_text[1 << 16];

void oracle_set_context(const kprog_t *p)
{
	o.prog = p;
}

void oracle_fail(const char *invariant, const char *fmt, ...)
{
	va_list ap;

	/* the first line is the crash signature: keep it stable */
	fprintf(stderr, "ORACLE: %s: ", invariant);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (o.prog) {
		kprog_print(o.prog, ctx_text, sizeof(ctx_text));
		fprintf(stderr, "---- program ----\n%s-----------------\n", ctx_text);
	}
	fflush(stderr);
	abort();
}

void oracle_begin(const kprog_t *p)
{
	o.prog = p;
	atomic_store(&o.clock.v, 0);
	atomic_store(&o.nhist.v, 0);
	atomic_store(&o.nunloaded.v, 0);
	for (int i = 0; i < MAX_UNLOADED; i++)
		atomic_store(&o.unloaded[i].v, 0);
	o.base_id = (uint32_t)ks_atomic_peek(&o.max_id);
	atomic_store(&o.nids.v, 0);
	o.base_host_allocs = kalloc_live_count();
	o.base_host_bytes = kalloc_live_bytes();
}

uint64_t oracle_tick(void)
{
	return (uint64_t)ks_atomic_add_quiet(&o.clock, 1) + 1;
}

void oracle_record(unsigned op_index, unsigned kind, uint32_t id, uint64_t t0, uint64_t t1,
                   NRT_STATUS status)
{
	int64_t i = ks_atomic_add_quiet(&o.nhist, 1);

	if (i >= ORACLE_MAX_HIST)
		return;
	o.hist[i] = (hrec_t){op_index, kind, id, t0, t1, status};
}

static bool was_unloaded(uint32_t id)
{
	int64_t n = ks_atomic_peek(&o.nunloaded);

	for (int64_t i = 0; i < n && i < MAX_UNLOADED; i++)
		if ((uint32_t)ks_atomic_peek(&o.unloaded[i]) == id)
			return true;
	return false;
}

void oracle_note_unloaded(uint32_t id, uint64_t t)
{
	int64_t i = ks_atomic_add_quiet(&o.nunloaded, 1);

	(void)t;
	if (i < MAX_UNLOADED)
		atomic_store(&o.unloaded[i].v, (int64_t)id);
}

/* Concurrent loads may return out of id order, so: above every id of
 * earlier programs, and distinct from every id of this one. */
void oracle_note_loaded(uint32_t id)
{
	int64_t n = ks_atomic_add_quiet(&o.nids, 1);

	if (id <= o.base_id)
		oracle_fail("id-reused", "load returned id %u, ids up to %u were issued before", id,
		            o.base_id);
	for (int64_t i = 0; i < n && i < KPROG_MAX_OPS; i++)
		if ((uint32_t)ks_atomic_peek(&o.ids[i]) == id)
			oracle_fail("id-reused", "load returned id %u twice", id);
	if (n < KPROG_MAX_OPS)
		atomic_store(&o.ids[n].v, id);
	for (int64_t cur = ks_atomic_peek(&o.max_id); cur < (int64_t)id;)
		if (atomic_compare_exchange_weak(&o.max_id.v, &cur, (int64_t)id))
			break;
}

static const char *ev_name(emu_exec_event_t ev)
{
	return ev == EMU_EXEC_SUBMIT ? "SUBMIT" : ev == EMU_EXEC_START ? "START" : "other";
}

/* Runs on device threads: a submit or start of a model whose unload has
 * already returned is the use-after-unload the ref protocol forbids. */
static void observer(void *ctx, emu_exec_event_t ev, uint64_t h_model, uint32_t h_nn,
                     NRT_STATUS status)
{
	(void)ctx;
	(void)status;
	if ((ev == EMU_EXEC_SUBMIT || ev == EMU_EXEC_START) && was_unloaded(h_nn))
		oracle_fail("exec-after-unload",
		            "%s of model %u (h_model %llu) after its unload "
		            "returned",
		            ev_name(ev), h_nn, (unsigned long long)h_model);
}

void oracle_attach(void)
{
	emu_set_exec_observer(observer, NULL);
}

void oracle_detach(void)
{
	emu_set_exec_observer(NULL, NULL);
}

void oracle_check_status(unsigned op_index, const char *what, NRT_STATUS got,
                         const oracle_expect_t *e)
{
	if (!e->known || got == e->want || got == e->alt)
		return;
	oracle_fail("status-mismatch", "op %u %s returned %d, the reference model says %d",
	            op_index, what, (int)got, (int)e->want);
}

static bool is_unload(const hrec_t *h)
{
	return h->kind == KOP_UNLOAD || h->kind == KOP_UNLOAD_ALL;
}

/* The strong unload of id (an UNLOAD that succeeded), else the weak one
 * (UNLOAD_ALL took it), else NULL; two strong ones are a double unload. */
static const hrec_t *find_unload(uint32_t id, size_t n)
{
	const hrec_t *strong = NULL, *weak = NULL;

	for (size_t i = 0; i < n; i++) {
		const hrec_t *h = &o.hist[i];

		if (h->id != id || !is_unload(h) || h->status != NRT_SUCCESS)
			continue;
		if (h->kind == KOP_UNLOAD_ALL) {
			weak = h;
			continue;
		}
		if (strong)
			oracle_fail("double-unload", "model %u unloaded by op %u and op %u", id,
			            strong->op, h->op);
		strong = h;
	}
	return strong ? strong : weak;
}

static bool loaded_here(uint32_t id, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (o.hist[i].id == id && o.hist[i].kind == KOP_LOAD &&
		    o.hist[i].status == NRT_SUCCESS)
			return true;
	return false;
}

/* An UNLOAD_ALL is recorded once with id 0 as well: it may take models
 * loaded while it ran, which the runner's before/after probes can miss. */
static bool wildcard_unload_before(uint64_t t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (o.hist[i].id == 0 && o.hist[i].kind == KOP_UNLOAD_ALL && o.hist[i].t0 < t)
			return true;
	return false;
}

/* Linearizability is local: check each model on its own.  A model's ops
 * are reads except its one unload, so an order exists iff every op that
 * saw the model (SUCCESS) started before the unload ended, and every op
 * that did not (INVALID_HANDLE) ended after the unload started. */
static void check_one(const hrec_t *h, const hrec_t *u, size_t n)
{
	if (h->kind == KOP_LOAD || h == u || h->kind == KOP_UNLOAD_ALL)
		return;
	if (!loaded_here(h->id, n))
		return;
	if (h->status == NRT_SUCCESS && u && h->t0 > u->t1)
		oracle_fail(h->kind == KOP_EXEC ? "exec-after-unload" : "not-linearizable",
		            "op %u (%s) on model %u succeeded but started after its unload (op "
		            "%u) returned",
		            h->op, kprog_kind(h->kind)->name, h->id, u->op);
	if (h->status == NRT_INVALID_HANDLE && (!u || h->t1 < u->t0) &&
	    !wildcard_unload_before(h->t1, n))
		oracle_fail("not-linearizable",
		            "op %u (%s) on model %u answered INVALID_HANDLE while it was loaded",
		            h->op, kprog_kind(h->kind)->name, h->id);
}

void oracle_check_history(void)
{
	size_t n = (size_t)ks_atomic_peek(&o.nhist);

	if (n > ORACLE_MAX_HIST)
		n = ORACLE_MAX_HIST;
	for (size_t i = 0; i < n; i++) {
		if (!o.hist[i].id)
			continue;
		check_one(&o.hist[i], find_unload(o.hist[i].id, n), n);
	}
}

void oracle_check_refcounts(bool faults_possible)
{
	H_NN *ids = NULL;
	uint32_t count = 0;

	if (kmgr_get_nns(&ids, &count) != NRT_SUCCESS) {
		if (faults_possible)
			return;
		oracle_fail("refcount", "kmgr_get_nns failed at quiescence");
	}
	for (uint32_t i = 0; i < count; i++) {
		dlr_model *mod = db_get_nn_ref_count(ids[i]);
		int64_t ref;

		if (!mod)
			oracle_fail("refcount", "model %u listed but not found", ids[i].id);
		ref = dlr_model_peek_ref_count(mod);
		nn_ref_decrement(mod);
		if (ref != 1)
			oracle_fail("refcount", "model %u has %lld references at quiescence",
			            ids[i].id, (long long)ref - 1);
	}
	kfree(ids);
}

void oracle_check_closed(void)
{
	emu_accounting_t a;

	emu_get_accounting(&a);
	if (a.device_bytes || a.device_allocs || a.objects || a.staged_models || a.inflight_execs ||
	    a.async_marks)
		oracle_fail("leak-after-close",
		            "device bytes %lld allocs %lld objects %lld staged %lld inflight %lld "
		            "async_marks %lld",
		            (long long)a.device_bytes, (long long)a.device_allocs,
		            (long long)a.objects, (long long)a.staged_models,
		            (long long)a.inflight_execs, (long long)a.async_marks);
	if (a.host_allocs != o.base_host_allocs || a.host_bytes != o.base_host_bytes)
		oracle_fail("leak-after-close",
		            "host allocations %lld (%lld bytes), %lld (%lld) "
		            "before the run",
		            (long long)a.host_allocs, (long long)a.host_bytes,
		            (long long)o.base_host_allocs, (long long)o.base_host_bytes);
}
