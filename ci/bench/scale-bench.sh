#!/usr/bin/env bash
# ci/bench/scale-bench.sh [--seconds N] [--rounds R] [--targets a,b] [--afl-target T] [--no-afl]
#                         [--turn S | --sequential] [--seeds DIR] [--help]
# BENCHMARKS.md, "Every core": the paired ratios of issue 39 in one run.
# For each target (default concurrent,api_nrt,api_seq; none: AFL++'s rows
# alone), four libFuzzer rows of N seconds each (default 20), each the way
# ci/fuzz.sh runs a worker (the target's corpus/T.options, a fresh copy of
# corpus/T, workers on one shared folder, worker K with -seed=K+1): one
# worker free, one worker pinned to CPU 0, two workers free, two workers
# both pinned to CPU 0 and taking turns of 2 s, as ci/fuzz.sh's workers
# (and ci/afl.sh's instances) do where they outnumber the CPUs
# (ci/lib/turns.sh).
# The four rows take turns: started together, one row runs for S seconds
# (--turn, default 2) while the other three are stopped (SIGSTOP), then the
# next, until each has had its N seconds of the machine.  This host's
# speed moves by up to x2 within minutes (a busy VM host; the same replay
# took 630 ms before one row and 1,230 ms before the next), which rows run
# one after the other would read as a ratio; taking turns spreads every
# change over all four rows alike.  The pinned rows take CPU 0 and CPU 1
# in turn (all of a row's workers on the same one), so that a host that
# slows one vCPU for minutes slows them as much as the free rows.  A
# stopped worker loses nothing but wall time: libFuzzer's unit timeout
# (25 s) is far above the 3 turns it waits, and each row's figures are
# over its own share.  --sequential runs the rows one after the other
# instead, as before (pinned to CPU 0).
# --seeds DIR: the libFuzzer rows start from a copy of DIR/T instead of
# corpus/T (a grown corpus, e.g. a campaign's fuzz-work/asan/T/corpus
# copied to DIR/T): the same seeds for every row.  A pair explores twice
# as fast as one worker, and while the corpus is young its inputs grow
# dearer as it explores (docs/bench-notes/2026-12-05-pair-age.md), so a
# pair's x2cpu from the shipped seeds counts what it found as well as
# what its workers ran; from grown seeds that part is small.  The probe
# and AFL++ keep the shipped seeds.
# Then AFL++ (ci/afl.sh's way: -M with CmpLog alone, -M + -S with CmpLog
# on the secondary, the free pair's instances bound to CPU 0 and CPU 1;
# the free one alone unbound) on the AFL target (default api_seq), the
# same four rows taking turns the same way.  A turn stops afl-fuzz alone:
# its fork servers finish the execution under way and wait for the next
# input, so a stop reads as one slow execution, never a hang (afl_turns).
# The rows' folders go to $TMPDIR (default /tmp), whose filesystem the
# first line names (ci/lib/workfs.sh: an ext4 without a journal makes
# every file a worker writes dearer, x1.04-1.18 CPU against tmpfs).
# Prints a row per run (total executions, exec/s over N s, each worker's
# CPU time over the wall time it had, coverage, and the probe: the CPU
# milliseconds of one fixed replay taken before the row, or before the
# round of four rows that take turns, the machine's speed at that moment)
# and per target the ratios:
#   x2cpu  executions of 2 workers / 1 worker, free on 2 CPUs (goal >= 1.8)
#   x1cpu  the same, everything pinned to one CPU (the two workers taking
#          turns) (goal >= 0.95)
#   pin    one worker pinned / free (goal 0.9 .. 1.1)
# --rounds R (default 1) runs a target's four rows R times, one round
# after the other, and prints each ratio's median over the rounds (and
# its range): the same 20-s one-worker row moves by up to x1.3 between two
# runs on a quiet machine (each run fuzzes other inputs), so one round's
# ratio can miss a goal by noise alone.  AFL++'s four rows take part in the
# rounds the same way.
# cpu/wall above 1.0 for one worker would mean something beside the fuzz
# loop runs on another CPU.  The CPU time an execution costs (us/exec, all
# workers' user+system time over their executions) and its ratios (cpu:
# 2 workers / 1, pinned / free): above x1.0, two workers or the pinning
# make each execution dearer (shared caches, memory, page faults, or
# heavier inputs: two workers on one folder run each other's finds).
# The probes' spread is printed with the ratios: past x1.15 the machine's
# own speed moved during the run; rows one after the other then measure
# it as much as the workers.  So is "both CPUs busy" (the probe's CPU on
# both CPUs at once over its CPU alone on each, three times before each
# round): this VM's guest time counts the host's stalls (no steal time),
# and its host at times charges more when both vCPUs run, so x2cpu cannot
# pass 2 over that figure.  One such sample moved x0.95-1.24 back to back
# on 2026-12-05: read the median over rounds.
# Needs build/asan (cmake --build --preset asan --target fuzz_T) and, for
# AFL++, ci/afl.sh's builds (build/afl, build/afl-cmplog).
set -euo pipefail
secs=20 rounds=1 targets=concurrent,api_nrt,api_seq aflt=api_seq afl=1 turn=2 alt=0 seeds=
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
	--no-afl) afl=0; shift ;;
	--sequential) turn=0; shift ;;
	--seconds | --rounds | --targets | --target | --afl-target | --turn | --seeds)
		[ $# -ge 2 ] || { echo "scale-bench: $1 needs a value" >&2; exit 2; }
		case "$1" in
		--seconds) secs=$2 ;;
		--rounds) rounds=$2 ;;
		--afl-target) aflt=$2 ;;
		--turn) turn=$2 ;;
		--seeds) seeds=$2 ;;
		*) targets=$2 ;;
		esac
		shift 2
		;;
	*) echo "scale-bench: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
