/*
 * oracle.c - the oracle's history (oracle.h): every op on a model is
 * recorded with its interval on a logical clock, and at quiescence each
 * model's history must be linearizable; statuses against the reference
 * model's predictions.  Bookkeeping uses quiet atomics (no scheduling
 * point), so the oracle never changes the interleavings a run explores.
 */
#include "oracle/oracle.h"

typedef struct hrec {
	unsigned op;
	oracle_rec_t rec;
	const char *what;
	uint32_t id;
	uint64_t t0, t1;
	NRT_STATUS status;
} hrec_t;

static struct {
	ks_atomic_t clock;
	ks_atomic_t nhist;
	ks_atomic_t close_t0, close_t1; /* the first nrt_close op's interval, 0: none yet */
	hrec_t hist[ORACLE_MAX_HIST];
} oh;

void oracle_history_begin(void)
{
	ks_atomic_reset(&oh.clock);
	ks_atomic_reset(&oh.nhist);
	ks_atomic_reset(&oh.close_t0);
	ks_atomic_reset(&oh.close_t1);
}

/* Only the first close counts: a later one finds the runtime closed. */
void oracle_close_begin(uint64_t t0)
{
	if (!ks_atomic_load_quiet(&oh.close_t0))
		ks_atomic_store_quiet(&oh.close_t0, (int64_t)t0);
}

void oracle_close_end(uint64_t t1)
{
	if (!ks_atomic_load_quiet(&oh.close_t1))
		ks_atomic_store_quiet(&oh.close_t1, (int64_t)t1);
}

/* A close had returned before tick t. */
static bool oracle_closed_by(uint64_t t)
{
	int64_t t1 = ks_atomic_load_quiet(&oh.close_t1);

	return t1 && (uint64_t)t1 < t;
}

/* The contract (docs/api-contract.md): a call that began after nrt_close
 * returned answers NRT_CLOSED; NRT_CLOSED before any close began is as
 * wrong.  A call that overlaps the close may answer either way. */
bool oracle_check_lifecycle(unsigned op, const char *what, NRT_STATUS got, uint64_t t0, uint64_t t1)
{
	int64_t c0 = ks_atomic_load_quiet(&oh.close_t0);

	if (got == NRT_CLOSED && (!c0 || (uint64_t)c0 > t1))
		oracle_fail("closed-early", "op %u %s answered NRT_CLOSED, no nrt_close had begun",
		            op, what);
	if (got != NRT_CLOSED && oracle_closed_by(t0))
		oracle_fail("after-close",
		            "op %u %s began after nrt_close returned and answered %d", op, what,
		            (int)got);
	return got == NRT_CLOSED;
}

void oracle_check_either(unsigned op, const char *what, bool up_ok, bool closed_ok, uint64_t t0,
                         uint64_t t1)
{
	int64_t c0 = ks_atomic_load_quiet(&oh.close_t0);

	if (!up_ok && (!c0 || (uint64_t)c0 > t1))
		oracle_fail("status-mismatch",
		            "op %u %s: not the running runtime's answer, and no nrt_close had "
		            "begun",
		            op, what);
	if (!closed_ok && oracle_closed_by(t0))
		oracle_fail("after-close",
		            "op %u %s began after nrt_close returned; its answer is not the "
		            "closed runtime's",
		            op, what);
	if (!up_ok && !closed_ok)
		oracle_fail("status-mismatch",
		            "op %u %s: neither the running nor the closed "
		            "runtime's answer",
		            op, what);
}

uint64_t oracle_tick(void)
{
	return (uint64_t)ks_atomic_add_quiet(&oh.clock, 1) + 1;
}

void oracle_record(unsigned op, oracle_rec_t rec, const char *what, uint32_t id, uint64_t t0,
                   uint64_t t1, NRT_STATUS status)
{
	int64_t i = ks_atomic_add_quiet(&oh.nhist, 1);

	if (i >= ORACLE_MAX_HIST)
		return;
	oh.hist[i] = (hrec_t){op, rec, what, id, t0, t1, status};
}

