/*
 * async.c - fuzzes the implicit-async mode (nrt_execute routed to the
 * per-core workers, device tensors only) together with the explicit nrta
 * operations (schedule, is_completed, get_sequence), 1-4 threads under the
 * controlled scheduler.
 */
#include "target.h"

KFUZZ_PROGRAM_TARGET(async)
