/*
 * test_nrt_api.c - the focus of this file is the synchronous public API:
 * the lifecycle guards, the environment read at nrt_init, the NeuronCore
 * counts, status strings, tensor and tensor-set calls, load / execute /
 * unload, tensor metadata and the ifmap-count check.
 */
#include "nrt_test.h"

#include "base/klog.h"

static const uint32_t in2[] = {16, 5}, out2[] = {16, 7};

/* api-1.1: every guarded call answers NRT_UNINITIALIZED before nrt_init and
 * NRT_CLOSED after nrt_close; nrt_init works again after nrt_close. */
static void guard_all(NRT_STATUS want)
{
	nrt_tensor_t *t = NULL;
	nrt_tensor_set_t *s = NULL;
	nrt_model_t *m = NULL;
	nrt_tensor_info_array_t *info = NULL;
	nrta_error_tracker_t *et = NULL;
	uint8_t b[4] = {0};
	uint32_t n;
	nrta_seq_t seq;
	bool done;

	KT_EQ(nrt_load(b, sizeof(b), -1, -1, &m), want);
	KT_EQ(nrt_unload((nrt_model_t *)b), want);
	KT_EQ(nrt_execute((nrt_model_t *)b, (nrt_tensor_set_t *)b, (nrt_tensor_set_t *)b), want);
	KT_EQ(nrt_execute_repeat((nrt_model_t *)b, (nrt_tensor_set_t *)b, (nrt_tensor_set_t *)b, 2),
	      want);
	KT_EQ(nrt_get_model_nc_count((nrt_model_t *)b, &n), want);
	KT_EQ(nrt_get_model_tensor_info((nrt_model_t *)b, &info), want);
	KT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4, "x", &t), want);
	KT_EQ(nrt_tensor_allocate_empty("x", &t), want);
	KT_EQ(nrt_allocate_tensor_set(&s), want);
	KT_EQ(nrt_tensor_read((nrt_tensor_t *)b, b, 0, 1), want);
	KT_EQ(nrt_tensor_write((nrt_tensor_t *)b, b, 0, 1), want);
	KT_EQ(nrt_tensor_copy((nrt_tensor_t *)b, 0, (nrt_tensor_t *)b, 0, 1), want);
	KT_EQ(nrt_tensor_memset((nrt_tensor_t *)b, 0, 0, 1), want);
	KT_EQ(nrt_tensor_attach_buffer((nrt_tensor_t *)b, b, 1), want);
	KT_EQ(nrt_tensor_allocate_slice((nrt_tensor_t *)b, 0, 1, "s", &t), want);
	KT_EQ(nrt_add_tensor_to_tensor_set((nrt_tensor_set_t *)b, "x", (nrt_tensor_t *)b), want);
	KT_EQ(nrt_get_tensor_from_tensor_set((nrt_tensor_set_t *)b, "x", &t), want);
	KT_EQ(nrt_tensor_get_size((nrt_tensor_t *)b), 0);
	KT_ASSERT(nrt_tensor_get_va((nrt_tensor_t *)b) == NULL);
	KT_EQ(nrta_execute_schedule((nrt_model_t *)b, (nrt_tensor_set_t *)b, (nrt_tensor_set_t *)b,
	                            0, NULL, &seq),
	      want);
	KT_EQ(nrta_is_completed(1, &done), want);
	KT_EQ(nrta_get_sequence(0, NRTA_XU_COMPUTE, 0, &seq), want);
	KT_EQ(nrta_error_tracker_create(0, &et), want);
	KT_ASSERT(t == NULL && s == NULL && m == NULL && info == NULL && et == NULL);
}

static void lifecycle(void)
{
	guard_all(NRT_UNINITIALIZED);
	nt_init();
	/* api-1.2: a second nrt_init while initialized is refused. */
	KT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_FAILURE);
	nrt_close();
	guard_all(NRT_CLOSED);
	nrt_close(); /* a second close is harmless */
	nt_init();
	nrt_close();
	KT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_INVALID, NULL, NULL), NRT_INVALID);
	guard_all(NRT_CLOSED);
	kt_assert_accounting_zero();
}

/* api-2.1: NEURON_RT_VISIBLE_CORES limits the visible cores (also before
 * nrt_init) but not the total; malformed values fail nrt_init with
 * NRT_INVALID; so does a malformed NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS. */
