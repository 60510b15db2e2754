/*
 * sched_tsan.c - (tsan preset only) proof that the controlled backend's
 * baton handoff creates no happens-before between logical threads, while
 * its modelled mutex creates exactly the one a real mutex would: the
 * helper's unlocked counter is reported as a data race, the locked one is
 * not, and neither is a joined thread's slot handed to a new thread.  The
 * helper runs in a child process so that its report (and the abort that
 * halt_on_error makes of it) stays out of this test.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"

static const char *helper;

/* Run the helper with mode; its stderr into buf; returns the wait status. */
static int run_helper(const char *mode, char *buf, size_t len)
{
	int fds[2], status;
	size_t off = 0;
	ssize_t n;
	pid_t pid;

	KT_EQ(pipe(fds), 0);
	pid = fork();
	KT_GE(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		execl(helper, helper, mode, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	while (off + 1 < len && (n = read(fds[0], buf + off, len - off - 1)) > 0)
		off += (size_t)n;
	buf[off] = '\0';
	close(fds[0]);
	KT_EQ(waitpid(pid, &status, 0), pid);
	return status;
}

/* tsan-1.1: the lost update on a plain int is reported by TSan while the
 * controlled backend runs the threads one at a time. */
static void case_race_reported(void)
{
	static char out[65536];
	int status = run_helper("racy", out, sizeof(out));

	fputs(out, stderr);
	KT_ASSERT(strstr(out, "WARNING: ThreadSanitizer: data race") != NULL);
	KT_ASSERT(strstr(out, "adder") != NULL);
	/* the report is about the helper's counter, not some other race */
	KT_ASSERT(strstr(out, "Location is global 'counter") != NULL);
	KT_ASSERT(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

/* tsan-1.2: the same counter under a modelled ks_mutex is not reported. */
static void case_locked_clean(void)
{
	static char out[65536];
	int status = run_helper("locked", out, sizeof(out));

	fputs(out, stderr);
	KT_ASSERT(strstr(out, "ThreadSanitizer") == NULL);
	KT_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* tsan-1.3: a joined thread's slot, given to a thread whose creator never
 * synchronized with the joiner, is the scheduler's memory, not the
 * program's: no report (the fuzz target concurrent reported the slot's
 * spin counter, written at every load/store callback, as a race between
 * two 'kmgr-stage' threads); "reuse-spin" the same with the spin
 * detector's counters (ctl_spin.c). */
static void case_slot_reuse_clean(void)
{
	static char out[65536];
	static const char *const modes[] = {"reuse", "reuse-spin"};

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		int status = run_helper(modes[i], out, sizeof(out));

		fputs(out, stderr);
		KT_ASSERT(strstr(out, "ThreadSanitizer") == NULL);
		KT_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
}

int main(int argc, char **argv)
{
	KT_EQ(argc, 2);
	helper = argv[1];
	KT_CASE("tsan-1.1 race reported under the controlled backend", case_race_reported);
	KT_CASE("tsan-1.2 locked counter is clean", case_locked_clean);
	KT_CASE("tsan-1.3 a reused thread slot is clean", case_slot_reuse_clean);
	KT_DONE();
}
