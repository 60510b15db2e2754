#!/usr/bin/env bash
# ci/fuzz.sh [--minutes N | --seconds N] [--preset asan|msan|tsan] [--targets a,b] [--jobs N]
#            [--keep-going] [--json FILE] [--build-only]
# README command 1.  Checks the toolchain first (ci/deps.sh installs it;
# without root, one line says so and it exits 2, with no build tree left).
# Builds the preset's fuzz targets if needed (afresh over the cache of a
# failed or foreign configure; --build-only stops there), copies each
# shipped corpus to fuzz-work/<preset>/<target>/corpus and fuzzes every
# target for its whole share of the budget (shares by target_weight:
# one minute is model_parse 5 s, concurrent 15 s, the others 10 s;
# --seconds N: a budget of N seconds, for a quick check), findings or
# not ("finding recorded; fuzzing on").  --jobs N (default: the CPUs this process may run
# on: its affinity mask and its cgroup's CPU quota): N in-process libFuzzer
# workers on one shared corpus folder (each reloads what the others find),
# each restarted after a finding for the rest of the budget; the figures
# are their sum.  More workers than those CPUs take turns, as many at a
# time as there are CPUs, for a turn of up to 2 s each (ci/lib/turns.sh:
# two workers at once on one CPU pay x1.04-1.12 CPU an execution); at most
# 41 workers a CPU, so that none waits over 10 s for its turn.
# --keep-going: libFuzzer's fork mode instead (-fork=N), each crash,
# timeout or OOM recorded and the budget continued
# (-ignore_crashes/-ignore_timeouts/-ignore_ooms; --fork is the same flag),
# slower but proof against a target that dies.  Flags come from
# corpus/<target>.options: its [libfuzzer] section as libFuzzer flags, its
# [asan], [ubsan], [msan], [tsan], [lsan] sections appended to the matching
# *_OPTIONS.  A status line every 10 s with libFuzzer's latest figures (its
# log is read as it grows); then the new coverage is merged back into the
# work corpus and a table printed: target, exec/s, cov, corpus size,
# findings; the findings grouped into buckets by `kmgr-repro triage` (one
# bug, one bucket), each with a command that replays it 10 times with the
# preset's own kmgr-repro (built with the targets).  Crash files go to
# fuzz-work/<preset>/<target>/artifacts/.  --json FILE writes the same as
# JSON, with the total executions, start and end, preset and commit.
# One run at a time per work folder (fuzz-work/<preset>): a second is
# refused with one line.  A work folder that cannot be written (full disk,
# read-only) or a libFuzzer that fails without a finding fails the run with
# one line naming the cause, never "no findings".  A work folder on an ext4
# without a journal gets one "note:" line first (ci/lib/workfs.sh: there
# every file libFuzzer writes scans the recently deleted inodes).
# Interrupted (INT, TERM, HUP): stops libFuzzer and its workers, writes the
# summary and JSON so far marked "interrupted" (the target running then
# included, marked partial), exits 128+signal.  Killed (SIGKILL): a
# watchdog ends every fuzzer it started within a second or two and removes
# its scratch files.
# Exits 1 when anything was found, 3 when the run failed (a write error, a
# libFuzzer error), 2 on bad usage.
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
. "$(dirname "$0")/lib/signals.sh"
. "$(dirname "$0")/lib/options.sh"
. "$(dirname "$0")/lib/libfuzzer.sh"
. "$(dirname "$0")/lib/targets.sh"
. "$(dirname "$0")/lib/build.sh"
. "$(dirname "$0")/lib/cpus.sh"
. "$(dirname "$0")/lib/workfs.sh"
. "$(dirname "$0")/lib/turns.sh"
. "$(dirname "$0")/lib/buckets.sh"
kmgr_signals_reset "$0" "$@"

ncpu=$(kmgr_cpus)
minutes=10 preset=asan targets=$(kmgr_targets) jobs=$ncpu json="" mode=""
build_only=0 json_given=0 seconds=""
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) kmgr_usage; exit 0 ;;
	--keep-going | --fork) mode=fork; shift ;;
	--build-only) build_only=1; shift ;;
	--minutes | --seconds | --preset | --targets | --jobs | --json)
		[ $# -ge 2 ] || kmgr_die "$1 needs a value"
		case "$1" in
		--minutes) minutes=$2 ;;
		--seconds) seconds=$2 ;;
		--preset) preset=$2 ;;
		--targets) targets=$2 ;;
		--jobs) jobs=$2 ;;
		--json) json=$2 json_given=1 ;;
		esac
		shift 2
		;;
	*) kmgr_die "unknown argument $1" ;;
	esac
