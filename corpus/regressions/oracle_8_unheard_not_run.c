/*
 * oracle_8_unheard_not_run.c - regression test emitted by kmgr-repro (target async) from
 *   corpus/regressions/async/oracle-8-unheard-not-run
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=async nc=8 qdepth=8 threads=1
 *   access t0:0+1
 *   t0 nrt_callback cb=null
 *   t0 load slot=0 tmpl=4 start=-1 count=-1
 *   t0 exec slot=0 in=dev out=dev repeat=1
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_nrt_callback(0, 0, &(kh_args_t){.cb = KH_CB_NULL});
	kh_load(1, 0, &(kh_args_t){.slot = 0, .model = 4 /* lnc4 */, .start = -1, .count = -1});
	kh_exec(2, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 1});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.nap = 1, .ap = {{0, 0, 1}}, .nsched = 0,
	.name = "oracle_8_unheard_not_run", .target = "async", .async = true, .nc = 8, .qdepth = 8, .nthreads = 1, .threads = {thread_0}};
