/*
 * signature.c - a crash signature from a child's stderr, the way
 * ClusterFuzz buckets crashes: the report kind plus the top three project
 * frames of the first stack after it, with compiler-rt, libc, libFuzzer,
 * the fuzz drivers and this tool dropped, and lib/sched too: the sync
 * layer is the runtime here (its failure path and inlined atomics would
 * otherwise fill every KSCHED signature).  Functions only, no line
 * numbers, so that an unrelated edit does not split a bucket.
 *
 * The bucket key (kr_bucket_key) is what triage groups by.  A
 * use-after-free or double free is keyed by where the object was freed
 * (the top two project frames of ASan's "freed by thread" stack): one
 * premature free reached from many places gave one bucket per access
 * stack before.  A stress binary's check failure is keyed by its
 * invariant, a stall by the first thread's wait site; any other report by
 * its DEDUP_TOKEN, else its signature.
 */
#include <stdio.h>
#include <string.h>

#include "repro.h"

#ifndef KREPRO_SRC_DIR
#define KREPRO_SRC_DIR "/nonexistent"
#endif

/* Report kinds, in the order they are looked for on each line. */
static const struct {
	const char *needle;
	const char *kind; /* NULL: the word after the needle */
} kinds[] = {
    {"ERROR: LeakSanitizer:", "LeakSanitizer"},
    {"ERROR: AddressSanitizer: ", NULL},
    {"WARNING: ThreadSanitizer: ", NULL},
    {"ERROR: ThreadSanitizer: ", NULL},
    {"WARNING: MemorySanitizer: ", NULL},
    {"ERROR: MemorySanitizer: ", NULL},
    {"runtime error: ", "UBSan"},
    {"ORACLE: ", "ORACLE"},
    {"KSCHED DEADLOCK", "KSCHED DEADLOCK"},
    {"KSCHED HANG", "KSCHED HANG"},
    {"KSCHED DIVERGENCE", "KSCHED DIVERGENCE"},
    {"Assertion `", "assertion"},
    {"assertion failed: ", "assertion"},
    {"CHECK FAILED: ", "stress check"},
    {" WATCHDOG: ", "stress stall"},
};

bool kr_project_frame(const char *file)
{
	static const char *const skip[] = {"/fuzz/driver/", "/fuzz/targets/", "/tools/kmgr-repro/",
	                                   "/lib/ktest/", "/lib/sched/"};
	size_t n = strlen(KREPRO_SRC_DIR);

	if (strncmp(file, KREPRO_SRC_DIR, n) != 0 || file[n] != '/')
		return false;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strstr(file + n, skip[i]))
			return false;
	return true;
}

/* The detail a kind carries: the sanitizer's bug type (first word), the
 * oracle's invariant (up to ':'), UBSan's message up to the first number
 * or quote, an assertion's expression. */
static void detail(const char *p, const char *stop_set, char *out, size_t len)
{
	size_t n = 0;

	while (p[n] && p[n] != '\n' && !strchr(stop_set, p[n]) && n + 1 < len)
		n++;
	while (n && p[n - 1] == ' ')
		n--;
	memcpy(out, p, n);
	out[n] = 0;
}

static const char *find_kind(const char *report, char *kind, size_t len)
{
	const char *best = NULL;
	size_t bi = 0;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		const char *at = strstr(report, kinds[i].needle);

		if (at && (!best || at < best)) {
			best = at;
			bi = i;
		}
	}
	if (!best)
		return NULL;
	const char *rest = best + strlen(kinds[bi].needle);
	char d[200];

	if (!kinds[bi].kind) {
		detail(rest, "(0123456789", d, sizeof(d));
		if (strstr(d, " on "))
			*strstr(d, " on ") = 0;
		snprintf(kind, len, "%s", d);
	} else if (!strcmp(kinds[bi].kind, "ORACLE")) {
		detail(rest, ":", d, sizeof(d));
		snprintf(kind, len, "ORACLE: %s", d);
	} else if (!strcmp(kinds[bi].kind, "UBSan")) {
		detail(rest, "0123456789'\"(", d, sizeof(d));
		snprintf(kind, len, "UBSan: %s", d);
	} else if (!strcmp(kinds[bi].kind, "assertion")) {
		detail(rest, "'(", d, sizeof(d));
		snprintf(kind, len, "assertion: %s", d);
	} else if (!strcmp(kinds[bi].kind, "stress check")) {
		detail(rest, ":", d, sizeof(d)); /* the invariant, as the oracle's */
		snprintf(kind, len, "stress check: %s", d);
	} else {
		snprintf(kind, len, "%s", kinds[bi].kind);
	}
	return best;
}

