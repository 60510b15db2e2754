/* ---- the runner -----------------------------------------------------------
 * kmgr-repro's prelude (tools/kmgr-repro/prelude.c, copied into every emitted
 * test): the harness of fuzz/prog/run.c without its history oracle, making
 * the same library calls and ksched.h calls in the same order, so that the
 * decision bytes drive the same interleaving as under the fuzz target.
 * Checks, all schedule-independent: outputs of successful executions follow
 * the compute formula, statuses obey the argument contract, nothing executes
 * on a model after its unload returned, reference counts are back to zero
 * at quiescence, and nrt_close leaves the accounting where it started. */
#define KR_FN            static __attribute__((unused))
#define MAX_IO           16
#define MAX_TENSOR_BYTES 65536
#define MAX_PENDING      160
#define MAX_SEQS         8
#define MAX_JOBS         1024
#define MAX_UNLOADED     256
#define NSLOTS           4
#define NTSLOTS          4
#define BOGUS_SEQ        ((nrta_seq_t)0x7fff << NRTA_SEQ_XU_SHIFT | 0x123)
enum { DEV = 0, HOST = 1, VIRT = 2, MISSING = 3 };

typedef struct mio {
	const uint8_t *bytes;
	size_t len;
	bool parsed, ok;
	uint32_t nkbin, n_in, n_out;
	const char *name[MAX_IO];
	uint64_t size[MAX_IO];
} mio_t;

typedef struct iob {
	const mio_t *io;
	uint32_t seed;
	nrt_tensor_t *t[MAX_IO];
	void *buf[MAX_IO];
	uint8_t *data[MAX_IO];
	nrt_tensor_set_t *in, *out;
} iob_t;

typedef struct pend {
	bool used, sched;
	unsigned op;
	uint64_t job_first, job_last;
	nrta_seq_t seq;
	NRT_STATUS ret;
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
	bool faults;
	ks_mutex_t lock;
	slot_t slot[NSLOTS];
	pend_t pend[MAX_PENDING];
	tslot_t ts[4][NTSLOTS];
	nrta_seq_t seqs[4][MAX_SEQS];
	unsigned nseq[4];
	ks_atomic_t next_job, nunloaded;
	ks_atomic_t unloaded[MAX_UNLOADED];
	ks_atomic_t job_done[MAX_JOBS], job_ok[MAX_JOBS];
} R = {.lock = KS_MUTEX_INITIALIZER};

__attribute__((noreturn, format(printf, 2, 3))) static void kr_fail(const char *what,
                                                                    const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ORACLE: %s: ", what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nFAIL: %s (regression test, fuzz target %s)\n", KR_NAME, KR_TARGET);
	fflush(stderr);
	abort();
}

/* ---- tensors of one execution ---- */

KR_FN void iob_free(iob_t *b)
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

