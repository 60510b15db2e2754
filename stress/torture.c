/*
 * torture.c - the common module of the stress binaries (see torture.h): knobs
 * and argv, the run (free-running or under the controlled scheduler),
 * counters and histograms, the summary, the repro file, and the helpers the
 * roles share (models, tensors, the exec observer's per-handle table).
 * The watchdog lives in watchdog.c.
 */
#include "torture.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nrt/nrt_experimental.h>

#include "base/kalloc.h"
#include "base/kfault.h"
#include "base/klog.h"
#include "kmgr/kmgr.h"
#include "model/kmodel.h"
#include "sched/kctl.h"
#include "torture_int.h"

static const NRT_STATUS torture_stat_codes[TORTURE_NSTAT - 1] = {
    NRT_SUCCESS,
    NRT_FAILURE,
    NRT_INVALID,
    NRT_INVALID_HANDLE,
    NRT_RESOURCE,
    NRT_TIMEOUT,
    NRT_HW_ERROR,
    NRT_QUEUE_FULL,
    NRT_LOAD_NOT_ENOUGH_NC,
    NRT_UNSUPPORTED_NEFF_VERSION,
    NRT_FAIL_HOST_MEM_ALLOC,
    NRT_UNINITIALIZED,
    NRT_CLOSED,
    NRT_QUEUE_EMPTY,
    NRT_EXEC_UNIT_UNRECOVERABLE,
    NRT_EXEC_BAD_INPUT,
    NRT_EXEC_COMPLETED_WITH_NUM_ERR,
    NRT_EXEC_COMPLETED_WITH_ERR,
    NRT_EXEC_NC_BUSY,
    NRT_EXEC_OOB,
    NRT_EXEC_HW_ERR_NC_UE,
    NRT_EXEC_SW_NQ_OVERFLOW,
    NRT_EXEC_HW_ERR_COLLECTIVES,
};

/* The one run of this process: the observer and the crash handlers need it. */
torture_t *torture_cur;

/* ---------------------------------------------------------------- stats */

static int torture_stat_index(NRT_STATUS st)
{
	for (int i = 0; i < TORTURE_NSTAT - 1; i++)
		if (torture_stat_codes[i] == st)
			return i;
	return TORTURE_NSTAT - 1;
}

const char *torture_stat_name(int i)
{
	if (i >= TORTURE_NSTAT - 1)
		return "other";
	return nrt_get_status_as_str(torture_stat_codes[i]);
}

bool torture_status_known(NRT_STATUS st)
{
	return torture_stat_index(st) < TORTURE_NSTAT - 1;
}

void torture_count(torture_thread_t *w, NRT_STATUS st)
{
	ks_atomic_add_quiet(&w->stat[torture_stat_index(st)], 1);
}

uint64_t torture_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t torture_rand(torture_thread_t *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t torture_rand_below(torture_thread_t *w, uint64_t n)
{
	return n ? torture_rand(w) % n : 0;
}

/* Log-linear buckets: 8 per power of two, exact below 8 ns. */
static unsigned torture_bucket(uint64_t v)
{
	unsigned e;

	if (v < 8)
		return (unsigned)v;
	e = 63u - (unsigned)__builtin_clzll(v);
	return (e - 2u) * 8u + (unsigned)((v >> (e - 3u)) & 7u);
}

static uint64_t torture_bucket_value(unsigned b)
{
	unsigned e;

	if (b < 8)
		return b;
	e = b / 8u + 2u;
	return (1ull << e) | ((uint64_t)(b % 8u) << (e - 3u));
}

void torture_hist_add(torture_thread_t *w, int h, uint64_t ns)
{
	torture_hist_t *hi = &w->hist[h];

	hi->count++;
	hi->sum += ns;
	if (ns > hi->max)
		hi->max = ns;
	hi->bucket[torture_bucket(ns)]++;
}

static void torture_hist_merge(torture_hist_t *dst, const torture_hist_t *src)
{
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->max > dst->max)
		dst->max = src->max;
	for (size_t i = 0; i < sizeof(dst->bucket) / sizeof(dst->bucket[0]); i++)
		dst->bucket[i] += src->bucket[i];
}

