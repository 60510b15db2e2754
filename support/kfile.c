/*
 * kfile.c - output files written whole or not at all (kfile.h).
 */
#include "kfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Opens a destination that is not a regular file for writing without
 * waiting: a FIFO with no reader is ENXIO at once, not an open that blocks
 * until a reader comes (after all the work).  The descriptor is blocking
 * again once open, so a slow reader slows the writes, as with a shell. */
static int open_special(const char *path)
{
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC), flags;

	if (fd < 0)
		return -1;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* fdopen(fd, "w"); on failure fd is closed (and the file `made`, when not
 * NULL, removed) with fdopen's errno kept for the caller's message. */
static FILE *fdopen_or_close(int fd, const char *made)
{
	FILE *f = fdopen(fd, "w");
	int err;

	if (f)
		return f;
	err = errno;
	close(fd);
	if (made)
		unlink(made);
	errno = err;
	return NULL;
}

/* In place: the destination exists and is not a regular file (opened
 * without waiting), or is a regular file that cannot be replaced. */
static FILE *open_in_place(kfile_t *kf, const char *path, bool special)
{
	int fd;

	kf->tmp[0] = 0;
	snprintf(kf->dest, sizeof(kf->dest), "%s", path);
	if (!special) {
		kf->f = fopen(path, "w");
		return kf->f;
	}
	fd = open_special(path);
	if (fd < 0)
		return NULL;
	kf->f = fdopen_or_close(fd, NULL);
	return kf->f;
}

/* A symbolic link that leads nowhere: refused, not replaced by a file and
 * not followed.  Replacing it loses the link the user made; following it
 * creates a file under a name the user never wrote, perhaps in another
 * folder (the old /tmp link trick).  "create the target or remove the
 * link" is one step for the user, and neither guess is taken for them. */
static bool dangling_link(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && stat(path, &st) != 0 &&
	       errno == ENOENT;
}

/* O_EXCL with a name of our own, in the destination's folder: a short
 * name whatever the destination's (".kf-PID-N-ADDR", under NAME_MAX even
 * for a destination of 255 characters).  The mode follows the umask, as a
 * plain fopen's would (mkstemp's is 0600); an existing destination's mode
 * and owner are copied (as far as allowed).  The pid and the address of kf
 * tell processes and concurrent callers apart without a shared counter. */
