/*
 * test_model_build.c - the focus of this file is the builder and the dtype
 * table: what the builder accepts parses back equal, field for field, for
 * every dtype and at every limit; what it rejects it rejects with the
 * status its header promises; serialization is deterministic.
 */
#include "model/kmodel_int.h"
#include "model_fixture.h"

static const char *const dtype_names[] = {"f32", "f16", "bf16", "i8",  "u8", "i16",
                                          "u16", "i32", "u32",  "i64", "u64"};
static const uint32_t dtype_sizes[] = {4, 2, 2, 1, 1, 2, 2, 4, 4, 8, 8};

/* build-1.1: the dtype table matches the public enum, both ways. */
static void t_dtypes(void)
{
	for (int i = 0; i < 11; i++) {
		nrt_dtype_t d = (nrt_dtype_t)(NRT_DTYPE_FLOAT32 + i);

		KT_STREQ(kmodel_dtype_name(d), dtype_names[i]);
		KT_EQ(kmodel_dtype_size(d), dtype_sizes[i]);
		KT_EQ(kmodel_dtype_from_name(dtype_names[i]), d);
	}
	KT_EQ(kmodel_dtype_size(NRT_DTYPE_UNKNOWN), 0);
	KT_EQ(kmodel_dtype_size((nrt_dtype_t)12), 0);
	KT_EQ(kmodel_dtype_size((nrt_dtype_t)-1), 0);
	KT_ASSERT(kmodel_dtype_name((nrt_dtype_t)12) == NULL);
	KT_ASSERT(kmodel_dtype_name((nrt_dtype_t)-1) == NULL);
	KT_EQ(kmodel_dtype_from_name("f64"), -1);
	KT_EQ(kmodel_dtype_from_name(""), -1);
	KT_EQ(kmodel_dtype_from_name(NULL), -1);
}

static void expect_equal(const kmodel_t *a, const kmodel_t *b)
{
	KT_EQ(a->version, b->version);
	KT_STREQ(a->name, b->name);
	KT_MEMEQ(a->uuid, b->uuid, 16);
	KT_EQ(a->nkbin, b->nkbin);
	KT_EQ(a->has_cc, b->has_cc);
	KT_EQ(a->n_tensors, b->n_tensors);
	for (uint32_t i = 0; i < a->n_tensors; i++) {
		const kmodel_tensor_t *x = &a->tensors[i], *y = &b->tensors[i];

		KT_STREQ(x->name, y->name);
		KT_EQ(x->usage, y->usage);
		KT_EQ(x->dtype, y->dtype);
		KT_EQ(x->ndim, y->ndim);
		KT_MEMEQ(x->shape, y->shape, x->ndim * sizeof(uint32_t));
		KT_EQ(x->size, y->size);
	}
}

/* Serialize m, parse it back, compare, and check nothing leaks. */
static void round_trip(const kmodel_t *m)
{
	int64_t live = kalloc_live_count();
	kmodel_t *p = NULL;
	uint8_t *b;
	size_t len;

	KT_EQ(kmodel_serialize(m, &b, &len), 0);
	KT_EQ(kmodel_parse(b, len, &p), 0);
	expect_equal(m, p);
	kmodel_free(p);
	kfree(b);
	KT_EQ(kalloc_live_count(), live);
}

/* build-1.2: one tensor of every dtype, both usages, round trips equal. */
static void t_round_trip_dtypes(void)
{
	kmodel_t *m = kmodel_new("every-dtype", 4, false);

	for (int i = 0; i < 11; i++) {
		uint32_t shape[3] = {(uint32_t)i + 1, 3, 5};
		char name[8];

		snprintf(name, sizeof(name), "t%d", i);
		KT_EQ(kmodel_add_tensor(m, name, (nrt_tensor_usage_t)(i % 2),
		                        (nrt_dtype_t)(NRT_DTYPE_FLOAT32 + i), 1 + i % 3, shape),
		      0);
		KT_EQ(m->tensors[i].size, (uint64_t)dtype_sizes[i] * shape[0] *
		                              (i % 3 > 0 ? 3 : 1) * (i % 3 > 1 ? 5 : 1));
	}
	KT_EQ(kmodel_input_count(m), 6);
	KT_EQ(kmodel_output_count(m), 5);
	round_trip(m);
	kmodel_free(m);
}

/* build-1.3: the largest model (256 subgraphs, 64 tensors of 255-char
 * names and 8 dims, the largest tensor allowed) round trips. */