void oracle_check_status(unsigned op, const char *what, NRT_STATUS got, oracle_expect_t e,
                         bool exact, bool faults)
{
	if (!e.known || got == e.want || got == e.alt)
		return;
	if (!exact && got == NRT_SUCCESS)
		oracle_fail("status-mismatch", "op %u %s succeeded, its arguments demand %d", op,
		            what, (int)e.want);
	if (!exact && (faults || got == NRT_INVALID_HANDLE))
		return;
	oracle_fail("status-mismatch", "op %u %s returned %d, the reference model says %d", op,
	            what, (int)got, (int)e.want);
}

static bool is_unload(const hrec_t *h)
{
	return h->rec == ORACLE_UNLOAD || h->rec == ORACLE_UNLOAD_ALL;
}

/* The strong unload of id (an UNLOAD that succeeded), else the weak one
 * (UNLOAD_ALL took it), else NULL; two strong ones are a double unload. */
static const hrec_t *find_unload(uint32_t id, size_t n)
{
	const hrec_t *strong = NULL, *weak = NULL;

	for (size_t i = 0; i < n; i++) {
		const hrec_t *h = &oh.hist[i];

		if (h->id != id || !is_unload(h) || h->status != NRT_SUCCESS)
			continue;
		if (h->rec == ORACLE_UNLOAD_ALL) {
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
		if (oh.hist[i].id == id && oh.hist[i].rec == ORACLE_LOAD &&
		    oh.hist[i].status == NRT_SUCCESS)
			return true;
	return false;
}

/* An UNLOAD_ALL is recorded once with id 0 as well: it may take models
 * loaded while it ran, which the harness's before/after probes can miss. */
static bool wildcard_unload_before(uint64_t t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (oh.hist[i].id == 0 && oh.hist[i].rec == ORACLE_UNLOAD_ALL && oh.hist[i].t0 < t)
			return true;
	return false;
}

/* An unload of id that began before t, whatever it answered: nrt_unload
 * claims the handle first ("being unloaded": INVALID_HANDLE to everyone
 * else) and gives it back only if the facade's unload fails (another
 * framework's UNLOAD_ALL took the model meanwhile), so a failed attempt
 * explains an INVALID_HANDLE it overlapped. */
static bool unload_attempt_before(uint32_t id, uint64_t t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (oh.hist[i].id == id && oh.hist[i].rec == ORACLE_UNLOAD && oh.hist[i].t0 < t)
			return true;
	return false;
}

/* Linearizability is local: check each model on its own.  A model's ops
 * are reads except its one unload, so an order exists iff every op that
 * saw the model (SUCCESS) started before the unload ended, and every op
 * that did not (INVALID_HANDLE) ended after the unload started. */
static void check_one(const hrec_t *h, const hrec_t *u, size_t n)
{
	if (h->rec == ORACLE_LOAD || h == u || h->rec == ORACLE_UNLOAD_ALL)
		return;
	if (!loaded_here(h->id, n))
		return;
	if (h->status == NRT_SUCCESS && u && h->t0 > u->t1)
		oracle_fail(h->rec == ORACLE_EXEC ? "exec-after-unload" : "not-linearizable",
		            "op %u (%s) on model %u succeeded but started after its unload (op "
		            "%u) returned",
		            h->op, h->what, h->id, u->op);
	if (h->status == NRT_INVALID_HANDLE && (!u || h->t1 < u->t0) &&
	    !wildcard_unload_before(h->t1, n) && !unload_attempt_before(h->id, h->t1, n))
		oracle_fail("not-linearizable",
		            "op %u (%s) on model %u answered INVALID_HANDLE while it was loaded",
		            h->op, h->what, h->id);
}

void oracle_check_history(void)
{
	size_t n = (size_t)ks_atomic_peek(&oh.nhist);

	if (n > ORACLE_MAX_HIST)
		n = ORACLE_MAX_HIST;
	for (size_t i = 0; i < n; i++) {
		if (!oh.hist[i].id)
			continue;
		check_one(&oh.hist[i], find_unload(oh.hist[i].id, n), n);
	}
}
