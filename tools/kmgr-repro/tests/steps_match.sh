#!/bin/sh
# steps_match.sh KPROG INPUT TARGET TEST...   (TEST...: the test's command,
# e.g. the regressions program and the test's name)
# An emitted regression test reproduces its finding only if it makes the
# same scheduling points as the fuzz runner, in the same order, since the
# decision bytes are spent one decision at a time.  On the correct library
# both run to the end: the runner prints "steps N", the test "PASS (N
# scheduling points"; N must be equal.
kprog=$1 input=$2 target=$3
shift 3
name=$(basename "$*")
run=$("$kprog" run "$input" --target "$target" -v 2>&1 | sed -n 's/^ops .* steps \([0-9]*\) .*/\1/p')
emitted=$("$@" 2>/dev/null | sed -n 's/.*PASS (\([0-9]*\) scheduling points.*/\1/p')
if [ -z "$run" ] || [ -z "$emitted" ]; then
	echo "steps_match: no step count (runner '$run', emitted test '$emitted')" >&2
	exit 1
fi
if [ "$run" != "$emitted" ]; then
	echo "steps_match: the runner took $run scheduling points, $name took $emitted" >&2
	exit 1
fi
echo "steps_match: $name: $run scheduling points in both"
