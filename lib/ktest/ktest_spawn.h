/*
 * ktest_spawn.h - run a program as a child process, the way the tools'
 * command-line tests do: arguments, one environment variable replaced,
 * stdout and stderr captured through files, the exit status returned.
 */
#ifndef KTEST_SPAWN_H
#define KTEST_SPAWN_H

#include <stddef.h>

typedef struct kt_spawn {
	const char *prog;     /* the program (a path: no PATH search) */
	const char *out_path; /* where the child's stdout and stderr are written */
	const char *err_path;
	char *out, *err; /* their text after the run, NUL-terminated */
	size_t out_cap, err_cap;
	const char *env_drop; /* "NAME=": left out of the child's environment */
	const char *env_add;  /* "NAME=value" added to it, or NULL */
} kt_spawn_t;

/* Run s->prog with args (NULL-terminated, without argv[0]) in this
 * process's environment changed as s says; read the two outputs back.
 * Asserts the child exited (a signal, a crash or a sanitizer abort, is
 * never right); returns its exit status. */
int kt_spawn(const kt_spawn_t *s, const char *const *args);

/* Assert that text (a child's stderr) holds no sanitizer report. */
void kt_assert_no_sanitizer(const char *text);

#endif /* KTEST_SPAWN_H */