static void env(void)
{
	uint32_t total, visible;
	static const char *const bad_cores[] = {"x", "1-", "-1", "2-1", "0-64", "64", "0,1", " 1"};
	static const char *const bad_inflight[] = {"-1", "x", "1x", "99999999999"};

	KT_EQ(nrt_get_total_nc_count(&total), NRT_SUCCESS);
	KT_EQ(total, EMU_DEFAULT_NC);
	KT_EQ(nrt_get_visible_nc_count(NULL), NRT_INVALID);
	setenv("NEURON_RT_VISIBLE_CORES", "1-2", 1);
	KT_EQ(nrt_get_visible_nc_count(&visible), NRT_SUCCESS);
	KT_EQ(visible, 2);
	nt_init();
	KT_EQ(nrt_get_visible_nc_count(&visible), NRT_SUCCESS);
	KT_EQ(visible, 2);
	KT_EQ(nrt_get_total_nc_count(&total), NRT_SUCCESS);
	KT_EQ(total, EMU_DEFAULT_NC);
	nrt_close();
	setenv("NEURON_RT_VISIBLE_CORES", "3", 1);
	nt_init();
	KT_EQ(nrt_get_visible_nc_count(&visible), NRT_SUCCESS);
	KT_EQ(visible, 1);
	nrt_close();
	for (size_t i = 0; i < sizeof(bad_cores) / sizeof(bad_cores[0]); i++) {
		setenv("NEURON_RT_VISIBLE_CORES", bad_cores[i], 1);
		KT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_INVALID);
	}
	unsetenv("NEURON_RT_VISIBLE_CORES");
	for (size_t i = 0; i < sizeof(bad_inflight) / sizeof(bad_inflight[0]); i++) {
		setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", bad_inflight[i], 1);
		KT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_INVALID);
	}
	setenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS", "0", 1);
	nt_init();
	nrt_close();
	unsetenv("NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS");
	kt_assert_accounting_zero();
}

/* api-3.1: status strings name the enumerator; unknown values say so. */
static void status_str(void)
{
	KT_STREQ(nrt_get_status_as_str(NRT_SUCCESS), "NRT_SUCCESS");
	KT_STREQ(nrt_get_status_as_str(NRT_QUEUE_FULL), "NRT_QUEUE_FULL");
	KT_STREQ(nrt_get_status_as_str(NRT_EXEC_SW_NQ_OVERFLOW), "NRT_EXEC_SW_NQ_OVERFLOW");
	KT_STREQ(nrt_get_status_as_str(NRT_NETWORK_PROXY_FAILURE), "NRT_NETWORK_PROXY_FAILURE");
	KT_STREQ(nrt_get_status_as_str((NRT_STATUS)8), "NRT_UNKNOWN_STATUS");
	KT_STREQ(nrt_get_status_as_str((NRT_STATUS)-1), "NRT_UNKNOWN_STATUS");
}

/* api-4.1: tensor calls reach the device: write/read round trip, memset,
 * copy, size, va, empty + attach, slice aliasing its source; NULL
 * arguments are NRT_INVALID. */
