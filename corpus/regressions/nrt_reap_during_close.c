/*
 * nrt_reap_during_close.c - regression test emitted by kmgr-repro (target api_nrt) from
 *   corpus/regressions/api_nrt/nrt-reap-during-close
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=sync nc=8 qdepth=5 threads=4
 *   access t4:0+1
 *   access t0:5+2
 *   access t0:5+2
 *   access t0:0+1
 *   access t0:0+1
 *   access t4:26+3
 *   access t1:21+6
 *   t0 nrt_load slot=0 model=1 start=-1 count=-1
 *   t0 nrt_schedule slot=0 in=dev out=dev
 *   t0 nrt_schedule slot=0 in=dev out=dev
 *   t1 nrt_close
 *   t0 nrt_schedule slot=0 in=dev out=dev
 *   t0 nrt_schedule slot=0 in=dev out=dev
 *   sched 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 
 *   sched 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 
 *   sched 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 
 *   sched 00 00 00 00 00 00 00 00 00 00 00 00 94 00 00 00 f9
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_nrt_load(0, 0, &(kh_args_t){.slot = 0, .model = 1, .start = -1, .count = -1});
	kh_nrt_schedule(1, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV});
	kh_nrt_schedule(2, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV});
	kh_nrt_schedule(4, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV});
	kh_nrt_schedule(5, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV});
}

/* logical thread 1 */
static void thread_1(void)
{
	kh_nrt_close(3, 1, &(kh_args_t){0});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.sched = {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x94, 0x00, 0x00, 0x00, 0xf9}, .nap = 7, .ap = {{4, 0, 1}, {0, 5, 2}, {0, 5, 2}, {0, 0, 1}, {0, 0, 1}, {4, 26, 3}, {1, 21, 6}}, .nsched = 113,
	.name = "nrt_reap_during_close", .target = "api_nrt", .async = false, .nc = 8, .qdepth = 5, .nthreads = 4, .threads = {thread_0, thread_1, NULL, NULL}};