/* The lower bound of the bucket holding the p-th percentile. */
static uint64_t torture_hist_pct(const torture_hist_t *h, double p)
{
	uint64_t want = (uint64_t)((double)h->count * p / 100.0 + 0.5), seen = 0;

	if (!h->count)
		return 0;
	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < sizeof(h->bucket) / sizeof(h->bucket[0]); b++) {
		seen += h->bucket[b];
		if (seen >= want)
			return torture_bucket_value(b) < h->max ? torture_bucket_value(b) : h->max;
	}
	return h->max;
}

/* ------------------------------------------------------------- control */

/* A store without a scheduling point (statistics and checker state only;
 * each such field has one writer at a time). */
void torture_atomic_set(ks_atomic_t *a, int64_t v)
{
	ks_atomic_add_quiet(a, v - ks_atomic_peek(a));
}

bool torture_should_stop(const torture_t *t)
{
	if (ks_atomic_peek(&t->stop))
		return true;
	return t->k.ops && (uint64_t)ks_atomic_peek(&t->total_ops) >= t->k.ops;
}

bool torture_op_done(torture_thread_t *w)
{
	const torture_knobs_t *k = &w->t->k;
	int64_t mine = ks_atomic_add_quiet(&w->ops, 1) + 1;

	ks_atomic_add_quiet(&w->t->total_ops, 1);
	/* Under PCT the highest-priority thread would spend the whole --ops
	 * budget alone; a share per thread makes every role run. */
	if (k->controlled && (uint64_t)mine * k->threads >= k->ops)
		return true;
	return torture_should_stop(w->t);
}

void torture_set_op(torture_thread_t *w, const char *op)
{
	/* A string literal: the watchdog prints it while the thread may be stuck. */
	torture_atomic_set(&w->last_op, (int64_t)(intptr_t)op);
}

void torture_fail(torture_t *t, const char *fmt, ...)
{
	int64_t n = ks_atomic_add_quiet(&t->fails, 1);
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: CHECK FAILED: %s\n", t->ops->name, msg);
	if (n < TORTURE_MAX_FAILS)
		memcpy(t->fail_msg[n], msg, sizeof(msg));
	ks_atomic_add_quiet(&t->stop, 1);
}

bool torture_failed(const torture_t *t)
{
	return ks_atomic_peek(&t->fails) != 0;
}

static void *torture_thread_entry(void *arg)
{
	torture_thread_t *w = arg;
	void *ret;

	torture_thread_register(w);
	ret = w->fn(w);
	ks_atomic_add_quiet(&w->done, 1);
	return ret;
}

int torture_spawn(torture_t *t, const char *role, void *(*fn)(torture_thread_t *), void *priv)
{
	torture_thread_t *w;
	uint32_t same = 0;

	if (t->nthreads >= TORTURE_MAX_THREADS)
		return -1;
	for (uint32_t i = 0; i < t->nthreads; i++)
		same += strcmp(t->th[i].role, role) == 0;
	w = &t->th[t->nthreads];
	memset(w, 0, sizeof(*w));
	w->t = t;
	w->role = role;
	w->idx = t->nthreads;
	w->role_idx = same;
	w->fn = fn;
	w->priv = priv;
	w->rng = t->k.seed * 0x100000001b3ull + w->idx + 1;
	if (ks_thread_create(&w->th, role, torture_thread_entry, w) != 0)
		return -1;
	t->nthreads++;
	ks_atomic_add_quiet(&t->nthreads_pub, 1);
	return 0;
}

int torture_respawn(torture_t *t, uint32_t i)
{
	torture_thread_t *w = &t->th[i];

	torture_atomic_set(&w->done, 0);
	torture_atomic_set(&w->tid, 0);
	return ks_thread_create(&w->th, w->role, torture_thread_entry, w) == 0 ? 0 : -1;
}

void torture_join_all(torture_t *t)
{
	torture_main_progress(t, "join");
	for (uint32_t i = 0; i < t->nthreads; i++)
		ks_thread_join(&t->th[i].th, NULL);
}

void torture_phase(torture_t *t, const char *phase)
{
	torture_main_progress(t, phase);
}

/* ------------------------------------------------------------ models */

