/*
 * nrt_1_lookup_copy_after_unlock.c - regression test emitted by kmgr-repro (target api_nrt) from
 *   corpus/regressions/api_nrt/nrt-1-lookup-copy-after-unlock
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=sync nc=2 qdepth=4 threads=3
 *   t0 nrt_load slot=0 model=0 start=-1 count=-1
 *   t2 nrt_load slot=1 model=2 start=-1 count=-1
 *   t0 nrt_exec slot=0 in=dev out=dev repeat=3
 *   t0 nrt_exec slot=0 in=dev out=dev repeat=1
 *   t0 nrt_load slot=0 model=0 start=-1 count=-1
 *   t0 nrt_meta slot=0 what=tensor_info old=0
 *   t2 nrt_unload slot=0 old=0
 *   t0 is_valid_ifmap slot=0 name=0
 *   sched 00 02 01 00 02 01 02 00 02 00 01 02 00 02 00
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_nrt_load(0, 0, &(kh_args_t){.slot = 0, .model = 0, .start = -1, .count = -1});
	kh_nrt_exec(2, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 3});
	kh_nrt_exec(3, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 1});
	kh_nrt_load(4, 0, &(kh_args_t){.slot = 0, .model = 0, .start = -1, .count = -1});
	kh_nrt_meta(5, 0, &(kh_args_t){.slot = 0, .what = KH_NRT_TENSOR_INFO, .old = 0});
	kh_is_valid_ifmap(7, 0, &(kh_args_t){.slot = 0, .name = 0});
}

/* logical thread 2 */
static void thread_2(void)
{
	kh_nrt_load(1, 2, &(kh_args_t){.slot = 1, .model = 2, .start = -1, .count = -1});
	kh_nrt_unload(6, 2, &(kh_args_t){.slot = 0, .old = 0});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.sched = {0x00, 0x02, 0x01, 0x00, 0x02, 0x01, 0x02, 0x00, 0x02, 0x00, 0x01, 0x02, 0x00, 0x02, 0x00}, .nsched = 15,
	.name = "nrt_1_lookup_copy_after_unlock", .target = "api_nrt", .async = false, .nc = 2, .qdepth = 4, .nthreads = 3, .threads = {thread_0, NULL, thread_2}};
