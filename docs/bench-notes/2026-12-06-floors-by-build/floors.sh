#!/usr/bin/env bash
# floors.sh TREE: issue 39's item 3 command (BENCHMARKS.md), three rounds of the
# three targets in turn, each run from a fresh copy of the shipped corpus on tmpfs,
# the probe of scale-bench (every shipped seed 500 times, pinned) just before it.
set -euo pipefail
cd "$1"
# shellcheck source=/dev/null
. sanitizers/env.sh
w=$(mktemp -d /dev/shm/floors.XXXXXX)
trap 'rm -rf "$w"' EXIT
for r in 1 2 3; do
	for t in concurrent api_nrt api_seq; do
		/usr/bin/time -f '%U %S' -o "$w/probe" taskset -c 0 "build/asan/fuzz/$t" -runs=500 \
			-timeout=25 -rss_limit_mb=4096 "corpus/$t"/* >/dev/null 2>&1
		pms=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$w/probe")
		rm -rf "$w/c"
		cp -r "corpus/$t" "$w/c"
		taskset -c 0 "build/asan/fuzz/$t" -dict="corpus/$t.dict" -max_len=4096 -timeout=25 \
			-rss_limit_mb=4096 -max_total_time=60 -seed=1 "$w/c" >"$w/log" 2>&1 || true
		eps=$(grep -a '^#[0-9]' "$w/log" | tail -n 1 | sed -n 's/.*exec\/s: \([0-9]*\).*/\1/p')
		echo "$(date -u +%H:%M) round $r $t probe ${pms} ms exec/s ${eps:-?}"
	done
done
