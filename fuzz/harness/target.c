/*
 * target.c - what a program fuzz target does with one input, in one place
 * for the targets (fuzz/targets/) and the reproducer's child (kmgr-repro
 * __run): decode, shape as the named target, run on a fresh runtime with
 * the oracle under the controlled scheduler.  The environment picks the
 * variants: KMGR_FUZZ_BACKEND=free (free-running threads, the baseline),
 * KMGR_FUZZ_VERBOSE (each op and the library's whole log),
 * KMGR_FUZZ_ASYNC_MIX (explicit SCHEDULE ops in implicit-async runs).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/run.h"
#include "oracle/oracle.h"

static const kprog_run_opts_t *fuzz_opts(void)
{
	static kprog_run_opts_t opts;
	static bool inited;
	const char *b;

	if (inited)
		return &opts;
	b = getenv("KMGR_FUZZ_BACKEND");
	kprog_run_opts_init(&opts);
	if (b)
		opts.backend = strcmp(b, "free") ? KPROG_CONTROLLED : KPROG_FREE;
	opts.verbose = getenv("KMGR_FUZZ_VERBOSE") != NULL;
	opts.async_mix = getenv("KMGR_FUZZ_ASYNC_MIX") != NULL;
	/* the log filter is kh_run's (harness.c): KMGR_FUZZ_VERBOSE keeps the
	 * whole log */
	inited = true;
	return &opts;
}

int kfuzz_run_program(const kprog_t *p)
{
	return kprog_run(p, fuzz_opts(), NULL);
}

/* What a process does once, done before the first input: the options and
 * the log filter, and every template loaded once (run.c keeps templates
 * described across runs, so the first program that loads one also parses
 * it).  The fuzz targets run it as LLVMFuzzerInitialize, which libFuzzer
 * calls before the first input and the AFL++ driver before __AFL_INIT:
 * every forked child then starts warm, and an input's first run in a
 * process takes the same edges as its next (AFL++ counted these once-only
 * edges as unstable whenever a calibration began in a fresh process). */
static void warm_up(void)
{
	static kprog_t p;
	char text[128];

	for (unsigned t = 0; t < KPROG_NTMPL; t++) {
		snprintf(text, sizeof(text),
		         "t0 load slot=0 tmpl=%u start=-1 count=-1\nt0 unload slot=0\n", t);
		if (kprog_parse(text, &p, NULL, 0) == 0)
			kfuzz_run_program(&p);
	}
}

/* The warm-up runs under the oracle, so a bug in load or unload fails it.
 * Failing here, before the first input, would kill every fuzzer at start
 * with no crash file (nothing to replay, triage or minimize; "fuzzer
 * failed to start" on ClusterFuzzLite).  So a child runs it first, while
 * the process has no threads yet; only if the child comes through does
 * this process warm up.  Otherwise it starts cold and the first input
 * that loads finds the bug, as a testcase. */
static bool warm_up_survives(void)
{
	pid_t pid = fork();
	int st = 0;

	if (pid < 0)
		return false;
	if (pid == 0) {
		warm_up();
		_exit(0);
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int kfuzz_initialize(void)
{
	/* Long slices only where the program's threads are fibers: free-running
	 * threads (the baseline) keep the kernel's preemption, and with it the
	 * interleavings they are there to show. */
	if (fuzz_opts()->backend == KPROG_CONTROLLED)
		(void)kfuzz_long_slices();
	if (warm_up_survives()) {
		warm_up();
		return 0;
	}
	fprintf(stderr, "kfuzz: the warm-up (load and unload each template) failed, report above: "
	                "starting cold, so that an input finds it and a crash file keeps it\n");
	return 0;
}

int kfuzz_run(const uint8_t *data, size_t size, const char *target)
{
	static kprog_t prog;

	kprog_decode(data, size, &prog);
	/* A name without its TARGETS line would run its programs unshaped. */
	if (kprog_shape(target, &prog) != 0) {
		fprintf(stderr, "kfuzz_run: no target '%s' in fuzz/targets/TARGETS\n", target);
		abort();
	}
	kfuzz_run_program(&prog);
	return 0;
}
