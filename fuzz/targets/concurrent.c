/*
 * concurrent.c - fuzzes 2-4 threads of facade calls in sync mode under the
 * controlled scheduler (decisions = the input's tail): executions race
 * unloads, loads and metadata reads on shared model slots; the oracle
 * checks outputs, use after unload, per-model linearizability, reference
 * counts and accounting.
 */
#include "target.h"

KFUZZ_PROGRAM_TARGET(concurrent)
