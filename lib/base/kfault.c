/*
 * kfault.c - the fault plan and its counters.
 *
 * Counters are atomics without scheduling points (ks_atomic_add_quiet): a
 * plan must not change the interleavings a controlled run explores, and
 * under the controlled scheduler only one logical thread runs at a time, so
 * "the n-th hit" is deterministic there.
 */
#include "kfault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knum.h"
#include "sched/ksched.h"

static const kfault_site_info_t kfault_table[] = {
#define KFAULT_ROW(name, num, text, desc) {KFAULT_##name, text, desc},
    KFAULT_SITES(KFAULT_ROW)
#undef KFAULT_ROW
};

static kfault_plan_t kfault_plan;
static ks_atomic_t kfault_armed;
static ks_atomic_t kfault_hits[KFAULT_PLAN_MAX];
/* Hits of each kind, for the entries that count every hit of their kind
 * (all but site-specific allocation entries). */
static ks_atomic_t kfault_kind_hits[KFAULT_EXEC_HANG + 1];
static ks_atomic_t kfault_fired_count;

const kfault_site_info_t *kfault_sites(size_t *n)
{
	*n = sizeof(kfault_table) / sizeof(kfault_table[0]);
	return kfault_table;
}

const char *kfault_site_name(kfault_site_t site)
{
	if (site == KFAULT_SITE_ANY)
		return "any";
	for (size_t i = 0; i < sizeof(kfault_table) / sizeof(kfault_table[0]); i++)
		if (kfault_table[i].site == site)
			return kfault_table[i].name;
	return "?";
}

int kfault_site_lookup(const char *name)
{
	uint64_t num;
	bool is_num;

	if (strcmp(name, "any") == 0)
		return KFAULT_SITE_ANY;
	is_num = knum_parse(name, UINT32_MAX, &num) == 0;
	for (size_t i = 0; i < sizeof(kfault_table) / sizeof(kfault_table[0]); i++) {
		if (is_num && (uint64_t)kfault_table[i].site == num)
			return (int)num;
		if (strcmp(kfault_table[i].name, name) == 0)
			return (int)kfault_table[i].site;
	}
	return -1;
}

void kfault_set_plan(const kfault_plan_t *plan)
{
	ks_atomic_reset(&kfault_armed);
	memset(&kfault_plan, 0, sizeof(kfault_plan));
	if (plan && plan->n <= KFAULT_PLAN_MAX)
		kfault_plan = *plan;
	for (int i = 0; i < KFAULT_PLAN_MAX; i++)
		ks_atomic_reset(&kfault_hits[i]);
	for (int i = 0; i <= KFAULT_EXEC_HANG; i++)
		ks_atomic_reset(&kfault_kind_hits[i]);
	ks_atomic_reset(&kfault_fired_count);
	ks_atomic_store_quiet(&kfault_armed, kfault_plan.n > 0);
}

void kfault_clear(void)
{
	kfault_set_plan(NULL);
}

uint64_t kfault_fired(void)
{
	return (uint64_t)ks_atomic_peek(&kfault_fired_count);
}

/* Count one hit of every entry of this kind that matches; return the entry
 * whose n-th hit this is, or -1. */
static int kfault_hit(kfault_kind_t kind, uint32_t site)
{
	int fired = -1;
	int64_t n = 0, k;

	if (!ks_atomic_peek(&kfault_armed))
		return -1;
	for (uint32_t i = 0; i < kfault_plan.n; i++) {
		const kfault_entry_t *e = &kfault_plan.e[i];

		if (e->kind != kind)
			continue;
		if (kind == KFAULT_FAIL_ALLOC && e->site != KFAULT_SITE_ANY && e->site != site)
			continue;
		/* This hit's number, taken once for every entry that counts
		 * all hits of the kind: with a counter per entry, two threads
		 * hitting at once could each draw a different entry's count
		 * first, and one take both turns ("hang:1,hang:2" then hung
		 * one execution of two: test_emu_fault's fault-5, 1% under
		 * msan).  A site's own entry still counts its site's hits. */
		if (kind == KFAULT_FAIL_ALLOC && e->site != KFAULT_SITE_ANY) {
			k = ks_atomic_add_quiet(&kfault_hits[i], 1) + 1;
		} else {
			if (!n)
				n = ks_atomic_add_quiet(&kfault_kind_hits[kind], 1) + 1;
			k = n;
		}
		if (k == (int64_t)e->nth && fired < 0)
			fired = (int)i;
	}
	if (fired >= 0)
		ks_atomic_add_quiet(&kfault_fired_count, 1);
	return fired;
}

bool kfault_alloc_fails(kfault_site_t site)
{
	return kfault_hit(KFAULT_FAIL_ALLOC, site) >= 0;
}

uint32_t kfault_exec_status(void)
{
	int i = kfault_hit(KFAULT_EXEC_STATUS, 0);

	return i < 0 ? 0 : kfault_plan.e[i].arg;
}

uint32_t kfault_exec_delay(void)
{
	int i = kfault_hit(KFAULT_EXEC_DELAY, 0);

	return i < 0 ? 0 : kfault_plan.e[i].arg;
}

bool kfault_exec_hangs(void)
{
	return kfault_hit(KFAULT_EXEC_HANG, 0) >= 0;
}

bool kfault_queue_full(void)
{
	return kfault_hit(KFAULT_QUEUE_FULL, 0) >= 0;
}

/* The one number rule (knum.h): strtoul would also take "+1", " 1" and
 * "-1" (a huge number), each a different plan than the one written. */
static bool kfault_parse_u32(const char *s, uint32_t *out)
{
	return knum_parse_u32(s, 0, UINT32_MAX, out) == 0;
}

static bool kfault_status_ok(uint32_t st)
{
	return st == 1003 || st == 1004 || st == 1202 || st == 5 || st == 1204;
}

