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
 * An input with no file on the command line is zero-filled.  Exit status 0
 * on success, 1 on a runtime error, 2 on bad arguments or files.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nrt/nrt.h>
#include <nrt/nrt_experimental.h>

#define P_ERR(...) fprintf(stderr, "run_model: " __VA_ARGS__)

typedef struct mapped_file {
	void *data;
	size_t size;
} mapped_file_t;

static int map_file(const char *path, mapped_file_t *f)
{
	struct stat st;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
		P_ERR("%s: cannot open or empty\n", path);
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

static int fill_input(nrt_tensor_t *t, const nrt_tensor_info_t *ti, const char *path)
{
	mapped_file_t f;
	int rc = 0;

	if (!path)
		return nrt_tensor_memset(t, 0, 0, ti->size) ? -1 : 0;
	if (map_file(path, &f))
		return -1;
	if (f.size != ti->size) {
		P_ERR("%s: %zu bytes, input '%s' takes %zu\n", path, f.size, ti->name, ti->size);
		rc = -1;
	} else if (nrt_tensor_write(t, f.data, 0, f.size) != NRT_SUCCESS) {
		P_ERR("writing input '%s' failed\n", ti->name);
		rc = -1;
	}
	munmap(f.data, f.size);
	return rc;
}

static int save_output(nrt_tensor_t *t, const nrt_tensor_info_t *ti)
{
	char path[NRT_TENSOR_NAME_MAX + 8];
	void *buf = malloc(ti->size);
	FILE *out;
	int rc = -1;

	if (!buf)
		return -1;
	snprintf(path, sizeof(path), "%s.out", ti->name);
	if (nrt_tensor_read(t, buf, 0, ti->size) != NRT_SUCCESS) {
		P_ERR("reading output '%s' failed\n", ti->name);
		goto out;
	}
	out = fopen(path, "wb");
	if (!out) {
		P_ERR("%s: cannot create\n", path);
		goto out;
	}
	rc = fwrite(buf, 1, ti->size, out) == ti->size ? 0 : -1;
	rc |= fclose(out);
out:
	free(buf);
	return rc;
}

/* Allocate one device tensor per model tensor and add it to its set. */
static int bind_tensors(const nrt_tensor_info_array_t *info, nrt_tensor_t **tensors,
                        nrt_tensor_set_t *inputs, nrt_tensor_set_t *outputs)
{
	for (uint64_t i = 0; i < info->tensor_count; i++) {
		const nrt_tensor_info_t *ti = &info->tensor_array[i];
		nrt_tensor_set_t *set = ti->usage == NRT_TENSOR_USAGE_INPUT ? inputs : outputs;

		if (nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, ti->size, ti->name,
		                        &tensors[i]) != NRT_SUCCESS ||
		    nrt_add_tensor_to_tensor_set(set, ti->name, tensors[i]) != NRT_SUCCESS) {
			P_ERR("allocating tensor '%s' failed\n", ti->name);
			return -1;
		}
	}
	return 0;
}

static int run(int argc, char **argv, nrt_model_t *model)
{
	nrt_tensor_info_array_t *info = NULL;
	nrt_tensor_set_t *inputs = NULL, *outputs = NULL;
	nrt_tensor_t **tensors = NULL;
	NRT_STATUS st;
	int rc = 1;

	if (nrt_get_model_tensor_info(model, &info) != NRT_SUCCESS ||
	    nrt_allocate_tensor_set(&inputs) != NRT_SUCCESS ||
	    nrt_allocate_tensor_set(&outputs) != NRT_SUCCESS)
		goto out;
	tensors = calloc(info->tensor_count, sizeof(*tensors));
	if (!tensors || bind_tensors(info, tensors, inputs, outputs))
		goto out;
	for (uint64_t i = 0; i < info->tensor_count; i++) {
		const nrt_tensor_info_t *ti = &info->tensor_array[i];

		if (ti->usage == NRT_TENSOR_USAGE_INPUT &&
		    fill_input(tensors[i], ti, input_file(argc, argv, ti->name))) {
			rc = 2;
			goto out;
		}
	}
	st = nrt_execute(model, inputs, outputs);
	if (st != NRT_SUCCESS) {
		P_ERR("nrt_execute: %s\n", nrt_get_status_as_str(st));
		goto out;
	}
	rc = 0;
	for (uint64_t i = 0; i < info->tensor_count; i++)
		if (info->tensor_array[i].usage == NRT_TENSOR_USAGE_OUTPUT &&
		    save_output(tensors[i], &info->tensor_array[i]))
			rc = 1;
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

	if (argc < 2 || argc % 2 != 0) {
		fprintf(stderr, "usage: run_model MODEL [INPUT_NAME INPUT_FILE]...\n");
		return 2;
	}
	if (map_file(argv[1], &neff))
		return 2;
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
		if (nrt_unload(model) != NRT_SUCCESS && rc == 0)
			rc = 1;
	}
	nrt_close();
	munmap(neff.data, neff.size);
	return rc;
}
