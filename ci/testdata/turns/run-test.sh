#!/usr/bin/env bash
# ci/testdata/turns/run-test.sh - kmgr_turns (ci/lib/turns.sh) on real
# processes (the ctest ci_turns): three busy loops, two CPUs' worth of
# turns of 0.4 s.  What it proves:
#   - from the first turn on, sampled every 0.1 s, one loop is stopped
#     and two run: at most a fifth of the samples otherwise.  A sample is
#     the three states read back to back until two reads agree (a read
#     torn by a turn's edge is not a state); a turn's edge stops the next
#     loop before it continues the last one, and a stop takes effect only
#     when its loop next gets a CPU, so on a loaded machine a sample can
#     see two stopped, or none, for some milliseconds (CI saw 2 of 40 in
#     one run: the slack of one sample failed it)
#   - the turns go round: each loop gets CPU time, the least at least a
#     third of the most (each runs two turns of three)
#   - SIGTERM to kmgr_turns while one loop is stopped: it exits 143 and
#     the stopped loop runs again (a stopped process acts on no signal but
#     SIGKILL: fuzz.sh's stop would otherwise wait 5 s for it)
#   - with every loop gone, kmgr_turns returns by itself within a turn
#   - kmgr_turns_max CPUS MAXWAIT (fuzz.sh's and afl.sh's --jobs cap) is
#     the most workers whose wait, turns of kmgr_turn_secs over the
#     workers ahead, stays within MAXWAIT: for 1-4 CPUs, MAXWAIT 2 and 10,
#     it does at the cap and not at one more
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
. "$root/ci/lib/turns.sh"
bad=0
fail() { echo "turns-test: FAIL: $*"; bad=1; }
w=()
# shellcheck disable=SC2317 # reached by the trap
cleanup() { kill -KILL "${w[@]}" 2>/dev/null; }
trap cleanup EXIT
for _ in 0 1 2; do
	bash -c 'while :; do :; done' &
	w+=($!)
done
# tw K SIG|alive: kmgr_turns' view of loop K
tw() {
	[ "$2" != alive ] || { kill -0 "${w[$1]}" 2>/dev/null; return; }
	kill "-$2" "${w[$1]}" 2>/dev/null || true
}
# states: the three loops' states (R, S, T, ...), read back to back
states() {
	local p l s=""
	for p in "${w[@]}"; do
		{ read -r l <"/proc/$p/stat"; } 2>/dev/null || l="x) ?"
		l=${l##*) }
		s+=${l:0:1}
	done
	echo "$s"
}
# stable_states: states until two reads in a row agree (at most 10)
stable_states() {
	local a b i
	a=$(states)
	for ((i = 0; i < 10; i++)); do
		b=$(states)
		[ "$a" != "$b" ] || break
		a=$b
	done
	echo "$a"
}
kmgr_turns 2 0.4 3 tw &
tp=$!
n=0 over=0 seen=0
for _ in $(seq 40); do
	sleep 0.1
	st=$(stable_states)
	stopped=${st//[^T]/}
	[ "$seen" = 1 ] || [ -z "$stopped" ] || seen=1
	[ "$seen" = 1 ] || continue
	n=$((n + 1))
	[ "${#stopped}" = 1 ] || over=$((over + 1))
done
[ "$n" -ge 30 ] && [ $((over * 5)) -le "$n" ] || fail "of $n samples from the first turn on, $over had not exactly one loop stopped"
# CPU time (utime + stime, clock ticks) of each loop
cpu=()
for p in "${w[@]}"; do cpu+=("$(sed 's/.*) //' "/proc/$p/stat" | awk '{ print $12 + $13 }')"); done
read -r lo hi < <(printf '%s\n' "${cpu[@]}" | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo, hi }')
[ "$lo" -gt 0 ] && [ $((lo * 3)) -ge "$hi" ] || fail "CPU ticks of the three loops: ${cpu[*]}"
# SIGTERM while one is stopped
for _ in $(seq 20); do [[ "$(states)" == *T* ]] && break; sleep 0.05; done
kill -TERM "$tp"
wait "$tp"
rc=$?
[ "$rc" = 143 ] || fail "kmgr_turns after SIGTERM: exit $rc, want 143"
sleep 0.2
st=$(states)
[[ "$st" != *T* ]] || fail "after SIGTERM to kmgr_turns a loop is still stopped: $st"
# every loop gone: it returns by itself
kill -KILL "${w[@]}" 2>/dev/null
wait "${w[@]}" 2>/dev/null
s=$SECONDS
(kmgr_turns 2 0.4 3 tw)
[ $((SECONDS - s)) -le 2 ] || fail "kmgr_turns with no loop left ran $((SECONDS - s)) s"
# the cap: at kmgr_turns_max workers the wait (the turn times the workers
# ahead of one on its CPU) is within MAXWAIT, at one more it is not
for c in 1 2 3 4; do
	for m in 2 10; do
		max=$(kmgr_turns_max "$c" "$m")
		for nw in "$max" $((max + 1)); do
			t=$(kmgr_turn_secs "$nw" "$c" "$m")
			within=$(awk -v n="$nw" -v c="$c" -v t="$t" -v m="$m" 'BEGIN { print (int((n - 1) / c) * t <= m) }')
			want=$([ "$nw" = "$max" ] && echo 1 || echo 0)
			[ "$within" = "$want" ] ||
				fail "kmgr_turns_max $c $m = $max: $nw workers in turns of ${t}s wait $(awk -v n="$nw" -v c="$c" -v t="$t" 'BEGIN { print int((n - 1) / c) * t }') s"
		done
	done
done
echo "turns-test: $n samples, $over without exactly one stopped; CPU ticks ${cpu[*]}; SIGTERM: exit $rc, states after: $st"
[ "$bad" = 0 ] && echo "turns-test: ok"
exit "$bad"
