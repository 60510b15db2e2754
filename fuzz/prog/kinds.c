/*
 * kinds.c - the operation table: names and argument fields of every
 * operation kind, the one place decode, encode, print and parse agree on.
 */
#include <stdlib.h>
#include <string.h>

#include "prog.h"

#define SLOT                                                                                       \
	{                                                                                          \
		"slot", 0, KPROG_SLOTS - 1, false                                                  \
	}
#define TSLOT                                                                                      \
	{                                                                                          \
		"ts", 0, KPROG_TSLOTS - 1, false                                                   \
	}
#define PLACE(n)                                                                                   \
	{                                                                                          \
		n, 0, KPROG_PLACE__N - 1, false                                                    \
	}
/* an execution's side: the four placements and the mixes */
#define SIDE(n)                                                                                    \
	{                                                                                          \
		n, 0, KPROG_PLACE_MIX + KPROG_PLACE_MIXES - 1, true                                \
	}
#define NONE                                                                                       \
	{                                                                                          \
		NULL, 0, 0, false                                                                  \
	}

#define KPROG_NAME(id, name)  name,
#define KPROG_IDENT(id, name) #id,
static const char *const stale_names[] = {KPROG_STALE_WHATS(KPROG_NAME)};
static const char *const stale_idents[] = {KPROG_STALE_WHATS(KPROG_IDENT)};
static const char *const bad_names[] = {KPROG_BAD_WHATS(KPROG_NAME)};
static const char *const bad_idents[] = {KPROG_BAD_WHATS(KPROG_IDENT)};
static const char *const meta_names[] = {KPROG_NRT_META_WHATS(KPROG_NAME)};
static const char *const meta_idents[] = {KPROG_NRT_META_WHATS(KPROG_IDENT)};
static const char *const cb_names[] = {KPROG_NRT_CALLBACK_WHATS(KPROG_NAME)};
static const char *const cb_idents[] = {KPROG_NRT_CALLBACK_WHATS(KPROG_IDENT)};
static const kprog_kind_info_t kinds[KOP__COUNT] = {
    [KOP_LOAD] = {"load",
                  true,
                  {SLOT,
                   {"tmpl", 0, KPROG_TMPL_INLINE, false},
                   {"start", -1, 7, false},
                   {"count", -1, 8, false}}},
    [KOP_UNLOAD] = {"unload", true, {SLOT, NONE, NONE, NONE}},
    [KOP_UNLOAD_ALL] = {"unload_all", false, {NONE, NONE, NONE, NONE}},
    [KOP_EXEC] = {"exec", true, {SLOT, SIDE("in"), SIDE("out"), {"repeat", 1, 4, false}}},
    [KOP_SCHEDULE] = {"schedule", true, {SLOT, SIDE("in"), SIDE("out"), {"queue", 0, 1, false}}},
    [KOP_IS_COMPLETED] = {"is_completed",
                          false,
                          {{"which", 0, 7, false}, {"bogus", 0, 1, false}, NONE, NONE}},
    [KOP_GET_SEQUENCE] =
        {"get_sequence",
         false,
         {{"lnc", 0, 8, false}, {"xu", 0, 5, false}, {"queue", 0, 1, false}, NONE}},
    [KOP_TENSOR_INFO] = {"tensor_info", true, {SLOT, {"index", 0, 7, false}, NONE, NONE}},
    [KOP_IS_VALID_IFMAP] = {"is_valid_ifmap", true, {SLOT, {"name", 0, 7, false}, NONE, NONE}},
    [KOP_IFMAP_COUNT] = {"ifmap_count", true, {SLOT, {"io", 0, 1, false}, NONE, NONE}},
    [KOP_SET_PROFILING] = {"set_profiling",
                           true,
                           {SLOT, {"on", 0, 1, false}, {"mac", 0, 1, false}, NONE}},
    [KOP_STALE] = {"stale", true, {SLOT, {"what", 0, 8, false}, NONE, NONE}},
    [KOP_FAULT] = {"fault", false, {{"site", 0, 255, false}, {"nth", 1, 16, false}, NONE, NONE}},
    [KOP_TALLOC] = {"talloc", false, {TSLOT, PLACE("place"), {"size", 0, 3, false}, NONE}},
    [KOP_TFREE] = {"tfree", false, {TSLOT, NONE, NONE, NONE}},
    [KOP_TWRITE] = {"twrite", false, {TSLOT, {"off", 0, 7, false}, {"len", 0, 3, false}, NONE}},
    [KOP_TREAD] = {"tread", false, {TSLOT, {"off", 0, 7, false}, {"len", 0, 3, false}, NONE}},
    [KOP_BADARGS] = {"badargs", true, {SLOT, {"what", 0, 9, false}, NONE, NONE}},
    [KOP_NC_INFO] = {"nc_info", true, {SLOT, NONE, NONE, NONE}},
    [KOP_NRT_LOAD] = {"nrt_load",
                      true,
                      {SLOT,
                       {"model", 0, KPROG_NTMPL - 1, false},
                       {"start", -1, 7, false},
                       {"count", -1, 8, false}}},
    [KOP_NRT_UNLOAD] = {"nrt_unload", true, {SLOT, {"old", 0, 1, false}, NONE, NONE}},
    [KOP_NRT_EXEC] = {"nrt_exec", true, {SLOT, SIDE("in"), SIDE("out"), {"repeat", 1, 4, false}}},
    [KOP_NRT_META] = {"nrt_meta", true, {SLOT, {"what", 0, 5, false}, {"old", 0, 1, false}, NONE}},
    [KOP_NRT_SCHEDULE] = {"nrt_schedule", true, {SLOT, SIDE("in"), SIDE("out"), NONE}},
    [KOP_NRT_CLOSE] = {"nrt_close", false, {NONE, NONE, NONE, NONE}},
    [KOP_NRT_INIT] = {"nrt_init",
                      false,
                      {{"fw", 0, 5, false},
                       {"visible", 0, 12, false},
                       {"core", 0, 15, false},
                       {"inflight", 0, 4, false}}},
    [KOP_NRT_TRACKER] = {"nrt_tracker",
                         true,
                         {SLOT, SIDE("in"), SIDE("out"), {"bogus", 0, 1, false}}},
    /* field 1, as every selector (a0 unused): the callback, by name */
    [KOP_NRT_CALLBACK] = {"nrt_callback", false, {NONE, {"cb", 0, 2, false}, NONE, NONE}},
};

