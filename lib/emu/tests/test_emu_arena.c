/*
 * test_emu_arena.c - the focus of this file is device memory: exact
 * accounting, zeroed allocations, first-fit reuse and exhaustion, the
 * poisoning that reports device memory used after free, arenas outliving
 * emu_close for tensors still held, and the device configuration.
 */
#include <stdlib.h>

#include "emu_fixture.h"

#ifdef KMGR_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* arena-1: live device bytes and allocations are exact (sizes rounded to
 * the 64-byte granule), per core and in total, and return to zero. */
static void arena_accounting(void)
{
	static const size_t sz[] = {1, 64, 65, 1000};
	nrt_tensor_t *t[4], *u;
	emu_accounting_t a;

	et_open(2);
	for (int i = 0; i < 4; i++)
		KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, sz[i], "t", &t[i]),
		      NRT_SUCCESS);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 1, 10, "u", &u), NRT_SUCCESS);
	emu_get_accounting(&a);
	KT_EQ(a.device_bytes, 64 + 64 + 128 + 1024 + 64);
	KT_EQ(a.device_allocs, 5);
	KT_EQ(emu_core_device_bytes(0), 64 + 64 + 128 + 1024);
	KT_EQ(emu_core_device_bytes(1), 64);
	kbl_tensor_free(&t[1]);
	emu_get_accounting(&a);
	KT_EQ(a.device_bytes, 64 + 128 + 1024 + 64);
	KT_EQ(a.device_allocs, 4);
	for (int i = 0; i < 4; i++)
		kbl_tensor_free(&t[i]);
	kbl_tensor_free(&u);
	emu_get_accounting(&a);
	KT_EQ(a.device_bytes, 0);
	KT_EQ(a.device_allocs, 0);
	emu_close();
	kt_assert_accounting_zero();
}

/* arena-2: first fit reuses the lowest hole, and reused memory is zeroed
 * (nothing of the previous owner leaks out). */
static void arena_first_fit_zeroed(void)
{
	nrt_tensor_t *a, *b, *c, *d;
	uint8_t ff[128], got[128], zero[128] = {0};
	void *bva;

	memset(ff, 0xff, sizeof(ff));
	et_open(1);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 128, "a", &a), NRT_SUCCESS);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 128, "b", &b), NRT_SUCCESS);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 128, "c", &c), NRT_SUCCESS);
	KT_EQ(kbl_tensor_write(b, ff, 0, 128), NRT_SUCCESS);
	bva = kbl_tensor_get_va(b);
	kbl_tensor_free(&b);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 100, "d", &d), NRT_SUCCESS);
	KT_ASSERT(kbl_tensor_get_va(d) == bva);
	KT_EQ(kbl_tensor_read(d, got, 0, 100), NRT_SUCCESS);
	KT_MEMEQ(got, zero, 100);
	kbl_tensor_free(&a);
	kbl_tensor_free(&c);
	kbl_tensor_free(&d);
	emu_close();
	kt_assert_accounting_zero();
}

/* arena-3: an arena that cannot hold a request answers NRT_RESOURCE and
 * stays usable; freeing makes room again. */
static void arena_exhaustion(void)
{
	nrt_tensor_t *big, *t;
	emu_accounting_t a;

	et_open(1);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, ET_ARENA, "big", &big),
	      NRT_SUCCESS);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 1, "t", &t), NRT_RESOURCE);
	KT_ASSERT(t == NULL);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, SIZE_MAX, "t", &t), NRT_RESOURCE);
	emu_get_accounting(&a);
	KT_EQ(a.device_allocs, 1);
	KT_EQ(a.objects, 1);
	kbl_tensor_free(&big);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 1, "t", &t), NRT_SUCCESS);
	kbl_tensor_free(&t);
	emu_close();
	kt_assert_accounting_zero();
}

/* arena-4: freed device memory is poisoned: in ASan's shadow under ASan,
 * with the poison pattern otherwise; a new allocation unpoisons it. */
static void arena_poisoned_after_free(void)
{
	nrt_tensor_t *t;
	uint8_t *va;

	et_open(1);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", &t), NRT_SUCCESS);
	va = kbl_tensor_get_va(t);
#ifdef KMGR_ASAN
	KT_ASSERT(!__asan_address_is_poisoned(va));
	kbl_tensor_free(&t);
	KT_ASSERT(__asan_address_is_poisoned(va));
	KT_ASSERT(__asan_address_is_poisoned(va + 63));
#else
	kbl_tensor_free(&t);
	for (int i = 0; i < 64; i++)
		KT_EQ(va[i], EMU_POISON_BYTE);
#endif
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", &t), NRT_SUCCESS);
	KT_ASSERT(kbl_tensor_get_va(t) == va);
	KT_EQ(va[0], 0);
	kbl_tensor_free(&t);
	emu_close();
	kt_assert_accounting_zero();
}

