/*
 * ksignal.h - the stop signals of the long-running programs (the stress
 * binaries, kmgr-repro): SIGINT, SIGTERM and SIGHUP each call one handler,
 * which records the signal and starts the stop; the program then keeps what
 * it has and exits 128+signal (docs/contributing.md, the signal rule).
 */
#ifndef KSIGNAL_H
#define KSIGNAL_H

/* Install on_stop for SIGINT, SIGTERM and SIGHUP (no SA_RESTART: a blocking
 * wait returns EINTR and looks at the stop). */
void ksignal_on_stop(void (*on_stop)(int sig));

#endif /* KSIGNAL_H */
