/*
 * version.c - nrt_get_version: the project's one version (project(VERSION)
 * in CMakeLists.txt, whose MAJOR.MINOR is nrt.h's API version) as rt_major,
 * rt_minor and rt_patch, rt_maintenance 0, the same in words in rt_detail,
 * and the commit the build was configured from in git_hash.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <nrt/nrt.h>
#include <nrt/nrt_version.h>

#ifndef KMGR_PROJECT_VERSION
#define KMGR_PROJECT_VERSION "unknown"
#endif
#ifndef KMGR_VERSION_PATCH
#define KMGR_VERSION_PATCH 0
#endif
#ifndef KMGR_GIT_HASH
#define KMGR_GIT_HASH "unknown"
#endif

NRT_STATUS nrt_get_version(nrt_version_t *ver, size_t size)
{
	nrt_version_t v;

	/* A record too small for the numbers is a caller's bug, not an old
	 * client: every published layout starts with the four of them. */
	if (!ver || size < offsetof(nrt_version_t, rt_detail))
		return NRT_INVALID;
	memset(&v, 0, sizeof(v));
	v.rt_major = NRT_MAJOR_VERSION;
	v.rt_minor = NRT_MINOR_VERSION;
	v.rt_patch = KMGR_VERSION_PATCH;
	snprintf(v.rt_detail, sizeof(v.rt_detail), "kmgr-fuzz %s (emulated device)",
	         KMGR_PROJECT_VERSION);
	snprintf(v.git_hash, sizeof(v.git_hash), "%s", KMGR_GIT_HASH);
	memcpy(ver, &v, size < sizeof(v) ? size : sizeof(v));
	return NRT_SUCCESS;
}
