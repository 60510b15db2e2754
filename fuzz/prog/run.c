/*
 * run.c - the runner: executes a program on a fresh runtime.  nrt_init
 * with the program's config and fault plan, one logical thread per program
 * thread (thread 0 is the caller) under the controlled scheduler or
 * free-running, then quiescence (every execution completed), the oracle's
 * end checks, every tensor freed, nrt_close and the accounting check.
 *
 * Model operations go to the facade by id (kmgr_*), so that threads can
 * race an unload against an execution without the harness itself using a
 * freed nrt_model_t; tensors and the explicit-async polls go through the
 * public API.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nrt/nrt.h>
#include <nrt/nrt_async.h>

#include "base/kalloc.h"
#include "base/kattr.h"
#include "base/kfault.h"
#include "base/klog.h"
#include "emu/emu.h"
#include "kmgr/kmgr.h"
#include "model/kmodel.h"
#include "oracle/oracle.h"
#include "prog.h"
#include "sched/kctl.h"

#define MAX_IO            16
#define MAX_TENSOR_BYTES  65536
#define MAX_PENDING       160
#define MAX_INLINE_MODELS 8
#define MAX_SEQS          8
#define MAX_JOBS          1024
#define BOGUS_SEQ         ((nrta_seq_t)0x7fff << NRTA_SEQ_XU_SHIFT | 0x123)

/* A model's inputs then outputs, each in model order. */
typedef struct mio {
	bool parsed;
	bool ok; /* small enough for the runner to execute */
	uint32_t nkbin, n_in, n_out;
	char name[MAX_IO][NRT_TENSOR_NAME_MAX];
	uint64_t size[MAX_IO];
} mio_t;

typedef struct iob {
	const mio_t *io;
	uint32_t seed;
	nrt_tensor_t *t[MAX_IO];
	void *buf[MAX_IO];     /* attached buffers of VIRT tensors */
	uint8_t *data[MAX_IO]; /* what each input holds */
	nrt_tensor_set_t *in, *out;
} iob_t;

typedef struct pend {
	bool used, sched;
	unsigned op;
	uint64_t job_first, job_last;
	nrta_seq_t seq;
	NRT_STATUS ret; /* written by the device at completion */
	iob_t b;
} pend_t;

typedef struct slot {
	bool used;
	uint32_t id, start_nc, stale;
	const mio_t *io;
} slot_t;

typedef struct tslot {
	nrt_tensor_t *t;
	void *buf;
} tslot_t;

static struct {
	const kprog_t *p;
	const kprog_run_opts_t *o;
	bool reference;  /* statuses predicted exactly */
	bool faults;     /* a fault may fire: error statuses are not findings */
	ks_mutex_t lock; /* slots and pend reservation */
	slot_t slot[KPROG_SLOTS];
	pend_t pend[MAX_PENDING];
	tslot_t ts[KPROG_MAX_THREADS][KPROG_TSLOTS];
	nrta_seq_t seqs[KPROG_MAX_THREADS][MAX_SEQS];
	unsigned nseq[KPROG_MAX_THREADS];
	const mio_t *op_io[KPROG_MAX_OPS];
	unsigned pend_hw; /* pend[] entries ever used this run */
	ks_atomic_t ops_run, ops_ok, checked, next_job;
	ks_atomic_t job_hw; /* the highest job id a callback reported */
	ks_atomic_t job_done[MAX_JOBS], job_ok[MAX_JOBS];
} R = {.lock = KS_MUTEX_INITIALIZER};

static mio_t tmpl_io[KPROG_NTMPL];
static mio_t inline_io[MAX_INLINE_MODELS];
static uint8_t trace_copy[1 << 16];
static size_t trace_len;

void kprog_run_opts_init(kprog_run_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = KPROG_CONTROLLED;
	o->reference = true;
}

/* ---- model descriptions ------------------------------------------------ */

static void mio_from_bytes(mio_t *io, const uint8_t *bytes, size_t len)
{
	kmodel_t *m = NULL;
	uint32_t n = 0;

	memset(io, 0, sizeof(*io));
	if (kmodel_parse(bytes, len, &m) != NRT_SUCCESS)
		return;
	io->parsed = true;
	io->nkbin = m->nkbin;
	io->n_in = kmodel_input_count(m);
	io->n_out = kmodel_output_count(m);
	io->ok = io->n_in + io->n_out <= MAX_IO;
	for (int pass = 0; pass < 2 && io->ok; pass++)
		for (uint32_t i = 0; i < m->n_tensors; i++) {
			const kmodel_tensor_t *t = &m->tensors[i];

			if ((t->usage == NRT_TENSOR_USAGE_INPUT) != (pass == 0))
				continue;
			memcpy(io->name[n], t->name, NRT_TENSOR_NAME_MAX);
			io->size[n] = t->size;
			if (t->size == 0 || t->size > MAX_TENSOR_BYTES)
				io->ok = false;
			n++;
		}
	kmodel_free(m);
}

/* Before any plan is installed: parsing allocates through kalloc. */
static void prepare_models(const kprog_t *p)
{
	static bool tmpl_done;
	unsigned ninline = 0;

	if (!tmpl_done) {
		for (unsigned i = 0; i < KPROG_NTMPL; i++) {
			size_t len;
			const uint8_t *b = kprog_template(i, &len);

			mio_from_bytes(&tmpl_io[i], b, len);
		}
		tmpl_done = true;
	}
	for (unsigned i = 0; i < p->nops; i++) {
		const kprog_op_t *op = &p->ops[i];

		R.op_io[i] = NULL;
		if (op->kind != KOP_LOAD)
			continue;
		if (op->a[1] != KPROG_TMPL_INLINE) {
			R.op_io[i] = &tmpl_io[op->a[1]];
		} else if (ninline < MAX_INLINE_MODELS) {
			mio_from_bytes(&inline_io[ninline], p->blob + op->blob_off, op->blob_len);
			R.op_io[i] = &inline_io[ninline++];
		}
	}
}

