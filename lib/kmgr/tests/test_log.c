/*
 * test_log.c - the facade's log: at debug, a load -> exec -> unload says the
 * seed's messages in order; at the default warn level the info/debug lines
 * are silent while errors still speak.
 */
#include "kt_kmgr.h"

/* Position of the first occurrence of text at or after from, or -1. */
static long find_from(const char *text, long from)
{
	const char *p = from < 0 ? NULL : strstr(kt_log_text() + from, text);

	return p ? p - kt_log_text() : -1;
}

/* kmgr_log-1: the load -> exec -> unload sequence at debug. */
static void case_sequence(void)
{
	char line[64];
	long pos = 0;
	kt_io_t io;
	H_NN h;

	kt_log_capture(KLOG_DEBUG);
	h = kt_load("lg", 1, 0, 1);
	kt_io_make(&io, NRT_TENSOR_PLACEMENT_DEVICE, 0, 2, 1, 16);
	KT_EQ(kmgr_exec(h, io.in, io.out, 42), NRT_SUCCESS);
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
	KT_EQ(kmgr_exec(h, io.in, io.out, 43), NRT_INVALID_HANDLE);
	kt_io_free(&io);
	const char *fmt[] = {"Loaded NN: %u", "Executing NN: %u", "Unloading %u", "Unloaded NN: %u",
	                     "Failed to find model: %u"};
	for (size_t i = 0; i < sizeof(fmt) / sizeof(fmt[0]); i++) {
		snprintf(line, sizeof(line), fmt[i], h.id);
		pos = find_from(line, pos);
		if (pos < 0)
			KT_FAIL("missing or out of order: \"%s\" in:\n%s", line, kt_log_text());
	}
	kt_log_release();
}

/* kmgr_log-2: at warn, info and debug lines are filtered, errors are not. */
static void case_levels(void)
{
	H_NN h;

	kt_log_capture(KLOG_WARN);
	h = kt_load("lv", 1, 0, 1);
	KT_EQ(kmgr_unload_nn(h), NRT_SUCCESS);
	KT_EQ(kmgr_unload_nn(h), NRT_INVALID_HANDLE);
	KT_ASSERT(!kt_log_has("Unloading"));
	KT_ASSERT(!kt_log_has("Loaded NN"));
	KT_ASSERT(kt_log_has("Failed to find model"));
	kt_log_release();
}

int main(void)
{
	kt_up(2, false, 0);
	KT_CASE("kmgr_log-1", case_sequence);
	KT_CASE("kmgr_log-2", case_levels);
	kt_down();
	KT_DONE();
}
