/*
 * nrt_2_close_drain_before_closed.c - regression test emitted by kmgr-repro (target api_nrt) from
 *   corpus/regressions/api_nrt/nrt-2-close-drain-before-closed
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=async nc=8 qdepth=1 threads=4
 *   access t1:0+5
 *   access t0:16+1
 *   access t0:0+1
 *   access t0:0+5
 *   access t1:0+8
 *   access t0:1+1
 *   access t1:0+1
 *   t1 nrt_close
 *   t0 nrt_load slot=0 model=0 start=-1 count=-1
 *   t1 unload slot=0
 *   t3 load slot=1 tmpl=3 start=-1 count=1
 *   t1 load slot=0 tmpl=2 start=4 count=0
 *   t0 nrt_load slot=0 model=2 start=6 count=-1
 *   t0 nrt_load slot=2 model=0 start=-1 count=-1
 *   sched f7 61 73 00 95 47
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_nrt_load(1, 0, &(kh_args_t){.slot = 0, .model = 0, .start = -1, .count = -1});
	kh_nrt_load(5, 0, &(kh_args_t){.slot = 0, .model = 2, .start = 6, .count = -1});
	kh_nrt_load(6, 0, &(kh_args_t){.slot = 2, .model = 0, .start = -1, .count = -1});
}

/* logical thread 1 */
static void thread_1(void)
{
	kh_nrt_close(0, 1, &(kh_args_t){0});
	kh_unload(2, 1, &(kh_args_t){.slot = 0});
	kh_load(4, 1, &(kh_args_t){.slot = 0, .model = 2 /* cc */, .start = 4, .count = 0});
}

/* logical thread 3 */
static void thread_3(void)
{
	kh_load(3, 3, &(kh_args_t){.slot = 1, .model = 3 /* lnc2 */, .start = -1, .count = 1});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.sched = {0xf7, 0x61, 0x73, 0x00, 0x95, 0x47}, .nap = 7, .ap = {{1, 0, 5}, {0, 16, 1}, {0, 0, 1}, {0, 0, 5}, {1, 0, 8}, {0, 1, 1}, {1, 0, 1}}, .nsched = 6,
	.name = "nrt_2_close_drain_before_closed", .target = "api_nrt", .async = true, .nc = 8, .qdepth = 1, .nthreads = 4, .threads = {thread_0, thread_1, NULL, thread_3}};