NRT_STATUS torture_model_bytes(uint32_t n_in, uint32_t n_out, uint32_t nkbin, uint8_t **bytes,
                               size_t *len)
{
	uint32_t shape[1] = {TORTURE_IO_BYTES};
	char name[32];
	NRT_STATUS st = NRT_SUCCESS;
	uint8_t *k = NULL;
	kmodel_t *m;

	snprintf(name, sizeof(name), "t%u%u%u", n_in, n_out, nkbin);
	m = kmodel_new(name, nkbin, false);
	if (!m)
		return NRT_RESOURCE;
	for (uint32_t i = 0; i < n_in + n_out && st == NRT_SUCCESS; i++) {
		bool in = i < n_in;

		snprintf(name, sizeof(name), "%s%u", in ? "in" : "out", in ? i : i - n_in);
		st = kmodel_add_tensor(m, name,
		                       in ? NRT_TENSOR_USAGE_INPUT : NRT_TENSOR_USAGE_OUTPUT,
		                       NRT_DTYPE_UINT8, 1, shape);
	}
	if (st == NRT_SUCCESS)
		st = kmodel_serialize(m, &k, len);
	kmodel_free(m);
	if (st != NRT_SUCCESS)
		return st;
	/* A plain malloc copy: the bytes must not count as library memory in
	 * the accounting checks. */
	*bytes = malloc(*len);
	if (*bytes)
		memcpy(*bytes, k, *len);
	kfree(k);
	return *bytes ? NRT_SUCCESS : NRT_RESOURCE;
}

NRT_STATUS torture_io_alloc(torture_io_t *io, uint32_t n_in, uint32_t n_out,
                            nrt_tensor_placement_t placement, int nc)
{
	NRT_STATUS st;
	char name[16];

	memset(io, 0, sizeof(*io));
	io->n_in = n_in;
	io->n_out = n_out;
	st = nrt_allocate_tensor_set(&io->in);
	if (st == NRT_SUCCESS)
		st = nrt_allocate_tensor_set(&io->out);
	for (uint32_t i = 0; i < n_in + n_out && st == NRT_SUCCESS; i++) {
		bool in = i < n_in;
		nrt_tensor_t **tp = in ? &io->tin[i] : &io->tout[i - n_in];

		snprintf(name, sizeof(name), "%s%u", in ? "in" : "out", in ? i : i - n_in);
		st = nrt_tensor_allocate(placement, nc, TORTURE_IO_BYTES, name, tp);
		if (st == NRT_SUCCESS)
			st = nrt_add_tensor_to_tensor_set(in ? io->in : io->out, name, *tp);
	}
	if (st != NRT_SUCCESS)
		torture_io_free(io);
	return st;
}

void torture_io_free(torture_io_t *io)
{
	if (io->in)
		nrt_destroy_tensor_set(&io->in);
	if (io->out)
		nrt_destroy_tensor_set(&io->out);
	for (int i = 0; i < 4; i++) {
		if (io->tin[i])
			nrt_tensor_free(&io->tin[i]);
		if (io->tout[i])
			nrt_tensor_free(&io->tout[i]);
	}
}

NRT_STATUS torture_io_fill(torture_io_t *io, uint64_t r)
{
	NRT_STATUS st = NRT_SUCCESS;

	for (uint32_t i = 0; i < io->n_in && st == NRT_SUCCESS; i++) {
		for (uint32_t k = 0; k < TORTURE_IO_BYTES; k++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			io->data[i][k] = (uint8_t)(r >> 56);
		}
		st = nrt_tensor_write(io->tin[i], io->data[i], 0, TORTURE_IO_BYTES);
	}
	return st;
}

int torture_io_verify(torture_io_t *io)
{
	const uint8_t *in[4];
	uint64_t in_size[4];
	uint8_t want[TORTURE_IO_BYTES], got[TORTURE_IO_BYTES];

	for (uint32_t i = 0; i < io->n_in; i++) {
		in[i] = io->data[i];
		in_size[i] = TORTURE_IO_BYTES;
	}
	for (uint32_t j = 0; j < io->n_out; j++) {
		emu_compute_expected(io->n_in, in, in_size, j, want, TORTURE_IO_BYTES);
		if (nrt_tensor_read(io->tout[j], got, 0, TORTURE_IO_BYTES) != NRT_SUCCESS)
			return (int)j + 1;
		if (memcmp(want, got, TORTURE_IO_BYTES) != 0)
			return (int)j + 1;
	}
	return 0;
}

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
static _Atomic uint64_t torture_id_seen[1u << 18];

