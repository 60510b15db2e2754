/*
 * status.c - nrt_get_status_as_str: the enumerator's name for every
 * NRT_STATUS of nrt_status.h, "NRT_UNKNOWN_STATUS" for any other value.
 */
#include <stddef.h>

#include <nrt/nrt_status.h>

#include "nrt_status_list.h"

const char *nrt_get_status_as_str(NRT_STATUS status)
{
	/* A switch, not a table: the values are sparse (0..15, 101, 1002...). */
	switch (status) {
#define NRT_STATUS_CASE(name)                                                                      \
	case name:                                                                                 \
		return #name;
		NRT_STATUS_NAMES(NRT_STATUS_CASE)
#undef NRT_STATUS_CASE
	}
	return "NRT_UNKNOWN_STATUS";
}
