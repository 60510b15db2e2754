#!/usr/bin/env bash
# ci/testdata/afl-campaign/run-test.sh BUILD - ci/afl.sh as a user runs it,
# on the afl preset's tree BUILD (the ctest afl_campaign): a campaign of 20 s
# (--seconds 20), two instances, api_seq, on two CPUs of this process's mask
# (one when it has one), no cgroup quota (KMGR_CGROUP_ROOT on an empty folder).
#   - binding (issue 39, item 2; docs/bench-notes/2026-12-06-afl-bind.md):
#     instance main runs on the first of the two CPUs and s1 on the second,
#     each alone, and every test process of the run (fork servers and the
#     programs they continue) on one of the instances' CPUs
#   - the run ends by its budget with exit 0, "afl.sh: no crashes", a
#     summary row for api_seq with executions, both instances' stats, and
#     no process of the run left 5 s later (its watchdog naps 0.5 s)
#   - the seconds it says the instances ran are at least -V's 20 and at
#     most the run's own, and the summary's execs/s are the executions of
#     this run (the stats' execs_done less what the queue it resumed had)
#     over those seconds
#   - its lock is free the moment it has exited
#   - before it, a run interrupted by SIGINT after its first status line:
#     exit 130, its summary so far marked "interrupted", nothing of it left
#     5 s later, its lock free; the 20-s run resumes its work folder,
#     started the moment it exited, and is not refused ("another afl.sh run")
# The CmpLog tree is BUILD's sibling afl-cmplog, where afl.sh puts it by
# default (built by the run when it is missing: about 10-30 s).
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "$1" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/afl-campaign-test.XXXXXX")
mark=afl-campaign-$$
pid=""
# left [MARK]: the pids of the processes of the run marked MARK (the main run's)
left() { grep -lzx "KMGR_CAMPAIGN_MARK=${1:-$mark}" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | paste -sd' '; }
# gone MARK: nothing of that run left within 5 s (its watchdog naps 0.5 s)
gone() {
	for _ in $(seq 25); do [ -n "$(left "$1")" ] || return 0; sleep 0.2; done
	[ -z "$(left "$1")" ]
}
cleanup() {
	[ -z "$pid" ] || kill -TERM "$pid" 2>/dev/null
	[ -z "$pid" ] || wait "$pid" 2>/dev/null
	# shellcheck disable=SC2046 # pids, one a word
	kill -KILL $(left) $(left "$mark-int") 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
bad=0
fail() { echo "afl-campaign-test: FAIL: $*"; bad=1; }

read -r -a mine <<<"$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))')"
if [ "${#mine[@]}" -ge 2 ]; then
	cpus=("${mine[0]}" "${mine[1]}")
else
	cpus=("${mine[0]}" "${mine[0]}")
fi
mkdir -p "$tmp/cg"
# afl MARK WORK OUT SECONDS: afl.sh from a plain shell on the two CPUs, in the background
afl() {
	env -i PATH=/usr/bin:/bin HOME="$HOME" TMPDIR="${TMPDIR:-/tmp}" KMGR_CAMPAIGN_MARK="$1" \
		KMGR_AFL_BUILD="$build" KMGR_AFL_CMPLOG_BUILD="$(dirname "$build")/afl-cmplog" \
		KMGR_AFL_WORK="$2" KMGR_CGROUP_ROOT="$tmp/cg" \
		taskset -c "$(
			IFS=,
			echo "${cpus[*]}"
		)" bash "$root/ci/afl.sh" --seconds "$4" --jobs 2 --targets api_seq >"$3" 2>&1 &
	pid=$!
}

# Interrupted: SIGINT once the first status line is out (the instances fuzz)
afl "$mark-int" "$tmp/wi" "$tmp/int.out" 60
for _ in $(seq 300); do grep -q '^\[afl.sh api_seq .*execs/s' "$tmp/int.out" && break; sleep 0.2; done
kill -INT "$pid"
wait "$pid"
int_rc=$?
pid=""
[ "$int_rc" = 130 ] || fail "SIGINT: exit $int_rc, not 130: $(tail -n 3 "$tmp/int.out" | paste -sd'|')"
grep -q '^== afl.sh summary so far (interrupted by SIGINT' "$tmp/int.out" &&
	grep -qE '^api_seq +[0-9]+ .*\(interrupted after [0-9]+s\)$' "$tmp/int.out" ||
	fail "SIGINT: no summary so far with api_seq's row marked interrupted: $(tail -n 3 "$tmp/int.out" | paste -sd'|')"
gone "$mark-int" || fail "SIGINT: 5 s later still running: $(left "$mark-int" | xargs ps -o pid=,args= -p | cut -c1-100 | paste -sd';')"
flock -n "$tmp/wi/.lock" true || fail "SIGINT: the lock of $tmp/wi is still held"

