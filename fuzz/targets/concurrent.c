/*
 * concurrent.c - fuzzes 2-4 threads of facade calls in sync mode under the
 * controlled scheduler (decisions = the input's tail): executions race
 * unloads, loads and metadata reads on shared model slots; the oracle
 * checks outputs, use after unload, per-model linearizability, reference
 * counts and accounting.
 */
#include "target.h"

/* The shape lives in prog/shape.c, shared with tools/kmgr-repro. */
static void shape(kprog_t *p)
{
	kprog_shape("concurrent", p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return kfuzz_run(data, size, shape);
}
