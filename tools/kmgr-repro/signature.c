/*
 * signature.c - a crash signature from a child's stderr, the way
 * ClusterFuzz buckets crashes: the report kind plus the top three frames
 * of the library (lib/base, emu, kmgr, model, nrt) in the first stack
 * after it: compiler-rt, libc, libFuzzer, the fuzz drivers, the harness,
 * the oracle, the stress binaries and this tool dropped, and lib/sched
 * too: the sync layer is the runtime here (its failure path and inlined
 * atomics would otherwise fill every KSCHED signature).  A TSan report:
 * two frames of each of its two accesses.  An oracle failure: its check
 * and the operation it names (the stack is the checker's own).  A stall:
 * its wait site.  Functions only, no line numbers, so that an unrelated
 * edit does not split a bucket.
 *
 * The bucket key (kr_bucket_key) is what triage groups by.  A
 * use-after-free or double free is keyed by its crash state: the type and
 * the top three library frames of the bad access (ASan's READ/WRITE stack,
 * TSan's access that is not the free), so ASan and TSan name one
 * use-after-free alike, a TSan race whose one access is the free
 * included.  Not by the free site: it merged two bugs that free one
 * object at one place and read it at two (fuzz-1's exec without a
 * reference, fuzz-7's read after the release), and it split one read of
 * one line when the two sanitizers caught two objects freed by one
 * teardown (the model in kmgr_unstage_kelf_model, its kelf stage in
 * dlr_kelf_unstage).  The free site stays in the signature.  Any other
 * report is keyed by its crash state (type and
 * the library's frames, not the harness's or a stress binary's: a bug
 * found by fuzzing and by stress is one bucket); a report whose stack
 * holds no library frame by its DEDUP_TOKEN, else its signature.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "repro.h"

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

/* A frame is the project's when its file is under one of the library's
 * folders, found by the path's own folders (lib/kmgr/exec.c at any root):
 * no build-tree path is compiled in, and a build of another commit,
 * elsewhere (bisect's cache), or an installed tool's reports sign alike.
 * lib/sched is the runtime here; the harness, the oracle, the runner,
 * the drivers, the stress binaries and this tool are what calls the
 * facade, not the facade (a bug found by fuzzing and by stress gets one
 * state). */
bool kr_project_frame(const char *file)
{
	static const char *const dirs[] = {"lib/base/", "lib/emu/", "lib/kmgr/", "lib/model/",
	                                   "lib/nrt/"};

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		const char *at = strstr(file, dirs[i]);

		/* the last "lib/" of the path decides: /x/lib/fuzz/lib/kmgr/ is lib/kmgr */
		while (at && strstr(at + 1, dirs[i]))
			at = strstr(at + 1, dirs[i]);
		if (at && (at == file || at[-1] == '/'))
			return !strstr(at + strlen(dirs[i]),
			               "/lib/"); /* a deeper lib/ is not ours */
	}
	return false;
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

/* A stress check's message with its numbers as N (hex ones as 0xN): the
 * model, job and sequence numbers of one failed check change from run to
 * run ("nrt_unload of model 17 returned NRT_FAILURE"), and a bucket keyed
 * by them split one bug into a bucket a night. */
static void numbers_as_n(char *s)
{
	char *out = s;

	for (const char *p = s; *p;) {
		if (p[0] == '0' && p[1] == 'x' && isxdigit((unsigned char)p[2])) {
			p += 2;
			while (isxdigit((unsigned char)*p))
				p++;
			memcpy(out, "0xN", 3);
			out += 3;
		} else if (isdigit((unsigned char)*p)) {
			while (isdigit((unsigned char)*p))
				p++;
			*out++ = 'N';
		} else {
			*out++ = *p++;
		}
	}
	*out = 0;
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
	/* a stress binary's own check that saw the symptom first ("CHECK
	 * FAILED: kmgr_exec returned NRT_INVALID") gives way to the
	 * sanitizer's report of the cause that follows it in the log */
	if (kinds[bi].kind && !strcmp(kinds[bi].kind, "stress check")) {
		const char *san = NULL;
		size_t si = 0;

		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			const char *at = strstr(report, kinds[i].needle);

			if (at && strstr(kinds[i].needle, "Sanitizer") && (!san || at < san)) {
				san = at;
				si = i;
			}
		}
		if (san) {
			best = san;
			bi = si;
		}
	}
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
		numbers_as_n(d);
		snprintf(kind, len, "stress check: %s", d);
	} else {
		snprintf(kind, len, "%s", kinds[bi].kind);
	}
	return best;
}

