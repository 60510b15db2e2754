/*
 * nrt_version.h - the runtime's version, as the vendor header declares it:
 * a fixed-size record that a client passes with its own sizeof, so a newer
 * library can fill an older client's smaller record.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <nrt/nrt_status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RT_VERSION_DETAIL_LEN 128
#define GIT_HASH_LEN          64

typedef struct nrt_version {
	uint64_t rt_major;
	uint64_t rt_minor;
	uint64_t rt_patch;
	uint64_t rt_maintenance;
	char rt_detail[RT_VERSION_DETAIL_LEN];
	char git_hash[GIT_HASH_LEN];
} nrt_version_t;

/* Fills the first `size` bytes of *ver (size is the caller's
 * sizeof(nrt_version_t)).  NRT_INVALID if ver is NULL or size cannot hold
 * the four numbers.  Needs no nrt_init. */
NRT_STATUS nrt_get_version(nrt_version_t *ver, size_t size);

#ifdef __cplusplus
}
#endif
