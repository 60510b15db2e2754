/*
 * test_repro_cli.c - the focus of this file is the kmgr-repro command line
 * as a child process: --help on every command, one line on stderr and exit
 * 2 for every bad flag and unusable file, only exit statuses 0/1/2 and no
 * sanitizer report for random files through every command, and replay /
 * triage / the time limit driven through a fake stress binary whose report
 * is known.  Run as: test BINARY SCRATCH_DIR.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktest.h"
#include "ktest_spawn.h"

static const char *tool, *dir;
static char path_env[4096];
static kt_spawn_t cli;

/* Runs the tool with PATH starting at the scratch dir (the fake stress
 * binary lives there); stdout and stderr land in cli.out / cli.err. */
static int run(const char *const *args)
{
	int rc = kt_spawn(&cli, args, "PATH=", path_env);

	kt_assert_no_sanitizer(cli.err);
	return rc;
}

#define RUN(...) run((const char *const[]){__VA_ARGS__, NULL})

#define EXPECT_BAD(...)                                                                            \
	do {                                                                                       \
		KT_EQ(RUN(__VA_ARGS__), 2);                                                        \
		KT_EQ(kt_count_lines(cli.err), 1);                                                 \
		KT_EQ(strncmp(cli.err, "kmgr-repro", 10), 0);                                      \
	} while (0)

static const char *scratch(const char *name)
{
	static char paths[16][512];
	static unsigned next;
	char *p = paths[next++ % 16];

	snprintf(p, 512, "%s/%s", dir, name);
	return p;
}

static void write_file(const char *path, const void *data, size_t n, bool exec)
{
	FILE *f = fopen(path, "wb");

	KT_ASSERT(f);
	KT_EQ(fwrite(data, 1, n, f), n);
	KT_EQ(fclose(f), 0);
	KT_EQ(chmod(path, exec ? 0755 : 0644), 0);
}

static void write_text(const char *path, const char *text)
{
	write_file(path, text, strlen(text), false);
}

/* repro-1.1: every command answers --help on stdout with exit 0. */
static void t_help(void)
{
	static const char *const cmds[] = {"show", "replay", "minimize", "emit-c", "triage"};

	KT_EQ(RUN("--help"), 0);
	KT_ASSERT(strstr(cli.out, "usage: kmgr-repro"));
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		KT_EQ(RUN(cmds[i], "--help"), 0);
		KT_ASSERT(strstr(cli.out, "usage: kmgr-repro "));
		KT_EQ(cli.err[0], 0);
	}
}

/* repro-1.2: bad flags and missing arguments: one line on stderr, exit 2. */
static void t_bad_flags(void)
{
	const char *prog = scratch("ok.txt");

	write_text(prog, "config mode=sync nc=1 qdepth=1 threads=1\n");
	EXPECT_BAD("frobnicate", prog);
	EXPECT_BAD("show");
	EXPECT_BAD("show", prog, "--bogus");
	EXPECT_BAD("show", prog, prog);
	EXPECT_BAD("replay", prog, "--times");
	EXPECT_BAD("replay", prog, "--times", "0");
	EXPECT_BAD("replay", prog, "--times", "12x");
	EXPECT_BAD("replay", prog, "--timeout", "-3");
	EXPECT_BAD("replay", prog, "--target", "nosuch");
	EXPECT_BAD("minimize", prog);
	EXPECT_BAD("minimize", prog, "-o");
	EXPECT_BAD("emit-c", prog);
	EXPECT_BAD("emit-c", prog, "-o", scratch("nodir/x.c"));
	EXPECT_BAD("triage", prog);
	EXPECT_BAD("triage", dir, "--times", "3");
	EXPECT_BAD("show", scratch("does-not-exist"));
	KT_EQ(run((const char *const[]){NULL}), 2);
}

/* repro-1.3: unusable files (empty, over 1 MiB, a directory, a truncated
 * stress repro, a broken text program, a stress repro with --target, a
 * model given to minimize / emit-c): one line on stderr, exit 2. */
