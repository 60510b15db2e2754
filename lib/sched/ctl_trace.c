/*
 * ctl_trace.c - a recorded schedule as text and back: the decimal ids of
 * the chosen threads separated by single spaces ("0 1 1 0 2"), the form a
 * crash report prints and the reproducer reads.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl_int.h"

int ks_ctl_trace_format(const uint8_t *trace, size_t n, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		int w = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, "%s%u",
		                 i ? " " : "", trace[i]);

		if (w < 0)
			return -1;
		off += (size_t)w;
	}
	return (int)off;
}

/* Ids are separated by spaces, tabs, newlines or commas; anything else, or
 * an id outside 0..KS_CTL_MAX_THREADS-1, is an error (-1, nothing
 * allocated).  The result is malloc'd for the caller to free(): it is the
 * caller's, not library state, so it is not accounted by kalloc. */
int ks_ctl_trace_parse(const char *text, uint8_t **trace, size_t *n)
{
	size_t cap = strlen(text) + 1, cnt = 0;
	uint8_t *out;

	*trace = NULL;
	*n = 0;
	out = malloc(cap);
	if (!out)
		return -1;
	for (const char *p = text; *p;) {
		unsigned v = 0;
		int digits = 0;

		if (isspace((unsigned char)*p) || *p == ',') {
			p++;
			continue;
		}
		while (isdigit((unsigned char)*p) && digits < 4) {
			v = v * 10 + (unsigned)(*p++ - '0');
			digits++;
		}
		if (!digits || v >= KS_CTL_MAX_THREADS ||
		    (*p && !isspace((unsigned char)*p) && *p != ',') || cnt >= cap) {
			free(out);
			return -1;
		}
		out[cnt++] = (uint8_t)v;
	}
	*trace = out;
	*n = cnt;
	return 0;
}
