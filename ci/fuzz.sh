#!/usr/bin/env bash
# ci/fuzz.sh [--minutes N] [--preset asan|msan|tsan] [--targets a,b] [--jobs 1]
# README command 1.  Builds the preset's fuzz targets if needed, copies each
# shipped corpus to fuzz-work/<preset>/<target>/corpus, fuzzes every target
# for its share of the budget (libFuzzer's progress lines stay visible),
# merges the new coverage back into the work corpus (-merge=1) and prints a
# summary table: target, exec/s, cov, corpus size, findings, each finding
# with the command that reproduces it.  Exits 1 when anything was found.
set -euo pipefail

minutes=10 preset=asan targets="model_parse,api_seq,concurrent,async,faults"
usage() { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) minutes=$2; shift 2 ;;
	--preset) preset=$2; shift 2 ;;
	--targets) targets=$2; shift 2 ;;
	-h|--help) usage ;;
	*) echo "fuzz.sh: unknown argument $1" >&2; usage ;;
	esac
done
case "$preset" in asan|msan|tsan) ;; *) echo "fuzz.sh: preset must be asan, msan or tsan" >&2; exit 2 ;; esac
[[ "$minutes" =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || { echo "fuzz.sh: --minutes N, N >= 1" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KMGR_FUZZ_BUILD:-$root/build/$preset}
# The tests' sanitizer options: without them TSan reports and keeps going
# (halt_on_error=0), so a race would never become a finding.
. "$root/sanitizers/env.sh"
# TSan: no abort after the report.  Its death callback lets libFuzzer write
# the crash file, then exits; an abort instead runs libFuzzer's deadly-signal
# handler, whose stack printing can wedge inside TSan's malloc.
[ "$preset" != tsan ] || export TSAN_OPTIONS="$TSAN_OPTIONS:abort_on_error=0"
IFS=, read -r -a tlist <<<"$targets"
for t in "${tlist[@]}"; do
	[ -d "$root/corpus/$t" ] || { echo "fuzz.sh: unknown target $t" >&2; exit 2; }
done

echo "== fuzz.sh: building preset $preset in $build"
[ -f "$build/build.ninja" ] || cmake --preset "$preset" -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j2 $(printf -- '--target fuzz_%s ' "${tlist[@]}")

share=$((minutes * 60 / ${#tlist[@]}))
[ "$share" -ge 10 ] || share=10
work=$root/fuzz-work/$preset
mkdir -p "$work"
# One summary file per invocation: two runs of the same preset at a time
# (one per CPU) must not write into each other's table.
summary=$(mktemp "$work/.summary.XXXXXX")
trap 'rm -f "$summary"' EXIT
found=0
for t in "${tlist[@]}"; do
	bin=$build/fuzz/$t
	dir=$work/$t
	mkdir -p "$dir/corpus" "$dir/new" "$dir/artifacts"
	cp -n "$root/corpus/$t"/* "$dir/corpus/" 2>/dev/null || true
	opts=()
	[ -f "$root/corpus/$t.dict" ] && opts+=("-dict=$root/corpus/$t.dict")
	extra=()
	if [ "$preset" = tsan ]; then
		# No coverage feedback under TSan (see above): without keep_seed
		# libFuzzer keeps one input of the corpus (the others add no feature)
		# and mutates a single byte for the whole run.  Keep every seed, draw
		# crossover partners from all of them, and start from the corpus the
		# asan run grew when there is one.
		opts+=(-keep_seed=1 -cross_over_uniform_dist=1)
		[ -d "$root/fuzz-work/asan/$t/corpus" ] && extra+=("$root/fuzz-work/asan/$t/corpus")
	fi
	echo "== fuzz.sh: $t for ${share}s (log: $dir/fuzz.log)"
	# findings of earlier runs stay where they are; only newer ones count
	stamp=$dir/.run-start
	: >"$stamp"
	set +e
	"$bin" "${opts[@]}" -max_total_time="$share" -timeout=25 -rss_limit_mb=4096 \
		-print_final_stats=1 -artifact_prefix="$dir/artifacts/" "$dir/new" "$dir/corpus" "${extra[@]}" \
		2>&1 | tee "$dir/fuzz.log" | grep --line-buffered -E 'pulse|INITED|DONE|ORACLE|KSCHED|ERROR'
	set -e
	# fold what was found into the work corpus (only inputs that add coverage)
	"$bin" -merge=1 "$dir/corpus" "$dir/new" >"$dir/merge.log" 2>&1 || true
	rm -rf "${dir:?}/new"/*
	eps=$(awk '/average_exec_per_sec/ {print $2}' "$dir/fuzz.log" | tail -1)
	[ -n "$eps" ] || eps=$(grep -oE 'exec/s: [0-9]+' "$dir/fuzz.log" | tail -1 | cut -d' ' -f2)
	cov=$(grep -oE 'cov: [0-9]+' "$dir/fuzz.log" | tail -1 | cut -d' ' -f2)
	size=$(ls -1 "$dir/corpus" | wc -l)
	mapfile -t arts < <(find "$dir/artifacts" -maxdepth 1 -type f -newer "$stamp" | sort)
	nf=${#arts[@]}
	found=$((found + nf))
	printf '%-12s %8s %8s %8s %8s\n' "$t" "${eps:--}" "${cov:--}" "$size" "$nf" >>"$summary"
	for a in "${arts[@]}"; do
		sig=$(grep -m1 -E 'ORACLE:|KSCHED [A-Z]+|DEVICE FAULT|kmgr error:|(ERROR|WARNING): [A-Za-z]+Sanitizer|ERROR: libFuzzer|runtime error' \
			"$dir/fuzz.log" | cut -c1-100 || true)
		repro="$bin $a"
		if [ -x "$root/build/release/tools/kmgr-repro/kmgr-repro" ]; then
			repro="$root/build/release/tools/kmgr-repro/kmgr-repro replay $a"
		fi
		printf '    finding: %s\n      %s\n      reproduce: %s\n' "$(basename "$a")" "$sig" "$repro" >>"$summary"
	done
done
echo
echo "== fuzz.sh summary (preset $preset, ${minutes} min, ${share}s per target)"
printf '%-12s %8s %8s %8s %8s\n' target exec/s cov corpus findings
cat "$summary"
cp "$summary" "$work/summary.txt"
[ "$found" -eq 0 ] || { echo "fuzz.sh: $found finding(s)"; exit 1; }
echo "fuzz.sh: no findings"