static void t_bad_files(void)
{
	static uint8_t big[(1 << 20) + 1];
	const char *empty = scratch("empty"), *huge = scratch("huge");
	const char *trunc = scratch("trunc.repro"), *text = scratch("broken.txt");
	const char *stress = scratch("s.repro");

	write_file(empty, "", 0, false);
	write_file(huge, big, sizeof(big), false);
	write_text(trunc, "# kmgr-fuzz stress reproducer: rerun with `x --replay THIS_FILE`\nbin");
	write_text(text, "config mode=sync nc=3 threads=9\nt0 launch rockets\n");
	write_text(stress, "# kmgr-fuzz stress reproducer\nbinary stress_fake\nseed 1\n");
	for (int c = 0; c < 4; c++) {
		const char *cmd = (const char *[]){"show", "replay", "minimize", "emit-c"}[c];
		const char *o = c < 2 ? "-v" : "-o", *ov = c < 2 ? "-v" : scratch("out");
		const char *bad[] = {empty, huge, dir, trunc, text};

		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
			EXPECT_BAD(cmd, bad[k], o, ov);
		EXPECT_BAD(cmd, stress, "--target", "concurrent", o, ov);
	}
	EXPECT_BAD("minimize", stress, "-o", scratch("out"));
	EXPECT_BAD("emit-c", stress, "-o", scratch("out.c"));
	EXPECT_BAD("emit-c", empty, "--target", "model_parse", "-o", scratch("out.c"));
}

/* repro-1.4: random files (a fixed-seed generator) through every command:
 * statuses 0/1/2 only, never a signal or a sanitizer report (run()). */
static void t_random(void)
{
	static const char *const targets[] = {"api_seq", "concurrent", "async",
	                                      "faults",  "api_nrt",    "model_parse"};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	char name[64];

	mkdir(scratch("rnd"), 0755);
	for (int i = 0; i < 10; i++) {
		uint8_t buf[700];
		size_t n = 1 + i * 67 % sizeof(buf);
		const char *t = targets[i % 6];
		int rc;

		for (size_t k = 0; k < n; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[k] = (uint8_t)x;
		}
		snprintf(name, sizeof(name), "rnd/crash-%d", i);
		write_file(scratch(name), buf, n, false);
		KT_EQ(RUN("show", scratch(name), "--target", t), 0);
		rc = RUN("replay", scratch(name), "--target", t, "--timeout", "20");
		KT_ASSERT(rc == 0 || rc == 1);
		rc = RUN("emit-c", scratch(name), "--target", t, "-o", scratch("rnd.c"));
		KT_ASSERT(rc == 0 || (rc == 2 && !strcmp(t, "model_parse")));
	}
	KT_EQ(RUN("triage", scratch("rnd"), "--timeout", "20"), 0);
	KT_ASSERT(strstr(cli.out, "10 file(s)"));
}

/* A stand-in stress binary: prints an ASan-style report whose project
 * frames are known (or sleeps past the time limit) and fails. */
static void fake_stress(const char *mode)
{
	char text[2048];

	snprintf(text, sizeof(text),
	         "#!/bin/sh\n"
	         "[ \"%s\" = sleep ] && exec sleep 30\n"
	         "[ \"%s\" = usage ] && echo \"stress_fake: threads 'zzz': not a number\" >&2 &&"
	         " exit 2\n"
	         "[ \"%s\" = long ] && yes 'a line the run printed' | head -c 3000000 >&2\n"
	         "echo '==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020' >&2\n"
	         "echo 'READ of size 8 at 0x6020 thread T1' >&2\n"
	         "echo '    #0 0x55 in __asan_memcpy /build/compiler-rt/asan.cpp:22:3' >&2\n"
	         "echo '    #1 0x56 in exec_sync %s/lib/kmgr/exec.c:40:2' >&2\n"
	         "echo '    #2 0x57 in kmgr_exec %s/lib/kmgr/exec.c:118:8' >&2\n"
	         "echo '    #3 0x58 in LLVMFuzzerTestOneInput %s/fuzz/targets/x.c:9:1' >&2\n"
	         "echo '    #4 0x59 in op_exec %s/fuzz/prog/run.c:400:3' >&2\n"
	         "echo '    #5 0x5a in thread_main %s/fuzz/prog/run.c:700:3' >&2\n"
	         "echo '' >&2\n"
	         "echo '    #0 0x60 in free_model %s/lib/kmgr/unload.c:1:1' >&2\n"
	         "exit 1\n",
	         mode, mode, mode, KREPRO_SRC_DIR, KREPRO_SRC_DIR, KREPRO_SRC_DIR, KREPRO_SRC_DIR,
	         KREPRO_SRC_DIR, KREPRO_SRC_DIR);
	write_file(scratch("stress_fake"), text, strlen(text), true);
}