done
case "$preset" in asan | msan | tsan) ;; *) kmgr_die "preset must be asan, msan or tsan" ;; esac
[[ "$minutes" =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || kmgr_die "--minutes N, N >= 1"
[ -z "$seconds" ] || { [[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 2 ]; } || kmgr_die "--seconds N, N >= 2"
[[ "$jobs" =~ ^[0-9]+$ ]] && [ "$jobs" -gt 0 ] || kmgr_die "--jobs N, N >= 1"
# a worker waits at most turn_maxwait seconds for its turn (turn_secs)
turn_maxwait=10
kmgr_jobs_fit "$jobs" "$ncpu" "$turn_maxwait"
if [ "$json_given" = 1 ]; then
	# checked before the build and the run, not after them
	[ -n "$json" ] || kmgr_die "--json: give a file name"
	[ ! -d "$json" ] || kmgr_die "--json $json: is a directory; give a file name"
	[ -d "$(dirname "$json")" ] || kmgr_die "--json: no directory $(dirname "$json")"
	[ -w "$(dirname "$json")" ] || kmgr_die "--json: cannot write in $(dirname "$json")"
	if [ -e "$json" ] && { [ ! -f "$json" ] || [ ! -w "$json" ]; }; then
		kmgr_die "--json $json: not a writable regular file"
	fi
	json=$(cd "$(dirname "$json")" && pwd)/$(basename "$json")
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KMGR_FUZZ_BUILD:-$root/build/$preset}
# The tests' sanitizer options: without them TSan reports and keeps going
# (halt_on_error=0), so a race would never become a finding.
. "$root/sanitizers/env.sh"
# TSan: no abort after a report (ci/lib/options.sh, kmgr_tsan_no_abort)
[ "$preset" != tsan ] || kmgr_tsan_no_abort
tlist=()
kmgr_target_list "$targets"

# target_flags T: libFuzzer flags from corpus/T.options into the array
# tflags (a dict named relative to the file resolved next to it); sanitizer
# sections appended to the exported *_OPTIONS of this shell.
target_flags() {
	local f=$root/corpus/$1.options kv sec var
	kmgr_libfuzzer_flags "$f"
	tflags=("${kmgr_opt_flags[@]}")
	[ -f "$f" ] || return 0
	while IFS= read -r sec; do
		case "$sec" in
		libfuzzer) continue ;;
		asan | ubsan | msan | tsan | lsan) ;;
		*) echo "fuzz.sh: $f: section [$sec] is not used here" >&2; continue ;;
		esac
		var=${sec^^}_OPTIONS
		while IFS= read -r kv; do
			export "$var=${!var:+${!var}:}$kv"
		done < <(kmgr_opt_keys "$f" "$sec")
	done < <(kmgr_opt_sections "$f" | sort -u)
}

KMGR_ROOT=$root
. "$root/ci/lib/toolchain.sh"
kmgr_toolchain fuzz.sh
echo "== fuzz.sh: building preset $preset in $build"
kmgr_configure fuzz.sh "$build" --preset "$preset"
# the preset's own kmgr-repro: the reproduce lines run the finding under
# the sanitizer that found it
# one console line; ninja's progress goes to the log (the tail on failure)
kmgr_build_quiet "$build/fuzz-build.log" cmake --build "$build" -j2 $(printf -- '--target fuzz_%s ' "${tlist[@]}") --target kmgr-repro || exit 1
repro_tool=$build/tools/kmgr-repro/kmgr-repro
[ "$build_only" = 0 ] || { echo "fuzz.sh: built (--build-only)"; exit 0; }