/* A frame line, either sanitizer's:
 *   ASan/UBSan/MSan "    #3 0x55d1 in kmgr_exec /src/lib/kmgr/exec.c:115:3"
 *   TSan            "    #0 kmgr_exec /src/lib/kmgr/exec.c:115:3 (bin+0x12)"
 * A "#N" line that names no function (a module offset only) is still a
 * frame of the stack (fn and file ""), not its end. */
static bool parse_frame(const char *line, char *fn, size_t fnlen, char *file, size_t flen)
{
	char t1[256] = "", t2[1024] = "", t3[256] = "", t4[1024] = "";
	int n;

	while (*line == ' ' || *line == '\t')
		line++;
	if (line[0] != '#' || line[1] < '0' || line[1] > '9')
		return false;
	fn[0] = file[0] = 0;
	n = sscanf(line, "#%*d %255s %1023s %255s %1023s", t1, t2, t3, t4);
	if (n >= 3 && !strncmp(t1, "0x", 2) && !strcmp(t2, "in")) {
		snprintf(fn, fnlen, "%s", t3);
		snprintf(file, flen, "%s", n == 4 ? t4 : "");
	} else if (n >= 2 && strncmp(t1, "0x", 2)) {
		snprintf(fn, fnlen, "%s", t1);
		snprintf(file, flen, "%s", t2);
	}
	return true;
}

/* The report's next line, from *cur (which moves past it): 1 a frame
 * (fn and file as parse_frame gives them), 0 another line, -1 the end. */
static int next_frame(const char **cur, char *fn, size_t fnlen, char *file, size_t flen)
{
	const char *line = *cur, *nl;
	char l[1400];
	size_t n;

	if (!line || !*line)
		return -1;
	nl = strchr(line, '\n');
	n = nl ? (size_t)(nl - line) : strlen(line);
	snprintf(l, sizeof(l), "%.*s", (int)(n < sizeof(l) - 1 ? n : sizeof(l) - 1), line);
	*cur = nl ? nl + 1 : NULL;
	return parse_frame(l, fn, fnlen, file, flen) ? 1 : 0;
}

/* The first `max` project frames of the first stack at or after `from`,
 * " < " between them; the end of that stack (NULL: the report's end). */
enum { KR_NO_ALLOC = 1, KR_SCHED = 2 };

static bool under_sched(const char *file)
{
	const char *at = strstr(file, "lib/sched/");

	return at && (at == file || at[-1] == '/');
}

static const char *top_frames_of(const char *from, unsigned max, unsigned flags, char *out,
                                 size_t len)
{
	bool in_stack = false;
	unsigned kept = 0;
	size_t used = 0;
	const char *line = from, *at;
	char fn[256], file[1024];
	int r;

	out[0] = 0;
	while (at = line, (r = next_frame(&line, fn, sizeof(fn), file, sizeof(file))) >= 0) {
		if (!r) {
			if (in_stack)
				return at; /* the first stack is over */
			continue;
		}
		in_stack = true;
		if (kept >= max || !fn[0] ||
		    !(kr_project_frame(file) || ((flags & KR_SCHED) && under_sched(file))) ||
		    ((flags & KR_NO_ALLOC) && strstr(file, "lib/base/kalloc.c")))
			continue;
		int w = snprintf(out + used, len - used, "%s%s", kept ? " < " : "", fn);
		if (w < 0 || (size_t)w >= len - used)
			continue;
		used += (size_t)w;
		kept++;
	}
	return NULL;
}

static const char *top_frames(const char *from, unsigned max, char *out, size_t len)
{
	return top_frames_of(from, max, 0, out, len);
}

/* A use-after-free's or double free's free site: the top two project
 * frames of the "freed by thread" stack after `at` (ASan), or of TSan's
 * second stack, "Previous write ... by thread", which is the free; the
 * allocator's wrapper (lib/base/kalloc.c: kfree, inlined in one build and
 * not in another) left out, so that ASan and TSan name one free site.
 * "" for other kinds. */
static void free_site(const char *at, const char *kind, char *out, size_t len)
{
	const char *freed = strstr(at, "freed by thread");

	out[0] = 0;
	if (!freed && strstr(at, "ThreadSanitizer: heap-use-after-free"))
		freed = strstr(at, "Previous write of size");
	if (freed && (strstr(kind, "use-after-free") || strstr(kind, "double-free")))
		top_frames_of(freed, 2, KR_NO_ALLOC, out, len);
}

/* Whether the stack at `from` is a free: its first frame is free() or
 * the allocator's wrapper (lib/base/kalloc.c). */
