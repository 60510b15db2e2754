/*
 * test_nrt_fork.c - a child of fork() taken while the runtime is up.  The
 * child has the parent's runtime in memory but none of its device threads:
 * an nrt_execute there would wait for ever for a completion that never comes.
 * The contract (docs/api-contract.md, "fork"): in such a child every call
 * that uses the runtime answers NRT_FAILURE at once, nrt_init too, and
 * nrt_close does nothing; the parent's runtime is untouched.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nrt_test.h"
#include "sched/ksched.h"

static const uint32_t in1[] = {64}, out1[] = {64};

/* The child's checks; its exit status says which one failed (0: all). */
static int child(nrt_model_t *m, kt_nrt_io_t *io)
{
	uint32_t n = 0;

	if (nrt_execute(m, io->in_set, io->out_set) != NRT_FAILURE)
		return 10;
	if (nrt_get_model_nc_count(m, &n) != NRT_FAILURE)
		return 11;
	if (nrt_unload(m) != NRT_FAILURE)
		return 12;
	if (nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") != NRT_FAILURE)
		return 13;
	nrt_close();
	return 0;
}

/* Waits up to 20 s for pid; a child still running then is killed. */
static int wait_bounded(pid_t pid)
{
	int st = 0;

	for (int i = 0; i < 2000; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		ks_usleep_prod(10000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1; /* hung */
}

/* fork-1.1: the child answers NRT_FAILURE at once; the parent goes on. */
static void forked_child_refused(void)
{
	size_t len;
	uint8_t *bytes = kt_model_malloc("nt", 1, false, 1, in1, 1, out1, &len);
	nrt_model_t *m = NULL;
	kt_nrt_io_t io = {.n_in = 1, .n_out = 1, .in_sizes = {64}, .out_sizes = {64}};
	pid_t pid;

	nt_init();
	KT_EQ(nrt_load(bytes, len, -1, -1, &m), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	fflush(NULL);
	pid = fork();
	KT_ASSERT(pid >= 0);
	if (pid == 0)
		_exit(child(m, &io));
	KT_EQ(wait_bounded(pid), 0);
	KT_EQ(nrt_execute(m, io.in_set, io.out_set), NRT_SUCCESS);
	kt_nrt_io_check(&io);
	kt_nrt_io_free(&io);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrt_close();
	free(bytes);
}

int main(void)
{
	nt_env_clear();
	KT_CASE("fork-1.1 a forked child gets NRT_FAILURE, not a hang", forked_child_refused);
	KT_DONE();
}
