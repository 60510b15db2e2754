/*
 * repro.h - the pieces of kmgr-repro (tools/kmgr-repro): reading a finding
 * (libFuzzer / AFL++ crash file, program text, stress repro file), running
 * it in a child under a time limit, classifying the child's report into a
 * crash signature, and the commands built on them.  docs/reproducer.md.
 */
#ifndef KREPRO_H
#define KREPRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "harness/run.h"

/* Exit statuses of every command. */
#define KR_EXIT_OK    0          /* done; replay: reproduced every time */
#define KR_EXIT_NO    1          /* replay: not reproduced (or not every time) */
#define KR_EXIT_USAGE 2          /* bad flags or an unusable file */
#define KR_MAX_FILE   (1u << 20) /* the largest file read: 1 MiB */

typedef enum kr_kind {
	KR_PROGRAM, /* a program (binary fuzz input or text form) of a program target */
	KR_MODEL,   /* model_parse input: container bytes */
	KR_STRESS,  /* a stress binary's text repro file */
} kr_kind_t;

typedef struct kr_input {
	const char *path;
	kr_kind_t kind;
	bool text;               /* the program came in text form */
	char target[32];         /* program target or "model_parse" */
	bool target_guessed;     /* not given: from the path, else the default */
	const char *target_from; /* "--target", "header", "path", "default" */
	uint8_t *data;           /* the file (NUL-terminated copy) */
	size_t size;
	kprog_t *prog;       /* KR_PROGRAM: decoded (or parsed) and shaped */
	char stress_bin[64]; /* KR_STRESS: "stress_refdrain" etc. */
} kr_input_t;

/* input.c: reads and classifies path; target may be NULL (guess).  Returns
 * 0 or -1 with one line on stderr. */
int kr_input_load(kr_input_t *in, const char *path, const char *target);
/* The target a path names (a folder, or a word of the file's name), if any. */
bool kr_path_target(const char *path, char *out, size_t len);
/* Does the file say what it is itself (a text program's header, a stress
 * repro file's first line)? */
bool kr_has_header(const char *path);
void kr_input_free(kr_input_t *in);
bool kr_is_target(const char *name);
/* The text form with its target header (the form minimize --text writes). */
int kr_write_program(const char *path, const kprog_t *p, const char *target, bool text);

/* child.c */
typedef struct kr_outcome {
	bool failed;         /* non-zero exit, a signal or the time limit */
	bool usage;          /* exit 2 without a report: the child refused the file */
	char signature[512]; /* empty when !failed */
	int status;          /* wait status */
	double seconds;
	char *report; /* the child's stderr (malloc'd, NUL-terminated) */
} kr_outcome_t;

typedef struct kr_run_opts {
	unsigned timeout_s; /* per child; 0 = 60 */
	bool verbose;
} kr_run_opts_t;

/* Runs the input once in a child: programs and model bytes through this
 * tool's hidden `__run`, stress repro files through their binary. */
int kr_run_child(const kr_input_t *in, const kr_run_opts_t *o, kr_outcome_t *out);
/* A program given in memory (minimize's candidates). */
int kr_run_program(const kprog_t *p, const char *target, const kr_run_opts_t *o, kr_outcome_t *out);
void kr_outcome_free(kr_outcome_t *o);
/* SIGINT, SIGTERM, SIGHUP: kill the running child's group and remember
 * the signal (main installs it); kr_interrupted() is that signal, or 0. */
void kr_signals_install(void);
int kr_interrupted(void);
/* The process group a signal to this tool must also kill (0: none). */
void kr_child_running(int pid);
/* Runs argv (no shell) in a child under the argv[0] given, with what
 * kr_run_child does (own group, time limit, report, signature). */
int kr_run_argv(char *const argv[], const kr_run_opts_t *o, kr_outcome_t *out);
/* Runs argv (PATH searched) under a guard that kills all its descendants
 * when it ends, when this tool is interrupted and when this tool dies
 * (SIGKILL included).  stdout and stderr appended to log (NULL: nowhere),
 * or stdout returned in *out (malloc'd) when out is not NULL.  The exit
 * status, or -1 (could not run, interrupted). */
int kr_spawn_guarded(char *const argv[], const char *log, char **out);
/* Removes a folder holding files only. */
void kr_remove_flat_dir(const char *dir);
/* bisect.c */
int kr_cmd_bisect(int argc, char **argv);
int kr_cmd_verify(int argc, char **argv);
/* $TMPDIR, or /tmp: where scratch files go. */
const char *kr_tmpdir(void);
/* the wall clock in seconds (ks_wall_ns), for the tools' elapsed times */
double kr_now_s(void);
/* Where a stress binary is: next to the tool, the build tree's stress/, PATH. */
int kr_find_stress(const char *name, char *path, size_t len);

/* signature.c: the crash signature of a report ("" if none recognised):
 * its crash state (kr_crash_state) as one line, "TYPE in FRAMES". */
void kr_signature(const char *report, char *sig, size_t len);
/* The crash state's parts: the type ("heap-use-after-free", "data race",
 * "ORACLE: status-mismatch", "stress stall", ...) and its frames ("f1 <
 * f2 < f3"; a TSan report's two accesses "a1 < a2 vs b1 < b2"; an
 * oracle failure's operation; a stall's wait site); "" and "" if none. */
void kr_crash_state(const char *report, char *type, size_t tlen, char *frames, size_t flen);
/* A sanitizer report's first "DEDUP_TOKEN: f1--f2--f3" (dedup_token_length in
 * sanitizers/<tool>.options): its value in tok and true, or "" and false. */
bool kr_dedup_token(const char *report, char *tok, size_t len);
/* What triage groups a report by (signature.c says why): a use-after-free
 * by its free site, a stress check by its invariant, a stall by its wait
 * site, else the DEDUP_TOKEN, else sig.  report may be NULL. */
void kr_bucket_key(const char *report, const char *sig, char *key, size_t len);
/* Is a frame's source file project code (not runtime, fuzzer, driver or
 * this tool)? */
bool kr_project_frame(const char *file);

/* runchild.c: the hidden `__run TARGET FILE` */
int kr_cmd_run(int argc, char **argv);

/* emitc.c */
/* shared_prelude: #include "harness/embed.c" instead of a copy of the
 * harness and the oracle (the tests kept in corpus/regressions/) */
int kr_emit_c(const kr_input_t *in, const char *out_path, const char *name, bool shared_prelude);

/* commands.c */
/* s as one POSIX sh word (single quotes, a quote as the four bytes '\\''); its length. */
size_t kr_shell_word(const char *s, char *out, size_t len);
int kr_cmd_show(int argc, char **argv);
int kr_cmd_replay(int argc, char **argv);
int kr_cmd_minimize(int argc, char **argv);
int kr_cmd_emit_c(int argc, char **argv);
int kr_cmd_triage(int argc, char **argv);

/* The path of this executable, for spawning `__run`. */
const char *kr_self_path(void);

#endif /* KREPRO_H */
