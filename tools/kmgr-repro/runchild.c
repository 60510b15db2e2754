/*
 * runchild.c - the hidden `kmgr-repro __run --target T FILE`: what a fuzz
 * target does with one input, in the child the parent watches.  Programs
 * are shaped and run exactly as kfuzz_run does (controlled scheduler, the
 * oracle, quiet log; KMGR_FUZZ_BACKEND=free as the targets honour it);
 * model_parse inputs get the target's parse checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "base/klog.h"
#include "model/kmodel.h"
#include "model/kmodel_int.h"
#include "repro.h"

/* The library's errors (an assertion says why it aborts) but not its
 * warnings; klog takes no scheduling point, so the schedule is the
 * target's. */
static void errors_only(void *ctx, klog_level_t level, const char *line)
{
	(void)ctx;
	if (level == KLOG_ERROR)
		fprintf(stderr, "kmgr error: %s\n", line);
}

/* The model_parse target's oracle: canonical re-serialisation, no model
 * on failure, live kalloc count unchanged. */
static void parse_once(const uint8_t *data, size_t size)
{
	int64_t live = kalloc_live_count();
	kmodel_t *m = NULL;
	uint8_t *out = NULL;
	size_t len = 0;

	if (kmodel_parse(data, size, &m) == NRT_SUCCESS) {
		if (kmodel_serialize(m, &out, &len) != NRT_SUCCESS || len != size ||
		    memcmp(out, data, size) != 0) {
			fprintf(stderr,
			        "ORACLE: model-canonical: accepted bytes are not canonical\n");
			abort();
		}
		kfree(out);
		kmodel_free(m);
	} else if (m) {
		fprintf(stderr, "ORACLE: model-failed-parse: a failed parse handed out a model\n");
		abort();
	}
	if (kalloc_live_count() != live) {
		fprintf(stderr, "ORACLE: model-leak: live kalloc count changed\n");
		abort();
	}
}

static int run_model(const kr_input_t *in)
{
	uint8_t *fixed;
	uint32_t crc;

	parse_once(in->data, in->size);
	if (in->size < 4)
		return 0;
	fixed = malloc(in->size);
	if (!fixed)
		return 1;
	memcpy(fixed, in->data, in->size);
	crc = kmodel__crc32(fixed, in->size - 4);
	for (int i = 0; i < 4; i++)
		fixed[in->size - 4 + (size_t)i] = (uint8_t)(crc >> (8 * i));
	parse_once(fixed, in->size);
	free(fixed);
	return 0;
}

int kr_cmd_run(int argc, char **argv)
{
	kprog_run_opts_t o;
	kr_input_t in;
	const char *b = getenv("KMGR_FUZZ_BACKEND");
	int rc;

	if (argc != 4 || strcmp(argv[1], "--target") != 0) {
		fprintf(stderr, "kmgr-repro __run: internal command: __run --target T FILE\n");
		return KR_EXIT_USAGE;
	}
	if (kr_input_load(&in, argv[3], argv[2]))
		return KR_EXIT_USAGE;
	kprog_run_opts_init(&o);
	if (b && !strcmp(b, "free"))
		o.backend = KPROG_FREE;
	o.verbose = getenv("KMGR_FUZZ_VERBOSE") != NULL;
	if (!o.verbose)
		klog_set_sink(errors_only, NULL);
	rc = KR_EXIT_USAGE;
	if (in.kind == KR_MODEL)
		rc = run_model(&in);
	if (in.kind == KR_PROGRAM) {
		/* -1 is a config that cannot start: no finding, as in the target */
		kprog_run(in.prog, &o, NULL);
		rc = 0;
	}
	kr_input_free(&in);
	return rc;
}
