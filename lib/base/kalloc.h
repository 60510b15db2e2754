/*
 * kalloc.h - the library's accounted host allocations.
 *
 * Every host allocation of lib/ goes through here with its fault site, so
 * that (1) a fault plan can fail it and (2) live host bytes and allocations
 * are counted: after nrt_close both are zero, which the oracle and the leak
 * tests check independently of LeakSanitizer.
 */
#ifndef KALLOC_H
#define KALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "kfault.h"

/* Zeroed memory, or NULL when out of memory, on overflow, or when the
 * fault plan fails this site. */
void *kalloc(kfault_site_t site, size_t size);
void *kalloc_array(kfault_site_t site, size_t n, size_t size);
/* Grow or shrink; on failure the old block is untouched and NULL returned.
 * New bytes are zeroed. */
void *krealloc(kfault_site_t site, void *p, size_t size);
void kfree(void *p);
char *kstrdup(kfault_site_t site, const char *s);

int64_t kalloc_live_bytes(void);
int64_t kalloc_live_count(void);

#endif /* KALLOC_H */