/* ---- tensors of one execution ----------------------------------------- */

/* Byte loops over tensor data carry no coverage counters (KATTR_NO_COVERAGE):
 * a comparison callback per byte was the largest single cost of checking an
 * execution. */
KATTR_NO_COVERAGE static void fill_pattern(uint8_t *p, uint64_t n, uint8_t first, uint8_t step)
{
	for (uint64_t k = 0; k < n; k++)
		p[k] = (uint8_t)(first + k * step);
}

/* The index of the first byte where a and b differ, or n. */
KATTR_NO_COVERAGE static uint64_t first_difference(const uint8_t *a, const uint8_t *b, uint64_t n)
{
	uint64_t k = 0;

	while (k < n && a[k] == b[k])
		k++;
	return k;
}

static void iob_free(iob_t *b)
{
	if (b->in)
		nrt_destroy_tensor_set(&b->in);
	if (b->out)
		nrt_destroy_tensor_set(&b->out);
	for (unsigned i = 0; i < MAX_IO; i++) {
		if (b->t[i])
			nrt_tensor_free(&b->t[i]);
		free(b->buf[i]);
		free(b->data[i]);
	}
	memset(b, 0, sizeof(*b));
}

static NRT_STATUS make_tensor(iob_t *b, unsigned i, int place, int nc)
{
	uint64_t size = b->io->size[i];
	const char *name = b->io->name[i];
	NRT_STATUS rc;

	if (place == KPROG_PLACE_DEV || place == KPROG_PLACE_HOST)
		return nrt_tensor_allocate(place == KPROG_PLACE_DEV ? NRT_TENSOR_PLACEMENT_DEVICE
		                                                    : NRT_TENSOR_PLACEMENT_HOST,
		                           nc, size, name, &b->t[i]);
	rc = nrt_tensor_allocate_empty(name, &b->t[i]);
	if (rc)
		return rc;
	b->buf[i] = calloc(1, size);
	if (!b->buf[i])
		abort();
	return nrt_tensor_attach_buffer(b->t[i], b->buf[i], size);
}

static NRT_STATUS fill_input(iob_t *b, unsigned i)
{
	uint64_t size = b->io->size[i];

	b->data[i] = malloc(size);
	if (!b->data[i])
		abort();
	fill_pattern(b->data[i], size, (uint8_t)(b->seed * 13u + i * 31u), 7);
	return nrt_tensor_write(b->t[i], b->data[i], 0, size);
}

/* One side (inputs or outputs); MISSING leaves out its first tensor, the
 * bind error edge. */
static NRT_STATUS build_side(iob_t *b, bool input, int place, int nc)
{
	uint32_t from = input ? 0 : b->io->n_in;
	uint32_t n = input ? b->io->n_in : b->io->n_out;
	nrt_tensor_set_t *set = input ? b->in : b->out;
	NRT_STATUS rc = NRT_SUCCESS;

	for (uint32_t j = 0; j < n && rc == NRT_SUCCESS; j++) {
		unsigned i = from + j;

		if (place == KPROG_PLACE_MISSING && j == 0)
			continue;
		rc = make_tensor(b, i, place == KPROG_PLACE_MISSING ? KPROG_PLACE_DEV : place, nc);
		if (rc == NRT_SUCCESS && input)
			rc = fill_input(b, i);
		if (rc == NRT_SUCCESS)
			rc = nrt_add_tensor_to_tensor_set(set, b->io->name[i], b->t[i]);
	}
	return rc;
}

static NRT_STATUS iob_build(iob_t *b, const mio_t *io, uint32_t seed, int in_place, int out_place,
                            int nc)
{
	NRT_STATUS rc;

	memset(b, 0, sizeof(*b));
	b->io = io;
	b->seed = seed;
	rc = nrt_allocate_tensor_set(&b->in);
	if (rc == NRT_SUCCESS)
		rc = nrt_allocate_tensor_set(&b->out);
	if (rc == NRT_SUCCESS)
		rc = build_side(b, true, in_place, nc);
	if (rc == NRT_SUCCESS)
		rc = build_side(b, false, out_place, nc);
	if (rc)
		iob_free(b);
	return rc;
}

/* The bytes of output i against the formula.  Template outputs fit the
 * stack buffers; only an inline model's large output takes the heap (two
 * 64 KiB arrays on every call made ASan poison and unpoison 128 KiB of
 * stack shadow per execution checked). */
static void verify_output(iob_t *b, unsigned op, unsigned i, const uint8_t *const *in,
                          const uint64_t *in_size)
{
	const mio_t *io = b->io;
	uint64_t size = io->size[i];
	uint8_t got_s[256], want_s[256];
	uint8_t *got = got_s, *want = want_s;
	uint64_t k;

	if (size > sizeof(got_s)) {
		got = malloc(size);
		want = malloc(size);
		if (!got || !want)
			abort();
	}
	if (nrt_tensor_read(b->t[i], got, 0, size) != NRT_SUCCESS)
		oracle_fail("exec-output", "op %u: output %s unreadable", op, io->name[i]);
	emu_compute_expected(io->n_in, in, in_size, i - io->n_in, want, size);
	k = first_difference(got, want, size);
	if (k < size)
		oracle_fail("exec-output",
		            "op %u: output %s byte %llu is 0x%02x, the formula says 0x%02x", op,
		            io->name[i], (unsigned long long)k, got[k], want[k]);
	if (got != got_s) {
		free(got);
		free(want);
	}
}

