# ci/lib/turns.sh - sourced by ci/fuzz.sh, ci/afl.sh and ci/bench/scale-bench.sh:
# workers that outnumber the CPUs take turns instead of running at once.
#
#   kmgr_turns CPUS SECS N FN
#       workers 0 .. N-1 (N > CPUS) run CPUS at a time: every SECS seconds
#       the next CPUS of them in cyclic order get SIGCONT, after the ones
#       whose turn ended got SIGSTOP (so no more than CPUS run at any
#       moment).  `FN K SIG` sends SIG to worker K (whatever processes that
#       means; a worker with none left is skipped).  Runs until `FN K alive`
#       fails for every K, then continues them all; a SIGTERM or SIGINT
#       continues them all too, before it exits 128+signal: a stopped
#       process acts on no signal but SIGKILL.  The ones whose turn it is
#       not are stopped again every half second (a process a worker
#       started meanwhile).  It sets its own traps: run it in a subshell
#       or in the background (&).
#
#   kmgr_turn_secs N CPUS MAXWAIT
#       the turn for N workers on CPUS: 2 s, shorter where a worker would
#       wait more than MAXWAIT seconds for its next turn (a stopped
#       worker's execution under way counts that wait against its
#       timeout), never under 0.25 s.
#
#   kmgr_turns_max CPUS MAXWAIT
#       the most workers CPUS can take turns for, in turns of 0.25 s or
#       more, none waiting more than MAXWAIT seconds for its next turn:
#       beyond it kmgr_turn_secs' floor would make them wait longer (past
#       41 libFuzzer workers a CPU, 9 AFL++ instances), so fuzz.sh and
#       afl.sh refuse such a --jobs.
#
#   kmgr_jobs_fit JOBS CPUS MAXWAIT
#       bad usage (kmgr_die, ci/lib/usage.sh) when JOBS is over
#       kmgr_turns_max CPUS MAXWAIT, with the limit in its line
#
# Why (docs/bench-notes/2026-12-05-worker-turns.md): two fuzz workers at
# once on one CPU switch every 50 ms or so (their slice,
# fuzz/harness/slice.c), and pay x1.04-1.11 CPU for the same executions
# against the same two taking turns of 1 s, which cost what one worker
# alone costs (x0.98-1.05).  A longer slice does not get there: 100 ms,
# the kernel's most, still paid x1.08-1.17.  A stopped worker's unit under
# way counts its wait against libFuzzer's 25-s timeout; the turns keep
# that wait under 10 s (kmgr_turn_secs).

kmgr_turns_max() { awk -v c="$1" -v m="$2" 'BEGIN { print (int(m / 0.25) + 1) * c }'; }
kmgr_jobs_fit() {
	local max
	max=$(kmgr_turns_max "$2" "$3")
	[ "$1" -le "$max" ] ||
		kmgr_die "--jobs $1: at most $max on $2 CPU(s) (more would wait over $3 s for a turn)"
}
kmgr_turn_secs() {
	awk -v n="$1" -v c="$2" -v m="$3" 'BEGIN { w = int((n - 1) / c)
		t = 2; if (w * t > m) t = m / w; if (t < 0.25) t = 0.25; print t }'
}
# kmgr_turns_release N FN: every worker continued (the traps' way out)
kmgr_turns_release() {
	local k
	for ((k = 0; k < $1; k++)); do "$2" "$k" CONT; done
}
# shellcheck disable=SC2064 # the traps take N and FN's values now
kmgr_turns() {
	local cpus=$1 secs=$2 n=$3 fn=$4 first=0 k t live tick ticks
	# the values in the traps' text: they may run after this returns
	trap "kmgr_turns_release $n $fn" EXIT
	trap "kmgr_turns_release $n $fn; trap - EXIT; exit 143" TERM
	trap "kmgr_turns_release $n $fn; trap - EXIT; exit 130" INT
	# a turn in ticks of about 0.5 s: at each, the ones whose turn it is
	# not are stopped again, which catches a process started meanwhile (a
	# worker's first, or its next after a finding)
	ticks=$(awk -v s="$secs" 'BEGIN { t = int(s / 0.5 + 0.5); print t < 1 ? 1 : t }')
	tick=$(awk -v s="$secs" -v t="$ticks" 'BEGIN { print s / t }')
	while :; do
		live=0
		for ((k = 0; k < n; k++)); do
			! "$fn" "$k" alive || live=1
		done
		[ "$live" = 1 ] || break
		for ((t = 0; t < ticks; t++)); do
			# stop the ones whose turn it is not, then continue the others
			for ((k = 0; k < n; k++)); do
				(((k - first + n) % n < cpus)) || "$fn" "$k" STOP
			done
			for ((k = 0; k < n; k++)); do
				(((k - first + n) % n >= cpus)) || "$fn" "$k" CONT
			done
			sleep "$tick"
		done
		first=$(((first + cpus) % n))
	done
	kmgr_turns_release "$n" "$fn"
	trap - EXIT TERM INT
}
