#!/usr/bin/env bash
# ci/test.sh - the README's test command: install what is missing, check the
# formatting and the layering (ci/check-layering.sh), then configure, build
# and ctest the asan, tsan, msan and release presets, and build the afl
# preset's fuzz targets, replay its fuzz-regression tests with them and run
# 20 s of ci/afl.sh on them (afl_campaign), and on a mutant's copy of the
# tree, after its finding (afl_campaign_mutant).
# Budget: under 8 minutes on 2 quiet cores from a clean clone.
# The presets after the first build one after the other (at nice 10)
# beside the tests of the ones before them.  Every test of a preset runs, except in tsan the
# label "tool" (single-threaded tool code: asan, msan and release run it);
# docs/install.md has the table of where each label runs and why.
# The console gets one line a phase, stamped with the wall and CPU seconds
# (this script's children's, as they end) since the start, and one with its
# result (a preset's build: its time and steps; its tests: passed/failed,
# ctest's closing summary and the slowest tests); everything else
# goes to the log it names first, build/test.log.  A failure prints the
# tail of what failed (the failed tests' own output) and exits non-zero.
#   ci/test.sh [--help]   (KMGR_PRESETS, KMGR_JOBS, KMGR_SKIP_AFL adjust it;
#   KMGR_CTEST_ARGS, e.g. "-L unit", narrows the presets' ctest runs)
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
case "${1:-}" in
"") ;;
-h | --help) kmgr_usage; exit 0 ;;
*) echo "test: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
KMGR_ROOT=$PWD
. ci/lib/toolchain.sh
. ci/lib/build.sh
. ci/lib/targets.sh
kmgr_python_direct
start=$(date +%s)
mkdir -p build
log=$PWD/build/test.log
: >"$log"
rm -f "$log".build-* "$log".line-* "$log".status-* # a run before this one's
echo "test.sh: full log in $log"
# stamp TEXT: a phase's line, with the wall time and the CPU time (user +
# system of every process this script has waited for) since the start
tick=$(getconf CLK_TCK)
stamp() {
	local f line
	read -r -a f </proc/$$/stat # fields 14-17: utime stime cutime cstime
	line="=== [$(($(date +%s) - start))s, cpu $(((f[13] + f[14] + f[15] + f[16]) / tick))s] $*"
	echo "$line"
	echo "$line" >>"$log"
}

# An interrupt or a failure stops the build running beside the tests
# (start_builds) and the tests (run_tests): each runs in a process group
# of its own, and the whole group is stopped, so that no test outlives
# the script
bg_pid="" ct_pid=""
stop_children() {
	[ -z "$bg_pid" ] || kill -TERM -- -"$bg_pid" 2>/dev/null || true
	[ -z "$ct_pid" ] || kill -TERM -- -"$ct_pid" 2>/dev/null || true
}
trap stop_children EXIT
trap 'stop_children; echo "test.sh: interrupted (log: $log)" >&2; exit 130' INT
trap 'stop_children; echo "test.sh: terminated (log: $log)" >&2; exit 143' TERM

# step NAME CMD...: CMD's output to the log; on failure its tail and exit 1
step() {
	local name=$1 rc=0 mark
	shift
	stamp "$name"
	mark=$(wc -l <"$log")
	("$@") >>"$log" 2>&1 </dev/null || rc=$?
	[ "$rc" != 0 ] || return 0
	echo "test.sh: $name FAILED (status $rc); its output:" >&2
	tail -n +"$((mark + 1))" "$log" | tail -n 40 | sed 's/^/    /' >&2
	exit 1
}

# failed_output DIR: each failed test's own output (ctest keeps it in
# Testing/Temporary/LastTest.log), its last 30 lines, on the console
failed_output() {
	local t
	for t in $(sed -n 's/^[[:space:]]*[0-9]* - \([^ ]*\) (.*)$/\1/p' "$2"); do
		echo "--- $t: the end of its output" >&2
		awk -v t="$t" '$0 ~ "^[0-9]+/[0-9]+ Test: " t "$" { on = 1; next }
			on && /^<end of output>$/ { exit } on' "$1/Testing/Temporary/LastTest.log" |
			tail -n 30 | sed 's/^/    /' >&2
	done
}

