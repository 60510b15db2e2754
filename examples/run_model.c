/*
 * run_model.c - the "first app" of the Neuron Runtime, for kmgr-fuzz: load
 * a model file, bind one tensor per model input and output (from
 * nrt_get_model_tensor_info), fill the inputs from files, execute, write
 * every output to NAME.out in the current directory, and clean up.
 *
 * It uses only the public headers, so it builds against an installed prefix:
 *   cc run_model.c -I<prefix>/include -L<prefix>/lib -lnrt -pthread
 *
 *   run_model MODEL [INPUT_NAME INPUT_FILE]...
 *
 * An input with no file on the command line is zero-filled; a name that is
 * not one of the model's inputs is refused.  The outputs are written whole
 * or not at all: all to temporary files first, then renamed over NAME.out,
 * so a failed write (a full disk, ulimit -f) leaves every old NAME.out as it
 * was.  An output whose
 * name is not a plain file name (a '/', a leading '.', a control character)
 * is refused before anything runs, so a model cannot make it write outside
 * the current directory.  With NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS > 0
 * (implicit async) nrt_execute only queues the execution: the program waits
 * for its completion callback before it reads the outputs.  Exit status 0
 * on success, 1 on a runtime error, 2 on bad arguments or files.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nrt/nrt.h>
#include <nrt/nrt_experimental.h>

#define P_ERR(...) fprintf(stderr, "run_model: " __VA_ARGS__)
#define USAGE      "usage: run_model MODEL [INPUT_NAME INPUT_FILE]...\n"

/* The completion of the one implicit-async execution, from the runtime's
 * callback thread. */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cv;
	int done;
	NRT_STATUS status;
} g_async = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NRT_SUCCESS};

static void on_async_done(void *params, uint32_t model_id, uint32_t vnc, uint64_t job_id,
                          NRT_STATUS status)
{
	(void)params;
	(void)model_id;
	(void)vnc;
	(void)job_id;
	pthread_mutex_lock(&g_async.lock);
	g_async.done++;
	g_async.status = status;
	pthread_cond_broadcast(&g_async.cv);
	pthread_mutex_unlock(&g_async.lock);
}

/* Implicit async is on when the variable holds a number > 0 (nrt_init has
 * already refused anything that is not a number). */
static int implicit_async(void)
{
	const char *v = getenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS");

	return v && strtoul(v, NULL, 10) > 0;
}

/* nrt_execute, and in implicit-async mode the wait for its completion: the
 * outputs are written, and the tensors may be freed, only after it. */
static NRT_STATUS execute_and_wait(nrt_model_t *model, nrt_tensor_set_t *in, nrt_tensor_set_t *out)
{
	NRT_STATUS st = nrt_execute(model, in, out);

	if (st != NRT_SUCCESS || !implicit_async())
		return st;
	pthread_mutex_lock(&g_async.lock);
	while (!g_async.done)
		pthread_cond_wait(&g_async.cv, &g_async.lock);
	st = g_async.status;
	pthread_mutex_unlock(&g_async.lock);
	return st;
}

/* An output is written to NAME.out in the current directory: NAME must be a
 * plain file name, not a path ('/'), not hidden or a parent ('.', '..'),
 * and free of control characters. */
static int safe_output_name(const char *name)
{
	if (!name[0] || name[0] == '.')
		return 0;
	for (const char *p = name; *p; p++)
		if (*p == '/' || iscntrl((unsigned char)*p))
			return 0;
	return 1;
}

typedef struct mapped_file {
	void *data;
	size_t size;
} mapped_file_t;

/* A regular, non-empty file, mapped.  O_NONBLOCK: a FIFO would block the
 * open until a writer came; it is refused at once instead. */
static int map_file(const char *path, mapped_file_t *f)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	const char *why = NULL;

	if (fd < 0)
		why = strerror(errno);
	else if (fstat(fd, &st) != 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	else if (st.st_size <= 0)
		why = "empty";
	if (why) {
		P_ERR("%s: %s\n", path, why);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	f->size = (size_t)st.st_size;
	f->data = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f->data == MAP_FAILED) {
		P_ERR("%s: mmap failed\n", path);
		return -1;
	}
	return 0;
}

/* The file named for input 'name' on the command line, or NULL. */
static const char *input_file(int argc, char **argv, const char *name)
{
	for (int i = 2; i + 1 < argc; i += 2)
		if (strcmp(argv[i], name) == 0)
			return argv[i + 1];
	return NULL;
}

/* Every failure prints one line naming the call that failed: returns 0 when
 * st is NRT_SUCCESS, else -1 after "run_model: CALL(WHAT): STATUS". */
static int check(NRT_STATUS st, const char *call, const char *what)
{
	if (st == NRT_SUCCESS)
		return 0;
	P_ERR("%s(%s): %s\n", call, what, nrt_get_status_as_str(st));
	return -1;
}

