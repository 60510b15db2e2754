/*
 * test_nrt_badplan.c - a KMGR_FAULT plan that does not parse fails nrt_init,
 * and every later nrt_init of the process too: a second one that succeeded
 * would run the client with no plan, as if the plan were in force.
 * Its own process: the refusal lasts for the process (init.c).
 */
#include <stdlib.h>

#include "nrt_test.h"

/* badplan-1.1: both inits answer NRT_INVALID; with the variable gone the
 * process still refuses (the plan it was given never ran). */
static void bad_plan_sticks(void)
{
	setenv("KMGR_FAULT", "alloc:any:+1", 1);
	KT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_INVALID);
	KT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_INVALID);
	unsetenv("KMGR_FAULT");
	KT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_INVALID);
}

int main(void)
{
	nt_env_clear();
	KT_CASE("badplan-1.1 a bad fault plan fails every nrt_init", bad_plan_sticks);
	KT_DONE();
}
