/*
 * parse.c - the strict container parser (docs/model-format.md).
 *
 * One pass over the bytes with a bounds-checked cursor; every field is
 * checked before it is used, every length against what is left of the
 * buffer before anything is allocated.  Two allocations per model (the
 * record and the tensor array), so a fuzzer spends its time in the checks.
 */
#include <string.h>

#include "base/kalloc.h"
#include "base/klog.h"
#include "kmodel_int.h"

typedef struct kmodel_rd {
	const uint8_t *p;
	size_t len;
	size_t off;
} kmodel_rd_t;

/* Are n more bytes there?  If not, log field idx/name as truncated. */
static bool rd_need(kmodel_rd_t *r, size_t n, int idx, const char *field)
{
	if (r->len - r->off >= n)
		return true;
	kmodel__bad(idx, field, "truncated at offset %zu: need %zu bytes, %zu left", r->off, n,
	            r->len - r->off);
	return false;
}

static uint8_t rd_u8(kmodel_rd_t *r)
{
	return r->p[r->off++];
}

static uint32_t rd_u32(kmodel_rd_t *r)
{
	const uint8_t *b = r->p + r->off;

	r->off += 4;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t rd_u64(kmodel_rd_t *r)
{
	uint64_t lo = rd_u32(r);

	return lo | (uint64_t)rd_u32(r) << 32;
}

/* The 64-byte name field: 1..63 printable bytes, then NULs only, so that
 * every accepted container is the one the builder would write. */
static NRT_STATUS parse_name(kmodel_rd_t *r, kmodel_t *h)
{
	const char *s = (const char *)r->p + r->off;
	const char *nul = memchr(s, 0, KMODEL_NAME_MAX);
	size_t n = nul ? (size_t)(nul - s) : KMODEL_NAME_MAX;
	size_t end;

	r->off += KMODEL_NAME_MAX;
	if (kmodel__check_model_name(s, n))
		return NRT_INVALID;
	end = n + kmodel__count_zeros(s + n, KMODEL_NAME_MAX - n);
	if (end < KMODEL_NAME_MAX) {
		kmodel__bad(-1, "name", "byte %zu after the name is not NUL", end);
		return NRT_INVALID;
	}
	memcpy(h->name, s, n);
	return NRT_SUCCESS;
}

static NRT_STATUS parse_u32_field(kmodel_rd_t *r, const char *field, uint32_t *v)
{
	if (!rd_need(r, 4, -1, field))
		return NRT_INVALID;
	*v = rd_u32(r);
	return NRT_SUCCESS;
}

static NRT_STATUS parse_ids(kmodel_rd_t *r)
{
	uint32_t v;

	if (!rd_need(r, 8, -1, "magic"))
		return NRT_INVALID;
	if (memcmp(r->p, KMODEL_MAGIC, 8) != 0) {
		kmodel__bad(-1, "magic", "not \"%s\"", KMODEL_MAGIC);
		return NRT_INVALID;
	}
	r->off = 8;
	if (parse_u32_field(r, "version", &v))
		return NRT_INVALID;
	if (v != KMODEL_VERSION) {
		kmodel__bad(-1, "version", "%u, this parser knows %u", v, KMODEL_VERSION);
		return NRT_UNSUPPORTED_NEFF_VERSION;
	}
	if (parse_u32_field(r, "header_size", &v))
		return NRT_INVALID;
	if (v != KMODEL_HEADER_SIZE) {
		kmodel__bad(-1, "header_size", "%u, version %u has %u", v, KMODEL_VERSION,
		            KMODEL_HEADER_SIZE);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

/* Everything before the tensor records, into the stack record h. */
static NRT_STATUS parse_header(kmodel_rd_t *r, kmodel_t *h)
{
	NRT_STATUS rc = parse_ids(r);
	uint32_t flags;

	if (rc)
		return rc;
	if (parse_u32_field(r, "nkbin", &h->nkbin) || kmodel__check_nkbin(h->nkbin))
		return NRT_INVALID;
	if (parse_u32_field(r, "flags", &flags))
		return NRT_INVALID;
	if (flags & ~KMODEL_FLAG_CC) {
		kmodel__bad(-1, "flags", "0x%x has unknown bits", flags);
		return NRT_INVALID;
	}
	h->has_cc = flags & KMODEL_FLAG_CC;
	if (parse_u32_field(r, "n_tensors", &h->n_tensors))
		return NRT_INVALID;
	if (h->n_tensors < 2 || h->n_tensors > KMODEL_MAX_TENSORS) {
		kmodel__bad(-1, "n_tensors", "%u not in 2..%d", h->n_tensors, KMODEL_MAX_TENSORS);
		return NRT_INVALID;
	}
	if (!rd_need(r, KMODEL_NAME_MAX, -1, "name") || parse_name(r, h))
		return NRT_INVALID;
	if (!rd_need(r, sizeof(h->uuid), -1, "uuid"))
		return NRT_INVALID;
	memcpy(h->uuid, r->p + r->off, sizeof(h->uuid));
	r->off += sizeof(h->uuid);
	h->version = KMODEL_VERSION;
	return NRT_SUCCESS;
}

static NRT_STATUS parse_tensor_name(kmodel_rd_t *r, kmodel_t *m, uint32_t i)
{
	int idx = (int)i;
	size_t n;

	if (!rd_need(r, 1, idx, "name_len"))
		return NRT_INVALID;
	n = rd_u8(r);
	if (n == 0) {
		kmodel__bad(idx, "name_len", "zero");
		return NRT_INVALID;
	}
	if (!rd_need(r, n, idx, "name"))
		return NRT_INVALID;
	if (!kmodel__name_ok((const char *)r->p + r->off, n, NRT_TENSOR_NAME_MAX - 1)) {
		kmodel__bad(idx, "name", "not printable ASCII");
		return NRT_INVALID;
	}
	memcpy(m->tensors[i].name, r->p + r->off, n);
	r->off += n;
	return kmodel__check_unique(m, i, m->tensors[i].name);
}

static NRT_STATUS parse_tensor(kmodel_rd_t *r, kmodel_t *m, uint32_t i)
{
	kmodel_tensor_t *t = &m->tensors[i];
	uint32_t usage, dtype, ndim;
	uint64_t size;
	int idx = (int)i;

	if (parse_tensor_name(r, m, i))
		return NRT_INVALID;
	if (!rd_need(r, 3, idx, "usage"))
		return NRT_INVALID;
	usage = rd_u8(r);
	dtype = rd_u8(r);
	ndim = rd_u8(r);
	if (kmodel__check_kind(idx, usage, dtype, ndim))
		return NRT_INVALID;
	if (!rd_need(r, 4 * (size_t)ndim, idx, "shape"))
		return NRT_INVALID;
	for (uint32_t d = 0; d < ndim; d++)
		t->shape[d] = rd_u32(r);
	if (kmodel__check_dims(idx, dtype, ndim, t->shape, &size))
		return NRT_INVALID;
	if (!rd_need(r, 8, idx, "size"))
		return NRT_INVALID;
	t->size = rd_u64(r);
	if (t->size != size) {
		kmodel__bad(idx, "size", "%llu, but dtype and shape give %llu",
		            (unsigned long long)t->size, (unsigned long long)size);
		return NRT_INVALID;
	}
	t->usage = (nrt_tensor_usage_t)usage;
	t->dtype = (nrt_dtype_t)dtype;
	t->ndim = ndim;
	return NRT_SUCCESS;
}

/* After the records: exactly the checksum, and the right one. */
static NRT_STATUS parse_trailer(kmodel_rd_t *r)
{
	size_t left = r->len - r->off;
	uint32_t want, got;

	if (left < KMODEL_CRC_SIZE)
		return rd_need(r, KMODEL_CRC_SIZE, -1, "checksum") ? NRT_SUCCESS : NRT_INVALID;
	if (left > KMODEL_CRC_SIZE) {
		kmodel__bad(-1, "length", "%zu bytes of trailing garbage at offset %zu",
		            left - KMODEL_CRC_SIZE, r->off);
		return NRT_INVALID;
	}
	want = kmodel__crc32(r->p, r->off);
	got = rd_u32(r);
	if (got != want) {
		kmodel__bad(-1, "checksum", "stored 0x%08x, computed 0x%08x", got, want);
		return NRT_INVALID;
	}
	return NRT_SUCCESS;
}

/* The smallest records must fit in what is left: this bounds the tensor
 * array by the input before it is allocated. */
static NRT_STATUS check_room(const kmodel_rd_t *r, uint32_t n)
{
	size_t need = (size_t)n * KMODEL_REC_MIN + KMODEL_CRC_SIZE;

	if (r->len - r->off >= need)
		return NRT_SUCCESS;
	kmodel__bad(-1, "n_tensors", "%u tensors need at least %zu bytes, %zu left", n, need,
	            r->len - r->off);
	return NRT_INVALID;
}

static NRT_STATUS parse_body(kmodel_rd_t *r, kmodel_t *m)
{
	for (uint32_t i = 0; i < m->n_tensors; i++)
		if (parse_tensor(r, m, i))
			return NRT_INVALID;
	if (kmodel__check_io(m))
		return NRT_INVALID;
	return parse_trailer(r);
}

NRT_STATUS kmodel_parse(const void *buf, size_t len, kmodel_t **out)
{
	kmodel_rd_t r = {buf, len, 0};
	kmodel_t h = {0};
	kmodel_t *m = NULL;
	NRT_STATUS rc;

	if (!out)
		return NRT_INVALID;
	*out = NULL;
	if (!buf) {
		kmodel__bad(-1, "buffer", "NULL");
		return NRT_INVALID;
	}
	rc = parse_header(&r, &h);
	if (rc == NRT_SUCCESS)
		rc = check_room(&r, h.n_tensors);
	if (rc)
		return rc;
	m = kalloc(KFAULT_MODEL_PARSE, sizeof(*m));
	if (!m)
		goto oom;
	*m = h;
	m->tensors = kalloc_array(KFAULT_MODEL_TENSORS, m->n_tensors, sizeof(*m->tensors));
	if (!m->tensors)
		goto oom;
	rc = parse_body(&r, m);
	if (rc)
		goto fail;
	*out = m;
	return NRT_SUCCESS;
oom:
	klog_error("model: out of host memory parsing \"%s\"", h.name);
	rc = NRT_FAIL_HOST_MEM_ALLOC;
fail:
	kmodel_free(m);
	return rc;
}

void kmodel_free(kmodel_t *m)
{
	if (!m)
		return;
	kfree(m->tensors);
	kfree(m);
}

static uint32_t count_usage(const kmodel_t *m, nrt_tensor_usage_t usage)
{
	uint32_t n = 0;

	for (uint32_t i = 0; m && i < m->n_tensors; i++)
		n += m->tensors[i].usage == usage;
	return n;
}

uint32_t kmodel_input_count(const kmodel_t *m)
{
	return count_usage(m, NRT_TENSOR_USAGE_INPUT);
}

uint32_t kmodel_output_count(const kmodel_t *m)
{
	return count_usage(m, NRT_TENSOR_USAGE_OUTPUT);
}
