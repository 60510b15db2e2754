/*
 * emu_1_arena_unlink_after_unlock.c - regression test emitted by kmgr-repro (target concurrent) from
 *   corpus/regressions/concurrent/emu-1-arena-unlink-after-unlock
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=sync nc=4 qdepth=4 threads=2
 *   access t0:58+2
 *   t0 load slot=0 tmpl=1 start=-1 count=-1
 *   t1 load slot=1 tmpl=5 start=-1 count=-1
 *   t0 exec slot=0 in=dev out=dev repeat=2
 *   t1 exec slot=1 in=dev out=dev repeat=2
 *   t1 unload_all
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_load(0, 0, &(kh_args_t){.slot = 0, .model = 1 /* two_io */, .start = -1, .count = -1});
	kh_exec(2, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 2});
}

/* logical thread 1 */
static void thread_1(void)
{
	kh_load(1, 1, &(kh_args_t){.slot = 1, .model = 5 /* wide */, .start = -1, .count = -1});
	kh_exec(3, 1, &(kh_args_t){.slot = 1, .in = KPROG_PLACE_DEV, .out = KPROG_PLACE_DEV, .repeat = 2});
	kh_unload_all(4, 1, &(kh_args_t){0});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.nap = 1, .ap = {{0, 58, 2}}, .nsched = 0,
	.name = "emu_1_arena_unlink_after_unlock", .target = "concurrent", .async = false, .nc = 4, .qdepth = 4, .nthreads = 2, .threads = {thread_0, thread_1}};
