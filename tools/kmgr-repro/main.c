/*
 * main.c - kmgr-repro: what a runtime engineer does with a finding, in one
 * tool: show, replay, minimize, emit-c, triage, bisect, verify.  Every command
 * answers --help; bad flags and unusable files get one line on stderr and
 * exit status 2.  docs/reproducer.md.
 */
#include <stdio.h>
#include <string.h>

#include "repro.h"

static const char usage[] =
    "usage: kmgr-repro COMMAND [options] FILE|DIR\n"
    "  show FILE                   the decoded program, config, fault plan and schedule\n"
    "  replay FILE [--times N]     run it N times under this build, print each outcome\n"
    "  minimize FILE -o OUT        shrink it while the crash signature stays the same\n"
    "  emit-c FILE -o TEST.c       a standalone C regression test\n"
    "  triage DIR                  group the crash files under DIR by signature\n"
    "  bisect FILE --good R --bad R  the commit that made FILE fail (verify --rev R: one)\n"
    "common options: --target NAME (api_seq concurrent async faults api_nrt model_parse),\n"
    "  --timeout S (per run, default 60), -v; `kmgr-repro COMMAND --help` for more.\n"
    "exit status: 0 done (replay: reproduced every time), 1 not reproduced, 2 bad usage\n"
    "or unusable input.\n";

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int argc, char **argv);
	} cmds[] = {
	    {"show", kr_cmd_show},     {"replay", kr_cmd_replay}, {"minimize", kr_cmd_minimize},
	    {"emit-c", kr_cmd_emit_c}, {"triage", kr_cmd_triage}, {"__run", kr_cmd_run},
	    {"bisect", kr_cmd_bisect}, {"verify", kr_cmd_verify},
	};

	if (argc < 2) {
		fputs(usage, stderr);
		return KR_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return KR_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int rc;

		if (strcmp(argv[1], cmds[i].name))
			continue;
		if (strcmp(argv[1], "__run")) /* the child keeps the default actions */
			kr_signals_install();
		rc = cmds[i].fn(argc - 1, argv + 1);
		if (kr_interrupted()) {
			fprintf(stderr,
			        "kmgr-repro %s: interrupted by %s; the output above is partial\n",
			        argv[1], strsignal(kr_interrupted()));
			return 128 + kr_interrupted();
		}
		return rc;
	}
	fprintf(stderr, "kmgr-repro: unknown command '%s' (see kmgr-repro --help)\n", argv[1]);
	return KR_EXIT_USAGE;
}