static void tensors(void)
{
	nrt_tensor_t *a = NULL, *b = NULL, *e = NULL, *sl = NULL, *h = NULL;
	uint8_t buf[32], got[32], ext[8] = {0};

	nt_init();
	for (int i = 0; i < 32; i++)
		buf[i] = (uint8_t)(i + 1);
	KT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 32, "a", &a), NRT_SUCCESS);
	KT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 32, "b", &b), NRT_SUCCESS);
	KT_EQ(nrt_tensor_get_size(a), 32);
	KT_EQ(nrt_tensor_write(a, buf, 0, 32), NRT_SUCCESS);
	KT_EQ(nrt_tensor_read(a, got, 0, 32), NRT_SUCCESS);
	KT_MEMEQ(got, buf, 32);
	KT_EQ(nrt_tensor_memset(b, 0, 0x5A, 32), NRT_SUCCESS);
	KT_EQ(nrt_tensor_copy(a, 4, b, 8, 4), NRT_SUCCESS);
	KT_EQ(nrt_tensor_read(b, got, 0, 16), NRT_SUCCESS);
	KT_EQ(got[7], 0x5A);
	KT_MEMEQ(&got[8], &buf[4], 4);
	KT_EQ(got[12], 0x5A);
	/* A slice shares its source's storage. */
	KT_EQ(nrt_tensor_allocate_slice(a, 16, 8, "sl", &sl), NRT_SUCCESS);
	KT_EQ(nrt_tensor_get_size(sl), 8);
	KT_EQ(nrt_tensor_memset(sl, 0, 0x77, 8), NRT_SUCCESS);
	KT_EQ(nrt_tensor_read(a, got, 15, 10), NRT_SUCCESS);
	KT_EQ(got[0], buf[15]);
	for (int i = 1; i < 9; i++)
		KT_EQ(got[i], 0x77);
	KT_EQ(got[9], buf[24]);
	/* An empty tensor takes the caller's buffer as its storage. */
	KT_EQ(nrt_tensor_allocate_empty("e", &e), NRT_SUCCESS);
	KT_EQ(nrt_tensor_attach_buffer(e, ext, sizeof(ext)), NRT_SUCCESS);
	KT_ASSERT(nrt_tensor_get_va(e) == ext);
	KT_EQ(nrt_tensor_write(e, buf, 0, 8), NRT_SUCCESS);
	KT_MEMEQ(ext, buf, 8);
	KT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, -1, 8, "h", &h), NRT_SUCCESS);
	KT_ASSERT(nrt_tensor_get_va(h) != NULL);
	/* Bad arguments. */
	KT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, "x", NULL), NRT_INVALID);
	KT_EQ(nrt_tensor_read(NULL, got, 0, 1), NRT_INVALID);
	KT_EQ(nrt_tensor_read(a, NULL, 0, 1), NRT_INVALID);
	KT_EQ(nrt_tensor_write(a, NULL, 0, 1), NRT_INVALID);
	KT_EQ(nrt_tensor_copy(NULL, 0, b, 0, 1), NRT_INVALID);
	KT_EQ(nrt_tensor_memset(NULL, 0, 0, 1), NRT_INVALID);
	KT_EQ(nrt_tensor_allocate_empty("x", NULL), NRT_INVALID);
	KT_EQ(nrt_tensor_attach_buffer(NULL, ext, 1), NRT_INVALID);
	KT_EQ(nrt_tensor_allocate_slice(NULL, 0, 1, "x", &sl), NRT_INVALID);
	KT_NE(nrt_tensor_read(a, got, 30, 4), NRT_SUCCESS);
	KT_EQ(nrt_tensor_get_size(NULL), 0);
	KT_ASSERT(nrt_tensor_get_va(NULL) == NULL);
	nrt_tensor_free(&sl);
	KT_ASSERT(sl == NULL);
	nrt_tensor_free(&a);
	nrt_tensor_free(&b);
	nrt_tensor_free(&e);
	nrt_tensor_free(&h);
	nrt_tensor_free(NULL);
	nrt_close();
	kt_assert_accounting_zero();
}

/* api-4.2: tensor sets: add, get by name, add replaces by name, unknown
 * names fail, NULL arguments are NRT_INVALID; destroying sets the pointer
 * NULL and leaves the tensors to the caller. */
static void tensor_sets(void)
{
	nrt_tensor_set_t *s = NULL;
	nrt_tensor_t *a = NULL, *b = NULL, *got = NULL;

	nt_init();
	KT_EQ(nrt_allocate_tensor_set(&s), NRT_SUCCESS);
	KT_EQ(nrt_allocate_tensor_set(NULL), NRT_INVALID);
	KT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, "a", &a), NRT_SUCCESS);
	KT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, "b", &b), NRT_SUCCESS);
	KT_EQ(nrt_add_tensor_to_tensor_set(s, "x", a), NRT_SUCCESS);
	KT_EQ(nrt_get_tensor_from_tensor_set(s, "x", &got), NRT_SUCCESS);
	KT_ASSERT(got == a);
	KT_EQ(nrt_add_tensor_to_tensor_set(s, "x", b), NRT_SUCCESS);
	KT_EQ(nrt_get_tensor_from_tensor_set(s, "x", &got), NRT_SUCCESS);
	KT_ASSERT(got == b);
	KT_EQ(kbl_tensor_set_count(s), 1);
	KT_NE(nrt_get_tensor_from_tensor_set(s, "nope", &got), NRT_SUCCESS);
	KT_EQ(nrt_add_tensor_to_tensor_set(NULL, "x", a), NRT_INVALID);
	KT_EQ(nrt_add_tensor_to_tensor_set(s, NULL, a), NRT_INVALID);
	KT_EQ(nrt_add_tensor_to_tensor_set(s, "x", NULL), NRT_INVALID);
	KT_EQ(nrt_get_tensor_from_tensor_set(s, "x", NULL), NRT_INVALID);
	nrt_destroy_tensor_set(&s);
	KT_ASSERT(s == NULL);
	nrt_destroy_tensor_set(&s);
	KT_EQ(nrt_tensor_get_size(a), 8); /* the tensors outlive the set */
	nrt_tensor_free(&a);
	nrt_tensor_free(&b);
	nrt_close();
	kt_assert_accounting_zero();
}

