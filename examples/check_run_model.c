/*
 * check_run_model.c - the oracle of the run_model example test, written
 * without the library: 'gen DIR SIZE...' writes input files in0.bin ...
 * with a fixed pattern; 'check DIR NIN SIZE... NOUT NAME:SIZE...' verifies
 * each NAME.out against the device's compute formula
 *   out_j[k] = (uint8_t)(j + 1 + sum_i in_i[k mod size_i]).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IO   8
#define MAX_SIZE 65536

static uint8_t pattern(unsigned i, unsigned k)
{
	return (uint8_t)(i * 31 + k * 7 + 1);
}

static int file_io(const char *dir, const char *name, uint8_t *buf, size_t n, int writing)
{
	char path[4096];
	FILE *f;
	size_t got;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, writing ? "wb" : "rb");
	if (!f) {
		fprintf(stderr, "check_run_model: %s: cannot open\n", path);
		return -1;
	}
	got = writing ? fwrite(buf, 1, n, f) : fread(buf, 1, n, f);
	if (!writing && fgetc(f) != EOF)
		got = 0;
	fclose(f);
	if (got != n) {
		fprintf(stderr, "check_run_model: %s: want %zu bytes\n", path, n);
		return -1;
	}
	return 0;
}

static int gen(const char *dir, int n, char **sizes)
{
	static uint8_t buf[MAX_SIZE];
	char name[32];

	for (int i = 0; i < n; i++) {
		unsigned size = (unsigned)atoi(sizes[i]);

		if (size == 0 || size > MAX_SIZE)
			return 2;
		for (unsigned k = 0; k < size; k++)
			buf[k] = pattern((unsigned)i, k);
		snprintf(name, sizeof(name), "in%d.bin", i);
		if (file_io(dir, name, buf, size, 1))
			return 1;
	}
	return 0;
}

static int check(const char *dir, int argc, char **argv)
{
	static uint8_t got[MAX_SIZE];
	unsigned in_size[MAX_IO];
	int n_in = atoi(argv[0]), n_out, bad = 0;

	if (n_in < 0 || n_in > MAX_IO || argc < n_in + 2)
		return 2;
	for (int i = 0; i < n_in; i++)
		in_size[i] = (unsigned)atoi(argv[1 + i]);
	n_out = atoi(argv[1 + n_in]);
	if (n_out < 1 || argc != n_in + 2 + n_out)
		return 2;
	for (int j = 0; j < n_out; j++) {
		char name[300];
		char *colon = strrchr(argv[2 + n_in + j], ':');
		unsigned size = colon ? (unsigned)atoi(colon + 1) : 0;

		if (!colon || size == 0 || size > MAX_SIZE)
			return 2;
		snprintf(name, sizeof(name), "%.*s.out", (int)(colon - argv[2 + n_in + j]),
		         argv[2 + n_in + j]);
		if (file_io(dir, name, got, size, 0))
			return 1;
		for (unsigned k = 0; k < size; k++) {
			unsigned s = (unsigned)j + 1;

			for (int i = 0; i < n_in; i++)
				s += pattern((unsigned)i, k % in_size[i]);
			if (got[k] != (uint8_t)s) {
				fprintf(stderr, "check_run_model: %s[%u] = %u, want %u\n", name, k,
				        got[k], (uint8_t)s);
				bad = 1;
				break;
			}
		}
	}
	if (!bad)
		printf("check_run_model: %d outputs match the compute formula\n", n_out);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "gen") == 0)
		return gen(argv[2], argc - 3, argv + 3);
	if (argc >= 5 && strcmp(argv[1], "check") == 0)
		return check(argv[2], argc - 3, argv + 3);
	fprintf(stderr, "usage: check_run_model gen DIR SIZE... | check DIR NIN SIZE... NOUT "
	                "NAME:SIZE...\n");
	return 2;
}
