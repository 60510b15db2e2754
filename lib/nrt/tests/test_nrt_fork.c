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

/* Waits up to secs seconds for pid; a child still running then is killed. */
static int wait_bounded(pid_t pid, int secs)
{
	int st = 0;

	for (int i = 0; i < secs * 100; i++) {
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
	KT_EQ(wait_bounded(pid, 20), 0);
	KT_EQ(nrt_execute(m, io.in_set, io.out_set), NRT_SUCCESS);
	kt_nrt_io_check(&io);
	kt_nrt_io_free(&io);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrt_close();
	free(bytes);
}

/* fork-1.2: forks taken while another thread cycles nrt_init/nrt_close.
 * A fork can land while that thread holds the lifecycle lock; the child
 * has the lock held by a thread it does not have.  Its nrt_init must
 * answer at once: NRT_SUCCESS (the fork fell between a close and the next
 * init) or NRT_FAILURE (the runtime was up or half-built: it belongs to
 * the parent), never wait.  200 forks, each child bounded by wait_bounded. */
enum { FORKS = 200 };

typedef struct cycler {
	ks_atomic_t stop, cycles;
} cycler_t;

static void *cycle_thread(void *arg)
{
	cycler_t *c = arg;

	while (!ks_atomic_load(&c->stop)) {
		if (nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_SUCCESS)
			nrt_close();
		ks_atomic_add(&c->cycles, 1);
	}
	return NULL;
}

/* 0: nrt_init answered NRT_SUCCESS (and the runtime was closed); 1:
 * NRT_FAILURE; 20: any other answer. */
static int child_init(void)
{
	NRT_STATUS st = nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "");

	if (st == NRT_SUCCESS) {
		nrt_close();
		return 0;
	}
	return st == NRT_FAILURE ? 1 : 20;
}

static void discard_line(void *ctx, klog_level_t level, const char *line)
{
	(void)ctx;
	(void)level;
	(void)line;
}

static void fork_during_lifecycle(void)
{
	cycler_t c = {KS_ATOMIC_INIT(0), KS_ATOMIC_INIT(0)};
	int hung = 0, bad = 0, inited = 0, refused = 0;
	ks_thread_t th;

	/* the children's refusals are one log line each, not this test's
	 * output; a sink without a lock (a ktest sink's lock could be held by
	 * the cycler at a fork) */
	klog_set_sink(discard_line, NULL);
	KT_EQ(ks_thread_create(&th, "cycler", cycle_thread, &c), 0);
	for (int i = 0; i < FORKS; i++) {
		pid_t pid;
		int rc;

		fflush(NULL);
		pid = fork();
		KT_ASSERT(pid >= 0);
		if (pid == 0)
			_exit(child_init());
		rc = wait_bounded(pid, 5);
		hung += rc < 0;
		inited += rc == 0;
		refused += rc == 1;
		bad += rc > 1;
	}
	ks_atomic_store(&c.stop, 1);
	KT_EQ(ks_thread_join(&th, NULL), 0);
	klog_set_sink(NULL, NULL);
	fprintf(stderr,
	        "fork-1.2: %d forks over %lld init/close cycles: %d inited, %d refused, %d hung, "
	        "%d other\n",
	        FORKS, (long long)ks_atomic_peek(&c.cycles), inited, refused, hung, bad);
	KT_EQ(hung, 0);
	KT_EQ(bad, 0);
}

int main(void)
{
	nt_env_clear();
	KT_CASE("fork-1.1 a forked child gets NRT_FAILURE, not a hang", forked_child_refused);
	KT_CASE("fork-1.2 forks during init/close cycles: no child waits", fork_during_lifecycle);
	KT_DONE();
}
