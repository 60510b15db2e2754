/*
 * codec.h - private helpers shared by decode.c and encode.c: the maps
 * between a fault entry's bytes and its kfault_entry_t.
 */
#ifndef KPROG_CODEC_H
#define KPROG_CODEC_H

#include "prog.h"

/* Fault kinds a program may carry: EXEC_HANG is left out on purpose, a
 * never-completing sync execution is a hang by design, not a finding. */
#define KPROG_FAULT_KINDS 4
extern const kfault_kind_t kprog_fault_kinds[KPROG_FAULT_KINDS];
#define KPROG_FAULT_STATUSES 5
extern const uint32_t kprog_fault_statuses[KPROG_FAULT_STATUSES];

/* Number of fault sites plus one (index 0 is "any"). */
unsigned kprog_site_slots(void);
uint32_t kprog_site_from_index(unsigned idx);
unsigned kprog_site_to_index(uint32_t site);

/* Placement names (dev, host, virt) of the in/out/place fields. */
const char *kprog_place_name(int v);
bool kprog_is_place_field(const char *field);
/* An execution's side (in, out of exec-like kinds): its range has the
 * mixes, whose bytes are their own (prog.h, KPROG_PLACE_MIX_BYTE). */
bool kprog_is_side_field(const kprog_field_t *f);

#endif