static void iob_verify(iob_t *b, unsigned op)
{
	const uint8_t *in[MAX_IO];
	uint64_t in_size[MAX_IO];
	const mio_t *io = b->io;

	for (uint32_t i = 0; i < io->n_in; i++) {
		if (!b->data[i])
			return; /* a missing input: nothing to compare against */
		in[i] = b->data[i];
		in_size[i] = io->size[i];
	}
	for (uint32_t j = 0; j < io->n_out; j++)
		if (b->t[io->n_in + j])
			verify_output(b, op, io->n_in + j, in, in_size);
	ks_atomic_add_quiet(&R.checked, 1);
}

/* ---- bookkeeping -------------------------------------------------------- */

static bool get_slot(unsigned s, slot_t *out)
{
	ks_mutex_lock(&R.lock);
	*out = R.slot[s];
	ks_mutex_unlock(&R.lock);
	return out->used;
}

static void clear_slot_if(unsigned s, uint32_t id)
{
	ks_mutex_lock(&R.lock);
	if (R.slot[s].used && R.slot[s].id == id) {
		R.slot[s].used = false;
		R.slot[s].stale = id;
	}
	ks_mutex_unlock(&R.lock);
}

static pend_t *pend_get(void)
{
	pend_t *pe = NULL;

	ks_mutex_lock(&R.lock);
	for (unsigned i = 0; i < MAX_PENDING && !pe; i++)
		if (!R.pend[i].used) {
			pe = &R.pend[i];
			memset(pe, 0, sizeof(*pe));
			pe->used = true;
			if (i >= R.pend_hw)
				R.pend_hw = i + 1;
		}
	ks_mutex_unlock(&R.lock);
	return pe;
}

static void pend_put(pend_t *pe)
{
	iob_free(&pe->b);
	ks_mutex_lock(&R.lock);
	pe->used = false;
	ks_mutex_unlock(&R.lock);
}

static void done(unsigned i, const char *what, NRT_STATUS rc)
{
	ks_atomic_add_quiet(&R.ops_run, 1);
	if (rc == NRT_SUCCESS)
		ks_atomic_add_quiet(&R.ops_ok, 1);
	if (R.o->verbose)
		fprintf(stderr, "kprog: op %u %s -> %d\n", i, what, (int)rc);
}

/* The reference model's verdict where it has one; the argument contract
 * (what the arguments alone decide) in every run. */
static void check(unsigned i, const char *what, NRT_STATUS rc, NRT_STATUS want, NRT_STATUS alt,
                  uint64_t fired0)
{
	oracle_expect_t e = {true, want, alt};

	if (R.reference && kfault_fired() == fired0) {
		oracle_check_status(i, what, rc, &e);
		return;
	}
	if (rc == NRT_SUCCESS && want != NRT_SUCCESS && alt != NRT_SUCCESS)
		oracle_fail("status-mismatch", "op %u %s succeeded, its arguments demand %d", i,
		            what, (int)want);
	if (!R.faults && rc != want && rc != alt && rc != NRT_INVALID_HANDLE)
		oracle_check_status(i, what, rc, &e);
}

/* ---- operations --------------------------------------------------------- */

static NRT_STATUS predict_load(const mio_t *io, int start, int count)
{
	uint32_t nc = R.p->nc, c;

	if (!io || !io->parsed)
		return NRT_INVALID;
	if (start < -1 || count < -1 || count == 0)
		return NRT_INVALID;
	c = count == -1 ? io->nkbin : (uint32_t)count;
	if (c > nc || (start >= 0 && (uint32_t)start > nc - c))
		return NRT_LOAD_NOT_ENOUGH_NC;
	if (io->nkbin == 0 || (io->nkbin != 1 && io->nkbin != c))
		return NRT_INVALID;
	return NRT_SUCCESS;
}

static void op_load(unsigned i, const kprog_op_t *op)
{
	const mio_t *io = R.op_io[i];
	const uint8_t *bytes;
	size_t len = op->blob_len;
	uint64_t fired0 = kfault_fired(), t0, t1;
	uint32_t start = 0, cnt = 0;
	H_NN h = {0};
	NRT_STATUS rc, want;

	bytes = op->a[1] == KPROG_TMPL_INLINE ? R.p->blob + op->blob_off
	                                      : kprog_template((unsigned)op->a[1], &len);
	t0 = oracle_tick();
	rc = kmgr_load_nn(bytes, len, op->a[2], op->a[3], &h);
	t1 = oracle_tick();
	done(i, "load", rc);
	want = predict_load(io, op->a[2], op->a[3]);
	check(i, "load", rc, want, want == NRT_INVALID ? NRT_UNSUPPORTED_NEFF_VERSION : want,
	      fired0);
	oracle_record(i, KOP_LOAD, rc == NRT_SUCCESS ? h.id : 0, t0, t1, rc);
	if (rc)
		return;
	oracle_note_loaded(h.id);
	if (h.id > kmgr_last_nn_id())
		oracle_fail("id-order", "load returned id %u beyond last_nn_id %u", h.id,
		            kmgr_last_nn_id());
	if (kmgr_get_nc_info(h, &start, &cnt) != NRT_SUCCESS)
		start = 0;
	ks_mutex_lock(&R.lock);
	R.slot[op->a[0]] = (slot_t){true, h.id, start, R.slot[op->a[0]].stale, io};
	ks_mutex_unlock(&R.lock);
}

static void op_unload(unsigned i, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	slot_t s;
	NRT_STATUS rc;

	if (!get_slot((unsigned)op->a[0], &s))
		return;
	t0 = oracle_tick();
	rc = kmgr_unload_nn((H_NN){s.id});
	t1 = oracle_tick();
	done(i, "unload", rc);
	oracle_record(i, KOP_UNLOAD, s.id, t0, t1, rc);
	check(i, "unload", rc, NRT_SUCCESS, NRT_SUCCESS, fired0);
	if (rc)
		return;
	oracle_note_unloaded(s.id, t1);
	clear_slot_if((unsigned)op->a[0], s.id);
}

