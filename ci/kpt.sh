#!/usr/bin/env bash
# ci/kpt.sh FILE.c [--seconds N] [--twin DEFINES] [--replays N] [--build DIR] [--svcomp] [--help]
# One command for a pthreads program of your own under the controlled
# scheduler (kpt, docs/pthread.md): configures an asan tree (build/kpt by
# default) with -DKPT_PROGRAMS=FILE.c, builds kpt_<name>, fuzzes it from an
# empty corpus on one pinned CPU (taskset -c $KMGR_FUZZ_CPU, default 0) for
# up to N seconds (--seconds, default 60), replays the finding N times
# (--replays, default 10) and prints a one-screen report: found or not,
# the time to the finding, its signature, the schedule the input chose, and
# the line that reproduces it.  FILE.c is compiled unchanged with its own
# flags: its main is the scenario (a *.i file is taken as preprocessed).
# --twin DEFINES (comma-separated, e.g. KPT_TWIN or KPT_TWIN,N=3): the same
# file built again with those defines as the correct twin; it must pass the
# finding and stay clean for N seconds of fuzzing.
# --svcomp: an SV-COMP benchmark program (sv-benchmarks): entering its
# reach_error() is the finding, abort() ends an infeasible path, and the
# __VERIFIER_* calls come from fuzz/pthread/kpt_svcomp.c.
# The finding is kept as DIR/kpt-findings/<name>/crash-*.
# Interrupted (INT, TERM, HUP): stops the fuzzer, prints what it has,
# marked "interrupted", removes its scratch folder, exits 128+signal.
# Exit status: 0 nothing found (and the twin clean), 1 a finding in the
# program (or the twin not clean), 2 bad usage or a build that failed.
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
. "$(dirname "$0")/lib/signals.sh"
. "$(dirname "$0")/lib/pthread.sh"
kmgr_signals_reset "$0" "$@"

root=$(cd "$(dirname "$0")/.." && pwd)
file="" secs=60 twin="" replays=10 build=$root/build/kpt svcomp=OFF
cpu=${KMGR_FUZZ_CPU:-0}
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) kmgr_usage; exit 0 ;;
	--svcomp) svcomp=ON; shift ;;
	--seconds | --twin | --replays | --build)
		[ $# -ge 2 ] || kmgr_die "$1 needs a value"
		case "$1" in
		--seconds) secs=$2 ;;
		--twin) twin=$2 ;;
		--replays) replays=$2 ;;
		--build) build=$2 ;;
		esac
		shift 2
		;;
	-*) kmgr_die "unknown option $1" ;;
	*)
		[ -z "$file" ] || kmgr_die "one program at a time ($file, then $1)"
		file=$1
		shift
		;;
	esac
