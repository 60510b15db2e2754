/*
 * faults.c - fuzzes fault plans under concurrency: failed allocations at
 * every numbered site, completion errors, delays and full queues, in sync
 * or implicit-async mode with 1-4 threads.  Every injected fault must end
 * in a clean error: nothing leaked, nothing left running, counts at zero.
 */
#include "target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return kfuzz_run(data, size, "faults"); /* shaped by prog/shape.c */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return kfuzz_initialize();
}