# target_weight T: T's shares of the budget.  Not equal: model_parse, one
# parser over bytes, levels off within seconds; concurrent's inputs
# carry two threads' interleavings and access points on top of the
# program, and a window late in a long-lived thread (mutants/oracle-5)
# took it 13 s alone (docs/fuzzing.md, "Mutants").  With every target,
# one minute is model_parse 5 s, concurrent 15 s, the others their 10 s.
target_weight() {
	case "$1" in
	model_parse) echo 1 ;;
	concurrent) echo 3 ;;
	*) echo 2 ;;
	esac
}
units=0
for t in "${tlist[@]}"; do units=$((units + $(target_weight "$t"))); done
budget_s=$((minutes * 60)) floor=5
# a short budget (tests): the seconds as given, split, 2 s at least
[ -z "$seconds" ] || budget_s=$seconds floor=2
# target_share T: T's seconds (a target alone gets the whole budget)
target_share() {
	local s=$((budget_s * $(target_weight "$1") / units))
	[ "$s" -ge "$floor" ] || s=$floor
	echo "$s"
}
share=$(target_share "${tlist[0]}")
work=${KMGR_FUZZ_WORK:-$root/fuzz-work/$preset} # the env: a test keeps its work out of the tree
# run_failed CAUSE: the run failed (not a finding): one line, exit 3
run_failed() {
	echo "fuzz.sh: FAILED: $*" >&2
	exit 3
}
# writable DIR: DIR takes a 64 KiB file (a full disk or a read-only folder
# otherwise ends the run here, with the reason, not as "no findings")
writable() {
	local err
	err=$( { head -c 65536 /dev/zero >"$1/.write-probe.$$" && sync "$1/.write-probe.$$"; } 2>&1) || {
		rm -f "$1/.write-probe.$$"
		run_failed "cannot write in $1: ${err##*: }"
	}
	rm -f "$1/.write-probe.$$"
}
err=$(mkdir -p "$work" 2>&1) || run_failed "cannot create $work: ${err##*: }"
# One run at a time in a work folder: two would share fuzz.log, corpus and
# artifacts and sum each other's figures.  The lock goes with the process,
# SIGKILL included.
{ exec 9>>"$work/.lock"; } 2>/dev/null || run_failed "cannot write in $work"
flock -n 9 || kmgr_die "another fuzz.sh run uses $work; wait for it, or give this one its own KMGR_FUZZ_WORK"
writable "$work"
kmgr_workfs_note "$work" KMGR_FUZZ_WORK fuzz.sh
# This run's scratch, in one folder: the summary, the records, the copies
# of the findings, the running target's process group (pgid).
scratch=$(mktemp -d "$work/.scratch.XXXXXX" 2>/dev/null) || run_failed "cannot write in $work"
summary=$scratch/summary records=$scratch/records
{ : >"$summary" && : >"$records"; } 2>/dev/null || run_failed "cannot write in $work"
# The watchdog: bash cannot trap SIGKILL, so a process of its own session
# (no signal to this script's group reaches it) watches this script and,
# once it is gone, kills the running target's process group and removes
# the scratch folder.  It ends when the scratch folder does.  Without the
# lock (9>&-): it outlives a run by up to half a second, and holding the lock
# it made the next run on this work folder, started at once, "another run".
setsid bash -c 'while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 0.5; done
	[ -d "$2" ] || exit 0
	g=$(cat "$2/pgid" 2>/dev/null) && [ -n "$g" ] && kill -KILL -- "-$g" 2>/dev/null
	rm -rf "$2"' fuzz-watchdog "$$" "$scratch" </dev/null >/dev/null 2>&1 9>&- &
# pd CMD...: CMD dies with this script (PR_SET_PDEATHSIG), for the merge and
# the replays that run in its foreground
pd=()
! command -v setpriv >/dev/null || pd=(setpriv --pdeathsig KILL --)
# group_findings: kmgr-repro triage over this run's findings (copies in
# $scratch/findings/<target>/, their origins in $scratch/findings.map): one
# line a bucket, with a file of the bucket and the command that replays it;
# $scratch/buckets.json for --json.
group_findings() {
	[ "$found" -gt 0 ] || return 0
	kmgr_buckets "$repro_tool" "$scratch/findings" "$scratch/findings.map" finding \
		"$scratch/buckets.json" >>"$summary" || true
}