void torture_nn_check_grows(torture_t *t, uint32_t id)
{
	uint64_t bit;

	/* kmgr_last_nn_id is read after the load returned, so it is at least
	 * id unless the allocator is not monotone. */
	if (id == 0 || id > kmgr_last_nn_id())
		torture_fail(t, "load returned id %u, but kmgr_last_nn_id() is %u", id,
		             kmgr_last_nn_id());
	if (id / 64 >= sizeof(torture_id_seen) / sizeof(torture_id_seen[0]))
		return;
	bit = 1ull << (id % 64);
	if (atomic_fetch_or(&torture_id_seen[id / 64], bit) & bit)
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

/* ------------------------------------------------------------- summary */

/* One rerunnable command line: every parameter of the run. */
int torture_cmdline(const torture_t *t, char *buf, size_t len)
{
	const torture_knobs_t *k = &t->k;
	int n;

	n = snprintf(buf, len,
	             "%s --threads %u --seconds %u --ops %" PRIu64 " --seed %" PRIu64
	             " --models %u --stall-seconds %u --queue-depth %u",
	             t->ops->name, k->threads, k->seconds, k->ops, k->seed, k->models,
	             k->stall_seconds, k->queue_depth);
	if (k->fault[0] && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " --fault %s", k->fault);
	if (k->controlled && n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
		              " --controlled --pct-depth %u --max-steps %" PRIu64, k->pct_depth,
		              k->max_steps);
	return n;
}

typedef struct torture_role_sum {
	const char *role;
	uint32_t threads;
	uint64_t ops, min, max;
	bool starved;
} torture_role_sum_t;

/*
 * Starvation (locktorture's "???"): among the threads of one role, one whose
 * count is below an eighth of the role's busiest thread, or zero while the
 * busiest did at least 8.  An eighth leaves room for 2 cores shared by many
 * threads; a flag, not a failure (PCT starves threads on purpose).
 */
static uint32_t torture_roles(const torture_t *t, torture_role_sum_t *rs)
{
	uint32_t n = 0;

	uint32_t nt = (uint32_t)atomic_load(&t->nthreads_pub.v);

	for (uint32_t i = 0; i < nt; i++) {
		const torture_thread_t *w = &t->th[i];
		uint64_t c = (uint64_t)ks_atomic_peek(&w->ops);
		uint32_t r = 0;

		while (r < n && strcmp(rs[r].role, w->role) != 0)
			r++;
		if (r == n) {
			rs[n++] = (torture_role_sum_t){w->role, 0, 0, UINT64_MAX, 0, false};
		}
		rs[r].threads++;
		rs[r].ops += c;
		rs[r].min = c < rs[r].min ? c : rs[r].min;
		rs[r].max = c > rs[r].max ? c : rs[r].max;
	}
	for (uint32_t r = 0; r < n; r++)
		rs[r].starved = rs[r].threads > 1 && rs[r].max >= 8 && rs[r].min * 8 < rs[r].max;
	return n;
}

static void torture_stats_total(const torture_t *t, uint64_t *stat)
{
	uint32_t nt = (uint32_t)atomic_load(&t->nthreads_pub.v);

	memset(stat, 0, sizeof(uint64_t) * TORTURE_NSTAT);
	for (uint32_t i = 0; i < nt; i++)
		for (int s = 0; s < TORTURE_NSTAT; s++)
			stat[s] += (uint64_t)ks_atomic_peek(&t->th[i].stat[s]);
}

static void torture_print_text(torture_t *t, const torture_hist_t *hist, double secs)
{
	torture_role_sum_t rs[TORTURE_MAX_THREADS];
	uint32_t nr = torture_roles(t, rs);
	uint64_t stat[TORTURE_NSTAT], total = (uint64_t)ks_atomic_peek(&t->total_ops);

	printf("== %s: %.2f s, %" PRIu64 " ops, %.0f ops/s, %" PRId64 " drains\n", t->ops->name,
	       secs, total, secs > 0 ? (double)total / secs : 0.0, ks_atomic_peek(&t->drains));
	for (uint32_t r = 0; r < nr; r++)
		printf("   %-10s x%-2u ops %-10" PRIu64 " min %-8" PRIu64 " max %-8" PRIu64 " %s\n",
		       rs[r].role, rs[r].threads, rs[r].ops, rs[r].min, rs[r].max,
		       rs[r].starved ? "???" : "");
	torture_stats_total(t, stat);
	printf("   status:");
	for (int s = 0; s < TORTURE_NSTAT; s++)
		if (stat[s])
			printf(" %s=%" PRIu64, torture_stat_name(s), stat[s]);
	printf("\n");
	for (int h = 0; h < TORTURE_MAX_HISTS && t->ops->hist_names[h]; h++) {
		const torture_hist_t *hi = &hist[h];

		printf("   latency %-8s n %-9" PRIu64 " p50 %9.1f us  p99 %9.1f us  max %9.1f us\n",
		       t->ops->hist_names[h], hi->count, torture_hist_pct(hi, 50) / 1e3,
		       torture_hist_pct(hi, 99) / 1e3, hi->max / 1e3);
	}
	if (t->ops->report)
		t->ops->report(t, false, stdout);
	for (int64_t i = 0; i < ks_atomic_peek(&t->fails) && i < TORTURE_MAX_FAILS; i++)
		printf("   !!! %s\n", t->fail_msg[i]);
}

static void torture_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void torture_write_json(torture_t *t, const torture_hist_t *hist, double secs, int rc,
                               const char *repro)
{
	torture_role_sum_t rs[TORTURE_MAX_THREADS];
	uint32_t nr = torture_roles(t, rs);
	uint64_t stat[TORTURE_NSTAT], total = (uint64_t)ks_atomic_peek(&t->total_ops);
	char cmd[1024];
	FILE *f;
	bool first = true;

	if (!t->k.json[0])
		return;
	f = fopen(t->k.json, "w");
	if (!f) {
		fprintf(stderr, "%s: cannot write %s: %s\n", t->ops->name, t->k.json,
		        strerror(errno));
		return;
	}
	torture_cmdline(t, cmd, sizeof(cmd));
	fprintf(f, "{\n  \"binary\": \"%s\",\n  \"result\": \"%s\",\n  \"exit\": %d,\n",
	        t->ops->name, rc == 0 ? "SUCCESS" : "FAILURE", rc);
	fprintf(f, "  \"command\": ");
	torture_json_str(f, cmd);
	fprintf(f,
	        ",\n  \"params\": {\"threads\": %u, \"seconds\": %u, \"ops\": %" PRIu64
	        ", \"seed\": %" PRIu64 ", \"models\": %u, \"stall_seconds\": %u, "
	        "\"queue_depth\": %u, \"controlled\": %s, \"fault\": ",
	        t->k.threads, t->k.seconds, t->k.ops, t->k.seed, t->k.models, t->k.stall_seconds,
	        t->k.queue_depth, t->k.controlled ? "true" : "false");
	torture_json_str(f, t->k.fault);
	fprintf(f, "},\n  \"elapsed_s\": %.3f,\n  \"ops\": %" PRIu64 ",\n  \"ops_per_s\": %.1f,\n",
	        secs, total, secs > 0 ? (double)total / secs : 0.0);
	fprintf(f, "  \"drains\": %" PRId64 ",\n  \"stall\": %s,\n  \"errors\": {",
	        ks_atomic_peek(&t->drains), t->stall ? "true" : "false");
	torture_stats_total(t, stat);
	for (int s = 1; s < TORTURE_NSTAT; s++) {
		if (!stat[s])
			continue;
		fprintf(f, "%s\"%s\": %" PRIu64, first ? "" : ", ", torture_stat_name(s), stat[s]);
		first = false;
	}
	fprintf(f, "},\n  \"roles\": [");
	for (uint32_t r = 0; r < nr; r++)
		fprintf(f,
		        "%s\n    {\"role\": \"%s\", \"threads\": %u, \"ops\": %" PRIu64
		        ", \"min\": %" PRIu64 ", \"max\": %" PRIu64 ", \"starved\": %s}",
		        r ? "," : "", rs[r].role, rs[r].threads, rs[r].ops, rs[r].min, rs[r].max,
		        rs[r].starved ? "true" : "false");
	fprintf(f, "\n  ],\n  \"latency_ns\": {");
	for (int h = 0; hist && h < TORTURE_MAX_HISTS && t->ops->hist_names[h]; h++)
		fprintf(f,
		        "%s\n    \"%s\": {\"count\": %" PRIu64 ", \"p50\": %" PRIu64
		        ", \"p99\": %" PRIu64 ", \"max\": %" PRIu64 "}",
		        h ? "," : "", t->ops->hist_names[h], hist[h].count,
		        torture_hist_pct(&hist[h], 50), torture_hist_pct(&hist[h], 99),
		        hist[h].max);
	fprintf(f, "\n  },\n");
	if (t->ops->report && hist)
		t->ops->report(t, true, f);
	fprintf(f, "  \"failures\": [");
	for (int64_t i = 0; i < ks_atomic_peek(&t->fails) && i < TORTURE_MAX_FAILS; i++) {
		fprintf(f, "%s", i ? ", " : "");
		torture_json_str(f, t->fail_msg[i]);
	}
	fprintf(f, "],\n  \"repro\": ");
	torture_json_str(f, repro ? repro : "");
	fprintf(f, "\n}\n");
	fclose(f);
}

/* The summary of a run that ended (hist NULL: the stall path, where the
 * workers still run and only atomics may be read). */
void torture_summary(torture_t *t, const torture_hist_t *hist, int rc, const char *repro)
{
	double secs = (double)(torture_now_ns() - t->start_ns) / 1e9;
	char cmd[1024];

	if (hist && !t->k.quiet)
		torture_print_text(t, hist, secs);
	torture_write_json(t, hist, secs, rc, repro);
	torture_cmdline(t, cmd, sizeof(cmd));
	if (repro && repro[0])
		printf("%s: reproducer saved to %s (rerun: %s --replay %s)\n", t->ops->name, repro,
		       t->ops->name, repro);
	printf("%s %s\n", rc == 0 ? "SUCCESS" : "FAILURE", cmd);
	fflush(stdout);
}

/* ----------------------------------------------------------------- log */

static ks_atomic_t torture_log_quiet;

/*
 * The library logs every stale-handle lookup and every unload that finds
 * work in flight; a stress run makes thousands of both on purpose.  Those
 * two are counted, everything else (assertions, drain warnings, the
 * emulator's own aborts) still reaches stderr.  KMGR_LOG_LEVEL set in the
 * environment keeps the library's own behaviour.
 */
static void torture_log_sink(void *ctx, klog_level_t level, const char *line)
{
	static const char *const expected[] = {
	    "Failed to find model",
	    "Execution requests on model",
	};

	(void)ctx;
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		if (strstr(line, expected[i])) {
			ks_atomic_add_quiet(&torture_log_quiet, 1);
			return;
		}
	}
	fprintf(stderr, "kmgr %s: %s\n",
	        level == KLOG_ERROR  ? "error"
	        : level == KLOG_WARN ? "warn"
	                             : "info",
	        line);
}

