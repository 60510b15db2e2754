/*
 * model_parse.c - fuzz target for the model container parser (lib/model).
 *
 * Each input is parsed twice: as it is (the checksum must catch any change)
 * and with its trailing CRC-32 recomputed, so mutations reach the field
 * checks behind the checksum instead of dying at it.  Oracles, besides the
 * sanitizers: an accepted container re-serializes to exactly its bytes (the
 * format is canonical), and every parse, failed or not, leaves the live
 * kalloc count where it was (oracle_model_parse, fuzz/oracle/values.c,
 * shared with the reproducer).  Seeds: corpus/model_parse/, dictionary
 * corpus/model_parse.dict.  Its workers ask for long time slices, as the
 * program targets' do (kfuzz_long_slices).
 */
#include <stdint.h>

#include "base/klog.h"
#include "harness/run.h"
#include "oracle/oracle.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A worker of this target shares a CPU as the program targets' do
 * (ci/fuzz.sh --jobs above the CPUs, a busy machine): it asks for the same
 * long time slices (harness/slice.c), before its first input. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	(void)kfuzz_long_slices();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Rejections log at warn: at error level they cost no formatting; the
	 * oracle's filter keeps only a broken invariant's line, as in the
	 * program targets. */
	klog_set_level(KLOG_ERROR);
	oracle_log_quiet();
	oracle_model_parse(data, size);
	return 0;
}
