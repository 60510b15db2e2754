#!/usr/bin/env bash
# ci/test.sh - the README's test command: install what is missing, check the
# formatting and the layering (ci/check-layering.sh), then configure, build
# and ctest the asan, tsan, msan and release presets, and check that the afl
# preset builds.
# Budget: under 8 minutes on 2 quiet cores from a clean clone.
# The console gets one line a phase (a preset's build: its time and steps;
# its tests: passed/failed and ctest's closing summary); everything else
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
start=$(date +%s)
mkdir -p build
log=$PWD/build/test.log
: >"$log"
echo "test.sh: full log in $log"
stamp() {
	echo "=== [$(($(date +%s) - start))s] $*"
	echo "=== [$(($(date +%s) - start))s] $*" >>"$log"
}
trap 'echo "test.sh: interrupted (log: $log)" >&2; exit 130' INT
trap 'echo "test.sh: terminated (log: $log)" >&2; exit 143' TERM

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
	ctest --preset "$preset" --output-on-failure "$@" >"$out" 2>&1 </dev/null || rc=$?
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
for preset in ${KMGR_PRESETS:-asan tsan msan release}; do
	# afresh over the cache of a failed or foreign configure
	step "configure $preset" kmgr_configure test.sh "build/$preset" --always --preset "$preset"
	stamp "build $preset"
	kmgr_build_quiet "$log" cmake --build --preset "$preset" -j "$jobs" || exit 1
	stamp "test $preset"
	# shellcheck disable=SC2086 # KMGR_CTEST_ARGS: words, as ctest takes them
	run_tests "$preset" -j "$jobs" ${KMGR_CTEST_ARGS:-}
done

if [ -z "${KMGR_SKIP_AFL:-}" ]; then
	step "configure afl" kmgr_configure test.sh build/afl --always --preset afl
	# What the afl preset is for and what its tests run: every fuzz target
	# (what ci/afl.sh and the OSS-Fuzz build build) and the executables
	# of the fuzz-regression tests, not the 70-odd test and tool programs
	# the other presets already compile with the same warnings.
	targets=$(kmgr_test_targets build/afl fuzz-regression) || exit 1
	stamp "build afl (fuzz targets and fuzz-regression tests)"
	# shellcheck disable=SC2046 # the targets: one word each
	kmgr_build_quiet "$log" cmake --build --preset afl -j "$jobs" \
		$(printf -- '--target fuzz_%s ' $(kmgr_targets ' ')) $(printf -- '--target %s ' $targets) || exit 1
	stamp "test afl (fuzz-regression)"
	run_tests afl -L fuzz-regression -j "$jobs"
fi
# The mutants as negative controls take longer than CI's budget allows
# (BENCHMARKS.md); ci/nightly.sh runs them, and so does this when asked.
if [ -n "${KMGR_MUTANT_CONTROLS:-}" ]; then
	step "mutant controls" bash ci/mutant-controls.sh --jobs "$jobs"
fi
stamp "all green (log: $log)"
