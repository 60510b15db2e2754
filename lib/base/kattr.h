/*
 * kattr.h - compiler attributes with a reason, spelled once.
 */
#ifndef KATTR_H
#define KATTR_H

/* A byte loop without coverage instrumentation.  Its only features under a
 * fuzzer would be data sizes, while a counter and a comparison callback per
 * byte cost more than the code around it.  noinline keeps the loop out of
 * instrumented callers, where it would be instrumented after all. */
#define KATTR_NO_COVERAGE __attribute__((noinline, no_sanitize("coverage")))

#endif /* KATTR_H */
