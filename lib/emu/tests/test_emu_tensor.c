/*
 * test_emu_tensor.c - the focus of this file is tensors and tensor sets:
 * placements, bounds, slices, reference-counted sets, the host-tensor
 * count, clone to device memory, set copy (and its injected DMA abort) and
 * the async mark pair.
 */
#include "emu_fixture.h"

/* tensor-1: each placement allocates what it says: DEVICE on the arena of
 * its core (zeroed), HOST in host memory, VIRTUAL nothing until a buffer is
 * attached; only HOST and attached VIRTUAL count as host-resident. */
static void tensor_placements(void)
{
	nrt_tensor_t *d, *h, *v;
	uint8_t buf[100], zero[100] = {0}, ext[32];

	et_open(2);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, 100, "d", &d), NRT_SUCCESS);
	KT_EQ(kbl_tensor_get_nc(d), 1);
	KT_EQ(emu_core_device_bytes(1), 128);
	KT_EQ(emu_core_device_bytes(0), 0);
	KT_EQ(kbl_tensor_read(d, buf, 0, 100), NRT_SUCCESS);
	KT_MEMEQ(buf, zero, 100);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 100, "h", &h), NRT_SUCCESS);
	KT_EQ(kbl_tensor_get_nc(h), -1);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_VIRTUAL, 0, 100, "v", &v), NRT_SUCCESS);
	KT_ASSERT(kbl_tensor_get_va(v) == NULL);
	KT_EQ(kbl_tensor_read(v, buf, 0, 1), NRT_INVALID);
	KT_ASSERT(!kbl_tensor_is_malloc(d));
	KT_ASSERT(kbl_tensor_is_malloc(h));
	KT_ASSERT(!kbl_tensor_is_malloc(v));
	KT_EQ(kbl_tensor_attach_buffer(v, ext, sizeof(ext)), NRT_SUCCESS);
	KT_ASSERT(kbl_tensor_is_malloc(v));
	KT_EQ(kbl_tensor_get_size(v), 32);
	KT_EQ(kbl_tensor_attach_buffer(d, ext, sizeof(ext)), NRT_INVALID);
	KT_STREQ(kbl_tensor_get_name(d), "d");
	kbl_tensor_free(&d);
	KT_ASSERT(d == NULL);
	kbl_tensor_free(&h);
	kbl_tensor_free(&v);
	emu_close();
	kt_assert_accounting_zero();
}

/* tensor-2: bad arguments get NRT_INVALID, never a crash: unknown core,
 * size 0, out-of-range offsets (including overflow), NULL pointers, an
 * over-long name. */
static void tensor_bad_args(void)
{
	nrt_tensor_t *t, *s;
	char longname[NRT_TENSOR_NAME_MAX + 1];
	uint8_t b[8];

	et_open(2);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 2, 8, "x", &t), NRT_INVALID);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, -1, 8, "x", &t), NRT_INVALID);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 0, "x", &t), NRT_INVALID);
	KT_EQ(kbl_tensor_allocate((nrt_tensor_placement_t)9, 0, 8, "x", &t), NRT_INVALID);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, "x", NULL), NRT_INVALID);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 8, longname, &t), NRT_INVALID);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 8, NULL, &t), NRT_SUCCESS);
	KT_EQ(kbl_tensor_read(t, b, 1, 8), NRT_INVALID);
	KT_EQ(kbl_tensor_write(t, b, SIZE_MAX, 2), NRT_INVALID);
	KT_EQ(kbl_tensor_memset(t, 4, 0, 5), NRT_INVALID);
	KT_EQ(kbl_tensor_copy(t, 0, t, 1, 8), NRT_INVALID);
	KT_EQ(kbl_tensor_read(NULL, b, 0, 1), NRT_INVALID);
	KT_EQ(kbl_tensor_allocate_slice(t, 4, 5, "s", &s), NRT_INVALID);
	KT_EQ(kbl_tensor_allocate_slice(t, 0, 0, "s", &s), NRT_INVALID);
	kbl_tensor_free(&t);
	kbl_tensor_free(NULL);
	emu_close();
	kt_assert_accounting_zero();
}

/* tensor-3: a slice shares its source's bytes; copy and memset act on the
 * right range. */
