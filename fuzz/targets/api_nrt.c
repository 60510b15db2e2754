/*
 * api_nrt.c - fuzzes lib/nrt's own model lifecycle: nrt_load, nrt_unload,
 * nrt_execute(_repeat), the nrt_get_model_* metadata, nrta_execute_schedule
 * and nrt_close, from 1-4 threads under the controlled scheduler, with
 * handles used during and after their unload, odd threads calling the
 * facade by id on the same models, and close racing everything; the oracle
 * checks the contract's statuses (NRT_CLOSED only once a close began and
 * always after it returned, never success on a retired handle), outputs,
 * linearizability and accounting.
 */
#include "target.h"

KFUZZ_PROGRAM_TARGET(api_nrt)
