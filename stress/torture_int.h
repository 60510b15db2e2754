/*
 * torture_int.h - what the parts of the common module (torture.c,
 * torture_stats.c, torture_models.c, args.c, watchdog.c) share and the
 * binaries do not need.
 */
#ifndef TORTURE_INT_H
#define TORTURE_INT_H

#include <signal.h>

#include "torture.h"

extern torture_t *torture_cur;

/* args.c: argv and --replay; returns an exit status, or -1 to run. */
int torture_parse_args(torture_t *t, int argc, char **argv);
/* args.c: the repro file (path into path); the trace may be "". */
int torture_write_repro(torture_t *t, const char *trace_text, const char *why, char *path,
                        size_t len);
/* args.c: SIGSEGV/SIGABRT/sanitizer death write the repro before dying. */
void torture_crash_handlers(torture_t *t);
/* SIGINT, SIGTERM, SIGHUP end the run as its time budget would: the
 * workers stop, the checks and the summary (text and --json, marked
 * "interrupted") are made, and the binary exits 128+signal. */
void torture_stop_handlers(void);
extern volatile sig_atomic_t torture_stop_signal;

/* watchdog.c */
int torture_watchdog_start(torture_t *t);
void torture_watchdog_stop(torture_t *t);
/* Every worker calls this first: its tid and the SIGUSR1 handler's slot. */
void torture_thread_register(torture_thread_t *w);
/* The main thread's phase, for the progress accounting of the watchdog. */
void torture_main_progress(torture_t *t, const char *phase);
/* Print what is known, save the repro, exit with TORTURE_EXIT_STALL. */
void torture_finish_stalled(torture_t *t, const char *why) __attribute__((noreturn));

/* torture.c */
void torture_atomic_set(ks_atomic_t *a, int64_t v);

/* torture_stats.c */
const char *torture_stat_name(int i);
void torture_hist_merge(torture_hist_t *dst, const torture_hist_t *src);
int torture_cmdline(const torture_t *t, char *buf, size_t len);
/* The text and JSON summary and the final line; -1 when the --json file
 * could not be written (one line on stderr). */
int torture_summary(torture_t *t, const torture_hist_t *hist, int rc, const char *repro);

#endif /* TORTURE_INT_H */
