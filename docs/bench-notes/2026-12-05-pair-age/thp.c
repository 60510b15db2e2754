// A measurement's prototype, not part of the build (docs/bench-notes/2026-12-05-pair-age.md):
// preloaded into a libFuzzer worker, a thread asks every 2 s for huge pages on the worker's
// large anonymous mappings (libFuzzer's per-feature tables, ASan's heap), and collapses the
// stretches of 4 MiB and more already on 4 KiB pages; THP_SHADOW=1 advises ASan's shadow too.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
static int shadow;
static void pass(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned long a, b;
		char perm[8];
		unsigned long off;
		char dev[16];
		unsigned long ino;
		char path[256] = "";
		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %255s", &a, &b, perm, &off, dev, &ino,
		           path) < 6)
			continue;
		if (ino || perm[0] != 'r' || perm[1] != 'w')
			continue;
		if (path[0] && strcmp(path, "[heap]"))
			continue;
		unsigned long s = (a + (2ul << 20) - 1) & ~((2ul << 20) - 1),
		              e = b & ~((2ul << 20) - 1);
		if (e <= s)
			continue;
		int is_shadow = (a < 0x600000000000ul && b - a > (1ul << 36));
		if (is_shadow && !shadow)
			continue;
		madvise((void *)s, e - s, MADV_HUGEPAGE);
		if (e - s >= (4ul << 20) && !is_shadow)
			madvise((void *)s, e - s, 25 /* MADV_COLLAPSE */);
	}
	fclose(f);
}
static void *loop(void *arg)
{
	(void)arg;
	for (;;) {
		sleep(2);
		pass();
	}
	return 0;
}
__attribute__((constructor)) static void init(void)
{
	const char *v = getenv("THP_SHADOW");
	shadow = v && *v == '1';
	pthread_t t;
	pthread_create(&t, 0, loop, 0);
}
