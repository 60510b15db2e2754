/*
 * kmgr-model - make and inspect model containers (docs/model-format.md).
 *
 *   kmgr-model create -o FILE [--name NAME] [--cores N] [--cc]
 *                     --input NAME:DTYPE:DIMS ... --output NAME:DTYPE:DIMS ...
 *   kmgr-model show FILE
 *   kmgr-model --list-fault-sites
 *
 * Bad arguments or files: one line on stderr, exit 2.  The library's own
 * rejection line is folded into that one line.  KMGR_FAULT (see kfault.h)
 * injects faults, so a sweep over --list-fault-sites can drive the tool.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "base/kfault.h"
#include "base/klog.h"
#include "base/knum.h"
#include "kfile.h"
#include "model/kmodel.h"

#define EXIT_BAD 2
/* Largest container the format allows: header, 64 largest records, CRC. */
#define MAX_FILE (108 + 64 * (1 + 255 + 3 + 4 * 8 + 8) + 4)

static char last_log[512];

/* Keep the library's last error so the one stderr line can quote it. */
static void log_sink(void *ctx, klog_level_t level, const char *line)
{
	(void)ctx;
	if (level <= KLOG_WARN)
		snprintf(last_log, sizeof(last_log), "%s", line);
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("kmgr-model: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (last_log[0])
		fprintf(stderr, ": %s", last_log);
	fputc('\n', stderr);
	return EXIT_BAD;
}

static void usage(FILE *f)
{
	fputs("usage: kmgr-model create -o FILE [--name NAME] [--cores N] [--cc]\n"
	      "                         --input NAME:DTYPE:DIMS ... --output NAME:DTYPE:DIMS ...\n"
	      "       kmgr-model show FILE\n"
	      "       kmgr-model --list-fault-sites\n"
	      "       kmgr-model --help\n"
	      "DTYPE: f32 f16 bf16 i8 u8 i16 u16 i32 u32 i64 u64; DIMS: e.g. 1x4x8 (1..8 dims).\n"
	      "--cores N: subgraph count (nkbin), 1..256, default 1; --cc: collectives context.\n"
	      "Exit status: 0 ok, 2 bad arguments or file, 1 out of memory.\n"
	      "KMGR_FAULT=alloc:SITE:N injects faults (sites: --list-fault-sites).\n",
	      f);
}

/* The one number rule (base/knum.h). */
static bool parse_u32(const char *s, uint32_t *v)
{
	return knum_parse_u32(s, 0, UINT32_MAX, v) == 0;
}

/* "1x4x8" into shape: 1..8 nonzero numbers, each separator between two. */
static bool parse_dims(char *s, uint32_t *shape, uint32_t *ndim)
{
	*ndim = 0;
	for (;;) {
		char *x = strchr(s, 'x');

		if (x)
			*x = 0;
		if (*ndim == KMODEL_MAX_NDIM || !parse_u32(s, &shape[*ndim]) || !shape[*ndim])
			return false;
		(*ndim)++;
		if (!x)
			return true;
		s = x + 1;
	}
}

/* NAME:DTYPE:DIMS, split from the right so a name may hold ':'. */
static int add_tensor_arg(kmodel_t *m, const char *arg, nrt_tensor_usage_t usage)
{
	const char *opt = usage == NRT_TENSOR_USAGE_INPUT ? "--input" : "--output";
	char buf[512], *dt, *dims;
	uint32_t shape[KMODEL_MAX_NDIM], ndim;
	int dtype;
	NRT_STATUS rc;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return fail("%s '%.40s...': too long", opt, arg);
	dims = strrchr(buf, ':');
	if (!dims)
		return fail("%s '%s': want NAME:DTYPE:DIMS", opt, arg);
	*dims++ = 0;
	dt = strrchr(buf, ':');
	if (!dt)
		return fail("%s '%s': want NAME:DTYPE:DIMS", opt, arg);
	*dt++ = 0;
	dtype = kmodel_dtype_from_name(dt);
	if (dtype < 0)
		return fail("%s '%s': unknown dtype '%s'", opt, arg, dt);
	if (!parse_dims(dims, shape, &ndim))
		return fail("%s '%s': bad DIMS (want 1..8 nonzero numbers like 1x4x8)", opt, arg);
	rc = kmodel_add_tensor(m, buf, usage, (nrt_dtype_t)dtype, ndim, shape);
	if (rc == NRT_FAIL_HOST_MEM_ALLOC) /* not the argument's fault: exit 1 */
		return fail("%s '%s': out of memory", opt, arg), 1;
	if (rc)
		return fail("%s '%s': rejected (status %d)", opt, arg, rc);
	return 0;
}

/* Whole or not at all (kfile.h): a failed write leaves an existing FILE. */
static int write_file(const char *path, const uint8_t *buf, size_t len)
{
	if (kfile_write(path, buf, len))
		return fail("cannot write %s: %s", path, strerror(errno));
	return 0;
}

typedef struct create_args {
	const char *out, *name;
	uint32_t cores;
	bool cc;
} create_args_t;

static const struct option create_opts[] = {
    {"output-file", required_argument, NULL, 'o'},
    {"name", required_argument, NULL, 'n'},
    {"cores", required_argument, NULL, 'c'},
    {"cc", no_argument, NULL, 'C'},
    {"input", required_argument, NULL, 'I'},
    {"output", required_argument, NULL, 'O'},
    {NULL, 0, NULL, 0},
};

/* First pass: the scalar options.  Tensors are added in a second pass, in
 * command-line order, once the model exists. */
static int create_scan(int argc, char **argv, create_args_t *a)
{
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:", create_opts, NULL)) != -1) {
		if (c == 'o')
			a->out = optarg;
		else if (c == 'n')
			a->name = optarg;
		else if (c == 'c' && !(parse_u32(optarg, &a->cores) && a->cores >= 1 &&
		                       a->cores <= KMODEL_MAX_SUBGRAPHS))
			return fail("--cores '%s': want 1..%d", optarg, KMODEL_MAX_SUBGRAPHS);
		else if (c == 'C')
			a->cc = true;
		else if (c == ':')
			return fail("option '%s' needs an argument", argv[optind - 1]);
		else if (c == '?' && optopt && !strncmp(argv[optind - 1], "--", 2))
			/* a long option given a value it does not take (--cc=1):
			 * optopt is its internal letter, no name of the user's */
			return fail("create: option '%s' takes no value", argv[optind - 1]);
		else if (c == '?' && optopt) /* a short one, maybe inside "-zq" */
			return fail("create: unknown option '-%c'", optopt);
		else if (c == '?')
			return fail("create: unknown option '%s'", argv[optind - 1]);
	}
	if (optind < argc)
		return fail("create: unexpected argument '%s'", argv[optind]);
	if (!a->out)
		return fail("create: missing -o FILE");
	return 0;
}

