/*
 * test_model_parse.c - the focus of this file is the parser's strictness:
 * every malformed field is rejected with the right status and one log line
 * naming that field, every truncation and every byte change is rejected
 * cleanly, and whatever it accepts re-serializes to the same bytes.
 */
#include "model_fixture.h"

/* Change one byte (or word) of the reference, fix the CRC, expect rejection. */
static void reject_u8(size_t off, uint8_t v, NRT_STATUS want, const char *field)
{
	size_t len;
	uint8_t *b = fx_ref_bytes(&len);

	b[off] = v;
	fx_fix_crc(b, len);
	fx_expect_reject(b, len, want, field);
	free(b);
}

static void reject_u32(size_t off, uint32_t v, NRT_STATUS want, const char *field)
{
	size_t len;
	uint8_t *b = fx_ref_bytes(&len);

	fx_put32(b + off, v);
	fx_fix_crc(b, len);
	fx_expect_reject(b, len, want, field);
	free(b);
}

/* parse-1.1: the reference parses, with every field as built. */
static void t_reference(void)
{
	size_t len;
	uint8_t *b = fx_ref_bytes(&len);
	kmodel_t *m;

	kt_log_capture(KLOG_WARN);
	KT_EQ(kmodel_parse(b, len, &m), 0);
	KT_EQ(kt_log_lines(), 0);
	KT_STREQ(m->name, "ref");
	KT_EQ(m->nkbin, 2);
	KT_EQ(m->has_cc, 1);
	KT_EQ(m->n_tensors, 2);
	KT_STREQ(m->tensors[1].name, "out");
	KT_EQ(m->tensors[1].dtype, NRT_DTYPE_INT64);
	KT_EQ(m->tensors[1].size, 48);
	KT_EQ(m->tensors[0].shape[2], 8);
	kmodel_free(m);
	free(b);
}

/* parse-1.2: each header field out of range names itself; an unknown
 * version is NRT_UNSUPPORTED_NEFF_VERSION, the rest NRT_INVALID. */
static void t_header_fields(void)
{
	reject_u8(REF_MAGIC + 7, 'G', NRT_INVALID, "magic");
	reject_u32(REF_VERSION, 2, NRT_UNSUPPORTED_NEFF_VERSION, "version");
	reject_u32(REF_VERSION, 0, NRT_UNSUPPORTED_NEFF_VERSION, "version");
	reject_u32(REF_HDRSIZE, 112, NRT_INVALID, "header_size");
	reject_u32(REF_NKBIN, 0, NRT_INVALID, "nkbin");
	reject_u32(REF_NKBIN, 257, NRT_INVALID, "nkbin");
	reject_u32(REF_FLAGS, 2, NRT_INVALID, "flags");
	reject_u32(REF_FLAGS, 0x80000001u, NRT_INVALID, "flags");
	reject_u32(REF_NTENSORS, 1, NRT_INVALID, "n_tensors");
	reject_u32(REF_NTENSORS, 65, NRT_INVALID, "n_tensors");
	reject_u32(REF_NTENSORS, 0xffffffffu, NRT_INVALID, "n_tensors");
	reject_u32(REF_NTENSORS, 3, NRT_INVALID, "n_tensors"); /* no room for a third record */
	reject_u8(REF_NAME, 0, NRT_INVALID, "name");           /* empty */
	reject_u8(REF_NAME + 1, 0x7f, NRT_INVALID, "name");    /* not printable */
	reject_u8(REF_NAME + 1, 0xc3, NRT_INVALID, "name");    /* not ASCII */
	reject_u8(REF_NAME + 40, 'x', NRT_INVALID, "name");    /* padding not NUL */
}

/* parse-1.3: a 64-byte name with no NUL is rejected as 'name'. */
static void t_name_unterminated(void)
{
	size_t len;
	uint8_t *b = fx_ref_bytes(&len);

	memset(b + REF_NAME, 'a', KMODEL_NAME_MAX);
	fx_fix_crc(b, len);
	fx_expect_reject(b, len, NRT_INVALID, "name");
	free(b);
}

