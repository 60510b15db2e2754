# ci/lib/workfs.sh - sourced by ci/fuzz.sh and ci/bench/scale-bench.sh:
# what the filesystem of a work folder costs libFuzzer's workers.
#
#   kmgr_workfs_note DIR VAR WHO
#       "WHO: note: ..." when DIR is on an ext4 without a journal (the root
#       disk of some VM images), nothing otherwise.  There ext4 does not
#       hand out an inode freed in the last 1-6 minutes (recently_deleted in
#       fs/ext4/ialloc.c, only when s_journal is NULL), and finds a free one
#       by reading past every such inode of the group.  A libFuzzer worker
#       deletes a file at every REDUCE and writes one at every NEW, so each
#       new file it writes scans more: 4-17% more CPU for the same
#       executions than on tmpfs, on a journaled ext4 0-1.5%
#       (docs/bench-notes/2026-12-05-work-filesystem.md).  The folder's
#       device (st_dev) names its block device through /sys/dev/block,
#       whose ext4 entry says whether a journal thread runs.  VAR names the
#       setting that moves DIR (KMGR_FUZZ_WORK, TMPDIR).

kmgr_workfs_note() {
	python3 - "$1" "$2" "$3" <<'PY' 2>/dev/null || true
import os, sys
d, var, who = sys.argv[1:]
st = os.stat(d)
dev = "%d:%d" % (os.major(st.st_dev), os.minor(st.st_dev))
name = os.path.basename(os.path.realpath(os.path.join("/sys/dev/block", dev)))
try:
    journal = open(os.path.join("/sys/fs/ext4", name, "journal_task")).read().strip()
except OSError:
    sys.exit(0)
if journal == "<none>":
    print("%s: note: %s is on an ext4 without a journal (%s): each file libFuzzer writes there "
          "scans past the inodes deleted in the last minutes, 4-17%% of a worker's CPU; "
          "a %s on tmpfs or a journaled filesystem avoids it "
          "(docs/fuzzing.md, \"Speed\")" % (who, d, name, var))
PY
}
