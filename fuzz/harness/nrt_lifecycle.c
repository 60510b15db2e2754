/*
 * nrt_lifecycle.c - nrt_close while other threads call, and nrt_init with
 * the environment an op spells (NEURON_RT_VISIBLE_CORES,
 * NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS) in any state. */
#include <stdio.h>

#include <nrt/nrt.h>

#include "harness/state.h"
#include "nrt/nrt_kmgr.h"

/* nrt_close while the other threads go on calling: they answer
 * NRT_CLOSED from its end on (oracle_check_lifecycle), and a close that
 * never returns is the run's hang bound. */
void kh_nrt_close(unsigned op, unsigned thread, const kh_args_t *a)
{
	bool faulted;

	(void)thread;
	(void)a;
	ks_atomic_store_quiet(&kh_state.closing, 1);
	while (ks_atomic_load_quiet(&kh_state.facade) != 0)
		ks_usleep(50);
	oracle_close_begin(oracle_tick());
	faulted = oracle_close_runtime();
	/* the latest: a second close may return before the first is done */
	ks_atomic_max_quiet(&kh_state.close_t1, (int64_t)oracle_tick());
	oracle_close_end(oracle_tick());
	if (faulted)
		ks_atomic_store_quiet(&kh_state.close_faulted, 1);
	kh_done(op, "nrt_close", NRT_SUCCESS);
}

/* NEURON_RT_VISIBLE_CORES as an nrt_init op spells it (visible: the
 * form, core: c): the string, printed from fmt with c + d[0..2], and the
 * visible count a closed runtime's nrt_get_visible_nc_count must give for
 * it on a device of nc cores, or -1 where the parser must refuse it.  The
 * verdicts are the forms' own, not a second parser's: a form that parses
 * names the cores lo..c + hi (lo: 0, or c itself when from_c). */
static const struct {
	const char *fmt; /* NULL: unset */
	int d[3];
	bool parses, from_c;
	int hi;
} kh_visible_forms[] = {
    {NULL, {0}, true, false, -1},       /* unset: every core */
    {"", {0}, true, false, -1},         /* empty: unset too */
    {"%d", {0}, true, true, 0},         /* N */
    {"0-%d", {0}, true, false, 0},      /* 0-N */
    {"%d-%d", {0, 1}, true, true, 1},   /* N-N+1 */
    {"%d-%d", {1, 0}, false, false, 0}, /* backwards */
    {"%d,%d", {0, 0}, false, false, 0}, /* a list: not supported */
    {"-%d", {0}, false, false, 0},
    {"%d-", {0}, false, false, 0},
    {"x%d", {0}, false, false, 0},
    {"%d-4294967296", {0}, false, false, 0}, /* past UINT32_MAX */
    {" %d", {0}, false, false, 0},
    {"%d-%d-%d", {0, 0, 0}, false, false, 0}, /* three parts */
};

static const char *kh_env_visible(const kh_args_t *a, unsigned nc, char *b, size_t len, int *count)
{
	size_t n = sizeof(kh_visible_forms) / sizeof(kh_visible_forms[0]);
	unsigned f = (unsigned)a->visible < n ? (unsigned)a->visible : (unsigned)n - 1;
	int c = a->core, lo = kh_visible_forms[f].from_c ? c : 0, hi = c + kh_visible_forms[f].hi;

	*count = -1;
	if (kh_visible_forms[f].parses)
		*count = kh_visible_forms[f].hi < 0 ? (int)nc
		         : (unsigned)hi < nc        ? hi - lo + 1
		                                    : -1;
	if (!kh_visible_forms[f].fmt || !*kh_visible_forms[f].fmt)
		return kh_visible_forms[f].fmt;
	snprintf(b, len, kh_visible_forms[f].fmt, c + kh_visible_forms[f].d[0],
	         c + kh_visible_forms[f].d[1], c + kh_visible_forms[f].d[2]);
	return b;
}

/* NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS likewise; *ok: it parses. */
static const char *kh_env_inflight(const kh_args_t *a, char *b, size_t len, bool *ok)
{
	*ok = a->inflight == 0 || a->inflight == 1 || a->inflight == 3;
	switch (a->inflight) {
	case 0:
		return NULL;
	case 1:
		snprintf(b, len, "%d", a->core);
		return b;
	case 2: /* past the limit */
		return "65537";
	case 3:
		return "";
	default:
		return "1x";
	}
}

/* nrt_init and nrt_get_visible_nc_count with the environment the op
 * spells (nrt_init_env: no setenv, which would race the other threads'
 * getenv), in whatever state the runtime is.  While it is up both answer
 * from it: the count is the device's, a second init NRT_FAILURE.  Once
 * closed both parse the op's variables: the count is the one they name or
 * NRT_INVALID, and an init whose framework or variables are wrong is
 * NRT_INVALID and starts nothing.  An init that would start a runtime is
 * only made while the facade guard holds a close off (it must fail). */
void kh_nrt_init(unsigned op, unsigned thread, const kh_args_t *a)
{
	char vb[48], ib[16];
	int count;
	bool iok;
	nrt_env_t env = {kh_env_visible(a, kh_state.c->nc, vb, sizeof(vb), &count),
	                 kh_env_inflight(a, ib, sizeof(ib), &iok)};
	nrt_framework_type_t fw = (nrt_framework_type_t)a->fw;
	bool fw_ok = fw > NRT_FRAMEWORK_TYPE_INVALID && fw <= NRT_FRAMEWORK_TYPE_MXNET;
	uint32_t n = 0;
	uint64_t t0 = oracle_tick();
	NRT_STATUS rc = nrt_get_visible_nc_count_env(&env, &n);
	bool closed_ok;

	(void)thread;
	kh_done(op, "nrt_get_visible_nc_count(env)", rc);
	closed_ok =
	    count >= 0 && iok ? rc == NRT_SUCCESS && n == (uint32_t)count : rc == NRT_INVALID;
	oracle_check_either(op, "nrt_get_visible_nc_count(env)",
	                    rc == NRT_SUCCESS && n == kh_state.c->nc, closed_ok, t0, oracle_tick());
	if (fw_ok && count >= 0 && iok) {
		if (!kh_facade_enter())
			return;
		kh_nrt_want(op, "nrt_init(env, again)", nrt_init_env(fw, &env), NRT_FAILURE);
		kh_facade_leave();
		return;
	}
	t0 = oracle_tick();
	rc = nrt_init_env(fw, &env);
	kh_done(op, "nrt_init(env)", rc);
	oracle_check_either(op, "nrt_init(env)", rc == NRT_FAILURE, rc == NRT_INVALID, t0,
	                    oracle_tick());
}