static int create_tensors(int argc, char **argv, kmodel_t *m)
{
	int c, rc = 0;

	optind = 1;
	while (!rc && (c = getopt_long(argc, argv, ":o:", create_opts, NULL)) != -1) {
		if (c == 'I')
			rc = add_tensor_arg(m, optarg, NRT_TENSOR_USAGE_INPUT);
		else if (c == 'O')
			rc = add_tensor_arg(m, optarg, NRT_TENSOR_USAGE_OUTPUT);
	}
	return rc;
}

static int cmd_create(int argc, char **argv)
{
	create_args_t a = {.name = "model", .cores = 1};
	const char *why;
	uint8_t *buf = NULL;
	kmodel_t *m = NULL;
	size_t len = 0;
	NRT_STATUS st;
	int rc;

	rc = create_scan(argc, argv, &a);
	if (rc)
		return rc;
	/* before the model is built: a folder, a FIFO with no reader, a link
	 * to nothing is refused now, not after */
	if (kfile_output_ok(a.out, NULL, &why))
		return fail("create: %s %s", a.out, why);
	m = kmodel_new(a.name, a.cores, a.cc);
	if (!m)
		return last_log[0] ? fail("create")
		                   : (fputs("kmgr-model: out of memory\n", stderr), 1);
	rc = create_tensors(argc, argv, m);
	if (rc)
		goto out;
	st = kmodel_serialize(m, &buf, &len);
	if (st)
		rc = st == NRT_FAIL_HOST_MEM_ALLOC ? (fail("create: out of memory"), 1)
		                                   : fail("create: %s", a.out);
	else
		rc = write_file(a.out, buf, len);
out:
	kfree(buf);
	kmodel_free(m);
	return rc;
}

