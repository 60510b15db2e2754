/*
 * knum.c - decimal digits and nothing else (knum.h).
 */
#include "knum.h"

#include <stddef.h>

int knum_parse_range(const char *s, const char *end, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || s == end || !*s)
		return -1;
	for (; end ? s < end : *s != 0; s++) {
		uint64_t d = (uint64_t)(*s - '0');

		if (*s < '0' || *s > '9' || d > max || v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int knum_parse(const char *s, uint64_t max, uint64_t *out)
{
	return knum_parse_range(s, NULL, max, out);
}

int knum_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (knum_parse(s, max, &v) || v < min)
		return -1;
	*out = (uint32_t)v;
	return 0;
}