/* Parse one "kind:a[:b]" entry (modified in place); an empty field (a
 * trailing or doubled ':') is an error, not skipped. */
static int kfault_parse_entry(char *tok, kfault_entry_t *e, char *err, size_t errlen)
{
	char *f[3] = {NULL, NULL, NULL}, whole[96];
	int nf = 0;

	snprintf(whole, sizeof(whole), "%s", tok);
	for (char *p = tok;; nf++) {
		char *colon = strchr(p, ':');

		if (nf == 3 || !*p)
			goto bad;
		f[nf] = p;
		if (!colon)
			break;
		*colon = 0;
		p = colon + 1;
	}
	nf++;
	memset(e, 0, sizeof(*e));
	if (nf == 3 && strcmp(f[0], "alloc") == 0) {
		int site = kfault_site_lookup(f[1]);

		if (site < 0) {
			snprintf(err, errlen, "unknown fault site '%s'", f[1]);
			return -1;
		}
		e->kind = KFAULT_FAIL_ALLOC;
		e->site = (uint32_t)site;
		if (!kfault_parse_u32(f[2], &e->nth) || !e->nth)
			goto bad;
		return 0;
	}
	if (nf == 3 && (strcmp(f[0], "status") == 0 || strcmp(f[0], "delay") == 0)) {
		e->kind = f[0][0] == 's' ? KFAULT_EXEC_STATUS : KFAULT_EXEC_DELAY;
		if (!kfault_parse_u32(f[1], &e->arg) || !kfault_parse_u32(f[2], &e->nth) || !e->nth)
			goto bad;
		if (e->kind == KFAULT_EXEC_DELAY && e->arg > KFAULT_DELAY_MAX) {
			snprintf(err, errlen, "'%s': a delay of more than %u polls", whole,
			         KFAULT_DELAY_MAX);
			return -1;
		}
		if (e->kind == KFAULT_EXEC_STATUS && !kfault_status_ok(e->arg)) {
			snprintf(err, errlen, "status %u is not one of 1003 1004 1202 5 1204",
			         e->arg);
			return -1;
		}
		return 0;
	}
	if (nf == 2 && (strcmp(f[0], "qfull") == 0 || strcmp(f[0], "hang") == 0)) {
		e->kind = f[0][0] == 'q' ? KFAULT_QUEUE_FULL : KFAULT_EXEC_HANG;
		if (!kfault_parse_u32(f[1], &e->nth) || !e->nth)
			goto bad;
		return 0;
	}
bad:
	snprintf(err, errlen,
	         "bad fault entry '%s' (want alloc:SITE:N, status:ST:N, delay:K:N, qfull:N or "
	         "hang:N; N and K decimal, N >= 1)",
	         whole);
	return -1;
}

int kfault_plan_parse(const char *text, kfault_plan_t *plan, char *err, size_t errlen)
{
	char *buf, *p;
	int rc = 0;

	memset(plan, 0, sizeof(*plan));
	if (strlen(text) > KFAULT_PLAN_TEXT_MAX) {
		snprintf(err, errlen, "a plan of %zu characters (at most %d)", strlen(text),
		         KFAULT_PLAN_TEXT_MAX);
		return -1;
	}
	buf = p = strdup(text);
	if (!buf) {
		snprintf(err, errlen, "out of memory for the fault plan");
		return -1;
	}
	/* entries split by ',' with the empty ones kept: "a,,b" or a trailing
	 * ',' is an error, as any part of the text that means nothing */
	while (rc == 0 && p) {
		char *comma = strchr(p, ',');

		if (comma)
			*comma = 0;
		if (plan->n == KFAULT_PLAN_MAX) {
			snprintf(err, errlen, "more than %d fault entries", KFAULT_PLAN_MAX);
			rc = -1;
		} else if (kfault_parse_entry(p, &plan->e[plan->n], err, errlen)) {
			rc = -1;
		} else {
			plan->n++;
		}
		p = comma ? comma + 1 : NULL;
	}
	free(buf);
	return rc;
}

int kfault_plan_format(const kfault_plan_t *plan, char *buf, size_t len)
{
	int off = 0;

	if (len)
		buf[0] = 0;
	for (uint32_t i = 0; i < plan->n && i < KFAULT_PLAN_MAX; i++) {
		const kfault_entry_t *e = &plan->e[i];
		const char *sep = i ? "," : "";
		size_t room = (size_t)off < len ? len - (size_t)off : 0;
		char *at = room ? buf + off : NULL;

		switch (e->kind) {
		case KFAULT_FAIL_ALLOC:
			off += snprintf(at, room, "%salloc:%s:%u", sep,
			                kfault_site_name((kfault_site_t)e->site), e->nth);
			break;
		case KFAULT_EXEC_STATUS:
			off += snprintf(at, room, "%sstatus:%u:%u", sep, e->arg, e->nth);
			break;
		case KFAULT_EXEC_DELAY:
			off += snprintf(at, room, "%sdelay:%u:%u", sep, e->arg, e->nth);
			break;
		case KFAULT_QUEUE_FULL:
			off += snprintf(at, room, "%sqfull:%u", sep, e->nth);
			break;
		case KFAULT_EXEC_HANG:
			off += snprintf(at, room, "%shang:%u", sep, e->nth);
			break;
		}
	}
	return off;
}

int kfault_plan_from_env(void)
{
	const char *s = getenv("KMGR_FAULT");
	kfault_plan_t plan;
	char err[160];

	if (!s || !*s)
		return 0;
	if (kfault_plan_parse(s, &plan, err, sizeof(err))) {
		fprintf(stderr, "KMGR_FAULT: %s\n", err);
		return -1;
	}
	kfault_set_plan(&plan);
	return 0;
}
