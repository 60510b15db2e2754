/*
 * build.c - the builder: a model assembled field by field, checked by the
 * same rules as the parser, and serialized to the container bytes.  Every
 * model it serializes parses back to an equal model, and every container
 * the parser accepts serializes back to the same bytes.
 */
#include <string.h>

#include "base/kalloc.h"
#include "base/klog.h"
#include "kmodel_int.h"

/* FNV-1a-64: the uuid of a new model is a function of its name only, so
 * that building the same model twice gives the same bytes. */
static uint64_t fnv1a64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static void make_uuid(kmodel_t *m)
{
	uint64_t a = fnv1a64(0xcbf29ce484222325ull, m->name, strlen(m->name));
	uint64_t b = fnv1a64(a, "uuid", 4);

	for (int i = 0; i < 8; i++) {
		m->uuid[i] = (uint8_t)(a >> (8 * i));
		m->uuid[8 + i] = (uint8_t)(b >> (8 * i));
	}
}

kmodel_t *kmodel_new(const char *name, uint32_t nkbin, bool has_cc)
{
	kmodel_t *m;

	if (!name || kmodel__check_model_name(name, strnlen(name, KMODEL_NAME_MAX)) ||
	    kmodel__check_nkbin(nkbin))
		return NULL;
	m = kalloc(KFAULT_MODEL_NEW, sizeof(*m));
	if (!m)
		return NULL;
	m->version = KMODEL_VERSION;
	strcpy(m->name, name);
	m->nkbin = nkbin;
	m->has_cc = has_cc;
	make_uuid(m);
	return m;
}

NRT_STATUS kmodel_add_tensor(kmodel_t *m, const char *name, nrt_tensor_usage_t usage,
                             nrt_dtype_t dtype, uint32_t ndim, const uint32_t *shape)
{
	uint32_t i = m ? m->n_tensors : 0;
	kmodel_tensor_t *ts, *t;
	uint64_t size;

	if (!m || !name || !shape)
		return NRT_INVALID;
	if (i >= KMODEL_MAX_TENSORS) {
		kmodel__bad((int)i, "name", "more than %d tensors", KMODEL_MAX_TENSORS);
		return NRT_RESOURCE;
	}
	if (!kmodel__name_ok(name, strnlen(name, NRT_TENSOR_NAME_MAX), NRT_TENSOR_NAME_MAX - 1)) {
		kmodel__bad((int)i, "name", "must be 1..%d printable characters",
		            NRT_TENSOR_NAME_MAX - 1);
		return NRT_INVALID;
	}
	if (kmodel__check_unique(m, i, name) ||
	    kmodel__check_kind((int)i, (uint32_t)usage, (uint32_t)dtype, ndim) ||
	    kmodel__check_dims((int)i, (uint32_t)dtype, ndim, shape, &size))
		return NRT_INVALID;
	ts = krealloc(KFAULT_MODEL_NEW_TENSORS, m->tensors, (i + 1) * sizeof(*ts));
	if (!ts)
		return NRT_FAIL_HOST_MEM_ALLOC;
	m->tensors = ts;
	t = &ts[i];
	strcpy(t->name, name);
	t->usage = usage;
	t->dtype = dtype;
	t->ndim = ndim;
	memcpy(t->shape, shape, ndim * sizeof(*shape));
	t->size = size;
	m->n_tensors = i + 1;
	return NRT_SUCCESS;
}

/* The parser's rules, on a model in memory (which a caller may have
 * edited by hand); *len gets the container length. */
static NRT_STATUS check_tensor(const kmodel_t *m, uint32_t i, size_t *len)
{
	const kmodel_tensor_t *t = &m->tensors[i];
	size_t n = strnlen(t->name, NRT_TENSOR_NAME_MAX);
	uint64_t size;

	if (!kmodel__name_ok(t->name, n, NRT_TENSOR_NAME_MAX - 1)) {
		kmodel__bad((int)i, "name", "must be 1..%d printable characters",
		            NRT_TENSOR_NAME_MAX - 1);
		return NRT_INVALID;
	}
	if (kmodel__check_unique(m, i, t->name) ||
	    kmodel__check_kind((int)i, (uint32_t)t->usage, (uint32_t)t->dtype, t->ndim) ||
	    kmodel__check_dims((int)i, (uint32_t)t->dtype, t->ndim, t->shape, &size))
		return NRT_INVALID;
	if (t->size != size) {
		kmodel__bad((int)i, "size", "%llu, but dtype and shape give %llu",
		            (unsigned long long)t->size, (unsigned long long)size);
		return NRT_INVALID;
	}
	*len += 1 + n + 3 + 4 * (size_t)t->ndim + 8;
	return NRT_SUCCESS;
}

