/*
 * ksplitmix.h - splitmix64 (Steele, Lea, Flood 2014; Vigna's reference
 * constants), the one PRNG of kmgr-fuzz: the controlled scheduler's PCT
 * strategy and the stress workers both draw from it.  It is pure
 * arithmetic on a caller-owned state: no shared state, no threads, so
 * any layer may include it.  A given seed gives the same sequence on every
 * build, which is what makes a recorded seed replay.
 */
#ifndef KSPLITMIX_H
#define KSPLITMIX_H

#include <stdint.h>

/* Advance *state and return the next 64 random bits. */
static inline uint64_t ks_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
