/*
 * fuzz_7_memory_access_point.c - regression test emitted by kmgr-repro (target concurrent) from
 *   corpus/regressions/concurrent/fuzz-7-memory-access-point
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=sync nc=4 qdepth=6 threads=2
 *   access t0:0+3
 *   access t0:20+3
 *   access t0:16+4
 *   access t0:16+3
 *   access t0:0+1
 *   access t0:0+1
 *   access t0:31+1
 *   t1 load slot=1 tmpl=0 start=-1 count=-1
 *   t1 load slot=0 tmpl=0 start=3 count=4
 *   t1 exec slot=0 in=dev out=dev repeat=1
 *   t0 load slot=0 tmpl=0 start=-1 count=-1
 *   t1 get_sequence lnc=0 xu=3 queue=0
 *   t1 badargs slot=3 what=io_count_no_result
 *   t1 unload_all
 *   t0 exec slot=0 in=dev out=dev repeat=1
 *   sched 07 10 12 03 00 06 00 00 90 00 00 00 00 03 01 90 90 90 90 90 90 91 7a 90 90 90 90 90 90
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_load(3, 0, &(kh_args_t){.slot = 0, .model = 0 /* u8x64 */, .start = -1, .count = -1});
	kh_exec(7, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 1});
}

/* logical thread 1 */
static void thread_1(void)
{
	kh_load(0, 1, &(kh_args_t){.slot = 1, .model = 0 /* u8x64 */, .start = -1, .count = -1});
	kh_load(1, 1, &(kh_args_t){.slot = 0, .model = 0 /* u8x64 */, .start = 3, .count = 4});
	kh_exec(2, 1, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 1});
	kh_get_sequence(4, 1, &(kh_args_t){.lnc = 0, .xu = 3, .queue = 0});
	kh_badargs(5, 1, &(kh_args_t){.slot = 3, .what = KH_BAD_IO_COUNT_NO_RESULT});
	kh_unload_all(6, 1, &(kh_args_t){0});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.sched = {0x07, 0x10, 0x12, 0x03, 0x00, 0x06, 0x00, 0x00, 0x90, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x91, 0x7a, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90}, .nap = 7, .ap = {{0, 0, 3}, {0, 20, 3}, {0, 16, 4}, {0, 16, 3}, {0, 0, 1}, {0, 0, 1}, {0, 31, 1}}, .nsched = 29,
	.name = "fuzz_7_memory_access_point", .target = "concurrent", .async = false, .nc = 4, .qdepth = 6, .nthreads = 2, .threads = {thread_0, thread_1}};
