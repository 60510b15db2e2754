/*
 * klog.h - the library's log: levels error/warn/info/debug from
 * KMGR_LOG_LEVEL (default warn), written to stderr or to a sink a test
 * installs to capture what was said.
 */
#ifndef KLOG_H
#define KLOG_H

#include <stdarg.h>

typedef enum klog_level {
	KLOG_ERROR = 0,
	KLOG_WARN = 1,
	KLOG_INFO = 2,
	KLOG_DEBUG = 3,
} klog_level_t;

/* A sink receives each formatted line (no trailing newline). */
typedef void (*klog_sink_fn)(void *ctx, klog_level_t level, const char *line);

/* Asked, before a line is formatted, whether the sink wants it; the format
 * string is the line's wording.  A fuzzer that keeps a handful of lines out
 * of thousands should not pay for formatting the rest. */
typedef _Bool (*klog_filter_fn)(klog_level_t level, const char *fmt);

/* Reads KMGR_LOG_LEVEL again (error|warn|info|debug or 0..3). */
void klog_reload_env(void);
void klog_set_level(klog_level_t level);
klog_level_t klog_get_level(void);
/* NULL restores stderr. */
void klog_set_sink(klog_sink_fn fn, void *ctx);
/* NULL: every line at or above the level is formatted. */
void klog_set_filter(klog_filter_fn fn);

void klog_emit(klog_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define klog_error(...) klog_emit(KLOG_ERROR, __VA_ARGS__)
#define klog_warn(...)  klog_emit(KLOG_WARN, __VA_ARGS__)
#define klog_info(...)  klog_emit(KLOG_INFO, __VA_ARGS__)
#define klog_debug(...) klog_emit(KLOG_DEBUG, __VA_ARGS__)

#endif /* KLOG_H */
