/*
 * api_seq.c - fuzzes one thread of facade calls with the full oracle: the
 * reference model predicts the status of every operation, outputs follow
 * the compute formula, and close leaves nothing behind.  Faults come only
 * from FAULT operations (fail the n-th next allocation at a site).
 */
#include "target.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return kfuzz_run(data, size, "api_seq"); /* shaped by prog/shape.c */
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return kfuzz_initialize();
}
