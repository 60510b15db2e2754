/*
 * kfault.h - fault injection, off unless a plan is installed.
 *
 * Every host allocation in the device, the facade, the container parser and
 * the API layer, every device allocation, and the device's tensor set copy
 * (the DMA of host tensors to and from their device clones), is a numbered
 * fault site (SQLite's sqlite3FaultSim style: 100s emu, 200s kmgr, 300s
 * model, 400s nrt; a number is never reused).  A plan can fail the n-th hit
 * of one site or the n-th hit of any site (syzkaller's fail_nth), complete the
 * n-th execution with a given status, delay a completion by k steps, report
 * a queue full, or never complete an execution.
 *
 * Plans come from kfault_set_plan() or, for the command-line tools, from the
 * environment variable KMGR_FAULT (see kfault_plan_parse for the syntax).
 */
#ifndef KFAULT_H
#define KFAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(name, number, "text name", description).  Add a site at the end of its
 * layer's block with the next free number; never renumber. */
#define KFAULT_SITES(X)                                                                            \
	X(EMU_DEV_TENSOR, 100, "emu.dev_tensor", "device memory for a tensor")                     \
	X(EMU_DEV_RING, 101, "emu.dev_ring", "device rings and request buffers at model add")      \
	X(EMU_DEV_CC, 102, "emu.dev_cc", "device collectives resources at first execution")        \
	X(EMU_HOST_TENSOR, 110, "emu.host_tensor", "host record of a tensor")                      \
	X(EMU_HOST_TENSOR_DATA, 111, "emu.host_tensor_data", "host memory of a HOST tensor")       \
	X(EMU_HOST_SET, 112, "emu.host_set", "a tensor set")                                       \
	X(EMU_HOST_SET_ENTRY, 113, "emu.host_set_entry", "growing a tensor set")                   \
	X(EMU_HOST_CLONE, 114, "emu.host_clone", "a shadow clone of a tensor set")                 \
	X(EMU_HOST_MODEL, 115, "emu.host_model", "a per-core model record (kbl_model_add)")        \
	X(EMU_HOST_VCORE, 116, "emu.host_vcore", "a virtual core")                                 \
	X(EMU_HOST_WORK, 117, "emu.host_work", "a work item of an execution unit")                 \
	X(EMU_HOST_BIND, 118, "emu.host_bind", "the IO binding of compute resources")              \
	X(EMU_HOST_ARENA, 119, "emu.host_arena", "the record of a core's device memory arena")     \
	X(EMU_HOST_POOL, 120, "emu.host_pool", "the implicit-async worker pool")                   \
	X(EMU_SET_COPY, 121, "emu.set_copy", "a tensor set copy (fails as a DMA abort)")           \
	X(KMGR_DLR_MODEL, 200, "kmgr.dlr_model", "the 480-byte dlr_model record")                  \
	X(KMGR_EXEC_RESOURCES, 201, "kmgr.exec_resources", "the 56-byte execution tracker")        \
	X(KMGR_TDRV_RESOURCES, 202, "kmgr.tdrv_resources", "tdrv compute resources (0x20)")        \
	X(KMGR_KELF_MODEL, 203, "kmgr.kelf_model", "the 72-byte dlr_kelf_model_t bridge")          \
	X(KMGR_IO_INFO, 204, "kmgr.io_info", "the input/output tensor maps")                       \
	X(KMGR_SHAPE, 205, "kmgr.shape", "the shape array of kmgr_get_io_tensor_info")             \
	X(KMGR_NNS, 206, "kmgr.nns", "the snapshot of kmgr_get_nns")                               \
	X(KMGR_STAGE, 207, "kmgr.stage", "the per-subgraph fan-out of dlr_kelf_stage")             \
	X(KMGR_REGISTRY, 208, "kmgr.registry", "growing the model registry")                       \
	X(KMGR_VTPB_SHARED, 209, "kmgr.vtpb_shared", "vtpb_info_shared_alloc")                     \
	X(MODEL_PARSE, 300, "model.parse", "the parsed model record")                              \
	X(MODEL_TENSORS, 301, "model.tensors", "the parsed tensor records")                        \
	X(MODEL_BUILD, 302, "model.build", "the builder's output buffer")                          \
	X(MODEL_NEW, 303, "model.new", "the builder's model record (kmodel_new)")                  \
	X(MODEL_NEW_TENSORS, 304, "model.new_tensors", "growing the builder's tensor array")       \
	X(NRT_MODEL, 400, "nrt.model", "an nrt_model_t")                                           \
	X(NRT_TENSOR_INFO, 401, "nrt.tensor_info", "the array of nrt_get_model_tensor_info")       \
	X(NRT_ERR_TRACKER, 402, "nrt.err_tracker", "an nrta error tracker")                        \
	X(NRT_EXEC_SLOT, 403, "nrt.exec_slot", "the completion slot of an nrta_execute_schedule")  \
	X(NRT_ERR_LIST, 404, "nrt.err_list", "growing the error list of an nrta error tracker")

