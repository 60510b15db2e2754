/*
 * test_kmgr_model_cli.c - the focus of this file is the kmgr-model command
 * line: create writes a container the library parses back as asked, show
 * prints its node table, and every bad argument or file gives exactly one
 * line on stderr and exit status 2.  Run as: test BINARY SCRATCH_DIR.
 */
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/kalloc.h"
#include "ktest.h"
#include "ktest_spawn.h"
#include "model/kmodel.h"

static const char *tool, *dir;
static char model_path[512];
static kt_spawn_t cli;

/* Run the tool with argv (NULL-terminated, without argv[0]) and an optional
 * KMGR_FAULT; stdout and stderr land in cli.out and cli.err. */
static int run_env(const char *fault, const char *const *args)
{
	char fault_env[128];
	int rc;

	if (fault)
		snprintf(fault_env, sizeof(fault_env), "KMGR_FAULT=%s", fault);
	rc = kt_spawn(&cli, args, "KMGR_FAULT=", fault ? fault_env : NULL);
	kt_assert_no_sanitizer(cli.err);
	return rc;
}

#define RUN(...) run_env(NULL, (const char *const[]){__VA_ARGS__, NULL})

/* Exit 2, one line on stderr starting "kmgr-model: ", nothing on stdout. */
#define EXPECT_BAD(...)                                                                            \
	do {                                                                                       \
		KT_EQ(RUN(__VA_ARGS__), 2);                                                        \
		KT_EQ(kt_count_lines(cli.err), 1);                                                 \
		KT_EQ(strncmp(cli.err, "kmgr-model: ", 12), 0);                                    \
		KT_EQ(cli.out[0], 0);                                                              \
	} while (0)

static kmodel_t *load(const char *path)
{
	static uint8_t buf[32768];
	FILE *f = fopen(path, "rb");
	kmodel_t *m = NULL;
	size_t n;

	KT_ASSERT(f);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	KT_EQ(kmodel_parse(buf, n, &m), 0);
	return m;
}

/* cli-1.1: create writes the model asked for, every option honoured. */
static void t_create(void)
{
	kmodel_t *m;

	KT_EQ(RUN("create", "-o", model_path, "--name", "net", "--cores", "4", "--cc", "--input",
	          "in:0:f16:2x3", "--output", "y:u64:7", "--input", "ids:i32:1x2x3x4x5x6x7x8"),
	      0);
	KT_EQ(cli.err[0], 0);
	m = load(model_path);
	KT_STREQ(m->name, "net");
	KT_EQ(m->nkbin, 4);
	KT_EQ(m->has_cc, 1);
	KT_EQ(m->n_tensors, 3);
	KT_STREQ(m->tensors[0].name, "in:0"); /* split from the right */
	KT_EQ(m->tensors[0].dtype, NRT_DTYPE_FLOAT16);
	KT_EQ(m->tensors[0].size, 12);
	KT_EQ(m->tensors[1].usage, NRT_TENSOR_USAGE_OUTPUT);
	KT_EQ(m->tensors[1].size, 56);
	KT_EQ(m->tensors[2].ndim, 8);
	KT_EQ(m->tensors[2].size, 4 * 40320);
	kmodel_free(m);
}

/* cli-1.2: show prints the header fields and one row per tensor. */
static void t_show(void)
{
	KT_EQ(RUN("show", model_path), 0);
	KT_EQ(cli.err[0], 0);
	KT_ASSERT(strstr(cli.out, "name:     net\n"));
	KT_ASSERT(strstr(cli.out, "nkbin:    4\n"));
	KT_ASSERT(strstr(cli.out, "cc:       yes\n"));
	KT_ASSERT(strstr(cli.out, "uuid:     "));
	KT_ASSERT(strstr(cli.out, "    0  in:0  input   f16    2x3"));
	KT_ASSERT(strstr(cli.out, "    1  y     output  u64    7                     56\n"));
	KT_ASSERT(strstr(cli.out, "1x2x3x4x5x6x7x8       161280\n"));
	KT_EQ(kt_count_lines(cli.out), 10); /* 6 header lines, the column titles, 3 rows */
}

/* cli-1.3: every bad argument is one line on stderr and exit 2. */
static void t_bad_args(void)
{
	EXPECT_BAD("");
	EXPECT_BAD("frobnicate");
	EXPECT_BAD("--list-fault-sites", "extra");
	EXPECT_BAD("create");
	EXPECT_BAD("create", "-o");
	EXPECT_BAD("create", "-o", model_path, "--bogus");
	EXPECT_BAD("create", "-o", model_path, "stray");
	EXPECT_BAD("create", "-o", model_path, "--cores", "0", "--input", "a:f32:1");
	EXPECT_BAD("create", "-o", model_path, "--cores", "257");
	EXPECT_BAD("create", "-o", model_path, "--cores", "4x");
	EXPECT_BAD("create", "-o", model_path, "--name", "", "--input", "a:f32:1");
	EXPECT_BAD("create", "-o", model_path, "--input", "a:f32");
	EXPECT_BAD("create", "-o", model_path, "--input", "a:f64:1", "--output", "b:f32:1");
	EXPECT_BAD("create", "-o", model_path, "--input", "a:f32:1x0", "--output", "b:f32:1");
	EXPECT_BAD("create", "-o", model_path, "--input", "a:f32:1x", "--output", "b:f32:1");
	EXPECT_BAD("create", "-o", model_path, "--input", "a:f32:1x2x3x4x5x6x7x8x9");
	EXPECT_BAD("create", "-o", model_path, "--input", "a:f32:99999999999");
	EXPECT_BAD("create", "-o", model_path, "--input", ":f32:1", "--output", "b:f32:1");
	EXPECT_BAD("create", "-o", model_path, "--input", "a:f32:1", "--output", "a:f32:1");
	EXPECT_BAD("create", "-o", model_path, "--input", "a:f32:1");
	EXPECT_BAD("create", "-o", model_path, "--output", "a:f32:1");
	EXPECT_BAD("create", "-o", "/nonexistent-dir/x", "--input", "a:f32:1", "--output",
	           "b:f32:1");
	EXPECT_BAD("show");
	EXPECT_BAD("show", model_path, model_path);
	EXPECT_BAD("show", "/nonexistent-file");
	EXPECT_BAD("show", dir);
	EXPECT_BAD("show", "--bogus");
}

