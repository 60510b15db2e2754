/*
 * target.h - the one contract behind every fuzz target: decode the input
 * into a program, let the target shape it (threads, mode, faults), run it
 * on a fresh runtime with the oracle, under the controlled scheduler (in
 * every preset, TSan included: its fiber switches carry no happens-before
 * edge, docs/scheduler.md).  KMGR_FUZZ_BACKEND=free runs the threads
 * free-running instead (the baseline).
 */
#ifndef KFUZZ_TARGET_H
#define KFUZZ_TARGET_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog/prog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline int kfuzz_run(const uint8_t *data, size_t size, void (*shape)(kprog_t *p))
{
	static kprog_t prog;
	static kprog_run_opts_t opts;
	static int inited;

	if (!inited) {
		const char *b = getenv("KMGR_FUZZ_BACKEND");

		kprog_run_opts_init(&opts);
		if (b)
			opts.backend = strcmp(b, "free") ? KPROG_CONTROLLED : KPROG_FREE;
		opts.verbose = getenv("KMGR_FUZZ_VERBOSE") != NULL;
		opts.async_mix = getenv("KMGR_FUZZ_ASYNC_MIX") != NULL;
		/* the library's error log is noise here (inputs are wrong on purpose)
		 * and costs exec/s; KMGR_FUZZ_VERBOSE keeps it */
		if (!opts.verbose)
			kprog_log_quiet();
		inited = 1;
	}
	kprog_decode(data, size, &prog);
	if (shape)
		shape(&prog);
	kprog_run(&prog, &opts, NULL);
	return 0;
}

#endif
