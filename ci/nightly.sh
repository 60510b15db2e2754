#!/usr/bin/env bash
# ci/nightly.sh - the nightly run and its report: every stress binary for N
# minutes in the tsan and release presets (jemalloc, MALLOC_CONF=junk:true),
# the fuzz targets (ci/fuzz.sh, asan), kmgr-repro triage of what they found,
# coverage over the grown corpus (ci/coverage.sh), the mutant negative
# controls (ci/mutant-controls.sh, when present), then ONE self-contained
# HTML page and a JSON file (ci/nightly/report.py): exec/s and coverage over
# time per target, findings by bucket with their reproduce commands, stress
# throughput and drain-latency histograms, and the trend across nights.
#
#   ci/nightly.sh [--minutes N] [--out DIR] [--history DIR] [--threads N]
#                 [--presets "tsan release"] [--binaries "refdrain async churn faults"]
#                 [--fuzz-presets "asan tsan"] [--skip-stress] [--skip-fuzz]
#                 [--skip-coverage] [--skip-mutants] [--afl] [--build-root DIR]
#                 [--keep N] [-h|--help]
#
#   --minutes N    per stress run, and ci/fuzz.sh's whole budget per fuzz
#                  preset (default 10)
#   --fuzz-presets "P..."  ci/fuzz.sh under each (default "asan tsan": TSan
#                  sees races ASan cannot, and no service runs it); each
#                  preset's findings are triaged and replayed with its own
#                  kmgr-repro (--fuzz-preset P: one)
#   --out DIR      default nightly-out/; the night goes to DIR/YYYY-MM-DDTHHMMZ/
#                  (nightly.html, nightly.json, stress/, fuzz/, logs/, repro/)
#   --history DIR  earlier nights' nightly.json files for the trend
#                  (default: DIR of --out, so nights accumulate there)
#   --skip-*       leave a part out (a 2-minute check: --skip-mutants)
#   --afl          also an AFL++ campaign (ci/afl.sh --minutes N), its plot_data
#                  and crashes in the report
#   --keep N       keep the newest N night folders of --out (default 14; 0: all);
#                  every night's figures and finding keys stay in DIR/trend.json
# The coverage report keeps its summary and each target's index page; the
# per-file pages go to coverage/<target>/html.tar.gz (ci/lib/prune.sh).
#
# Interrupted (SIGINT, SIGTERM, SIGHUP): the running part gets SIGTERM (30 s,
# then SIGKILL), the stress runs that died before it are triaged, the
# report is written from what finished, marked "interrupted" (its findings
# "partial"), and the script exits 128+signal.  Two runs started in the
# same minute get folders of their own (<run>, <run>-2, ...).
# Exit status: 0 every part passed, 1 otherwise (the report is written
# either way), 2 bad usage.  Builds go to --build-root/<preset> (default
# build/<preset>, the presets' own trees).
set -uo pipefail
. "$(dirname "$0")/lib/usage.sh"
. "$(dirname "$0")/lib/signals.sh"
. "$(dirname "$0")/lib/targets.sh"
kmgr_signals_reset "$0" "$@"
src=$(cd "$(dirname "$0")/.." && pwd)
minutes=10 out="$src/nightly-out" history="" threads=4
presets="tsan release" binaries="refdrain async churn faults" fuzz_presets="asan tsan"
do_stress=1 do_fuzz=1 do_cov=1 do_mut=1 do_afl=0 keep=14
build_root="$src/build"
args=("$@")
need() { [ "$2" -ge 2 ] || kmgr_die "$1 needs a value"; }
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) need "$1" $#; minutes=$2; shift 2 ;;
	--out) need "$1" $#; out=$2; shift 2 ;;
	--history) need "$1" $#; history=$2; shift 2 ;;
	--threads) need "$1" $#; threads=$2; shift 2 ;;
	--presets) need "$1" $#; presets=$2; shift 2 ;;
	--binaries) need "$1" $#; binaries=$2; shift 2 ;;
	--fuzz-preset | --fuzz-presets) need "$1" $#; fuzz_presets=$2; shift 2 ;;
	--skip-stress) do_stress=0; shift ;;
	--skip-fuzz) do_fuzz=0; shift ;;
	--skip-coverage) do_cov=0; shift ;;
	--skip-mutants) do_mut=0; shift ;;
	--afl) do_afl=1; shift ;;
	--build-root) need "$1" $#; build_root=$2; shift 2 ;;
	--keep) need "$1" $#; keep=$2; shift 2 ;;
	-h | --help) kmgr_usage; exit 0 ;;
	*) kmgr_die "unknown option '$1'" ;;
	esac
