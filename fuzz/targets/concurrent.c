/*
 * concurrent.c - fuzzes 2-4 threads of facade calls in sync mode under the
 * controlled scheduler (decisions = the input's tail): executions race
 * unloads, loads and metadata reads on shared model slots; the oracle
 * checks outputs, use after unload, per-model linearizability, reference
 * counts and accounting.
 */
#include "target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return kfuzz_run(data, size, "concurrent"); /* shaped by prog/shape.c */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return kfuzz_initialize();
}