done
[ -n "$file" ] || kmgr_die "no program named (ci/kpt.sh FILE.c)"
[ -f "$file" ] && [ -r "$file" ] || kmgr_die "$file: no such readable file"
case "$file" in *.c | *.i) ;; *) kmgr_die "$file: a C file (.c, or .i when preprocessed) is expected" ;; esac
for v in "$secs" "$replays"; do
	[[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || kmgr_die "--seconds and --replays take a whole number > 0"
done
[[ -z "$twin" || "$twin" =~ ^[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.-]*)?(,[A-Za-z_][A-Za-z0-9_]*(=[A-Za-z0-9_.-]*)?)*$ ]] ||
	kmgr_die "--twin: comma-separated NAME or NAME=VALUE defines"
file=$(cd "$(dirname "$file")" && pwd)/$(basename "$file")
name=$(basename "$file")
name=${name%.*}
[[ "$name" =~ ^[A-Za-z0-9_-]+$ ]] || kmgr_die "$file: the name must be letters, digits, _ or - (it names the target)"
command -v taskset >/dev/null 2>&1 || kmgr_die "taskset is missing (util-linux)"
mkdir -p "$build" 2>/dev/null && [ -w "$build" ] || kmgr_die "--build $build: cannot write there"
build=$(cd "$build" && pwd)

KMGR_ROOT=$root
. "$root/ci/lib/toolchain.sh"
kmgr_toolchain kpt
# the program list is this run's: configure every time (cheap once the tree exists)
kmgr_configure kpt "$build" --always --preset asan -DKPT_PROGRAMS="$file" \
	-DKPT_TWIN_DEFINES="${twin//,/;}" -DKPT_SVCOMP="$svcomp"
bin=$build/fuzz/pthread/kpt_$name twinbin=$build/fuzz/pthread/kpt_${name}_twin
tgts=(--target "kpt_$name")
[ -z "$twin" ] || tgts+=(--target "kpt_${name}_twin")
echo "== kpt: building ${tgts[*]} in $build" >&2
if ! cmake --build "$build" -j2 "${tgts[@]}" >"$build/kpt-build.log" 2>&1; then
	grep -E 'error|undefined reference' "$build/kpt-build.log" | head -n 15 >&2 || tail -n 15 "$build/kpt-build.log" >&2
	echo "kpt: building $file failed (the whole log: $build/kpt-build.log)" >&2
	exit 2
fi
. "$root/sanitizers/env.sh"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/kpt.XXXXXX")
found="" ttd="" sig="" rep="" sched="" keep="" twc="" twf=""
report() {
	local mark=${1:-}
	echo
	echo "== kpt report: $file$mark"
	echo "  program     kpt_$name (asan, libFuzzer; ${secs}s budget, CPU $cpu)"
	if [ -z "$found" ]; then
		echo "  found       (not finished)"
	elif [ "$found" = no ]; then
		echo "  found       nothing in ${secs}s"
	else
		echo "  found       yes, after $ttd"
		echo "  signature   $sig"
		case "$sig" in "KPT LIMIT"* | "KPT UNSUPPORTED"* | "KPT MISUSE"*)
			echo "              (a limit of kpt, not the program's failure: the log says how to raise it)" ;;
		esac
		echo "  schedule    ${sched:-?}"
		echo "  replay      $rep fail the same way"
		echo "  reproduce   $bin $keep"
		echo "              (KPT_VERBOSE=1 prints the schedule; KMGR_SCHED_ENGINE=threads: real threads)"
	fi
	if [ -n "$twin" ]; then
		echo "  twin        -D${twin//,/ -D}: on the finding ${twc:--}, fuzzed ${secs}s: ${twf:-(not run)}"
	fi
}
interrupted_report() { report " (interrupted by SIG$interrupted: partial)"; }
kmgr_pt_traps interrupted_report

rc=0
echo "== kpt: fuzzing kpt_$name for up to ${secs}s on CPU $cpu" >&2
t0=$(date +%s.%N)
kmgr_pt_fuzz "$bin" "$secs" "$scratch/bug"
crash=$(find "$scratch/bug/art" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \) -print -quit)
if [ -z "$crash" ]; then
	found=no
else
	found=yes rc=1
	ttd=$(awk -v a="$t0" -v b="$(stat -c %.3Y "$crash")" 'BEGIN {printf "%.2f s (process start included)", b - a}')
	sig=$(kmgr_pt_signature "$scratch/bug/log")
	mkdir -p "$build/kpt-findings/$name"
	keep=$build/kpt-findings/$name/$(basename "$crash")
	cp "$crash" "$keep"
	# the schedule the input chose (KPT_VERBOSE's first line)
	(KPT_VERBOSE=1 timeout -s KILL 60 "$bin" -close_fd_mask=1 "$keep") >"$scratch/verbose.log" 2>&1 || true
	sched=$(grep -m1 '^kpt: access points' "$scratch/verbose.log" | sed 's/^kpt: //' || true)
	fails=0
	for i in $(seq "$replays"); do
		# the subshell keeps the shell's "Aborted" line in the replay's log
		(timeout -s KILL 60 taskset -c "$cpu" "$bin" -close_fd_mask=1 "$keep") >"$scratch/replay.log" 2>&1 &&
			continue
		[ "$(kmgr_pt_signature "$scratch/replay.log")" = "$sig" ] && fails=$((fails + 1))
	done
	rep=$fails/$replays
fi
if [ -n "$twin" ]; then
	if [ -n "$keep" ]; then
		if (timeout -s KILL 60 taskset -c "$cpu" "$twinbin" -close_fd_mask=1 "$keep") >"$scratch/twin-replay.log" 2>&1; then
			twc=passes
		else
			twc="FAILS ($(kmgr_pt_signature "$scratch/twin-replay.log"))" rc=1
		fi
	fi
	echo "== kpt: fuzzing the twin kpt_${name}_twin for ${secs}s" >&2
	kmgr_pt_fuzz "$twinbin" "$secs" "$scratch/twin"
	n=$(find "$scratch/twin/art" -maxdepth 1 -type f | wc -l)
	if [ "$n" = 0 ]; then
		twf="0 findings"
	else
		twf="$n finding(s): $(kmgr_pt_signature "$scratch/twin/log")" rc=1
	fi
fi
report
exit "$rc"
