/*
 * faults.c - fuzzes fault plans under concurrency: failed allocations at
 * every numbered site, completion errors, delays and full queues, in sync
 * or implicit-async mode with 1-4 threads.  Every injected fault must end
 * in a clean error: nothing leaked, nothing left running, counts at zero.
 */
#include "target.h"

KFUZZ_PROGRAM_TARGET(faults)