typedef enum kfault_site {
	KFAULT_SITE_ANY = 0, /* in a plan: the n-th hit of whatever site */
#define KFAULT_ENUM(name, num, text, desc) KFAULT_##name = num,
	KFAULT_SITES(KFAULT_ENUM)
#undef KFAULT_ENUM
} kfault_site_t;

typedef struct kfault_site_info {
	kfault_site_t site;
	const char *name;
	const char *description;
} kfault_site_info_t;

/* The table of sites, in number order; *n gets its length. */
const kfault_site_info_t *kfault_sites(size_t *n);
/* Site by text name or number; KFAULT_SITE_ANY for "any"; -1 if unknown. */
int kfault_site_lookup(const char *name);
const char *kfault_site_name(kfault_site_t site);

typedef enum kfault_kind {
	KFAULT_FAIL_ALLOC = 1, /* fail the nth allocation at site (or any site) */
	KFAULT_EXEC_STATUS,    /* complete the nth execution with status arg */
	KFAULT_EXEC_DELAY,     /* delay the nth completion by arg scheduler steps */
	KFAULT_QUEUE_FULL,     /* answer the nth queue submission with NRT_QUEUE_FULL */
	KFAULT_EXEC_HANG,      /* the nth execution never completes (for watchdog tests) */
} kfault_kind_t;

typedef struct kfault_entry {
	kfault_kind_t kind;
	uint32_t site; /* KFAULT_FAIL_ALLOC only */
	uint32_t nth;  /* 1-based */
	uint32_t arg;  /* status for EXEC_STATUS, steps for EXEC_DELAY */
} kfault_entry_t;

/* The longest delay:K:N a plan may ask for, in polls of WAIT_CORE. */
#define KFAULT_DELAY_MAX 100000
#define KFAULT_PLAN_MAX  8
/* The longest plan text: eight of the longest entries (alloc:SITE:N with a
 * 20-character site name and ten digits, 38 with the comma) take 304;
 * longer text is refused, never cut, wherever a plan comes from. */
#define KFAULT_PLAN_TEXT_MAX 511
typedef struct kfault_plan {
	uint32_t n;
	kfault_entry_t e[KFAULT_PLAN_MAX];
} kfault_plan_t;

/* Install a plan (copied; counters restart) or clear it.  Call when no
 * library thread is running. */
void kfault_set_plan(const kfault_plan_t *plan);
void kfault_clear(void);
/* Install the plan in KMGR_FAULT if set; 0 on success or unset, -1 on a
 * syntax error (with a message on stderr). */
int kfault_plan_from_env(void);

/*
 * Text form, entries separated by ',':
 *   alloc:SITE:N        SITE a name from the table, a number, or "any"
 *   status:STATUS:N     STATUS one of 1003 1004 1202 5 1204
 *   delay:STEPS:N
 *   qfull:N
 *   hang:N
 * Returns 0, or -1 with a message in err (errlen bytes).
 */
int kfault_plan_parse(const char *text, kfault_plan_t *plan, char *err, size_t errlen);
/* Writes the text form; returns the length snprintf would. */
int kfault_plan_format(const kfault_plan_t *plan, char *buf, size_t len);

/* ---- hooks the library calls ---- */
/* Must the allocation about to happen at site fail? */
bool kfault_alloc_fails(kfault_site_t site);
/* The same for a site that is not an allocation (emu.set_copy): one set of
 * counters, so "alloc:SITE:N" and "alloc:any:N" reach it like any other. */
static inline bool kfault_site_fails(kfault_site_t site)
{
	return kfault_alloc_fails(site);
}
/* Called once per completing execution: the status to report instead of
 * success (0 for none) and the completion delay in steps. */
uint32_t kfault_exec_status(void);
uint32_t kfault_exec_delay(void);
bool kfault_exec_hangs(void);
bool kfault_queue_full(void);

/* How many faults fired since the plan was installed. */
uint64_t kfault_fired(void);

#endif /* KFAULT_H */
