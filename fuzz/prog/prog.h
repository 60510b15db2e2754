/*
 * prog.h - the program model shared by the fuzz targets, the reproducer
 * and kprog: a program is data (syzkaller's prog/).
 *
 * A program is a config header (sync or implicit-async mode, emulated
 * cores, queue depth, fault plan, logical threads), a list of operations
 * each tagged with the logical thread that runs it, and a tail of
 * scheduling decisions for the controlled scheduler (KS_STRAT_BYTES).
 * Operations name models by small slot numbers so that sequences stay
 * meaningful under mutation; tensors live in per-thread tensor slots.
 *
 * Binary form (what a fuzz input and a program file on disk are), every
 * byte string decodes (missing bytes read as zero, every field is reduced
 * into its range), so a small byte change is a small program change:
 *
 *   byte 0   flags: bit0 implicit-async, bits1-2 cores {1,2,4,8},
 *            bits3-4 threads-1, bits5-7 memory access points (0..7)
 *   byte 1   queue depth - 1 (mod 8)
 *   byte 2   fault entries (mod KPROG_MAX_FAULTS+1), each 4 bytes:
 *            kind, site index, nth-1, arg   (see decode.c)
 *   byte 3   operations (mod KPROG_MAX_OPS+1), each 6 bytes:
 *            kind, thread, a0, a1, a2, a3; a LOAD of the inline template
 *            is followed by a 2-byte little-endian length and that many
 *            container bytes.  The kind byte: kind b % KPROG_KINDS_V1 for
 *            the first kinds; a kind added later has a byte value of its
 *            own, counting down from KPROG_KIND_BYTE_TOP (kinds.c), so
 *            that every other input keeps its meaning
 *   rest     scheduling decisions (at most KPROG_MAX_SCHED bytes used),
 *            less the last 2 bytes per access point: logical thread
 *            (bits 0-2), k-1 (bits 3-5) and r's bits 8-9 (bits 6-7), then
 *            r's bits 0-7 (r: 0..1023; before issue 36 r was the second
 *            byte mod 32, bits 6-7 unused: corpus inputs were re-derived so
 *            that they name the same points): the k-th heap
 *            or global access of that thread after its r-th release is a
 *            scheduling point (lib/sched/ctl_access.c; none, bits 5-7
 *            of byte 0 all zero, changes nothing); r >= 512: after each
 *            of its releases from r-512 on ("every", text "R.."), so that
 *            any r before a window late in a long-lived thread reaches it
 *
 * Text form (print.c / parse.c): one line per item, '#' comments:
 *   config mode=sync nc=4 qdepth=4 threads=2
 *   fault alloc:kmgr.exec_resources:1
 *   access t1:3+1
 *   access t0:40..+1
 *   t0 load slot=0 tmpl=0 start=-1 count=-1
 *   t0 load slot=1 inline=4b4d4f44... start=0 count=1
 *   t1 exec slot=0 in=dev out=host repeat=1
 *   sched 00 01 01 00
 */
#ifndef KPROG_H
#define KPROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/kfault.h"

#define KPROG_MAX_THREADS    4
#define KPROG_MAX_OPS        48
#define KPROG_MAX_FAULTS     3
#define KPROG_MAX_AP         7    /* memory access points (byte 0, bits 5-7) */
#define KPROG_AP_THREADS     8    /* logical thread ids an access point names */
#define KPROG_AP_MAX_RELEASE 511  /* the release index an access point names */
#define KPROG_SLOTS          4    /* model slots, shared by all threads */
#define KPROG_TSLOTS         4    /* tensor slots, per thread */
#define KPROG_MAX_BLOB       4096 /* inline container bytes, whole program */
#define KPROG_MAX_INLINE     1024 /* one inline container */
#define KPROG_MAX_SCHED      4096 /* scheduling decisions kept */
#define KPROG_HEADER_BYTES   4
#define KPROG_OP_BYTES       6
#define KPROG_FAULT_BYTES    4