static void torture_log_setup(void)
{
	if (!getenv("KMGR_LOG_LEVEL"))
		klog_set_sink(torture_log_sink, NULL);
}

/* ----------------------------------------------------------------- run */

static int torture_setup_fault(torture_t *t)
{
	kfault_plan_t plan;
	char err[200];

	if (!t->k.fault[0]) {
		const char *env = getenv("KMGR_FAULT");

		if (!env || !*env)
			return 0;
		snprintf(t->k.fault, sizeof(t->k.fault), "%s", env);
	}
	if (kfault_plan_parse(t->k.fault, &plan, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: bad fault plan '%s': %s\n", t->ops->name, t->k.fault, err);
		return -1;
	}
	kfault_set_plan(&plan);
	return 0;
}

/* Free-running: the main thread (not a logical thread) paces the run. */
void torture_wait_free(torture_t *t)
{
	uint64_t end = t->start_ns + (uint64_t)t->k.seconds * 1000000000ull;

	while (!torture_should_stop(t)) {
		struct timespec ts = {0, 20 * 1000 * 1000};

		torture_main_progress(t, "running");
		if (t->k.seconds && torture_now_ns() >= end)
			break;
		nanosleep(&ts, NULL);
	}
	ks_atomic_add_quiet(&t->stop, 1);
}

/* The run proper: nrt_init .. nrt_close, checks; inside ks_ctl_begin/end
 * under --controlled. */
static void torture_body(torture_t *t)
{
	char depth[16];
	NRT_STATUS st;

	if (t->ops->run) {
		t->ops->run(t);
		return;
	}
	snprintf(depth, sizeof(depth), "%u", t->ops->async_mode ? t->k.queue_depth : 0);
	setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", depth, 1);
	torture_main_progress(t, "nrt_init");
	st = nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "");
	if (st != NRT_SUCCESS) {
		torture_fail(t, "nrt_init: %s", nrt_get_status_as_str(st));
		return;
	}
	torture_observe(t);
	torture_main_progress(t, "setup");
	if (t->ops->setup(t) != 0)
		ks_atomic_add_quiet(&t->stop, 1);
	if (!t->k.controlled)
		torture_wait_free(t);
	torture_join_all(t);
	torture_main_progress(t, "teardown");
	if (t->ops->teardown)
		t->ops->teardown(t);
	torture_main_progress(t, "nrt_close");
	nrt_close();
	emu_set_exec_observer(NULL, NULL);
	torture_check_accounting_zero(t, "after nrt_close");
	if (kalloc_live_count() != 0)
		torture_fail(t, "kalloc_live_count() = %" PRId64 " after nrt_close",
		             kalloc_live_count());
}