/* repro-1.5: replay runs a stress repro through its binary (found in
 * PATH), prints the signature (kind + top 3 library frames, runtime,
 * driver and runner frames dropped) and exits 0 when every run reproduced it. */
static void t_replay_stress(void)
{
	const char *repro = scratch("fake.repro");

	write_text(repro, "# kmgr-fuzz stress reproducer: rerun with `stress_fake --replay "
	                  "THIS_FILE`\nbinary stress_fake\nwhy check failed\nseed 7\n");
	fake_stress("report");
	KT_EQ(RUN("show", repro), 0);
	KT_ASSERT(strstr(cli.out, "stress repro file of stress_fake"));
	KT_EQ(RUN("replay", repro, "--times", "3"), 0);
	/* op_exec is the runner's (fuzz/prog): not a frame of the crash state */
	KT_ASSERT(
	    strstr(cli.out, "reproduced 3/3: heap-use-after-free in exec_sync < kmgr_exec\n"));
}

/* repro-1.6: the time limit kills a hung child: signature "timeout". */
static void t_timeout(void)
{
	fake_stress("sleep");
	KT_EQ(RUN("replay", scratch("fake.repro"), "--timeout", "1"), 0);
	KT_ASSERT(strstr(cli.out, "reproduced 1/1: timeout\n"));
}

/* repro-1.10: a report after 3 MB of output (past the 1 MiB capture) is
 * still the signature: the capture keeps the head and the tail, with a
 * line saying how much it left out (it kept the first MiB only: the
 * signature was "exit 1"). */
static void t_long_output(void)
{
	fake_stress("long");
	KT_EQ(RUN("replay", scratch("fake.repro")), 0);
	KT_ASSERT(
	    strstr(cli.out, "reproduced 1/1: heap-use-after-free in exec_sync < kmgr_exec\n"));
}

/* repro-1.7: triage buckets by signature, counts, smallest file first. */
static void t_triage(void)
{
	mkdir(scratch("tri"), 0755);
	write_text(scratch("tri/a.repro"), "binary stress_fake\nseed 1\nwhy a longer one\n");
	write_text(scratch("tri/b.repro"), "binary stress_fake\nseed 2\n");
	write_text(scratch("tri/README.txt"), "AFL's note, skipped\n");
	write_file(scratch("tri/empty"), "", 0, false);
	fake_stress("report");
	KT_EQ(RUN("triage", scratch("tri")), 0);
	KT_ASSERT(strstr(cli.out, "    2  heap-use-after-free in exec_sync < kmgr_exec"
	                          "  smallest: "));
	KT_ASSERT(strstr(cli.out, "tri/b.repro"));
	KT_ASSERT(strstr(cli.out, "    1  (unusable file)"));
	KT_ASSERT(strstr(cli.out, "3 file(s), 2 bucket(s)"));
}

/* One kept test: emit-c --shared-prelude of the input its header names
 * (line 3, the path as it was given, relative to the source tree) under
 * its own name must give its bytes exactly. */
static void check_kept(const char *file)
{
	static char kept[1 << 16], again[1 << 16];
	char path[512], name[128], input[256];
	const char *line;
	size_t n;

	snprintf(path, sizeof(path), "%s/corpus/regressions/%s", KREPRO_SRC_DIR, file);
	kt_slurp(path, kept, sizeof(kept));
	line = strstr(kept, "\n *   corpus/regressions/");
	KT_ASSERT(line != NULL);
	n = strcspn(line + 6, "\n");
	KT_ASSERT(n < sizeof(input));
	memcpy(input, line + 6, n);
	input[n] = 0;
	n = strlen(file) - 2; /* without ".c" */
	memcpy(name, file, n);
	name[n] = 0;
	KT_EQ(RUN("emit-c", input, "-o", scratch("kept.c"), "--name", name, "--shared-prelude"), 0);
	kt_slurp(scratch("kept.c"), again, sizeof(again));
	if (strcmp(kept, again))
		fprintf(stderr, "%s is not what emit-c writes from %s\n", file, input);
	KT_EQ(strcmp(kept, again), 0);
}

/* repro-1.8: every test kept in corpus/regressions/ is what `emit-c
 * --shared-prelude` writes (re-emitted, never edited by hand: an include
 * of fuzz/harness/embed.c, the threads and kh_test); without the flag the
 * test carries the harness and the oracle themselves, main included (and
 * builds standalone: regression_standalone). */
