/*
 * test_status_table.c - the focus of this file is the stress binaries'
 * status table: every status the library can return has a name in
 * nrt_status.h (nrt_get_status_as_str), and every named status is known to
 * the checks (torture_status_known) and counted under its own name, so a
 * clean error is never reported as "unknown status" (stress_faults once
 * failed its own default run on NRT_EXEC_HW_ERR_DMA_ABORT, 1203).
 */
#include "ktest.h"
#include "torture.h"
#include "torture_int.h"

/* status-1.1: named <=> known, over every value up to past the largest. */
static void t_named_is_known(void)
{
	unsigned named = 0;

	for (int st = 0; st < 4096; st++) {
		bool has_name = strcmp(nrt_get_status_as_str((NRT_STATUS)st), "NRT_UNKNOWN_STATUS");

		if (torture_status_known((NRT_STATUS)st) != has_name)
			KT_FAIL("status %d (%s): known to the checks %d, named %d", st,
			        nrt_get_status_as_str((NRT_STATUS)st),
			        torture_status_known((NRT_STATUS)st), has_name);
		named += has_name;
	}
	KT_EQ(named, TORTURE_NSTAT - 1);
	KT_ASSERT(torture_status_known(NRT_EXEC_HW_ERR_DMA_ABORT));
}

/* status-1.2: each counted slot has its status's own name, "other" last. */
static void t_names(void)
{
	for (int i = 0; i < TORTURE_NSTAT - 1; i++) {
		KT_ASSERT(strncmp(torture_stat_name(i), "NRT_", 4) == 0);
		for (int j = 0; j < i; j++)
			KT_ASSERT(strcmp(torture_stat_name(i), torture_stat_name(j)) != 0);
	}
	KT_STREQ(torture_stat_name(TORTURE_NSTAT - 1), "other");
}

int main(void)
{
	KT_CASE("status-1.1 every named status is known", t_named_is_known);
	KT_CASE("status-1.2 one name a slot", t_names);
	KT_DONE();
}
