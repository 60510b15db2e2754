/*
 * oracle_10_untracked_status.c - regression test emitted by kmgr-repro (target api_nrt) from
 *   corpus/regressions/api_nrt/oracle-10-untracked-status
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=async nc=2 qdepth=2 threads=1
 *   t0 nrt_load slot=0 model=0 start=-1 count=-1
 *   t0 nrt_exec slot=0 in=dev out=dev repeat=1
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_nrt_load(0, 0, &(kh_args_t){.slot = 0, .model = 0, .start = -1, .count = -1});
	kh_nrt_exec(1, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 1});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.nsched = 0,
	.name = "oracle_10_untracked_status", .target = "api_nrt", .async = true, .nc = 2, .qdepth = 2, .nthreads = 1, .threads = {thread_0}};
