/*
 * ksignal.c - ksignal.h.
 */
#include "ksignal.h"

#include <signal.h>
#include <string.h>

void ksignal_on_stop(void (*on_stop)(int sig))
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
