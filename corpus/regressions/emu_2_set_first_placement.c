/*
 * emu_2_set_first_placement.c - regression test emitted by kmgr-repro (target concurrent) from
 *   corpus/regressions/concurrent/emu-2-set-first-placement
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=sync nc=2 qdepth=4 threads=2
 *   t1 load slot=1 tmpl=5 start=-1 count=-1
 *   t1 exec slot=1 in=mix:dhv out=mix:vd repeat=2
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 1 */
static void thread_1(void)
{
	kh_load(0, 1, &(kh_args_t){.slot = 1, .model = 5 /* wide */, .start = -1, .count = -1});
	kh_exec(1, 1, &(kh_args_t){.slot = 1, .in = KPROG_PLACE_MIX + 6, .out = KPROG_PLACE_MIX + 3, .repeat = 2});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.nsched = 0,
	.name = "emu_2_set_first_placement", .target = "concurrent", .async = false, .nc = 2, .qdepth = 4, .nthreads = 2, .threads = {NULL, thread_1}};
