/*
 * kmgr_load_publish_uaf.c - regression test emitted by kmgr-repro (target concurrent) from
 *   corpus/regressions/concurrent/kmgr-load-publish-uaf
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=sync nc=4 qdepth=6 threads=4
 *   t0 load slot=0 tmpl=1 start=1 count=1
 *   t0 load slot=0 tmpl=3 start=-1 count=1
 *   t0 unload_all
 *   t0 stale slot=3 what=profiling
 *   t3 exec slot=3 in=missing out=missing repeat=4
 *   t3 exec slot=3 in=missing out=dev repeat=2
 *   t0 unload slot=0
 *   t0 unload slot=0
 *   t0 unload slot=0
 *   t1 load slot=1 tmpl=0 start=1 count=3
 *   sched 00 00 01 01 00 00 01 01 00
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_load(0, 0, &(kh_args_t){.slot = 0, .model = 1 /* two_io */, .start = 1, .count = 1});
	kh_load(1, 0, &(kh_args_t){.slot = 0, .model = 3 /* lnc2 */, .start = -1, .count = 1});
	kh_unload_all(2, 0, &(kh_args_t){0});
	kh_stale(3, 0, &(kh_args_t){.slot = 3, .what = KH_STALE_PROFILING});
	kh_unload(6, 0, &(kh_args_t){.slot = 0});
	kh_unload(7, 0, &(kh_args_t){.slot = 0});
	kh_unload(8, 0, &(kh_args_t){.slot = 0});
}

/* logical thread 1 */
static void thread_1(void)
{
	kh_load(9, 1, &(kh_args_t){.slot = 1, .model = 0 /* u8x64 */, .start = 1, .count = 3});
}

/* logical thread 3 */
static void thread_3(void)
{
	kh_exec(4, 3, &(kh_args_t){.slot = 3, .in = KPROG_PLACE_MISSING, .out = KPROG_PLACE_MISSING, .repeat = 4});
	kh_exec(5, 3, &(kh_args_t){.slot = 3, .in = KPROG_PLACE_MISSING, .out = KPROG_PLACE_DEV, .repeat = 2});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.sched = {0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x01, 0x00}, .nsched = 9,
	.name = "kmgr_load_publish_uaf", .target = "concurrent", .async = false, .nc = 4, .qdepth = 6, .nthreads = 4, .threads = {thread_0, thread_1, NULL, thread_3}};