static const char *const usage_names[] = {"input", "output"};

static void show_model(const kmodel_t *m)
{
	const uint8_t *u = m->uuid;
	int w = 4;

	printf("name:     %s\nversion:  %u\n", m->name, m->version);
	printf("uuid:     %02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n",
	       u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
	       u[13], u[14], u[15]);
	printf("nkbin:    %u\ncc:       %s\n", m->nkbin, m->has_cc ? "yes" : "no");
	printf("tensors:  %u (%u in, %u out)\n", m->n_tensors, kmodel_input_count(m),
	       kmodel_output_count(m));
	for (uint32_t i = 0; i < m->n_tensors; i++)
		if ((int)strlen(m->tensors[i].name) > w)
			w = (int)strlen(m->tensors[i].name);
	printf("%5s  %-*s  %-6s  %-5s  %-20s  %s\n", "index", w, "name", "usage", "dtype", "shape",
	       "size");
	for (uint32_t i = 0; i < m->n_tensors; i++) {
		const kmodel_tensor_t *t = &m->tensors[i];
		char shape[128];
		int n = 0;

		for (uint32_t d = 0; d < t->ndim; d++)
			n += snprintf(shape + n, sizeof(shape) - (size_t)n, "%s%u", d ? "x" : "",
			              t->shape[d]);
		printf("%5u  %-*s  %-6s  %-5s  %-20s  %llu\n", i, w, t->name, usage_names[t->usage],
		       kmodel_dtype_name(t->dtype), shape, (unsigned long long)t->size);
	}
}

static int cmd_show(int argc, char **argv)
{
	static uint8_t buf[MAX_FILE + 1];
	kmodel_t *m = NULL;
	size_t len;
	NRT_STATUS st;
	FILE *f;

	if (argc != 2 || argv[1][0] == '-')
		return fail("show: want exactly one FILE");
	f = kfile_open_input(argv[1]);
	if (!f)
		return fail("%s: %s", argv[1], kfile_input_error(errno));
	len = fread(buf, 1, sizeof(buf), f);
	if (ferror(f)) {
		int err = errno;

		fclose(f);
		return fail("%s: read error: %s", argv[1], strerror(err));
	}
	fclose(f);
	if (len > MAX_FILE)
		return fail("%s: larger than any container (%d bytes)", argv[1], MAX_FILE);
	st = kmodel_parse(buf, len, &m);
	if (st == NRT_FAIL_HOST_MEM_ALLOC)
		return fail("%s: out of memory", argv[1]), 1;
	if (st)
		return fail("%s: not a valid model (status %d)", argv[1], st);
	show_model(m);
	kmodel_free(m);
	return kfile_stdout_done("kmgr-model show") ? 1 : 0;
}

static int list_fault_sites(void)
{
	size_t n;
	const kfault_site_info_t *s = kfault_sites(&n);

	for (size_t i = 0; i < n; i++)
		printf("%d %s %s\n", (int)s[i].site, s[i].name, s[i].description);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	klog_set_sink(log_sink, NULL);
	if (kfault_plan_from_env() != 0)
		return EXIT_BAD; /* kfault printed the one line */
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
		return usage(stdout), 0;
	/* `create --help`, `show --help`: the same text (it covers both) */
	if (argc == 3 && (!strcmp(cmd, "create") || !strcmp(cmd, "show")) &&
	    (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")))
		return usage(stdout), 0;
	if (strcmp(cmd, "--list-fault-sites") == 0 && argc == 2)
		return list_fault_sites();
	if (strcmp(cmd, "create") == 0)
		return cmd_create(argc - 1, argv + 1);
	if (strcmp(cmd, "show") == 0)
		return cmd_show(argc - 1, argv + 1);
	if (!*cmd)
		return fail("missing command (try --help)");
	return fail("unknown command or option '%s' (try --help)", cmd);
}
