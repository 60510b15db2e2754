#!/usr/bin/env bash
# ci/mutant-eval.sh MUTANT.patch [--minutes N] [--target T] [--free-running] [--preset asan|tsan]
#                   [--no-tsan-coverage] [--access-points] [--keep]
# Does the fuzzer find a deliberately broken facade?  Copies the tree to a
# temp dir, applies the patch there, builds the fuzz target, fuzzes it on
# one pinned CPU (taskset -c $KMGR_FUZZ_CPU, default 0, as an OSS-Fuzz bot) from the shipped corpus,
# reports the time to the first finding net of process start (the clock
# starts at libFuzzer's INITED line; it stops at the crash file's mtime),
# then replays the finding 10 times and reports how often it fails again.
# --free-running runs the same programs on real threads (the baseline).
# --no-tsan-coverage (tsan): the counter-free driver, library and runner
# without coverage counters (-DKMGR_TSAN_FUZZ_COVERAGE=OFF), to compare.
# --access-points: KMGR_SCHED_ACCESS_POINTS=1 for the fuzzing and the
# replays (docs/scheduler.md, "Access points"); the label gets "+ap".
# One result line at the end: MUTANT ... found=yes|no ttf=S replay=R/10 sig=...
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
. "$(dirname "$0")/lib/tree.sh"

case "${1:-}" in -h | --help) kmgr_usage; exit 0 ;; -*) kmgr_die "unknown option $1" ;; esac
[ $# -ge 1 ] || kmgr_die "want MUTANT.patch"
[ -f "$1" ] || kmgr_die "no such patch $1"
patch_file=$(realpath "$1"); shift
minutes=5 target="" backend=controlled preset=asan keep=0 cpu=${KMGR_FUZZ_CPU:-0} cov=on ap=0
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes | --target | --preset) [ $# -ge 2 ] || kmgr_die "$1 needs a value" ;;&
	--minutes) minutes=$2; shift 2 ;;
	--target) target=$2; shift 2 ;;
	--free-running) backend=free; shift ;;
	--preset) preset=$2; shift 2 ;;
	--no-tsan-coverage) cov=off; shift ;;
	--access-points) ap=1; shift ;;
	--keep) keep=1; shift ;;
	*) kmgr_die "unknown option $1" ;;
	esac
done
[ -f "$patch_file" ] || { echo "mutant-eval: no such patch $patch_file" >&2; exit 2; }
[ "$cov" = on ] || [ "$preset" = tsan ] || { echo "mutant-eval: --no-tsan-coverage needs --preset tsan" >&2; exit 2; }
src=$(cd "$(dirname "$0")/.." && pwd)
name=$(basename "$patch_file" .patch)
if [ -z "$target" ]; then
	# the target whose programs reach the bug (docs/fuzzing.md, "Mutants")
	case "$name" in
	fuzz-2-*|fuzz-4-*) target=async ;;
	fuzz-5-*|fuzz-6-*) target=api_seq ;;
	nrt-*) target=api_nrt ;;
	*) target=concurrent ;;
	esac
fi
tmp=$(mktemp -d /tmp/mutant-eval.XXXXXX)
cleanup() { [ "$keep" = 1 ] || rm -rf "$tmp"; }
trap cleanup EXIT

tree=$tmp/tree
kmgr_tree_copy "$src" "$tree"
# KMGR_MUTANT_BASE_PATCH: a fix applied first, so that a bug already in the
# library does not pass for the mutant's finding
if [ -n "${KMGR_MUTANT_BASE_PATCH:-}" ]; then
	(cd "$tree" && patch -p1 -s < "$KMGR_MUTANT_BASE_PATCH") ||
		{ echo "mutant-eval: base patch does not apply" >&2; exit 2; }
fi
kmgr_apply_mutant "$tree" "$patch_file" || exit 2
echo "mutant-eval: building $target ($preset) with $name ..." >&2
cmake --preset "$preset" -S "$tree" -B "$tmp/build" -DKMGR_TSAN_FUZZ_COVERAGE="$cov" >"$tmp/configure.log" 2>&1 ||
	{ tail -20 "$tmp/configure.log" >&2; exit 2; }