static void tensor_slice_copy(void)
{
	nrt_tensor_t *a, *s, *b;
	uint8_t in[16], out[16];

	et_open(1);
	for (int i = 0; i < 16; i++)
		in[i] = (uint8_t)(i + 1);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 16, "a", &a), NRT_SUCCESS);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 16, "b", &b), NRT_SUCCESS);
	KT_EQ(kbl_tensor_write(a, in, 0, 16), NRT_SUCCESS);
	KT_EQ(kbl_tensor_allocate_slice(a, 4, 8, "s", &s), NRT_SUCCESS);
	KT_EQ(kbl_tensor_get_size(s), 8);
	KT_EQ(kbl_tensor_read(s, out, 0, 8), NRT_SUCCESS);
	KT_MEMEQ(out, in + 4, 8);
	KT_EQ(kbl_tensor_memset(s, 2, 0xaa, 2), NRT_SUCCESS);
	KT_EQ(kbl_tensor_read(a, out, 0, 16), NRT_SUCCESS);
	KT_EQ(out[6], 0xaa);
	KT_EQ(out[7], 0xaa);
	KT_EQ(out[8], 9);
	KT_EQ(kbl_tensor_copy(a, 0, b, 0, 16), NRT_SUCCESS);
	KT_EQ(kbl_tensor_read(b, out, 0, 16), NRT_SUCCESS);
	KT_EQ(out[6], 0xaa);
	KT_EQ(out[0], 1);
	kbl_tensor_free(&s);
	kbl_tensor_free(&a);
	kbl_tensor_free(&b);
	emu_close();
	kt_assert_accounting_zero();
}

/* set-1: add replaces by name and keeps insertion order; get finds by
 * name; a reference is the same set, and the set lives until the last
 * reference is dropped. */
static void set_refcount(void)
{
	nrt_tensor_set_t *s, *r;
	nrt_tensor_t *a, *b, *got;
	const char *name;
	emu_accounting_t acct;

	et_open(1);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 4, "a", &a), NRT_SUCCESS);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4, "b", &b), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_allocate(&s), NRT_SUCCESS);
	for (int i = 0; i < 9; i++) {
		char n[8];

		snprintf(n, sizeof(n), "t%d", i);
		KT_EQ(kbl_tensor_set_add(s, n, i % 2 ? a : b), NRT_SUCCESS);
	}
	KT_EQ(kbl_tensor_set_add(s, "t0", a), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_count(s), 9);
	KT_ASSERT(kbl_tensor_set_at(s, 0, &name) == a);
	KT_STREQ(name, "t0");
	KT_EQ(kbl_tensor_set_get(s, "t2", &got), NRT_SUCCESS);
	KT_ASSERT(got == b);
	KT_EQ(kbl_tensor_set_get(s, "nope", &got), NRT_INVALID);
	KT_EQ(kbl_tensor_set_add(s, NULL, a), NRT_INVALID);
	KT_EQ(kbl_tensor_set_get_malloc_tensor_count(s), 5);
	KT_EQ(kbl_create_reference_feature_map_set(s, &r), NRT_SUCCESS);
	KT_ASSERT(r == s);
	KT_EQ(kbl_create_reference_feature_map_set(NULL, &r), NRT_INVALID);
	kbl_free_feature_map_set(s);
	emu_get_accounting(&acct);
	KT_EQ(acct.objects, 3); /* a, b and the set still referenced once */
	KT_EQ(kbl_tensor_set_count(s), 9);
	kbl_free_feature_map_set(s);
	emu_get_accounting(&acct);
	KT_EQ(acct.objects, 2);
	kbl_tensor_free(&a);
	kbl_tensor_free(&b);
	emu_close();
	kt_assert_accounting_zero();
}

/* set-2: the clone replaces exactly the host-resident tensors by new
 * device tensors of the same name and size and shares the device ones;
 * set copy moves the bytes both ways; the clone's tensors go with it. */
