/*
 * ctl_fiber.c - the fiber engine of the controlled backend: every logical
 * thread of a run is a fiber on the thread that called ks_ctl_begin, and a
 * switch is one swapcontext.  Exactly one logical thread runs at a time by
 * construction, and no real thread is created, so a run costs what its own
 * code costs (the threads engine pays a futex wake and wait per switch).
 *
 * The sanitizers are told about every switch:
 *   ASan: __sanitizer_{start,finish}_switch_fiber, so that stack checks and
 *     the fake stacks of detect_stack_use_after_return follow the fiber;
 *   MSan: __msan_{start,finish}_switch_fiber, likewise for its stack state;
 *   TSan: each logical thread is a TSan fiber, and the switch passes
 *     __tsan_switch_to_fiber_no_sync: the handoff creates no happens-before
 *     edge, so a race between two logical threads is reported exactly as it
 *     would be between two real threads.  The edges TSan does see are the
 *     modelled ones (lock/unlock, create/start, finish/join: ctl_sync.c).
 *
 * The switch itself: on x86-64 a dozen instructions of our own (callee-saved
 * registers, MXCSR and the x87 control word; no signal mask system call, and
 * nothing for ASan's swapcontext interceptor to warn about or to clear);
 * elsewhere ucontext.
 *
 * Fibers are pooled, one slot per logical thread id: the stack is mapped
 * once, with a guard page, and a fiber whose logical thread finished parks
 * at the bottom of its entry loop, to carry the next logical thread that
 * gets its id (in this run or a later one).  That keeps ASan's fake stack
 * (detect_stack_use_after_return: 11 MiB mapped and cleared per new fiber)
 * across runs.  Not under TSan: a TSan fiber must start with an empty
 * shadow stack, so there every logical thread gets a fresh context, a
 * fresh TSan fiber and a freshly mapped stack.  After a failed run every
 * fiber is resumed once to unwind (ctl.c), so each ends parked, with its
 * TSan ignores balanced.
 *
 * The switch code itself is not instrumented for TSan (KS_NO_TSAN): the
 * slots are the scheduler's, handed from fiber to fiber with no edge.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "ctl_int.h"

#if defined(KMGR_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(KMGR_MSAN)
#include <sanitizer/msan_interface.h>
#endif
#if defined(KMGR_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

#if defined(__x86_64__)
#define KS_FIBER_ASM 1
/* ks__ctx_switch(save, next): push the callee-saved state on the running
 * stack, store its pointer to *save, continue on the stack next points to. */
__asm__(".text\n"
        ".globl ks__ctx_switch\n"
        ".hidden ks__ctx_switch\n"
        ".type ks__ctx_switch,@function\n"
        ".p2align 4\n"
        "ks__ctx_switch:\n"
        "\tpushq %rbp\n"
        "\tpushq %rbx\n"
        "\tpushq %r12\n"
        "\tpushq %r13\n"
        "\tpushq %r14\n"
        "\tpushq %r15\n"
        "\tsubq $8, %rsp\n"
        "\tstmxcsr (%rsp)\n"
        "\tfnstcw 4(%rsp)\n"
        "\tmovq %rsp, (%rdi)\n"
        "\tmovq %rsi, %rsp\n"
        "\tldmxcsr (%rsp)\n"
        "\tfldcw 4(%rsp)\n"
        "\taddq $8, %rsp\n"
        "\tpopq %r15\n"
        "\tpopq %r14\n"
        "\tpopq %r13\n"
        "\tpopq %r12\n"
        "\tpopq %rbx\n"
        "\tpopq %rbp\n"
        "\tret\n"
        ".size ks__ctx_switch, .-ks__ctx_switch\n");
void ks__ctx_switch(void **save, void *next);

/* A new fiber's first switch pops this frame: default MXCSR and x87 control
 * word, zeroed registers, then "returns" into entry with the stack aligned
 * as after a call (and a zero return address, for debuggers). */
static void *first_frame(void *stk, size_t size, void (*entry)(void))
{
	uint64_t *top = (uint64_t *)(((uintptr_t)stk + size) & ~(uintptr_t)15);
	uint64_t *sp = top - 9;

	memset(sp, 0, 9 * sizeof(*sp));
	sp[0] = 0x1F80u | ((uint64_t)0x037Fu << 32);
	sp[7] = (uint64_t)(uintptr_t)entry;
	return sp;
}
#endif

#if defined(KMGR_TSAN)
#define KS_NO_TSAN __attribute__((no_sanitize("thread")))
#else
#define KS_NO_TSAN
#endif

/* Sanitizer frames are several times larger than plain ones. */
#define KS_FIBER_STACK (1u << 20)
#define KS_FIBER_GUARD (1u << 12)
#if !defined(KMGR_TSAN)
#define KS_FIBER_POOL 1
#endif

static struct ks_fslot {
	void *map;              /* guard page, then the stack; NULL for main */
	const void *stk_bottom; /* the stack, for ASan and MSan (main's: learned) */
	size_t stk_size;
	bool idle;       /* parked at the bottom of its entry loop, resumable */
	void *asan_fake; /* ASan's fake stack while switched out */
	void *tsan;      /* TSan's fiber; main's is the thread's own */
#if defined(KS_FIBER_ASM)
	void *sp;
#else
	ucontext_t uc;
#endif
} slots[KS_CTL_MAX_THREADS];