cmake --build "$tmp/build" -j2 --target "fuzz_$target" >"$tmp/build.log" 2>&1 ||
	{ tail -20 "$tmp/build.log" >&2; exit 2; }
bin=$tmp/build/fuzz/$target
mkdir -p "$tmp/work" "$tmp/art"
cp "$src/corpus/$target"/* "$tmp/work/" 2>/dev/null || true

export KMGR_FUZZ_BACKEND=$backend
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:symbolize=1}
# TSan: no abort after a report (its death callback lets libFuzzer write the
# crash file and exit), and no report of libFuzzer's own malloc in its
# deadly-signal handler, which would wedge the process before the crash file
# is written (sanitizers/tsan.options says more)
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:abort_on_error=0:report_signal_unsafe=0}
# The counter-free TSan driver has no coverage feedback: keep every seed
# (ci/fuzz.sh says why)
lf_opts=()
[ "$cov" = on ] || lf_opts=(-keep_seed=1 -cross_over_uniform_dist=1)
label=$preset
[ "$cov" = on ] || label=$preset-nocov
# access points: set or cleared explicitly, so that the caller's
# environment cannot change what the label says
if [ "$ap" = 1 ]; then
	export KMGR_SCHED_ACCESS_POINTS=1
	label=$label+ap
else
	unset KMGR_SCHED_ACCESS_POINTS
fi
# timestamp every libFuzzer line: INITED starts the clock
set +e
timeout -s KILL $((minutes * 60 + 120)) taskset -c "$cpu" "$bin" "${lf_opts[@]}" -max_total_time=$((minutes * 60)) -timeout=25 -rss_limit_mb=4096 \
	-artifact_prefix="$tmp/art/" -print_final_stats=1 "$tmp/work" 2>&1 |
	while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N)" "$line"; done >"$tmp/fuzz.log"
set -e
t_init=$(awk '/INITED/ {print $1; exit}' "$tmp/fuzz.log")
crash=$(ls -1 "$tmp/art/" 2>/dev/null | head -1 || true)
if [ -z "$crash" ]; then
	echo "MUTANT $name target=$target backend=$backend preset=$label found=no budget=${minutes}m"
	exit 1
fi
t_crash=$(find "$tmp/art/$crash" -printf '%T@')
# no INITED line: a shipped seed already failed while the corpus loaded
if [ -n "$t_init" ]; then
	ttf=$(awk -v a="$t_init" -v b="$t_crash" 'BEGIN {printf "%.1fs", b - a}')
else
	ttf=seed
fi
# the first line that names the failure (the sanitizer's, not libFuzzer's
# "deadly signal" that follows an abort)
sig=$(grep -m1 -E 'ORACLE:|KSCHED [A-Z]+|DEVICE FAULT|kmgr error:|(ERROR|WARNING): (AddressSanitizer|ThreadSanitizer|LeakSanitizer|MemorySanitizer)|SUMMARY: UndefinedBehavior|runtime error|ERROR: libFuzzer' "$tmp/fuzz.log" |
	cut -d' ' -f2- | cut -c1-110 || true)
fails=0
for i in $(seq 10); do
	# KILL: a TSan report in a process that is also handling a signal can wedge it.
	# The subshell keeps the shell's "Aborted" line for a failing replay in
	# that replay's log instead of the terminal.
	if ! (timeout -s KILL 120 taskset -c "$cpu" "$bin" "$tmp/art/$crash") >"$tmp/replay.$i.log" 2>&1; then
		fails=$((fails + 1))
	fi
done
mkdir -p "$src/fuzz-work/mutants"
cp "$tmp/art/$crash" "$src/fuzz-work/mutants/$name-$target-$backend-$label-$crash"
echo "MUTANT $name target=$target backend=$backend preset=$label found=yes ttf=${ttf}" \
	"replay=$fails/10 input=fuzz-work/mutants/$name-$target-$backend-$label-$crash sig=\"$sig\""
