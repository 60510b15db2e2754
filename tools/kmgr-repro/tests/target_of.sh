#!/usr/bin/env bash
# target_of.sh KMGR_REPRO SRC SCRATCH - a crash file is never replayed under
# a target it was not found with: a name that says nothing is refused (exit
# 2, one line asking for --target; a default target would give a false
# "not reproduced"), a ClusterFuzz testcase name says its fuzzer, and
# --target settles it.
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: target_of.sh KMGR_REPRO SRC SCRATCH" >&2; exit 2; }
tool=$1 src=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
seed=$src/corpus/regressions/api_seq/fuzz-6-clone-leak-on-bind-error
cp "$seed" "$dir/crash-0d3f11aa"
cp "$seed" "$dir/clusterfuzz-testcase-minimized-api_seq-5629"
rc=0
"$tool" show "$dir/crash-0d3f11aa" >/dev/null 2>"$dir/err" || rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$dir/err")" = 1 ] && grep -q -- '--target' "$dir/err" ||
	{ echo "target_of: a file naming no target: exit $rc, $(cat "$dir/err")" >&2; exit 1; }
grep -q '^target: api_seq (from the path)' <<<"$("$tool" show "$dir/clusterfuzz-testcase-minimized-api_seq-5629")" ||
	{ echo "target_of: a ClusterFuzz name did not give api_seq" >&2; exit 1; }
grep -q '^target: api_seq (from the --target)' <<<"$("$tool" show "$dir/crash-0d3f11aa" --target api_seq)" ||
	{ echo "target_of: --target was not taken" >&2; exit 1; }
echo "target_of: refused without a target, api_seq from a ClusterFuzz name and from --target"
