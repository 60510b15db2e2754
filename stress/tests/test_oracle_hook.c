/*
 * test_oracle_hook.c - the focus of this file is the oracle's failure hook
 * (fuzz/oracle/oracle.h), through which the stress binaries use the
 * oracle's checks: with a hook installed a violation goes to the hook and
 * the check returns (a stress run counts it and goes on to its report);
 * without one (the fuzz runner, the emitted tests) it is the ORACLE line
 * and abort().
 */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/kalloc.h"
#include "ktest.h"
#include "oracle/oracle.h"

static struct {
	int calls;
	char invariant[64];
	char msg[256];
} got;

static void hook(void *ctx, const char *invariant, const char *msg)
{
	KT_ASSERT(ctx == &got);
	got.calls++;
	snprintf(got.invariant, sizeof(got.invariant), "%s", invariant);
	snprintf(got.msg, sizeof(got.msg), "%s", msg);
}

/* hook-1.1: oracle_fail hands the hook the invariant and the formatted
 * details, and returns. */
static void t_hook_takes_it(void)
{
	got.calls = 0;
	oracle_set_fail_hook(hook, &got);
	oracle_fail("some-invariant", "model %u, %d left", 7u, 3);
	oracle_set_fail_hook(NULL, NULL);
	KT_EQ(got.calls, 1);
	KT_STREQ(got.invariant, "some-invariant");
	KT_STREQ(got.msg, "model 7, 3 left");
}

/* hook-1.2: a real check reports through it and goes on: a host
 * allocation live across "close" is leak-after-close, with the caller's
 * 'when' leading the details. */
static void t_check_reports_and_returns(void)
{
	void *p;

	got.calls = 0;
	oracle_set_fail_hook(hook, &got);
	oracle_begin();
	p = kalloc(KFAULT_EMU_DEV_TENSOR, 32);
	KT_ASSERT(p != NULL);
	oracle_check_closed("after round 4");
	kfree(p);
	oracle_check_closed("after round 5");
	oracle_set_fail_hook(NULL, NULL);
	KT_EQ(got.calls, 1);
	KT_STREQ(got.invariant, "leak-after-close");
	KT_ASSERT(strncmp(got.msg, "after round 4: host allocations", 31) == 0);
}

/* hook-1.3: no hook: the stable ORACLE line on stderr, then abort (a
 * sanitizer that handles SIGABRT exits non-zero instead of dying by it). */
static void t_default_aborts(void)
{
	char buf[256] = "";
	int fds[2], status = 0;
	ssize_t n;
	pid_t pid;

	KT_ASSERT(pipe(fds) == 0);
	fflush(NULL);
	pid = fork();
	KT_ASSERT(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		oracle_set_fail_hook(NULL, NULL);
		oracle_fail("some-invariant", "model %u", 7u);
		_exit(0); /* not reached unless oracle_fail returned */
	}
	close(fds[1]);
	n = read(fds[0], buf, sizeof(buf) - 1);
	close(fds[0]);
	KT_ASSERT(waitpid(pid, &status, 0) == pid);
	KT_ASSERT(n > 0);
	buf[n] = 0;
	KT_ASSERT(strncmp(buf, "ORACLE: some-invariant: model 7\n", 32) == 0);
	KT_ASSERT((WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) ||
	          (WIFEXITED(status) && WEXITSTATUS(status) != 0));
}

int main(void)
{
	KT_CASE("hook-1.1 the hook takes a violation, oracle_fail returns", t_hook_takes_it);
	KT_CASE("hook-1.2 a check reports through the hook and goes on",
	        t_check_reports_and_returns);
	KT_CASE("hook-1.3 without a hook: the ORACLE line, then abort", t_default_aborts);
	KT_DONE();
}
