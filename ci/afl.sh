#!/usr/bin/env bash
# ci/afl.sh [--minutes N] [--jobs N] [--targets a,b] [--cmin] [--help]
# An AFL++ campaign per target, one after the other, each for its share of
# the budget (default 10 minutes, all five targets): one afl-fuzz instance
# per job (--jobs, default: nproc): -M main plus -S secondaries; a CmpLog
# binary (build/afl-cmplog, KMGR_AFL_CMPLOG=1) on the first secondary, on
# main when there is only one; corpus/<t>.dict as -x.  Both builds (afl
# preset, ASan+UBSan, persistent mode) instrument only the code the libFuzzer
# builds instrument (fuzz/afl-allowlist.txt).  A status line every 10 s;
# at the end afl-whatsup's summary, afl-plot's graphs in
# fuzz-work/afl/<t>/plot/, and a table: target, execs/s, edges, stability,
# corpus, crashes, hangs.  --cmin: afl-cmin over the shipped corpus and
# every queue; inputs not already in corpus/<t>/ are copied there.
# Exits 1 when a crash was saved, 2 on bad usage.
set -euo pipefail

minutes=10 targets="model_parse,api_seq,concurrent,async,faults" jobs=$(nproc) cmin=0
usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }
bad() {
	echo "afl.sh: $*" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	--cmin) cmin=1; shift ;;
	--minutes | --jobs | --targets)
		[ $# -ge 2 ] || bad "$1 needs a value (--help)"
		case "$1" in
		--minutes) minutes=$2 ;;
		--jobs) jobs=$2 ;;
		--targets) targets=$2 ;;
		esac
		shift 2
		;;
	*) bad "unknown argument $1 (--help)" ;;
	esac
