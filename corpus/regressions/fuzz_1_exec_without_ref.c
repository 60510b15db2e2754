/*
 * fuzz_1_exec_without_ref.c - regression test emitted by kmgr-repro (target concurrent) from
 *   corpus/regressions/concurrent/fuzz-1-exec-without-ref
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=sync nc=2 qdepth=4 threads=3
 *   t1 load slot=0 tmpl=0 start=-1 count=-1
 *   t0 load slot=1 tmpl=0 start=-1 count=-1
 *   t0 unload_all
 *   t1 exec slot=0 in=virt out=dev repeat=3
 *   sched 00 00 02 03 02 00 01 01 01 01 00 00 02
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_load(1, 0, &(kh_args_t){.slot = 1, .model = 0 /* u8x64 */, .start = -1, .count = -1});
	kh_unload_all(2, 0, &(kh_args_t){0});
}

/* logical thread 1 */
static void thread_1(void)
{
	kh_load(0, 1, &(kh_args_t){.slot = 0, .model = 0 /* u8x64 */, .start = -1, .count = -1});
	kh_exec(3, 1, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_VIRT, .out = KPROG_PLACE_DEV, .repeat = 3});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.sched = {0x00, 0x00, 0x02, 0x03, 0x02, 0x00, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00, 0x02}, .nsched = 13,
	.name = "fuzz_1_exec_without_ref", .target = "concurrent", .async = false, .nc = 2, .qdepth = 4, .nthreads = 3, .threads = {thread_0, thread_1, NULL}};
