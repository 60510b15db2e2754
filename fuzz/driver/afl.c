/*
 * afl.c - the AFL++ driver: persistent mode with the test case in shared
 * memory, calling the same LLVMFuzzerTestOneInput as libFuzzer.  With
 * arguments it replays files and directories instead.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* optional, as under libFuzzer: the program targets define it */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int kfuzz_replay_main(int argc, char **argv);

#ifdef __AFL_FUZZ_TESTCASE_LEN
__AFL_FUZZ_INIT();
#endif

int main(int argc, char **argv)
{
	/* before __AFL_INIT: the fork server forks children that have done it */
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	if (argc > 1)
		return kfuzz_replay_main(argc, argv);
#ifdef __AFL_FUZZ_TESTCASE_LEN
	__AFL_INIT();
	unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;

	while (__AFL_LOOP(10000))
		LLVMFuzzerTestOneInput(buf, (size_t)__AFL_FUZZ_TESTCASE_LEN);
	return 0;
#else
	/* not built by afl-cc: one input from stdin */
	static uint8_t in[1 << 20];
	size_t n = fread(in, 1, sizeof(in), stdin);

	return LLVMFuzzerTestOneInput(in, n);
#endif
}
