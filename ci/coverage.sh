#!/usr/bin/env bash
# ci/coverage.sh - source-based coverage the way OSS-Fuzz users read it: over
# the GROWN work corpus (what ci/fuzz.sh and ci/afl.sh leave behind) plus the
# shipped corpus/<target>/ and corpus/regressions/<target>/, per target.
#
#   ci/coverage.sh [--work DIR]... [--no-work] [--out DIR] [--targets a,b]
#                  [--build DIR] [--timeout S] [-h|--help]
#
#   --work DIR     a fuzz work dir to take inputs from (repeatable; default
#                  fuzz-work/ when it exists).  Under DIR, every directory
#                  named corpus or queue whose path names the target is
#                  replayed: fuzz-work/<preset>/<t>/corpus (ci/fuzz.sh),
#                  DIR/<t>/corpus, AFL++'s fuzz-work/afl/<t>/out/<instance>/queue.
#   --no-work      the shipped corpora only (BENCHMARKS.md, "Coverage").
#   --out DIR      where the reports go (default build/coverage/report).
#   --targets a,b  default: every target with a corpus/<t>/ folder.
#   --build DIR    the coverage preset's build tree (default build/coverage,
#                  or $KMGR_COV_BUILD); configured and built when needed.
#   --timeout S    per-input limit when a batch has to be replayed file by
#                  file (default 30).
#
# For each target T, in OUT/T/: html/index.html (llvm-cov show), T.json
# (llvm-cov export, the JSON schema of OSS-Fuzz's coverage builds), T.lcov
# (lcov tracefile), summary.txt (llvm-cov report), inputs.txt (the folders
# and how many files each gave).  OUT/all/ is the same over every target's
# profile merged, OUT/summary.json one line per target (lines, functions,
# regions, branches: covered/count/percent), OUT/index.html links them.
# The text summaries of lib/kmgr/ and lib/nrt/ and the lines of kmgr_exec
# never run are printed at the end.  Tools: llvm-profdata-19 and llvm-cov-19
# (the coverage preset builds with clang-19; the profile format follows it).
# An input that crashes or hangs the replay is left out of the profile and
# listed in OUT/T/failed.txt.  Exit status: 0 reports written, 1 a build,
# replay or llvm tool failure, 2 bad usage.
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KMGR_COV_BUILD:-$root/build/coverage}
out=""
works=()
no_work=0
targets=""
timeout_s=30

while [ $# -gt 0 ]; do
	case "$1" in
	--work) [ $# -ge 2 ] || kmgr_die "--work needs a directory"; works+=("$2"); shift 2 ;;
	--no-work) no_work=1; shift ;;
	--out | --html) [ $# -ge 2 ] || kmgr_die "$1 needs a directory"; out=$2; shift 2 ;;
	--targets) [ $# -ge 2 ] || kmgr_die "--targets needs a list"; targets=$2; shift 2 ;;
	--build) [ $# -ge 2 ] || kmgr_die "--build needs a directory"; build=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || kmgr_die "--timeout needs seconds"; timeout_s=$2; shift 2 ;;
	-h | --help) kmgr_usage; exit 0 ;;
	*) kmgr_die "unknown argument '$1'" ;;
	esac
done
[[ "$timeout_s" =~ ^[0-9]+$ ]] && [ "$timeout_s" -gt 0 ] || kmgr_die "--timeout: a whole number of seconds > 0"
for w in "${works[@]}"; do
	[ -d "$w" ] || kmgr_die "--work $w: not a directory"