# run_tests PRESET CTEST-ARGS...: ctest's output to the log, and its
# counts, closing summary and slowest tests on the console
run_tests() {
	local preset=$1 out rc=0 sum slow
	shift
	out=$log.ctest # the one run's output, for its summary; kept beside the log
	set -m # its own process group, for stop_children; wait returns on a signal
	ctest --preset "$preset" --output-on-failure "$@" >"$out" 2>&1 </dev/null &
	ct_pid=$!
	set +m
	wait "$ct_pid" || rc=$?
	ct_pid=""
	cat "$out" >>"$log"
	sum=$(grep -aE '^[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$out" || true)
	slow=$(sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) [. ]*Passed *\([0-9.]*\) sec$/\2 \1/p' "$out" |
		sort -rn | awk 'NR <= 5 { printf "%s%s %.0fs", (NR > 1 ? ", " : ""), $2, $1 }')
	echo "${sum:-ctest printed no summary (status $rc)}${slow:+; slowest: $slow}"
	if [ "$rc" != 0 ]; then
		echo "test.sh: tests of $preset FAILED:" >&2
		sed -n '/^The following tests FAILED:/,$p' "$out" | grep -avE '^Errors while running' >&2 || tail -n 20 "$out" >&2
		failed_output "build/$preset" "$out"
		exit 1
	fi
}

step deps bash ci/deps.sh
step format bash ci/format.sh --check
# Only lib/sched touches threads, locks, atomics and time; the self-test
# proves the check still turns red on a bad line.
step layering bash ci/check-layering.sh
step "layering self-test" bash ci/check-layering.sh --self-test
step "ClusterFuzzLite/OSS-Fuzz files" bash ci/cflite-check.sh --yaml-only

jobs=${KMGR_JOBS:-2}
presets=${KMGR_PRESETS:-asan tsan msan release}
[ -n "${KMGR_SKIP_AFL:-}" ] || presets="$presets afl"

# all_but DIR PHONY: what DIR's ninja "all" builds but PHONY (a folder's
# "all"), as ninja targets: each folder's "all" on the way to PHONY is
# opened into its own inputs, the others are kept whole.  Read from
# DIR's build.ninja (after the configure, before the build).
all_but() {
	local dir=$1 skip=$2 t queue=(all)
	while [ ${#queue[@]} -gt 0 ]; do
		t=${queue[0]}
		queue=("${queue[@]:1}")
		if [ "$t" = "$skip" ]; then
			continue
		elif [ "$t" = all ] || case $skip in "${t%all}"*) true ;; *) false ;; esac then
			mapfile -t -O "${#queue[@]}" queue < <(ninja -C "$dir" -t query "$t" |
				awk '/^  input: phony$/ { on = 1; next } /^  outputs:$/ { on = 0 } on { print $1 }')
		else
			echo "$t"
		fi
	done
}

# build_cmd PRESET: sets cmd to the build of PRESET.  The afl preset builds
# what it is for and what its tests run: every fuzz target (all ci/afl.sh
# and the OSS-Fuzz build build) and the programs of its fuzz-regression
# tests, not the 70-odd test and tool programs the other presets compile
# with the same clang and warnings.
# The tsan, msan and release presets build everything but the
# examples/pthread/ programs, which only the asan preset's tests run (and
# ci/pthread-eval.sh, on an asan tree): 32 steps of instrumented compiles
# and libFuzzer links each (docs/bench-notes/2026-12-04-suite-time.md).
build_cmd() {
	local t fuzz tests
	cmd=(cmake --build --preset "$1" -j "$jobs")
	case $1 in
	tsan | msan | release)
		for t in $(all_but "build/$1" examples/pthread/all); do cmd+=(--target "$t"); done
		return 0
		;;
	afl) ;;
	*) return 0 ;;
	esac
	fuzz=$(kmgr_targets ' ') && tests=$(kmgr_test_targets build/afl fuzz-regression) || exit 1
	for t in $fuzz; do cmd+=(--target "fuzz_$t"); done
	for t in $tests; do cmd+=(--target "$t"); done
}

