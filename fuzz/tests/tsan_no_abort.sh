#!/usr/bin/env bash
# fuzz/tests/tsan_no_abort.sh TOY SRC - the ctest fuzz_tsan_no_abort: a TSan
# report in a libFuzzer binary (sanitizers/tests/tsan_cov_toy.c on its racing
# input), under ci/fuzz.sh's options for the tsan preset (sanitizers/env.sh,
# then kmgr_tsan_no_abort), ends through libFuzzer's death callback and
# _exit: TSan's exit code 66 and no "deadly signal".  Before, UBSAN_OPTIONS'
# abort_on_error=1 won over TSAN_OPTIONS' 0 (one set of common flags), so
# every report went through abort() and libFuzzer's signal handler (exit 77),
# whose stack printing can wedge inside TSan's malloc.
set -uo pipefail
toy=$1 src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tsan-no-abort.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
. "$src/sanitizers/env.sh"
. "$src/ci/lib/options.sh"
kmgr_tsan_no_abort
printf R >"$tmp/race"
(cd "$tmp" && "$toy" -artifact_prefix="$tmp/" "$tmp/race") >"$tmp/out" 2>&1
rc=$?
fail() {
	echo "tsan_no_abort: FAIL: $*"
	tail -n 5 "$tmp/out" | sed 's/^/    /'
	exit 1
}
grep -q 'WARNING: ThreadSanitizer: data race' "$tmp/out" || fail "no TSan report"
[ "$rc" = 66 ] || fail "exit $rc, want 66 (TSan's exitcode; 77 is libFuzzer's after a deadly signal)"
! grep -q 'deadly signal' "$tmp/out" || fail "libFuzzer's deadly-signal handler ran"
echo "tsan_no_abort: ok (exit 66, no deadly signal)"