/* A new kind cannot take b % KOP__COUNT: every byte value already names a
 * kind, and a larger modulus would move most of them (every input in every
 * corpus would change meaning).  So kind KPROG_KINDS_V1 + k takes the one
 * byte value KPROG_KIND_BYTE_TOP - k, which named (KPROG_KIND_BYTE_TOP -
 * k) % KPROG_KINDS_V1 before: only inputs with that exact kind byte change
 * meaning (docs/harness.md, "Adding an operation"). */
#define KPROG_KINDS_LATER (KOP__COUNT - KPROG_KINDS_V1)

_Static_assert(KPROG_KINDS_LATER >= 0 && KPROG_KINDS_LATER <= 10,
               "later kinds take the byte values 0xfd down to 0xf4");

unsigned kprog_kind_of_byte(uint8_t b)
{
	if (b <= KPROG_KIND_BYTE_TOP && b > KPROG_KIND_BYTE_TOP - KPROG_KINDS_LATER)
		return KPROG_KINDS_V1 + (unsigned)(KPROG_KIND_BYTE_TOP - b);
	return b % KPROG_KINDS_V1;
}

uint8_t kprog_kind_byte(unsigned kind)
{
	if (kind < KPROG_KINDS_V1)
		return (uint8_t)kind;
	return (uint8_t)(KPROG_KIND_BYTE_TOP - (kind - KPROG_KINDS_V1));
}

const kprog_kind_info_t *kprog_kind(unsigned kind)
{
	return kind < KOP__COUNT ? &kinds[kind] : NULL;
}

int kprog_kind_lookup(const char *name)
{
	for (unsigned i = 0; i < KOP__COUNT; i++)
		if (strcmp(kinds[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* The selector fields: field 1 (what) of each, named by a list of
 * prog.h; a list covers its field's whole range (checked below). */
static const struct {
	unsigned kind;
	const char *const *names, *const *idents;
	int n;
} selectors[] = {
    {KOP_STALE, stale_names, stale_idents, (int)(sizeof(stale_names) / sizeof(stale_names[0]))},
    {KOP_BADARGS, bad_names, bad_idents, (int)(sizeof(bad_names) / sizeof(bad_names[0]))},
    {KOP_NRT_META, meta_names, meta_idents, (int)(sizeof(meta_names) / sizeof(meta_names[0]))},
    {KOP_NRT_CALLBACK, cb_names, cb_idents, (int)(sizeof(cb_names) / sizeof(cb_names[0]))},
};

/* The list naming field f of kind, NULL when it is a number. */
static const char *const *selector(unsigned kind, int f, bool idents, int *n)
{
	for (size_t i = 0; f == 1 && i < sizeof(selectors) / sizeof(selectors[0]); i++) {
		if (selectors[i].kind != kind)
			continue;
		/* a list shorter or longer than the field's range is a bug here */
		if (selectors[i].n != kinds[kind].f[f].max + 1)
			abort();
		*n = selectors[i].n;
		return idents ? selectors[i].idents : selectors[i].names;
	}
	return NULL;
}

const char *kprog_field_name(unsigned kind, int f, int value)
{
	int n;
	const char *const *l = selector(kind, f, false, &n);

	return l && value >= 0 && value < n ? l[value] : NULL;
}

const char *kprog_field_ident(unsigned kind, int f, int value)
{
	int n;
	const char *const *l = selector(kind, f, true, &n);

	return l && value >= 0 && value < n ? l[value] : NULL;
}

int kprog_field_value(unsigned kind, int f, const char *name)
{
	int n;
	const char *const *l = selector(kind, f, false, &n);

	for (int v = 0; l && v < n; v++)
		if (!strcmp(l[v], name))
			return v;
	return -1;
}
