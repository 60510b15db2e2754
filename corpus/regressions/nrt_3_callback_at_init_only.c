/*
 * nrt_3_callback_at_init_only.c - regression test emitted by kmgr-repro (target api_nrt) from
 *   corpus/regressions/api_nrt/nrt-3-callback-at-init-only
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=async nc=2 qdepth=4 threads=2
 *   t1 load slot=1 tmpl=0 start=-1 count=-1
 *   t1 exec slot=1 in=dev out=dev repeat=2
 *   t0 nrt_callback cb=b
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_nrt_callback(2, 0, &(kh_args_t){.cb = KH_CB_B});
}

/* logical thread 1 */
static void thread_1(void)
{
	kh_load(0, 1, &(kh_args_t){.slot = 1, .model = 0 /* u8x64 */, .start = -1, .count = -1});
	kh_exec(1, 1, &(kh_args_t){.slot = 1, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 2});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.nsched = 0,
	.name = "nrt_3_callback_at_init_only", .target = "api_nrt", .async = true, .nc = 2, .qdepth = 4, .nthreads = 2, .threads = {thread_0, thread_1}};
