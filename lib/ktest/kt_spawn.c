/*
 * kt_spawn.c - the child processes of ktest_spawn.h.
 */
#include "ktest_spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktest.h"

extern char **environ;

void kt_spawn_init(kt_spawn_t *s, const char *prog, const char *dir)
{
	s->prog = prog;
	mkdir(dir, 0755);
	snprintf(s->out_path, sizeof(s->out_path), "%s/stdout", dir);
	snprintf(s->err_path, sizeof(s->err_path), "%s/stderr", dir);
	s->out[0] = s->err[0] = 0;
}

int kt_spawn(kt_spawn_t *s, const char *const *args, const char *env_drop, const char *env_add)
{
	size_t nargs = 0, nenv = 0, n = 0, e = 0;
	size_t drop = env_drop ? strlen(env_drop) : 0;
	posix_spawn_file_actions_t fa;
	char **argv, **envp;
	int status;
	pid_t pid;

	while (args[nargs])
		nargs++;
	while (environ[nenv])
		nenv++;
	argv = calloc(nargs + 2, sizeof(*argv));
	envp = calloc(nenv + 2, sizeof(*envp));
	KT_ASSERT(argv && envp);
	argv[n++] = (char *)s->prog;
	for (; *args; args++)
		argv[n++] = (char *)*args;
	for (char **p = environ; *p; p++)
		if (!drop || strncmp(*p, env_drop, drop) != 0)
			envp[e++] = *p;
	if (env_add)
		envp[e++] = (char *)env_add;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, s->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, s->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	KT_EQ(posix_spawn(&pid, s->prog, &fa, NULL, argv, envp), 0);
	posix_spawn_file_actions_destroy(&fa);
	free(argv);
	free(envp);
	KT_EQ(waitpid(pid, &status, 0), pid);
	kt_slurp(s->out_path, s->out, sizeof(s->out));
	kt_slurp(s->err_path, s->err, sizeof(s->err));
	KT_ASSERT(WIFEXITED(status)); /* a signal (crash, sanitizer abort) is never right */
	return WEXITSTATUS(status);
}

void kt_assert_no_sanitizer(const char *text)
{
	static const char *const reports[] = {
	    "ERROR: AddressSanitizer", "WARNING: ThreadSanitizer", "runtime error:",
	    "LeakSanitizer",           "MemorySanitizer",          "UndefinedBehaviorSanitizer",
	};

	for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++)
		if (strstr(text, reports[i]))
			KT_FAIL("a sanitizer report (\"%s\") in:\n%s", reports[i], text);
}
