#!/usr/bin/env bash
# watchdog_symbolizer.sh STRESS_BIN SCRATCH - the watchdog runs the
# symbolizer KMGR_SYMBOLIZER names as a program, never through a shell:
# a value with shell syntax in it starts nothing else (it went to popen,
# so 'x; touch FILE' ran the touch).  A hang fault stalls a worker; the
# watchdog fires after 1 s and the run ends with exit 3 and wait sites.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: watchdog_symbolizer.sh STRESS_BIN SCRATCH" >&2; exit 2; }
bin=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
KMGR_SYMBOLIZER="/bin/true; touch $dir/injected #" timeout 120 "$bin" --seconds 5 --threads 2 \
	--seed 1 --fault hang:3 --stall-seconds 1 --quiet --repro-dir "$dir" >"$dir/out" 2>&1
rc=$?
[ "$rc" = 3 ] || { echo "watchdog_symbolizer: exit $rc, want 3 (a stall)" >&2; tail -5 "$dir/out" >&2; exit 1; }
grep -q 'wait site:' "$dir/out" || { echo "watchdog_symbolizer: no wait site printed" >&2; exit 1; }
[ ! -e "$dir/injected" ] || { echo "watchdog_symbolizer: KMGR_SYMBOLIZER went through a shell" >&2; exit 1; }
echo "watchdog_symbolizer: stall reported, KMGR_SYMBOLIZER ran no shell"