static void op_unload_all(unsigned i)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	slot_t s[KPROG_SLOTS];
	NRT_STATUS rc;

	for (unsigned k = 0; k < KPROG_SLOTS; k++)
		get_slot(k, &s[k]);
	t0 = oracle_tick();
	rc = kmgr_unload_all_nns();
	t1 = oracle_tick();
	done(i, "unload_all", rc);
	check(i, "unload_all", rc, NRT_SUCCESS, NRT_SUCCESS, fired0);
	oracle_record(i, KOP_UNLOAD_ALL, 0, t0, t1, rc);
	for (unsigned k = 0; k < KPROG_SLOTS; k++) {
		uint32_t a, b;

		if (!s[k].used || kmgr_get_nc_info((H_NN){s[k].id}, &a, &b) != NRT_INVALID_HANDLE)
			continue;
		/* erased, but not necessarily drained: another thread's unload may
		 * still be waiting for the model's references, so this is no
		 * point after which the device must stay quiet (no
		 * oracle_note_unloaded here) */
		oracle_record(i, KOP_UNLOAD_ALL, s[k].id, t0, t1, NRT_SUCCESS);
		clear_slot_if(k, s[k].id);
	}
}

static bool is_host(int place)
{
	return place == KPROG_PLACE_HOST || place == KPROG_PLACE_VIRT;
}

/* What the arguments alone decide for an execution. */
static NRT_STATUS predict_exec(const mio_t *io, int in, int out, bool device_only, NRT_STATUS *alt)
{
	bool missing =
	    (in == KPROG_PLACE_MISSING && io->n_in) || (out == KPROG_PLACE_MISSING && io->n_out);
	bool host = (is_host(in) && io->n_in) || (is_host(out) && io->n_out);

	*alt = NRT_SUCCESS;
	if ((device_only && host) || missing) {
		*alt = NRT_INVALID;
		return NRT_INVALID;
	}
	if (device_only)
		*alt = NRT_QUEUE_FULL;
	return NRT_SUCCESS;
}

static void exec_async_pend(pend_t *pe, unsigned i, uint64_t first, uint64_t last)
{
	pe->op = i;
	pe->job_first = first;
	pe->job_last = last;
}

static void op_exec(unsigned i, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired(), t0, t1, first = 0, job = 0, last_ok = 0;
	NRT_STATUS rc = NRT_SUCCESS, want, alt;
	pend_t *pe;
	slot_t s;

	if (!get_slot((unsigned)op->a[0], &s) || !s.io || !s.io->ok || !(pe = pend_get()))
		return;
	if (iob_build(&pe->b, s.io, i, op->a[1], op->a[2], (int)s.start_nc)) {
		pend_put(pe);
		return;
	}
	want = predict_exec(s.io, op->a[1], op->a[2], R.p->async, &alt);
	/* One block of job ids for the whole op: the pending check looks at
	 * first..last_ok, and ids taken one by one interleaved with other
	 * threads' (a success of another op's job then passed for one of ours;
	 * the faults and async targets found this in the oracle) */
	first = (uint64_t)ks_atomic_add_quiet(&R.next_job, op->a[3] > 0 ? op->a[3] : 0) + 1;
	for (int r = 0; r < op->a[3] && rc == NRT_SUCCESS; r++) {
		job = first + (uint64_t)r;
		t0 = oracle_tick();
		rc = kmgr_exec((H_NN){s.id}, pe->b.in, pe->b.out, job);
		t1 = oracle_tick();
		done(i, "exec", rc);
		oracle_record(i, KOP_EXEC, s.id, t0, t1, rc);
		check(i, "exec", rc, want, alt, fired0);
		if (rc == NRT_SUCCESS)
			last_ok = job;
	}
	/* implicit async: any queued execution still uses the tensors */
	if (last_ok && R.p->async) {
		exec_async_pend(pe, i, first, last_ok);
		return;
	}
	if (rc == NRT_SUCCESS)
		iob_verify(&pe->b, i);
	pend_put(pe);
}

static void op_schedule(unsigned i, unsigned t, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	NRT_STATUS rc, want, alt;
	pend_t *pe;
	slot_t s;

	if (R.p->async && !R.o->async_mix)
		return;
	if (!get_slot((unsigned)op->a[0], &s) || !s.io || !s.io->ok || !(pe = pend_get()))
		return;
	if (iob_build(&pe->b, s.io, i, op->a[1], op->a[2], (int)s.start_nc)) {
		pend_put(pe);
		return;
	}
	want = predict_exec(s.io, op->a[1], op->a[2], true, &alt);
	t0 = oracle_tick();
	rc =
	    kmgr_tpb_xu_schedule(s.start_nc, (H_NN){s.id}, pe->b.in, pe->b.out, &pe->ret, &pe->seq);
	t1 = oracle_tick();
	done(i, "schedule", rc);
	oracle_record(i, KOP_SCHEDULE, s.id, t0, t1, rc);
	check(i, "schedule", rc, want, alt, fired0);
	if (rc) {
		pend_put(pe);
		return;
	}
	pe->op = i;
	pe->sched = true;
	if (R.nseq[t] < MAX_SEQS)
		R.seqs[t][R.nseq[t]++] = pe->seq;
}

static void op_is_completed(unsigned i, unsigned t, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired();
	nrta_seq_t seq;
	bool is_done = false;
	NRT_STATUS rc;

	if (!op->a[1] && !R.nseq[t])
		return;
	seq = op->a[1] ? BOGUS_SEQ : R.seqs[t][(unsigned)op->a[0] % R.nseq[t]];
	rc = nrta_is_completed(seq, &is_done);
	done(i, "is_completed", rc);
	check(i, "is_completed", rc, op->a[1] ? NRT_INVALID : NRT_SUCCESS,
	      op->a[1] ? NRT_INVALID : NRT_SUCCESS, fired0);
}