done
[[ "$minutes" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk "BEGIN { exit !($minutes > 0) }" ||
	kmgr_die "--minutes: a number > 0"
[[ "$threads" =~ ^[0-9]+$ ]] && [ "$threads" -gt 0 ] || kmgr_die "--threads: a whole number > 0"
[[ "$keep" =~ ^[0-9]+$ ]] || kmgr_die "--keep: a whole number (0: keep every night)"
[ -n "$fuzz_presets" ] || kmgr_die "--fuzz-presets: name at least one"
for p in $fuzz_presets; do
	case "$p" in asan | msan | tsan) ;; *) kmgr_die "--fuzz-presets: asan, msan or tsan, not '$p'" ;; esac
done
for b in $binaries; do
	[ -f "$src/stress/$b.c" ] || kmgr_die "--binaries: no stress binary '$b'"
done
KMGR_ROOT=$src
. "$src/ci/lib/toolchain.sh"
kmgr_toolchain nightly.sh
mkdir -p "$out" || kmgr_die "--out $out: cannot create"
out=$(cd "$out" && pwd)
history=${history:-$out}
[ -d "$history" ] || kmgr_die "--history $history: not a directory"

# pd CMD...: CMD dies with this script (PR_SET_PDEATHSIG), SIGKILL included
pd=()
! command -v setpriv >/dev/null || pd=(setpriv --pdeathsig KILL --)
day=$(date -u +%Y-%m-%d)
run=$(date -u +%Y-%m-%dT%H%MZ) # several runs a day each keep their folder
night=$out/$run
# mkdir is the claim: a second run in the same minute takes <run>-2, and
# nothing of another run's folder is ever removed
n=1
until mkdir "$night" 2>/dev/null; do
	n=$((n + 1))
	[ "$n" -le 100 ] || kmgr_die "--out $out: cannot make a folder for this run"
	night=$out/$run-$n
done
run=$(basename "$night")
mkdir -p "$night/stress" "$night/fuzz" "$night/repro" "$night/logs"
: >"$night/.start"
. "$src/sanitizers/env.sh"
secs=$(awk "BEGIN { s = int($minutes * 60); print (s < 1 ? 1 : s) }")
stamp() { echo "=== [$(date -u +%H:%M:%S)] $*"; }
ok=1
parts=()
part() { parts+=("$1=$2"); [ "$2" = 0 ] || ok=0; }

# write_report: meta.json and the page, from what the night has so far
# (also when interrupted: meta.json then says by what).
write_report() {
	local commit
	commit=$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)
	# meta.json whole or not at all (a full disk: one line, no 0-byte file)
	local why
	why=$(python3 - "$night/meta.json" "$day" "$run" "$minutes" "$commit" "ci/nightly.sh ${args[*]}" \
		"$interrupted" "${parts[@]}" 2>&1 <<'PY'

import json, os, sys
path, day, run, minutes, commit, command, interrupted = sys.argv[1:8]
parts = {k: int(v) for k, v in (a.split("=", 1) for a in sys.argv[8:])}
meta = {"date": day, "run": run, "minutes": float(minutes), "commit": commit,
        "command": command, "parts": parts}
if interrupted:
    meta["interrupted"] = interrupted
tmp = "%s.tmp%d" % (path, os.getpid())
try:
    with open(tmp, "w") as f:
        json.dump(meta, f, indent=1)
    os.replace(tmp, path)
except OSError as e:
    try:
        os.unlink(tmp)
    except OSError:
        pass
    sys.stderr.write("writing %s failed: %s" % (path, e.strerror))
    sys.exit(1)
PY
	) || { ok=0; echo "nightly.sh: FAILED: the report was not written: $why"; return 1; }
	local err=$night/logs/report.err
	if python3 "$src/ci/nightly/report.py" --night "$night" --history "$history" \
		--trend "$out/trend.json" --keep "$keep" \
		--repro-tool "$build_root/${fuzz_presets%% *}/tools/kmgr-repro/kmgr-repro" 2>"$err" &&
		[ -s "$night/nightly.html" ] && [ -s "$night/nightly.json" ]; then
		grep -a 'warning' "$err" >&2
		echo "nightly.sh: report $night/nightly.html ($night/nightly.json)${interrupted:+, interrupted by $interrupted}"
	else
		ok=0
		rm -f "$out"/trend.json.tmp* "$night"/nightly.html.tmp* "$night"/nightly.json.tmp*
		echo "nightly.sh: FAILED: the report was not written: $(grep -avE '^\s|^Traceback' "$err" 2>/dev/null | tail -n 1)"
	fi
}