typedef enum kprog_kind {
	KOP_LOAD = 0,       /* slot, tmpl, start, count */
	KOP_UNLOAD,         /* slot */
	KOP_UNLOAD_ALL,     /* - */
	KOP_EXEC,           /* slot, in, out, repeat */
	KOP_SCHEDULE,       /* slot, in, out, queue (explicit async: nrta_execute_schedule) */
	KOP_IS_COMPLETED,   /* which (a previous SCHEDULE of this thread), bogus */
	KOP_GET_SEQUENCE,   /* lnc, xu, queue */
	KOP_TENSOR_INFO,    /* slot, index */
	KOP_IS_VALID_IFMAP, /* slot, name (model tensor index; 6 bogus; 7 NULL) */
	KOP_IFMAP_COUNT,    /* slot, io (0 ifmap count, 1 io tensor count) */
	KOP_SET_PROFILING,  /* slot, on, mac (1: kmgr_set_mac_count instead) */
	KOP_STALE,          /* slot, what: an unloaded id through 9 entry points */
	KOP_FAULT,          /* site (index in the site table, 0 = any), nth */
	KOP_TALLOC,         /* tslot, place, size */
	KOP_TFREE,          /* tslot */
	KOP_TWRITE,         /* tslot, off, len */
	KOP_TREAD,          /* tslot, off, len */
	KOP_BADARGS,        /* slot, what: a NULL or mismatched argument on a loaded model */
	/* later kinds: each has one kind byte of its own (KPROG_KIND_BYTE_TOP
	 * down), which named kind b % KPROG_KINDS_V1 before */
	KOP_NC_INFO, /* slot: kmgr_get_nc_info, the cores the model runs on; byte 0xfd */
	/* the public API on a model (the api_nrt target, docs/harness.md): the
	 * slot's nrt_model_t handle, or with old the one its last nrt_unload
	 * retired */
	KOP_NRT_LOAD,     /* slot, model (a template), start, count: nrt_load; 0xfc */
	KOP_NRT_UNLOAD,   /* slot, old: nrt_unload; 0xfb */
	KOP_NRT_EXEC,     /* slot, in, out, repeat: nrt_execute(_repeat); 0xfa */
	KOP_NRT_META,     /* slot, what, old: nc_count, tensor_info, misuse (2-5); 0xf9 */
	KOP_NRT_SCHEDULE, /* slot, in, out: nrta_execute_schedule; 0xf8 */
	KOP_NRT_CLOSE,    /* nrt_close while the other threads go on calling; 0xf7 */
	KOP_NRT_INIT,     /* fw, visible, core, inflight: nrt_init and the visible
	                   * count with the environment the fields spell; 0xf6 */
	KOP_NRT_TRACKER,  /* slot, in, out, bogus: nrta_error_tracker_create (bogus: a core
	                   * no device has), a schedule with it, get_list; 0xf5 */
	KOP_NRT_CALLBACK, /* cb: nrt_register_async_exec_callback with the harness's
	                   * callback a, b or NULL, in any state; 0xf4 */
	KOP__COUNT
} kprog_kind_t;

/* The kinds every byte value names by b % KPROG_KINDS_V1 (LOAD..BADARGS). */
#define KPROG_KINDS_V1      18
#define KPROG_KIND_BYTE_TOP 0xfd

/* Tensor placement of an EXEC/SCHEDULE operand or a TALLOC. */
enum {
	KPROG_PLACE_DEV = 0,
	KPROG_PLACE_HOST = 1,
	KPROG_PLACE_VIRT = 2,    /* VIRTUAL with a host buffer attached */
	KPROG_PLACE_MISSING = 3, /* exec: leave the first tensor out; talloc: no buffer */
	KPROG_PLACE__N = 4,
	/* an execution's side only (in, out; not talloc): each tensor its own
	 * placement, dev, host or virt, by cycling pattern v (kprog_mix_place;
	 * text mix:dh .. mix:vhd).  Value KPROG_PLACE_MIX + v, byte
	 * KPROG_PLACE_MIX_BYTE + v: the other bytes keep b % KPROG_PLACE__N, so
	 * only inputs with one of those exact bytes changed meaning; 0xe0..0xe7,
	 * not 0xf8..0xff, which 6 of the 81 programs of corpus/ used (issue 36) */
	KPROG_PLACE_MIX = 4
};
#define KPROG_PLACE_MIXES    8
#define KPROG_PLACE_MIX_BYTE 0xe0
/* The mixes' patterns, in value order: tensor j of a side takes letter j
 * (cyclically), d dev, h host, v virt; the text form is mix:PATTERN. */
#define KPROG_MIX_PATTERNS                                                                         \
	{                                                                                          \
		"dh", "hd", "dv", "vd", "hv", "vh", "dhv", "vhd"                                   \
	}

