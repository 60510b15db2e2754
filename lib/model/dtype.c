/*
 * dtype.c - the dtype table: element size and the short names the CLI and
 * the docs use (f32 f16 bf16 i8 u8 i16 u16 i32 u32 i64 u64).
 */
#include <string.h>

#include "kmodel.h"

static const struct {
	const char *name;
	uint32_t size;
} kmodel_dtypes[] = {
    [NRT_DTYPE_FLOAT32] = {"f32", 4},   [NRT_DTYPE_FLOAT16] = {"f16", 2},
    [NRT_DTYPE_BFLOAT16] = {"bf16", 2}, [NRT_DTYPE_INT8] = {"i8", 1},
    [NRT_DTYPE_UINT8] = {"u8", 1},      [NRT_DTYPE_INT16] = {"i16", 2},
    [NRT_DTYPE_UINT16] = {"u16", 2},    [NRT_DTYPE_INT32] = {"i32", 4},
    [NRT_DTYPE_UINT32] = {"u32", 4},    [NRT_DTYPE_INT64] = {"i64", 8},
    [NRT_DTYPE_UINT64] = {"u64", 8},
};

#define KMODEL_NDTYPES (sizeof(kmodel_dtypes) / sizeof(kmodel_dtypes[0]))

uint32_t kmodel_dtype_size(nrt_dtype_t dtype)
{
	/* An enum may hold any int: compare unsigned so negatives are out of range too. */
	if ((unsigned)dtype >= KMODEL_NDTYPES)
		return 0;
	return kmodel_dtypes[dtype].size;
}

const char *kmodel_dtype_name(nrt_dtype_t dtype)
{
	if ((unsigned)dtype >= KMODEL_NDTYPES)
		return NULL;
	return kmodel_dtypes[dtype].name;
}

int kmodel_dtype_from_name(const char *name)
{
	if (!name)
		return -1;
	for (unsigned i = 1; i < KMODEL_NDTYPES; i++)
		if (strcmp(kmodel_dtypes[i].name, name) == 0)
			return (int)i;
	return -1;
}