/* parse-1.4: each tensor field out of range names tensor[i].field. */
static void t_tensor_fields(void)
{
	reject_u8(REF_T0, 0, NRT_INVALID, "tensor[0].name_len");
	reject_u8(REF_T0, 200, NRT_INVALID, "tensor[0].name"); /* runs off the end */
	reject_u8(REF_T0 + 2, 0, NRT_INVALID, "tensor[0].name");
	reject_u8(REF_T0 + 2, 0x0a, NRT_INVALID, "tensor[0].name");
	reject_u8(REF_T0 + 4, 2, NRT_INVALID, "tensor[0].usage");
	reject_u8(REF_T0 + 5, 0, NRT_INVALID, "tensor[0].dtype");
	reject_u8(REF_T0 + 5, 12, NRT_INVALID, "tensor[0].dtype");
	reject_u8(REF_T0 + 5, NRT_DTYPE_FLOAT16, NRT_INVALID, "tensor[0].size");
	reject_u8(REF_T0 + 6, 0, NRT_INVALID, "tensor[0].ndim");
	reject_u8(REF_T0 + 6, 9, NRT_INVALID, "tensor[0].ndim");
	reject_u8(REF_T0 + 6, 255, NRT_INVALID, "tensor[0].ndim");
	reject_u32(REF_T0 + 11, 0, NRT_INVALID, "tensor[0].shape");
	reject_u32(REF_T0 + 11, 0xffffffffu, NRT_INVALID, "tensor[0].shape");
	reject_u32(REF_T0 + 19, 129, NRT_INVALID, "tensor[0].size");
	reject_u32(REF_T0 + 23, 1, NRT_INVALID, "tensor[0].size"); /* high word */
	reject_u8(REF_T1 + 4, NRT_TENSOR_USAGE_INPUT, NRT_INVALID, "outputs");
	reject_u8(REF_T0 + 4, NRT_TENSOR_USAGE_OUTPUT, NRT_INVALID, "inputs");
	reject_u8(REF_T1 + 6, 8, NRT_INVALID, "tensor[1].shape"); /* 8 dims run off the end */
}

/* parse-1.5: a duplicate tensor name is rejected as the later tensor's name. */
static void t_duplicate(void)
{
	size_t len;
	uint8_t *b = fx_ref_bytes(&len);

	memcpy(b + REF_T1 + 1, "in0", 3);
	fx_fix_crc(b, len);
	fx_expect_reject(b, len, NRT_INVALID, "tensor[1].name");
	free(b);
}

/* parse-1.6: a tensor whose shape and dtype exceed KMODEL_MAX_TENSOR_BYTES
 * (without wrapping 64 bits, and with wrapping) is rejected as its shape. */
static void t_huge_shape(void)
{
	size_t len;
	uint8_t *b = fx_ref_bytes(&len);

	fx_put32(b + REF_T0 + 7, 65536);
	fx_put32(b + REF_T0 + 11, 65536); /* 4 * 2^32 bytes: over by a factor 4 */
	fx_fix_crc(b, len);
	fx_expect_reject(b, len, NRT_INVALID, "tensor[0].shape");
	for (int d = 0; d < 3; d++)
		fx_put32(b + REF_T0 + 7 + 4 * d, 0x80000000u); /* 2^95: wraps 64 bits */
	fx_fix_crc(b, len);
	fx_expect_reject(b, len, NRT_INVALID, "tensor[0].shape");
	free(b);
}

/* parse-1.7: trailing garbage is 'length', a wrong CRC 'checksum'. */
static void t_trailer(void)
{
	size_t len;
	uint8_t *b = fx_ref_bytes(&len);
	uint8_t *b2 = malloc(len + 1);

	memcpy(b2, b, len);
	b2[len] = 0;
	fx_expect_reject(b2, len + 1, NRT_INVALID, "length");
	fx_fix_crc(b2, len + 1);
	fx_expect_reject(b2, len + 1, NRT_INVALID, "length");
	b[REF_CRC] ^= 1;
	fx_expect_reject(b, len, NRT_INVALID, "checksum");
	free(b2);
	free(b);
}

/* parse-1.8: a NULL buffer or NULL out is NRT_INVALID, not a crash. */
static void t_null_args(void)
{
	fx_expect_reject(NULL, 10, NRT_INVALID, "buffer");
	KT_EQ(kmodel_parse("x", 1, NULL), NRT_INVALID);
	fx_expect_reject((const uint8_t *)"", 0, NRT_INVALID, "magic");
	KT_EQ(kmodel_input_count(NULL), 0);
	kmodel_free(NULL);
}