# write_json: --json's file, whole or not at all: per target its figures
# and findings, the buckets, the run's total executions, start and end,
# preset, commit, and whether it was interrupted.
write_json() {
	[ -n "$json" ] || return 0
	local t shares_kv=""
	for t in "${tlist[@]}"; do shares_kv+="${shares_kv:+,}$t:$(target_share "$t")"; done
	python3 - "$records" "$json" "$preset" "$budget_s" "$shares_kv" "$jobs" "$started" \
		"$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)" "${interrupted:-}" \
		"$scratch/buckets.json" <<'PY' || { echo "fuzz.sh: writing $json failed" >&2; return 1; }
import datetime, json, os, sys
rec, out, preset, budget_s, share, jobs, started, commit, interrupted, bucketf = sys.argv[1:]
# the budget as run: --seconds 60 is 1 minute, not --minutes' default of 10
minutes = int(budget_s) / 60
minutes = int(minutes) if minutes == int(minutes) else round(minutes, 2)
num = lambda s: int(s) if s.isdigit() else None
targets, order = {}, []
for line in open(rec, errors="replace"):
    f = line.rstrip("\n").split("\t")
    if f[0] == "T":
        targets[f[1]] = {"target": f[1], "exec_per_s": num(f[2]), "cov": num(f[3]), "ft": num(f[4]),
                         "corpus": int(f[5]), "crashes": int(f[6]), "timeouts": int(f[7]),
                         "ooms": int(f[8]), "libfuzzer_exit": int(f[9]), "log": f[10],
                         "execs": num(f[11]), "seconds": num(f[12]),
                         "partial": f[13] == "partial", "findings": []}
        order.append(f[1])
    elif f[0] == "F":
        targets[f[1]]["findings"].append({"file": f[2], "signature": f[3], "reproduce": f[4]})
buckets = json.load(open(bucketf)) if os.path.exists(bucketf) else []
doc = {"preset": preset, "commit": commit, "start": started,
       "end": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
       "interrupted": bool(interrupted), "minutes": minutes, "budget_s": int(budget_s), "seconds_per_target": {k: int(v) for k, v in (x.split(":") for x in share.split(","))},
       "jobs": int(jobs), "total_execs": sum(targets[t]["execs"] or 0 for t in order),
       "targets": [targets[t] for t in order],
       "findings": sum(len(targets[t]["findings"]) for t in order), "buckets": buckets}
tmp = out + ".tmp%d" % os.getpid()
with open(tmp, "w") as fh:
    json.dump(doc, fh, indent=2)
os.replace(tmp, out)
PY
	echo "fuzz.sh: JSON summary in $json${interrupted:+ (marked interrupted)}"
}

fpid="" interrupted="" started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# stop_run: the running target's libFuzzer (its own process group, with
# every fork-mode worker) gets SIGTERM, up to 5 s to end, then SIGKILL.
stop_run() {
	kmgr_stop_group "$fpid"
	fpid=""
}
cleanup() {
	trap '' INT TERM HUP
	local running=$fpid
	stop_run
	if [ -n "$interrupted" ]; then
		# the target that was running, with what it did so far
		[ -z "$running" ] || record_target partial 2>/dev/null || true
		echo
		echo "== fuzz.sh summary so far (interrupted by SIG$interrupted; a target marked" \
			"'partial' was stopped early)"
		printf '%-12s %8s %8s %8s %8s\n' target exec/s cov corpus findings
		cat "$summary"
		write_json
	fi
	rm -rf "$scratch"
}
trap cleanup EXIT
trap 'interrupted=INT; exit 130' INT
trap 'interrupted=TERM; exit 143' TERM
trap 'interrupted=HUP; exit 129' HUP

