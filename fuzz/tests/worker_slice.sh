#!/usr/bin/env bash
# worker_slice.sh FUZZER CORPUS: a libFuzzer worker of FUZZER, run as
# ci/fuzz.sh runs it, asks the kernel for 50-ms time slices before its
# first input (harness/slice.c: two workers sharing a CPU would otherwise
# switch at every tick).  The worker replays CORPUS's files over and over;
# its slice is read from the kernel's own account of it, /proc/PID/sched
# ("se.slice", nanoseconds), until it reads 50 ms, the worker ends, or 30 s
# pass.  Exit 77 (skip) on a kernel without per-task slices (before 6.12:
# no se.slice line).
set -uo pipefail
[ $# = 2 ] || { echo "usage: worker_slice.sh FUZZER CORPUS" >&2; exit 2; }
bin=$1 corpus=$2
grep -q '^se.slice ' /proc/self/sched 2>/dev/null || { echo "worker_slice: no se.slice in /proc/PID/sched: skipped"; exit 77; }
want=50000000
files=("$corpus"/*)
"$bin" -runs=100000000 -timeout=25 -rss_limit_mb=4096 "${files[@]}" >/dev/null 2>&1 &
pid=$!
trap 'kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null' EXIT
slice=""
for _ in $(seq 300); do
	slice=$(awk '$1 == "se.slice" { print $3 }' "/proc/$pid/sched" 2>/dev/null)
	[ "$slice" != "$want" ] || { echo "worker_slice: $(basename "$bin"): se.slice $slice"; exit 0; }
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
echo "worker_slice: $(basename "$bin"): se.slice ${slice:-unread} (want $want; the worker $(kill -0 "$pid" 2>/dev/null && echo "ran 30 s" || echo "ended"))"
exit 1
