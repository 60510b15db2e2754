/*
 * consumer/main.c - a program that knows libnrt only through its install
 * prefix: the public headers and the library (tests/install_test.sh builds
 * it with pkg-config and with find_package(nrt)).  It initializes the
 * runtime, moves bytes host -> device -> host through the public tensor
 * calls and a tensor set, and closes; exit 0 only if every call answered
 * as the API says.  It also reads the version as a vendor client does.
 */
#include <stdio.h>
#include <string.h>

#include <nrt/nrt.h>
#include <nrt/nrt_status.h>
#include <nrt/nrt_version.h>

#define N 64

static int fail(const char *what, NRT_STATUS st)
{
	fprintf(stderr, "consumer: %s: %s (%d)\n", what, nrt_get_status_as_str(st), (int)st);
	return 1;
}

/* host tensor -> device tensor -> bytes, through a tensor set lookup. */
static int round_trip(void)
{
	unsigned char in[N], out[N];
	nrt_tensor_t *host = NULL, *dev = NULL, *found = NULL;
	nrt_tensor_set_t *set = NULL;
	NRT_STATUS st;
	int rc = 1;

	for (int i = 0; i < N; i++)
		in[i] = (unsigned char)(i * 7 + 3);
	memset(out, 0, sizeof(out));
	st = nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, N, "host", &host);
	if (st == NRT_SUCCESS)
		st = nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, N, "dev", &dev);
	if (st == NRT_SUCCESS)
		st = nrt_tensor_write(host, in, 0, N);
	if (st == NRT_SUCCESS)
		st = nrt_tensor_copy(host, 0, dev, 0, N);
	if (st == NRT_SUCCESS)
		st = nrt_allocate_tensor_set(&set);
	if (st == NRT_SUCCESS)
		st = nrt_add_tensor_to_tensor_set(set, "x", dev);
	if (st == NRT_SUCCESS)
		st = nrt_get_tensor_from_tensor_set(set, "x", &found);
	if (st == NRT_SUCCESS)
		st = nrt_tensor_read(found, out, 0, N);
	if (st != NRT_SUCCESS)
		fail("tensor round trip", st);
	else if (found != dev || nrt_tensor_get_size(dev) != N || memcmp(in, out, N) != 0)
		fprintf(stderr, "consumer: the bytes read back differ from those written\n");
	else
		rc = 0;
	nrt_destroy_tensor_set(&set);
	nrt_tensor_free(&dev);
	nrt_tensor_free(&host);
	return rc;
}

/* nrt_get_version fills a whole record, and refuses one too small for its
 * numbers (an old client's smaller record is filled as far as it goes). */
static int version(void)
{
	nrt_version_t v;
	NRT_STATUS st;

	memset(&v, 0xff, sizeof(v));
	st = nrt_get_version(&v, sizeof(v));
	if (st != NRT_SUCCESS)
		return fail("nrt_get_version", st);
	if (v.rt_major != NRT_MAJOR_VERSION || v.rt_minor != NRT_MINOR_VERSION ||
	    !memchr(v.rt_detail, 0, sizeof(v.rt_detail)) ||
	    !memchr(v.git_hash, 0, sizeof(v.git_hash))) {
		fprintf(stderr, "consumer: nrt_get_version: wrong record\n");
		return 1;
	}
	st = nrt_get_version(&v, sizeof(v.rt_major));
	if (st != NRT_INVALID)
		return fail("nrt_get_version with a short record (want NRT_INVALID)", st);
	st = nrt_get_version(&v, sizeof(v));
	if (st != NRT_SUCCESS)
		return fail("nrt_get_version", st);
	printf("consumer: runtime %llu.%llu.%llu, %s, %s\n", (unsigned long long)v.rt_major,
	       (unsigned long long)v.rt_minor, (unsigned long long)v.rt_patch, v.rt_detail,
	       v.git_hash);
	return 0;
}

int main(void)
{
	uint32_t cores = 0;
	NRT_STATUS st = nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "");
	int rc;

	if (st != NRT_SUCCESS)
		return fail("nrt_init", st);
	if (version() != 0) {
		nrt_close();
		return 1;
	}
	st = nrt_get_total_nc_count(&cores);
	if (st != NRT_SUCCESS || cores == 0) {
		nrt_close();
		return fail("nrt_get_total_nc_count", st);
	}
	rc = round_trip();
	nrt_close();
	if (rc == 0)
		printf("consumer: ok (%u cores, %d bytes round-tripped)\n", cores, N);
	return rc;
}