KS_NO_TSAN static void *stack_of(struct ks_fslot *f)
{
	void *map = f->map;

#if defined(KMGR_TSAN)
	/* A new TSan fiber must not inherit the shadow of its stack's last
	 * fiber: a joined thread's id (and slot) is given again within a run,
	 * and TSan took the two logical threads' frames for racing writes.
	 * munmap clears that shadow; the next mmap starts clean. */
	if (map) {
		munmap(map, KS_FIBER_STACK + KS_FIBER_GUARD);
		f->map = map = NULL;
	}
#endif
	if (!map) {
		map = mmap(NULL, KS_FIBER_STACK + KS_FIBER_GUARD, PROT_READ | PROT_WRITE,
		           MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (map == MAP_FAILED)
			return NULL;
		if (mprotect(map, KS_FIBER_GUARD, PROT_NONE) != 0) {
			munmap(map, KS_FIBER_STACK + KS_FIBER_GUARD);
			return NULL;
		}
		f->map = map;
	}
	return (char *)map + KS_FIBER_GUARD;
}

KS_NO_TSAN void ks__fiber_main_init(void)
{
	/* main runs on the real thread's stack; ASan and MSan report its
	 * bounds at the first switch away from it (finish_switch). */
	memset(&slots[0], 0, sizeof(slots[0]));
#if defined(KMGR_TSAN)
	slots[0].tsan = __tsan_get_current_fiber();
#endif
}

/* A fresh context on f's stack that starts in entry(). */
KS_NO_TSAN static int fresh(struct ks_fslot *f, void (*entry)(void))
{
	void *stk = stack_of(f);

	if (!stk)
		return ENOMEM;
#if defined(KMGR_ASAN)
	/* a fiber abandoned by a failed run may have left redzones behind */
	__asan_unpoison_memory_region(stk, KS_FIBER_STACK);
#endif
#if defined(KS_FIBER_ASM)
	f->sp = first_frame(stk, KS_FIBER_STACK, entry);
#else
	if (getcontext(&f->uc) != 0)
		return EAGAIN;
	f->uc.uc_stack.ss_sp = stk;
	f->uc.uc_stack.ss_size = KS_FIBER_STACK;
	f->uc.uc_link = NULL; /* entry never returns */
	makecontext(&f->uc, entry, 0);
	/* swapcontext does not read it; ASan's interceptor would clear the
	 * shadow of the whole stack at every switch */
	memset(&f->uc.uc_stack, 0, sizeof(f->uc.uc_stack));
#endif
	f->stk_bottom = stk;
	f->stk_size = KS_FIBER_STACK;
	f->asan_fake = NULL;
	return 0;
}

KS_NO_TSAN int ks__fiber_make(int id, const char *name, void (*entry)(void))
{
	struct ks_fslot *f = &slots[id];
	int rc = 0;

#if defined(KS_FIBER_POOL)
	if (!f->idle)
		rc = fresh(f, entry);
#else
	rc = fresh(f, entry);
#endif
	if (rc)
		return rc;
	f->idle = false;
#if defined(KMGR_TSAN)
	f->tsan = __tsan_create_fiber(0);
	__tsan_set_fiber_name(f->tsan, name);
#else
	(void)name;
#endif
	return 0;
}

/* The slot that switched last, for finish_switch in the fiber it woke. */
static struct ks_fslot *switched_from;

/* Where the running fiber came from: remember that stack (main's bounds
 * are only known this way). */
KS_NO_TSAN static void finish_switch(struct ks_fslot *self)
{
#if defined(KMGR_ASAN) || defined(KMGR_MSAN)
	const void *bottom = NULL;
	size_t size = 0;
#if defined(KMGR_ASAN)
	__sanitizer_finish_switch_fiber(self->asan_fake, &bottom, &size);
#else
	__msan_finish_switch_fiber(&bottom, &size);
#endif
	if (switched_from == &slots[0]) {
		slots[0].stk_bottom = bottom;
		slots[0].stk_size = size;
	}
#endif
	(void)self;
}

KS_NO_TSAN void ks__fiber_switch(int from_id, int next_id, enum ks_fiber_leave how)
{
	struct ks_fslot *from = &slots[from_id], *next = &slots[next_id];

	switched_from = from;
	from->idle = how == KS_FIBER_PARK;
#if defined(KMGR_ASAN)
	__sanitizer_start_switch_fiber(&from->asan_fake, next->stk_bottom, next->stk_size);
#elif defined(KMGR_MSAN)
	__msan_start_switch_fiber(next->stk_bottom, next->stk_size);
#endif
#if defined(KMGR_TSAN)
	__tsan_switch_to_fiber(next->tsan, __tsan_switch_to_fiber_no_sync);
#endif
#if defined(KS_FIBER_ASM)
	ks__ctx_switch(&from->sp, next->sp);
#else
	/* Cannot fail with a context made by getcontext/makecontext. */
	(void)swapcontext(&from->uc, &next->uc);
#endif
	finish_switch(from);
}

KS_NO_TSAN void ks__fiber_started(int id)
{
	finish_switch(&slots[id]);
}

KS_NO_TSAN void ks__fiber_release(int id)
{
#if defined(KMGR_TSAN)
	if (slots[id].tsan && id != 0)
		__tsan_destroy_fiber(slots[id].tsan);
#endif
	slots[id].tsan = NULL;
}
