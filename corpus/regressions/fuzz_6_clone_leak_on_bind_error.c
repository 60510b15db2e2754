/*
 * fuzz_6_clone_leak_on_bind_error.c - regression test emitted by kmgr-repro (target api_seq) from
 *   corpus/regressions/api_seq/fuzz-6-clone-leak-on-bind-error
 * It replays the program below under the controlled scheduler with its
 * decision bytes, through the fuzz runner's own harness and oracle; it
 * aborts (sanitizer report or an ORACLE line) while the bug is present
 * and prints PASS on a correct library.
 *
 *   config mode=sync nc=4 qdepth=4 threads=1
 *   t0 load slot=0 tmpl=0 start=-1 count=-1
 *   t0 exec slot=0 in=host out=missing repeat=1
 */
#include "harness/embed.c" /* fuzz/harness/embed.c */

/* logical thread 0 */
static void thread_0(void)
{
	kh_load(0, 0, &(kh_args_t){.slot = 0, .model = 0 /* u8x64 */, .start = -1, .count = -1});
	kh_exec(1, 0, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_HOST, .out = KPROG_PLACE_MISSING, .repeat = 1});
}

/* the decision bytes, the test, the program's config and threads */
const kh_regression_t kh_test = {.nsched = 0,
	.name = "fuzz_6_clone_leak_on_bind_error", .target = "api_seq", .async = false, .nc = 4, .qdepth = 4, .nthreads = 1, .threads = {thread_0}};