done
[[ "$minutes" =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || bad "--minutes N, N >= 1"
[[ "$jobs" =~ ^[0-9]+$ ]] && [ "$jobs" -gt 0 ] || bad "--jobs N, N >= 1"
root=$(cd "$(dirname "$0")/.." && pwd)
IFS=, read -r -a tlist <<<"$targets"
[ ${#tlist[@]} -gt 0 ] || bad "--targets: no target named"
for t in "${tlist[@]}"; do
	[ -d "$root/corpus/$t" ] || bad "unknown target $t"
done
command -v afl-fuzz >/dev/null || { echo "afl.sh: afl-fuzz not found (ci/deps.sh installs afl++)" >&2; exit 1; }

# The two builds: fuzzing binary and CmpLog binary.  No compiler launcher:
# ccache does not see AFL_LLVM_CMPLOG, the allowlist, or link-time passes.
build=${KMGR_AFL_BUILD:-$root/build/afl}
cmplog=${KMGR_AFL_CMPLOG_BUILD:-$root/build/afl-cmplog}
tnames=$(printf -- '--target fuzz_%s ' "${tlist[@]}")
echo "== afl.sh: building $build and $cmplog"
[ -f "$build/build.ninja" ] || cmake --preset afl -S "$root" -B "$build" >/dev/null
[ -f "$cmplog/build.ninja" ] || cmake --preset afl -S "$root" -B "$cmplog" \
	-DCMAKE_C_COMPILER="$root/ci/afl-cc-cmplog.sh" >/dev/null
cmake --build "$build" -j2 $tnames
cmake --build "$cmplog" -j2 $tnames

# afl-fuzz wants ASan to abort without symbolizing; the tests' suppressions
# and checks stay (sanitizers/env.sh).
. "$root/sanitizers/env.sh"
export ASAN_OPTIONS="$ASAN_OPTIONS:abort_on_error=1:symbolize=0"
export UBSAN_OPTIONS="$UBSAN_OPTIONS:halt_on_error=1:abort_on_error=1:symbolize=0"
# an ASan build: afl-fuzz refuses MSAN_OPTIONS without its exit code
export LSAN_OPTIONS="$LSAN_OPTIONS:symbolize=0"
unset MSAN_OPTIONS TSAN_OPTIONS
# A shared machine: no CPU pinning (afl-fuzz would refuse when another
# instance holds the free cores), no UI, crashes kept even when the kernel's
# core_pattern pipes them elsewhere, an existing output directory resumed.
export AFL_NO_UI=1 AFL_NO_AFFINITY=1 AFL_SKIP_CPUFREQ=1 AFL_AUTORESUME=1
export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1

share=$((minutes * 60 / ${#tlist[@]}))
[ "$share" -ge 10 ] || share=10
work=$root/fuzz-work/afl
mkdir -p "$work"
summary=$(mktemp "$work/.summary.XXXXXX")
pids=()
# Every process of this run carries KMGR_AFL_RUN=$run in its environment:
# the afl-fuzz instances get it and pass it on to their fork servers and
# test processes.  Those are what a kill of the afl-fuzz pids misses:
# a fork server calls setsid (so no group kill from here reaches it), and
# when afl-fuzz stops on a signal it kills only its main fork server's
# child; the CmpLog fork server gets SIGTERM and dies, and its persistent-
# mode child, stopped (SIGSTOP) between two inputs, keeps the SIGTERM
# pending and stays stopped, reparented to init, for good.
run=$$.$RANDOM$RANDOM
ours() {
	grep -lzx "KMGR_AFL_RUN=$run" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true
}
# stop_all: SIGTERM to the instances (they write their stats), up to 5 s
# for them to end, then SIGKILL to whatever of the run is left (SIGKILL
# also ends a stopped process), until nothing is.
stop_all() {
	local p left i
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for i in $(seq 50); do
		left=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left=1; done
		[ "$left" = 1 ] || break
		sleep 0.1
	done
	for i in 1 2 3 4 5; do
		left=$(ours)
		[ -n "$left" ] || break
		# shellcheck disable=SC2086
		kill -KILL $left 2>/dev/null || true
		sleep 0.2
	done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
	[ -z "$(ours)" ] || echo "afl.sh: processes of this run survive: $(ours | paste -sd' ')" >&2
}
cleanup() {
	trap '' INT TERM
	stop_all
	rm -f "$summary"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# afl_stat OUT KEY: KEY of every instance's fuzzer_stats, one value a line.
# Without its UI afl-fuzz rewrites that file about once a minute: the 10-s
# status lines repeat a reading until the next one.
# Nothing (status 0) before the first instance wrote its file: a fresh
# checkout has no fuzz-work/ yet, and pipefail would end the script.
afl_stat() { { cat "$1"/*/fuzzer_stats 2>/dev/null || true; } | awk -v k="$2" '$1 == k {print $3}'; }
sum() { awk '{s += $1} END {printf "%d\n", s}'; }

crashes=0
for t in "${tlist[@]}"; do
	dir=$work/$t
	out=$dir/out
	mkdir -p "$out" "$dir/logs"
	dict=()
	[ -f "$root/corpus/$t.dict" ] && dict=(-x "$root/corpus/$t.dict")
	echo "== afl.sh: $t for ${share}s, $jobs instance(s) (out: $out)"
	# AFL_AUTORESUME: a resumed instance carries its execs_done on
	before=$(afl_stat "$out" execs_done | sum)
	pids=()
	for i in $(seq 0 $((jobs - 1))); do
		role=(-S "s$i") name=s$i
		[ "$i" != 0 ] || role=(-M main) name=main
		cl=()
		if [ "$i" = 1 ] || [ "$jobs" = 1 ]; then cl=(-c "$cmplog/fuzz/$t"); fi
		KMGR_AFL_RUN=$run afl-fuzz "${role[@]}" "${cl[@]}" -i "$root/corpus/$t" -o "$out" "${dict[@]}" \
			-m none -t 5000 -V "$share" -- "$build/fuzz/$t" >"$dir/logs/$name.log" 2>&1 &
		pids+=($!)
	done
	start=$SECONDS
	while :; do
		alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
		[ "$alive" -gt 0 ] || break
		# one-second naps: a signal to this script is handled within one
		for _ in 1 2 3 4 5 6 7 8 9 10; do sleep 1; done
		# execs/s: all instances' executions since the start over the wall
		# time, "-" until an instance rewrote its stats (afl-fuzz's own
		# execs_per_sec, written right after its dry run, read tens of
		# thousands for the first minute)
		eps=$((($(afl_stat "$out" execs_done | sum) - before) / (SECONDS - start)))
		[ "$eps" -gt 0 ] || eps=-
		printf '[afl.sh %s %3ds/%ds] instances %d execs/s %s edges %s corpus %s crashes %s hangs %s\n' \
			"$t" "$((SECONDS - start))" "$share" "$alive" \
			"$eps" \
			"$(afl_stat "$out" edges_found | sort -n | tail -1)" "$(afl_stat "$out" corpus_count | sort -n | tail -1)" \
			"$(afl_stat "$out" saved_crashes | sum)" "$(afl_stat "$out" saved_hangs | sum)"
	done
	rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	# what they left behind (nothing, so far, when they end by -V)
	pids=()
	stop_all
	if [ "$rc" != 0 ] || [ ! -f "$out/main/fuzzer_stats" ]; then
		echo "afl.sh: $t: afl-fuzz failed; the end of its log:" >&2
		tail -n 15 "$dir/logs/main.log" >&2
		exit 1
	fi
	# the instances have ended: -d counts their final stats
	echo "-- afl-whatsup -s -d $out"
	TERM=${TERM:-dumb} afl-whatsup -s -d "$out" 2>/dev/null | grep -vE '^\s*$|status check tool' || true
	rm -rf "$dir/plot"
	if afl-plot "$out/main" "$dir/plot" >"$dir/logs/plot.log" 2>&1; then
		echo "-- afl-plot: $dir/plot/index.html"
	else
		echo "-- afl-plot: no graphs ($(grep -m1 -aE 'Error|error' "$dir/logs/plot.log" | cut -c1-90))"
	fi
	# execs/s over the whole run: every instance's total over the wall time
	eps=$(afl_stat "$out" execs_done | sum)
	eps=$(((eps - before) / share))
	nc=$(afl_stat "$out" saved_crashes | sum)
	crashes=$((crashes + nc))
	printf '%-12s %8s %8s %9s %8s %8s %6s\n' "$t" "$eps" "$(afl_stat "$out" edges_found | sort -n | tail -1)" \
		"$(afl_stat "$out" stability | paste -sd/ -)" "$(afl_stat "$out" corpus_count | sort -n | tail -1)" "$nc" \
		"$(afl_stat "$out" saved_hangs | sum)" >>"$summary"
	for c in "$out"/*/crashes/id:*; do
		[ -f "$c" ] || continue
		printf '    crash: %s\n      reproduce: %s %s\n' "$c" "$build/fuzz/$t" "$c" >>"$summary"
	done
	if [ "$cmin" = 1 ]; then
		# minimise shipped corpus + every queue together, then keep what is new
		all=$dir/cmin-in min=$dir/cmin-out
		rm -rf "$all" "$min"
		mkdir -p "$all"
		cp "$root/corpus/$t"/* "$all/"
		for q in "$out"/*/queue/id:*; do cp "$q" "$all/$(sha1sum "$q" | cut -c1-40)"; done
		# no @@: the driver replays file arguments without starting the
		# deferred fork server; test cases go through shared memory instead
		afl-cmin -i "$all" -o "$min" -m none -t 5000 -- "$build/fuzz/$t" >"$dir/logs/cmin.log" 2>&1 ||
			{ echo "afl.sh: afl-cmin failed (log $dir/logs/cmin.log)" >&2; exit 1; }
		declare -A have=()
		for f in "$root/corpus/$t"/*; do have[$(sha1sum <"$f" | cut -c1-40)]=1; done
		added=0
		for f in "$min"/*; do
			h=$(sha1sum <"$f" | cut -c1-40)
			[ -z "${have[$h]:-}" ] || continue
			cp "$f" "$root/corpus/$t/afl-$h"
			added=$((added + 1))
		done
		unset have
		echo "-- afl-cmin: $(find "$min" -type f | wc -l) inputs keep the coverage; $added new in corpus/$t/"
	fi
done
echo
echo "== afl.sh summary (${minutes} min, ${share}s per target, $jobs instance(s), CmpLog on one)"
printf '%-12s %8s %8s %9s %8s %8s %6s\n' target execs/s edges stability corpus crashes hangs
cat "$summary"
cp "$summary" "$work/summary.txt"
[ "$crashes" -eq 0 ] || { echo "afl.sh: $crashes crash(es)"; exit 1; }
echo "afl.sh: no crashes"
