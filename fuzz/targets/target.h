/*
 * target.h - the one contract behind every program fuzz target: decode the
 * input into a program, shape it as the target (threads, mode, faults),
 * run it on a fresh runtime with the oracle, under the controlled
 * scheduler (in every preset, TSan included: its fiber switches carry no
 * happens-before edge, docs/scheduler.md).  kfuzz_run (harness/target.c) is
 * shared with the reproducer, so that a crash replays as its target ran
 * it.  KMGR_FUZZ_BACKEND=free runs the threads free-running instead (the
 * baseline).
 */
#ifndef KFUZZ_TARGET_H
#define KFUZZ_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "harness/run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* The program targets: kfuzz_initialize (libFuzzer and fuzz/driver/afl.c
 * call it once, before the first input). */
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A program target's two entry points: NAME is its line in TARGETS, whose
 * SHAPE (prog/shape.c) kfuzz_run applies. */
#define KFUZZ_PROGRAM_TARGET(NAME)                                                                 \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                               \
	{                                                                                          \
		return kfuzz_run(data, size, #NAME);                                               \
	}                                                                                          \
	int LLVMFuzzerInitialize(int *argc, char ***argv)                                          \
	{                                                                                          \
		(void)argc;                                                                        \
		(void)argv;                                                                        \
		return kfuzz_initialize();                                                         \
	}

#endif
