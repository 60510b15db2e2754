/*
 * api_seq.c - fuzzes one thread of facade calls with the full oracle: the
 * reference model predicts the status of every operation, outputs follow
 * the compute formula, and close leaves nothing behind.  Faults come only
 * from FAULT operations (fail the n-th next allocation at a site).
 */
#include "target.h"

KFUZZ_PROGRAM_TARGET(api_seq)