static void t_round_trip_limits(void)
{
	static const uint32_t big[1] = {1u << 30}; /* f32: exactly KMODEL_MAX_TENSOR_BYTES */
	uint32_t shape[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	kmodel_t *m = kmodel_new("012345678901234567890123456789012345678901234567890123456789012",
	                         256, true);
	char name[256];

	KT_ASSERT(m);
	memset(name, '~', 255);
	name[255] = 0;
	for (int i = 0; i < 63; i++) {
		name[0] = (char)(' ' + i);
		KT_EQ(kmodel_add_tensor(m, name, (nrt_tensor_usage_t)(i & 1), NRT_DTYPE_UINT64, 8,
		                        shape),
		      0);
	}
	KT_EQ(kmodel_add_tensor(m, "big", NRT_TENSOR_USAGE_OUTPUT, NRT_DTYPE_FLOAT32, 1, big), 0);
	KT_EQ(m->tensors[63].size, KMODEL_MAX_TENSOR_BYTES);
	round_trip(m);
	KT_EQ(kmodel_add_tensor(m, "more", NRT_TENSOR_USAGE_OUTPUT, NRT_DTYPE_FLOAT32, 1, big),
	      NRT_RESOURCE);
	kmodel_free(m);
}

/* build-1.4: the same model built twice serializes to the same bytes, and
 * the uuid depends on the name. */
static void t_deterministic(void)
{
	kmodel_t *a = fx_ref_model(), *b = fx_ref_model(), *c = kmodel_new("ref2", 2, true);
	uint8_t *ba, *bb;
	size_t la, lb;

	KT_EQ(kmodel_serialize(a, &ba, &la), 0);
	KT_EQ(kmodel_serialize(b, &bb, &lb), 0);
	KT_EQ(la, lb);
	KT_MEMEQ(ba, bb, la);
	KT_ASSERT(memcmp(a->uuid, c->uuid, 16) != 0);
	kfree(ba);
	kfree(bb);
	kmodel_free(a);
	kmodel_free(b);
	kmodel_free(c);
}

/* build-1.5: kmodel_new refuses bad names and subgraph counts. */
static void t_new_rejects(void)
{
	char name[80];

	kt_log_capture(KLOG_WARN);
	KT_ASSERT(kmodel_new(NULL, 1, false) == NULL);
	KT_ASSERT(kmodel_new("", 1, false) == NULL);
	KT_ASSERT(kmodel_new("tab\there", 1, false) == NULL);
	memset(name, 'a', 64);
	name[64] = 0;
	KT_ASSERT(kmodel_new(name, 1, false) == NULL);
	KT_ASSERT(kmodel_new("m", 0, false) == NULL);
	KT_ASSERT(kmodel_new("m", 257, false) == NULL);
	KT_EQ(kt_log_lines(), 5); /* NULL is an API misuse, not a field: no line */
	KT_EQ(kalloc_live_count(), 0);
}

/* build-1.6: kmodel_add_tensor refuses each bad argument with NRT_INVALID
 * and leaves the model as it was. */
static void t_add_rejects(void)
{
	uint32_t ok[2] = {2, 2}, zero[2] = {2, 0}, huge[3] = {1u << 31, 1u << 31, 4};
	kmodel_t *m = fx_ref_model();
	char name[300];

	memset(name, 'n', 256);
	name[256] = 0;
	KT_EQ(kmodel_add_tensor(NULL, "x", 0, NRT_DTYPE_FLOAT32, 2, ok), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, NULL, 0, NRT_DTYPE_FLOAT32, 2, ok), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "", 0, NRT_DTYPE_FLOAT32, 2, ok), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, name, 0, NRT_DTYPE_FLOAT32, 2, ok), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "in\n", 0, NRT_DTYPE_FLOAT32, 2, ok), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "in0", 0, NRT_DTYPE_FLOAT32, 2, ok), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "x", (nrt_tensor_usage_t)2, NRT_DTYPE_FLOAT32, 2, ok),
	      NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "x", 0, NRT_DTYPE_UNKNOWN, 2, ok), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "x", 0, (nrt_dtype_t)12, 2, ok), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "x", 0, NRT_DTYPE_FLOAT32, 0, ok), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "x", 0, NRT_DTYPE_FLOAT32, 9, ok), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "x", 0, NRT_DTYPE_FLOAT32, 2, NULL), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "x", 0, NRT_DTYPE_FLOAT32, 2, zero), NRT_INVALID);
	KT_EQ(kmodel_add_tensor(m, "x", 0, NRT_DTYPE_FLOAT32, 3, huge), NRT_INVALID);
	KT_EQ(m->n_tensors, 2);
	round_trip(m);
	kmodel_free(m);
}

