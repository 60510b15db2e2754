#!/usr/bin/env bash
# ci/bench/stress-bench.sh - the stress binaries in the release preset, jemalloc
# (stress_X) against glibc malloc (stress_X_glibc), one after the other in
# one run, and a markdown table: executions/s and the unload drain wait
# p50/p99/max of stress_refdrain, ops/s of the others.
#
#   ci/bench/stress-bench.sh [--seconds N] [--threads N] [--build DIR] [--out FILE.md]
set -euo pipefail
. "$(dirname "$0")/../lib/usage.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
secs=10
threads=4
build="$src/build/release"
out=""
while [ $# -gt 0 ]; do
	case "$1" in
	--seconds | --threads | --build | --out)
		[ $# -ge 2 ] || { echo "stress-bench: $1 needs a value (see --help)" >&2; exit 2; } ;;&
	--seconds) secs=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--build) build=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) kmgr_usage; exit 0 ;;
	*) echo "stress-bench: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
if [ ! -x "$build/stress/stress_refdrain_glibc" ]; then
	cmake --preset release -S "$src" -B "$build" >/dev/null
	cmake --build "$build" -j2 --target stress_refdrain stress_refdrain_glibc stress_async \
		stress_async_glibc stress_churn stress_churn_glibc
fi
tmp=$(mktemp -d /tmp/stress-bench.XXXXXX)
for bin in refdrain async churn; do
	for alloc in jemalloc glibc; do
		exe="$build/stress/stress_$bin"
		[ "$alloc" = glibc ] && exe="${exe}_glibc"
		echo "running stress_$bin ($alloc) for ${secs}s" >&2
		"$exe" --seconds "$secs" --threads "$threads" --seed 1 --quiet \
			--json "$tmp/$bin-$alloc.json" --repro-dir "$tmp" >/dev/null
	done
done
python3 - "$tmp" "$secs" "$threads" <<'PY' | tee "${out:-/dev/null}"
import json, sys, os
d, secs, threads = sys.argv[1], sys.argv[2], sys.argv[3]
def load(b, a):
    return json.load(open(os.path.join(d, f"{b}-{a}.json")))
print(f"release preset, {secs} s each, --threads {threads}, 2 shared cores\n")
print("| binary | malloc | executions/s | ops/s | drain wait p50 | p99 | max | result |")
print("|---|---|---:|---:|---:|---:|---:|---|")
for b in ("refdrain", "async", "churn"):
    for a in ("jemalloc", "glibc"):
        j = load(b, a)
        ex = j.get("refdrain", {}).get("executions_per_s")
        un = j["latency_ns"].get("unload", {})
        us = lambda k: f"{un[k]/1e3:.0f} us" if un else "-"
        print(f"| stress_{b} | {a} | {ex if ex is not None else '-'} | {j['ops_per_s']:.0f} | "
              f"{us('p50')} | {us('p99')} | {us('max')} | {j['result']} |")
PY
echo "JSON in $tmp" >&2
