#!/usr/bin/env bash
# ci/signal-check.sh --build DIR [--quick] [--help]
# The signal rule, checked: every long-running tool and script stops what
# it started when it gets SIGINT, SIGTERM or SIGHUP, keeps what it has
# (a summary or JSON marked interrupted) and exits 128+signal.  Each case
# starts the tool in the background with KMGR_SIGCHECK_MARKER=<unique> in
# its environment, sends the signal once it is at work, then asserts the
# exit status, that no process carrying the marker is left (children
# inherit it), that the partial output exists and that no scratch file is
# left in its TMPDIR.
#   stress_refdrain --json F       INT, TERM, HUP
#   kmgr-repro replay (a stress repro file)   INT, TERM, HUP
#   ci/fuzz.sh --json F            INT, TERM (--quick: TERM)
#   ci/nightly.sh (one stress run) INT, TERM (--quick: TERM)
# DIR is a configured and built asan tree (the ctest's own).
# Exit status: 0 every case held, 1 one did not, 2 bad usage.
set -uo pipefail
. "$(dirname "$0")/lib/usage.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
build="" quick=0
usage() { kmgr_usage; }
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	--quick) quick=1; shift ;;
	--build)
		[ $# -ge 2 ] && [ -n "$2" ] || { echo "signal-check: --build needs a value" >&2; exit 2; }
		build=$(cd "$2" 2>/dev/null && pwd) || { echo "signal-check: no folder $2" >&2; exit 2; }
		shift 2
		;;
	*) echo "signal-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ -n "$build" ] || { echo "signal-check: give --build DIR (see --help)" >&2; exit 2; }
[ -x "$build/stress/stress_refdrain" ] && [ -x "$build/tools/kmgr-repro/kmgr-repro" ] ||
	{ echo "signal-check: $build has no stress_refdrain or kmgr-repro (build it first)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/signal-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
bad=0 n=0
fail() { echo "signal-check: FAIL: $*"; bad=1; }
. "$root/sanitizers/env.sh"

# left MARKER: pids of the processes whose environment carries MARKER
left() { grep -lzx "KMGR_SIGCHECK_MARKER=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | paste -sd' '; }

# case NAME SIG WAIT CHECK -- CMD...: run CMD, SIG once it is at work, then
# the exit status, no process left, no scratch file left, and CHECK (a
# shell command, run with $out as the case's folder) must hold.  WAIT: N,
# at work N seconds after its start; or /REGEX/, at work 2 s after a line
# of its stdout or stderr matches REGEX (a script's build and start-up
# take what the machine's load makes them take), at most 120 s.
check_case() {
	local name=$1 sig=$2 wait=$3 check=$4 marker pid rc want
	shift 5
	n=$((n + 1))
	out=$work/$n
	mkdir -p "$out/tmp"
	marker=sigcheck-$$-$n-$RANDOM
	(cd "$out" && exec env KMGR_SIGCHECK_MARKER="$marker" TMPDIR="$out/tmp" "$@") \
		>"$out/stdout" 2>"$out/stderr" &
	pid=$!
	case $wait in
	/*/)
		for _ in $(seq 600); do
			grep -qE -- "${wait:1:-1}" "$out/stdout" "$out/stderr" && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.2
		done
		grep -qE -- "${wait:1:-1}" "$out/stdout" "$out/stderr" ||
			fail "$name $sig: never at work (no line ${wait}): $(tail -n 2 "$out/stderr" | tr '\n' ' ')"
		sleep 2
		;;
	*) sleep "$wait" ;;
	esac
	kill -"$sig" "$pid" 2>/dev/null
	for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$pid" 2>/dev/null; then
		fail "$name $sig: still running 60 s after the signal"
		kill -KILL "$pid"
	fi
	rc=0
	wait "$pid" || rc=$?
	want=$((128 + $(kill -l "$sig")))
	[ "$rc" = "$want" ] || fail "$name $sig: exit $rc, want $want ($(tail -n 2 "$out/stderr" | tr '\n' ' '))"
	sleep 0.5
	[ -z "$(left "$marker")" ] || fail "$name $sig: processes left: $(left "$marker")"
	[ -z "$(ls -A "$out/tmp")" ] || fail "$name $sig: scratch left in TMPDIR: $(ls -A "$out/tmp")"
	(cd "$out" && eval "$check") || fail "$name $sig: partial output: $check"
	echo "signal-check: $name $sig: exit $rc, nothing left running"
}

stress_sigs="INT TERM HUP" script_sigs="INT TERM"
[ "$quick" = 0 ] || script_sigs="TERM"

# The binaries are at work within 0.1 s of their start (stress_refdrain
# --threads 2 has all six of its threads by then, under ASan), so the
# signal comes 1 s in: each second more was two CPUs busy for nothing.
for s in $stress_sigs; do
	check_case "stress_refdrain" "$s" 1 "grep -q '\"interrupted\"' run.json" -- \
		"$build/stress/stress_refdrain" --seconds 60 --threads 2 --json run.json --quiet
done

printf 'binary stress_refdrain\nseconds 60\nthreads 2\nseed 1\n' >"$work/long.repro"
for s in $stress_sigs; do
	check_case "kmgr-repro replay" "$s" 1 "grep -q 'interrupted' stderr" -- \
		"$build/tools/kmgr-repro/kmgr-repro" replay "$work/long.repro" --times 2 --timeout 120
done

for s in $script_sigs; do
	check_case "ci/fuzz.sh" "$s" "/^== fuzz.sh: api_seq for /" "grep -q '\"interrupted\": true' fuzz.json" -- \
		env KMGR_FUZZ_BUILD="$build" KMGR_FUZZ_WORK="$work/fuzz-work" bash "$root/ci/fuzz.sh" --preset asan --minutes 2 \
		--targets api_seq --jobs 1 --json fuzz.json
done

for s in $script_sigs; do
	check_case "ci/nightly.sh" "$s" "/stress_refdrain \\(/" "grep -q '\"interrupted\"' nights/*/meta.json" -- \
		bash "$root/ci/nightly.sh" --minutes 1 --presets "$(basename "$build")" \
		--build-root "$(dirname "$build")" --binaries refdrain --skip-fuzz --skip-coverage \
		--skip-mutants --keep 0 --out nights
done

[ "$bad" = 0 ] && echo "signal-check: $n cases hold the signal rule"
exit "$bad"
