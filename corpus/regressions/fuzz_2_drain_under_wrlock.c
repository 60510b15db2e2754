/*
 * fuzz_2_drain_under_wrlock.c - regression test emitted by kmgr-repro (target async) from
 *   corpus/regressions/async/fuzz-2-drain-under-wrlock
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=async nc=2 qdepth=1 threads=2
 *   t0 load slot=0 tmpl=0 start=-1 count=-1
 *   t1 exec slot=0 in=dev out=dev repeat=1
 *   t0 unload slot=0
 *   sched 00 00 00 00 01 00 00 00 00 00 01
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_load(0, 0, &(kh_args_t){.slot = 0, .model = 0 /* u8x64 */, .start = -1, .count = -1});
	kh_unload(2, 0, &(kh_args_t){.slot = 0});
}

/* logical thread 1 */
static void thread_1(void)
{
	kh_exec(1, 1, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 1});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.sched = {0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}, .nsched = 11,
	.name = "fuzz_2_drain_under_wrlock", .target = "async", .async = true, .nc = 2, .qdepth = 1, .nthreads = 2, .threads = {thread_0, thread_1}};
