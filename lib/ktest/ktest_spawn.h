/*
 * ktest_spawn.h - run a program as a child process, the way the tools'
 * command-line tests do: arguments, one environment variable replaced,
 * stdout and stderr captured through files, the exit status returned.
 */
#ifndef KTEST_SPAWN_H
#define KTEST_SPAWN_H

typedef struct kt_spawn {
	const char *prog;                  /* the program (a path: no PATH search) */
	char out_path[512], err_path[512]; /* where the child's stdout and stderr go */
	char out[1 << 16], err[1 << 16];   /* their text after a run, NUL-terminated */
} kt_spawn_t;

/* Run prog with its stdout and stderr written to dir/stdout and
 * dir/stderr (dir is made when missing). */
void kt_spawn_init(kt_spawn_t *s, const char *prog, const char *dir);

/* Run s->prog with args (NULL-terminated, without argv[0]) in this
 * process's environment less the variables starting with env_drop
 * ("NAME=", or NULL) and plus env_add ("NAME=value", or NULL); read the
 * two outputs back.  Asserts the child exited (a signal, a crash or a
 * sanitizer abort, is never right); returns its exit status. */
int kt_spawn(kt_spawn_t *s, const char *const *args, const char *env_drop, const char *env_add);

/* Assert that text (a child's stderr) holds no sanitizer report. */
void kt_assert_no_sanitizer(const char *text);

#endif /* KTEST_SPAWN_H */