static bool stack_frees(const char *from)
{
	char fn[256], file[1024];
	const char *line = from;
	int r;

	while ((r = next_frame(&line, fn, sizeof(fn), file, sizeof(file))) >= 0)
		if (r)
			return !strcmp(fn, "free") || !strcmp(fn, "kfree") ||
			       strstr(file, "lib/base/kalloc.c") != NULL;
	return false;
}

/* A TSan data race one of whose two accesses is the free of the object
 * is a use-after-free that TSan saw before the free finished (ASan, or
 * TSan on another schedule, reports it as heap-use-after-free): its free
 * site, the top two library frames of that stack without the allocator,
 * as free_site's, and its use site, the top three library frames of the
 * other access; both "" for any other race. */
static void race_free_site(const char *at, char *out, size_t len, char *use, size_t ulen)
{
	char a[256];
	const char *second = top_frames(at, 0, a, sizeof(a));

	out[0] = use[0] = 0;
	if (stack_frees(at)) {
		top_frames_of(at, 2, KR_NO_ALLOC, out, len);
		if (second)
			top_frames_of(second, 3, KR_NO_ALLOC, use, ulen);
	} else if (second && stack_frees(second)) {
		top_frames_of(second, 2, KR_NO_ALLOC, out, len);
		top_frames_of(at, 3, KR_NO_ALLOC, use, ulen);
	}
}

/* A stall's wait site (watchdog.c): "    wait site: TOP at FILE[, in
 * CALLER at FILE]": the caller (the facade function that waits) when the
 * line names one, else the top.  The first thread with a wait site in the
 * library decides. */
static void wait_site(const char *at, char *out, size_t len)
{
	const char *w = strstr(at, "wait site: ");

	out[0] = 0;
	while (w && !strncmp(w + 11, "(no lib/", 8))
		w = strstr(w + 11, "wait site: ");
	if (!w)
		return;
	const char *eol = strchr(w, '\n'), *in = strstr(w, ", in ");

	if (in && (!eol || in < eol))
		detail(in + 5, " ", out, len);
	else
		detail(w + 11, " ", out, len);
}

/* An oracle failure's operation: "ORACLE: check: op N WHAT ...", "op N
 * (WHAT) ...", "after WHAT ...", "WHAT returned ..." or "WHAT of model
 * ..." (fuzz/oracle's lines today); "" when the line names none. */
static void oracle_op(const char *at, char *out, size_t len)
{
	const char *colon = strchr(at + 8, ':'), *eol = strchr(at, '\n');
	unsigned op;
	int n = 0;

	out[0] = 0;
	if (!colon || (eol && colon > eol))
		return;
	colon += 1 + strspn(colon + 1, " ");
	if (sscanf(colon, "op %u %n", &op, &n) == 1 && n)
		detail(colon + n + (colon[n] == '('), " :,)", out, len); /* "op 4 (nrt_unload)" */
	else if (!strncmp(colon, "after ", 6))
		detail(colon + 6, " :,", out, len);
	else if ((n = (int)strcspn(colon, " :\n")) > 0 &&
	         (!strncmp(colon + n, " returned", 9) || !strncmp(colon + n, " of model", 9)))
		detail(colon, " ", out, len); /* "load returned id 3", "unload of model 2" */
}

/* Whether the first library-or-scheduler frame of the first stack after
 * `at` is lib/sched's: then the fault is the framework's (the scheduler
 * the fuzz builds run the facade on), not the facade's, and its state
 * keeps lib/sched's frames, which the facade's states leave out.  Without
 * this a race inside lib/sched (a thread slot's counters, 2026-12-04)
 * was filed as a race in the facade function it interrupted. */
static bool sched_fault(const char *at)
{
	const char *line = at;
	bool in_stack = false;
	char fn[256], file[1024];
	int r;

	while ((r = next_frame(&line, fn, sizeof(fn), file, sizeof(file))) >= 0) {
		if (!r) {
			if (in_stack)
				return false;
			continue;
		}
		in_stack = true;
		if (under_sched(file))
			return true;
		if (kr_project_frame(file))
			return false;
	}
	return false;
}

/* The crash state (ClusterFuzz's): the type, and the frames that place
 * it.  TSan reports (a race, a use-after-free it saw, a lock-order
 * inversion) have two stacks, the two accesses: two frames of each, " vs "
 * between them, so that two races are two states. */
