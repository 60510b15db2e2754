/*
 * input.c - reading a finding: at most 1 MiB, classified as a stress repro
 * file ("binary stress_X" line), a program in text form (first word
 * "config", "t0" or a '#' header) or, for everything else, a binary fuzz
 * input, which always decodes (every byte string is a program, by design of
 * fuzz/prog).  The target comes from --target, the text header, or the
 * path (a component named after a target), else "concurrent".
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kfile.h"
#include "repro.h"

#define HEADER "# kmgr-repro target="

bool kr_is_target(const char *name)
{
	if (!strcmp(name, "model_parse"))
		return true;
	for (const char *const *t = kprog_targets; *t; t++)
		if (!strcmp(*t, name))
			return true;
	return false;
}

static int read_file(kr_input_t *in, const char *path)
{
	struct stat st;
	FILE *f;
	size_t n;

	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "kmgr-repro: %s is not a regular file\n", path);
		return -1;
	}
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "kmgr-repro: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	in->data = malloc(KR_MAX_FILE + 1);
	if (!in->data) {
		fclose(f);
		fprintf(stderr, "kmgr-repro: out of memory reading %s\n", path);
		return -1;
	}
	n = fread(in->data, 1, KR_MAX_FILE + 1, f);
	if (ferror(f)) { /* not "empty" or a short input: say why */
		int err = errno;

		fclose(f);
		fprintf(stderr, "kmgr-repro: cannot read %s: %s\n", path, strerror(err));
		return -1;
	}
	fclose(f);
	if (n > KR_MAX_FILE) {
		fprintf(stderr, "kmgr-repro: %s is larger than the 1 MiB limit\n", path);
		return -1;
	}
	if (n == 0) {
		fprintf(stderr, "kmgr-repro: %s is empty\n", path);
		return -1;
	}
	in->data[n] = 0;
	in->size = n;
	return 0;
}

/* Does a path component name target t: "t", or "...-t" / "..._t" (a
 * fuzz_t build target, a w-t work dir)? */
static bool names(const char *comp, const char *t)
{
	size_t n = strlen(comp), m = strlen(t);

	if (!strcmp(comp, t))
		return true;
	return n > m && !strcmp(comp + n - m, t) &&
	       (comp[n - m - 1] == '-' || comp[n - m - 1] == '_');
}

static const char *const all_targets[] = {"api_seq", "concurrent", "async",
                                          "faults",  "api_nrt",    "model_parse"};

/* Does the file name hold a target as a word between '-', '_' or '.'
 * (ClusterFuzz's clusterfuzz-testcase-minimized-<fuzzer>-<id>, a name like
 * concurrent-min.bin)?  Hex digests cannot spell a target. */
static bool name_holds(const char *base, const char *t)
{
	size_t m = strlen(t);

	for (const char *p = strstr(base, t); p; p = strstr(p + 1, t)) {
		bool left = p == base || strchr("-_.", p[-1]);
		bool right = !p[m] || strchr("-_.", p[m]);

		if (left && right)
			return true;
	}
	return false;
}

/* A path component that names a target: corpus/regressions/<t>/x,
 * libFuzzer's work dir fuzz-work/<preset>/<t>/artifacts/crash-x, AFL's
 * <out>/<t>/crashes/id:x; the nearest component wins; then the file's own
 * name. */
bool kr_path_target(const char *path, char *out, size_t len)
{
	char buf[4096];
	char *comp[128];
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = strtok(buf, "/"); s && n < 128; s = strtok(NULL, "/"))
		comp[n++] = s;
	for (int i = n - 1; i >= 0; i--)
		for (size_t k = 0; k < sizeof(all_targets) / sizeof(all_targets[0]); k++)
			if (i == n - 1 ? name_holds(comp[i], all_targets[k])
			               : names(comp[i], all_targets[k])) {
				snprintf(out, len, "%s", all_targets[k]);
				return true;
			}
	return false;
}

static bool is_text(const kr_input_t *in)
{
	for (size_t i = 0; i < in->size; i++) {
		unsigned char ch = in->data[i];

		if (!isprint(ch) && !isspace(ch))
			return false;
	}
	return true;
}

