/*
 * fuzz_3_drain_before_erase.c - regression test emitted by kmgr-repro (target concurrent) from
 *   corpus/regressions/concurrent/fuzz-3-drain-before-erase
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=sync nc=4 qdepth=4 threads=2
 *   t0 load slot=0 tmpl=0 start=-1 count=-1
 *   t1 exec slot=0 in=dev out=dev repeat=1
 *   t0 unload slot=0
 *   sched 00 00 00 04 00 00 08
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
const kh_regression_t kh_test = {.sched = {0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x08}, .nsched = 7,
	.name = "fuzz_3_drain_before_erase", .target = "concurrent", .async = false, .nc = 4, .qdepth = 4, .nthreads = 2, .threads = {thread_0, thread_1}};