KR_FN NRT_STATUS make_tensor(iob_t *b, unsigned i, int place, int nc)
{
	uint64_t size = b->io->size[i];
	const char *name = b->io->name[i];
	NRT_STATUS rc;

	if (place == DEV || place == HOST)
		return nrt_tensor_allocate(place == DEV ? NRT_TENSOR_PLACEMENT_DEVICE
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

KR_FN NRT_STATUS fill_input(iob_t *b, unsigned i)
{
	uint64_t size = b->io->size[i];

	b->data[i] = malloc(size);
	if (!b->data[i])
		abort();
	for (uint64_t k = 0; k < size; k++)
		b->data[i][k] = (uint8_t)(b->seed * 13u + i * 31u + k * 7u);
	return nrt_tensor_write(b->t[i], b->data[i], 0, size);
}

KR_FN NRT_STATUS build_side(iob_t *b, bool input, int place, int nc)
{
	uint32_t from = input ? 0 : b->io->n_in;
	uint32_t n = input ? b->io->n_in : b->io->n_out;
	nrt_tensor_set_t *set = input ? b->in : b->out;
	NRT_STATUS rc = NRT_SUCCESS;

	for (uint32_t j = 0; j < n && rc == NRT_SUCCESS; j++) {
		unsigned i = from + j;

		if (place == MISSING && j == 0)
			continue;
		rc = make_tensor(b, i, place == MISSING ? DEV : place, nc);
		if (rc == NRT_SUCCESS && input)
			rc = fill_input(b, i);
		if (rc == NRT_SUCCESS)
			rc = nrt_add_tensor_to_tensor_set(set, b->io->name[i], b->t[i]);
	}
	return rc;
}

KR_FN NRT_STATUS iob_build(iob_t *b, const mio_t *io, uint32_t seed, int in_place, int out_place,
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

/* Outputs of a successful execution follow the device's compute formula. */
KR_FN void iob_verify(iob_t *b, unsigned op)
{
	static uint8_t got[MAX_TENSOR_BYTES], want[MAX_TENSOR_BYTES];
	const uint8_t *in[MAX_IO];
	uint64_t in_size[MAX_IO];
	const mio_t *io = b->io;

	for (uint32_t i = 0; i < io->n_in; i++) {
		if (!b->data[i])
			return;
		in[i] = b->data[i];
		in_size[i] = io->size[i];
	}
	for (uint32_t j = 0; j < io->n_out; j++) {
		unsigned i = io->n_in + j;

		if (!b->t[i])
			continue;
		if (nrt_tensor_read(b->t[i], got, 0, io->size[i]) != NRT_SUCCESS)
			kr_fail("exec-output", "op %u: output %s unreadable", op, io->name[i]);
		emu_compute_expected(io->n_in, in, in_size, j, want, io->size[i]);
		if (memcmp(got, want, io->size[i]))
			kr_fail("exec-output", "op %u: output %s differs from the formula", op,
			        io->name[i]);
	}
}

/* ---- bookkeeping ---- */

KR_FN bool get_slot(unsigned s, slot_t *out)
{
	ks_mutex_lock(&R.lock);
	*out = R.slot[s];
	ks_mutex_unlock(&R.lock);
	return out->used;
}

KR_FN void clear_slot_if(unsigned s, uint32_t id)
{
	ks_mutex_lock(&R.lock);
	if (R.slot[s].used && R.slot[s].id == id) {
		R.slot[s].used = false;
		R.slot[s].stale = id;
	}
	ks_mutex_unlock(&R.lock);
}

KR_FN pend_t *pend_get(void)
{
	pend_t *pe = NULL;

	ks_mutex_lock(&R.lock);
	for (unsigned i = 0; i < MAX_PENDING && !pe; i++)
		if (!R.pend[i].used) {
			pe = &R.pend[i];
			memset(pe, 0, sizeof(*pe));
			pe->used = true;
		}
	ks_mutex_unlock(&R.lock);
	return pe;
}

KR_FN void pend_put(pend_t *pe)
{
	iob_free(&pe->b);
	ks_mutex_lock(&R.lock);
	pe->used = false;
	ks_mutex_unlock(&R.lock);
}

/* The argument contract: a call whose arguments demand an error never
 * succeeds; without faults only the predicted statuses or INVALID_HANDLE
 * (a concurrent unload) come back. */
KR_FN void expect(unsigned i, const char *what, NRT_STATUS rc, NRT_STATUS want, NRT_STATUS alt)
{
	if (rc == NRT_SUCCESS && want != NRT_SUCCESS && alt != NRT_SUCCESS)
		kr_fail("status-mismatch", "op %u %s succeeded, its arguments demand %d", i, what,
		        (int)want);
	if (!R.faults && rc != want && rc != alt && rc != NRT_INVALID_HANDLE)
		kr_fail("status-mismatch", "op %u %s returned %d, expected %d", i, what, (int)rc,
		        (int)want);
}

KR_FN void note_unloaded(uint32_t id)
{
	int64_t i = ks_atomic_add_quiet(&R.nunloaded, 1);

	if (i < MAX_UNLOADED)
		atomic_store(&R.unloaded[i].v, (int64_t)id);
}

static bool was_unloaded(uint32_t id)
{
	int64_t n = ks_atomic_peek(&R.nunloaded);

	for (int64_t i = 0; i < n && i < MAX_UNLOADED; i++)
		if ((uint32_t)ks_atomic_peek(&R.unloaded[i]) == id)
			return true;
	return false;
}

/* On device threads: a submit or start after the unload returned. */
static void observer(void *ctx, emu_exec_event_t ev, uint64_t h_model, uint32_t h_nn,
                     NRT_STATUS status)
{
	(void)ctx;
	(void)status;
	(void)h_model;
	if ((ev == EMU_EXEC_SUBMIT || ev == EMU_EXEC_START) && was_unloaded(h_nn))
		kr_fail("exec-after-unload", "model %u executes after its unload returned", h_nn);
}

/* ---- operations (fuzz/prog/run.c, same calls, same order) ---- */

KR_FN NRT_STATUS predict_load(const mio_t *io, int start, int count)
{
	uint32_t c;

	if (!io->parsed || start < -1 || count < -1 || count == 0)
		return NRT_INVALID;
	c = count == -1 ? io->nkbin : (uint32_t)count;
	if (c > KR_NC || (start >= 0 && (uint32_t)start > KR_NC - c))
		return NRT_LOAD_NOT_ENOUGH_NC;
	if (io->nkbin == 0 || (io->nkbin != 1 && io->nkbin != c))
		return NRT_INVALID;
	return NRT_SUCCESS;
}

KR_FN void op_load(unsigned i, unsigned slot, const mio_t *io, int start, int count)
{
	uint32_t st = 0, cnt = 0;
	H_NN h = {0};
	NRT_STATUS rc, want;

	rc = kmgr_load_nn(io->bytes, io->len, start, count, &h);
	want = predict_load(io, start, count);
	expect(i, "load", rc, want, want == NRT_INVALID ? NRT_UNSUPPORTED_NEFF_VERSION : want);
	if (rc)
		return;
	/* the runner's id-order check: its read lock is two scheduling points,
	 * which the decision bytes count on */
	if (h.id > kmgr_last_nn_id())
		kr_fail("id-order", "load returned id %u beyond last_nn_id %u", h.id,
		        kmgr_last_nn_id());
	if (kmgr_get_nc_info(h, &st, &cnt) != NRT_SUCCESS)
		st = 0;
	ks_mutex_lock(&R.lock);
	R.slot[slot] = (slot_t){true, h.id, st, R.slot[slot].stale, io};
	ks_mutex_unlock(&R.lock);
}

KR_FN void op_unload(unsigned i, unsigned slot)
{
	slot_t s;
	NRT_STATUS rc;

	if (!get_slot(slot, &s))
		return;
	rc = kmgr_unload_nn((H_NN){s.id});
	expect(i, "unload", rc, NRT_SUCCESS, NRT_SUCCESS);
	if (rc)
		return;
	note_unloaded(s.id);
	clear_slot_if(slot, s.id);
}

KR_FN void op_unload_all(unsigned i)
{
	slot_t s[NSLOTS];
	NRT_STATUS rc;

	for (unsigned k = 0; k < NSLOTS; k++)
		get_slot(k, &s[k]);
	rc = kmgr_unload_all_nns();
	expect(i, "unload_all", rc, NRT_SUCCESS, NRT_SUCCESS);
	for (unsigned k = 0; k < NSLOTS; k++) {
		uint32_t a, b;

		if (!s[k].used || kmgr_get_nc_info((H_NN){s[k].id}, &a, &b) != NRT_INVALID_HANDLE)
			continue;
		note_unloaded(s[k].id);
		clear_slot_if(k, s[k].id);
	}
}

KR_FN bool is_host(int place)
{
	return place == HOST || place == VIRT;
}

KR_FN NRT_STATUS predict_exec(const mio_t *io, int in, int out, bool device_only, NRT_STATUS *alt)
{
	bool missing = (in == MISSING && io->n_in) || (out == MISSING && io->n_out);
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

KR_FN void op_exec(unsigned i, unsigned slot, int in, int out, int repeat)
{
	uint64_t first = 0, job = 0;
	NRT_STATUS rc = NRT_SUCCESS, want, alt;
	pend_t *pe;
	slot_t s;

	if (!get_slot(slot, &s) || !s.io->ok || !(pe = pend_get()))
		return;
	if (iob_build(&pe->b, s.io, i, in, out, (int)s.start_nc)) {
		pend_put(pe);
		return;
	}
	want = predict_exec(s.io, in, out, KR_ASYNC, &alt);
	for (int r = 0; r < repeat && rc == NRT_SUCCESS; r++) {
		job = (uint64_t)ks_atomic_add_quiet(&R.next_job, 1) + 1;
		first = first ? first : job;
		rc = kmgr_exec((H_NN){s.id}, pe->b.in, pe->b.out, job);
		expect(i, "exec", rc, want, alt);
	}
	if (rc == NRT_SUCCESS && KR_ASYNC) {
		pe->op = i;
		pe->job_first = first;
		pe->job_last = job;
		return;
	}
	if (rc == NRT_SUCCESS)
		iob_verify(&pe->b, i);
	pend_put(pe);
}

KR_FN void op_schedule(unsigned i, unsigned t, unsigned slot, int in, int out)
{
	NRT_STATUS rc, want, alt;
	pend_t *pe;
	slot_t s;

	if (!get_slot(slot, &s) || !s.io->ok || !(pe = pend_get()))
		return;
	if (iob_build(&pe->b, s.io, i, in, out, (int)s.start_nc)) {
		pend_put(pe);
		return;
	}
	want = predict_exec(s.io, in, out, true, &alt);
	rc =
	    kmgr_tpb_xu_schedule(s.start_nc, (H_NN){s.id}, pe->b.in, pe->b.out, &pe->ret, &pe->seq);
	expect(i, "schedule", rc, want, alt);
	if (rc) {
		pend_put(pe);
		return;
	}
	pe->op = i;
	pe->sched = true;
	if (R.nseq[t] < MAX_SEQS)
		R.seqs[t][R.nseq[t]++] = pe->seq;
}

KR_FN void op_is_completed(unsigned i, unsigned t, int which, int bogus)
{
	nrta_seq_t seq;
	bool is_done = false;
	NRT_STATUS rc;

	if (!bogus && !R.nseq[t])
		return;
	seq = bogus ? BOGUS_SEQ : R.seqs[t][(unsigned)which % R.nseq[t]];
	rc = nrta_is_completed(seq, &is_done);
	expect(i, "is_completed", rc, bogus ? NRT_INVALID : NRT_SUCCESS,
	       bogus ? NRT_INVALID : NRT_SUCCESS);
}

KR_FN void op_get_sequence(unsigned i, int lnc, int xu, int queue)
{
	nrta_seq_t seq = 0;
	NRT_STATUS rc, want;

	rc = nrta_get_sequence((uint32_t)lnc, (nrta_xu_t)xu, queue, &seq);
	want = (unsigned)lnc < KR_NC && xu == NRTA_XU_COMPUTE && queue == 0 ? NRT_SUCCESS
	                                                                    : NRT_INVALID;
	expect(i, "get_sequence", rc, want, want);
}

KR_FN void op_tensor_info(unsigned i, unsigned slot, int index)
{
	bool is_input = !(index & 1);
	uint32_t idx = (uint32_t)index >> 1, ndim = 0, *shape = NULL;
	char name[NRT_TENSOR_NAME_MAX];
	nrt_dtype_t dtype;
	size_t size = 0;
	NRT_STATUS rc, want;
	slot_t s;

	if (!get_slot(slot, &s) || !s.io->ok)
		return;
	rc = kmgr_get_io_tensor_info((H_NN){s.id}, is_input, idx, name, &size, &dtype, &ndim,
	                             &shape);
	want = idx < (is_input ? s.io->n_in : s.io->n_out) ? NRT_SUCCESS : NRT_INVALID;
	expect(i, "tensor_info", rc, want, want);
	if (rc)
		return;
	free_shape(shape);
	idx += is_input ? 0 : s.io->n_in;
	if (strcmp(name, s.io->name[idx]) || size != s.io->size[idx])
		kr_fail("metadata", "op %u: tensor %u is '%s' of %zu bytes", i, idx, name, size);
}

KR_FN void op_is_valid_ifmap(unsigned i, unsigned slot, unsigned sel)
{
	const char *name;
	bool valid = false, want_valid;
	NRT_STATUS rc;
	slot_t s;

	if (!get_slot(slot, &s) || !s.io->ok)
		return;
	name = sel == 7                                    ? NULL
	       : sel < 6 && sel < s.io->n_in + s.io->n_out ? s.io->name[sel]
	                                                   : "no-such-ifmap";
	want_valid = sel < 6 && sel < s.io->n_in;
	rc = kmgr_is_valid_ifmap((H_NN){s.id}, name, &valid);
	expect(i, "is_valid_ifmap", rc, name ? NRT_SUCCESS : NRT_INVALID,
	       name ? NRT_SUCCESS : NRT_INVALID);
	if (rc == NRT_SUCCESS && valid != want_valid)
		kr_fail("metadata", "op %u: is_valid_ifmap('%s') = %d", i, name, valid);
}

KR_FN void op_ifmap_count(unsigned i, unsigned slot)
{
	uint32_t count = 0;
	NRT_STATUS rc;
	slot_t s;

	if (!get_slot(slot, &s) || !s.io->ok)
		return;
	rc = kmgr_get_ifmap_count((H_NN){s.id}, &count);
	expect(i, "ifmap_count", rc, NRT_SUCCESS, NRT_SUCCESS);
	if (rc == NRT_SUCCESS && count != s.io->n_in)
		kr_fail("metadata", "op %u: ifmap count %u, the container has %u", i, count,
		        s.io->n_in);
}

KR_FN void op_set_profiling(unsigned i, unsigned slot, int on)
{
	NRT_STATUS rc;
	slot_t s;

	if (!get_slot(slot, &s))
		return;
	rc = kmgr_set_profiling((H_NN){s.id}, on);
	expect(i, "set_profiling", rc, NRT_SUCCESS, NRT_SUCCESS);
}

/* An unloaded (or never issued) id answers INVALID_HANDLE everywhere. */
KR_FN void op_stale(unsigned i, unsigned slot, int what)
{
	uint32_t count = 0;
	slot_t s;
	H_NN h;
	NRT_STATUS rc;

	get_slot(slot, &s);
	h.id = s.stale ? s.stale : 0xfffffff0u - i;
	switch (what) {
	case 0:
		rc = kmgr_exec(h, NULL, NULL, 0);
		break;
	case 1:
		rc = kmgr_get_ifmap_count(h, &count);
		break;
	case 2:
		rc = kmgr_unload_nn(h);
		break;
	default:
		rc = kmgr_set_profiling(h, true);
		break;
	}
	expect(i, "stale", rc, NRT_INVALID_HANDLE, NRT_INVALID_HANDLE);
	if (rc == NRT_SUCCESS)
		kr_fail("stale-handle", "op %u: unloaded id %u accepted", i, h.id);
}

static const size_t tsizes[4] = {0, 1, 64, 4096};
static const size_t tlens[4] = {0, 1, 8, 64};

KR_FN void tslot_free(tslot_t *ts)
{
	if (ts->t)
		nrt_tensor_free(&ts->t);
	free(ts->buf);
	ts->buf = NULL;
}

KR_FN void op_talloc(unsigned t, unsigned k, int place, int size)
{
	tslot_t *ts = &R.ts[t][k];
	NRT_STATUS rc;

	tslot_free(ts);
	if (place <= HOST) {
		nrt_tensor_allocate(place ? NRT_TENSOR_PLACEMENT_HOST : NRT_TENSOR_PLACEMENT_DEVICE,
		                    0, tsizes[size], "t", &ts->t);
		return;
	}
	rc = nrt_tensor_allocate_empty("t", &ts->t);
	if (rc == NRT_SUCCESS && place == VIRT && tsizes[size]) {
		ts->buf = calloc(1, tsizes[size]);
		nrt_tensor_attach_buffer(ts->t, ts->buf, tsizes[size]);
	}
}

KR_FN void op_tfree(unsigned t, unsigned k)
{
	tslot_free(&R.ts[t][k]);
}

KR_FN void op_tio(unsigned i, unsigned t, unsigned k, bool write, int off, int len)
{
	tslot_t *ts = &R.ts[t][k];
	uint8_t data[64];

	memset(data, (int)i, sizeof(data));
	if (ts->t && write)
		nrt_tensor_write(ts->t, data, (size_t)off * 8, tlens[len & 3]);
	else if (ts->t)
		nrt_tensor_read(ts->t, data, (size_t)off * 8, tlens[len & 3]);
}

/* ---- faults: only in programs that carry them (base/kfault.h) ---- */
#if KR_USE_FAULTS
static void kr_install_faults(void)
{
	kfault_plan_t plan;
	char err[128];

	if (!KR_FAULT_PLAN[0])
		return;
	if (kfault_plan_parse(KR_FAULT_PLAN, &plan, err, sizeof(err))) {
		fprintf(stderr, "%s: bad fault plan: %s\n", KR_NAME, err);
		abort();
	}
	kfault_set_plan(&plan);
}

static void kr_clear_faults(void)
{
	kfault_clear();
}

/* Arms "fail the nth next allocation at site" (only single-threaded sync). */
KR_FN void op_fault(int site, int nth)
{
	kfault_plan_t plan = {.n = 1};
	size_t n = 0;
	const kfault_site_info_t *sites = kfault_sites(&n);

	if (KR_NTHREADS != 1 || KR_ASYNC)
		return;
	plan.e[0] = (kfault_entry_t){KFAULT_FAIL_ALLOC, 0, (uint32_t)nth, 0};
	plan.e[0].site = site && (size_t)site <= n ? (uint32_t)sites[site - 1].site : 0;
	kfault_set_plan(&plan);
	R.faults = true;
}
#else
static void kr_install_faults(void)
{
}

static void kr_clear_faults(void)
{
}
#endif

/* ---- completion, quiescence and teardown ---- */

static void async_callback(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                           NRT_STATUS status)
{
	(void)params;
	(void)model_id;
	(void)vnc;
	if (job_id == 0 || job_id >= MAX_JOBS)
		return;
	if (status == NRT_SUCCESS)
		atomic_store(&R.job_ok[job_id].v, 1);
	atomic_store(&R.job_done[job_id].v, 1);
}

/* As the runner: the count is read with acquire order at a scheduling
 * point (emu_inflight_execs), so that the steps match its. */
static void quiesce(void)
{
	while (emu_inflight_execs() != 0)
		ks_usleep(50);
}

static void finish_pending(void)
{
	for (unsigned k = 0; k < MAX_PENDING; k++) {
		pend_t *pe = &R.pend[k];
		bool is_done = false, ok = false;

		if (!pe->used)
			continue;
		if (pe->sched) {
			if (kmgr_xu_is_completed(pe->seq, &is_done) != NRT_SUCCESS || !is_done)
				kr_fail("lost-completion", "op %u never completed", pe->op);
			ok = pe->ret == NRT_SUCCESS;
		} else {
			for (uint64_t j = pe->job_first; j <= pe->job_last && j < MAX_JOBS; j++)
				ok |= ks_atomic_peek(&R.job_ok[j]) != 0;
		}
		if (ok)
			iob_verify(&pe->b, pe->op);
		pend_put(pe);
	}
}

static void free_tensor_slots(void)
{
	for (unsigned t = 0; t < 4; t++)
		for (unsigned k = 0; k < NTSLOTS; k++)
			tslot_free(&R.ts[t][k]);
}

static void check_refcounts(void)
{
	H_NN *ids = NULL;
	uint32_t count = 0;

	if (kmgr_get_nns(&ids, &count) != NRT_SUCCESS)
		kr_fail("refcount", "kmgr_get_nns failed at quiescence");
	for (uint32_t i = 0; i < count; i++) {
		dlr_model *mod = db_get_nn_ref_count(ids[i]);
		int64_t ref;

		if (!mod)
			kr_fail("refcount", "model %u listed but not found", ids[i].id);
		ref = dlr_model_peek_ref_count(mod);
		nn_ref_decrement(mod);
		if (ref != 1)
			kr_fail("refcount", "model %u has %lld references at quiescence", ids[i].id,
			        (long long)ref - 1);
	}
	free_shape(ids);
}

static void check_closed(const emu_accounting_t *base)
{
	emu_accounting_t a;

	emu_get_accounting(&a);
	if (a.device_bytes || a.device_allocs || a.objects || a.staged_models || a.inflight_execs ||
	    a.async_marks)
		kr_fail("leak-after-close",
		        "device bytes %lld allocs %lld objects %lld staged %lld "
		        "inflight %lld async_marks %lld",
		        (long long)a.device_bytes, (long long)a.device_allocs, (long long)a.objects,
		        (long long)a.staged_models, (long long)a.inflight_execs,
		        (long long)a.async_marks);
	if (a.host_allocs != base->host_allocs || a.host_bytes != base->host_bytes)
		kr_fail("leak-after-close", "host allocations %lld, %lld before the run",
		        (long long)a.host_allocs, (long long)base->host_allocs);
}

static void set_env(void)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", KR_NC);
	setenv("KMGR_EMU_NC_COUNT", v, 1);
	unsetenv("NEURON_RT_VISIBLE_CORES");
	if (KR_ASYNC) {
		snprintf(v, sizeof(v), "%u", KR_QDEPTH);
		setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", v, 1);
	} else {
		unsetenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS");
	}
}

/* nrt_init to the accounting check after close, under the controlled
 * scheduler with the embedded decision bytes. */
static int kr_run(void *(*const threads[])(void *), unsigned nthreads, const uint8_t *sched,
                  size_t nsched)
{
	ks_thread_t th[4];
	ks_ctl_config_t cfg;
	ks_ctl_result_t res;
	emu_accounting_t base;

	set_env();
	nrt_register_async_exec_callback(async_callback, NULL);
	emu_get_accounting(&base);
	R.faults = KR_FAULT_PLAN[0] != 0;
	ks_ctl_config_init(&cfg);
	cfg.strategy = KS_STRAT_BYTES;
	cfg.bytes = sched;
	cfg.nbytes = nsched;
	if (ks_ctl_begin(&cfg))
		abort();
	kr_install_faults();
	if (nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") != NRT_SUCCESS) {
		kr_clear_faults();
		ks_ctl_end(&res);
		check_closed(&base);
		printf("%s: the runtime did not start (%s)\n", KR_NAME,
		       R.faults ? "a fault fired in nrt_init" : "bad config");
		return R.faults ? 0 : 1;
	}
	emu_set_exec_observer(observer, NULL);
	for (unsigned t = 1; t < nthreads; t++)
		if (ks_thread_create(&th[t], "kprog", threads[t], NULL))
			abort();
	threads[0](NULL);
	for (unsigned t = 1; t < nthreads; t++)
		ks_thread_join(&th[t], NULL);
	quiesce();
	kr_clear_faults();
	finish_pending();
	free_tensor_slots();
	check_refcounts();
	emu_set_exec_observer(NULL, NULL);
	nrt_close();
	check_closed(&base);
	ks_ctl_end(&res);
	printf("%s: PASS (%llu scheduling points, %llu preemptions)\n", KR_NAME,
	       (unsigned long long)res.steps, (unsigned long long)res.preemptions);
	return 0;
}
