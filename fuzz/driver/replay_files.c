/*
 * replay_files.c - runs LLVMFuzzerTestOneInput over files and directories
 * (one level deep, sorted), the way OpenSSL's test-corpus.c does: the
 * replay main, and the AFL++ binary when given arguments.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int kfuzz_replay_main(int argc, char **argv);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf || (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
		fprintf(stderr, "replay: cannot read %s\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(buf, (size_t)(len > 0 ? len : 0));
	free(buf);
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, unsigned *n)
{
	struct dirent **ents;
	int count = scandir(dir, &ents, NULL, NULL), rc = 0;

	if (count < 0) {
		fprintf(stderr, "replay: cannot read directory %s\n", dir);
		return -1;
	}
	qsort(ents, (size_t)count, sizeof(*ents), cmp);
	for (int i = 0; i < count; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (ents[i]->d_name[0] != '.' && !stat(path, &st) && S_ISREG(st.st_mode)) {
			rc |= run_file(path);
			(*n)++;
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

/* --help: usage on stdout, 0; any other option: one line, 2; -1: files
 * only (a name starting with '-' is an option here: ./-x for such a file). */
static int replay_options(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf(
			    "usage: %s FILE|DIR...\nRuns the fuzz target once on each file, and on "
			    "each regular file of each DIR (sorted).\n",
			    argv[0]);
			return 0;
		}
		if (argv[i][0] == '-') {
			fprintf(stderr,
			        "replay: unknown option %s (FILE|DIR... only; see --help)\n",
			        argv[i]);
			return 2;
		}
	}
	return -1;
}

int kfuzz_replay_main(int argc, char **argv)
{
	unsigned n = 0;
	int rc = replay_options(argc, argv);

	if (rc >= 0)
		return rc;
	rc = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st)) {
			fprintf(stderr, "replay: no such file %s\n", argv[i]);
			rc = -1;
		} else if (S_ISDIR(st.st_mode)) {
			rc |= run_dir(argv[i], &n);
		} else if (!S_ISREG(st.st_mode)) { /* a FIFO would wait for a writer */
			fprintf(stderr, "replay: %s is not a regular file or a directory\n",
			        argv[i]);
			rc = -1;
		} else {
			rc |= run_file(argv[i]);
			n++;
		}
	}
	if (n || !rc) /* nothing ran: the error lines said why */
		fprintf(stderr, "replay: %u inputs, %s\n", n, rc ? "with errors" : "ok");
	return rc ? 1 : 0;
}