# execs_done FOLDER: every instance's executions, summed
execs_done() { cat "$1"/api_seq/out/*/fuzzer_stats 2>/dev/null | awk '$1 == "execs_done" { s += $3 } END { print s + 0 }'; }
before=$(execs_done "$tmp/wi")
t0=$SECONDS
afl "$mark" "$tmp/wi" "$tmp/out" 20

# The masks, sampled every 0.2 s until both instances and a test process
# of each were seen (instance -> Cpus_allowed_list; test processes' lists)
declare -A inst=()
tests=" "
while kill -0 "$pid" 2>/dev/null; do
	for p in $(left); do
		exe=$(readlink "/proc/$p/exe" 2>/dev/null) || continue
		cl=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$p/status" 2>/dev/null)
		[ -n "$cl" ] || continue
		if [ "${exe##*/}" = afl-fuzz ]; then
			mapfile -d '' a <"/proc/$p/cmdline" 2>/dev/null || continue
			for ((k = 0; k + 1 < ${#a[@]}; k++)); do
				case ${a[k]} in -M | -S) inst[${a[k + 1]}]=$cl ;; esac
			done
		elif [ "${exe##*/}" = api_seq ]; then
			[[ "$tests" == *" $cl "* ]] || tests="$tests$cl "
		fi
	done
	[ "${#inst[@]}" = 2 ] && [ "$(wc -w <<<"$tests")" -ge "$([ "${cpus[0]}" = "${cpus[1]}" ] && echo 1 || echo 2)" ] && break
	sleep 0.2
done
wait "$pid"
rc=$?
pid=""
wall=$((SECONDS - t0 + 1))
# at once, before anything else: the lock is this run's no more
flock -n "$tmp/wi/.lock" true ||
	fail "the lock of $tmp/wi is still held after the run exited: the next run would be refused"
! grep -q 'another afl.sh run' "$tmp/out" || fail "the run after the interrupted one was refused: $(head -n 3 "$tmp/out")"

[ "${inst[main]:-}" = "${cpus[0]}" ] && [ "${inst[s1]:-}" = "${cpus[1]}" ] ||
	fail "binding: main on '${inst[main]:-?}', s1 on '${inst[s1]:-?}'; want ${cpus[0]} and ${cpus[1]}"
for cl in $tests; do
	[ "$cl" = "${cpus[0]}" ] || [ "$cl" = "${cpus[1]}" ] ||
		fail "binding: a test process of the run on CPUs '$cl', not an instance's (${cpus[*]})"
done
[ "$tests" != " " ] || fail "binding: no test process of the run was seen"

[ "$rc" = 0 ] || fail "exit $rc: $(tail -n 5 "$tmp/out")"
grep -q '^afl.sh: no crashes$' "$tmp/out" || fail "no 'afl.sh: no crashes' line: $(tail -n 3 "$tmp/out")"
row=$(grep -A2 '^== afl.sh summary (20s, 20s per target, 2 instance(s)' "$tmp/out" | grep '^api_seq ')
eps=$(awk '{ print $2 }' <<<"$row")
[[ "$eps" =~ ^[0-9]+$ ]] && [ "$eps" -gt 0 ] || fail "the summary's api_seq row: '$row'"
for i in main s1; do
	e=$(awk '$1 == "execs_done" { print $3 }' "$tmp/wi/api_seq/out/$i/fuzzer_stats" 2>/dev/null)
	[ "${e:-0}" -gt 0 ] || fail "instance $i: no executions in its fuzzer_stats"
done
ran=$(sed -n 's/^-- afl.sh: api_seq: the instances ran \([0-9]*\)s (-V 20)$/\1/p' "$tmp/out")
total=$(execs_done "$tmp/wi")
if ! [[ "$ran" =~ ^[0-9]+$ ]]; then
	fail "no line 'the instances ran Ns (-V 20)'"
else
	[ "$ran" -ge 20 ] && [ "$ran" -le "$wall" ] || fail "the instances ran ${ran}s: not within 20..${wall}s"
	[ "$ran" -gt 0 ] && [ "$eps" = "$(((total - before) / ran))" ] ||
		fail "execs/s $eps, but ($total - $before) executions over ${ran}s make $(((total - before) / (ran > 0 ? ran : 1)))"
fi
gone "$mark" || fail "5 s after the run, still running: $(left | xargs ps -o pid=,args= -p | cut -c1-100 | paste -sd';')"

echo "afl-campaign-test: SIGINT: exit $int_rc, $(grep -o 'interrupted after [0-9]*s' "$tmp/int.out")"
echo "afl-campaign-test: main on ${inst[main]:-?}, s1 on ${inst[s1]:-?}, test processes on$tests;" \
	"exit $rc, $eps execs/s: $((total - before)) executions (of $total) over ${ran:-?}s of ${wall}s"
[ "$bad" = 0 ] || { echo "--- afl.sh's output, interrupted"; cat "$tmp/int.out"; echo "--- and the 20-s run's"; cat "$tmp/out"; }
exit "$bad"