static void op_get_sequence(unsigned i, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired();
	nrta_seq_t seq = 0;
	NRT_STATUS rc, want;

	rc = nrta_get_sequence((uint32_t)op->a[0], (nrta_xu_t)op->a[1], op->a[2], &seq);
	done(i, "get_sequence", rc);
	want = op->a[0] < R.p->nc && op->a[1] == NRTA_XU_COMPUTE && op->a[2] == 0 ? NRT_SUCCESS
	                                                                          : NRT_INVALID;
	check(i, "get_sequence", rc, want, want, fired0);
}

static void op_tensor_info(unsigned i, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	bool is_input = !(op->a[1] & 1);
	uint32_t idx = (uint32_t)op->a[1] >> 1, ndim = 0, *shape = NULL;
	char name[NRT_TENSOR_NAME_MAX];
	nrt_dtype_t dtype;
	size_t size = 0;
	NRT_STATUS rc, want;
	slot_t s;

	if (!get_slot((unsigned)op->a[0], &s) || !s.io || !s.io->ok)
		return;
	t0 = oracle_tick();
	rc = kmgr_get_io_tensor_info((H_NN){s.id}, is_input, idx, name, &size, &dtype, &ndim,
	                             &shape);
	t1 = oracle_tick();
	done(i, "tensor_info", rc);
	oracle_record(i, KOP_TENSOR_INFO, s.id, t0, t1, rc);
	want = idx < (is_input ? s.io->n_in : s.io->n_out) ? NRT_SUCCESS : NRT_INVALID;
	check(i, "tensor_info", rc, want, want, fired0);
	if (rc)
		return;
	kfree(shape);
	idx += is_input ? 0 : s.io->n_in;
	if (strcmp(name, s.io->name[idx]) || size != s.io->size[idx])
		oracle_fail("metadata",
		            "op %u: tensor %u is '%s' of %zu bytes, the container says "
		            "'%s' of %llu",
		            i, idx, name, size, s.io->name[idx],
		            (unsigned long long)s.io->size[idx]);
}

static void op_is_valid_ifmap(unsigned i, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	unsigned sel = (unsigned)op->a[1];
	const char *name;
	bool valid = false, want_valid;
	NRT_STATUS rc;
	slot_t s;

	if (!get_slot((unsigned)op->a[0], &s) || !s.io || !s.io->ok)
		return;
	name = sel == 7                                    ? NULL
	       : sel < 6 && sel < s.io->n_in + s.io->n_out ? s.io->name[sel]
	                                                   : "no-such-ifmap";
	want_valid = sel < 6 && sel < s.io->n_in;
	t0 = oracle_tick();
	rc = kmgr_is_valid_ifmap((H_NN){s.id}, name, &valid);
	t1 = oracle_tick();
	done(i, "is_valid_ifmap", rc);
	oracle_record(i, KOP_IS_VALID_IFMAP, s.id, t0, t1, rc);
	check(i, "is_valid_ifmap", rc, name ? NRT_SUCCESS : NRT_INVALID,
	      name ? NRT_SUCCESS : NRT_INVALID, fired0);
	if (rc == NRT_SUCCESS && valid != want_valid)
		oracle_fail("metadata", "op %u: is_valid_ifmap('%s') = %d, the container says %d",
		            i, name, valid, want_valid);
}

static void op_ifmap_count(unsigned i, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	uint32_t count = 0, nout = 0;
	NRT_STATUS rc;
	slot_t s;

	if (!get_slot((unsigned)op->a[0], &s) || !s.io || !s.io->ok)
		return;
	t0 = oracle_tick();
	if (op->a[1])
		rc = kmgr_get_io_tensor_count((H_NN){s.id}, &count, &nout);
	else
		rc = kmgr_get_ifmap_count((H_NN){s.id}, &count);
	t1 = oracle_tick();
	done(i, "ifmap_count", rc);
	oracle_record(i, KOP_IFMAP_COUNT, s.id, t0, t1, rc);
	check(i, "ifmap_count", rc, NRT_SUCCESS, NRT_SUCCESS, fired0);
	if (rc == NRT_SUCCESS && (count != s.io->n_in || (op->a[1] && nout != s.io->n_out)))
		oracle_fail("metadata", "op %u: %u inputs %u outputs, the container has %u and %u",
		            i, count, op->a[1] ? nout : s.io->n_out, s.io->n_in, s.io->n_out);
}

static void op_set_profiling(unsigned i, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	NRT_STATUS rc;
	slot_t s;

	if (!get_slot((unsigned)op->a[0], &s))
		return;
	t0 = oracle_tick();
	rc = op->a[2] ? kmgr_set_mac_count((H_NN){s.id}, 1000u + (uint64_t)i)
	              : kmgr_set_profiling((H_NN){s.id}, op->a[1]);
	t1 = oracle_tick();
	done(i, "set_profiling", rc);
	oracle_record(i, KOP_SET_PROFILING, s.id, t0, t1, rc);
	check(i, "set_profiling", rc, NRT_SUCCESS, NRT_SUCCESS, fired0);
}

/* An id that was unloaded (or was never issued) answers INVALID_HANDLE
 * everywhere. */
