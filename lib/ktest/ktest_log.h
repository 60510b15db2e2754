/*
 * ktest_log.h - log policies for tests, each one klog sink:
 *   capture       every line at the level and above kept, to assert on;
 *   expect        lines holding an expected text counted and kept quiet,
 *                 every other line passed to stderr as klog writes it;
 *   errors only   the default stderr sink at KLOG_ERROR.
 * kt_log_release() goes back to klog's default (stderr, KLOG_WARN).  The
 * sinks take a ks_mutex, so library threads may log while a test reads.
 */
#ifndef KTEST_LOG_H
#define KTEST_LOG_H

#include <stdbool.h>

#include "base/klog.h"

/* Capture: level set, lines kept (each "line\n"), counters reset. */
void kt_log_capture(klog_level_t level);
/* Expect: lines containing text counted, the rest to stderr; the level is
 * left as it is. */
void kt_log_expect(const char *text);
/* Errors only: klog's own sink, at KLOG_ERROR. */
void kt_log_errors_only(void);
/* Back to klog's default sink at KLOG_WARN. */
void kt_log_release(void);

/* What the current policy saw since it was set: */
bool kt_log_has(const char *text); /* a captured line contains text */
const char *kt_log_text(void);     /* the captured lines, "\n"-terminated (64 KiB at most) */
const char *kt_log_levels(void);   /* one digit a captured line: its klog_level_t */
const char *kt_log_first(void);    /* the first captured line, "" when none */
const char *kt_log_last(void);     /* the last captured line, "" when none */
int kt_log_lines(void);            /* lines captured, or expected lines counted */
int kt_log_passed(void);           /* expect: lines passed to stderr */

#endif /* KTEST_LOG_H */
