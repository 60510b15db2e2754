/*
 * async.c - fuzzes the implicit-async mode (nrt_execute routed to the
 * per-core workers, device tensors only) together with the explicit nrta
 * operations (schedule, is_completed, get_sequence), 1-4 threads under the
 * controlled scheduler.
 */
#include "target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return kfuzz_run(data, size, "async"); /* shaped by prog/shape.c */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return kfuzz_initialize();
}
