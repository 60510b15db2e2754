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
#include <stdio.h>

#include "harness/embed.c" /* fuzz/harness/embed.c */

/* ---- the program ---- */
/* u8x64 */
static const uint8_t model_0[] = {
	0x4b, 0x4d, 0x47, 0x52, 0x4e, 0x45, 0x46, 0x46, 0x01, 0x00, 0x00, 0x00,
	0x6c, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x02, 0x00, 0x00, 0x00, 0x75, 0x38, 0x78, 0x36, 0x34, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe2, 0xa7, 0x40, 0xa6,
	0xad, 0xa6, 0xbc, 0x21, 0x1d, 0x78, 0x63, 0x82, 0xdb, 0x85, 0x56, 0x1d,
	0x03, 0x69, 0x6e, 0x30, 0x00, 0x05, 0x01, 0x40, 0x00, 0x00, 0x00, 0x40,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x6f, 0x75, 0x74, 0x30,
	0x01, 0x05, 0x01, 0x40, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x77, 0x9d, 0x65, 0x3b,
};

static kh_model_t models[] = {
	{model_0, sizeof(model_0), false, {0}},
};

static const uint8_t sched[] = {
	0x00, 0x00, 0x02, 0x03, 0x02, 0x00, 0x01, 0x01, 0x01, 0x01, 0x00, 0x00,
	0x02,
};
static const char test_name[] = "fuzz_1_exec_without_ref";
static const char test_target[] = "concurrent";

/* logical thread 0 */
static void thread_0(void)
{
	kh_load(1, 0, &(kh_args_t){.slot = 1, .model = 0, .start = -1, .count = -1});
	kh_unload_all(2, 0, &(kh_args_t){0});
}

/* logical thread 1 */
static void thread_1(void)
{
	kh_load(0, 1, &(kh_args_t){.slot = 0, .model = 0, .start = -1, .count = -1});
	kh_exec(3, 1, &(kh_args_t){.slot = 0, .in = KPROG_PLACE_VIRT, .out = KPROG_PLACE_DEV, .repeat = 3});
}

/* logical thread 2 */
static void thread_2(void)
{
}

static void program(unsigned t)
{
	static void (*const threads[])(void) = {thread_0, thread_1, thread_2};

	threads[t]();
}

static void report(void *ctx, const char *invariant, const char *msg)
{
	(void)ctx;
	(void)invariant;
	(void)msg;
	fprintf(stderr, "FAIL: %s (regression test, fuzz target %s)\n", test_name, test_target);
}

int main(void)
{
	kh_config_t c;
	kh_result_t r;

	kh_config_init(&c);
	c.async = false;
	c.nc = 2;
	c.qdepth = 4;
	c.nthreads = 3;
	c.models = models;
	c.nmodels = sizeof(models) / sizeof(models[0]);
	c.thread = program;
	c.sched = sched;
	c.nsched = 13;
	c.hooks.report = report;
	if (kh_run(&c, &r) < 0) {
		printf("%s: the runtime did not start (bad config)\n", test_name);
		return 1;
	}
	if (!r.started)
		printf("%s: the runtime did not start (a fault fired in nrt_init)\n", test_name);
	else
		printf("%s: PASS (%llu scheduling points, %llu preemptions)\n", test_name,
		       (unsigned long long)r.steps, (unsigned long long)r.preemptions);
	return 0;
}