static void op_stale(unsigned i, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired(), t0, t1;
	uint32_t count = 0, nout = 0, ndim = 0, *shape = NULL;
	char name[NRT_TENSOR_NAME_MAX];
	nrt_dtype_t dtype;
	nrta_seq_t seq;
	NRT_STATUS ret;
	size_t size;
	bool valid;
	slot_t s;
	H_NN h;
	NRT_STATUS rc;

	get_slot((unsigned)op->a[0], &s);
	h.id = s.stale ? s.stale : 0xfffffff0u - i;
	t0 = oracle_tick();
	switch (op->a[1]) {
	case 0:
		rc = kmgr_exec(h, NULL, NULL, 0);
		break;
	case 1:
		rc = kmgr_get_ifmap_count(h, &count);
		break;
	case 2:
		rc = kmgr_unload_nn(h);
		break;
	case 3:
		rc = kmgr_set_profiling(h, true);
		break;
	case 4:
		rc = kmgr_get_io_tensor_info(h, true, 0, name, &size, &dtype, &ndim, &shape);
		break;
	case 5:
		rc = kmgr_is_valid_ifmap(h, "x", &valid);
		break;
	case 6:
		rc = kmgr_get_io_tensor_count(h, &count, &nout);
		break;
	case 7:
		rc = kmgr_tpb_xu_schedule(0, h, NULL, NULL, &ret, &seq);
		break;
	default:
		rc = kmgr_set_mac_count(h, 1);
		break;
	}
	if (rc == NRT_SUCCESS && op->a[1] == 4)
		kfree(shape);
	t1 = oracle_tick();
	done(i, "stale", rc);
	oracle_record(i, KOP_STALE, h.id, t0, t1, rc);
	check(i, "stale", rc, NRT_INVALID_HANDLE, NRT_INVALID_HANDLE, fired0);
	if (rc == NRT_SUCCESS)
		oracle_fail("stale-handle", "op %u: unloaded id %u accepted", i, h.id);
}

/* A NULL or mismatched argument on a loaded model: NRT_INVALID, never a
 * crash (a model that went away meanwhile answers INVALID_HANDLE). */
static void op_badargs(unsigned i, const kprog_op_t *op)
{
	uint64_t fired0 = kfault_fired();
	uint32_t count = 0, nout = 0, ndim = 0, *shape = NULL;
	nrt_tensor_set_t *set = NULL;
	nrt_dtype_t dtype;
	nrta_seq_t seq;
	NRT_STATUS rc, ret;
	size_t size;
	slot_t s;
	H_NN h, out;

	if (!get_slot((unsigned)op->a[0], &s))
		return;
	h.id = s.id;
	if (op->a[1] <= 1 && nrt_allocate_tensor_set(&set) != NRT_SUCCESS)
		return;
	switch (op->a[1]) {
	case 0:
		rc = kmgr_exec(h, NULL, set, 0);
		break;
	case 1:
		rc = kmgr_exec(h, set, NULL, 0);
		break;
	case 2:
		rc = kmgr_get_io_tensor_info(h, true, 0, NULL, &size, &dtype, &ndim, &shape);
		break;
	case 3:
		rc = kmgr_is_valid_ifmap(h, "x", NULL);
		break;
	case 4:
		rc = kmgr_get_ifmap_count(h, NULL);
		break;
	case 5:
		rc = kmgr_get_io_tensor_count(h, &count, NULL);
		break;
	case 6:
		rc = kmgr_load_nn(NULL, 16, -1, -1, &out);
		break;
	case 7:
		/* the model's own core plus one: the seed asserts, we refuse */
		rc = kmgr_tpb_xu_schedule(s.start_nc + 1, h, NULL, NULL, &ret, &seq);
		break;
	case 8:
		rc = kmgr_tpb_xu_schedule(s.start_nc, h, NULL, NULL, &ret, NULL);
		break;
	default:
		rc = kmgr_get_nc_info(h, &count, NULL);
		break;
	}
	if (set)
		nrt_destroy_tensor_set(&set);
	(void)nout;
	done(i, "badargs", rc);
	check(i, "badargs", rc, NRT_INVALID, NRT_INVALID, fired0);
}

/* Arms a fault from now on; only in single-threaded sync programs, where
 * no library thread is busy when the plan changes. */
static void op_fault(const kprog_op_t *op)
{
	kfault_plan_t plan = {.n = 1};

	if (R.p->nthreads != 1 || R.p->async)
		return;
	plan.e[0] = (kfault_entry_t){KFAULT_FAIL_ALLOC, 0, (uint32_t)op->a[1], 0};
	plan.e[0].site = op->a[0] ? (uint32_t)kfault_sites(&(size_t){0})[op->a[0] - 1].site : 0;
	kfault_set_plan(&plan);
	R.faults = true;
}

static const size_t tsizes[4] = {0, 1, 64, 4096};
static const size_t tlens[4] = {0, 1, 8, 64};

static void op_tensor(unsigned i, unsigned t, const kprog_op_t *op)
{
	tslot_t *ts = &R.ts[t][op->a[0]];
	uint8_t data[64];
	NRT_STATUS rc = NRT_SUCCESS;
	size_t off = (size_t)op->a[1] * 8, len = tlens[op->a[2] & 3];

	if (op->kind == KOP_TALLOC || op->kind == KOP_TFREE) {
		if (ts->t)
			nrt_tensor_free(&ts->t);
		free(ts->buf);
		ts->buf = NULL;
	}
	switch (op->kind) {
	case KOP_TALLOC:
		if (op->a[1] <= KPROG_PLACE_HOST) {
			rc = nrt_tensor_allocate(op->a[1] ? NRT_TENSOR_PLACEMENT_HOST
			                                  : NRT_TENSOR_PLACEMENT_DEVICE,
			                         0, tsizes[op->a[2]], "t", &ts->t);
			break;
		}
		rc = nrt_tensor_allocate_empty("t", &ts->t);
		if (rc == NRT_SUCCESS && op->a[1] == KPROG_PLACE_VIRT && tsizes[op->a[2]]) {
			ts->buf = calloc(1, tsizes[op->a[2]]);
			rc = nrt_tensor_attach_buffer(ts->t, ts->buf, tsizes[op->a[2]]);
		}
		break;
	case KOP_TWRITE:
		memset(data, (int)i, sizeof(data));
		if (ts->t)
			rc = nrt_tensor_write(ts->t, data, off, len);
		break;
	case KOP_TREAD:
		if (ts->t)
			rc = nrt_tensor_read(ts->t, data, off, len);
		break;
	default:
		break;
	}
	done(i, kprog_kind(op->kind)->name, rc);
}

