/*
 * replay.c - the replay main of the release and coverage builds: runs the
 * target over the files and directories on the command line.
 */
#include <stdio.h>

int kfuzz_replay_main(int argc, char **argv);

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	return kfuzz_replay_main(argc, argv);
}
