#!/bin/sh
# steps_match.sh KPROG TEST INPUT TARGET
# An emitted regression test reproduces its finding only if it makes the
# same scheduling points as the fuzz runner, in the same order, since the
# decision bytes are spent one decision at a time.  On the correct library
# both run to the end: the runner prints "steps N", the test "PASS (N
# scheduling points"; N must be equal.
kprog=$1 test=$2 input=$3 target=$4
run=$("$kprog" run "$input" --target "$target" -v 2>&1 | sed -n 's/^ops .* steps \([0-9]*\) .*/\1/p')
emitted=$("$test" 2>/dev/null | sed -n 's/.*PASS (\([0-9]*\) scheduling points.*/\1/p')
if [ -z "$run" ] || [ -z "$emitted" ]; then
	echo "steps_match: no step count (runner '$run', emitted test '$emitted')" >&2
	exit 1
fi
if [ "$run" != "$emitted" ]; then
	echo "steps_match: the runner took $run scheduling points, $(basename "$test") took $emitted" >&2
	exit 1
fi
echo "steps_match: $(basename "$test"): $run scheduling points in both"