/* Tensor j's placement (DEV, HOST or VIRT) in a side of placement place;
 * place itself when it is not a mix.  Inline: the emitted tests' harness
 * has no program library to link. */
static inline int kprog_mix_place(int place, unsigned j)
{
	static const char *const pat[KPROG_PLACE_MIXES] = KPROG_MIX_PATTERNS;
	const char *p;
	unsigned n = 0;

	if (place < KPROG_PLACE_MIX || place >= KPROG_PLACE_MIX + KPROG_PLACE_MIXES)
		return place;
	p = pat[place - KPROG_PLACE_MIX];
	while (p[n])
		n++;
	return p[j % n] == 'd'   ? KPROG_PLACE_DEV
	       : p[j % n] == 'h' ? KPROG_PLACE_HOST
	                         : KPROG_PLACE_VIRT;
}

/* Built-in model templates (templates.c); tmpl == KPROG_TMPL_INLINE means
 * the op carries container bytes. */
#define KPROG_NTMPL       6
#define KPROG_TMPL_INLINE KPROG_NTMPL

typedef struct kprog_op {
	uint8_t kind;
	uint8_t thread;
	int16_t a[4];      /* semantic values, each within its field's range */
	uint16_t blob_off; /* LOAD inline: offset in kprog_t.blob */
	uint16_t blob_len;
} kprog_op_t;

typedef struct kprog {
	bool async;         /* implicit-async mode */
	uint8_t nc;         /* emulated cores: 1, 2, 4, 8 */
	uint8_t qdepth;     /* 1..8 */
	uint8_t nthreads;   /* 1..4 */
	kfault_plan_t plan; /* installed before nrt_init */
	uint8_t nap;        /* memory access points, 0..KPROG_MAX_AP */
	struct {
		uint8_t thread; /* the run's logical thread id (0: main) */
		uint16_t point; /* after its point-th release (0..KPROG_AP_MAX_RELEASE) */
		uint8_t k;      /* its k-th heap or global access, 1..8 */
		bool every;     /* after each release from point on */
	} ap[KPROG_MAX_AP];
	uint32_t nops;
	kprog_op_t ops[KPROG_MAX_OPS];
	uint32_t blob_used;
	uint8_t blob[KPROG_MAX_BLOB];
	uint32_t nsched;
	uint8_t sched[KPROG_MAX_SCHED];
} kprog_t;

/* ---- the `what` selectors, named once ---------------------------------
 * X(IDENT, "name"), in value order from 0: the harness's enums (harness.h)
 * are the IDENTs, the text form prints and parses the names, and emit-c
 * writes the IDENTs.  The last of each list also stands for every larger
 * value. */
#define KPROG_STALE_WHATS(X)                                                                       \
	X(KH_STALE_EXEC, "exec")                                                                   \
	X(KH_STALE_IFMAP_COUNT, "ifmap_count")                                                     \
	X(KH_STALE_UNLOAD, "unload")                                                               \
	X(KH_STALE_PROFILING, "profiling")                                                         \
	X(KH_STALE_TENSOR_INFO, "tensor_info")                                                     \
	X(KH_STALE_VALID_IFMAP, "valid_ifmap")                                                     \
	X(KH_STALE_IO_COUNT, "io_count")                                                           \
	X(KH_STALE_SCHEDULE, "schedule")                                                           \
	X(KH_STALE_MAC_COUNT, "mac_count")
#define KPROG_BAD_WHATS(X)                                                                         \
	X(KH_BAD_EXEC_NO_INPUT, "exec_no_input")                                                   \
	X(KH_BAD_EXEC_NO_OUTPUT, "exec_no_output")                                                 \
	X(KH_BAD_TENSOR_INFO_NO_NAME, "tensor_info_no_name")                                       \
	X(KH_BAD_VALID_IFMAP_NO_RESULT, "valid_ifmap_no_result")                                   \
	X(KH_BAD_IFMAP_COUNT_NO_RESULT, "ifmap_count_no_result")                                   \
	X(KH_BAD_IO_COUNT_NO_RESULT, "io_count_no_result")                                         \
	X(KH_BAD_LOAD_NO_BYTES, "load_no_bytes")                                                   \
	X(KH_BAD_SCHEDULE_OTHER_CORE, "schedule_other_core")                                       \
	X(KH_BAD_SCHEDULE_NO_SEQ, "schedule_no_seq")                                               \
	X(KH_BAD_NC_INFO_NO_RESULT, "nc_info_no_result")