static void set_clone_copy(void)
{
	nrt_tensor_set_t *s, *c;
	nrt_tensor_t *h, *d, *ch, *cd;
	uint8_t in[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, out[10];
	emu_accounting_t before, acct;

	et_open(2);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 10, "h", &h), NRT_SUCCESS);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, 10, "d", &d), NRT_SUCCESS);
	KT_EQ(kbl_tensor_write(h, in, 0, 10), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_allocate(&s), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_add(s, "h", h), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_add(s, "d", d), NRT_SUCCESS);
	emu_get_accounting(&before);
	c = kbl_tensor_set_clone_to_physical_mem(s, 1);
	KT_ASSERT(c != NULL);
	KT_EQ(kbl_tensor_set_get_malloc_tensor_count(c), 0);
	KT_EQ(kbl_tensor_set_get(c, "h", &ch), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_get(c, "d", &cd), NRT_SUCCESS);
	KT_ASSERT(ch != h);
	KT_ASSERT(cd == d);
	KT_EQ(kbl_tensor_get_placement(ch), NRT_TENSOR_PLACEMENT_DEVICE);
	KT_EQ(kbl_tensor_get_nc(ch), 1);
	KT_EQ(kbl_tensor_get_size(ch), 10);
	KT_EQ(kbl_tensor_set_copy(s, c), NRT_SUCCESS);
	KT_EQ(kbl_tensor_read(ch, out, 0, 10), NRT_SUCCESS);
	KT_MEMEQ(out, in, 10);
	KT_EQ(kbl_tensor_memset(ch, 0, 0x55, 10), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_copy(c, s), NRT_SUCCESS);
	KT_EQ(kbl_tensor_read(h, out, 0, 10), NRT_SUCCESS);
	KT_EQ(out[9], 0x55);
	kbl_free_feature_map_set(c);
	emu_get_accounting(&acct);
	KT_EQ(acct.device_bytes, before.device_bytes);
	KT_EQ(acct.objects, before.objects);
	KT_EQ(acct.host_allocs, before.host_allocs);
	kbl_free_feature_map_set(s);
	kbl_tensor_free(&h);
	kbl_tensor_free(&d);
	emu_close();
	kt_assert_accounting_zero();
}

/* set-3: copying into a set that lacks a name, or whose tensor has another
 * size, is refused. */
static void set_copy_mismatch(void)
{
	nrt_tensor_set_t *a, *b;
	nrt_tensor_t *x, *y;

	et_open(1);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 10, "x", &x), NRT_SUCCESS);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 11, "y", &y), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_allocate(&a), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_allocate(&b), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_add(a, "t", x), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_copy(a, b), NRT_INVALID);
	KT_EQ(kbl_tensor_set_add(b, "t", y), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_copy(a, b), NRT_INVALID);
	kbl_free_feature_map_set(a);
	kbl_free_feature_map_set(b);
	kbl_tensor_free(&x);
	kbl_tensor_free(&y);
	emu_close();
	kt_assert_accounting_zero();
}

/* set-4: the async mark takes a reference and a mark and unmark drops
 * both, so a marked set outlives its owner's free; the marks are counted. */
static void set_mark_unmark(void)
{
	nrt_tensor_set_t *s;
	emu_accounting_t acct;

	et_open(1);
	KT_EQ(kbl_tensor_set_allocate(&s), NRT_SUCCESS);
	kbl_tensor_set_mark_async_exec(s);
	emu_get_accounting(&acct);
	KT_EQ(acct.async_marks, 1);
	kbl_free_feature_map_set(s);
	emu_get_accounting(&acct);
	KT_EQ(acct.objects, 1);
	kbl_tensor_set_unmark_async_exec(s);
	emu_close();
	kt_assert_accounting_zero();
}

static void unmark_without_mark(void)
{
	nrt_tensor_set_t *s;

	et_open(1);
	KT_EQ(kbl_tensor_set_allocate(&s), NRT_SUCCESS);
	kbl_tensor_set_unmark_async_exec(s);
}

/* set-5: unmarking a set that carries no mark (freeing the wrong arm of a
 * tracker) is reported and aborts. */
static void set_unmark_unmarked_dies(void)
{
	KT_ASSERT(et_dies(unmark_without_mark, "without a mark"));
}

/* set-6: an injected DMA abort (alloc:emu.set_copy:N) fails the N-th set
 * copy with NRT_EXEC_HW_ERR_DMA_ABORT before a byte moves: every
 * destination tensor keeps its bytes, both sets stay whole and usable, and
 * nothing is allocated or freed.  A copy refused for its arguments moves
 * nothing either and is not a hit. */