# The parts run through kmgr_waited (ci/lib/signals.sh), so that a signal
# to the night reaches the part at once (on_signal).
child="" interrupted=""
# the night's own stderr (3) and stdout (4), for a trap that runs inside a
# part's redirection (its "report ..." line went to that part's log)
exec 3>&2 4>&1
on_signal() {
	local i
	trap '' INT TERM HUP
	interrupted=$1
	echo "nightly.sh: $1: stopping the running part and writing the report so far" >&3
	if [ -n "$child" ]; then
		kill -TERM "$child" 2>/dev/null
		for i in $(seq 300); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	# the stress runs that died before the signal keep their crash state,
	# repro file and reproduce command: triaged now with the tools already
	# built (a triage of logs runs nothing; the report says "interrupted")
	{
		[ ! -d "$night/stress-crashes" ] || triage_stress
		write_report
	} >&4 2>&3
	exit "$2"
}
trap 'on_signal SIGINT 130' INT
trap 'on_signal SIGTERM 143' TERM
trap 'on_signal SIGHUP 129' HUP

# to_triage BIN PRESET LOG: a failed stress run's log, for triage_stress
to_triage() {
	mkdir -p "$night/stress-crashes/$2" && cp "$3" "$night/stress-crashes/$2/stress_$1.log"
}

# stress_died BIN PRESET RC LOG JSON BUILD: the FAILURE line and a JSON
# for a stress run that left none
stress_died() {
	local b=$1 p=$2 rc=$3 log=$4 json=$5 bld=$6 why repro cmd
	why=$(grep -aoE '(SUMMARY: [A-Za-z]+Sanitizer: .*|Assertion .* failed.*|KSCHED [A-Z]+.*|ORACLE: .*)' "$log" |
		head -n 1 | cut -c1-200)
	[ -n "$why" ] || why="exit $rc$([ "$rc" -le 128 ] || echo " (SIG$(kill -l $((rc - 128)) 2>/dev/null))")"
	repro=$(ls -t "$night/repro" 2>/dev/null | grep "^stress_$b" | head -1)
	cmd=""
	[ -z "$repro" ] || cmd="$night/repro/$repro"
	echo "stress_$b ($p): FAILURE: $why (log $log${repro:+, repro $night/repro/$repro})"
	to_triage "$b" "$p" "$log"
	python3 - "$json" "$b" "$p" "$rc" "$why" "$log" "$repro" "$cmd" "$bld/stress/stress_$b" <<'PY'
import json, shlex, sys
out, b, p, rc, why, log, repro, rpath, binary = sys.argv[1:]
# the replay command, safe to paste into sh whatever the paths hold
cmd = "%s --replay %s" % (shlex.quote(binary), shlex.quote(rpath)) if rpath else ""
json.dump({"binary": "stress_" + b, "preset": p, "result": "FAILURE", "exit": int(rc),
           "failures": [why], "log": log, "repro": repro, "command": cmd, "died": True},
          open(out, "w"))
PY
}

# stress_check_failed BIN PRESET LOG JSON: a run that failed its own check
# and still wrote its summary goes to triage too (stress-crashes/P/): its
# row's message names the night's model and job numbers, triage's key its
# check ("stress check: exec-after-unload"), so one bug keeps one row
# across nights.  Its JSON gets "triage_log", which tells the report.
stress_check_failed() {
	local b=$1 p=$2 log=$3 json=$4
	python3 - "$json" "stress-crashes/$p/stress_$b.log" <<'PY' || return 0
import json, sys
path, rel = sys.argv[1:]
j = json.load(open(path))
if j.get("result") == "SUCCESS" or j.get("interrupted"):
    sys.exit(1)
j["triage_log"] = rel
json.dump(j, open(path, "w"), indent=1)
PY
	to_triage "$b" "$p" "$log"
}