static void run_op(unsigned i, unsigned t)
{
	const kprog_op_t *op = &R.p->ops[i];

	switch (op->kind) {
	case KOP_LOAD:
		op_load(i, op);
		break;
	case KOP_UNLOAD:
		op_unload(i, op);
		break;
	case KOP_UNLOAD_ALL:
		op_unload_all(i);
		break;
	case KOP_EXEC:
		op_exec(i, op);
		break;
	case KOP_SCHEDULE:
		op_schedule(i, t, op);
		break;
	case KOP_IS_COMPLETED:
		op_is_completed(i, t, op);
		break;
	case KOP_GET_SEQUENCE:
		op_get_sequence(i, op);
		break;
	case KOP_TENSOR_INFO:
		op_tensor_info(i, op);
		break;
	case KOP_IS_VALID_IFMAP:
		op_is_valid_ifmap(i, op);
		break;
	case KOP_IFMAP_COUNT:
		op_ifmap_count(i, op);
		break;
	case KOP_SET_PROFILING:
		op_set_profiling(i, op);
		break;
	case KOP_STALE:
		op_stale(i, op);
		break;
	case KOP_FAULT:
		op_fault(op);
		break;
	case KOP_BADARGS:
		op_badargs(i, op);
		break;
	default:
		op_tensor(i, t, op);
		break;
	}
}

static void *thread_main(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;

	for (unsigned i = 0; i < R.p->nops; i++)
		if (R.p->ops[i].thread == t)
			run_op(i, t);
	return NULL;
}

/* ---- completion, quiescence and teardown ------------------------------- */

/* reset() clears the job flags only up to the highest id this run touched
 * (a full sweep was a tenth of a short run); ids the callback reports are
 * counted too, in case the library names one the runner never reserved. */
static void job_hw_raise(int64_t id)
{
	int64_t cur = atomic_load(&R.job_hw.v);

	while (cur < id && !atomic_compare_exchange_weak(&R.job_hw.v, &cur, id))
		;
}

static void async_callback(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                           NRT_STATUS status)
{
	(void)params;
	(void)model_id;
	(void)vnc;
	if (job_id == 0 || job_id >= MAX_JOBS)
		return;
	job_hw_raise((int64_t)job_id);
	if (status == NRT_SUCCESS)
		atomic_store(&R.job_ok[job_id].v, 1);
	atomic_store(&R.job_done[job_id].v, 1);
}

/* Every submitted execution completed or was cancelled.  A sleep, not a
 * yield: under control a sleeping thread is not runnable, so the device
 * threads run even when the decisions ran out (whose fallback keeps the
 * current thread). */
static void quiesce(void)
{
	while (emu_inflight_execs() != 0)
		ks_usleep(50);
}

static void finish_pending(void)
{
	for (unsigned k = 0; k < R.pend_hw; k++) {
		pend_t *pe = &R.pend[k];
		bool is_done = false, ok = false;

		if (!pe->used)
			continue;
		if (pe->sched) {
			if (kmgr_xu_is_completed(pe->seq, &is_done) != NRT_SUCCESS || !is_done)
				oracle_fail("lost-completion",
				            "op %u: sequence %llx never completed", pe->op,
				            (unsigned long long)pe->seq);
			ok = pe->ret == NRT_SUCCESS;
		} else {
			/* seq_cst: the callback's store follows the device's writes of
			 * the outputs, so this load orders our reads after them */
			for (uint64_t j = pe->job_first; j <= pe->job_last && j < MAX_JOBS; j++)
				ok |= atomic_load(&R.job_ok[j].v) != 0;
		}
		if (ok)
			iob_verify(&pe->b, pe->op);
		pend_put(pe);
	}
}

static void free_tensor_slots(void)
{
	for (unsigned t = 0; t < KPROG_MAX_THREADS; t++)
		for (unsigned k = 0; k < KPROG_TSLOTS; k++) {
			if (R.ts[t][k].t)
				nrt_tensor_free(&R.ts[t][k].t);
			free(R.ts[t][k].buf);
			R.ts[t][k].buf = NULL;
		}
}

static void set_env(const kprog_t *p)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", p->nc);
	setenv("KMGR_EMU_NC_COUNT", v, 1);
	unsetenv("NEURON_RT_VISIBLE_CORES");
	if (p->async) {
		snprintf(v, sizeof(v), "%u", p->qdepth);
		setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", v, 1);
	} else {
		unsetenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS");
	}
}

static void reset(const kprog_t *p, const kprog_run_opts_t *o)
{
	int64_t jobs = ks_atomic_peek(&R.next_job);

	if (ks_atomic_peek(&R.job_hw) > jobs)
		jobs = ks_atomic_peek(&R.job_hw);
	if (jobs >= MAX_JOBS)
		jobs = MAX_JOBS - 1;
	R.p = p;
	R.o = o;
	R.reference = o->reference && p->nthreads == 1;
	R.faults = p->plan.n > 0;
	memset(R.slot, 0, sizeof(R.slot));
	memset(R.pend, 0, R.pend_hw * sizeof(R.pend[0]));
	R.pend_hw = 0;
	memset(R.nseq, 0, sizeof(R.nseq));
	atomic_store(&R.ops_run.v, 0);
	atomic_store(&R.ops_ok.v, 0);
	atomic_store(&R.checked.v, 0);
	atomic_store(&R.next_job.v, 0);
	atomic_store(&R.job_hw.v, 0);
	for (int64_t j = 0; j <= jobs; j++) {
		atomic_store(&R.job_done[j].v, 0);
		atomic_store(&R.job_ok[j].v, 0);
	}
}