static void set_copy_fault(void)
{
	nrt_tensor_set_t *s, *c, *bad;
	nrt_tensor_t *h[2], *ch[2], *small;
	uint8_t in[2][8] = {{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11, 12, 13, 14, 15, 16}}, out[8];
	uint8_t dma[8];
	emu_accounting_t before, acct;
	kfault_plan_t plan;
	char err[128];

	et_open(1);
	memset(dma, 0x55, sizeof(dma));
	KT_EQ(kbl_tensor_set_allocate(&s), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_allocate(&bad), NRT_SUCCESS);
	for (int i = 0; i < 2; i++) {
		KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 8, i ? "b" : "a", &h[i]),
		      NRT_SUCCESS);
		KT_EQ(kbl_tensor_write(h[i], in[i], 0, 8), NRT_SUCCESS);
		KT_EQ(kbl_tensor_set_add(s, i ? "b" : "a", h[i]), NRT_SUCCESS);
	}
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, 0, 4, "b", &small), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_add(bad, "a", h[1]), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_add(bad, "b", small), NRT_SUCCESS);
	c = kbl_tensor_set_clone_to_physical_mem(s, 0);
	KT_ASSERT(c != NULL);
	KT_EQ(kbl_tensor_set_get(c, "a", &ch[0]), NRT_SUCCESS);
	KT_EQ(kbl_tensor_set_get(c, "b", &ch[1]), NRT_SUCCESS);
	KT_EQ(kfault_plan_parse("alloc:emu.set_copy:2", &plan, err, sizeof(err)), 0);
	kfault_set_plan(&plan);
	emu_get_accounting(&before);
	/* "b" is too small: refused whole, "a" of bad not overwritten */
	KT_EQ(kbl_tensor_set_copy(s, bad), NRT_INVALID);
	KT_EQ(kbl_tensor_read(h[1], out, 0, 8), NRT_SUCCESS);
	KT_MEMEQ(out, in[1], 8);
	KT_EQ(kbl_tensor_set_copy(s, c), NRT_SUCCESS); /* hit 1 */
	for (int i = 0; i < 2; i++)
		KT_EQ(kbl_tensor_write(ch[i], dma, 0, 8), NRT_SUCCESS);
	KT_EQ(kfault_fired(), 0);
	KT_EQ(kbl_tensor_set_copy(c, s), NRT_EXEC_HW_ERR_DMA_ABORT); /* hit 2 */
	KT_EQ(kfault_fired(), 1);
	for (int i = 0; i < 2; i++) {
		KT_EQ(kbl_tensor_read(h[i], out, 0, 8), NRT_SUCCESS);
		KT_MEMEQ(out, in[i], 8);
	}
	emu_get_accounting(&acct);
	KT_EQ(acct.device_bytes, before.device_bytes);
	KT_EQ(acct.objects, before.objects);
	KT_EQ(acct.host_allocs, before.host_allocs);
	KT_EQ(kbl_tensor_set_count(s), 2);
	KT_EQ(kbl_tensor_set_count(c), 2);
	KT_EQ(kbl_tensor_set_get_malloc_tensor_count(s), 2);
	KT_EQ(kbl_tensor_set_get_malloc_tensor_count(c), 0);
	KT_EQ(kbl_tensor_set_copy(c, s), NRT_SUCCESS); /* hit 3: the plan is spent */
	KT_EQ(kbl_tensor_read(h[1], out, 0, 8), NRT_SUCCESS);
	KT_MEMEQ(out, dma, 8);
	kfault_clear();
	kbl_free_feature_map_set(c);
	kbl_free_feature_map_set(bad);
	kbl_free_feature_map_set(s);
	for (int i = 0; i < 2; i++)
		kbl_tensor_free(&h[i]);
	kbl_tensor_free(&small);
	emu_close();
	kt_assert_accounting_zero();
}

int main(void)
{
	KT_CASE("tensor-1 placements", tensor_placements);
	KT_CASE("tensor-2 bad arguments", tensor_bad_args);
	KT_CASE("tensor-3 slice, copy, memset", tensor_slice_copy);
	KT_CASE("set-1 add/get/refcount", set_refcount);
	KT_CASE("set-2 clone and copy", set_clone_copy);
	KT_CASE("set-3 copy mismatch", set_copy_mismatch);
	KT_CASE("set-4 async mark pair", set_mark_unmark);
	KT_CASE("set-5 unmark without mark aborts", set_unmark_unmarked_dies);
	KT_CASE("set-6 copy fault leaves both sets whole", set_copy_fault);
	KT_DONE();
}
