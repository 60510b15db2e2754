/*
 * kprog.c - `kprog`: programs between their two forms, and a runner.
 *   kprog print FILE           binary program (a fuzz input) -> text
 *   kprog parse TEXT OUT       text -> binary (how corpus seeds are made)
 *   kprog run FILE [--free] [-v] [--text] [--repeat N] [--target T]
 *                              run it (N times) with the oracle; print the
 *                              result, runs per second and the scheduler's
 *                              decision trace; --target shapes the program
 *                              as that fuzz target does (threads, mode,
 *                              faults) before it runs
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/knum.h"
#include "harness/run.h"
#include "kfile.h"
#include "sched/ksched.h"

static kprog_t prog;
static char text[1 << 18];
static uint8_t bytes[1 << 17];

static long slurp(const char *path, void *buf, size_t cap)
{
	FILE *f = kfile_open_input(path);
	size_t n;

	if (!f) {
		fprintf(stderr, "kprog: cannot open %s: %s\n", path, kfile_input_error(errno));
		return -1;
	}
	n = fread(buf, 1, cap, f);
	if (ferror(f)) {
		int err = errno;

		fprintf(stderr, "kprog: cannot read %s: %s\n", path, strerror(err));
		fclose(f);
		return -1;
	}
	if (!feof(f)) {
		fprintf(stderr, "kprog: %s is larger than %zu bytes\n", path, cap);
		fclose(f);
		return -1;
	}
	fclose(f);
	return (long)n;
}

static int load_program(const char *path, bool is_text)
{
	char err[256];
	long n = is_text ? slurp(path, text, sizeof(text) - 1) : slurp(path, bytes, sizeof(bytes));

	if (n < 0)
		return -1;
	if (!is_text) {
		kprog_decode(bytes, (size_t)n, &prog);
		return 0;
	}
	text[n] = 0;
	if (kprog_parse(text, &prog, err, sizeof(err))) {
		fprintf(stderr, "kprog: %s: %s\n", path, err);
		return -1;
	}
	return 0;
}

/* OUT whole or not at all, never the TEXT it was made from (kfile.h). */
static int cmd_parse(const char *in, const char *out)
{
	const char *why;
	size_t n;

	if (kfile_output_ok(out, in, &why)) {
		fprintf(stderr, "kprog parse: %s %s\n", out, why);
		return 2;
	}
	if (load_program(in, true))
		return 2;
	n = kprog_encode(&prog, bytes, sizeof(bytes));
	if (kfile_write(out, bytes, n)) {
		fprintf(stderr, "kprog: cannot write %s: %s\n", out, strerror(errno));
		return 1;
	}
	return 0;
}

/* --repeat N: a decimal count, 1..1000000000. */
static int parse_repeat(const char *v, long *out)
{
	uint32_t n;

	if (knum_parse_u32(v, 1, 1000000000, &n)) {
		fprintf(stderr, "kprog run: --repeat: expected a number 1..1000000000, got '%s'\n",
		        v ? v : "(nothing)");
		return -1;
	}
	*out = n;
	return 0;
}

static int cmd_run(int argc, char **argv)
{
	kprog_run_opts_t o;
	kprog_run_result_t r;
	bool is_text = false;
	const char *target = NULL;
	long repeat = 1;
	uint64_t t0;

	kprog_run_opts_init(&o);
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "--free"))
			o.backend = KPROG_FREE;
		else if (!strcmp(argv[i], "--async-mix"))
			o.async_mix = true;
		else if (!strcmp(argv[i], "-v"))
			o.verbose = true;
		else if (!strcmp(argv[i], "--text"))
			is_text = true;
		else if (!strcmp(argv[i], "--repeat")) {
			if (parse_repeat(i + 1 < argc ? argv[++i] : NULL, &repeat))
				return 2;
		} else if (!strcmp(argv[i], "--target") && i + 1 < argc)
			target = argv[++i];
		else {
			fprintf(stderr, "kprog run: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	if (load_program(argv[2], is_text))
		return 2;
	if (target && kprog_shape(target, &prog)) {
		fprintf(stderr, "kprog run: unknown target %s\n", target);
		return 2;
	}
	t0 = ks_wall_ns();
	for (long k = 0; k < repeat; k++)
		if (kprog_run(&prog, &o, &r)) {
			fprintf(stderr, "kprog: the runtime did not start for this config\n");
			return 1;
		}
	if (repeat > 1)
		printf("%ld runs, %.0f runs/s\n", repeat,
		       (double)repeat * 1e9 / (double)(ks_wall_ns() - t0));
	printf("ops %u ok %u execs-verified %u steps %llu decisions %u\n", r.ops_run, r.ops_ok,
	       r.execs_checked, (unsigned long long)r.steps, r.ntrace);
	if (o.backend == KPROG_CONTROLLED && kprog_last_trace(text, sizeof(text)) >= 0)
		printf("trace: %s\n", text);
	return 0;
}

static const char usage[] = "usage: kprog print FILE | parse TEXT OUT | run FILE [--free] [-v] "
                            "[--text] [--repeat N] [--target T]\n";

/* --help (of the tool or a command) on stdout, exit 0; an option where a
 * file belongs is bad usage: one line, exit 2; -1 otherwise. */
static int help_or_bad_option(int argc, char **argv)
{
	if (argc >= 2 &&
	    (!strcmp(argv[1], "--help") || (argc >= 3 && !strcmp(argv[2], "--help")))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc >= 3 && argv[2][0] == '-' && argv[2][1]) {
		fprintf(stderr, "kprog %s: unknown option %s (see kprog --help)\n", argv[1],
		        argv[2]);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	int rc = help_or_bad_option(argc, argv);

	if (rc >= 0)
		return rc;
	if (argc == 3 && !strcmp(argv[1], "print")) {
		if (load_program(argv[2], false))
			return 2; /* a file that is no input: bad usage, as in every tool */
		kprog_print(&prog, text, sizeof(text));
		fputs(text, stdout);
		return kfile_stdout_done("kprog print") ? 1 : 0;
	}
	if (argc == 4 && !strcmp(argv[1], "parse"))
		return cmd_parse(argv[2], argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "run"))
		return cmd_run(argc, argv);
	fputs(usage, stderr);
	return 2;
}