static const char *first_word(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

static int load_stress(kr_input_t *in)
{
	const char *s = (const char *)in->data;
	const char *b = strncmp(s, "binary ", 7) ? strstr(s, "\nbinary ") : s - 1;
	size_t n = 0;

	if (!b) {
		fprintf(stderr,
		        "kmgr-repro: %s: a stress repro file without a 'binary' line "
		        "(truncated?)\n",
		        in->path);
		return -1;
	}
	b += 8;
	while (n + 1 < sizeof(in->stress_bin) && (isalnum((unsigned char)b[n]) || b[n] == '_'))
		n++;
	memcpy(in->stress_bin, b, n);
	in->stress_bin[n] = 0;
	if (strncmp(in->stress_bin, "stress_", 7) != 0 || (b[n] != '\n' && b[n] != 0)) {
		fprintf(stderr, "kmgr-repro: %s: 'binary' names no stress binary\n", in->path);
		return -1;
	}
	in->kind = KR_STRESS;
	snprintf(in->target, sizeof(in->target), "%s", in->stress_bin);
	return 0;
}

/* "# kmgr-repro target=NAME" as the first line. */
static int header_target(kr_input_t *in, char *t, size_t len)
{
	const char *s = (const char *)in->data;
	size_t n = 0;

	if (strncmp(s, HEADER, strlen(HEADER)) != 0)
		return 0;
	s += strlen(HEADER);
	while (n + 1 < len && (isalnum((unsigned char)s[n]) || s[n] == '_')) {
		t[n] = s[n];
		n++;
	}
	t[n] = 0;
	if (!kr_is_target(t) || !strcmp(t, "model_parse")) {
		fprintf(stderr, "kmgr-repro: %s: header names no program target\n", in->path);
		return -1;
	}
	return 1;
}

static int pick_target(kr_input_t *in, const char *target, const char *header)
{
	if (target && !kr_is_target(target)) {
		fprintf(stderr,
		        "kmgr-repro: unknown target '%s' (api_seq, concurrent, async, "
		        "faults, model_parse)\n",
		        target);
		return -1;
	}
	if (target && header && strcmp(target, header) != 0) {
		fprintf(stderr, "kmgr-repro: %s is a %s program, not a %s one\n", in->path, header,
		        target);
		return -1;
	}
	if (target || header) {
		snprintf(in->target, sizeof(in->target), "%s", target ? target : header);
		in->target_from = target ? "--target" : "header";
		return 0;
	}
	in->target_guessed = true;
	in->target_from = "path";
	if (kr_path_target(in->path, in->target, sizeof(in->target)))
		return 0;
	/* No default: replayed under the wrong target a crash file gives a
	 * false "not reproduced". */
	fprintf(stderr,
	        "kmgr-repro: %s: which target? Neither its path nor its name names one; give "
	        "--target (api_seq, concurrent, async, faults, api_nrt, model_parse)\n",
	        in->path);
	return -1;
}

static int load_program(kr_input_t *in, const char *target)
{
	char header[32], err[256];
	int h = header_target(in, header, sizeof(header));
	const char *w = first_word((const char *)in->data);
	bool text = h > 0 || (is_text(in) &&
	                      (!strncmp(w, "config", 6) || !strncmp(w, "t0 ", 3) || w[0] == '#'));

	if (h < 0 || pick_target(in, target, h > 0 ? header : NULL))
		return -1;
	if (!strcmp(in->target, "model_parse")) {
		in->kind = KR_MODEL;
		return 0;
	}
	in->kind = KR_PROGRAM;
	in->prog = calloc(1, sizeof(*in->prog));
	if (!in->prog)
		return -1;
	in->text = text;
	if (!text) {
		kprog_decode(in->data, in->size, in->prog);
	} else if (kprog_parse((const char *)in->data, in->prog, err, sizeof(err))) {
		fprintf(stderr, "kmgr-repro: %s: not a program: %s\n", in->path, err);
		return -1;
	}
	kprog_shape(in->target, in->prog);
	return 0;
}

static int load(kr_input_t *in, const char *path, const char *target)
{
	if (read_file(in, path))
		return -1;
	if (!strncmp((const char *)in->data, "# kmgr-fuzz stress reproducer", 29) ||
	    (is_text(in) && !strncmp((const char *)in->data, "binary stress_", 14))) {
		if (target) {
			fprintf(stderr,
			        "kmgr-repro: %s is a stress repro file, --target does not "
			        "apply\n",
			        path);
			return -1;
		}
		return load_stress(in);
	}
	return load_program(in, target);
}

/* On failure everything is released: callers free only what loaded. */
int kr_input_load(kr_input_t *in, const char *path, const char *target)
{
	memset(in, 0, sizeof(*in));
	in->path = path;
	if (load(in, path, target) == 0)
		return 0;
	kr_input_free(in);
	return -1;
}

void kr_input_free(kr_input_t *in)
{
	free(in->data);
	free(in->prog);
	memset(in, 0, sizeof(*in));
}

int kr_write_program(const char *path, const kprog_t *p, const char *target, bool text)
{
	static char buf[1 << 18];
	size_t n;
	kfile_t kf;

	if (!kfile_open(&kf, path)) {
		fprintf(stderr, "kmgr-repro: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (text) {
		fprintf(kf.f, HEADER "%s\n", target);
		n = kprog_print(p, buf, sizeof(buf));
	} else {
		n = kprog_encode(p, (uint8_t *)buf, sizeof(buf));
	}
	if (n >= sizeof(buf)) {
		kfile_abort(&kf);
		fprintf(stderr, "kmgr-repro: cannot write %s: the program is too large\n", path);
		return -1;
	}
	fwrite(buf, 1, n, kf.f); /* an error stays in the stream for kfile_commit */
	if (kfile_commit(&kf)) {
		fprintf(stderr, "kmgr-repro: cannot write %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

bool kr_has_header(const char *path)
{
	char line[64] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	fclose(f);
	return !strncmp(line, HEADER, strlen(HEADER)) || !strncmp(line, "binary stress_", 14);
}
