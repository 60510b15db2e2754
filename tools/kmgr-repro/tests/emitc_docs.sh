#!/usr/bin/env bash
# emitc_docs.sh - docs/reproducer.md's commands for a standalone emitted
# test, run as the docs write them: the ```sh block after "A standalone
# test needs only" is taken from the docs themselves (not a copy), with
# their placeholders B (the build), I (the public headers) and CRASH (a
# finding) given as variables, in an empty folder outside the tree.  CRASH
# is a shipped finding, bug 2's (corpus/regressions/async), which the
# correct library passes: every line must succeed and the test must print
# "t: PASS (N scheduling points, ...)" as the docs say.
# mutant: the same lines with B a copy of the tree with bug 2 put back
# (mutants/fuzz-2-wrlock-drain.patch; kmgr-repro built there first,
# minutes: only with KMGR_SLOW_TESTS=1, else exit 77): every line but
# ./t succeeds and ./t fails, with the report of the bug, "while the bug
# is present" as the docs say.
# usage: emitc_docs.sh BUILD SRC_DIR SCRATCH [mutant]
set -euo pipefail

if [ $# -lt 3 ] || [ $# -gt 4 ] || [ "${4:-mutant}" != mutant ]; then
	echo "usage: emitc_docs.sh BUILD SRC_DIR SCRATCH [mutant]" >&2
	exit 2
fi
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd) scratch=$3 mode=${4:-correct}
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
if [ "$mode" = mutant ]; then
	if [ "${KMGR_SLOW_TESTS:-0}" != 1 ]; then
		echo "emitc_docs: mutant: builds a mutant tree (minutes); set KMGR_SLOW_TESTS=1 to run it"
		exit 77
	fi
	. "$src/ci/lib/tree.sh"
	kmgr_tree_copy "$src" "$scratch/src" &&
		kmgr_apply_mutant "$scratch/src" "$src/mutants/fuzz-2-wrlock-drain.patch" ||
		fail "cannot make the mutant tree"
	build=$scratch/src/build/asan
	{ cmake -S "$scratch/src" -B "$build" --preset asan && cmake --build "$build" -j2 --target kmgr-repro; } \
		>"$scratch/mutant-build.log" 2>&1 || fail "the mutant build failed: $(tail -n 3 "$scratch/mutant-build.log")"
fi
# B, I and CRASH as words become quoted variables: no path enters the
# text; ./t, the docs' last line, runs on its own (it fails on a mutant)
sed -E -e 's#(^|[ =])B/#\1"$B"/#g' -e 's#(^| )B( |$)#\1"$B"\2#g' -e 's#(^| )I( |$)#\1"$I"\2#g' \
	-e 's#(^| )CRASH( |$)#\1"$CRASH"\2#g' "$scratch/block.sh" >"$scratch/run.sh"
echo "emitc_docs: running, in $scratch/run:"
sed 's/^/  /' "$scratch/run.sh"
grep -v '^\./t$' "$scratch/run.sh" >"$scratch/build.sh"
mkdir "$scratch/run"
out=$(cd "$scratch/run" && env B="$build" I="$src/lib/include" \
	CRASH="$src/corpus/regressions/async/fuzz-2-drain-under-wrlock" \
	bash -euo pipefail "$scratch/build.sh" 2>&1) || fail "a line of the docs' block failed: $out"
rc=0
out=$(cd "$scratch/run" && bash -c "$(grep '^\./t$' "$scratch/run.sh")" 2>&1) || rc=$?
echo "$out" | tail -n 3
if [ "$mode" = mutant ]; then
	[ "$rc" != 0 ] && grep -qE 'KSCHED|ORACLE|Sanitizer' <<<"$out" ||
		fail "with bug 2 present the emitted test did not fail with a report (exit $rc): $out"
	echo "emitc_docs: mutant: the docs' lines built the test; it failed (exit $rc) while the bug is present"
	exit 0
fi
[ "$rc" = 0 ] || fail "./t failed on the correct library (exit $rc): $out"
grep -qE '^t: PASS \([0-9]+ scheduling points' <<<"$out" ||
	fail "the emitted test did not print 't: PASS (N scheduling points ...)': $out"
echo "emitc_docs: the docs' lines built and ran the emitted test: PASS"