static void slice_after_free(void)
{
	nrt_tensor_t *t, *s;
	uint8_t b[8];

	et_open(1);
	kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "victim", &t);
	kbl_tensor_allocate_slice(t, 8, 8, "slice", &s);
	kbl_tensor_free(&t);
	kbl_tensor_read(s, b, 0, 8);
}

static void slice_after_reuse(void)
{
	nrt_tensor_t *t, *s, *n;
	uint8_t b[8] = {0};

	et_open(1);
	kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "victim", &t);
	kbl_tensor_allocate_slice(t, 8, 8, "slice", &s);
	kbl_tensor_free(&t);
	kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "newcomer", &n);
	kbl_tensor_write(s, b, 0, 8);
}

/* arena-5: using device memory through a slice after its source was freed
 * is reported and aborts, also when the region already belongs to a new
 * allocation (the generation check). */
static void arena_uaf_generation(void)
{
	KT_ASSERT(et_dies(slice_after_free, "DEVICE MEMORY USE-AFTER-FREE"));
	KT_ASSERT(et_dies(slice_after_reuse, "DEVICE MEMORY USE-AFTER-FREE"));
}

#ifdef KMGR_ASAN
static void raw_va_after_free(void)
{
	nrt_tensor_t *t;
	volatile uint8_t *va;

	et_open(1);
	kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 64, "t", &t);
	va = kbl_tensor_get_va(t);
	kbl_tensor_free(&t);
	va[3] = 1;
}

/* arena-6: under ASan a raw access through a stale device pointer is an
 * ASan report (manual poisoning). */
static void arena_uaf_asan(void)
{
	KT_ASSERT(et_dies(raw_va_after_free, "use-after-poison"));
}
#endif

/* arena-7: tensors held across emu_close stay valid; the last free
 * releases the arena and the accounting reaches zero. */
static void arena_outlives_close(void)
{
	nrt_tensor_t *t;
	uint8_t in[4] = {1, 2, 3, 4}, out[4];

	et_open(1);
	KT_EQ(kbl_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 4, "t", &t), NRT_SUCCESS);
	KT_EQ(kbl_tensor_write(t, in, 0, 4), NRT_SUCCESS);
	emu_close();
	KT_EQ(kbl_tensor_read(t, out, 0, 4), NRT_SUCCESS);
	KT_MEMEQ(out, in, 4);
	kbl_tensor_free(&t);
	kt_assert_accounting_zero();
}

/* config-1: KMGR_EMU_NC_COUNT takes 1..64 and nothing else; emu_open
 * refuses a bad configuration and a second open. */
static void config_env(void)
{
	static const char *bad[] = {"0", "65", "abc", "", "4x", "-1"};
	emu_config_t c;

	setenv("KMGR_EMU_NC_COUNT", "8", 1);
	KT_EQ(emu_config_default(&c), NRT_SUCCESS);
	KT_EQ(c.nc_count, 8);
	KT_EQ(c.arena_bytes, EMU_DEFAULT_ARENA_BYTES);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("KMGR_EMU_NC_COUNT", bad[i], 1);
		KT_EQ(emu_config_default(&c), NRT_INVALID);
	}
	unsetenv("KMGR_EMU_NC_COUNT");
	KT_EQ(emu_config_default(&c), NRT_SUCCESS);
	KT_EQ(c.nc_count, EMU_DEFAULT_NC);
	c.nc_count = 65;
	KT_EQ(emu_open(&c), NRT_INVALID);
	c.nc_count = 4;
	c.first_visible_nc = 3;
	c.visible_nc_count = 2;
	KT_EQ(emu_open(&c), NRT_INVALID);
	c.first_visible_nc = 1;
	KT_EQ(emu_open(&c), NRT_SUCCESS);
	KT_EQ(emu_nc_count(), 2);
	KT_EQ(emu_open(&c), NRT_INVALID);
	emu_close();
	KT_ASSERT(!emu_is_open());
	KT_EQ(emu_nc_count(), 0);
	kt_assert_accounting_zero();
}

int main(void)
{
	KT_CASE("arena-1 accounting", arena_accounting);
	KT_CASE("arena-2 first fit, zeroed", arena_first_fit_zeroed);
	KT_CASE("arena-3 exhaustion", arena_exhaustion);
	KT_CASE("arena-4 poisoned after free", arena_poisoned_after_free);
	KT_CASE("arena-5 use-after-free generation check", arena_uaf_generation);
#ifdef KMGR_ASAN
	KT_CASE("arena-6 use-after-free ASan report", arena_uaf_asan);
#endif
	KT_CASE("arena-7 tensors outlive emu_close", arena_outlives_close);
	KT_CASE("config-1 environment and open", config_env);
	KT_DONE();
}
