#!/usr/bin/env bash
# ci/bench/fuzz-ab.sh BIN_A BIN_B CORPUS [--seconds N] [--dict FILE] [--b-options OPTS]
# A/B speed of two builds of one libFuzzer target, for BENCHMARKS.md.  On a
# shared 2-core machine two runs of one build differ by 10-15%, more than
# most changes; so A and B run at the same time, A on CPU 0 and B on CPU 1,
# then swapped, each from its own copy of CORPUS (a frozen corpus: the same
# starting inputs for both) with -seed=1.  --b-options appends OPTS to B's
# sanitizer options (A=1:B=2), to compare runtime options on one binary.
# Prints each run's exec/s and B/A over the two rounds.
set -euo pipefail
. "$(dirname "$0")/../lib/usage.sh"
. "$(dirname "$0")/../lib/libfuzzer.sh"

case "${1:-}" in -h | --help) kmgr_usage; exit 0 ;; esac
[ $# -ge 3 ] || kmgr_die "want BIN_A BIN_B CORPUS"
a=$1 b=$2 corpus=$3; shift 3
secs=20 dict="" bopts=""
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || kmgr_die "$1 needs a value" # every option takes a value
	case "$1" in
	--seconds) secs=$2; shift 2 ;;
	--dict) dict=$2; shift 2 ;;
	--b-options) bopts=$2; shift 2 ;;
	*) kmgr_die "unknown option $1" ;;
	esac
done
for f in "$a" "$b"; do [ -x "$f" ] || { echo "fuzz-ab: $f is not an executable" >&2; exit 2; }; done
[ -d "$corpus" ] || { echo "fuzz-ab: $corpus is not a directory" >&2; exit 2; }
[[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -gt 0 ] || { echo "fuzz-ab: --seconds N, N >= 1" >&2; exit 2; }
[ -z "$dict" ] || [ -f "$dict" ] || { echo "fuzz-ab: no dictionary $dict" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/sanitizers/env.sh"
tmp=$(mktemp -d /tmp/fuzz-ab.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# run BIN CPU TAG [EXTRA]: one timed run from a fresh copy of the corpus,
# EXTRA appended to the sanitizer options
run() {
	local w=$tmp/work-$3 x=${4:+:$4}
	mkdir -p "$w"
	cp -r "$corpus/." "$w/"
	ASAN_OPTIONS=$ASAN_OPTIONS$x MSAN_OPTIONS=$MSAN_OPTIONS$x TSAN_OPTIONS=$TSAN_OPTIONS$x \
		taskset -c "$2" "$1" -seed=1 -max_total_time="$secs" -print_final_stats=1 \
		${dict:+-dict="$dict"} -max_len=4096 "$w" >"$tmp/$3.log" 2>&1 || true
	kmgr_lf_final_eps "$tmp/$3.log"
}

run "$a" 0 a1 >"$tmp/a1.eps" & run "$b" 1 b1 "$bopts" >"$tmp/b1.eps"; wait
run "$a" 1 a2 >"$tmp/a2.eps" & run "$b" 0 b2 "$bopts" >"$tmp/b2.eps"; wait
a1=$(cat "$tmp/a1.eps") a2=$(cat "$tmp/a2.eps") b1=$(cat "$tmp/b1.eps") b2=$(cat "$tmp/b2.eps")
[ -n "$a1" ] && [ -n "$a2" ] && [ -n "$b1" ] && [ -n "$b2" ] ||
	{ echo "fuzz-ab: a run printed no exec/s; logs in $tmp" >&2; trap - EXIT; exit 1; }
awk -v a1="$a1" -v a2="$a2" -v b1="$b1" -v b2="$b2" 'BEGIN {
	printf "A: %d %d exec/s  B: %d %d exec/s  B/A = %.2f\n", a1, a2, b1, b2, (b1 + b2) / (a1 + a2) }'