static int create_tmp(kfile_t *kf, const struct stat *old)
{
	const char *slash = strrchr(kf->dest, '/');
	int dirlen = slash ? (int)(slash - kf->dest + 1) : 0;

	for (int attempt = 0; attempt < 100; attempt++) {
		int fd, n;

		n = snprintf(kf->tmp, sizeof(kf->tmp), "%.*s.kf-%d-%d-%lx", dirlen, kf->dest,
		             (int)getpid(), attempt, (unsigned long)(uintptr_t)kf & 0xffffff);
		if (n < 0 || (size_t)n >= sizeof(kf->tmp)) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = open(kf->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd >= 0 && old) {
			if (fchown(fd, old->st_uid, old->st_gid) != 0) {
				/* not ours to give away: the mode below still holds */
			}
			(void)fchmod(fd, old->st_mode & 07777);
		}
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

FILE *kfile_open(kfile_t *kf, const char *path)
{
	struct stat st;
	char *real = NULL, dest[PATH_MAX];
	bool exists;
	int fd;

	memset(kf, 0, sizeof(*kf));
	signal(SIGXFSZ, SIG_IGN);
	if (dangling_link(path)) {
		errno = ENOENT;
		return NULL;
	}
	if (stat(path, &st) == 0) {
		/* a device or FIFO is no file to replace; a file with other names
		 * (hard links) keeps them only if written where it is */
		if (!S_ISREG(st.st_mode) || st.st_nlink > 1)
			return open_in_place(kf, path, !S_ISREG(st.st_mode));
		/* through a symbolic link: replace the file, keep the link */
		real = realpath(path, NULL);
	}
	if (snprintf(kf->dest, sizeof(kf->dest), "%s", real ? real : path) >=
	    (int)sizeof(kf->dest)) {
		free(real);
		errno = ENAMETOOLONG;
		return NULL;
	}
	free(real);
	exists = stat(kf->dest, &st) == 0;
	fd = create_tmp(kf, exists ? &st : NULL);
	/* a file the user may write in a folder they may not (0666 in 0555):
	 * the shell's `>` writes it, so do we, in place (a failed write can
	 * then leave it short, as for hard links) */
	if (fd < 0 && exists && (errno == EACCES || errno == EPERM) &&
	    access(kf->dest, W_OK) == 0) {
		snprintf(dest, sizeof(dest), "%s", kf->dest);
		return open_in_place(kf, dest, false);
	}
	if (fd < 0)
		return NULL;
	kf->f = fdopen_or_close(fd, kf->tmp);
	return kf->f;
}

int kfile_commit(kfile_t *kf)
{
	int bad, err = 0;

	bad = fflush(kf->f) != 0 || ferror(kf->f);
	if (bad)
		err = errno ? errno : EIO;
	/* fsync before rename, or a crash can leave an empty file under the
	 * old name; a device written in place may not support it (EINVAL) */
	if (!bad && kf->tmp[0] && fsync(fileno(kf->f)) != 0) {
		bad = 1;
		err = errno;
	}
	if (fclose(kf->f) != 0 && !bad) {
		bad = 1;
		err = errno;
	}
	kf->f = NULL;
	if (!bad && kf->tmp[0] && rename(kf->tmp, kf->dest) != 0) {
		bad = 1;
		err = errno;
	}
	if (bad && kf->tmp[0])
		unlink(kf->tmp);
	errno = err;
	return bad ? -1 : 0;
}

void kfile_abort(kfile_t *kf)
{
	if (kf->f)
		fclose(kf->f);
	kf->f = NULL;
	if (kf->tmp[0])
		unlink(kf->tmp);
}

/* A FIFO or device, opened as kfile_open would (without waiting).  The
 * descriptor stays open to the end of the process: closed now, a reader
 * already there would see an end of file before the output came. */
static int probe_special(const char *path)
{
	struct stat st;
	int fd = open_special(path);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode))
		close(fd);
	return 0;
}

int kfile_probe(const char *path)
{
	struct stat st;
	kfile_t kf;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			errno = EISDIR;
			return -1;
		}
		return probe_special(path);
	}
	if (!kfile_open(&kf, path))
		return -1;
	kfile_abort(&kf);
	return 0;
}

int kfile_write(const char *path, const void *data, size_t len)
{
	kfile_t kf;
	int err;

	if (!kfile_open(&kf, path))
		return -1;
	if (fwrite(data, 1, len, kf.f) != len) {
		err = errno ? errno : EIO;
		kfile_abort(&kf);
		errno = err;
		return -1;
	}
	return kfile_commit(&kf);
}

int kfile_stdout_done(const char *who)
{
	int err = fflush(stdout) ? errno : 0;

	if (!err && ferror(stdout))
		err = EIO;
	if (!err)
		return 0;
	fprintf(stderr, "%s: writing to standard output failed: %s\n", who, strerror(err));
	return -1;
}

FILE *kfile_open_input(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), flags;
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 || !(f = fdopen(fd, "rb"))) {
		close(fd);
		return NULL;
	}
	return f;
}

const char *kfile_input_error(int err)
{
	return err == EINVAL ? "not a regular file (a FIFO, a device or a folder)" : strerror(err);
}

int kfile_output_ok(const char *out, const char *in, const char **why)
{
	struct stat so, si;

	if (!*out) {
		*why = "is an empty name: give a file name";
		return -1;
	}
	if (dangling_link(out)) {
		*why = "is a symbolic link to nothing: create its target or remove the link";
		return -1;
	}
	if (stat(out, &so) != 0)
		return 0; /* a new file: kfile_probe says whether it can be made */
	if (S_ISDIR(so.st_mode)) {
		*why = "is a folder: give a file name";
		return -1;
	}
	if (S_ISFIFO(so.st_mode) && probe_special(out) != 0) {
		*why = errno == ENXIO ? "is a FIFO with no reader: start its reader first"
		                      : "is a FIFO that cannot be opened for writing";
		return -1;
	}
	if (in && !stat(in, &si) && so.st_dev == si.st_dev && so.st_ino == si.st_ino) {
		*why = "is the input itself: the output would replace it";
		return -1;
	}
	return 0;
}