static void t_shared_prelude(void)
{
	static char standalone[1 << 19];
	const char *in = KREPRO_SRC_DIR "/corpus/regressions/concurrent/fuzz-1-exec-without-ref";
	DIR *d = opendir(KREPRO_SRC_DIR "/corpus/regressions");
	char cwd[1024];
	struct dirent *de;
	int kept = 0;

	KT_ASSERT(d != NULL);
	KT_ASSERT(getcwd(cwd, sizeof(cwd)) != NULL);
	KT_EQ(chdir(KREPRO_SRC_DIR), 0);
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);

		if (n > 2 && !strcmp(de->d_name + n - 2, ".c")) {
			check_kept(de->d_name);
			kept++;
		}
	}
	closedir(d);
	KT_EQ(chdir(cwd), 0);
	KT_GT(kept, 0);
	KT_EQ(RUN("emit-c", in, "-o", scratch("standalone.c"), "--name", "x"), 0);
	kt_slurp(scratch("standalone.c"), standalone, sizeof(standalone));
	KT_ASSERT(strstr(standalone, "#include \"harness/embed.c\"") == NULL);
	KT_ASSERT(strstr(standalone, "\nint kh_run(const kh_config_t *c, kh_result_t *r)\n") !=
	          NULL);
	KT_ASSERT(strstr(standalone, "\nvoid oracle_check_refcounts(bool faults_possible)\n") !=
	          NULL);
	KT_ASSERT(strstr(standalone, "\nint main(void)\n") != NULL);
	KT_ASSERT(strstr(standalone, "\nconst kh_regression_t kh_test = {") != NULL);
	/* inline containers keep their length, an empty one too (its array
	 * is written {0}, so sizeof would say 1) */
	KT_EQ(RUN("emit-c", KREPRO_SRC_DIR "/corpus/api_seq/s05_inline", "-o", scratch("inl.c")),
	      0);
	kt_slurp(scratch("inl.c"), standalone, sizeof(standalone));
	KT_ASSERT(strstr(standalone, ", {blob_3, 0}};\n") != NULL);
	KT_ASSERT(strstr(standalone, ".blobs = blobs, .nblobs = 4};\n") != NULL);
}

/* repro-1.9: a child that refuses its file (exit 2, a usage line, no
 * report: a stress repro with `threads zzz`) reproduced nothing: replay
 * says so in one line and exits 2; triage files it as unusable, in no
 * crash bucket. */
static void t_usage_child(void)
{
	const char *repro = scratch("bad-field.repro");

	write_text(repro, "binary stress_fake\nthreads zzz\n");
	fake_stress("usage");
	EXPECT_BAD("replay", repro, "--times", "3");
	KT_ASSERT(strstr(cli.err, "usage error of the child: stress_fake: threads 'zzz'"));
	KT_ASSERT(!strstr(cli.out, "reproduced"));
	mkdir(scratch("tri-usage"), 0755);
	write_text(scratch("tri-usage/bad.repro"), "binary stress_fake\nthreads zzz\n");
	KT_EQ(RUN("triage", scratch("tri-usage")), 0);
	KT_ASSERT(strstr(cli.out, "    1  (unusable file)  smallest: "));
	KT_ASSERT(strstr(cli.out, "1 file(s), 1 bucket(s)"));
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s KMGR_REPRO SCRATCH_DIR\n", argv[0]);
		return 2;
	}
	tool = argv[1];
	dir = argv[2];
	kt_spawn_init(&cli, tool, dir);
	snprintf(path_env, sizeof(path_env), "PATH=%s:%s", dir,
	         getenv("PATH") ? getenv("PATH") : "");
	KT_CASE("repro-1.1 help", t_help);
	KT_CASE("repro-1.2 bad flags", t_bad_flags);
	KT_CASE("repro-1.3 bad files", t_bad_files);
	KT_CASE("repro-1.4 random files", t_random);
	KT_CASE("repro-1.5 replay through a stress binary", t_replay_stress);
	KT_CASE("repro-1.6 time limit", t_timeout);
	KT_CASE("repro-1.7 triage", t_triage);
	KT_CASE("repro-1.8 the kept tests are what emit-c writes", t_shared_prelude);
	KT_CASE("repro-1.9 a child's usage error is no reproduction", t_usage_child);
	KT_CASE("repro-1.10 a report past the capture cap", t_long_output);
	KT_DONE();
}