done
[[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -ge 10 ] || { echo "scale-bench: --seconds N, N >= 10" >&2; exit 2; }
[[ "$turn" =~ ^[0-9]+$ ]] && [ "$turn" -ge 1 ] && [ "$turn" -le 5 ] || [ "$turn" = 0 ] || { echo "scale-bench: --turn S, 1 <= S <= 5" >&2; exit 2; }
[[ "$rounds" =~ ^[0-9]+$ ]] && [ "$rounds" -ge 1 ] && [ "$rounds" -le 20 ] || { echo "scale-bench: --rounds R, 1 <= R <= 20" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
IFS=, read -r -a tlist <<<"$targets"
[ "${#tlist[@]}" -gt 0 ] || { echo "scale-bench: --targets names none (--targets none: AFL++ alone)" >&2; exit 2; }
[ "$targets" != none ] || tlist=()
[ "${#tlist[@]}" -gt 0 ] || [ "$afl" = 1 ] || { echo "scale-bench: --targets none with --no-afl: nothing to run" >&2; exit 2; }
for t in "${tlist[@]}" $([ "$afl" = 0 ] || echo "$aflt"); do
	[ -d "$root/corpus/$t" ] || { echo "scale-bench: unknown target $t" >&2; exit 2; }
done
[ -n "$seeds" ] || seeds=$root/corpus
for t in "${tlist[@]}"; do
	[ -n "$(find "$seeds/$t" -maxdepth 1 -type f -print -quit 2>/dev/null)" ] ||
		{ echo "scale-bench: --seeds $seeds: no file in $seeds/$t" >&2; exit 2; }
done
for t in "${tlist[@]}"; do
	[ -x "$root/build/asan/fuzz/$t" ] || { echo "scale-bench: build/asan/fuzz/$t missing (cmake --build --preset asan --target fuzz_$t)" >&2; exit 2; }
done
if [ "$afl" = 1 ]; then
	for b in "$root/build/afl/fuzz/$aflt" "$root/build/afl-cmplog/fuzz/$aflt"; do
		[ -x "$b" ] || { echo "scale-bench: $b missing (ci/afl.sh builds it; or --no-afl)" >&2; exit 2; }
	done
fi
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || echo "scale-bench: $ncpu CPU: the two-CPU rows are not what they say" >&2
. "$root/sanitizers/env.sh"
. "$root/ci/lib/options.sh"
. "$root/ci/lib/afl.sh"
. "$root/ci/lib/workfs.sh"
. "$root/ci/lib/turns.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/scale-bench.XXXXXX")
kmgr_workfs_note "$work" TMPDIR scale-bench >&2
# Every afl-fuzz of this run, and so its fork servers and their children,
# carries KMGR_SCALE_RUN=$run (ci/lib/afl.sh): a CmpLog persistent-mode
# child is left stopped even after afl-fuzz -V ends normally, one per run
# when nothing reaps it.  reap kills what is left after each AFL++ row.
run=$$.$RANDOM$RANDOM
pids=()
declare -A rowpids=()
reap() { kmgr_reap_tagged "KMGR_SCALE_RUN=$run" scale-bench || true; }
# a libFuzzer row's workers each lead a process group of their own (set -m
# at their launch, as ci/fuzz.sh does; not setsid: a session is a
# scheduler autogroup, and two would get two shares of a loaded machine
# where ci/fuzz.sh's workers get one): stop signals the whole group,
# /usr/bin/time and the fuzzer under it, and continues it in case it was
# waiting for its turn
stop() {
	local p
	for p in "${pids[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true
		kill -CONT -- "-$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}
trap 'stop; reap; rm -rf "$work"' EXIT
trap 'echo "scale-bench: interrupted" >&2; exit 130' INT
trap 'echo "scale-bench: terminated" >&2; exit 143' TERM
row() { printf '%-11s %-12s %7s %10s %8s %8s %-11s %6s %6s\n' "$@"; }
# probe T: the machine's speed now, for target T: the CPU milliseconds of
# one fixed workload (every shipped seed of corpus/T 500 times, the asan
# build pinned to CPU 0), taken before each row ("-" without the build).
# The workload never changes, so where it moves between rows the machine
# moved: on the project's VM a busy host made the same replay x1.5-3
# slower within an hour while an ALU loop kept its speed, and the rows'
# ratios then measure the host as much as the workers.  With 2 CPUs the
# probe then runs three times alone on CPU 0, alone on CPU 1 and on both
# at once: the CPU of the runs at once over the runs alone (to "both") is
# what this machine charges a replay when both its CPUs are busy, which
# x2cpu pays too.
probe_run() { # CPU FILE: one probe replay pinned to CPU, its time in FILE
	/usr/bin/time -f '%U %S' -o "$2" taskset -c "$1" "$b" -runs=500 -timeout=25 \
		-rss_limit_mb=4096 "$root/corpus/$t"/* >/dev/null 2>&1
}
probe() {
	local t=$1 b=$root/build/asan/fuzz/$1 p0 p1 k
	pms=-
	[ -x "$b" ] || return 0
	probe_run 0 "$work/probe" || return 0
	pms=$(awk '{ printf "%d", ($1 + $2) * 1000 }' "$work/probe")
	probes+=("$pms")
	[ "$ncpu" -ge 2 ] || return 0
	for k in 1 2 3; do # the first time on CPU 0 alone is the one above
		[ "$k" = 1 ] || probe_run 0 "$work/probe" || return 0
		probe_run 1 "$work/probe-a1" || return 0
		probe_run 0 "$work/probe-b0" & p0=$!
		probe_run 1 "$work/probe-b1" & p1=$!
		wait "$p0" && wait "$p1" || return 0
		cat "$work/probe" "$work/probe-a1" "$work/probe-b0" "$work/probe-b1"
	done >"$work/probe-both"
	both+=("$(awk '{ c = $1 + $2; if (NR % 4 == 1 || NR % 4 == 2) a += c; else b += c }
		END { if (a > 0) printf "%.4f", b / a; else print 1 }' "$work/probe-both")")
}
# spread [turns]: "probe MIN-MAX ms (xR)" over this target's probes, and
# past x1.15 a warning, or with turns a note that the rows shared it
spread() {
	[ "${#probes[@]}" -gt 0 ] || return 0
	printf '%s\n' "${probes[@]}" | sort -n | awk -v turns="${1:-}" '{ v[NR] = $1 } END {
		r = v[1] > 0 ? v[NR] / v[1] : 0
		printf "  probe %d-%d ms (x%.2f)", v[1], v[NR], r
		if (r > 1.15 && turns != "")
			printf ": the machine moved between rounds (the rows of a round took turns)"
		else if (r > 1.15)
			printf ": the machine moved, the ratios above measure it too"
	}'
	[ "${#both[@]}" -eq 0 ] || printf '; both CPUs busy: %s CPU a replay' "$(med "${both[@]}")"
}
# rnum A B: A/B as a number (0 when B is 0); med X...: "xMEDIAN" of the
# numbers, with "(min-max)" when there are several
rnum() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.4f", a / b; else printf "0" }'; }
med() {
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
		END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "x%.2f", m; if (NR > 1) printf " (%.2f-%.2f)", v[1], v[NR] }'
}
# round_suffix R: a row name's suffix in round R (none with one round)
round_suffix() { [ "$rounds" = 1 ] || echo ".r$1"; }
# add_ratios F1 P1 F2 P2: one round's x2cpu, x1cpu and pin, from the
# executions of its four rows (1 worker free, 1 pinned, 2 free, 2 pinned),
# appended to x2, x1 and pn, for libFuzzer and AFL++ alike
add_ratios() { x2+=("$(rnum "$3" "$1")") x1+=("$(rnum "$4" "$2")") pn+=("$(rnum "$2" "$1")"); }
# goals NAME: a summary line's start, the medians of x2, x1 and pn
# against issue 39's goals
goals() {
	printf '%-11s x2cpu %s (>= 1.8)  x1cpu %s (>= 0.95)  pin %s (0.9..1.1)' "$1" \
		"$(med "${x2[@]}")" "$(med "${x1[@]}")" "$(med "${pn[@]}")"
}

# lf_start T NAME WORKERS PIN SECS [stopped]: one libFuzzer row's workers,
# for SECS seconds of wall time; their pids in rowpids[NAME] and pids.
# Each under /usr/bin/time, or with "stopped" started stopped (a shell
# that stops itself, then execs the worker: its pid stays the worker's)
# and with no /usr/bin/time, whose group would die of the SIGUSR1 that
# ends a worker there; lf_turns takes its CPU time from /proc.
lf_start() {
	local t=$1 d=$work/$1-$2 n=$3 k pre=()
	[ "$4" = pin ] && pre=(taskset -c 0)
	if [ "${6:-}" = stopped ]; then
		pre=(bash -c 'kill -STOP $$ && exec "$@"' scale-bench "${pre[@]}")
	else
		pre=(/usr/bin/time -f '%U %S %e' -o "$d/time-K" "${pre[@]}")
	fi
	mkdir -p "$d/corpus" "$d/new" "$d/art"
	find "$seeds/$t" -maxdepth 1 -type f -exec cp -t "$d/corpus/" {} +
	kmgr_libfuzzer_flags "$root/corpus/$t.options"
	rowpids[$2]=""
	set -m
	for ((k = 0; k < n; k++)); do
		"${pre[@]/%time-K/time-$k}" "$root/build/asan/fuzz/$t" \
			-timeout=25 -rss_limit_mb=4096 "${kmgr_opt_flags[@]}" -seed=$((k + 1)) -max_total_time="$5" \
			-print_final_stats=1 -artifact_prefix="$d/art/" "$d/new" "$d/corpus" >"$d/log-$k" 2>&1 &
		pids+=($!) rowpids[$2]+=" $!"
	done
	set +m
}
# lf_row T NAME WORKERS: the row of a finished run; sets execs and us (CPU
# microseconds an execution).  Its time-K files: user and system seconds
# of worker K, and the wall time it had the machine.
lf_row() {
	local t=$1 d=$work/$1-$2 n=$3 k cov cw
	execs=0
	for ((k = 0; k < n; k++)); do
		execs=$((execs + $(awk '/stat::number_of_executed_units/ { u = $2 } END { print u + 0 }' "$d/log-$k")))
	done
	cov=$(cat "$d"/log-* | grep -aoE 'cov: [0-9]+' | cut -d' ' -f2 | sort -n | tail -1)
	cpu_cols "$d/time-" "$n"
	row "$t" "$2" "$n" "$execs" "$((execs / secs))" "$us" "$cw" "${cov:-?}" "$pms"
}
# cpu_cols PREFIX N: from the files PREFIX0 .. PREFIX<N-1> (a worker's user
# and system seconds and its wall time each) and execs, the columns
# us/exec (us: all workers' CPU microseconds over their executions) and
# cpu/wall (cw: each worker's, joined by /)
cpu_cols() {
	local k files=()
	for ((k = 0; k < $2; k++)); do files+=("$1$k"); done
	cw=$(awk 'NF == 3 && $3 > 0 { printf "%s%.2f", (NR > 1 ? "/" : ""), ($1 + $2) / $3 }' "${files[@]}")
	us=$(awk -v e="$execs" 'NF == 3 { c += $1 + $2 } END { if (e > 0) printf "%.1f", c * 1e6 / e; else print 0 }' "${files[@]}")
}
# A round's four libFuzzer rows: name, workers, placement.  Their
# executions and CPU microseconds an execution go to e[] and u[], in this
# order, for add_ratios.
rname=(free1 pin1 free2 pin2) rworkers=(1 1 2 2) rplace=(free pin free pin)
# lf T NAME WORKERS PIN: one libFuzzer row on its own (--sequential);
# pinned workers take turns (kmgr_turns, as ci/fuzz.sh's)
lf() {
	local tp
	probe "$1"
	lf_start "$1" "$2" "$3" "$4" "$secs"
	row_turns "$2" "$3" "$4"
	wait ${rowpids[$2]} || true
	[ -z "$tp" ] || wait "$tp" || true
	pids=()
	lf_row "$1" "$2" "$3"
}
# row_turns NAME WORKERS PLACE: a pinned row of several workers (--sequential)
# takes turns of 2 s: kmgr_turns in the background, its pid in tp ("" for
# any other row)
row_turns() {
	tp=""
	[ "$3" = pin ] && [ "$2" -gt 1 ] || return 0
	read -r -a rw <<<"${rowpids[$1]}"
	kmgr_turns 1 2 "$2" row_worker &
	tp=$!
}
# row_worker K SIG|alive (kmgr_turns): SIG to the process group of worker
# K of the row in rw (/usr/bin/time and the worker it runs)
row_worker() {
	[ "$2" != alive ] || { kill -0 "${rw[$1]}" 2>/dev/null; return; }
	kill "-$2" -- "-${rw[$1]}" 2>/dev/null || true
}
# pstat PID: the fields of /proc/PID/stat after the ")" that ends the
# command name (state first, then utime and stime as the 12th and 13th)
pstat() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null; }
# sig SIGNAL NAME: SIGNAL to each process group of row NAME
sig() {
	local p
	for p in ${rowpids[$2]}; do kill "-$1" -- "-$p" 2>/dev/null || true; done
}
# take_turns START PIN SFX NAME...: the round's four rows (NAME plus SFX,
# rworkers and rplace in their order) started together and stopped
# (START NAME WORKERS PLACE SECS stopped), then taking turns of $turn s on
# the machine while the other three wait stopped (SIGSTOP to their
# process groups), until each has had $secs s, rounded up to whole turns
# (each): any change of the machine's speed reaches all four rows alike.
# A pinned row moves to CPU 0 and CPU 1 at alternate turns of its own
# (PIN NAME WORKERS CPU).  Returns with every row stopped; names holds
# the rows' names.  START and PIN are a command and its first words.
take_turns() {
	local start=$1 pin=$2 sfx=$3 nt i p cur=0
	shift 3
	names=("${@/%/$sfx}")
	each=$(((secs + turn - 1) / turn))
	nt=$((each * ${#names[@]}))
	for i in "${!names[@]}"; do
		# shellcheck disable=SC2086 # START: a command and its first words
		$start "${names[i]}" "${rworkers[i]}" "${rplace[i]}" $((nt * turn + 120)) stopped
	done
	# each has stopped itself (state T) before the first row continues:
	# a SIGCONT that came first would be lost, and with it a whole turn
	for p in "${pids[@]}"; do
		for ((i = 0; i < 200; i++)); do
			[ "$(pstat "$p" | cut -d' ' -f1)" != T ] || break
			sleep 0.05
		done
	done
	cont_row 0 0
	for ((i = 1; i < nt; i++)); do
		sleep "$turn"
		sig STOP "${names[$cur]}"
		cur=$(((cur + 1) % ${#names[@]}))
		# a pinned row takes CPU 0 and CPU 1 in turn, all its workers on
		# the same one: at any moment it is pinned, and a host that slows
		# one vCPU for minutes (this one's CPU 0 ran the same replay x1.4
		# slower than CPU 1) slows it as much as the free rows
		if [ "${rplace[cur]}" = pin ] && [ "$ncpu" -ge 2 ]; then
			# shellcheck disable=SC2086 # PIN: a command and its first words
			$pin "${names[$cur]}" "${rworkers[cur]}" $(((i / ${#names[@]}) % 2))
		fi
		cont_row "$cur" "$i"
	done
	sleep "$turn"
	sig STOP "${names[$cur]}"
}
# cont_row C I: row C continues for turn I of the round.  With $alt, a
# pinned row of several workers continues one of them, the next at each
# of its turns: workers that outnumber the CPUs take turns (ci/fuzz.sh).
cont_row() {
	local c=$1 a
	if [ "$alt" = 1 ] && [ "${rplace[c]}" = pin ] && [ "${rworkers[c]}" -gt 1 ]; then
		read -r -a a <<<"${rowpids[${names[c]}]}"
		kill -CONT -- "-${a[$((($2 / ${#names[@]}) % ${#a[@]}))]}" 2>/dev/null || true
		return
	fi
	sig CONT "${names[$c]}"
}
# lf_pin NAME WORKERS CPU: every worker of libFuzzer row NAME onto CPU
lf_pin() {
	local p
	for p in ${rowpids[$1]}; do taskset -a -p -c "$3" "$p" >/dev/null 2>&1 || true; done
}
# lf_turns T SFX: the round's four libFuzzer rows of target T taking
# turns (take_turns).  Then, all stopped, each worker's CPU time is read
# from /proc, and SIGUSR1 ends it (libFuzzer's graceful exit: the run's
# last execution, then its final statistics).  -max_total_time only
# bounds a worker whose script died.
lf_turns() {
	local t=$1 names=() each i k p d
	probe "$t"
	alt=1
	take_turns "lf_start $t" lf_pin "$2" "${rname[@]}"
	alt=0
	for i in "${!names[@]}"; do
		d=$work/$t-${names[i]} k=0
		for p in ${rowpids[${names[i]}]}; do
			# utime and stime in clock ticks (USER_HZ 100)
			pstat "$p" | awk -v w=$((each * turn)) '{ printf "%.2f %.2f %d\n", $12 / 100, $13 / 100, w }' >"$d/time-$k"
			kill -USR1 "$p" 2>/dev/null || true
			k=$((k + 1))
		done
		sig CONT "${names[i]}"
	done
	wait "${pids[@]}" || true
	pids=()
	for i in "${!names[@]}"; do
		lf_row "$t" "${names[i]}" "${rworkers[i]}"
		e[i]=$execs u[i]=$us
	done
}

# The AFL++ rows, in add_ratios' order, as the libFuzzer ones.
aname=(M M-pin1 M+S M+S-pin1)
# afl_start NAME INSTANCES PIN SECS [stopped]: one AFL++ row's afl-fuzz
# processes (ci/afl.sh's way: one instance with CmpLog, or -M and an -S
# with CmpLog), each leading a process group, for SECS s of wall time
# (-V); their pids in rowpids[NAME] and pids.  "stopped" as in lf_start.
# Every process of instance K, its fork servers and test processes too,
# carries KMGR_SCALE_ROW=$run.NAME.K, by which afl_pin and afl_cpu find
# them (a fork server calls setsid: no group reaches it).
afl_start() {
	local out=$work/afl-$1 pre k role cl
	rowpids[$1]=""
	set -m
	for ((k = 0; k < $2; k++)); do
		# free, instances of a pair are bound to a CPU each, as ci/afl.sh
		# binds them; one instance free runs as afl-fuzz does by itself
		pre=()
		[ "$3" = pin ] && pre=(taskset -c 0)
		[ "$3" = free ] && [ "$2" -gt 1 ] && pre=(taskset -c $((k % ncpu)))
		[ "${5:-}" = stopped ] && pre=(bash -c 'kill -STOP $$ && exec "$@"' scale-bench "${pre[@]}")
		role=(-M main) cl=()
		[ "$k" = 0 ] || role=(-S "s$k")
		[ "$k" = "$(($2 - 1))" ] && cl=(-c "$cl_bin")
		KMGR_SCALE_RUN=$run KMGR_SCALE_ROW=$run.$1.$k "${pre[@]}" afl-fuzz "${role[@]}" "${cl[@]}" \
			-i "$root/corpus/$aflt" -o "$out" -x "$dict" -m none -t 5000 -V "$4" -- "$ab" \
			>"$out.${role[1]}.log" 2>&1 &
		pids+=($!) rowpids[$1]+=" $!"
	done
	set +m
}
# afl_row NAME INSTANCES: the row of a finished run; sets execs and us.
# Taking turns, afl_cpu left each instance's CPU time in time-K (as
# lf_row's); one after the other, no CPU figures.  A hang an instance
# saved is named on stderr: taking turns must not make any.
afl_row() {
	local out=$work/afl-$1 cw=- hangs
	execs=$(cat "$out"/*/fuzzer_stats 2>/dev/null | awk '$1 == "execs_done" { s += $3 } END { printf "%d", s }')
	us=-
	[ ! -f "$out.time-0" ] || cpu_cols "$out.time-" "$2"
	hangs=$(cat "$out"/*/fuzzer_stats 2>/dev/null | awk '$1 == "saved_hangs" { s += $3 } END { printf "%d", s }')
	[ "$hangs" = 0 ] || echo "scale-bench: AFL++ row $1 saved $hangs hang(s)" >&2
	row "$aflt" "$1" "$2" "$execs" "$((execs / secs))" "$us" "$cw" \
		"$(cat "$out"/*/fuzzer_stats 2>/dev/null | awk '$1 == "edges_found" { print $3 }' | sort -n | tail -1)" "$pms"
}
# afl_seq NAME INSTANCES PIN: one AFL++ row on its own (--sequential)
afl_seq() {
	local tp
	probe "$aflt"
	afl_start "$1" "$2" "$3" "$secs"
	row_turns "$1" "$2" "$3"
	wait ${rowpids[$1]} || true
	[ -z "$tp" ] || wait "$tp" || true
	pids=()
	reap
	afl_row "$1" "$2"
}
# afl_pin NAME INSTANCES CPU: every process of AFL++ row NAME onto CPU
afl_pin() {
	local k p
	for ((k = 0; k < $2; k++)); do
		for p in $(kmgr_tagged "KMGR_SCALE_ROW=$run.$1.$k"); do
			taskset -a -p -c "$3" "$p" >/dev/null 2>&1 || true
		done
	done
}
# afl_cpu NAME INSTANCES SECS: each instance's CPU time, its processes
# all stopped or idle, into time-K: user and system seconds of afl-fuzz,
# its fork servers and their test processes (a fork server's own time
# and that of the children it reaped, which it always waits for), and
# the SECS of wall time it had
afl_cpu() {
	local k p
	for ((k = 0; k < $2; k++)); do
		for p in $(kmgr_tagged "KMGR_SCALE_ROW=$run.$1.$k"); do pstat "$p"; done |
			awk -v w="$3" '{ u += $12 + $14; s += $13 + $15 }
				END { printf "%.2f %.2f %d\n", u / 100, s / 100, w }' >"$work/afl-$1.time-$k"
	done
}
# afl_turns SFX: the round's four AFL++ rows taking turns (take_turns),
# with two differences from lf_turns.  A turn stops and continues the afl-fuzz
# processes only: their fork servers and test processes (each in a
# session of its own) finish the execution under way and wait for the
# next input, so a stop costs no false hang, only one execution's clock
# reading (the remaining time of the select that awaits it, at most -t),
# which a calibration under way would take for a slow input.  And
# SIGINT ends each (afl-fuzz's own stop: it kills its fork servers and
# writes its final fuzzer_stats).
afl_turns() {
	local names=() each i
	probe "$aflt"
	alt=1
	take_turns afl_start afl_pin "$1" "${aname[@]}"
	alt=0
	sleep 0.2 # the fork servers' executions under way end
	for i in "${!names[@]}"; do
		afl_cpu "${names[i]}" "${rworkers[i]}" $((each * turn))
		sig INT "${names[i]}"
		sig CONT "${names[i]}"
	done
	wait "${pids[@]}" || true
	pids=()
	reap
	for i in "${!names[@]}"; do
		afl_row "${names[i]}" "${rworkers[i]}"
		e[i]=$execs u[i]=$us
	done
}

echo "scale-bench: $secs s a row, $([ "$turn" = 0 ] && echo "one row after the other" || echo "rows taking turns of $turn s"), $ncpu CPUs, folders on $(stat -f -c %T "$work"), seeds $seeds, $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%F %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg)"
row target run workers execs exec/s us/exec cpu/wall cov probe
summary=()
for t in "${tlist[@]}"; do
	x2=() x1=() pn=() c2=() cp=() probes=() both=() e=() u=()
	for ((r = 1; r <= rounds; r++)); do
		sfx=$(round_suffix "$r")
		if [ "$turn" = 0 ]; then
			for i in "${!rname[@]}"; do
				lf "$t" "${rname[i]}$sfx" "${rworkers[i]}" "${rplace[i]}"
				e[i]=$execs u[i]=$us
			done
		else
			lf_turns "$t" "$sfx"
		fi
		add_ratios "${e[@]}"
		c2+=("$(rnum "${u[2]}" "${u[0]}")") cp+=("$(rnum "${u[1]}" "${u[0]}")")
	done
	summary+=("$(goals "$t")$(printf '  cpu: 2w/1w %s, pin/free %s' "$(med "${c2[@]}")" "$(med "${cp[@]}")")$(spread "$([ "$turn" = 0 ] || echo turns)")")
done
if [ "$afl" = 1 ]; then
	ab=$root/build/afl/fuzz/$aflt cl_bin=$root/build/afl-cmplog/fuzz/$aflt dict=$root/corpus/$aflt.dict
	kmgr_afl_env
	export AFL_CMPLOG_ONLY_NEW=1
	probes=() both=() x2=() x1=() pn=() c2=() cp=() e=() u=()
	for ((r = 1; r <= rounds; r++)); do
		sfx=$(round_suffix "$r")
		if [ "$turn" = 0 ]; then
			for i in "${!aname[@]}"; do
				afl_seq "${aname[i]}$sfx" "${rworkers[i]}" "${rplace[i]}"
				e[i]=$execs
			done
		else
			afl_turns "$sfx"
			c2+=("$(rnum "${u[2]}" "${u[0]}")") cp+=("$(rnum "${u[1]}" "${u[0]}")")
		fi
		add_ratios "${e[@]}"
	done
	cpu=""
	[ "$turn" = 0 ] || cpu=$(printf '  cpu: 2w/1w %s, pin/free %s' "$(med "${c2[@]}")" "$(med "${cp[@]}")")
	summary+=("$(goals "AFL++ $aflt")$cpu$(spread "$([ "$turn" = 0 ] || echo turns)")")
fi
echo "ratios (total executions, paired rows of this run$([ "$rounds" = 1 ] || echo "; median of $rounds rounds, range")):"
printf '  %s\n' "${summary[@]}"
