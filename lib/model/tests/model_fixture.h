/*
 * model_fixture.h - what the lib/model tests share: a reference container
 * with known offsets, rejection lines read from the log captured with
 * ktest_log.h, and a checksum fixer so a test can change one field and
 * still get past the CRC to the check it aims at.
 */
#ifndef MODEL_FIXTURE_H
#define MODEL_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kalloc.h"
#include "base/kfault.h"
#include "base/klog.h"
#include "ktest.h"
#include "ktest_fault.h"
#include "ktest_log.h"
#include "model/kmodel.h"

/* Offsets in the reference container (header, then "in0" f32 1x4x8 input,
 * then "out" i64 2x3 output, then the CRC). */
enum {
	REF_MAGIC = 0,
	REF_VERSION = 8,
	REF_HDRSIZE = 12,
	REF_NKBIN = 16,
	REF_FLAGS = 20,
	REF_NTENSORS = 24,
	REF_NAME = 28,
	REF_UUID = 92,
	REF_T0 = 108, /* name_len; name at +1, usage +4, dtype +5, ndim +6, dims +7, size +19 */
	REF_T1 = 135, /* name_len; name at +1, usage +4, dtype +5, ndim +6, dims +7, size +15 */
	REF_CRC = 158,
	REF_LEN = 162,
};

static inline kmodel_t *fx_ref_model(void)
{
	static const uint32_t s0[] = {1, 4, 8}, s1[] = {2, 3};
	kmodel_t *m = kmodel_new("ref", 2, true);

	KT_ASSERT(m);
	KT_EQ(kmodel_add_tensor(m, "in0", NRT_TENSOR_USAGE_INPUT, NRT_DTYPE_FLOAT32, 3, s0), 0);
	KT_EQ(kmodel_add_tensor(m, "out", NRT_TENSOR_USAGE_OUTPUT, NRT_DTYPE_INT64, 2, s1), 0);
	return m;
}

/* The reference container in a malloc'd block of exactly its length, so
 * ASan sees a read one byte past it. */
static inline uint8_t *fx_ref_bytes(size_t *len)
{
	kmodel_t *m = fx_ref_model();
	uint8_t *kb, *b;

	KT_EQ(kmodel_serialize(m, &kb, len), 0);
	KT_EQ(*len, REF_LEN);
	b = malloc(*len);
	KT_ASSERT(b);
	memcpy(b, kb, *len);
	kfree(kb);
	kmodel_free(m);
	return b;
}

static inline uint32_t fx_crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static inline void fx_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Rewrite the trailing CRC of a len-byte container. */
static inline void fx_fix_crc(uint8_t *b, size_t len)
{
	if (len >= 4)
		fx_put32(b + len - 4, fx_crc32(b, len - 4));
}

/* Parse b; assert it fails with want, one log line naming field, no model
 * and no live allocation left behind. */
static inline void fx_expect_reject(const uint8_t *b, size_t len, NRT_STATUS want,
                                    const char *field)
{
	int64_t live = kalloc_live_count();
	kmodel_t *m = (kmodel_t *)1;
	char quoted[80];

	kt_log_capture(KLOG_WARN);
	KT_EQ(kmodel_parse(b, len, &m), want);
	KT_ASSERT(m == NULL);
	KT_EQ(kalloc_live_count(), live);
	KT_EQ(kt_log_lines(), 1);
	snprintf(quoted, sizeof(quoted), "bad field '%s'", field);
	if (!strstr(kt_log_last(), quoted))
		KT_FAIL("log line \"%s\" does not name %s", kt_log_last(), quoted);
}

#endif /* MODEL_FIXTURE_H */