done
[ "$no_work" = 0 ] || [ ${#works[@]} -eq 0 ] || kmgr_die "--work and --no-work exclude each other"
if [ -z "$targets" ]; then
	tlist=()
	for d in "$root"/corpus/*/; do
		t=$(basename "$d")
		[ -f "$root/fuzz/targets/$t.c" ] && tlist+=("$t")
	done
else
	IFS=, read -r -a tlist <<<"$targets"
fi
for t in "${tlist[@]}"; do
	[ -f "$root/fuzz/targets/$t.c" ] || kmgr_die "unknown target '$t'"
done
if [ "$no_work" = 0 ] && [ ${#works[@]} -eq 0 ] && [ -d "$root/fuzz-work" ]; then
	works=("$root/fuzz-work")
fi
KMGR_ROOT=$root
. "$root/ci/lib/toolchain.sh"
kmgr_toolchain coverage.sh
profdata=$(command -v llvm-profdata-19 || command -v llvm-profdata || true)
cov=$(command -v llvm-cov-19 || command -v llvm-cov || true)
[ -n "$profdata" ] && [ -n "$cov" ] || { echo "coverage.sh: llvm-profdata-19/llvm-cov-19 missing (ci/deps.sh)" >&2; exit 1; }
out=${out:-$build/report}
case "$out" in /*) ;; *) out=$PWD/$out ;; esac

kmgr_configure coverage.sh "$build" --preset coverage
cmake --build "$build" -j2 $(printf -- '--target fuzz_%s ' "${tlist[@]}")

# The folders of target $1: the shipped ones, then every corpus/queue folder
# under the work dirs whose path has $1 as a component.
input_dirs() {
	local t=$1 w
	echo "$root/corpus/$t"
	[ -d "$root/corpus/regressions/$t" ] && echo "$root/corpus/regressions/$t"
	for w in "${works[@]}"; do
		find -L "$w" -maxdepth 6 -type d \( -name corpus -o -name queue \) \
			\( -path "*/$t/*" -o -path "*/fuzz_$t/*" \) 2>/dev/null | sort
	done
	return 0
}

count_files() { find "$1" -maxdepth 1 -type f ! -name '.*' | wc -l; }

# Replay the folders of target $1 into profiles under $2.  One process for
# all of them; when it fails (an input that crashes the uninstrumented
# oracle, a hang) every file again on its own, so one bad input costs its
# own profile only.
replay() {
	local t=$1 prof=$2 bin=$build/fuzz/$1 dirs f n
	mapfile -t dirs < <(input_dirs "$t")
	: >"$out/$t/inputs.txt"
	n=0
	for f in "${dirs[@]}"; do
		printf '%6d  %s\n' "$(count_files "$f")" "$f" >>"$out/$t/inputs.txt"
		n=$((n + $(count_files "$f")))
	done
	echo "== coverage.sh: $t: $n inputs from ${#dirs[@]} folder(s)"
	if LLVM_PROFILE_FILE="$prof/$t-%p.profraw" timeout -s KILL $((600 + n)) \
		"$bin" "${dirs[@]}" >"$out/$t/replay.log" 2>&1; then
		return 0
	fi
	echo "   the batch replay failed (see $out/$t/replay.log): replaying file by file"
	rm -f "$prof/$t"-*.profraw
	: >"$out/$t/failed.txt"
	while IFS= read -r -d '' f; do
		LLVM_PROFILE_FILE="$prof/$t-%p.profraw" timeout -s KILL "$timeout_s" "$bin" "$f" \
			>/dev/null 2>&1 || echo "$f" >>"$out/$t/failed.txt"
	done < <(for d in "${dirs[@]}"; do find "$d" -maxdepth 1 -type f ! -name '.*' -print0; done)
	echo "   $(wc -l <"$out/$t/failed.txt") input(s) failed, left out: $out/$t/failed.txt"
}

# Reports of profile $2 over binaries $3... into folder $1.
report() {
	local dir=$1 pd=$2 name
	shift 2
	name=$(basename "$dir")
	local src=("$root/lib" "$root/fuzz")
	"$cov" show "$@" -instr-profile="$pd" -format=html -output-dir="$dir/html" \
		-show-line-counts-or-regions -show-branches=count "${src[@]}"
	"$cov" export "$@" -instr-profile="$pd" -format=text "${src[@]}" >"$dir/$name.json"
	"$cov" export "$@" -instr-profile="$pd" -format=lcov "${src[@]}" >"$dir/$name.lcov"
	"$cov" report "$@" -instr-profile="$pd" "${src[@]}" >"$dir/summary.txt"
	"$cov" export "$@" -instr-profile="$pd" -format=text -summary-only "${src[@]}" \
		>"$dir/totals.json"
}

rm -rf "$out"
mkdir -p "$out"
prof=$out/.profiles
mkdir -p "$prof"
objs=()
for t in "${tlist[@]}"; do
	mkdir -p "$out/$t"
	replay "$t" "$prof"
	compgen -G "$prof/$t-*.profraw" >/dev/null || { echo "coverage.sh: $t wrote no profile" >&2; exit 1; }
	"$profdata" merge -sparse "$prof/$t"-*.profraw -o "$prof/$t.profdata"
	report "$out/$t" "$prof/$t.profdata" "$build/fuzz/$t"
	if [ ${#objs[@]} -eq 0 ]; then objs+=("$build/fuzz/$t"); else objs+=(-object "$build/fuzz/$t"); fi
done
mkdir -p "$out/all"
"$profdata" merge -sparse "$prof"/*.profraw -o "$prof/all.profdata"
report "$out/all" "$prof/all.profdata" "${objs[@]}"

# summary.json and index.html from each folder's totals
python3 - "$out" "${tlist[@]}" all <<'PY'
import html, json, os, sys
out, names = sys.argv[1], sys.argv[2:]
rows, kinds = [], ("lines", "functions", "regions", "branches")
for n in names:
    tot = json.load(open(os.path.join(out, n, "totals.json")))["data"][0]["totals"]
    inputs = 0
    p = os.path.join(out, n, "inputs.txt")
    if os.path.exists(p):
        inputs = sum(int(l.split()[0]) for l in open(p) if l.strip())
    rows.append(dict(target=n, inputs=inputs,
                     **{k: {x: tot[k][x] for x in ("covered", "count", "percent")} for k in kinds}))
    os.remove(os.path.join(out, n, "totals.json"))
rows[-1]["inputs"] = sum(r["inputs"] for r in rows[:-1])
json.dump({"targets": rows}, open(os.path.join(out, "summary.json"), "w"), indent=1)
cells = "".join("<tr><td><a href='%s/html/index.html'>%s</a></td><td>%d</td>%s</tr>" % (
    html.escape(r["target"]), html.escape(r["target"]), r["inputs"],
    "".join("<td>%.2f%% (%d/%d)</td>" % (r[k]["percent"], r[k]["covered"], r[k]["count"]) for k in kinds))
    for r in rows)
open(os.path.join(out, "index.html"), "w").write(
    "<!doctype html><meta charset='utf-8'><title>kmgr-fuzz coverage</title>"
    "<h1>Coverage over the grown corpus</h1><table border=1 cellpadding=4>"
    "<tr><th>target</th><th>inputs</th>%s</tr>%s</table>" % (
        "".join("<th>%s</th>" % k for k in kinds), cells))
for r in rows:
    print("%-12s %7d inputs  lines %6.2f%%  functions %6.2f%%  regions %6.2f%%  branches %6.2f%%" % (
        r["target"], r["inputs"], r["lines"]["percent"], r["functions"]["percent"],
        r["regions"]["percent"], r["branches"]["percent"]))
PY
echo "== lib/kmgr/ (all targets)"
"$cov" report "${objs[@]}" -instr-profile="$prof/all.profdata" "$root/lib/kmgr"
echo "== lib/nrt/ (all targets): the public API's own code (api_nrt's reach)"
"$cov" report "${objs[@]}" -instr-profile="$prof/all.profdata" "$root/lib/nrt"
echo "== kmgr_exec and its forks: lines never run"
"$cov" show "${objs[@]}" -instr-profile="$prof/all.profdata" "$root/lib/kmgr/exec.c" \
	-show-line-counts | awk -F'|' '$2 ~ /^ *0$/ {print "  not covered: exec.c:" $1 $3}'
echo "coverage.sh: reports in $out (index.html, summary.json, <target>/{html,*.json,*.lcov,summary.txt})"