/* build-1.7: serialize applies the parser's rules to a hand-edited model:
 * wrong size, bad version, no output, duplicate, too many tensors. */
static void t_serialize_rejects(void)
{
	kmodel_t *m = fx_ref_model();
	uint8_t *b = (uint8_t *)1;
	size_t len = 1;

	kt_log_capture(KLOG_WARN);
	m->tensors[0].size++;
	KT_EQ(kmodel_serialize(m, &b, &len), NRT_INVALID);
	KT_ASSERT(b == NULL && len == 0);
	m->tensors[0].size--;
	m->version = 2;
	KT_EQ(kmodel_serialize(m, &b, &len), NRT_UNSUPPORTED_NEFF_VERSION);
	m->version = KMODEL_VERSION;
	m->tensors[1].usage = NRT_TENSOR_USAGE_INPUT;
	KT_EQ(kmodel_serialize(m, &b, &len), NRT_INVALID);
	m->tensors[1].usage = NRT_TENSOR_USAGE_OUTPUT;
	strcpy(m->tensors[1].name, "in0");
	KT_EQ(kmodel_serialize(m, &b, &len), NRT_INVALID);
	strcpy(m->tensors[1].name, "out");
	m->n_tensors = 65;
	KT_EQ(kmodel_serialize(m, &b, &len), NRT_INVALID);
	m->n_tensors = 1;
	KT_EQ(kmodel_serialize(m, &b, &len), NRT_INVALID);
	m->n_tensors = 2;
	m->nkbin = 0;
	KT_EQ(kmodel_serialize(m, &b, &len), NRT_INVALID);
	m->nkbin = 2;
	KT_EQ(kt_log_lines(), 7);
	KT_EQ(kmodel_serialize(NULL, &b, &len), NRT_INVALID);
	KT_EQ(kmodel_serialize(m, NULL, &len), NRT_INVALID);
	round_trip(m);
	kmodel_free(m);
}

/* build-1.8: the container checksum is the standard CRC-32 (IEEE 802.3,
 * reflected, init and final xor 0xffffffff): its published check value and
 * two more known answers (also for the fixture's bitwise copy), and a
 * serialized container ends with the CRC of everything before it,
 * little-endian. */
static void t_crc32_known_answers(void)
{
	static const char fox[] = "The quick brown fox jumps over the lazy dog";
	kmodel_t *m = fx_ref_model();
	uint8_t *b = NULL;
	size_t len = 0;
	uint32_t stored;

	KT_EQ(kmodel__crc32((const uint8_t *)"123456789", 9), 0xCBF43926u);
	KT_EQ(kmodel__crc32((const uint8_t *)"", 0), 0x00000000u);
	KT_EQ(kmodel__crc32((const uint8_t *)fox, sizeof(fox) - 1), 0x414FA339u);
	/* and the parse tests' bitwise copy, which re-checksums mutated containers */
	KT_EQ(fx_crc32((const uint8_t *)"123456789", 9), 0xCBF43926u);
	KT_EQ(kmodel_serialize(m, &b, &len), NRT_SUCCESS);
	KT_GT(len, KMODEL_CRC_SIZE);
	stored = (uint32_t)b[len - 4] | (uint32_t)b[len - 3] << 8 | (uint32_t)b[len - 2] << 16 |
	         (uint32_t)b[len - 1] << 24;
	KT_EQ(stored, kmodel__crc32(b, len - KMODEL_CRC_SIZE));
	kfree(b);
	kmodel_free(m);
}

int main(void)
{
	KT_CASE("build-1.1 dtype table", t_dtypes);
	KT_CASE("build-1.2 round trip every dtype", t_round_trip_dtypes);
	KT_CASE("build-1.3 round trip at the limits", t_round_trip_limits);
	KT_CASE("build-1.4 deterministic", t_deterministic);
	KT_CASE("build-1.5 kmodel_new rejects", t_new_rejects);
	KT_CASE("build-1.6 kmodel_add_tensor rejects", t_add_rejects);
	KT_CASE("build-1.7 kmodel_serialize rejects", t_serialize_rejects);
	KT_CASE("build-1.8 CRC-32 known answers", t_crc32_known_answers);
	kt_log_release();
	KT_DONE();
}