# final_eps LOG JOBS: the run's exec/s.  Fork mode: the parent's last status
# line (all workers' executions over the wall time).  In-process: each run's
# own final stats, weighted by its executions when a finding restarted it.
final_eps() {
	if [ "$2" = fork ]; then
		kmgr_lf_status "$1" | awk '{print $4}'
		return
	fi
	kmgr_lf_final_eps "$1"
}
# total_execs LOG MODE: the executions of the target's run: fork mode, the
# parent's last "#N:"; in-process, the sum over the restarts' final stats.
total_execs() {
	if [ "$2" = fork ]; then
		grep -aoE '^#[0-9]+:' "$1" | tail -1 | tr -d '#:'
		return
	fi
	# the sum over the restarts' final stats; a run cut short (no final
	# stats) counts to its last status line
	awk '/stat::number_of_executed_units/ {n += $2; last = 0}
		/^#[0-9]+[ \t]/ {v = substr($1, 2) + 0; if (v > last) last = v}
		END {n += last; if (n) print n}' "$1"
}
# logs_of DIR: the logs a target's figures come from: its workers' while
# several run, else fuzz.log.
logs_of() {
	if compgen -G "$1/worker-*.log" >/dev/null; then ls "$1"/worker-*.log; else echo "$1/fuzz.log"; fi
}
# figures DIR MODE: "cov ft corpus exec/s execs" of a target's run, summed
# over its workers (exec/s, executions), the best of them (cov, ft, corpus).
figures() {
	local log c f k e x cov=0 ft=0 corp=0 eps=0 execs=0 any=0
	for log in $(logs_of "$1"); do
		read -r c f k e <<<"$(kmgr_lf_status "$log")" || true
		[ -n "${c:-}" ] || continue
		any=1
		[ "$c" -le "$cov" ] || cov=$c
		[ "$f" -le "$ft" ] || ft=$f
		[ "$k" -le "$corp" ] || corp=$k
		x=$(final_eps "$log" "$2")
		eps=$((eps + ${x:-$e}))
		x=$(total_execs "$log" "$2")
		execs=$((execs + ${x:-0}))
	done
	[ "$any" = 1 ] && echo "$cov $ft $corp $eps $execs"
	return 0
}
# run_target: one target's budget, in the background's foreground.
#   --keep-going: -fork=N workers; the parent writes what they found to
#     the first directory ($dir/new), their crash files to the artifact
#     prefix, and carries on after each.
#   otherwise N in-process workers (worker K, N >= 2: its log is
#     worker-K.log), all with $dir/new as the folder they write to and
#     reload from, so each sees what the others find.
run_target() {
	local k
	if [ "$mode" = fork ]; then
		exec "$bin" -timeout=25 -rss_limit_mb=4096 "${opts[@]}" -fork="$jobs" \
			-ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$share" \
			-artifact_prefix="$dir/artifacts/" "$dir/new" "$dir/corpus" "${extra[@]}"
	fi
	if [ "$jobs" = 1 ]; then
		worker 0
		return
	fi
	local pids=() rc=0 r p tp=""
	for k in $(seq 0 $((jobs - 1))); do
		worker "$k" >"$dir/worker-$k.log" 2>&1 &
		pids+=($!)
	done
	if [ "$jobs" -gt "$ncpu" ]; then
		kmgr_turns "$ncpu" "$(turn_secs)" "$jobs" lf_worker &
		tp=$!
	fi
	# the first worker that failed gives the target's status
	for p in "${pids[@]}"; do
		wait "$p" || { r=$?; [ "$rc" != 0 ] || rc=$r; }
	done
	[ -z "$tp" ] || wait "$tp" || true
	return "$rc"
}
# turn_secs: the turn of workers that outnumber the CPUs: no worker waits
# more than 10 s for its next turn (libFuzzer counts a stopped unit's wait
# against its 25-s timeout)
turn_secs() { kmgr_turn_secs "$jobs" "$ncpu" "$turn_maxwait"; }
# turns_note: ", taking turns ..." when the in-process workers outnumber
# the CPUs (fork mode: libFuzzer runs its own)
turns_note() {
	[ -z "$mode" ] && [ "$jobs" -gt "$ncpu" ] || return 0
	printf ', taking turns of %ss on %s CPU(s)' "$(turn_secs)" "$ncpu"
}
# lf_worker K SIG|alive (kmgr_turns): SIG to the libFuzzer that worker K's
# loop runs now (its child running $bin); "alive": whether the loop runs
lf_worker() {
	local w=${pids[$1]} c kids=()
	[ "$2" != alive ] || { kill -0 "$w" 2>/dev/null; return; }
	# builtins only (read, test -ef, kill): called every half second
	{ read -r -a kids <"/proc/$w/task/$w/children"; } 2>/dev/null || true
	for c in "${kids[@]}"; do
		[ ! "/proc/$c/exe" -ef "$bin" ] || kill "-$2" "$c" 2>/dev/null || true
	done
	return 0
}
# quarantine_seed RUNLOG: a corpus input that crashed before INITED (as
# libFuzzer read the corpus: every restart would stop on it) out of the
# work corpus, a copy, into quarantine/; the crash file keeps its bytes.
# Status 1 when it is in neither the work corpus nor quarantine/ (an extra
# corpus, the empty input): the worker stops.
quarantine_seed() {
	local crash f moved=""
	crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$1" | tail -n 1)
	[ -f "$crash" ] || return 1
	mkdir -p "$dir/quarantine"
	for f in "$dir/corpus"/* "$dir/new"/*; do
		[ -f "$f" ] && cmp -s "$f" "$crash" || continue
		mv -f "$f" "$dir/quarantine/" 2>/dev/null && moved+="${moved:+, }$(basename "$f")"
	done
	if [ -n "$moved" ]; then
		echo "fuzz.sh: a seed crashes as libFuzzer reads the corpus: $moved moved to $dir/quarantine/ (its crash file $(basename "$crash")); fuzzing on without it"
		return 0
	fi
	for f in "$dir/quarantine"/*; do # another worker moved it
		[ -f "$f" ] && cmp -s "$f" "$crash" && return 0
	done
	echo "fuzz.sh: a seed crashes as libFuzzer reads the corpus ($(basename "$crash")), and it is not in $dir/corpus: this worker stops"
	return 1
}
# worker K: libFuzzer in-process (no per-job restarts: its exec/s is what
# BENCHMARKS measures); a finding ends that run, so it is started again,
# from the grown corpus, for what is left of the budget.
worker() {
	local end=$((SECONDS + share)) left rc st
	local runlog=$dir/run-$1.log
	while left=$((end - SECONDS)) && [ "$left" -ge 2 ]; do
		# through tee: fuzz.log grows as libFuzzer writes, for the status
		# lines.  Not under set -e: a finding is a non-zero exit, and this
		# loop goes on after it.
		set +e
		"$bin" -timeout=25 -rss_limit_mb=4096 "${opts[@]}" -max_total_time="$left" -print_final_stats=1 \
			-artifact_prefix="$dir/artifacts/" "$dir/new" "$dir/corpus" "${extra[@]}" 2>&1 | tee "$runlog"
		st=("${PIPESTATUS[@]}")
		set -e
		rc=${st[0]}
		# tee failing is a write error (full disk): the run's log is lost
		[ "${st[1]}" = 0 ] || { echo "fuzz.sh: writing $runlog failed"; return 3; }
		[ "$rc" != 0 ] || return 0
		# Go on only after a finding: an exit without a crash file is
		# libFuzzer failing; a crash before INITED is a seed that would crash
		# every restart, so it goes to quarantine first.
		grep -aq 'Test unit written to' "$runlog" || return "$rc"
		if ! grep -aq 'INITED' "$runlog"; then
			quarantine_seed "$runlog" || return "$rc"
			continue
		fi
		echo "fuzz.sh: finding recorded; fuzzing on for the remaining budget ($((end - SECONDS))s)"
	done
}

sigpat='ORACLE:|KSCHED [A-Z]+|DEVICE FAULT|kmgr error:|(ERROR|WARNING): [A-Za-z]+Sanitizer|ERROR: libFuzzer|runtime error'

# record_target [partial]: the figures of the target just run ($t in
# $dir, libFuzzer's status in $rc, its seconds since $start) into the
# table and the records; each finding replayed for its signature (not when
# partial: the run is being stopped) and copied for triage.
record_target() {
	local partial=${1:-} cov="" ft="" eps="" execs="" size arts nf ncr nto noom i a sig repro w secs
	secs=$((SECONDS - start))
	[ "$secs" -le "$share" ] || secs=$share
	read -r cov ft _ eps execs <<<"$(figures "$dir" "$mode")" || true
	# libFuzzer's exec/s is 0 for a run under a second: never print 0 for a
	# run that executed inputs
	if [ -n "$execs" ] && [ "$execs" -gt 0 ] && [ "${eps:-0}" = 0 ]; then
		eps=$((execs / (secs > 0 ? secs : 1)))
		[ "$eps" -gt 0 ] || eps=1
	fi
	# the workers' logs, one after the other, in fuzz.log (what the nightly
	# keeps); worker-K.log stay for the figures
	for w in $(logs_of "$dir"); do
		[ "$w" = "$dir/fuzz.log" ] || { echo "== $(basename "$w")"; cat "$w"; } >>"$dir/fuzz.log"
	done
	size=$(find "$dir/corpus" -maxdepth 1 -type f | wc -l)
	mapfile -t arts < <(find "$dir/artifacts" -maxdepth 1 -type f -newer "$stamp" | sort)
	nf=${#arts[@]}
	# by kind, from libFuzzer's file names (crash-, leak-, timeout-, oom-)
	ncr=$(printf '%s\n' "${arts[@]}" | grep -cE '/(crash|leak|death)-' || true)
	nto=$(printf '%s\n' "${arts[@]}" | grep -cE '/timeout-' || true)
	noom=$(printf '%s\n' "${arts[@]}" | grep -cE '/oom-' || true)
	found=$((found + nf))
	printf '%-12s %8s %8s %8s %8s%s\n' "$t" "${eps:--}" "${cov:--}" "$size" "$nf" \
		"${partial:+  partial (${secs}s of ${share}s)}" >>"$summary"
	printf 'T\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${eps:-}" "${cov:-}" "${ft:-}" \
		"$size" "${ncr:-0}" "${nto:-0}" "${noom:-0}" "$rc" "$dir/fuzz.log" "${execs:-}" "$secs" \
		"${partial:-whole}" >>"$records"
	i=0
	for a in "${arts[@]}"; do
		i=$((i + 1))
		# each finding's own signature: replay it (the first ten; a timeout
		# takes the full -timeout to replay)
		sig="(not replayed)"
		if [ "$i" -le 10 ] && [ -z "$partial" ]; then
			sig=$("${pd[@]}" timeout 120 "$bin" -timeout=25 -rss_limit_mb=4096 "$a" 2>&1 |
				grep -aE -m1 "$sigpat" | cut -c1-100 || true)
			[ -n "$sig" ] || sig="(no signature on replay: flaky or environment-dependent)"
		fi
		repro="$(kmgr_shq "$repro_tool") replay $(kmgr_shq "$a") --target $t --times 10"
		mkdir -p "$scratch/findings/$t"
		cp "$a" "$scratch/findings/$t/"
		printf '%s/%s\t%s\n' "$t" "$(basename "$a")" "$a" >>"$scratch/findings.map"
		printf 'F\t%s\t%s\t%s\t%s\n' "$t" "$a" "${sig//$'\t'/ }" "$repro" >>"$records"
	done
}

# lf_failure LOG...: why libFuzzer failed, from its logs: a write error
# first (a full disk makes libFuzzer die in many ways), else its ERROR line;
# nothing when the logs say neither (a full disk can keep them from saying
# it), and status 0 even then: its caller runs under set -e
lf_failure() {
	local e
	e=$(grep -m1 -ahoE 'No space left on device|Read-only file system|Disk quota exceeded' "$@" 2>/dev/null | head -n 1) || true
	[ -z "$e" ] || { echo "a write failed: $e"; return; }
	grep -m1 -ahoE '(ERROR: libFuzzer|==[0-9]+==ERROR|ERROR):.*' "$@" 2>/dev/null | head -n 1 | cut -c1-120 || true
}

found=0 failed="" rc=0
for t in "${tlist[@]}"; do
	rc=0
	share=$(target_share "$t")
	bin=$build/fuzz/$t
	dir=$work/$t
	err=$(mkdir -p "$dir/corpus" "$dir/new" "$dir/artifacts" 2>&1) || run_failed "cannot create $dir: ${err##*: }"
	cp -n "$root/corpus/$t"/* "$dir/corpus/" 2>/dev/null || true
	# this run's logs only: an earlier --jobs N run's worker logs would
	# give their figures as this run's
	rm -f "$dir"/worker-*.log "$dir"/run-*.log
	writable "$dir"
	# its own process group (set -m for this one launch): stop_run signals
	# the whole of it, workers and tee included, and a Ctrl-C reaches it
	# only through this script's trap
	set -m
	(
		target_flags "$t"
		opts=("${tflags[@]}")
		extra=()
		if [ "$preset" = tsan ]; then
			# The tsan preset has coverage feedback (KMGR_TSAN_FUZZ_COVERAGE, on
			# by default).  A build without it gives libFuzzer almost no
			# features: it keeps one input of the corpus and mutates a single
			# byte for the whole run, so there keep every seed and draw
			# crossover partners from all of them.  Either way start from the
			# corpus the asan run grew when there is one.
			if grep -q '^KMGR_TSAN_FUZZ_COVERAGE:BOOL=OFF' "$build/CMakeCache.txt" 2>/dev/null; then
				opts+=(-keep_seed=1 -cross_over_uniform_dist=1)
			fi
			[ -d "$root/fuzz-work/asan/$t/corpus" ] && extra+=("$root/fuzz-work/asan/$t/corpus")
		fi
		run_target
	) >"$dir/fuzz.log" 2>&1 &
	fpid=$!
	set +m
	echo "$fpid" >"$scratch/pgid"
	echo "== fuzz.sh: $t for ${share}s, $jobs worker(s)${mode:+ (fork mode, --keep-going)}$(turns_note) (log: $dir/fuzz.log," \
		"crash files: $dir/artifacts/)"
	# findings of earlier runs stay where they are; only newer ones count
	stamp=$dir/.run-start
	: >"$stamp"
	start=$SECONDS seen=0 nseen=0
	while kill -0 "$fpid" 2>/dev/null; do
		for _ in 1 2 3 4 5 6 7 8 9; do
			kill -0 "$fpid" 2>/dev/null || break
			sleep 1
		done
		# what the workers reported since the last status line
		n=$(wc -l <"$dir/fuzz.log")
		tail -n +"$((seen + 1))" "$dir/fuzz.log" | head -n "$((n - seen))" | grep -aE "$sigpat" | cut -c1-160 || true
		seen=$n
		c_cov="" c_ft="" c_corp="" c_eps="" c_execs=""
		read -r c_cov c_ft c_corp c_eps c_execs <<<"$(figures "$dir" "$mode")" || true
		# libFuzzer's exec/s is 0 on a line of its first second: from the
		# executions so far instead
		if [ "${c_eps:-}" = 0 ] && [ "${c_execs:-0}" -gt 0 ]; then
			c_eps=$((c_execs / (SECONDS - start > 0 ? SECONDS - start : 1)))
		fi
		nart=$(find "$dir/artifacts" -maxdepth 1 -type f -newer "$stamp" | wc -l)
		# both modes go on after a finding (fork mode: -ignore_crashes)
		[ "$nart" -le "$nseen" ] || echo "fuzz.sh: $t: finding recorded; fuzzing on"
		nseen=$nart
		# libFuzzer writes a line on new coverage and at 2^k executions:
		# the figures are those of its latest line, whose age is given
		age=$(($(date +%s) - $(stat -c %Y $(logs_of "$dir") | sort -n | tail -1)))
		el=$((SECONDS - start))
		[ "$el" -le "$share" ] || el=$share
		printf '[fuzz.sh %s %3ds/%ds] cov %s ft %s corpus %s exec/s %s findings %s%s\n' \
			"$t" "$el" "$share" "${c_cov:--}" "${c_ft:--}" "${c_corp:--}" "${c_eps:--}" "$nart" \
			"$([ -z "$c_cov" ] || [ "$age" -lt 10 ] || echo " (as of ${age}s ago)")"
	done
	rc=0
	wait "$fpid" || rc=$?
	fpid=""
	rm -f "$scratch/pgid"
	# fold what was found into the work corpus (only inputs that add coverage)
	"${pd[@]}" "$bin" -merge=1 "$dir/corpus" "$dir/new" >"$dir/merge.log" 2>&1 || true
	rm -rf "${dir:?}/new"/*
	record_target
	# the seeds that crashed as libFuzzer read the corpus (a worker's log
	# says; with --jobs N it is not on the console while it runs)
	mapfile -t wlogs < <(logs_of "$dir")
	grep -ah '^fuzz.sh: a seed crashes' "${wlogs[@]}" 2>/dev/null | sort -u | sed "s/^fuzz.sh: /fuzz.sh: $t: /" || true
	if [ "$rc" != 0 ]; then
		# a non-zero exit is a finding when a crash file came with it (fork
		# mode ends with the last crash's status); otherwise libFuzzer (or a
		# write) failed
		nart=$(find "$dir/artifacts" -maxdepth 1 -type f -newer "$stamp" | wc -l)
		if [ "$nart" = 0 ] || [ "$rc" = 3 ]; then
			why=$(lf_failure $(logs_of "$dir") "$dir/fuzz.log")
			failed="$t: libFuzzer exited $rc without a finding${why:+: $why} (log $dir/fuzz.log)"
		fi
	fi
	writable "$dir"
done
group_findings
echo
budget="${minutes} min"
[ -z "$seconds" ] || budget="${seconds}s"
shares=""
for t in "${tlist[@]}"; do shares+="${shares:+, }$t $(target_share "$t")s"; done
echo "== fuzz.sh summary (preset $preset, $budget: $shares; $jobs worker(s))"
printf '%-12s %8s %8s %8s %8s\n' target exec/s cov corpus findings
cat "$summary"
cp "$summary" "$work/summary.txt" 2>/dev/null || run_failed "writing $work/summary.txt failed"
write_json || run_failed "writing the JSON summary $json failed"
[ -z "$failed" ] || run_failed "$failed"
[ "$found" -eq 0 ] || { echo "fuzz.sh: $found finding(s)"; exit 1; }
echo "fuzz.sh: no findings"