/* api-5.1: a loaded model executes synchronously with device and host
 * tensors, outputs follow the compute formula, execute_repeat runs, and
 * the model reports its core count. */
static void load_execute(void)
{
	size_t len;
	uint8_t *bytes = kt_model_malloc("nt", 1, false, 2, in2, 2, out2, &len);
	nrt_model_t *m = NULL;
	kt_nrt_io_t io = {.n_in = 2, .n_out = 2, .in_sizes = {16, 5}, .out_sizes = {16, 7}};
	kt_nrt_io_t host = io;
	uint32_t n = 0;

	nt_init();
	KT_EQ(nrt_load(bytes, len, -1, -1, &m), NRT_SUCCESS);
	KT_EQ(nrt_get_model_nc_count(m, &n), NRT_SUCCESS);
	KT_EQ(n, 1);
	KT_EQ(nrt_get_model_nc_count(m, NULL), NRT_INVALID);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	KT_EQ(nrt_execute(m, io.in_set, io.out_set), NRT_SUCCESS);
	kt_nrt_io_check(&io);
	KT_EQ(nrt_tensor_memset(io.out[0], 0, 0, 16), NRT_SUCCESS);
	KT_EQ(nrt_execute_repeat(m, io.in_set, io.out_set, 3), NRT_SUCCESS);
	kt_nrt_io_check(&io);
	/* api-5.2: host tensors work in sync mode (cloned to the device). */
	kt_nrt_io_make(&host, NRT_TENSOR_PLACEMENT_HOST, -1);
	KT_EQ(nrt_execute(m, host.in_set, host.out_set), NRT_SUCCESS);
	kt_nrt_io_check(&host);
	/* api-5.3: bad arguments are NRT_INVALID. */
	KT_EQ(nrt_execute_repeat(m, io.in_set, io.out_set, 0), NRT_INVALID);
	KT_EQ(nrt_execute(NULL, io.in_set, io.out_set), NRT_INVALID);
	KT_EQ(nrt_execute(m, NULL, io.out_set), NRT_INVALID);
	KT_EQ(nrt_execute(m, io.in_set, NULL), NRT_INVALID);
	kt_nrt_io_free(&host);
	kt_nrt_io_free(&io);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	KT_EQ(nrt_unload(NULL), NRT_INVALID);
	nrt_close();
	free(bytes);
	kt_assert_accounting_zero();
}

/* api-5.4: an input set with fewer tensors than the model's inputs is
 * refused with NRT_INVALID by the API's own count check, before the facade
 * is asked (its binder would refuse too, with another message). */
static void ifmap_count(void)
{
	size_t len;
	uint8_t *bytes = kt_model_malloc("nt", 1, false, 2, in2, 2, out2, &len);
	nrt_model_t *m = NULL;
	kt_nrt_io_t io = {.n_in = 1, .n_out = 2, .in_sizes = {16}, .out_sizes = {16, 7}};
	emu_accounting_t a;

	nt_init();
	KT_EQ(nrt_load(bytes, len, -1, -1, &m), NRT_SUCCESS);
	kt_nrt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0);
	kt_log_capture(klog_get_level());
	KT_EQ(nrt_execute(m, io.in_set, io.out_set), NRT_INVALID);
	klog_set_sink(NULL, NULL);
	KT_STREQ(kt_log_first(), "Incorrect number of inputs, expected: 2, received: 1");
	emu_get_accounting(&a);
	KT_EQ(a.inflight_execs, 0);
	kt_nrt_io_free(&io);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrt_close();
	free(bytes);
	kt_assert_accounting_zero();
}

/* api-6.1: nrt_get_model_tensor_info lists inputs then outputs with name,
 * usage, size, dtype and shape, and frees cleanly (NULL too). */