static void torture_ctl_failure(void *ctx, ks_failure_t kind, const char *report)
{
	torture_t *t = ctx;

	fprintf(stderr, "%s: the controlled scheduler reports a %s:\n%s\n", t->ops->name,
	        kind == KS_DEADLOCK ? "deadlock"
	        : kind == KS_HANG   ? "hang"
	                            : "divergence",
	        report);
	if (kind == KS_DIVERGENCE)
		torture_fail(t, "replay diverged from the recorded trace");
	else
		torture_fail(t, "controlled run %s (see the report above)",
		             kind == KS_DEADLOCK ? "deadlocked" : "hung");
	t->stall = 1;
	torture_finish_stalled(t, "controlled scheduler failure");
}

/* Returns the decision trace as text (malloc'd; NULL when there is none). */
static char *torture_run_controlled(torture_t *t)
{
	char *text;
	int n;
	ks_ctl_config_t cfg;
	ks_ctl_result_t res;

	ks_ctl_config_init(&cfg);
	cfg.strategy = t->k.trace ? KS_STRAT_REPLAY : KS_STRAT_PCT;
	cfg.seed = t->k.seed;
	cfg.pct_depth = t->k.pct_depth;
	cfg.pct_k_hint = t->k.ops * 64;
	cfg.trace = t->k.trace;
	cfg.ntrace = t->k.ntrace;
	cfg.max_steps = t->k.max_steps;
	cfg.on_failure = torture_ctl_failure;
	cfg.failure_ctx = t;
	if (ks_ctl_begin(&cfg) != 0) {
		torture_fail(t, "ks_ctl_begin failed");
		return NULL;
	}
	torture_body(t);
	ks_ctl_end(&res);
	if (res.failure != KS_OK)
		torture_fail(t, "controlled run ended with failure %d", (int)res.failure);
	n = ks_ctl_trace_format(res.trace, res.ntrace, NULL, 0);
	text = malloc(n > 0 ? (size_t)n + 1 : 1);
	if (text)
		ks_ctl_trace_format(res.trace, res.ntrace, text, n > 0 ? (size_t)n + 1 : 1);
	if (!t->k.quiet)
		printf("   controlled: %" PRIu64 " steps, %" PRIu64 " switches, %" PRIu64
		       " preemptions, %u threads, trace %zu decisions\n",
		       res.steps, res.switches, res.preemptions, res.threads, res.ntrace);
	return text;
}