static NRT_STATUS check_model(const kmodel_t *m, size_t *len)
{
	if (m->version != KMODEL_VERSION) {
		kmodel__bad(-1, "version", "%u, this builder writes %u", m->version,
		            KMODEL_VERSION);
		return NRT_UNSUPPORTED_NEFF_VERSION;
	}
	if (kmodel__check_model_name(m->name, strnlen(m->name, KMODEL_NAME_MAX)) ||
	    kmodel__check_nkbin(m->nkbin))
		return NRT_INVALID;
	/* Fewer than two tensors is left to kmodel__check_io, whose line says why. */
	if (m->n_tensors > KMODEL_MAX_TENSORS || (m->n_tensors && !m->tensors)) {
		kmodel__bad(-1, "n_tensors", "%u: more than %d, or no array", m->n_tensors,
		            KMODEL_MAX_TENSORS);
		return NRT_INVALID;
	}
	*len = KMODEL_HEADER_SIZE + KMODEL_CRC_SIZE;
	for (uint32_t i = 0; i < m->n_tensors; i++)
		if (check_tensor(m, i, len))
			return NRT_INVALID;
	return kmodel__check_io(m);
}

static uint8_t *wr_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *wr_bytes(uint8_t *p, const void *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

static uint8_t *wr_tensor(uint8_t *p, const kmodel_tensor_t *t)
{
	size_t n = strlen(t->name);

	*p++ = (uint8_t)n;
	p = wr_bytes(p, t->name, n);
	*p++ = (uint8_t)t->usage;
	*p++ = (uint8_t)t->dtype;
	*p++ = (uint8_t)t->ndim;
	for (uint32_t d = 0; d < t->ndim; d++)
		p = wr_u32(p, t->shape[d]);
	p = wr_u32(p, (uint32_t)t->size);
	return wr_u32(p, (uint32_t)(t->size >> 32));
}

/* buf is zeroed (kalloc), so the name's NUL padding is already there. */
static void write_model(const kmodel_t *m, uint8_t *buf, size_t len)
{
	uint8_t *p = wr_bytes(buf, KMODEL_MAGIC, 8);

	p = wr_u32(p, KMODEL_VERSION);
	p = wr_u32(p, KMODEL_HEADER_SIZE);
	p = wr_u32(p, m->nkbin);
	p = wr_u32(p, m->has_cc ? KMODEL_FLAG_CC : 0);
	p = wr_u32(p, m->n_tensors);
	wr_bytes(p, m->name, strlen(m->name));
	p = wr_bytes(p + KMODEL_NAME_MAX, m->uuid, sizeof(m->uuid));
	for (uint32_t i = 0; i < m->n_tensors; i++)
		p = wr_tensor(p, &m->tensors[i]);
	wr_u32(p, kmodel__crc32(buf, len - KMODEL_CRC_SIZE));
}

NRT_STATUS kmodel_serialize(const kmodel_t *m, uint8_t **out, size_t *len)
{
	NRT_STATUS rc;
	size_t n = 0;
	uint8_t *buf;

	if (!m || !out || !len)
		return NRT_INVALID;
	*out = NULL;
	*len = 0;
	rc = check_model(m, &n);
	if (rc)
		return rc;
	buf = kalloc(KFAULT_MODEL_BUILD, n);
	if (!buf) {
		klog_error("model: out of host memory serializing \"%s\"", m->name);
		return NRT_FAIL_HOST_MEM_ALLOC;
	}
	write_model(m, buf, n);
	*out = buf;
	*len = n;
	return NRT_SUCCESS;
}
