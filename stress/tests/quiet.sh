#!/usr/bin/env bash
# quiet.sh STRESS_FAULTS SCRATCH - --quiet means the final line only:
# stress_faults provokes library errors on purpose (every injected
# allocation failure logs one), which --quiet printed by the thousand over
# a long run (11 lines in 2 s, before).
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: quiet.sh STRESS_FAULTS SCRATCH" >&2; exit 2; }
bin=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
"$bin" --seconds 2 --threads 2 --seed 1 --quiet --stall-seconds 30 --repro-dir "$dir" >"$dir/out" 2>&1
rc=$?
n=$(wc -l <"$dir/out")
[ "$rc" = 0 ] || { echo "quiet: exit $rc" >&2; cat "$dir/out" >&2; exit 1; }
[ "$n" = 1 ] && grep -q 'SUCCESS' "$dir/out" ||
	{ echo "quiet: $n lines, want the SUCCESS line only:" >&2; head -5 "$dir/out" >&2; exit 1; }
echo "quiet: one line"
