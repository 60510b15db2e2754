/*
 * runchild.c - the hidden `kmgr-repro __run --target T FILE`: what a fuzz
 * target does with one input, in the child the parent watches.  Programs
 * are shaped (input.c) and run by the targets' own kfuzz_run_program
 * (fuzz/harness/target.c: the controlled scheduler, the oracle, the quiet
 * log, the KMGR_FUZZ_* variants); model_parse inputs get that target's
 * check, oracle_model_parse (fuzz/oracle/values.c).
 */
#include <stdio.h>
#include <string.h>

#include "base/klog.h"
#include "oracle/oracle.h"
#include "repro.h"

/* model_parse: the library's errors (an assertion says why it aborts)
 * but not its warnings. */
static void errors_only(void *ctx, klog_level_t level, const char *line)
{
	(void)ctx;
	if (level == KLOG_ERROR)
		fprintf(stderr, "kmgr error: %s\n", line);
}

int kr_cmd_run(int argc, char **argv)
{
	kr_input_t in;
	int rc;

	if (argc != 4 || strcmp(argv[1], "--target") != 0) {
		fprintf(stderr, "kmgr-repro __run: internal command: __run --target T FILE\n");
		return KR_EXIT_USAGE;
	}
	if (kr_input_load(&in, argv[3], argv[2]))
		return KR_EXIT_USAGE;
	rc = KR_EXIT_USAGE;
	if (in.kind == KR_MODEL) {
		klog_set_sink(errors_only, NULL);
		oracle_model_parse(in.data, in.size);
		rc = 0;
	}
	if (in.kind == KR_PROGRAM) {
		/* -1 is a config that cannot start: no finding, as in the target */
		kfuzz_run_program(in.prog);
		rc = 0;
	}
	kr_input_free(&in);
	return rc;
}
