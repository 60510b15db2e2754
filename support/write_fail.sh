#!/usr/bin/env bash
# write_fail.sh - a tool that cannot finish writing its output leaves no
# partial file: `kmgr-model create` and `kmgr-repro emit-c` under a file
# size limit (ulimit -f) and to /dev/full exit 2 with one line on stderr,
# an existing OUT keeps its old bytes and no temporary file stays behind;
# `kmgr-repro minimize` on an input that does not fail exits 1 and leaves
# OUT untouched, even when OUT could not be written.
# usage: write_fail.sh KMGR_MODEL KMGR_REPRO SRC_DIR SCRATCH
set -uo pipefail

if [ $# -ne 4 ]; then
	echo "usage: write_fail.sh KMGR_MODEL KMGR_REPRO SRC_DIR SCRATCH" >&2
	exit 2
fi
model=$1 repro=$2 src=$3 dir=$4
bad=0
rm -rf "$dir" && mkdir -p "$dir" || exit 2
prog="$src/corpus/regressions/concurrent/fuzz-1-exec-without-ref"

fail() {
	echo "write_fail: FAIL: $*" >&2
	bad=1
}

# expect STATUS LIMIT_BLOCKS OUT CMD...: run CMD under `ulimit -f LIMIT`
# (none: no limit) with OUT holding "old bytes"; check the status, one
# line on stderr (for status 2), OUT unchanged and no OUT.tmp-* left.
expect() {
	local want=$1 limit=$2 out=$3 rc
	shift 3
	[ -c "$out" ] || printf 'old bytes\n' >"$out"
	# the limit would cut stderr too if it went to a file: a pipe
	[ "$limit" = none ] && limit=unlimited
	# TMPDIR: a TSan build writes a 512 KiB file into $TMPDIR before main
	# (its read-only shadow map, optional), which `ulimit -f 0` kills with
	# SIGXFSZ; without that directory TSan skips the map.  The tools
	# themselves do not read TMPDIR.
	(ulimit -f "$limit" && TMPDIR="$dir/no-tmpdir" exec "$@") 2>&1 >/dev/null | cat >"$dir/stderr"
	rc=${PIPESTATUS[0]}
	[ "$rc" -eq "$want" ] || fail "exit $rc, want $want: ${*:1:2} -o $out"
	if [ "$want" -eq 2 ] && [ "$(wc -l <"$dir/stderr")" -ne 1 ]; then
		fail "not one line on stderr: ${*:1:2} -o $out: $(cat "$dir/stderr")"
	fi
	if [ ! -c "$out" ] && [ "$(head -c 64 "$out" | tr -d '\0')" != "old bytes" ]; then
		fail "$out changed: ${*:1:2}"
	fi
	if ls "$out".tmp-* >/dev/null 2>&1; then
		fail "temporary file left: $(ls "$out".tmp-*)"
	fi
}

# 40 inputs: the container is larger than one 512-byte block, the limit cuts it
create=(create --output out0:f32:64x64 --name big)
for i in $(seq 1 40); do create+=(--input "input_tensor_number_$i:f32:4x4x4x4x4x4x4x4"); done
expect 2 1 "$dir/m.neff" "$model" "${create[@]}" -o "$dir/m.neff"
expect 2 0 "$dir/m.neff" "$model" "${create[@]}" -o "$dir/m.neff"
expect 2 none /dev/full "$model" "${create[@]}" -o /dev/full
expect 2 4 "$dir/t.c" "$repro" emit-c "$prog" --target concurrent -o "$dir/t.c"
expect 2 none /dev/full "$repro" emit-c "$prog" --target concurrent -o /dev/full
# the input does not fail on a correct library: nothing to write
expect 1 none "$dir/min" "$repro" minimize "$prog" --target concurrent -o "$dir/min"
expect 1 0 "$dir/min" "$repro" minimize "$prog" --target concurrent -o "$dir/min"
expect 2 none "$dir/min" "$repro" minimize "$prog" --target concurrent -o "$dir/no/such/min"

# and the same commands succeed without the limit (the checks above can pass)
"$model" "${create[@]}" -o "$dir/m.neff" >/dev/null || fail "create failed without a limit"
[ "$(stat -c %s "$dir/m.neff")" -gt 512 ] || fail "the container fits the 1-block limit"
"$repro" emit-c "$prog" --target concurrent -o "$dir/t.c" >/dev/null ||
	fail "emit-c failed without a limit"
[ "$(stat -c %s "$dir/t.c")" -gt 2048 ] || fail "the test fits the 4-block limit"

[ $bad -eq 0 ] && echo "write_fail: every failed write left OUT as it was"
exit $bad
