/*
 * replay_files.c - runs LLVMFuzzerTestOneInput over files and directories
 * (one level deep, sorted), the way OpenSSL's test-corpus.c does: the
 * replay main, and the AFL++ binary when given arguments.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int kfuzz_replay_main(int argc, char **argv);

/* The largest input replayed: far above any a campaign writes (libFuzzer's
 * -max_len is KiB, the corpus's largest file a few KiB), far below a stray
 * disk image, which was read whole (1 GiB: 136 s, 2.1 GB of memory) before
 * the target looked at its first bytes.  A larger file is one line. */
#define REPLAY_MAX_BYTES (16u << 20)

/* The whole of f into *buf, read to its end rather than sized by seeking
 * (a file of /proc says 0 bytes, and its read may fail): 0, or an errno. */
static int read_all(FILE *f, uint8_t **buf, size_t *len)
{
	size_t cap = 0, n;

	*buf = NULL;
	*len = 0;
	do {
		if (*len > REPLAY_MAX_BYTES) /* a file that says 0 bytes (/proc) */
			return EFBIG;
		if (*len == cap) {
			uint8_t *grown = realloc(*buf, cap ? cap * 2 : 4096);

			if (!grown)
				return ENOMEM;
			*buf = grown;
			cap = cap ? cap * 2 : 4096;
		}
		n = fread(*buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n);
	return ferror(f) ? (errno ? errno : EIO) : 0;
}

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
	uint8_t *buf;
	size_t len;
	int err;

	if (!f) {
		fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!fstat(fileno(f), &st) && st.st_size > (off_t)REPLAY_MAX_BYTES) {
		fprintf(stderr, "replay: %s is %lld bytes, more than %u MiB: not a fuzz input\n",
		        path, (long long)st.st_size, REPLAY_MAX_BYTES >> 20);
		fclose(f);
		return -1;
	}
	errno = 0;
	err = read_all(f, &buf, &len);
	fclose(f);
	if (err == EFBIG) {
		fprintf(stderr, "replay: %s is more than %u MiB: not a fuzz input\n", path,
		        REPLAY_MAX_BYTES >> 20);
		free(buf);
		return -1;
	}
	if (err) {
		fprintf(stderr, "replay: cannot read %s: %s\n", path, strerror(err));
		free(buf);
		return -1;
	}
	fprintf(stderr, "replay: %s\n", path);
	LLVMFuzzerTestOneInput(buf, len);
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
		fprintf(stderr, "replay: cannot read directory %s: %s\n", dir, strerror(errno));
		return -1;
	}
	qsort(ents, (size_t)count, sizeof(*ents), cmp);
	for (int i = 0; i < count; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (ents[i]->d_name[0] != '.' && !stat(path, &st) && S_ISREG(st.st_mode)) {
			if (run_file(path)) /* counted only when it ran */
				rc = -1;
			else
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
			fprintf(stderr, "replay: cannot open %s: %s\n", argv[i], strerror(errno));
			rc = -1;
		} else if (S_ISDIR(st.st_mode)) {
			rc |= run_dir(argv[i], &n);
		} else if (!S_ISREG(st.st_mode)) { /* a FIFO would wait for a writer */
			fprintf(stderr, "replay: %s is not a regular file or a directory\n",
			        argv[i]);
			rc = -1;
		} else {
			if (run_file(argv[i]))
				rc = -1;
			else
				n++;
		}
	}
	if (n || !rc) /* nothing ran: the error lines said why */
		fprintf(stderr, "replay: %u inputs, %s\n", n, rc ? "with errors" : "ok");
	return rc ? 1 : 0;
}
