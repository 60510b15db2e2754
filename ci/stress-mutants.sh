#!/usr/bin/env bash
# ci/stress-mutants.sh - show that the stress binaries catch the injected
# facade bugs: for each (mutant, binary) pair, copy the tree to a temp dir,
# apply the mutant there (never in this checkout), build the binary, run it
# for at most --limit seconds and report the time to failure, the exit
# status and the first line that says what broke.
#
#   ci/stress-mutants.sh [--preset asan] [--limit 60] [--out FILE.md] [PAIR ...]
#
# A PAIR is MUTANT:BINARY[:EXTRA ARGS], MUTANT a file under mutants/ without
# .patch, or "none" for the correct library; the default pairs are fuzz-1,
# fuzz-2, fuzz-3 and fuzz-5 and a never-completing execution (hang:N).
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
. "$(dirname "$0")/lib/tree.sh"
src=$(cd "$(dirname "$0")/.." && pwd)
preset=asan
limit=60
out=""
pairs=()
while [ $# -gt 0 ]; do
	case "$1" in
	--preset | --limit | --out)
		[ $# -ge 2 ] || { echo "stress-mutants: $1 needs a value (see --help)" >&2; exit 2; } ;;&
	--preset) preset=$2; shift 2 ;;
	--limit) limit=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) kmgr_usage; exit 0 ;;
	-*) echo "stress-mutants: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) pairs+=("$1"); shift ;;
	esac
done
if [ ${#pairs[@]} -eq 0 ]; then
	pairs=(
		"fuzz-1-no-ref:refdrain:--threads 4 --seconds 50"
		"fuzz-2-wrlock-drain:async:--threads 4 --seconds 50 --stall-seconds 10"
		"fuzz-3-drain-before-erase:refdrain:--threads 4 --seconds 50"
		"fuzz-5-wrong-arm:async:--threads 4 --seconds 50"
		"none:refdrain:--threads 4 --seconds 50 --fault hang:200 --stall-seconds 10"
	)
fi
. "$src/sanitizers/env.sh"
work=$(mktemp -d /tmp/stress-mutants.XXXXXX)
table="| bug | binary | exit | time to failure | message |
|---|---|---|---|---|"
for pair in "${pairs[@]}"; do
	IFS=: read -r mutant bin extra <<<"$pair"
	tree="$work/$mutant"
	if [ ! -d "$tree" ]; then
		kmgr_tree_copy "$src" "$tree"
		if [ "$mutant" != none ]; then
			kmgr_apply_mutant "$tree" "$src/mutants/$mutant.patch"
		fi
		cmake --preset "$preset" -S "$tree" -B "$tree/build" >"$work/$mutant-cmake.log" 2>&1 || {
			echo "stress-mutants: cannot configure $tree (see $work/$mutant-cmake.log)" >&2
			exit 1
		}
	fi
	cmake --build "$tree/build" -j2 --target "stress_$bin" >"$work/$mutant-$bin-build.log" 2>&1 || {
		echo "stress-mutants: cannot build stress_$bin (see $work/$mutant-$bin-build.log)" >&2
		exit 1
	}
	log="$work/$mutant-$bin.log"
	start=$(date +%s.%N)
	set +e
	# Release links jemalloc: junk-fill so freed memory reads as junk.
	(cd "$work" && MALLOC_CONF=junk:true timeout -k 5 "$limit" "$tree/build/stress/stress_$bin" --repro-dir "$work" \
		--quiet $extra) >"$log" 2>&1
	rc=$?
	set -e
	secs=$(echo "$(date +%s.%N) - $start" | bc)
	# The most specific line first: our checks, the sanitizer, the
	# watchdog, then whatever the library said last.
	msg=""
	for pat in "CHECK FAILED" "ERROR: AddressSanitizer|WARNING: ThreadSanitizer|WARNING: MemorySanitizer" \
		"WATCHDOG" "kmgr error|assertion"; do
		msg=$(grep -m1 -E "$pat" "$log" || true)
		[ -n "$msg" ] && break
	done
	# For a stall: the wait site of the thread the watchdog names.
	role=$(grep -m1 -oE "WATCHDOG: [^ ]+ made" "$log" | awk '{print $2}' || true)
	if [ -n "$role" ]; then
		site=$(awk -v r=" $role " 'index($0, r) && /^  thread/ { f = 1; next }
			f && /wait site/ { sub(/^ +/, ""); print; exit }' "$log")
		msg="watchdog: $role stuck, $site"
	fi
	msg=${msg//$tree\//}
	printf '%-28s %-9s exit %-3s %6.1f s  %s\n' "$mutant" "$bin" "$rc" "$secs" "$msg"
	table="$table
| $mutant | stress_$bin | $rc | $(printf '%.1f' "$secs") s | ${msg//|/\\|} |"
done
if [ -n "$out" ]; then
	printf '%s\n' "$table" >"$out"
	echo "table written to $out"
fi
echo "logs in $work"