/* parse-2.1: every proper prefix of a valid container is rejected cleanly
 * (one line, no model, no leak, no read past the prefix: ASan). */
static void t_truncate_everywhere(void)
{
	size_t len;
	uint8_t *b = fx_ref_bytes(&len);

	for (size_t n = 0; n < len; n++) {
		uint8_t *p = malloc(n ? n : 1);
		int64_t live = kalloc_live_count();
		kmodel_t *m = NULL;

		memcpy(p, b, n);
		kt_log_capture(KLOG_WARN);
		KT_EQ(kmodel_parse(p, n, &m), NRT_INVALID);
		KT_ASSERT(m == NULL);
		KT_EQ(kt_log_lines(), 1);
		KT_EQ(kalloc_live_count(), live);
		free(p);
	}
	free(b);
}

/* Parse b: if it fails, cleanly; if it succeeds, it re-serializes to b. */
static int parse_canonical(const uint8_t *b, size_t len)
{
	int64_t live = kalloc_live_count();
	kmodel_t *m = NULL;
	uint8_t *out;
	size_t olen;
	NRT_STATUS rc;

	kt_log_capture(KLOG_WARN);
	rc = kmodel_parse(b, len, &m);
	if (rc) {
		KT_ASSERT(m == NULL);
		KT_EQ(kt_log_lines(), 1);
		KT_EQ(kalloc_live_count(), live);
		return 0;
	}
	KT_EQ(kmodel_serialize(m, &out, &olen), 0);
	KT_EQ(olen, len);
	KT_MEMEQ(out, b, len);
	kfree(out);
	kmodel_free(m);
	KT_EQ(kalloc_live_count(), live);
	return 1;
}

/* parse-2.2: every single-byte change is caught (CRC-32 sees every one);
 * with the CRC fixed up, every change either fails cleanly or yields a
 * container that re-serializes to exactly its bytes. */
static void t_flip_everywhere(void)
{
	static const uint8_t masks[] = {0x01, 0x02, 0x10, 0x80, 0xff};
	size_t len;
	uint8_t *b = fx_ref_bytes(&len);
	int accepted = 0;

	for (size_t off = 0; off < len; off++) {
		for (size_t k = 0; k < sizeof(masks); k++) {
			b[off] ^= masks[k];
			KT_EQ(parse_canonical(b, len), 0);
			if (off < len - 4) {
				fx_fix_crc(b, len);
				accepted += parse_canonical(b, len);
			}
			b[off] ^= masks[k];
			fx_fix_crc(b, len);
		}
	}
	KT_GT(accepted, 0); /* uuid and name bytes: accepted changes exist */
	free(b);
}

/* parse-2.3: random multi-byte mutations of the reference (a fixed-seed
 * LCG: the run is the same every time), CRC fixed, keep the same invariant. */
static void t_mutate(void)
{
	size_t len;
	uint8_t *ref = fx_ref_bytes(&len);
	uint8_t *b = malloc(len);
	uint64_t s = 0x6b6d6f64656cull;

	for (int it = 0; it < 20000; it++) {
		memcpy(b, ref, len);
		for (int k = 0; k < 1 + it % 4; k++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			b[(s >> 33) % (len - 4)] = (uint8_t)(s >> 13);
		}
		fx_fix_crc(b, len);
		parse_canonical(b, len);
	}
	free(b);
	free(ref);
}

int main(void)
{
	KT_CASE("parse-1.1 reference", t_reference);
	KT_CASE("parse-1.2 header fields", t_header_fields);
	KT_CASE("parse-1.3 unterminated name", t_name_unterminated);
	KT_CASE("parse-1.4 tensor fields", t_tensor_fields);
	KT_CASE("parse-1.5 duplicate name", t_duplicate);
	KT_CASE("parse-1.6 huge shape", t_huge_shape);
	KT_CASE("parse-1.7 trailer", t_trailer);
	KT_CASE("parse-1.8 null args", t_null_args);
	KT_CASE("parse-2.1 truncate everywhere", t_truncate_everywhere);
	KT_CASE("parse-2.2 flip everywhere", t_flip_everywhere);
	KT_CASE("parse-2.3 mutate", t_mutate);
	kt_log_release();
	KT_DONE();
}
