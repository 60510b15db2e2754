#!/usr/bin/env bash
# replay_bad.sh - `stress_X --replay FILE` refuses what is not a repro file
# of X with one line on stderr and exit 2, before any run: an empty file, a
# file without a `binary` line, another binary's repro, a directory,
# /dev/zero, a nested `replay` line, a bad field (`threads zzz`), a NUL
# byte, a file over the 8 MiB bound.  Nothing runs (no SUCCESS line) and no
# .repro file is written.  A good repro file still replays (exit 0).
# usage: replay_bad.sh STRESS_BINARY SCRATCH
set -uo pipefail

if [ $# -ne 2 ]; then
	echo "usage: replay_bad.sh STRESS_BINARY SCRATCH" >&2
	exit 2
fi
bin=$1 dir=$2 name=$(basename "$1")
bad=0
rm -rf "$dir" && mkdir -p "$dir/repros" || exit 2

fail() {
	echo "replay_bad: FAIL: $*" >&2
	bad=1
}

# refuse FILE: exit 2, one line on stderr, no run, no repro file
refuse() {
	local rc
	timeout 60 "$bin" --replay "$1" --repro-dir "$dir/repros" --stall-seconds 20 \
		>"$dir/stdout" 2>"$dir/stderr"
	rc=$?
	[ $rc -eq 2 ] || fail "--replay $1: exit $rc, want 2"
	[ "$(wc -l <"$dir/stderr")" -eq 1 ] ||
		fail "--replay $1: not one line on stderr: $(head -c 300 "$dir/stderr")"
	grep -q "SUCCESS\|FAILURE" "$dir/stdout" && fail "--replay $1: it ran"
	[ -z "$(ls "$dir/repros")" ] || fail "--replay $1: wrote $(ls "$dir/repros")"
	rm -f "$dir/repros"/*
}

good="binary $name
seed 3
threads 2
ops 200
seconds 0"
: >"$dir/empty"
printf 'seed 3\nthreads 2\n' >"$dir/nobinary"
printf 'binary stress_other\nseed 3\n' >"$dir/other"
printf '%s\nreplay %s\n' "$good" "$dir/nested" >"$dir/nested"
printf '%s\nthreads zzz\n' "$good" >"$dir/badfield"
printf '%s\nseed 4\0\n' "$good" >"$dir/nul"
{
	echo "$good"
	head -c $((8 << 20)) /dev/zero | tr '\0' '#'
	echo
} >"$dir/huge"
mkdir -p "$dir/adir"

for f in empty nobinary other nested badfield nul huge adir; do
	refuse "$dir/$f"
done
refuse /dev/zero
refuse "$dir/does-not-exist"

# the positive control: the same lines without the bad one replay
echo "$good" >"$dir/good"
timeout 120 "$bin" --replay "$dir/good" --repro-dir "$dir/repros" --stall-seconds 20 --quiet \
	>"$dir/stdout" 2>"$dir/stderr"
rc=$?
[ $rc -eq 0 ] || fail "--replay of a good file: exit $rc: $(head -c 300 "$dir/stderr")"
grep -q "SUCCESS" "$dir/stdout" || fail "--replay of a good file: no SUCCESS line"

[ $bad -eq 0 ] && echo "replay_bad: every bad repro file refused in one line, exit 2"
exit $bad
