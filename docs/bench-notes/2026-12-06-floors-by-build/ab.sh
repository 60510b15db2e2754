#!/usr/bin/env bash
# ab.sh T TURNS TREE... : one pinned libFuzzer worker per tree (TREE/build/asan/fuzz/T,
# fuzzing a fresh copy of TREE/corpus/T with TREE/corpus/T.dict, or CORPUS=DIR's
# corpus/T for every tree), ci/fuzz.sh's flags, -seed=$SEED (default 1).  The workers
# take turns of 2 s, TURNS each, on CPU 0 for two turns and on CPU 1 for the next two,
# so every tree sees the same host; prints each tree's executions over its CPU time.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: ab.sh T TURNS TREE..." >&2; exit 2; }
T=$1 N=$2
shift 2
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
# shellcheck source=/dev/null
. "$root/sanitizers/env.sh"
d=$(mktemp -d "${TMPDIR:-/tmp}/ab.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL -- -"$p" 2>/dev/null || true; done; rm -rf "$d"' EXIT
i=0
for tree in "$@"; do
	src=${CORPUS:-$tree}
	mkdir -p "$d/$i"
	cp "$src/corpus/$T"/* "$d/$i/"
	set -m
	bash -c 'kill -STOP $$ && exec "$@"' ab taskset -c 0 "$tree/build/asan/fuzz/$T" \
		-dict="$src/corpus/$T.dict" -max_len=4096 -timeout=25 -rss_limit_mb=4096 \
		-seed="${SEED:-1}" -print_final_stats=1 "$d/$i" >"$d/log.$i" 2>&1 &
	set +m
	pids+=($!)
	i=$((i + 1))
done
sleep 0.5
for ((k = 0; k < N; k++)); do
	for p in "${pids[@]}"; do
		taskset -a -p -c $(((k / 2) % 2)) "$p" >/dev/null
		kill -CONT -- -"$p"
		sleep 2
		kill -STOP -- -"$p"
	done
done
i=0
for p in "${pids[@]}"; do
	read -r -a f <"/proc/$p/stat"
	cpu=$((f[13] + f[14])) # clock ticks (100 a second)
	kill -USR1 "$p" 2>/dev/null || true
	kill -CONT -- -"$p"
	wait "$p" 2>/dev/null || true
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log.$i")
	echo "$T $1 execs ${runs:-?} cpu_s $((cpu / 100)) exec_per_cpu_s $((${runs:-0} * 100 / (cpu > 0 ? cpu : 1)))"
	shift
	i=$((i + 1))
done