/* The body: everything from nrt_init to the accounting check after close. */
static int run_body(const kprog_t *p)
{
	ks_thread_t th[KPROG_MAX_THREADS];
	bool close_faulted;
	uint64_t fired;
	NRT_STATUS rc;

	if (p->plan.n)
		kfault_set_plan(&p->plan);
	rc = nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "");
	if (rc) {
		kfault_clear();
		oracle_check_closed();
		return p->plan.n ? 0 : -1;
	}
	oracle_attach();
	if (kmgr_is_async() != p->async)
		oracle_fail("mode", "kmgr_is_async() is %d, the program asked for %s",
		            kmgr_is_async(), p->async ? "async" : "sync");
	for (unsigned t = 1; t < p->nthreads; t++)
		if (ks_thread_create(&th[t], "kprog", thread_main, (void *)(uintptr_t)t))
			abort();
	thread_main((void *)(uintptr_t)0);
	for (unsigned t = 1; t < p->nthreads; t++)
		ks_thread_join(&th[t], NULL);
	quiesce();
	finish_pending();
	free_tensor_slots();
	oracle_check_refcounts(R.faults);
	oracle_check_history();
	oracle_detach();
	/* The plan stays installed until the device threads are gone: kfault's
	 * contract (and TSan) forbid changing it while they may read it.  A
	 * fault that fires inside nrt_close itself can leave what close could
	 * not unload; that run skips the leak check. */
	fired = kfault_fired();
	nrt_close();
	close_faulted = kfault_fired() != fired;
	kfault_clear();
	if (!close_faulted)
		oracle_check_closed();
	return 0;
}

int kprog_run(const kprog_t *p, const kprog_run_opts_t *o, kprog_run_result_t *r)
{
	ks_ctl_config_t cfg;
	ks_ctl_result_t res = {0};
	int rc;

	reset(p, o);
	prepare_models(p);
	set_env(p);
	nrt_register_async_exec_callback(async_callback, NULL);
	oracle_begin(p);
	if (o->backend == KPROG_CONTROLLED) {
		ks_ctl_config_init(&cfg);
		cfg.strategy = KS_STRAT_BYTES;
		cfg.bytes = p->sched;
		cfg.nbytes = p->nsched;
		cfg.max_steps = o->max_steps;
		if (ks_ctl_begin(&cfg))
			abort();
	}
	rc = run_body(p);
	if (o->backend == KPROG_CONTROLLED) {
		ks_ctl_end(&res);
		trace_len = res.ntrace < sizeof(trace_copy) ? res.ntrace : sizeof(trace_copy);
		memcpy(trace_copy, res.trace, trace_len);
	}
	if (r) {
		r->ops_run = (uint32_t)ks_atomic_peek(&R.ops_run);
		r->ops_ok = (uint32_t)ks_atomic_peek(&R.ops_ok);
		r->execs_checked = (uint32_t)ks_atomic_peek(&R.checked);
		r->steps = res.steps;
		r->ntrace = (uint32_t)res.ntrace;
	}
	return rc;
}

/* Not strstr: libFuzzer hooks strstr and records its arguments in tables
 * that are not thread-safe, and this runs on library threads.  No coverage
 * either: a byte-by-byte scan of log text would only feed the fuzzer
 * features about the wording of messages. */
KATTR_NO_COVERAGE static bool contains(const char *s, const char *w)
{
	for (; *s; s++) {
		size_t k = 0;

		while (w[k] && s[k] == w[k])
			k++;
		if (!w[k])
			return true;
	}
	return false;
}

static bool keep_fmt(const char *fmt)
{
	static const char *const keep[] = {"assertion failed", "without a mark", "below zero",
	                                   "outstanding",      "freed twice",    "USE-AFTER-FREE",
	                                   "DEADLOCK",         "abort"};

	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (contains(fmt, keep[i]))
			return true;
	return false;
}

/* The library's error lines a run keeps: those that report a broken
 * invariant.  Chosen by the format string, before the line is formatted,
 * and remembered by its address (a format is a string literal): every
 * failing call logs, and scanning each format for eight words was still
 * a fiftieth of a run.  An entry is one atomic word, address << 1 | keep,
 * because free-running runs log from several threads; a lost race only
 * costs a rescan. */
static bool keep_line(klog_level_t level, const char *fmt)
{
	static _Atomic uint64_t seen[256];
	uint64_t key = (uint64_t)(uintptr_t)fmt << 1;
	/* Fibonacci hashing of the address, as the scheduler's site cache
	 * (lib/sched/ctl.c): under ASan literals lie 32 or 64 bytes apart, and
	 * the low bits alone would use one slot in four or eight */
	_Atomic uint64_t *e = &seen[((uint64_t)(uintptr_t)fmt * 0x9E3779B97F4A7C15ull) >> 56];
	uint64_t v;
	bool keep;

	if (level != KLOG_ERROR)
		return false;
	v = atomic_load_explicit(e, memory_order_relaxed);
	if ((v & ~1ull) == key)
		return v & 1;
	keep = keep_fmt(fmt);
	atomic_store_explicit(e, key | keep, memory_order_relaxed);
	return keep;
}

static void quiet_sink(void *ctx, klog_level_t level, const char *line)
{
	(void)ctx;
	(void)level;
	fprintf(stderr, "kmgr error: %s\n", line);
}

void kprog_log_quiet(void)
{
	klog_set_filter(keep_line);
	klog_set_sink(quiet_sink, NULL);
}

int kprog_last_trace(char *buf, size_t len)
{
	return ks_ctl_trace_format(trace_copy, trace_len, buf, len);
}