/* cli-1.4: a bad file (truncated, corrupted, oversized) is one line and
 * exit 2, and the line names the field. */
static void t_bad_files(void)
{
	char bad[600];
	uint8_t buf[32768] = {0};
	FILE *f;
	size_t n;

	snprintf(bad, sizeof(bad), "%s/bad.kmodel", dir);
	f = fopen(model_path, "rb");
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	f = fopen(bad, "wb");
	fwrite(buf, 1, n - 10, f); /* cuts the last tensor record */
	fclose(f);
	EXPECT_BAD("show", bad);
	KT_ASSERT(strstr(cli.err, "bad field 'tensor["));
	buf[n - 1] ^= 1;
	f = fopen(bad, "wb");
	fwrite(buf, 1, n, f);
	fclose(f);
	EXPECT_BAD("show", bad);
	KT_ASSERT(strstr(cli.err, "bad field 'checksum'"));
	f = fopen(bad, "wb");
	fwrite(buf, 1, sizeof(buf), f);
	fclose(f);
	EXPECT_BAD("show", bad);
}

/* cli-1.5: --help goes to stdout with status 0; --list-fault-sites prints
 * the whole table, NUMBER NAME DESCRIPTION, with the model sites. */
static void t_help_and_sites(void)
{
	size_t n;

	KT_EQ(RUN("--help"), 0);
	KT_ASSERT(strstr(cli.out, "usage: kmgr-model create"));
	KT_EQ(RUN("--list-fault-sites"), 0);
	kfault_sites(&n);
	KT_EQ(kt_count_lines(cli.out), (int)n);
	KT_ASSERT(strstr(cli.out, "\n300 model.parse the parsed model record\n"));
	KT_ASSERT(strstr(cli.out, "\n301 model.tensors "));
}

/* cli-1.6: KMGR_FAULT reaches the tool: an injected allocation failure is
 * one line and exit 1 (out of memory), a bad plan one line and exit 2. */
static void t_fault_env(void)
{
	KT_EQ(run_env("alloc:model.parse:1", (const char *const[]){"show", model_path, NULL}), 1);
	KT_EQ(kt_count_lines(cli.err), 1);
	KT_EQ(run_env("alloc:model.build:1",
	              (const char *const[]){"create", "-o", model_path, "--input", "a:f32:1",
	                                    "--output", "b:f32:1", NULL}),
	      1);
	KT_EQ(kt_count_lines(cli.err), 1);
	KT_EQ(run_env("nonsense", (const char *const[]){"show", model_path, NULL}), 2);
	KT_EQ(kt_count_lines(cli.err), 1);
	/* growing the tensor array: out of memory too, not a rejected argument */
	KT_EQ(run_env("alloc:model.new_tensors:1",
	              (const char *const[]){"create", "-o", model_path, "--input", "a:f32:1",
	                                    "--output", "b:f32:1", NULL}),
	      1);
	KT_EQ(kt_count_lines(cli.err), 1);
	KT_ASSERT(strstr(cli.err, "out of memory"));
}

/* cli-1.7: an unknown short option inside a group is the one named. */
static void t_short_group(void)
{
	KT_EQ(RUN("create", "-zq"), 2);
	KT_ASSERT(strstr(cli.err, "unknown option '-z'"));
	KT_EQ(kt_count_lines(cli.err), 1);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s KMGR_MODEL_BINARY SCRATCH_DIR\n", argv[0]);
		return 2;
	}
	tool = argv[1];
	dir = argv[2];
	kt_spawn_init(&cli, tool, dir);
	snprintf(model_path, sizeof(model_path), "%s/cli.kmodel", dir);
	KT_CASE("cli-1.1 create", t_create);
	KT_CASE("cli-1.2 show", t_show);
	KT_CASE("cli-1.3 bad arguments", t_bad_args);
	KT_CASE("cli-1.4 bad files", t_bad_files);
	KT_CASE("cli-1.5 help and fault sites", t_help_and_sites);
	KT_CASE("cli-1.6 KMGR_FAULT", t_fault_env);
	KT_CASE("cli-1.7 a short option group", t_short_group);
	KT_DONE();
}
