/*
 * knum.h - the one number rule of every environment variable and every
 * command-line flag: decimal digits and nothing else.  No sign, no space
 * before or after, no base prefix ("010" is ten, "0x10" is refused), not
 * empty, at most max.  strtoul would take " 4", "+4" and "-1" (a huge
 * number), each a different value than the one written, and one variable
 * took them while the next refused them.
 *
 * By hand, not strtoul: errno belongs to the real thread, which every
 * logical thread of a controlled run shares on the fiber engine (TSan saw
 * two api_nrt threads write it at once, corpus/regressions/api_nrt/).
 */
#ifndef KNUM_H
#define KNUM_H

#include <stdint.h>

/* The digits of s up to end (exclusive; NULL: up to the NUL).  0 with *out
 * set, or -1 with *out untouched. */
int knum_parse_range(const char *s, const char *end, uint64_t max, uint64_t *out);
/* The whole string s (NULL is refused). */
int knum_parse(const char *s, uint64_t max, uint64_t *out);
/* The same for a uint32_t in min..max. */
int knum_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out);

#endif /* KNUM_H */
