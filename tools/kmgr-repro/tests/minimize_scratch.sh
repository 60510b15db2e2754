#!/usr/bin/env bash
# minimize_scratch.sh KMGR_REPRO SCRATCH - minimize when its scratch files
# cannot be written: a TMPDIR that does not exist, a file size limit under
# the size of a candidate.  Neither may pass for "the program re-encoded
# does not reproduce it" (exit 1): one line names the scratch failure,
# exit 2, and OUT is not touched.  The failing program is the documented
# async_mix hazard (KMGR_FUZZ_ASYNC_MIX=1: explicit work outlives an async
# unload, ORACLE exec-after-unload), which fails on the correct library.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: minimize_scratch.sh KMGR_REPRO SCRATCH" >&2; exit 2; }
tool=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir"
export KMGR_FUZZ_ASYNC_MIX=1
prog=$dir/mix.txt
{
	echo "# kmgr-repro target=async"
	echo "config mode=async nc=1 qdepth=4 threads=1"
	echo "t0 load slot=0 tmpl=0 start=-1 count=-1"
	echo "t0 tensor_info slot=0 index=0"
	echo "t0 schedule slot=0 in=dev out=dev queue=0"
	echo "t0 schedule slot=0 in=dev out=dev queue=0"
	echo "t0 unload slot=0"
	echo "t0 ifmap_count slot=0 io=0"
	# 1500 decision bytes, past what the run uses, the last one nonzero
	# (trailing zeros are dropped): a binary candidate over the 1024 bytes
	# of ulimit -f 1 (bash counts 1024-byte blocks)
	printf 'sched'; for _ in $(seq 1499); do printf ' 00'; done; echo ' 01'
} >"$prog"
"$tool" replay "$prog" --times 1 >/dev/null || true
grep -q 'reproduced 1/1' <<<"$("$tool" replay "$prog" --times 1)" ||
	{ echo "minimize_scratch: the control program does not fail here" >&2; exit 1; }
fail() { echo "minimize_scratch: $*" >&2; exit 1; }
check() { # NAME RC ERR-FILE
	[ "$2" = 2 ] || fail "$1: exit $2, want 2 ($(head -c 300 "$3"))"
	grep -q 'cannot run a candidate program: its scratch file under' "$3" ||
		fail "$1: no scratch line: $(head -c 300 "$3")"
	[ ! -e "$dir/out" ] || fail "$1: OUT was written"
}
set +e
TMPDIR=$dir/no-such-dir "$tool" minimize "$prog" -o "$dir/out" >"$dir/o1" 2>"$dir/e1"
check "TMPDIR missing" $? "$dir/e1"
(ulimit -f 1; exec "$tool" minimize "$prog" -o "$dir/out") >"$dir/o2" 2>"$dir/e2"
check "ulimit -f 1" $? "$dir/e2"
set -e
"$tool" minimize "$prog" -o "$dir/out" >"$dir/o3" 2>"$dir/e3" || fail "unlimited: $(cat "$dir/e3")"
[ -s "$dir/out" ] || fail "unlimited: no OUT"
echo "minimize_scratch: scratch failures named (TMPDIR missing, ulimit -f 1), exit 2; unlimited ok"
