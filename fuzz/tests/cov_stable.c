/*
 * cov_stable.c - the same input takes the same edges on every run in one
 * process.  A persistent fuzzer (AFL++'s __AFL_LOOP, libFuzzer in-process)
 * runs input after input in one process; an edge whose hit count depends
 * on what ran before is "unstable" to AFL++ and a spurious feature to
 * libFuzzer.  Linked with the libFuzzer-scope libraries (kprog_fuzz,
 * nrt_fuzz: the code that carries coverage counters), this program owns
 * the counters (__sanitizer_cov_8bit_counters_init, no libFuzzer), runs
 * every shipped seed and regression input of the four program targets
 * twice in a row, the first run after all the inputs before it, and
 * compares the counters of the two runs.  A difference is printed with the
 * counter's function and line.
 *
 *   cov_stable CORPUS-DIR     (corpus/: <target>/ and regressions/<target>/)
 */
#include <dirent.h>
#include <sanitizer/common_interface_defs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/run.h"

static uint8_t *cnt_beg, *cnt_end;
static const uintptr_t *pcs_beg;

/* Every instrumented file's constructor reports the binary's one counter
 * section; libFuzzer is not linked, so these are ours. */
void __sanitizer_cov_8bit_counters_init(uint8_t *beg, uint8_t *end);
void __sanitizer_cov_pcs_init(const uintptr_t *beg, const uintptr_t *end);

void __sanitizer_cov_8bit_counters_init(uint8_t *beg, uint8_t *end)
{
	cnt_beg = beg;
	cnt_end = end;
}

void __sanitizer_cov_pcs_init(const uintptr_t *beg, const uintptr_t *end)
{
	(void)end;
	pcs_beg = beg; /* (pc, flags) per counter, in counter order */
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* One run of the input with the counters zeroed before; the counters after. */
static void run_once(const uint8_t *data, size_t len, const char *target, uint8_t *snap)
{
	memset(cnt_beg, 0, (size_t)(cnt_end - cnt_beg));
	kfuzz_run(data, len, target);
	memcpy(snap, cnt_beg, (size_t)(cnt_end - cnt_beg));
}

/* Prints the counters that differ; their number. */
static unsigned report(const char *path, const uint8_t *a, const uint8_t *b)
{
	unsigned diffs = 0;

	for (size_t i = 0; i < (size_t)(cnt_end - cnt_beg); i++) {
		char where[256] = "?";

		if (a[i] == b[i])
			continue;
		if (pcs_beg)
			__sanitizer_symbolize_pc((void *)pcs_beg[2 * i], "%f %s:%l", where,
			                         sizeof(where));
		if (diffs++ < 8)
			printf("  %s: counter %zu (%s) %u then %u\n", path, i, where, a[i], b[i]);
	}
	return diffs;
}

static int cmp_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every input of DIR (CORPUS/SUB/TARGET), in name order: 1 when one is
 * unstable.  A missing regressions/ folder is no error. */
static int check_dir(const char *corpus, const char *sub, const char *target, uint8_t *a,
                     uint8_t *b, unsigned *inputs)
{
	char dir[4096], path[8192];
	char *names[512];
	size_t n = 0;
	struct dirent *e;
	DIR *d;
	int bad = 0;

	snprintf(dir, sizeof(dir), "%s/%s%s", corpus, sub, target);
	d = opendir(dir);
	if (!d) {
		if (*sub)
			return 0;
		printf("cov_stable: no directory %s\n", dir);
		return 1;
	}
	while ((e = readdir(d)) && n < sizeof(names) / sizeof(names[0]))
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_name);
	for (size_t i = 0; i < n; i++) {
		size_t len = 0;
		uint8_t *data;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		data = read_file(path, &len);
		if (!data) {
			printf("cov_stable: cannot read %s\n", path);
			bad = 1;
		} else {
			run_once(data, len, target, a);
			run_once(data, len, target, b);
			if (report(path, a, b)) {
				printf("cov_stable: %s: unstable (above: first run, second run)\n",
				       path);
				bad = 1;
			}
			(*inputs)++;
		}
		free(data);
		free(names[i]);
	}
	return bad;
}

int main(int argc, char **argv)
{
	unsigned inputs = 0;
	uint8_t *a, *b;
	int bad = 0;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: cov_stable CORPUS-DIR\n");
		return 2;
	}
	if (!cnt_beg || cnt_end <= cnt_beg) {
		printf("cov_stable: no coverage counters in this build\n");
		return 1;
	}
	a = malloc((size_t)(cnt_end - cnt_beg));
	b = malloc((size_t)(cnt_end - cnt_beg));
	if (!a || !b)
		return 1;
	/* the targets' LLVMFuzzerInitialize: after it, an input's first run
	 * in the process must take the edges its second does */
	kfuzz_initialize();
	for (const char *const *t = kprog_targets; *t; t++)
		bad |= check_dir(argv[1], "", *t, a, b, &inputs) |
		       check_dir(argv[1], "regressions/", *t, a, b, &inputs);
	printf("cov_stable: %u inputs, %zu counters: %s\n", inputs, (size_t)(cnt_end - cnt_beg),
	       bad ? "UNSTABLE" : "every input took the same edges twice");
	free(a);
	free(b);
	return bad;
}