int torture_main(const torture_ops_t *ops, int argc, char **argv)
{
	static torture_t run;
	static torture_hist_t hist[TORTURE_MAX_HISTS];
	char repro[1024] = "", *trace_text = NULL;
	int rc;

	torture_cur = &run;
	run.ops = ops;
	run.argc = argc;
	run.argv = argv;
	rc = torture_parse_args(&run, argc, argv);
	if (rc >= 0)
		return rc;
	if (torture_setup_fault(&run) != 0)
		return TORTURE_EXIT_USAGE;
	torture_crash_handlers(&run);
	torture_log_setup();
	run.start_ns = torture_now_ns();
	if (torture_watchdog_start(&run) != 0)
		return TORTURE_EXIT_USAGE;
	if (run.k.controlled)
		trace_text = torture_run_controlled(&run);
	else
		torture_body(&run);
	torture_watchdog_stop(&run);
	kfault_clear();
	for (uint32_t i = 0; i < run.nthreads; i++)
		for (int h = 0; h < TORTURE_MAX_HISTS; h++)
			torture_hist_merge(&hist[h], &run.th[i].hist[h]);
	rc = torture_failed(&run) ? TORTURE_EXIT_CHECK : TORTURE_EXIT_OK;
	if (rc)
		torture_write_repro(&run, trace_text, "check failed", repro, sizeof(repro));
	torture_summary(&run, hist, rc, repro);
	free(run.k.trace);
	free(trace_text);
	return rc;
}
