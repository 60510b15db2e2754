#!/usr/bin/env bash
# ci/coverage.sh [--html DIR]
# Source-based coverage of the shipped corpora alone: builds the coverage
# preset's replay mains, replays corpus/<target>/ and corpus/regressions/
# <target>/ through each, merges the profiles and prints llvm-cov's text
# summary for lib/kmgr/ (goal: >= 95% of lines) and for lib/ as a whole,
# plus kmgr_exec's branches; --html writes the annotated sources too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KMGR_COV_BUILD:-$root/build/coverage}
html=""
[ "${1:-}" = "--html" ] && html=${2:?--html DIR}
targets=(model_parse api_seq concurrent async faults)
profdata=$(command -v llvm-profdata-19 || command -v llvm-profdata)
cov=$(command -v llvm-cov-19 || command -v llvm-cov)

[ -f "$build/build.ninja" ] || cmake --preset coverage -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j2 $(printf -- '--target fuzz_%s ' "${targets[@]}")
prof=$build/fuzz-profiles
rm -rf "$prof" && mkdir -p "$prof"
objs=()
for t in "${targets[@]}"; do
	dirs=("$root/corpus/$t")
	[ -d "$root/corpus/regressions/$t" ] && dirs+=("$root/corpus/regressions/$t")
	LLVM_PROFILE_FILE="$prof/$t-%p.profraw" "$build/fuzz/$t" "${dirs[@]}" 2>"$prof/$t.log" ||
		{ echo "coverage: $t failed on its corpus (see $prof/$t.log)" >&2; exit 1; }
	if [ ${#objs[@]} -eq 0 ]; then objs+=("$build/fuzz/$t"); else objs+=(-object "$build/fuzz/$t"); fi
done
"$profdata" merge -sparse "$prof"/*.profraw -o "$prof/merged.profdata"
echo "== lib/kmgr/ (corpora only)"
"$cov" report "${objs[@]}" -instr-profile="$prof/merged.profdata" "$root/lib/kmgr"
echo "== lib/ (corpora only)"
"$cov" report "${objs[@]}" -instr-profile="$prof/merged.profdata" "$root/lib" | tail -1
echo "== kmgr_exec and its forks: lines never run"
"$cov" show "${objs[@]}" -instr-profile="$prof/merged.profdata" "$root/lib/kmgr/exec.c" \
	-show-line-counts | awk -F'|' '$2 ~ /^ *0$/ {print "  not covered: exec.c:" $1 $3}'
if [ -n "$html" ]; then
	"$cov" show "${objs[@]}" -instr-profile="$prof/merged.profdata" -format=html \
		-output-dir="$html" "$root/lib"
	echo "coverage: html in $html/index.html"
fi