static bool crash_state(const char *report, char *kind, size_t klen, char *frames, size_t flen,
                        const char **sep)
{
	const char *at = find_kind(report, kind, klen);

	frames[0] = 0;
	*sep = " in ";
	if (!at)
		return false;
	if (!strcmp(kind, "stress stall")) {
		wait_site(at, frames, flen);
		*sep = " at ";
	} else if (!strncmp(kind, "ORACLE: ", 8)) {
		oracle_op(at, frames, flen);
	} else if (sched_fault(at)) {
		/* "framework: data race in ks_ctl_mem_access < ... vs ..." */
		char k[256];
		const char *end = top_frames_of(at, 3, KR_SCHED, frames, flen);

		snprintf(k, sizeof(k), "framework: %s", kind);
		snprintf(kind, klen, "%s", k);
		if (end && strstr(at, "ThreadSanitizer: ") == at + 9 &&
		    !strncmp(at, "WARNING", 7)) {
			char a[256], b[256];

			top_frames_of(at, 2, KR_SCHED, a, sizeof(a));
			top_frames_of(end, 2, KR_SCHED, b, sizeof(b));
			snprintf(frames, flen, "%s%s%s", a, a[0] && b[0] ? " vs " : "", b);
		}
	} else if (strstr(at, "ThreadSanitizer: ") == at + 9) {
		/* a TSan WARNING (race, use-after-free, lock order) has two
		 * stacks; an ERROR (SEGV, a deadly signal) one, the faulting
		 * one, as ASan's: the branch below (after it, a fuzz crash has
		 * libFuzzer's "deadly signal" stack, not a second access) */
		char a[256], b[256];
		const char *end = top_frames(at, 2, a, sizeof(a));

		b[0] = 0;
		if (end)
			top_frames(end, 2, b, sizeof(b));
		snprintf(frames, flen, "%s%s%s", a, a[0] && b[0] ? " vs " : "", b);
	} else {
		top_frames(at, 3, frames, flen);
	}
	return true;
}

void kr_crash_state(const char *report, char *type, size_t tlen, char *frames, size_t flen)
{
	const char *sep;

	type[0] = 0;
	if (report && crash_state(report, type, tlen, frames, flen, &sep))
		return;
	type[0] = frames[0] = 0;
}

void kr_signature(const char *report, char *sig, size_t len)
{
	char kind[256], raw[256], frames[512], freed[512];
	const char *sep, *at;

	sig[0] = 0;
	if (!crash_state(report, kind, sizeof(kind), frames, sizeof(frames), &sep))
		return;
	/* the report's own kind, for the free site: the state's may say more
	 * ("framework: ...") */
	at = find_kind(report, raw, sizeof(raw));
	free_site(at, raw, freed, sizeof(freed));
	snprintf(sig, len, "%s%s%s%s%s", kind, frames[0] ? sep : "", frames,
	         freed[0] ? ", freed in " : "", freed);
}

/* A race's key: its two accesses in a fixed order, "A vs B" and "B vs A"
 * being one race that TSan reported from either side (which thread it
 * caught second decides the order). */
static void race_key(const char *kind, const char *frames, char *key, size_t len)
{
	char a[512];
	const char *vs = strstr(frames, " vs "), *b = vs + 4;

	snprintf(a, sizeof(a), "%.*s", (int)(vs - frames), frames);
	if (strcmp(a, b) > 0)
		snprintf(key, len, "%s in %s vs %s", kind, b, a);
	else
		snprintf(key, len, "%s in %s vs %s", kind, a, b);
}

void kr_bucket_key(const char *report, const char *sig, char *key, size_t len)
{
	char kind[256], freed[512], use[256] = "", frames[512], tok[256];
	const char *at = report ? find_kind(report, kind, sizeof(kind)) : NULL;

	if (at)
		free_site(at, kind, freed, sizeof(freed));
	/* the bad access: the first stack's top three library frames (ASan's
	 * READ or WRITE, TSan's first access; the free's own stack is later) */
	if (at && freed[0])
		top_frames_of(at, 3, KR_NO_ALLOC, use, sizeof(use));
	if (at)
		kr_crash_state(report, kind, sizeof(kind), frames, sizeof(frames));
	if (at && !freed[0] && !strcmp(kind, "data race") &&
	    strstr(at, "ThreadSanitizer: data race")) {
		race_free_site(at, freed, sizeof(freed), use, sizeof(use));
		if (freed[0])
			snprintf(kind, sizeof(kind), "heap-use-after-free");
	}
	if (at && freed[0] && use[0])
		snprintf(key, len, "%s in %s", kind, use);
	else if (at && freed[0])
		snprintf(key, len, "%s freed in %s", kind, freed);
	else if (at && (!strcmp(kind, "data race") || !strcmp(kind, "framework: data race")) &&
	         strstr(frames, " vs "))
		race_key(kind, frames, key, len);
	else if (at &&
	         (frames[0] || strncmp(kind, "ORACLE: ", 8) == 0 || !strncmp(kind, "stress ", 7)))
		snprintf(key, len, "%s", sig); /* the crash state: fuzz and stress alike */
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
