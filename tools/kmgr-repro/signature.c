/*
 * signature.c - a crash signature from a child's stderr, the way
 * ClusterFuzz buckets crashes: the report kind plus the top three project
 * frames of the first stack after it, with compiler-rt, libc, libFuzzer,
 * the fuzz drivers and this tool dropped, and lib/sched too: the sync
 * layer is the runtime here (its failure path and inlined atomics would
 * otherwise fill every KSCHED signature).  Functions only, no line
 * numbers, so that an unrelated edit does not split a bucket.
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

static void top_frames(const char *from, char *out, size_t len)
{
	bool in_stack = false;
	unsigned kept = 0;
	size_t used = 0;

	out[0] = 0;
	for (const char *line = from; line && *line && kept < 3;) {
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

void kr_signature(const char *report, char *sig, size_t len)
{
	char kind[256], frames[512];
	const char *at = find_kind(report, kind, sizeof(kind));

	sig[0] = 0;
	if (!at)
		return;
	top_frames(at, frames, sizeof(frames));
	if (frames[0])
		snprintf(sig, len, "%s in %s", kind, frames);
	else
		snprintf(sig, len, "%s", kind);
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
