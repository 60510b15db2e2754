/*
 * bss_huge_check.c - a sanitized program of this build keeps its .bss on
 * huge pages (sanitizers/bss_huge.c), so that the sanitizer's start-up and
 * LeakSanitizer's exit scan do not fault it in a page at a time.
 *
 * bss-1.1: the mapping that holds the end of .bss is advised for huge
 *          pages ("hg" among its VmFlags in /proc/self/smaps).
 * bss-1.2: linked with lld, the advice is the first entry of
 *          .preinit_array, before the runtime's own start-up.
 * bss-1.3: what the runtime wrote into .bss before main (ASan's stack
 *          depot, TSan's Context) lies on huge pages: every whole 2 MiB
 *          stretch is either untouched or resident whole (mincore), and one
 *          at least is resident.
 * bss-1.4: reading every page of .bss, each for the first time here (what
 *          LeakSanitizer's scan does at exit), costs at most the pages
 *          before the first 2 MiB boundary (they share their stretch with
 *          the program's data and cannot take a huge page) and a few more;
 *          without the advice it costs about one fault a page (~2,400).
 * Skipped (77) where the kernel has no transparent huge pages or has them
 * off ("[never]"): the advice is then a no-op by design.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "ktest.h"

extern char __bss_start[];
extern char _end[];
extern void (*const __preinit_array_start[])(void);
extern void (*const kmgr_bss_huge_preinit)(void);

#define PAGE           ((uintptr_t)4096)
#define HUGE           ((uintptr_t)2 << 20)
#define ROUND_UP(x, a) (((x) + (a)-1) & ~((a)-1))

static bool thp_available(void)
{
	char buf[256];

	kt_slurp("/sys/kernel/mm/transparent_hugepage/enabled", buf, sizeof(buf));
	return buf[0] != '\0' && !strstr(buf, "[never]");
}

/* The value of the line starting with KEY in the smaps entry that holds
 * ADDR, copied to OUT; "" when there is none. */
static void smaps_field(uintptr_t addr, const char *key, char *out, size_t cap)
{
	char line[512];
	bool in = false;
	FILE *f = fopen("/proc/self/smaps", "r");

	out[0] = '\0';
	KT_ASSERT(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = addr >= lo && addr < hi;
			continue;
		}
		if (in && strncmp(line, key, strlen(key)) == 0) {
			snprintf(out, cap, "%s", line + strlen(key));
			break;
		}
	}
	fclose(f);
}

static void case_advised(void)
{
	char flags[256];

	smaps_field((uintptr_t)_end - 1, "VmFlags:", flags, sizeof(flags));
	if (!strstr(flags, " hg"))
		KT_FAIL("the end of .bss is not advised for huge pages: VmFlags:%s", flags);
}

static void case_first(void)
{
#ifdef KMGR_BSS_ORDERED
	if (__preinit_array_start[0] != kmgr_bss_huge_preinit)
		KT_FAIL("the .bss advice is not the first entry of .preinit_array");
#else
	printf("  not linked with lld: the advice follows the runtime's start-up\n");
#endif
}

/* Every whole 2 MiB stretch of .bss is untouched or resident whole (one
 * huge page), none a scatter of 4 KiB pages, each a fault paid. */
static void case_startup_huge(void)
{
	static unsigned char in[HUGE / PAGE];
	uintptr_t e = ROUND_UP((uintptr_t)_end, PAGE);
	int whole = 0, untouched = 0;

	for (uintptr_t c = ROUND_UP((uintptr_t)__bss_start, HUGE); c + HUGE <= e; c += HUGE) {
		size_t n = 0;

		KT_EQ(mincore((void *)c, HUGE, in), 0);
		for (size_t i = 0; i < sizeof(in); i++)
			n += in[i] & 1;
		if (n != 0 && n != sizeof(in))
			KT_FAIL("the stretch at %#lx of .bss holds %zu page(s) of 4 KiB, not a "
			        "huge page",
			        (unsigned long)c, n);
		whole += n != 0;
		untouched += n == 0;
	}
	printf("  .bss: %d stretch(es) of 2 MiB on a huge page, %d untouched\n", whole, untouched);
	KT_GT(whole, 0); /* the runtime's start-up wrote to one at least */
}

static long minor_faults(void)
{
	struct rusage ru;

	KT_EQ(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_minflt;
}

/* A load from each page of .bss.  Not instrumented: between ASan's globals
 * lie redzones a load may not touch. */
__attribute__((disable_sanitizer_instrumentation)) static unsigned read_bss(void)
{
	unsigned sum = 0;

	for (uintptr_t p = (uintptr_t)__bss_start; p < (uintptr_t)_end; p += PAGE)
		sum += *(volatile unsigned char *)p;
	return sum;
}

static void case_cheap_scan(void)
{
	uintptr_t b = (uintptr_t)__bss_start, head = ROUND_UP(b, HUGE) - b;
	long pages = (long)(((uintptr_t)_end - b) / PAGE), allowed = (long)(head / PAGE) + 64;
	long before = minor_faults(), faults;

	(void)read_bss();
	faults = minor_faults() - before;
	printf("  .bss: %ld pages, %ld fault(s) to read them all (at most %ld)\n", pages, faults,
	       allowed);
	KT_ASSERT(pages > allowed); /* else this program proves nothing */
	KT_LE(faults, allowed);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		kt_only = argv[1]; /* one case: "bss-1.3" */
	if (!thp_available()) {
		printf("skipped: no transparent huge pages on this kernel, or they are off\n");
		return 77;
	}
	KT_CASE("bss-1.1 advised", case_advised);
	KT_CASE("bss-1.2 first", case_first);
	KT_CASE("bss-1.3 start-up on huge pages", case_startup_huge);
	KT_CASE("bss-1.4 cheap scan", case_cheap_scan);
	KT_DONE();
}
