# ci/lib/build.sh - sourced by the entry scripts that build (test.sh;
# fuzz.sh and afl.sh may): a build step as one console line instead of
# ninja's hundreds of progress lines.
#
#   kmgr_build_quiet LOG COMMAND...
#       runs COMMAND (e.g. cmake --build --preset asan -j2) with its
#       stdout and stderr appended to LOG, and prints one line: "built in
#       Ns (K steps, log: LOG)", K the number of ninja steps that ran.  On
#       failure: "build FAILED after Ns (log: LOG)", the last 40 lines of
#       the log (the compiler's error is there) on stderr, and COMMAND's
#       status.
#       Spawns COMMAND with its argv: no shell text is built from it.

kmgr_build_quiet() {
	local log=$1 t0 rc=0 mark steps
	shift
	t0=$(date +%s)
	printf '$ %s\n' "$*" >>"$log"
	mark=$(wc -l <"$log")
	"$@" >>"$log" 2>&1 </dev/null || rc=$?
	# ninja's status lines, "[k/N] ...", of this command
	steps=$(tail -n +"$((mark + 1))" "$log" | grep -cE '^\[[0-9]+/[0-9]+\] ' || true)
	if [ "$rc" = 0 ]; then
		echo "built in $(($(date +%s) - t0))s ($steps steps, log: $log)"
		return 0
	fi
	echo "build FAILED after $(($(date +%s) - t0))s (status $rc, log: $log); its last lines:" >&2
	tail -n +"$((mark + 1))" "$log" | tail -n 40 | sed 's/^/    /' >&2
	return "$rc"
}

#   kmgr_test_targets DIR LABEL
#       the build outputs (paths relative to the configured tree DIR, as
#       ninja names them) that the ctests of DIR labelled LABEL run or read:
#       every argument of their commands that DIR's build.ninja builds.
#       Read from DIR's CTestTestfile.cmake files, which exist after the
#       configure, before the build.  One a line; status 1 if no test has
#       LABEL (a build of nothing would pass unnoticed).

kmgr_test_targets() {
	local dir=$1 label=$2 outs
	outs=$(ninja -C "$dir" -t targets all | sed -n 's/^\(.*\): [^ ]*$/\1/p') || return 1
	python3 - "$dir" "$label" "$outs" <<'PY'
import os, re, sys
top, label, outs = os.path.realpath(sys.argv[1]), sys.argv[2], set(sys.argv[3].split("\n"))
cmds, labelled = {}, set()
for d, _, files in os.walk(top):
    if "CTestTestfile.cmake" not in files:
        continue
    text = open(os.path.join(d, "CTestTestfile.cmake"), encoding="utf-8").read()
    for m in re.finditer(r"^add_test\(\[=\[(.*?)\]=\] (.*)\)$", text, re.M):
        cmds[m.group(1)] = re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2))
    for m in re.finditer(r"^set_tests_properties\(\[=\[(.*?)\]=\] PROPERTIES .*$", text, re.M):
        l = re.search(r' LABELS "([^"]*)"', m.group(0))
        if l and label in l.group(1).split(";"):
            labelled.add(m.group(1))
if not labelled:
    sys.exit("build.sh: no test of %s is labelled %s" % (top, label))
want = set()
for t in labelled:
    for a in cmds.get(t, []):
        r = os.path.relpath(a, top) if a.startswith(top + "/") else None
        if r in outs:
            want.add(r)
print("\n".join(sorted(want)))
PY
}
