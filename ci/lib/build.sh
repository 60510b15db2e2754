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
