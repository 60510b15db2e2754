#!/usr/bin/env bash
# tools/kprog/tests/log_filter.sh KPROG ROOT - the ctest kprog_log_filter:
# `kprog run` judges the library's log as the fuzz targets do (the filter
# is kh_run's, fuzz/harness/harness.c, so the emitted C tests have it too).
# A program whose nrt_meta info_twice frees a tensor-info array twice on
# purpose: the library's answer ("not an array ... freed twice?") is
# counted in one line, not printed; with -v (the whole log) it is printed,
# so the first check is not vacuous.
set -uo pipefail
kprog=$1 root=$2
prog=$root/corpus/text/api_nrt/n07_misuse.txt
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kprog-log.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() { echo "kprog_log_filter: FAIL: $*"; bad=1; }

"$kprog" run "$prog" --text --target api_nrt >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || fail "kprog run: exit $rc: $(head -c 300 "$tmp/err")"
! grep -q 'not an array' "$tmp/err" || fail "the misuse answer was printed: $(grep -m1 'not an array' "$tmp/err")"
grep -q "^kmgr log: 1 error line(s) answered the harness's own misuse (not shown)$" "$tmp/err" ||
	fail "no count of the misuse lines: $(head -c 300 "$tmp/err")"
[ "$(grep -c '^kmgr error' "$tmp/err")" = 0 ] || fail "error lines printed: $(grep -m2 '^kmgr error' "$tmp/err")"

"$kprog" run "$prog" --text --target api_nrt -v >"$tmp/out" 2>"$tmp/err"
grep -q 'not an array' "$tmp/err" || fail "-v: the whole log lacks the misuse answer"
[ "$bad" = 0 ] && echo "kprog_log_filter: OK"
exit "$bad"
