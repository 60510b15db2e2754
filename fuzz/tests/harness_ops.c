/*
 * harness_ops.c - the focus of this file is operations of the harness
 * (fuzz/harness/) as programs run with the whole oracle: each case runs a
 * text program whose operations must all reach the library and succeed,
 * while the oracle checks the statuses against its reference model and the
 * values the library answers (a wrong answer, or a wrong prediction,
 * aborts the run with an ORACLE line).
 */
#include <string.h>

#include "harness/run.h"
#include "ktest.h"
#include "oracle/oracle.h"

static kprog_t prog;

/* Runs src (single-threaded: statuses checked exactly); returns the ops
 * that reached the library, all of which must have succeeded. */
static uint32_t run_ok(const char *src)
{
	kprog_run_opts_t o;
	kprog_run_result_t r;
	char err[256];

	KT_EQ(kprog_parse(src, &prog, err, sizeof(err)), 0);
	kprog_run_opts_init(&o);
	KT_EQ(kprog_run(&prog, &o, &r), 0);
	KT_EQ(r.ops_ok, r.ops_run);
	return r.ops_run;
}

/* harness-1.1: nc_info answers the cores each load asked for: a start and
 * a count given, a count of one subgraph per core (lnc2: two cores, the
 * start the library's), one subgraph spread over three cores; a slot
 * emptied by an unload is not asked. */
static void case_nc_info(void)
{
	KT_EQ(run_ok("config mode=sync nc=4 qdepth=1 threads=1\n"
	             "t0 load slot=0 tmpl=1 start=2 count=1\n"
	             "t0 nc_info slot=0\n"
	             "t0 load slot=1 tmpl=3 start=-1 count=-1\n"
	             "t0 nc_info slot=1\n"
	             "t0 load slot=2 tmpl=0 start=0 count=3\n"
	             "t0 nc_info slot=2\n"
	             "t0 unload slot=0\n"
	             "t0 nc_info slot=0\n"),
	      7);
}

/* harness-1.2: the same in implicit-async mode on 8 cores, the model on
 * the last one. */
static void case_nc_info_async(void)
{
	KT_EQ(run_ok("config mode=async nc=8 qdepth=2 threads=1\n"
	             "t0 load slot=3 tmpl=4 start=4 count=4\n"
	             "t0 nc_info slot=3\n"
	             "t0 load slot=0 tmpl=2 start=7 count=1\n"
	             "t0 nc_info slot=0\n"),
	      4);
}

int main(void)
{
	oracle_log_quiet();
	KT_CASE("harness-1.1 nc_info", case_nc_info);
	KT_CASE("harness-1.2 nc_info, async", case_nc_info_async);
	KT_DONE();
}