/* 0, -1 on a runtime error, -2 on a bad input file. */
static int fill_input(nrt_tensor_t *t, const nrt_tensor_info_t *ti, const char *path)
{
	mapped_file_t f;
	int rc = 0;

	if (!path)
		return check(nrt_tensor_memset(t, 0, 0, ti->size), "nrt_tensor_memset", ti->name);
	if (map_file(path, &f))
		return -2;
	if (f.size != ti->size) {
		P_ERR("%s: %zu bytes, input '%s' takes %zu\n", path, f.size, ti->name, ti->size);
		rc = -2;
	} else {
		rc = check(nrt_tensor_write(t, f.data, 0, f.size), "nrt_tensor_write", ti->name);
	}
	munmap(f.data, f.size);
	return rc;
}

/* Output i's bytes into tmp, a new file of its own in the current
 * directory (O_EXCL): 0, or -1 after one line. */
static int stage_output(nrt_tensor_t *t, const nrt_tensor_info_t *ti, const char *tmp)
{
	void *buf = malloc(ti->size);
	int fd, rc = -1;
	ssize_t n = 0;

	if (!buf) {
		P_ERR("malloc(%zu) for output '%s' failed\n", ti->size, ti->name);
		return -1;
	}
	if (check(nrt_tensor_read(t, buf, 0, ti->size), "nrt_tensor_read", ti->name))
		goto out;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		P_ERR("%s.out: cannot create a file here: %s\n", ti->name, strerror(errno));
		goto out;
	}
	for (size_t done = 0; done < ti->size; done += (size_t)n) {
		n = write(fd, (char *)buf + done, ti->size - done);
		if (n <= 0 && errno == EINTR)
			n = 0;
		else if (n <= 0)
			break;
	}
	rc = n < 0 || (n == 0 && ti->size) || fsync(fd) != 0 ? -1 : 0;
	if (close(fd) != 0)
		rc = -1;
	if (rc)
		P_ERR("%s.out: write failed: %s\n", ti->name, strerror(errno ? errno : EIO));
out:
	free(buf);
	return rc;
}

/* Output i's temporary file: hidden, in the current directory, this
 * process's own. */
static void tmp_name(char *buf, size_t len, uint64_t i)
{
	snprintf(buf, len, ".run_model-%ld-%llu.tmp", (long)getpid(), (unsigned long long)i);
}

/* Every output, whole or not at all: each is written to a temporary file
 * first, and only when all of them are complete do they replace NAME.out
 * (rename); a failure removes the temporaries and leaves every old NAME.out
 * as it was.  0, or 1 after one line. */
static int save_outputs(const nrt_tensor_info_array_t *info, nrt_tensor_t **tensors)
{
	char tmp[NRT_TENSOR_NAME_MAX + 48], path[NRT_TENSOR_NAME_MAX + 8];
	uint64_t staged = 0, i;
	int rc = 0;

	for (i = 0; i < info->tensor_count && !rc; i++) {
		if (info->tensor_array[i].usage != NRT_TENSOR_USAGE_OUTPUT)
			continue;
		tmp_name(tmp, sizeof(tmp), i);
		rc = stage_output(tensors[i], &info->tensor_array[i], tmp);
		if (!rc)
			staged = i + 1;
		else
			unlink(tmp);
	}
	for (i = 0; i < staged; i++) {
		const nrt_tensor_info_t *ti = &info->tensor_array[i];

		if (ti->usage != NRT_TENSOR_USAGE_OUTPUT)
			continue;
		tmp_name(tmp, sizeof(tmp), i);
		snprintf(path, sizeof(path), "%s.out", ti->name);
		if (rc)
			unlink(tmp);
		else if (rename(tmp, path) != 0) {
			P_ERR("%s: cannot replace: %s\n", path, strerror(errno));
			unlink(tmp);
			rc = -1;
		}
	}
	return rc ? 1 : 0;
}

/* Allocate one device tensor per model tensor and add it to its set. */
static int bind_tensors(const nrt_tensor_info_array_t *info, nrt_tensor_t **tensors,
                        nrt_tensor_set_t *inputs, nrt_tensor_set_t *outputs)
{
	for (uint64_t i = 0; i < info->tensor_count; i++) {
		const nrt_tensor_info_t *ti = &info->tensor_array[i];
		nrt_tensor_set_t *set = ti->usage == NRT_TENSOR_USAGE_INPUT ? inputs : outputs;

		if (check(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, ti->size, ti->name,
		                              &tensors[i]),
		          "nrt_tensor_allocate", ti->name) ||
		    check(nrt_add_tensor_to_tensor_set(set, ti->name, tensors[i]),
		          "nrt_add_tensor_to_tensor_set", ti->name))
			return -1;
	}
	return 0;
}