# The stress runs that died: their logs through kmgr-repro triage, which
# gives each its crash state (type and frames, a race's two accesses, a
# stall's wait site) and key; the report groups them with the fuzz
# findings by that key (one bug, one row).  Each preset's logs
# (stress-crashes/P/) with P's own kmgr-repro (built with the stress
# binaries), so that the reproduce command names the tree that has P's
# stress binaries (a TSan run's line named the asan tree's tool before,
# which has none): triage-stress-P.json.  Defined before the parts: the
# signal handler calls it too.
triage_stress() {
	local d p repro rc
	for d in "$night/stress-crashes"/*/; do
		[ -d "$d" ] || continue
		p=$(basename "$d")
		[ ! -s "$night/triage-stress-$p.json" ] || continue # done before a signal
		repro=$build_root/$p/tools/kmgr-repro/kmgr-repro
		if [ ! -x "$repro" ] && [ -z "$interrupted" ]; then
			kmgr_waited cmake --build "$build_root/$p" -j2 --target kmgr-repro \
				>>"$night/logs/build-$p.log" 2>&1
		fi
		if [ ! -x "$repro" ]; then
			echo "nightly.sh: the $p stress logs were not triaged: no kmgr-repro in $build_root/$p" \
				"(see $night/logs/build-$p.log)"
			part "triage_stress_$p" 1
			continue
		fi
		stamp "kmgr-repro ($p) triage $d"
		"$repro" triage "${d%/}" --json >"$night/triage-stress-$p.json" 2>"$night/logs/triage-stress-$p.err"
		rc=$?
		[ "$rc" = 0 ] ||
			echo "nightly.sh: triage of the $p stress logs failed: $(tail -n 1 "$night/logs/triage-stress-$p.err")"
		part "triage_stress_$p" "$rc"
	done
}

if [ "$do_stress" = 1 ]; then
	for preset in $presets; do
		build="$build_root/$preset"
		stamp "build $preset"
		# and this tree's kmgr-repro: a run that dies is triaged, and its
		# reproduce command given, with the tool of its own preset (its
		# stress binaries are in this tree only), also when the night is
		# interrupted before any other part built one
		targets="kmgr-repro"
		for b in $binaries; do targets="$targets stress_$b"; done
		# (a subshell: a failed configure fails this preset, not the night)
		if ! (kmgr_configure nightly.sh "$build" --preset "$preset" >/dev/null) ||
			! kmgr_waited cmake --build "$build" -j2 --target $targets >"$night/logs/build-$preset.log" 2>&1; then
			echo "build $preset failed: $night/logs/build-$preset.log"
			part "build_$preset" 1
			continue
		fi
		for b in $binaries; do
			json="$night/stress/$preset-$b.json"
			log="$night/logs/$preset-$b.log"
			stamp "stress_$b ($preset) for ${secs}s"
			env_extra=()
			[ "$preset" = release ] && env_extra=(MALLOC_CONF=junk:true)
			# under setpriv --pdeathsig: a SIGKILL of the night ends the run too
			kmgr_waited "${pd[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$night" env "${env_extra[@]}" \
				"$build/stress/stress_$b" --seconds "$secs" \
				--threads "$threads" --seed "$(date -u +%j)" --stall-seconds 60 \
				--json "$json" --repro-dir "$night/repro" --quiet >"$log" 2>&1
			rc=$?
			tail -n 1 "$log"
			# a crash or a kill leaves no summary: the report still shows the
			# run, with its crash from the log (a sanitizer's SUMMARY, an
			# assertion), its repro file and the command that replays it; the
			# log goes to triage (stress-crashes/) for its crash state
			if [ -s "$json" ]; then
				stress_check_failed "$b" "$preset" "$log" "$json"
			else
				stress_died "$b" "$preset" "$rc" "$log" "$json" "$build"
			fi
			part "stress_${preset}_$b" "$rc"
		done
	done
fi

# fuzz_preset P MINUTES: ci/fuzz.sh under P; its logs to fuzz/P/, this
# night's crash files to findings/P/<target>/, triaged with P's kmgr-repro
# (the sanitizer that found a crash is the one that replays it).
fuzz_preset() {
	local p=$1 fmin=$2 rc d t repro fjson=()
	stamp "ci/fuzz.sh --preset $p --minutes $fmin"
	grep -q -- --json <<<"$("$src/ci/fuzz.sh" --help 2>/dev/null)" && fjson=(--json "$night/fuzz-$p.json")
	kmgr_waited "$src/ci/fuzz.sh" --preset "$p" --minutes "$fmin" "${fjson[@]}" >"$night/logs/fuzz-$p.log" 2>&1
	rc=$?
	tail -n 12 "$night/logs/fuzz-$p.log"
	part "fuzz_$p" "$rc"
	mkdir -p "$night/fuzz/$p"
	for d in "$src/fuzz-work/$p"/*/; do
		t=$(basename "$d")
		[ -f "$d/fuzz.log" ] && cp "$d/fuzz.log" "$night/fuzz/$p/$t.log"
		find "$d/artifacts" -maxdepth 1 -type f -newer "$night/.start" 2>/dev/null |
			while read -r a; do mkdir -p "$night/findings/$p/$t" && cp "$a" "$night/findings/$p/$t/"; done
	done
	[ -d "$night/findings/$p" ] || return 0
	repro=$build_root/$p/tools/kmgr-repro/kmgr-repro
	stamp "kmgr-repro ($p) triage $night/findings/$p"
	kmgr_waited cmake --build "$build_root/$p" -j2 --target kmgr-repro >/dev/null 2>&1
	kmgr_waited "$repro" triage "$night/findings/$p" --json >"$night/triage-$p.json" \
		2>"$night/logs/triage-$p.err"
	part "triage_$p" $?
}