static void tensor_info(void)
{
	size_t len;
	uint8_t *bytes = kt_model_malloc("nt", 1, false, 2, in2, 2, out2, &len);
	nrt_model_t *m = NULL;
	nrt_tensor_info_array_t *info = NULL;
	static const char *const names[] = {"in0", "in1", "out0", "out1"};
	static const uint32_t sizes[] = {16, 5, 16, 7};

	nt_init();
	KT_EQ(nrt_load(bytes, len, -1, -1, &m), NRT_SUCCESS);
	KT_EQ(nrt_get_model_tensor_info(m, &info), NRT_SUCCESS);
	KT_EQ(info->tensor_count, 4);
	for (int i = 0; i < 4; i++) {
		nrt_tensor_info_t *t = &info->tensor_array[i];

		KT_STREQ(t->name, names[i]);
		KT_EQ(t->usage, i < 2 ? NRT_TENSOR_USAGE_INPUT : NRT_TENSOR_USAGE_OUTPUT);
		KT_EQ(t->size, sizes[i]);
		KT_EQ(t->dtype, NRT_DTYPE_UINT8);
		KT_EQ(t->ndim, 1);
		KT_EQ(t->shape[0], sizes[i]);
	}
	KT_EQ(nrt_free_model_tensor_info(info), NRT_SUCCESS);
	KT_EQ(nrt_free_model_tensor_info(NULL), NRT_SUCCESS);
	KT_EQ(nrt_get_model_tensor_info(m, NULL), NRT_INVALID);
	KT_EQ(nrt_get_model_tensor_info(NULL, &info), NRT_INVALID);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrt_close();
	free(bytes);
	kt_assert_accounting_zero();
}

/* api-7.1: bad container bytes and bad arguments to nrt_load give an
 * error status, never a crash or a leak; a model needing more cores than
 * are visible gives NRT_LOAD_NOT_ENOUGH_NC; a two-core model reports 2. */
static void load_errors(void)
{
	size_t len;
	uint8_t *bytes = kt_model_malloc("nt", 1, false, 2, in2, 2, out2, &len);
	uint8_t *multi = NULL;
	nrt_model_t *m = NULL;
	uint32_t n = 0;

	nt_init();
	KT_EQ(nrt_load(NULL, len, -1, -1, &m), NRT_INVALID);
	KT_EQ(nrt_load(bytes, 0, -1, -1, &m), NRT_INVALID);
	KT_EQ(nrt_load(bytes, len, -1, -1, NULL), NRT_INVALID);
	KT_NE(nrt_load(bytes, len / 2, -1, -1, &m), NRT_SUCCESS);
	bytes[len / 2] ^= 0x40;
	KT_NE(nrt_load(bytes, len, -1, -1, &m), NRT_SUCCESS);
	KT_ASSERT(m == NULL);
	nrt_close();
	free(bytes);
	bytes = kt_model_malloc("nt", 2, false, 2, in2, 2, out2, &len);
	multi = kt_model_malloc("nt", 3, false, 2, in2, 2, out2, &len);
	setenv("NEURON_RT_VISIBLE_CORES", "0-1", 1);
	nt_init();
	KT_EQ(nrt_load(multi, len, -1, -1, &m), NRT_LOAD_NOT_ENOUGH_NC);
	KT_EQ(nrt_load(bytes, len, -1, -1, &m), NRT_SUCCESS);
	KT_EQ(nrt_get_model_nc_count(m, &n), NRT_SUCCESS);
	KT_EQ(n, 2);
	KT_EQ(nrt_unload(m), NRT_SUCCESS);
	nrt_close();
	unsetenv("NEURON_RT_VISIBLE_CORES");
	free(bytes);
	free(multi);
	kt_assert_accounting_zero();
}

int main(void)
{
	nt_env_clear();
	KT_CASE("api-1 lifecycle", lifecycle);
	KT_CASE("api-2 env", env);
	KT_CASE("api-3 status strings", status_str);
	KT_CASE("api-4.1 tensors", tensors);
	KT_CASE("api-4.2 tensor sets", tensor_sets);
	KT_CASE("api-5 load and execute", load_execute);
	KT_CASE("api-5.4 ifmap count", ifmap_count);
	KT_CASE("api-6 tensor info", tensor_info);
	KT_CASE("api-7 load errors", load_errors);
	KT_DONE();
}
