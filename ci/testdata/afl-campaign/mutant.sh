#!/usr/bin/env bash
# ci/testdata/afl-campaign/mutant.sh - ci/afl.sh after a real finding, as a
# user runs it (the ctest afl_campaign_mutant): mutants/fuzz-5-wrong-arm.patch
# applied in a copy of the tree, then, from a plain shell in that copy,
# `ci/afl.sh --seconds 10 --jobs 2 --targets api_seq`, which builds the afl
# and CmpLog trees there (for one target, 10-20 s each) and finds the bug
# within seconds, saving a crash file for nearly every input that hits it
# (147 in 10 s).  What it says after the finding:
#   - exit 1 and "afl.sh: N crash(es)"
#   - the crash files grouped into buckets, one line a bug ("N crash
#     file(s) in M bucket(s)", N the files listed in
#     fuzz-work/afl/api_seq/crashes.txt, every one of them there), not a
#     line a file: at most 3 buckets and no more reproduce lines than
#     buckets
#   - each bucket's reproduce line, run by sh (dash) from a plain
#     environment, replays the bucket's file: exit 0, "reproduced 10/10"
#     and the bucket's signature
#   - nothing of the run left 5 s later, no scratch file in its work folder
#   - then a run of 10 s resuming that folder, which finds the bug again
#     (AFL++ moves the earlier run's crashes to crashes.<date>/) and has
#     its own crash files to group, interrupted by SIGINT as it groups
#     them: exit 130 within 5 s, its summary marked, no replay of the
#     triage left 5 s later, no scratch file
# About 60-80 s in all; ci/test.sh runs it after afl_campaign.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afl-mutant-test.XXXXXX")
mark=afl-mutant-$$
pid=""
left() { grep -lzx "KMGR_CAMPAIGN_MARK=$mark" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | paste -sd' '; }
cleanup() {
	[ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null
	[ -z "$pid" ] || wait "$pid" 2>/dev/null
	# shellcheck disable=SC2046 # pids, one a word
	kill -KILL $(left) 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
bad=0
fail() { echo "afl-campaign-test: mutant: FAIL: $*"; bad=1; }

. "$root/ci/lib/tree.sh"
src=$tmp/src work=$tmp/work
kmgr_tree_copy "$root" "$src" && kmgr_apply_mutant "$src" "$root/mutants/fuzz-5-wrong-arm.patch" ||
	{ echo "afl-campaign-test: mutant: FAIL: cannot make the mutant tree"; exit 1; }
env -i PATH=/usr/bin:/bin HOME="$HOME" TMPDIR="${TMPDIR:-/tmp}" KMGR_CAMPAIGN_MARK="$mark" \
	KMGR_AFL_WORK="$work" bash "$src/ci/afl.sh" --seconds 10 --jobs 2 --targets api_seq \
	>"$tmp/out" 2>&1 &
pid=$!
wait "$pid"
rc=$?
pid=""

[ "$rc" = 1 ] || fail "exit $rc, want 1 (crashes): $(tail -n 5 "$tmp/out" | paste -sd'|')"
grep -qE '^afl\.sh: [0-9]+ crash\(es\)$' "$tmp/out" || fail "no 'afl.sh: N crash(es)' line"
head=$(grep -E '^  [0-9]+ crash file\(s\) in [0-9]+ bucket\(s\):$' "$tmp/out")
n=$(sed -n 's/^  \([0-9]*\) crash file.*/\1/p' <<<"$head")
m=$(sed -n 's/.* in \([0-9]*\) bucket.*/\1/p' <<<"$head")
listed=$(wc -l <"$work/api_seq/crashes.txt" 2>/dev/null || echo 0)
if [ -z "$n" ]; then
	fail "no 'N crash file(s) in M bucket(s)' line: $(grep -A3 '^== afl.sh summary' "$tmp/out" | paste -sd'|')"
else
	[ "$m" -ge 1 ] && [ "$m" -le 3 ] || fail "$n crash files in $m buckets: one bug, at most 3 crash states"
	[ "$n" = "$listed" ] || fail "$n crash files grouped, $listed listed in crashes.txt"
	while read -r f; do [ -f "$f" ] || fail "crashes.txt lists '$f', which is not there"; done <"$work/api_seq/crashes.txt"
fi
nrep=$(grep -c '^ *reproduce: ' "$tmp/out")
[ "$nrep" = "${m:-x}" ] || fail "$nrep reproduce lines for ${m:-?} buckets"
! grep -q '^ *crash: ' "$tmp/out" || fail "a line a crash file again"

# each bucket's reproduce line, as a user pastes it into sh
i=0
while IFS= read -r line; do
	i=$((i + 1))
	sig=$(grep -B2 -F "reproduce: $line" "$tmp/out" | head -n 1 | sed 's/^ *[0-9]*  //')
	env -i PATH=/usr/bin:/bin HOME="$HOME" sh -c "$line" >"$tmp/rep$i" 2>&1
	r=$?
	[ "$r" = 0 ] && grep -qF "reproduced 10/10: $sig" "$tmp/rep$i" ||
		fail "bucket $i ($sig): its reproduce line exits $r: $(tail -n 1 "$tmp/rep$i")"
done < <(sed -n 's/^ *reproduce: //p' "$tmp/out")

for _ in $(seq 25); do [ -n "$(left)" ] || break; sleep 0.2; done
[ -z "$(left)" ] || fail "5 s after the run, still running: $(left)"
scratch=$(find "$work" -maxdepth 1 -name '.summary*' | head -n 3)
[ -z "$scratch" ] || fail "scratch files left in the work folder: $scratch"

# Interrupted while it groups: the resumed run finds the bug again
env -i PATH=/usr/bin:/bin HOME="$HOME" TMPDIR="${TMPDIR:-/tmp}" KMGR_CAMPAIGN_MARK="$mark" \
	KMGR_AFL_WORK="$work" bash "$src/ci/afl.sh" --seconds 10 --jobs 2 --targets api_seq \
	>"$tmp/int.out" 2>&1 &
pid=$!
# triaging: a kmgr-repro of the run is there
triaging() {
	local p
	for p in $(left); do [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$src/build/afl/tools/kmgr-repro/kmgr-repro" ] && return 0; done
	return 1
}
for _ in $(seq 600); do triaging && break; sleep 0.1; done
triaging || fail "the resumed run was never seen grouping: $(tail -n 3 "$tmp/int.out" | paste -sd'|')"
kill -INT "$pid"
t0=$SECONDS
wait "$pid"
int_rc=$?
pid=""
[ "$int_rc" = 130 ] && [ $((SECONDS - t0)) -le 5 ] ||
	fail "SIGINT while grouping: exit $int_rc after $((SECONDS - t0))s, want 130 within 5 s"
grep -q '^== afl.sh summary so far (interrupted by SIGINT' "$tmp/int.out" ||
	fail "SIGINT while grouping: no summary marked interrupted"
for _ in $(seq 25); do [ -n "$(left)" ] || break; sleep 0.2; done
[ -z "$(left)" ] || fail "SIGINT while grouping: 5 s later still running: $(left | xargs ps -o pid=,args= -p | cut -c1-100 | paste -sd';')"
scratch=$(find "$work" -maxdepth 1 -name '.summary*' | head -n 3)
[ -z "$scratch" ] || fail "SIGINT while grouping: scratch files left: $scratch"

echo "afl-campaign-test: mutant: exit $rc, ${n:-?} crash files in ${m:-?} bucket(s), $i reproduce line(s) replayed;" \
	"SIGINT while grouping: exit $int_rc"
[ "$bad" = 0 ] || { echo "--- afl.sh's output"; cat "$tmp/out"; echo "--- the interrupted run's"; cat "$tmp/int.out" 2>/dev/null; }
exit "$bad"
