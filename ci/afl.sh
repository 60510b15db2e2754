#!/usr/bin/env bash
# ci/afl.sh [--minutes N | --seconds N] [--jobs N] [--targets a,b] [--cmin] [--help]
# An AFL++ campaign per target, one after the other, each for its share of
# the budget (default 10 minutes, every target of fuzz/targets/TARGETS;
# --seconds N: N seconds, 10 a target at least, for a quick check): one
# afl-fuzz instance per job (--jobs, default: the CPUs this process may run
# on, ci/lib/cpus.sh): -M main plus -S secondaries (more of them than
# those CPUs take turns, as many at a time as there are CPUs, for up to
# 2 s each, ci/lib/turns.sh; an execution under way when an afl-fuzz
# stops reads as up to 2 s, far below -t 5000; at most 9 instances a
# CPU, so that none waits longer), instance K bound to CPU
# K mod CPUs of this process's mask with its fork servers; a CmpLog
# binary (build/afl-cmplog, KMGR_AFL_CMPLOG=1) on the first secondary, on
# main when there is only one, run on new finds only; corpus/<t>.dict as -x.
# Both builds (afl preset, ASan+UBSan, persistent mode) instrument only the
# code the libFuzzer builds instrument (fuzz/afl-allowlist.txt).  The queue
# starts from the shipped corpus and the corpora libFuzzer grew
# (fuzz-work/<preset>/<t>/corpus), and main keeps importing those (-F).
# A status line every 10 s from each instance's StatsD metrics; at the end
# afl-whatsup's summary, afl-plot's graphs in fuzz-work/afl/<t>/plot/, and a
# table: target, execs/s, edges, stability, corpus, crashes, hangs; the
# crash files grouped into buckets by `kmgr-repro triage` (built in the afl
# tree when there are some), one a bug, each with its smallest file and the
# command that replays it; every crash file is listed in
# fuzz-work/afl/<t>/crashes.txt.
# --cmin: afl-cmin over the shipped corpus and every queue; inputs not
# already in corpus/<t>/ are copied there and into libFuzzer's corpora, so
# both engines share one corpus.  Interrupted (INT, TERM, HUP): stops every
# process it started, prints the summary so far marked "interrupted" and
# exits 128+signal.  One run at a time (a lock on fuzz-work/afl, or on
# $KMGR_AFL_WORK, where a test keeps its work out of the tree); a
# folder that cannot be written fails the run with one line (exit 3).
# Killed (SIGKILL): a watchdog reaps every process of the run by its tag.
# Exits 1 when a crash was saved, 2 on bad usage, 3 when the run failed.
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
. "$(dirname "$0")/lib/signals.sh"
. "$(dirname "$0")/lib/targets.sh"
. "$(dirname "$0")/lib/afl.sh"
. "$(dirname "$0")/lib/cpus.sh"
. "$(dirname "$0")/lib/turns.sh"
. "$(dirname "$0")/lib/buckets.sh"
kmgr_signals_reset "$0" "$@"

ncpu=$(kmgr_cpus)
read -r -a cpu_list <<<"$(kmgr_cpu_list)"
minutes=10 seconds="" targets=$(kmgr_targets) jobs=$ncpu cmin=0
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) kmgr_usage; exit 0 ;;
	--cmin) cmin=1; shift ;;
	--minutes | --seconds | --jobs | --targets)
		[ $# -ge 2 ] || kmgr_die "$1 needs a value"
		case "$1" in
		--minutes) minutes=$2 ;;
		--seconds) seconds=$2 ;;
		--jobs) jobs=$2 ;;
		--targets) targets=$2 ;;
		esac
		shift 2
		;;
	*) kmgr_die "unknown argument $1" ;;
	esac