#define KPROG_NRT_META_WHATS(X)                                                                    \
	X(KH_NRT_NC_COUNT, "nc_count")                                                             \
	X(KH_NRT_TENSOR_INFO, "tensor_info")                                                       \
	X(KH_NRT_NULL_ARGS, "null_args")                                                           \
	X(KH_NRT_BAD_EXEC, "bad_exec")                                                             \
	X(KH_NRT_INFO_TWICE, "info_twice")                                                         \
	X(KH_NRT_COUNTS, "counts")
#define KPROG_NRT_CALLBACK_WHATS(X)                                                                \
	X(KH_CB_A, "a")                                                                            \
	X(KH_CB_B, "b")                                                                            \
	X(KH_CB_NULL, "null")

/* ---- field table (one row per kind; shared by decode/encode/print/parse) */
typedef struct kprog_field {
	const char *name; /* NULL: unused */
	int16_t min, max; /* semantic range */
	/* an execution's side (in, out): the placements and the mixes, byte
	 * KPROG_PLACE_MIX_BYTE + v.  A flag, not the name: the decoder asks
	 * for every field of every op, and three strcmp calls a field (each
	 * through ASan's and libFuzzer's hooks) were ~2% of a fuzz run. */
	bool side;
} kprog_field_t;

typedef struct kprog_kind_info {
	const char *name;
	bool uses_slot; /* a0 is a model slot */
	kprog_field_t f[4];
} kprog_kind_info_t;

const kprog_kind_info_t *kprog_kind(unsigned kind);
int kprog_kind_lookup(const char *name);
/* A selector field's value (the `what` lists above): its name in the text
 * form, its C identifier for emit-c; NULL when field f of kind is not a
 * selector or the value is out of its range.  kprog_field_value: the
 * value a name gives, -1 for none. */
const char *kprog_field_name(unsigned kind, int f, int value);
const char *kprog_field_ident(unsigned kind, int f, int value);
int kprog_field_value(unsigned kind, int f, const char *name);
/* The binary form's kind byte: the kind a byte names, and the byte that
 * names a kind (the smallest one). */
unsigned kprog_kind_of_byte(uint8_t b);
uint8_t kprog_kind_byte(unsigned kind);

/* ---- decode.c / encode.c ---- */
/* Total: every byte string gives a program.  Never fails. */
void kprog_decode(const uint8_t *data, size_t size, kprog_t *p);
/* Bytes that decode to p (p must be in range, as decode and parse leave
 * it).  Returns the length, or the length needed if it exceeds cap. */
size_t kprog_encode(const kprog_t *p, uint8_t *out, size_t cap);
/* Semantic equality (what decode(encode(p)) must preserve). */
bool kprog_equal(const kprog_t *a, const kprog_t *b);

/* ---- print.c / parse.c ---- */
/* Writes the text form (NUL-terminated); returns the length snprintf
 * would. */
size_t kprog_print(const kprog_t *p, char *buf, size_t cap);
/* Parses the text form; -1 with a message in err (line number included). */
int kprog_parse(const char *text, kprog_t *p, char *err, size_t errlen);

/* ---- templates.c ---- */
/* Container bytes of a built-in template (built once, process lifetime,
 * outside the library's accounting). */
const uint8_t *kprog_template(unsigned tmpl, size_t *len);
const char *kprog_template_name(unsigned tmpl);

/* ---- minimize.c ---- */
/* Greedy delta debugging: drop ops, threads' ops, fault entries and
 * schedule bytes while pred still holds.  Returns the number of
 * successful reductions. */
typedef bool (*kprog_pred_fn)(const kprog_t *p, void *ctx);
unsigned kprog_minimize(kprog_t *p, kprog_pred_fn pred, void *ctx);

/* ---- shape.c ---- */
/* The program targets (model_parse is not one), NULL-terminated. */
extern const char *const kprog_targets[];
/* Shapes a decoded program the way the named fuzz target does before it
 * runs it (threads, mode, fault plan).  Returns 0, or -1 for an unknown
 * target. */
int kprog_shape(const char *target, kprog_t *p);

#endif /* KPROG_H */