# The presets after the first build one after the other, at nice 10,
# beside the tests (the foreground): the tests leave much of the two CPUs
# idle (sleeps, waits on children) and the builds take what they leave,
# each as soon as the one before it is done rather than when the tests
# of a preset end.  A build's configure and ninja output go to a log of
# its own ($log.build-PRESET, appended to the log when its tests come),
# its one line to $log.line-PRESET and its status to $log.status-PRESET;
# the first failure ends the pipeline.
build_pipeline() {
	local p rc
	renice -n 10 -p "$BASHPID" >/dev/null 2>&1 || true
	for p in "$@"; do
		rc=0
		: >"$log.build-$p"
		{
			kmgr_configure test.sh "build/$p" --always --preset "$p" >>"$log.build-$p" 2>&1 &&
				build_cmd "$p" && kmgr_build_quiet "$log.build-$p" "${cmd[@]}"
		} >"$log.line-$p" 2>&1 || rc=$?
		echo "$rc" >"$log.status-$p"
		[ "$rc" = 0 ] || return 1
	done
}
start_builds() {
	[ $# -gt 0 ] || return 0
	stamp "build $* (one after the other, beside the tests, at nice 10)"
	set -m # its own process group: an interrupt stops the whole pipeline
	build_pipeline "$@" </dev/null &
	bg_pid=$!
	set +m
}
# await_build PRESET: waits for PRESET's build; its line, or its failure
await_build() {
	local rc
	while [ ! -f "$log.status-$1" ] && kill -0 "$bg_pid" 2>/dev/null; do
		sleep 0.2
	done
	rc=$(cat "$log.status-$1" 2>/dev/null || echo "none")
	cat "$log.build-$1" >>"$log" 2>/dev/null || true
	stamp "build $1 ended"
	if [ "$rc" != 0 ]; then
		# its one line (a build's failure and tail), else the end of its log
		# (a configure's errors, or why it never ran)
		if [ -s "$log.line-$1" ]; then
			cat "$log.line-$1" >&2
		else
			echo "test.sh: configure or build of $1 FAILED (status $rc); its log's last lines:" >&2
			tail -n 40 "$log.build-$1" 2>/dev/null | sed 's/^/    /' >&2
		fi
		exit 1
	fi
	cat "$log.line-$1"
}

# Where each label runs (docs/install.md, "Which tests run where"): all
# of them in asan, msan and release; in tsan all but "tool" (single-
# threaded tool code on text: nothing for TSan to see); in afl the
# fuzz-regression replays.
# shellcheck disable=SC2086 # the presets: words
set -- $presets
if [ $# -gt 0 ]; then
	step "configure $1" kmgr_configure test.sh "build/$1" --always --preset "$1"
	build_cmd "$1"
	stamp "build $1"
	kmgr_build_quiet "$log" "${cmd[@]}" || exit 1
fi
first=1
while [ $# -gt 0 ]; do
	preset=$1
	shift
	if [ "$first" = 1 ]; then
		start_builds "$@"
		first=0
	else
		await_build "$preset"
	fi
	stamp "test $preset"
	# shellcheck disable=SC2086 # KMGR_CTEST_ARGS: words, as ctest takes them
	case $preset in
	afl) run_tests afl -L '^(fuzz-regression|afl-campaign)$' -j "$jobs" ;;
	tsan) run_tests tsan -j "$jobs" -LE tool ${KMGR_CTEST_ARGS:-} ;;
	*) run_tests "$preset" -j "$jobs" ${KMGR_CTEST_ARGS:-} ;;
	esac
	[ $# = 0 ] || stamp "tests of $preset done"
done
[ -z "$bg_pid" ] || { wait "$bg_pid" || true; bg_pid=""; }

# The mutants as negative controls take longer than CI's budget allows
# (BENCHMARKS.md); ci/nightly.sh runs them, and so does this when asked.
if [ -n "${KMGR_MUTANT_CONTROLS:-}" ]; then
	step "mutant controls" bash ci/mutant-controls.sh --jobs "$jobs"
fi
stamp "all green (log: $log)"