done
[[ "$minutes" =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || kmgr_die "--minutes N, N >= 1"
[ -z "$seconds" ] || { [[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 10 ]; } || kmgr_die "--seconds N, N >= 10"
[[ "$jobs" =~ ^[0-9]+$ ]] && [ "$jobs" -gt 0 ] || kmgr_die "--jobs N, N >= 1"
# an instance waits at most turn_maxwait seconds for its turn (afl_turn_secs)
turn_maxwait=2
kmgr_jobs_fit "$jobs" "$ncpu" "$turn_maxwait"
root=$(cd "$(dirname "$0")/.." && pwd)
KMGR_ROOT=$root
tlist=()
kmgr_target_list "$targets"
. "$root/ci/lib/toolchain.sh"
kmgr_toolchain afl.sh

# The lock and the write check come before the builds: a second run
# while one fuzzes is refused before it rebuilds the binaries under the
# running instances, and a full disk fails here with one line, not in a
# build log it cannot write.
work=${KMGR_AFL_WORK:-$root/fuzz-work/afl}
# failed CAUSE: the run failed (not a finding): one line, exit 3
failed() {
	echo "afl.sh: FAILED: $*" >&2
	exit 3
}
err=$(mkdir -p "$work" 2>&1) || failed "cannot create $work: ${err##*: }"
# one run at a time in $work (the instances resume its queues)
{ exec 9>>"$work/.lock"; } 2>/dev/null || failed "cannot write in $work"
flock -n 9 || kmgr_die "another afl.sh run uses $work; wait for it"
err=$( { head -c 65536 /dev/zero >"$work/.write-probe.$$"; } 2>&1) ||
	{ rm -f "$work/.write-probe.$$"; failed "cannot write in $work: ${err##*: }"; }
rm -f "$work/.write-probe.$$"

# The two builds: fuzzing binary and CmpLog binary.  No compiler launcher:
# ccache does not see AFL_LLVM_CMPLOG, the allowlist, or link-time passes.
build=${KMGR_AFL_BUILD:-$root/build/afl}
cmplog=${KMGR_AFL_CMPLOG_BUILD:-$root/build/afl-cmplog}
tnames=$(printf -- '--target fuzz_%s ' "${tlist[@]}")
echo "== afl.sh: building $build and $cmplog"
kmgr_configure afl.sh "$build" --preset afl
kmgr_configure afl.sh "$cmplog" --preset afl -DCMAKE_C_COMPILER="$root/ci/afl-cc-cmplog.sh"
# AFL_QUIET: the compiler pass says nothing per file (the CmpLog build
# printed some 200 lines); the logs keep the rest.
mkdir -p "$work/logs"
for b in "$build" "$cmplog"; do
	log=$work/logs/build-$(basename "$b").log
	AFL_QUIET=1 cmake --build "$b" -j2 $tnames >"$log" 2>&1 ||
		{ echo "afl.sh: building $b failed; the end of $log:" >&2; tail -n 20 "$log" >&2; exit 1; }
done

# The tests' suppressions and checks stay (sanitizers/env.sh), with what
# afl-fuzz wants over them (kmgr_afl_env); an existing output directory is
# resumed.
. "$root/sanitizers/env.sh"
kmgr_afl_env
export AFL_AUTORESUME=1

budget_s=$((minutes * 60)) budget="${minutes} min"
[ -z "$seconds" ] || budget_s=$seconds budget="${seconds}s"
share=$((budget_s / ${#tlist[@]}))
[ "$share" -ge 10 ] || share=10
summary=$(mktemp "$work/.summary.XXXXXX" 2>/dev/null) || failed "cannot write in $work"
# copies of the crash files for triage (grouping, at the end), gone with
# the summary file as every "$summary".* is
findings=$summary.findings
pids=() tp=""
# Every process of this run carries KMGR_AFL_RUN=$run in its environment
# (ci/lib/afl.sh says why): what a kill of the afl-fuzz pids misses, the
# reaping finds by it.
run=$$.$RANDOM$RANDOM
# The watchdog (bash cannot trap SIGKILL): a process of its own session
# that, once this script is gone, reaps every process of the run by its tag
# and removes the summary file; it ends with the summary file.  Without the
# lock (9>&-), as fuzz.sh's: the next run, started at once, is not refused.
setsid bash -c '. "$3"; while kill -0 "$1" 2>/dev/null && [ -e "$2" ]; do sleep 0.5; done
	[ -e "$2" ] || exit 0
	kmgr_reap_tagged "KMGR_AFL_RUN=$4" afl-watchdog; rm -rf "$2" "$2".*' afl-watchdog "$$" "$summary" \
	"$root/ci/lib/afl.sh" "$run" </dev/null >/dev/null 2>&1 9>&- &
# stop_all: SIGTERM to the instances (they write their stats), up to 5 s
# for them to end, then SIGKILL to whatever of the run is left (SIGKILL
# also ends a stopped process), until nothing is.
listener="" listener_dir=""
# afl_turn_secs: the turn of instances that outnumber the CPUs: no
# instance waits more than 2 s for its next turn (AFL++ times an execution
# under way across the stop, against -t 5000)
afl_turn_secs() { kmgr_turn_secs "$jobs" "$ncpu" "$turn_maxwait"; }
# afl_instance K SIG|alive (kmgr_turns): SIG to instance K's afl-fuzz
# alone (its fork server, in a session of its own, finishes the execution
# under way and waits)
afl_instance() {
	[ "$2" != alive ] || { kill -0 "${pids[$1]}" 2>/dev/null; return; }
	kill "-$2" "${pids[$1]}" 2>/dev/null || true
}
stop_all() {
	local p left i
	# the turns first: they continue every stopped instance on the way out
	[ -z "$tp" ] || { kill -TERM "$tp" 2>/dev/null; wait "$tp" 2>/dev/null || true; tp=""; }
	if [ -n "$listener" ]; then
		touch "$listener_dir/statsd.stop"
		wait "$listener" 2>/dev/null || true
		listener=""
	fi
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; done
	for i in $(seq 50); do
		left=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left=1; done
		[ "$left" = 1 ] || break
		sleep 0.1
	done
	kmgr_reap_tagged "KMGR_AFL_RUN=$run" afl.sh || true
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
}
interrupted=""
cleanup() {
	trap '' INT TERM HUP
	stop_all
	if [ -n "$interrupted" ]; then
		# the target that ran when the signal came: its row from the
		# stats its instances wrote as they ended, marked (a summary
		# without it was empty for a run of one target)
		[ -z "$cur_t" ] || summary_row "$cur_t" "$cur_out" "$cur_before" \
			"$((SECONDS - cur_start))" " (interrupted after $((SECONDS - cur_start))s)"
		echo "== afl.sh summary so far (interrupted by SIG$interrupted; queues kept in $work/)"
		printf '%-12s %8s %8s %9s %8s %8s %6s\n' target execs/s edges stability corpus crashes hangs
		cat "$summary"
	fi
	rm -rf "$summary" "$summary".*
}
trap cleanup EXIT
trap 'interrupted=INT; exit 130' INT
trap 'interrupted=TERM; exit 143' TERM
trap 'interrupted=HUP; exit 129' HUP

# afl_stat OUT KEY: KEY of every instance's fuzzer_stats, one value a line.
# Without its UI afl-fuzz rewrites that file about once a minute, so it is
# read for the final table only.
# Nothing (status 0) before the first instance wrote its file: a fresh
# checkout has no fuzz-work/ yet, and pipefail would end the script.
afl_stat() { { cat "$1"/*/fuzzer_stats 2>/dev/null || true; } | awk -v k="$2" '$1 == k {print $3}'; }
# Live figures: without its UI afl-fuzz writes fuzzer_stats and plot_data
# about once a minute, but it sends StatsD metrics every second.
# statsd_listen DIR: a listener on a free loopback port (written to
# DIR/statsd.port) that keeps each instance's latest metrics in
# DIR/live.tsv (instance, metric, value), rewritten whole every second.
# stop_all asks it to end (DIR/statsd.stop); it carries KMGR_AFL_RUN, so
# what is left of it is killed with the instances.
statsd_listen() {
	rm -f "$1/statsd.stop"
	listener_dir=$1
	python3 - "$1" <<'PY' &
import os, socket, sys, time
d = sys.argv[1]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
s.settimeout(1)
open(os.path.join(d, "statsd.port.tmp"), "w").write("%d\n" % s.getsockname()[1])
os.replace(os.path.join(d, "statsd.port.tmp"), os.path.join(d, "statsd.port"))
live, parent = {}, os.getppid()
# ends when afl.sh asks (DIR/statsd.stop) or is gone
while not os.path.exists(os.path.join(d, "statsd.stop")) and os.getppid() == parent:
    try:
        data = s.recv(65536).decode(errors="replace")
    except socket.timeout:
        continue
    # fuzzing.NAME:VALUE|g|#banner:INSTANCE,afl_version:...
    for m in data.split("\n"):
        parts = m.split("|")
        if len(parts) < 3 or ":" not in parts[0] or not parts[2].startswith("#banner:"):
            continue
        name, value = parts[0].split(":", 1)
        live[(parts[2][8:].split(",")[0], name.replace("fuzzing.", ""))] = value
    with open(os.path.join(d, "live.tsv.tmp"), "w") as f:
        f.writelines("%s\t%s\t%s\n" % (i, n, v) for (i, n), v in sorted(live.items()))
    os.replace(os.path.join(d, "live.tsv.tmp"), os.path.join(d, "live.tsv"))
PY
	listener=$!
}
# count_alive: alive = how many of the instances (pids) are still there
count_alive() {
	local p
	alive=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
	return 0 # the last kill's status is not the function's (set -e)
}
# afl_live DIR METRIC: METRIC of every instance, one value a line.
afl_live() { awk -F'\t' -v k="$2" '$2 == k {print $3}' "$1/live.tsv" 2>/dev/null || true; }
sum() { awk '{s += $1} END {printf "%d\n", s}'; }

# seeds T DIR: the shipped corpus and every corpus libFuzzer grew for T, one
# copy of each input (by content), none over AFL++'s 1 MB limit.
seeds() {
	local f h
	rm -rf "$2"
	mkdir -p "$2"
	for f in "$root/corpus/$1"/* "$root"/fuzz-work/*/"$1"/corpus/*; do
		[ -f "$f" ] && [ "$(stat -c %s "$f")" -le 1048576 ] || continue
		h=$(sha1sum <"$f" | cut -c1-40)
		[ -e "$2/$h" ] || cp "$f" "$2/$h"
	done
}

# summary_row T OUT BEFORE SECONDS NOTE: T's row of the summary; execs/s:
# every instance's executions over the SECONDS the instances ran.  T's
# crash files are listed in $work/T/crashes.txt.
summary_row() {
	local t=$1 out=$2 eps nc c n=0
	eps=$(afl_stat "$out" execs_done | sum)
	eps=$(((eps - $3) / ($4 > 0 ? $4 : 1)))
	nc=$(afl_stat "$out" saved_crashes | sum)
	crashes=$((crashes + nc))
	printf '%-12s %8s %8s %9s %8s %8s %6s%s\n' "$t" "$eps" "$(afl_stat "$out" edges_found | sort -n | tail -1)" \
		"$(afl_stat "$out" stability | paste -sd/ -)" "$(afl_stat "$out" corpus_count | sort -n | tail -1)" "$nc" \
		"$(afl_stat "$out" saved_hangs | sum)" "$5" >>"$summary"
	: >"$work/$t/crashes.txt"
	for c in "$out"/*/crashes/id:*; do
		[ -f "$c" ] || continue
		n=$((n + 1))
		printf '%s\n' "$c" >>"$work/$t/crashes.txt"
	done
	[ "$n" = 0 ] || printf '    %d crash file(s), listed in %s\n' "$n" "$work/$t/crashes.txt" >>"$summary"
}

crashes=0 cur_t="" cur_out="" cur_before=0 cur_start=0
for t in "${tlist[@]}"; do
	dir=$work/$t
	out=$dir/out
	mkdir -p "$out" "$dir/logs"
	dict=()
	[ -f "$root/corpus/$t.dict" ] && dict=(-x "$root/corpus/$t.dict")
	seeds "$t" "$dir/seeds"
	# libFuzzer's corpora, imported by main while it runs (a resumed queue
	# ignores -i)
	foreign=()
	for f in "$root"/fuzz-work/*/"$t"/corpus; do
		[ -d "$f" ] && [ "$f" != "$work/$t/corpus" ] && foreign+=(-F "$f")
	done
	nseeds=$(find "$dir/seeds" -type f | wc -l)
	echo "== afl.sh: $t for ${share}s, $jobs instance(s)$([ "$jobs" -le "$ncpu" ] ||
		printf ', taking turns of %ss on %s CPU(s)' "$(afl_turn_secs)" "$ncpu"), $nseeds seeds" \
		"(shipped + libFuzzer's), out: $out"
	# AFL_AUTORESUME: a resumed instance carries its execs_done on
	before=$(afl_stat "$out" execs_done | sum)
	pids=()
	rm -f "$dir/live.tsv" "$dir/statsd.port"
	KMGR_AFL_RUN=$run statsd_listen "$dir"
	for _ in $(seq 50); do [ -s "$dir/statsd.port" ] && break; sleep 0.1; done
	[ -s "$dir/statsd.port" ] || { echo "afl.sh: the StatsD listener did not start" >&2; exit 1; }
	export AFL_STATSD=1 AFL_STATSD_TAGS_FLAVOR=dogstatsd AFL_STATSD_PORT=$(cat "$dir/statsd.port")
	for i in $(seq 0 $((jobs - 1))); do
		role=(-S "s$i") name=s$i
		[ "$i" != 0 ] || role=(-M main "${foreign[@]}") name=main
		cl=() clenv=()
		# CmpLog on one instance, and on new finds only: solving compares on
		# every seed of a grown corpus cost the secondary most of its execs
		if [ "$i" = 1 ] || [ "$jobs" = 1 ]; then cl=(-c "$cmplog/fuzz/$t") clenv=(AFL_CMPLOG_ONLY_NEW=1); fi
		# bound to one CPU, an instance's afl-fuzz, fork server and test
		# process hand each execution to one another on that CPU; free, a
		# pair on two CPUs had 0.95 of a CPU each (cross-CPU wakeups) and
		# made x0.88-0.95 the executions of a bound pair (scale-bench,
		# docs/bench-notes/2026-12-06-afl-bind.md).  Not afl-fuzz's own
		# binding (AFL_NO_AFFINITY): it refuses a CPU any pinned process has.
		bind=()
		[ "${#cpu_list[@]}" = 0 ] || bind=(taskset -c "${cpu_list[i % ncpu]}")
		env KMGR_AFL_RUN=$run "${clenv[@]}" "${bind[@]}" afl-fuzz "${role[@]}" -T "$name" "${cl[@]}" -i "$dir/seeds" -o "$out" \
			"${dict[@]}" -m none -t 5000 -V "$share" -- "$build/fuzz/$t" >"$dir/logs/$name.log" 2>&1 &
		pids+=($!)
	done
	if [ "$jobs" -gt "$ncpu" ]; then
		kmgr_turns "$ncpu" "$(afl_turn_secs)" "$jobs" afl_instance &
		tp=$!
	fi
	ninputs=$nseeds
	# main may be clearing a short earlier session's queue right now (AFL++
	# deletes one under 25 min old): what is there, never an exit under -e
	[ ! -d "$out/main/queue" ] ||
		ninputs=$({ find "$out/main/queue" -maxdepth 1 -name 'id:*' -type f 2>/dev/null || true; } | wc -l)
	start=$SECONDS
	cur_t=$t cur_out=$out cur_before=$before cur_start=$start
	while :; do
		# one-second naps: a signal to this script is handled within one,
		# and the instances' end is seen within one (a check every 10 s
		# idled up to 10 s a target, and a status line after the end
		# counted instances that had gone)
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			sleep 1
			count_alive
			[ "$alive" -gt 0 ] || break
		done
		[ "$alive" -gt 0 ] || break
		# execs/s: all instances' executions since the start over the wall
		# time, "-" until an instance wrote its first plot_data row
		eps=$((($(afl_live "$dir" execs_done | sum) - before) / (SECONDS - start)))
		if [ -z "$(afl_live "$dir" execs_done)" ]; then
			# no metrics before main's dry run over the seeds ends (a
			# resumed run's dry run is over main's queue, not the seeds)
			printf '[afl.sh %s %3ds/%ds] instances %d calibrating: %d of %d inputs\n' "$t" \
				"$((SECONDS - start))" "$share" "$alive" \
				"$(grep -ac 'Attempting dry run' "$dir/logs/main.log" || true)" "$ninputs"
			continue
		fi
		[ "$eps" -gt 0 ] || eps=-
		printf '[afl.sh %s %3ds/%ds] instances %d execs/s %s edges %s corpus %s crashes %s hangs %s\n' \
			"$t" "$((SECONDS - start))" "$share" "$alive" \
			"$eps" \
			"$(afl_live "$dir" edges_found | sort -n | tail -1)" "$(afl_live "$dir" corpus_count | sort -n | tail -1)" \
			"$(afl_live "$dir" saved_crashes | sum)" "$(afl_live "$dir" saved_hangs | sum)"
	done
	# the seconds the instances ran, which the summary's execs/s are over:
	# they outlive -V (on a resumed queue, -V 60 ran 70 s, and execs/s
	# over the budget said x1.17 what the status line said)
	ran=$((SECONDS - start))
	rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	[ -z "$tp" ] || { wait "$tp" || true; tp=""; }
	# what they left behind (nothing, so far, when they end by -V)
	pids=()
	stop_all
	if [ "$rc" != 0 ] || [ ! -f "$out/main/fuzzer_stats" ]; then
		echo "afl.sh: $t: afl-fuzz failed; the end of its log:" >&2
		tail -n 15 "$dir/logs/main.log" >&2
		exit 1
	fi
	echo "-- afl.sh: $t: the instances ran ${ran}s (-V $share)"
	# the instances have ended: -d counts their final stats
	echo "-- afl-whatsup -s -d $out"
	TERM=${TERM:-dumb} afl-whatsup -s -d "$out" 2>/dev/null | grep -vE '^\s*$|status check tool' || true
	rm -rf "$dir/plot"
	if afl-plot "$out/main" "$dir/plot" >"$dir/logs/plot.log" 2>&1; then
		echo "-- afl-plot: $dir/plot/index.html"
	else
		echo "-- afl-plot: no graphs ($(grep -m1 -aE 'Error|error' "$dir/logs/plot.log" | cut -c1-90))"
	fi
	summary_row "$t" "$out" "$before" "$ran" ""
	cur_t=""
	if [ "$cmin" = 1 ]; then
		# minimise shipped corpus + every queue together, then keep what is new
		all=$dir/cmin-in min=$dir/cmin-out
		rm -rf "$all" "$min"
		mkdir -p "$all"
		cp "$root/corpus/$t"/* "$all/"
		for q in "$out"/*/queue/id:*; do cp "$q" "$all/$(sha1sum "$q" | cut -c1-40)"; done
		# no @@: the driver replays file arguments without starting the
		# deferred fork server; test cases go through shared memory instead
		afl-cmin -i "$all" -o "$min" -m none -t 5000 -- "$build/fuzz/$t" >"$dir/logs/cmin.log" 2>&1 ||
			{ echo "afl.sh: afl-cmin failed (log $dir/logs/cmin.log)" >&2; exit 1; }
		declare -A have=()
		for f in "$root/corpus/$t"/*; do have[$(sha1sum <"$f" | cut -c1-40)]=1; done
		added=0
		for f in "$min"/*; do
			h=$(sha1sum <"$f" | cut -c1-40)
			[ -z "${have[$h]:-}" ] || continue
			cp "$f" "$root/corpus/$t/afl-$h"
			added=$((added + 1))
		done
		unset have
		# and libFuzzer's corpora: the next ci/fuzz.sh starts from them
		lfc=0
		for c in "$root"/fuzz-work/*/"$t"/corpus; do
			[ -d "$c" ] || continue
			cp -n "$min"/* "$c/" 2>/dev/null || true
			lfc=$((lfc + 1))
		done
		echo "-- afl-cmin: $(find "$min" -type f | wc -l) inputs keep the coverage; $added new in" \
			"corpus/$t/; all of them in $lfc libFuzzer corpus folder(s)"
	fi
done
# one line a bug: the crash files grouped by the afl tree's kmgr-repro,
# from the environment a user's plain shell gives its reproduce lines
# (its own sanitizer options, not afl-fuzz's unsymbolized ones).  In the
# background, tagged: a signal is handled at once (bash runs a trap only
# after a foreground command ends), and stop_all reaps the replays.
rm -f "$work/buckets.json"
# the copies: $findings/T/<instance>-<file> (instances number their files
# alike), their origins in $findings.map
mkdir -p "$findings" && : >"$findings.map" || failed "cannot write in $work"
for t in "${tlist[@]}"; do
	for c in "$work/$t/out"/*/crashes/id:*; do
		[ -f "$c" ] || continue
		inst=${c%/crashes/*}
		inst=${inst##*/}
		mkdir -p "$findings/$t"
		cp "$c" "$findings/$t/$inst-${c##*/}"
		printf '%s/%s-%s\t%s\n' "$t" "$inst" "${c##*/}" "$c" >>"$findings.map"
	done
done
if [ -s "$findings.map" ]; then
	echo "== afl.sh: grouping $(wc -l <"$findings.map") crash file(s) (kmgr-repro triage)"
	if AFL_QUIET=1 cmake --build "$build" -j2 --target kmgr-repro >"$work/logs/build-kmgr-repro.log" 2>&1; then
		(
			unset ASAN_OPTIONS UBSAN_OPTIONS LSAN_OPTIONS
			export KMGR_AFL_RUN=$run
			kmgr_buckets "$build/tools/kmgr-repro/kmgr-repro" "$findings" "$findings.map" \
				"crash file" "$work/buckets.json"
		) >>"$summary" &
		wait $! || true
	else
		echo "  (crash files not grouped: building kmgr-repro failed, log $work/logs/build-kmgr-repro.log)" >>"$summary"
	fi
fi
echo
echo "== afl.sh summary (${budget}, ${share}s per target, $jobs instance(s), CmpLog on one)"
printf '%-12s %8s %8s %9s %8s %8s %6s\n' target execs/s edges stability corpus crashes hangs
cat "$summary"
cp "$summary" "$work/summary.txt" 2>/dev/null || failed "writing $work/summary.txt failed"
[ "$crashes" -eq 0 ] || { echo "afl.sh: $crashes crash(es)"; exit 1; }
echo "afl.sh: no crashes"