/* "    #3 0x55d1 in kmgr_exec /src/lib/kmgr/exec.c:115:3" */
static bool parse_frame(const char *line, char *fn, size_t fnlen, char *file, size_t flen)
{
	char f[256], s[1024];

	while (*line == ' ' || *line == '\t')
		line++;
	if (line[0] != '#' || sscanf(line, "#%*d %*s in %255s %1023s", f, s) != 2)
		return false;
	snprintf(fn, fnlen, "%s", f);
	snprintf(file, flen, "%s", s);
	return true;
}

/* The first `max` project frames of the first stack at or after `from`,
 * " < " between them. */
static void top_frames(const char *from, unsigned max, char *out, size_t len)
{
	bool in_stack = false;
	unsigned kept = 0;
	size_t used = 0;

	out[0] = 0;
	for (const char *line = from; line && *line && kept < max;) {
		const char *nl = strchr(line, '\n');
		char l[1400], fn[256], file[1024];
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		snprintf(l, sizeof(l), "%.*s", (int)(n < sizeof(l) - 1 ? n : sizeof(l) - 1), line);
		line = nl ? nl + 1 : NULL;
		if (!parse_frame(l, fn, sizeof(fn), file, sizeof(file))) {
			if (in_stack)
				break; /* the first stack is over */
			continue;
		}
		in_stack = true;
		if (!kr_project_frame(file))
			continue;
		int w = snprintf(out + used, len - used, "%s%s", kept ? " < " : "", fn);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
		kept++;
	}
}

/* A use-after-free's or double free's free site: the top two project
 * frames of the "freed by thread" stack after `at`; "" for other kinds. */
static void free_site(const char *at, const char *kind, char *out, size_t len)
{
	const char *freed = strstr(at, "freed by thread");

	out[0] = 0;
	if (freed && (strstr(kind, "use-after-free") || strstr(kind, "double-free")))
		top_frames(freed, 2, out, len);
}

/* A stall's first wait site: "    wait site: FUNC at FILE" (watchdog.c). */
static void wait_site(const char *at, char *out, size_t len)
{
	const char *w = strstr(at, "wait site: ");

	out[0] = 0;
	if (w && strncmp(w + 11, "(no lib/", 8))
		detail(w + 11, " ", out, len);
}

void kr_signature(const char *report, char *sig, size_t len)
{
	char kind[256], frames[512], freed[512];
	const char *at = find_kind(report, kind, sizeof(kind));

	sig[0] = 0;
	if (!at)
		return;
	if (!strcmp(kind, "stress stall")) {
		wait_site(at, frames, sizeof(frames));
		snprintf(sig, len, "%s%s%s", kind, frames[0] ? " at " : "", frames);
		return;
	}
	top_frames(at, 3, frames, sizeof(frames));
	free_site(at, kind, freed, sizeof(freed));
	snprintf(sig, len, "%s%s%s%s%s", kind, frames[0] ? " in " : "", frames,
	         freed[0] ? ", freed in " : "", freed);
}

void kr_bucket_key(const char *report, const char *sig, char *key, size_t len)
{
	char kind[256], freed[512], tok[256];
	const char *at = report ? find_kind(report, kind, sizeof(kind)) : NULL;

	if (at)
		free_site(at, kind, freed, sizeof(freed));
	if (at && freed[0])
		snprintf(key, len, "%s freed in %s", kind, freed);
	else if (at && (!strncmp(kind, "stress ", 7)))
		snprintf(key, len, "%s", sig);
	else if (report && kr_dedup_token(report, tok, sizeof(tok)))
		snprintf(key, len, "DEDUP_TOKEN %s", tok);
	else
		snprintf(key, len, "%s", sig);
}

/* A sanitizer's report starts with one of these (the kinds above that are
 * not the oracle's, the scheduler's or an assertion's). */
static bool sanitizer_report(const char *at)
{
	return !strncmp(at, "ERROR: ", 7) || !strncmp(at, "WARNING: ", 9) ||
	       !strncmp(at, "runtime error: ", 15);
}

bool kr_dedup_token(const char *report, char *tok, size_t len)
{
	char kind[256];
	const char *at = find_kind(report, kind, sizeof(kind));
	const char *t = at && sanitizer_report(at) ? strstr(at, "DEDUP_TOKEN: ") : NULL;

	tok[0] = 0;
	if (!t)
		return false;
	detail(t + strlen("DEDUP_TOKEN: "), "\r", tok, len);
	return tok[0] != 0;
}
