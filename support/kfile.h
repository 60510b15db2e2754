/*
 * kfile.h - writing an output file of a tool so that a failed write leaves
 * nothing half-written: the bytes go to a temporary file in the same
 * directory, which replaces the destination only after every write, the
 * flush, fsync and close succeeded.  On any failure the temporary file is
 * removed and an existing destination is left as it was.
 *
 * A destination that exists and is not a regular file (/dev/stdout,
 * /dev/full, a FIFO) is written in place, with every error still checked:
 * replacing a device node by a file would be worse than a short write.
 * It is opened without waiting: a FIFO with no reader is an error at once
 * (ENXIO), never an open that blocks the tool.  So is a regular file with
 * more than one name (hard links): replacing it would leave the other
 * names on the old bytes; and a file the user may write in a folder they
 * may not (0666 in 0555, as the shell's `>` writes it); there a failed
 * write can leave it short.  A symbolic link to a regular file is followed
 * (the link stays); one that leads nowhere is refused (ENOENT), neither
 * replaced nor followed to a name the user never wrote.  The replacement keeps the old file's mode and, where allowed,
 * its owner; the temporary name is short, so a destination name of up to
 * NAME_MAX characters works.
 *
 * For tools and stress binaries, not the library: kfile_open ignores
 * SIGXFSZ so that a file size limit (ulimit -f) is a write error to report
 * rather than a kill that leaves the temporary file behind.
 */
#ifndef KFILE_H
#define KFILE_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

typedef struct kfile {
	FILE *f;             /* write here between open and commit/abort */
	char dest[PATH_MAX]; /* what the caller named (after symbolic links) */
	char tmp[PATH_MAX];  /* "" when writing in place */
} kfile_t;

/* Opens a temporary file next to path.  Returns kf->f, or NULL with errno
 * set and nothing created. */
FILE *kfile_open(kfile_t *kf, const char *path);
/* Flushes, syncs, closes and renames onto the destination.  Returns 0, or
 * -1 with errno set, the temporary file removed and the destination as it
 * was.  kf->f is closed either way. */
int kfile_commit(kfile_t *kf);
/* Closes and removes the temporary file (the caller's own failure). */
void kfile_abort(kfile_t *kf);
/* Would kfile_open(path) succeed?  Creates and removes a temporary file
 * (a folder: EISDIR; a FIFO or device: opened without waiting, as
 * kfile_output_ok); path itself is not touched.  For a tool that finds out before long work, not after it.
 * Returns 0, or -1 with errno set. */
int kfile_probe(const char *path);
/* kfile_open + one write of len bytes + kfile_commit. */
int kfile_write(const char *path, const void *data, size_t len);
/* The end of a command that wrote its result to stdout: flushes it and
 * checks for a write error (a full disk, a closed pipe), so that
 * `tool > FILE` on a full disk fails instead of leaving an empty FILE
 * with exit 0.  0, or -1 after one line on stderr naming who. */
int kfile_stdout_done(const char *who);
/* An input opened for reading, refused at once unless it is a regular
 * file: a FIFO would block the open (and the tool) until a writer came, a
 * device or a folder is no input.  NULL with errno set (EINVAL for "not a
 * regular file"); kfile_input_error(errno) says it in words. */
FILE *kfile_open_input(const char *path);
/* Before a command works: can OUT be its output?  Not an empty name, not
 * a folder, not a symbolic link to nothing, not a FIFO without a reader
 * (opened without waiting; a FIFO's descriptor stays open so that its
 * reader sees no end of file before the output), and not the same file as
 * its input IN (NULL: none), which the output would replace.  0, or -1
 * with *why set to a phrase for "OUT <why>". */
int kfile_output_ok(const char *out, const char *in, const char **why);
const char *kfile_input_error(int err);

#endif /* KFILE_H */