if [ "$do_fuzz" = 1 ]; then
	fmin=$(awk "BEGIN { m = int($minutes + 0.5); print (m < 1 ? 1 : m) }")
	for p in $fuzz_presets; do fuzz_preset "$p" "$fmin"; done
	if [ "$do_afl" = 1 ] && [ -x "$src/ci/afl.sh" ]; then
		stamp "ci/afl.sh --minutes $fmin"
		kmgr_waited "$src/ci/afl.sh" --minutes "$fmin" >"$night/logs/afl.log" 2>&1
		part afl $?
		tail -n 8 "$night/logs/afl.log"
		# its crashes: triaged with the first fuzz preset's kmgr-repro
		p=${fuzz_presets%% *}
		find "$src/fuzz-work/afl" -path '*/crashes/id:*' -type f -newer "$night/.start" 2>/dev/null |
			while read -r a; do
				t=$(echo "${a#"$src/fuzz-work/afl/"}" | cut -d/ -f1)
				mkdir -p "$night/findings/afl/$t" && cp "$a" "$night/findings/afl/$t/afl-$(basename "$a" | tr ':,' '__')"
			done
		if [ -d "$night/findings/afl" ]; then
			"$build_root/$p/tools/kmgr-repro/kmgr-repro" triage "$night/findings/afl" --json \
				>"$night/triage-afl.json" 2>"$night/logs/triage-afl.err"
			part triage_afl $?
		fi
	fi
	# AFL++ campaigns of this night leave plot_data files (fuzz-work/afl/<t>/out/<instance>/)
	find "$src/fuzz-work" -path '*afl*' -name plot_data -newer "$night/.start" 2>/dev/null |
		while read -r p; do
			rel=${p#"$src/fuzz-work/"}
			mkdir -p "$night/afl/$(dirname "$rel")" && cp "$p" "$night/afl/$rel"
		done
fi

# The dead stress runs triaged (triage_stress, above), after the fuzz part.
[ ! -d "$night/stress-crashes" ] || triage_stress

if [ "$do_cov" = 1 ]; then
	stamp "ci/coverage.sh over the grown corpus"
	kmgr_waited "$src/ci/coverage.sh" --out "$night/coverage" --build "$build_root/coverage" \
		>"$night/logs/coverage.log" 2>&1
	rc=$?
	grep -E "^($(kmgr_targets '|')|all) " "$night/logs/coverage.log"
	# a night's coverage HTML ran to 43 MB: the summaries stay, the rest
	# is compressed
	. "$src/ci/lib/prune.sh"
	kmgr_prune_coverage "$night/coverage" || rc=1
	part coverage "$rc"
fi

if [ "$do_mut" = 1 ]; then
	if [ -x "$src/ci/mutant-controls.sh" ]; then
		stamp "ci/mutant-controls.sh"
		kmgr_waited "$src/ci/mutant-controls.sh" >"$night/logs/mutants.log" 2>&1
		rc=$?
		tail -n 5 "$night/logs/mutants.log"
		part mutants "$rc"
	else
		echo "ci/mutant-controls.sh not present: negative controls skipped" | tee "$night/logs/mutants.log"
	fi
fi

write_report
[ "$ok" = 1 ]
