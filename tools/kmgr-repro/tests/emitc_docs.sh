#!/usr/bin/env bash
# emitc_docs.sh - docs/reproducer.md's commands for a standalone emitted
# test, run as the docs write them: the ```sh block after "A standalone
# test needs only" is taken from the docs themselves (not a copy), with
# their placeholders B (the build), I (the public headers) and CRASH (a
# finding) given as variables, in an empty folder outside the tree.  CRASH
# is a shipped finding, bug 2's (corpus/regressions/async), which the
# correct library passes: every line must succeed and the test must print
# "t: PASS (N scheduling points, ...)" as the docs say.
# usage: emitc_docs.sh BUILD SRC_DIR SCRATCH
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: emitc_docs.sh BUILD SRC_DIR SCRATCH" >&2
	exit 2
fi
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) scratch=$3
doc=$src/docs/reproducer.md

fail() {
	echo "emitc_docs: $*" >&2
	exit 1
}

rm -rf "$scratch"
mkdir -p "$scratch"
# the block: from the paragraph's first ```sh line to its closing ```
awk '/^A standalone test needs only/ {p = 1} p && /^```sh$/ {b = 1; next} b && /^```$/ {exit} b' \
	"$doc" >"$scratch/block.sh"
for want in 'kmgr-repro emit-c CRASH -o t.c' '^\./t$'; do
	grep -qE -- "$want" "$scratch/block.sh" ||
		fail "docs/reproducer.md's block has no line matching '$want' (did its shape change?): $(cat "$scratch/block.sh")"
done
# B, I and CRASH as words become quoted variables: no path enters the text
sed -E -e 's#(^|[ =])B/#\1"$B"/#g' -e 's#(^| )B( |$)#\1"$B"\2#g' -e 's#(^| )I( |$)#\1"$I"\2#g' \
	-e 's#(^| )CRASH( |$)#\1"$CRASH"\2#g' "$scratch/block.sh" >"$scratch/run.sh"
echo "emitc_docs: running, in $scratch/run:"
sed 's/^/  /' "$scratch/run.sh"
mkdir "$scratch/run"
out=$(cd "$scratch/run" && env B="$build" I="$src/lib/include" \
	CRASH="$src/corpus/regressions/async/fuzz-2-drain-under-wrlock" \
	bash -euo pipefail "$scratch/run.sh" 2>&1) || fail "a line of the docs' block failed: $out"
echo "$out" | tail -n 3
grep -qE '^t: PASS \([0-9]+ scheduling points' <<<"$out" ||
	fail "the emitted test did not print 't: PASS (N scheduling points ...)': $out"
echo "emitc_docs: the docs' lines built and ran the emitted test: PASS"