/* 0, or 2 (after a message) when an output's name is not a safe file name. */
static int check_output_names(const nrt_tensor_info_array_t *info)
{
	for (uint64_t i = 0; i < info->tensor_count; i++) {
		const nrt_tensor_info_t *ti = &info->tensor_array[i];

		if (ti->usage == NRT_TENSOR_USAGE_OUTPUT && !safe_output_name(ti->name)) {
			P_ERR("output tensor name '%s' is not a plain file name (a '/', a leading "
			      "'.' or a control character): refusing to write it\n",
			      ti->name);
			return 2;
		}
	}
	return 0;
}

/* Every INPUT_NAME on the command line names an input of the model (a
 * typo would otherwise leave that input zero-filled without a word): 0, or
 * 2 after one line. */
static int check_input_names(int argc, char **argv, const nrt_tensor_info_array_t *info)
{
	for (int a = 2; a + 1 < argc; a += 2) {
		uint64_t i;

		for (i = 0; i < info->tensor_count; i++)
			if (info->tensor_array[i].usage == NRT_TENSOR_USAGE_INPUT &&
			    strcmp(info->tensor_array[i].name, argv[a]) == 0)
				break;
		if (i == info->tensor_count) {
			P_ERR("'%s' is not an input of %s\n", argv[a], argv[1]);
			return 2;
		}
	}
	return 0;
}

/* Fill every input from its file (or zeros): 0, 1 or 2 as the exit status. */
static int fill_inputs(int argc, char **argv, const nrt_tensor_info_array_t *info,
                       nrt_tensor_t **tensors)
{
	for (uint64_t i = 0; i < info->tensor_count; i++) {
		const nrt_tensor_info_t *ti = &info->tensor_array[i];
		int rc;

		if (ti->usage != NRT_TENSOR_USAGE_INPUT)
			continue;
		rc = fill_input(tensors[i], ti, input_file(argc, argv, ti->name));
		if (rc)
			return rc == -2 ? 2 : 1;
	}
	return 0;
}

static int run(int argc, char **argv, nrt_model_t *model)
{
	nrt_tensor_info_array_t *info = NULL;
	nrt_tensor_set_t *inputs = NULL, *outputs = NULL;
	nrt_tensor_t **tensors = NULL;
	int rc = 1;

	if (check(nrt_get_model_tensor_info(model, &info), "nrt_get_model_tensor_info", argv[1]) ||
	    check(nrt_allocate_tensor_set(&inputs), "nrt_allocate_tensor_set", "inputs") ||
	    check(nrt_allocate_tensor_set(&outputs), "nrt_allocate_tensor_set", "outputs"))
		goto out;
	rc = check_output_names(info);
	if (!rc)
		rc = check_input_names(argc, argv, info);
	if (rc)
		goto out;
	rc = 1;
	tensors = calloc(info->tensor_count, sizeof(*tensors));
	if (!tensors) {
		P_ERR("calloc of %llu tensor handles failed\n",
		      (unsigned long long)info->tensor_count);
		goto out;
	}
	if (bind_tensors(info, tensors, inputs, outputs))
		goto out;
	rc = fill_inputs(argc, argv, info, tensors);
	if (rc)
		goto out;
	rc = 1;
	if (check(execute_and_wait(model, inputs, outputs), "nrt_execute", argv[1]))
		goto out;
	rc = save_outputs(info, tensors);
out:
	for (uint64_t i = 0; tensors && i < info->tensor_count; i++)
		nrt_tensor_free(&tensors[i]);
	free(tensors);
	nrt_destroy_tensor_set(&inputs);
	nrt_destroy_tensor_set(&outputs);
	nrt_free_model_tensor_info(info);
	return rc;
}

int main(int argc, char **argv)
{
	mapped_file_t neff;
	nrt_model_t *model = NULL;
	NRT_STATUS st;
	int rc;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(USAGE, stdout);
		return 0;
	}
	if (argc < 2 || argc % 2 != 0) {
		fputs(USAGE, stderr);
		return 2;
	}
	if (map_file(argv[1], &neff))
		return 2;
	/* a file size limit (ulimit -f) is a write error to report, not a kill */
	signal(SIGXFSZ, SIG_IGN);
	/* Registered before nrt_init, so it is in place for the first execution. */
	nrt_register_async_exec_callback(on_async_done, NULL);
	st = nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "");
	if (st != NRT_SUCCESS) {
		P_ERR("nrt_init: %s\n", nrt_get_status_as_str(st));
		munmap(neff.data, neff.size);
		return 1;
	}
	st = nrt_load(neff.data, neff.size, -1, -1, &model);
	if (st != NRT_SUCCESS) {
		P_ERR("nrt_load %s: %s\n", argv[1], nrt_get_status_as_str(st));
		rc = st == NRT_INVALID || st == NRT_UNSUPPORTED_NEFF_VERSION ? 2 : 1;
	} else {
		rc = run(argc, argv, model);
		if (check(nrt_unload(model), "nrt_unload", argv[1]) && rc == 0)
			rc = 1;
	}
	nrt_close();
	munmap(neff.data, neff.size);
	return rc;
}
