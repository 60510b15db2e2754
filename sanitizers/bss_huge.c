/*
 * bss_huge.c - a sanitized program's .bss on transparent huge pages, so
 * that the sanitizer does not fault it in 4 KiB at a time.
 *
 * Both runtimes keep megabytes of state in the program's .bss, and a fault
 * costs ~12 us on the project's VM (docs/bench-notes/2026-12-05-bss-huge.md):
 * - ASan: at exit LeakSanitizer reads every writable segment for pointers,
 *   .bss included: ~15 MB in kmgr-repro (the stack depot 8.5 MB, our own
 *   static buffers most of the rest), nearly all never written.  ~3,600
 *   faults, ~50 ms of CPU for every ASan process that exits.
 * - TSan: its start-up clears its Context (the sync-object and block
 *   tables, ~10 MB of .bss): ~2,900 faults before main.
 * With MADV_HUGEPAGE on the range, a read of an untouched 2 MiB-aligned
 * stretch maps the huge zero page (one fault for 512 pages) and a write
 * takes one huge page.  What the sanitizers read, write and report is the
 * same: only the cost of the faults moves.  The test suite starts a few
 * thousand such processes.
 *
 * It runs from .preinit_array.  Linked with lld, the symbol ordering file
 * next to this one puts it before the runtime's own entry (which the
 * driver links first), so the runtime's start-up writes land on huge pages
 * already; otherwise it runs after, and collapses the stretches the
 * start-up wrote (MADV_COLLAPSE).  Before the runtime is set up, nothing
 * here may be instrumented or go through an interceptor: raw system calls
 * only.  A kernel without transparent huge pages, or with them off,
 * refuses or ignores the advice, and the program runs as before.  Linked
 * into the executables of the asan and tsan presets (kmgr_executable).
 */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25 /* Linux 6.1 */
#endif
#define BSS_PAGE ((uintptr_t)4096)
#define BSS_HUGE ((uintptr_t)2 << 20)
/* X rounded up to a multiple of A, a power of two */
#define BSS_ROUND_UP(x, a) (((x) + (a)-1) & ~((a)-1))

/* The linkers' own symbols (GNU ld and lld): where .bss starts and where
 * the program's data ends. */
extern char __bss_start[];
extern char _end[];

#define BSS_RAW __attribute__((disable_sanitizer_instrumentation))

/* The last stretch of .bss can take a huge page only whole: map the rest
 * of it, when nothing (the brk heap) is there already.  The new end. */
BSS_RAW static uintptr_t bss_round_up_tail(uintptr_t e)
{
	uintptr_t tail = BSS_ROUND_UP(e, BSS_HUGE);
	long p;

	if (tail == e || (uintptr_t)syscall(SYS_brk, 0) < tail)
		return e;
	p = syscall(SYS_mmap, (void *)e, (size_t)(tail - e), PROT_READ | PROT_WRITE,
	            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == (long)e)
		return tail;
	if (p != -1) /* a kernel before 4.17 took the address as a hint */
		(void)syscall(SYS_munmap, (void *)p, (size_t)(tail - e));
	return e;
}

/* A stretch that already holds 4 KiB pages (the runtime's start-up ran
 * first) becomes one huge page now, in place of its faults to come. */
BSS_RAW static void bss_collapse_written(uintptr_t b, uintptr_t e)
{
	unsigned char in[BSS_HUGE / BSS_PAGE];

	for (uintptr_t c = BSS_ROUND_UP(b, BSS_HUGE); c + BSS_HUGE <= e; c += BSS_HUGE) {
		if (syscall(SYS_mincore, (void *)c, (size_t)BSS_HUGE, in) != 0)
			continue;
		for (size_t i = 0; i < sizeof(in); i++)
			if (in[i] & 1) {
				(void)syscall(SYS_madvise, (void *)c, (size_t)BSS_HUGE,
				              MADV_COLLAPSE);
				break;
			}
	}
}

BSS_RAW static void bss_huge_advise(void)
{
	uintptr_t b = BSS_ROUND_UP((uintptr_t)__bss_start, BSS_PAGE);
	uintptr_t e = BSS_ROUND_UP((uintptr_t)_end, BSS_PAGE);

	if (e <= b)
		return;
	e = bss_round_up_tail(e);
	if (syscall(SYS_madvise, (void *)b, (size_t)(e - b), MADV_HUGEPAGE) != 0)
		return;
	bss_collapse_written(b, e);
}

/* Its name is the one line of sanitizers/bss_huge.order; not static, so
 * that sanitizers/tests/bss_huge_check.c can find it first in the array. */
extern void (*const kmgr_bss_huge_preinit)(void);
__attribute__((section(".preinit_array"),
               used)) void (*const kmgr_bss_huge_preinit)(void) = bss_huge_advise;
