#!/usr/bin/env bash
# ci/fuzz.sh [--minutes N] [--preset asan|msan|tsan] [--targets a,b] [--jobs N] [--fork] [--json FILE]
# README command 1.  Builds the preset's fuzz targets if needed, copies each
# shipped corpus to fuzz-work/<preset>/<target>/corpus and fuzzes every
# target for its share of the budget.  --jobs N >= 2: libFuzzer's fork mode,
# N worker processes (-fork=N), each crash, timeout or OOM recorded and the
# budget continued (-ignore_crashes/-ignore_timeouts/-ignore_ooms).  One job
# (default): in-process, restarted after a finding for the rest of the
# budget; --fork forces fork mode with one worker.  Flags come from
# corpus/<target>.options: its [libfuzzer] section as libFuzzer flags, its
# [asan], [ubsan], [msan], [tsan], [lsan] sections appended to the matching
# *_OPTIONS.  A status line every 10 s; then the new coverage is merged back
# into the work corpus and a table printed: target, exec/s, cov, corpus size,
# findings, each finding with the command that reproduces it.  --json FILE
# writes the same as JSON.  Exits 1 when anything was found, 2 on bad usage.
set -euo pipefail

minutes=10 preset=asan targets="model_parse,api_seq,concurrent,async,faults" jobs=1 json="" mode=""
usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; }
bad() {
	echo "fuzz.sh: $*" >&2
	exit 2
}
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	--fork) mode=fork; shift ;;
	--minutes | --preset | --targets | --jobs | --json)
		[ $# -ge 2 ] || bad "$1 needs a value (--help)"
		case "$1" in
		--minutes) minutes=$2 ;;
		--preset) preset=$2 ;;
		--targets) targets=$2 ;;
		--jobs) jobs=$2 ;;
		--json) json=$2 ;;
		esac
		shift 2
		;;
	*) bad "unknown argument $1 (--help)" ;;
	esac
done
case "$preset" in asan | msan | tsan) ;; *) bad "preset must be asan, msan or tsan" ;; esac
[[ "$minutes" =~ ^[0-9]+$ ]] && [ "$minutes" -gt 0 ] || bad "--minutes N, N >= 1"
[[ "$jobs" =~ ^[0-9]+$ ]] && [ "$jobs" -gt 0 ] || bad "--jobs N, N >= 1"
[ "$jobs" = 1 ] || mode=fork
if [ -n "$json" ]; then
	[ -d "$(dirname "$json")" ] || bad "--json: no directory $(dirname "$json")"
	json=$(cd "$(dirname "$json")" && pwd)/$(basename "$json")
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KMGR_FUZZ_BUILD:-$root/build/$preset}
# The tests' sanitizer options: without them TSan reports and keeps going
# (halt_on_error=0), so a race would never become a finding.
. "$root/sanitizers/env.sh"
# TSan: no abort after the report.  Its death callback lets libFuzzer write
# the crash file, then exits; an abort instead runs libFuzzer's deadly-signal
# handler, whose stack printing can wedge inside TSan's malloc.
[ "$preset" != tsan ] || export TSAN_OPTIONS="$TSAN_OPTIONS:abort_on_error=0"
IFS=, read -r -a tlist <<<"$targets"
[ ${#tlist[@]} -gt 0 ] || bad "--targets: no target named"
for t in "${tlist[@]}"; do
	[ -d "$root/corpus/$t" ] || bad "unknown target $t"
done

# opt_keys FILE SECTION: the "key=value" lines of one [section] of an
# OSS-Fuzz .options file (INI: '#'/';' comments, spaces around '=').
opt_keys() {
	awk -v want="$2" '
		/^[ \t]*([#;]|$)/ { next }
		/^[ \t]*\[/ { s = $0; gsub(/[][ \t]/, "", s); next }
		s == want && index($0, "=") {
			k = substr($0, 1, index($0, "=") - 1); v = substr($0, index($0, "=") + 1)
			gsub(/^[ \t]+|[ \t]+$/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", v)
			print k "=" v
		}' "$1"
}
opt_sections() { awk '/^[ \t]*\[/ { s = $0; gsub(/[][ \t]/, "", s); print s }' "$1"; }

# target_flags T: libFuzzer flags from corpus/T.options into the array
# tflags (a dict named relative to the file resolved next to it); sanitizer
# sections appended to the exported *_OPTIONS of this shell.
target_flags() {
	local f=$root/corpus/$1.options kv k v sec var
	tflags=()
	[ -f "$f" ] || return 0
	while IFS= read -r kv; do
		k=${kv%%=*} v=${kv#*=}
		[ "$k" != dict ] || [[ "$v" = /* ]] || v=$root/corpus/$v
		tflags+=("-$k=$v")
	done < <(opt_keys "$f" libfuzzer)
	while IFS= read -r sec; do
		case "$sec" in
		libfuzzer) continue ;;
		asan | ubsan | msan | tsan | lsan) ;;
		*) echo "fuzz.sh: $f: section [$sec] is not used here" >&2; continue ;;
		esac
		var=${sec^^}_OPTIONS
		while IFS= read -r kv; do
			export "$var=${!var:+${!var}:}$kv"
		done < <(opt_keys "$f" "$sec")
	done < <(opt_sections "$f" | sort -u)
}

echo "== fuzz.sh: building preset $preset in $build"
[ -f "$build/build.ninja" ] || cmake --preset "$preset" -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j2 $(printf -- '--target fuzz_%s ' "${tlist[@]}")

share=$((minutes * 60 / ${#tlist[@]}))
[ "$share" -ge 10 ] || share=10
work=$root/fuzz-work/$preset
mkdir -p "$work"
# One summary file per invocation: two runs of the same preset at a time
# (one per CPU) must not write into each other's table.
summary=$(mktemp "$work/.summary.XXXXXX")
records=$(mktemp "$work/.records.XXXXXX")
fpid=""
cleanup() {
	[ -z "$fpid" ] || kill "$fpid" 2>/dev/null || true
	rm -f "$summary" "$records"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# last_stats LOG: "cov ft corp exec/s" of the newest status line, in
# either format: fork mode "#N: cov: C ft: F corp: K exec/s: E ..." or
# in-process "#N NEW cov: C ft: F corp: K/12Kb ... exec/s: E ...".
last_stats() {
	grep -aE '^#[0-9]+:?[[:space:]]+([A-Z]+[[:space:]]+)?cov: ' "$1" | tail -1 |
		sed -nE 's/.*cov: ([0-9]+) ft: ([0-9]+) corp: ([0-9]+)[^ ]* .*exec\/s: ([0-9]+).*/\1 \2 \3 \4/p'
}
# final_eps LOG JOBS: the run's exec/s.  Fork mode: the parent's last status
# line (all workers' executions over the wall time).  In-process: each run's
# own final stats, weighted by its executions when a finding restarted it.
final_eps() {
	if [ "$2" = fork ]; then
		last_stats "$1" | awk '{print $4}'
		return
	fi
	awk '/stat::number_of_executed_units/ {u = $2}
		/stat::average_exec_per_sec/ && $2 > 0 {n += u; s += u / $2}
		END {if (s > 0) printf "%d\n", n / s}' "$1"
}
# run_target: one target's budget, in the background's foreground.
#   fork mode (--jobs N >= 2, or --fork): -fork=N workers; the parent
#     writes what they found to the first directory ($dir/new), their crash
#     files to the artifact prefix, and carries on after each.
#   one worker: libFuzzer in-process (no per-job restarts: its exec/s is
#     what BENCHMARKS measures); a finding ends that run, so it is started
#     again, from the grown corpus, for what is left of the budget.
run_target() {
	local end=$((SECONDS + share)) left rc
	if [ "$mode" = fork ]; then
		exec "$bin" -timeout=25 -rss_limit_mb=4096 "${opts[@]}" -fork="$jobs" \
			-ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$share" \
			-artifact_prefix="$dir/artifacts/" "$dir/new" "$dir/corpus" "${extra[@]}"
	fi
	local runlog=$dir/run.log
	while left=$((end - SECONDS)) && [ "$left" -ge 2 ]; do
		rc=0
		"$bin" -timeout=25 -rss_limit_mb=4096 "${opts[@]}" -max_total_time="$left" -print_final_stats=1 \
			-artifact_prefix="$dir/artifacts/" "$dir/new" "$dir/corpus" "${extra[@]}" >"$runlog" 2>&1 || rc=$?
		cat "$runlog"
		[ "$rc" != 0 ] || return 0
		# Go on only after a finding made while fuzzing: an exit without a
		# crash file is libFuzzer failing, and a crash before INITED is a seed
		# that would crash every restart.
		grep -aq 'Test unit written to' "$runlog" && grep -aq 'INITED' "$runlog" || return "$rc"
		echo "fuzz.sh: finding recorded; fuzzing on for the remaining budget"
	done
}

sigpat='ORACLE:|KSCHED [A-Z]+|DEVICE FAULT|kmgr error:|(ERROR|WARNING): [A-Za-z]+Sanitizer|ERROR: libFuzzer|runtime error'

found=0
for t in "${tlist[@]}"; do
	bin=$build/fuzz/$t
	dir=$work/$t
	mkdir -p "$dir/corpus" "$dir/new" "$dir/artifacts"
	cp -n "$root/corpus/$t"/* "$dir/corpus/" 2>/dev/null || true
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
	echo "== fuzz.sh: $t for ${share}s, $jobs worker(s)${mode:+ (fork mode)} (log: $dir/fuzz.log)"
	# findings of earlier runs stay where they are; only newer ones count
	stamp=$dir/.run-start
	: >"$stamp"
	start=$SECONDS seen=0
	while kill -0 "$fpid" 2>/dev/null; do
		for _ in 1 2 3 4 5 6 7 8 9; do
			kill -0 "$fpid" 2>/dev/null || break
			sleep 1
		done
		# what the workers reported since the last status line
		n=$(wc -l <"$dir/fuzz.log")
		tail -n +"$((seen + 1))" "$dir/fuzz.log" | head -n "$((n - seen))" | grep -aE "$sigpat" | cut -c1-160 || true
		seen=$n
		read -r c_cov c_ft c_corp c_eps <<<"$(last_stats "$dir/fuzz.log")" || true
		printf '[fuzz.sh %s %3ds/%ds] cov %s ft %s corpus %s exec/s %s findings %s\n' \
			"$t" "$((SECONDS - start))" "$share" "${c_cov:--}" "${c_ft:--}" "${c_corp:--}" "${c_eps:--}" \
			"$(find "$dir/artifacts" -maxdepth 1 -type f -newer "$stamp" | wc -l)"
	done
	rc=0
	wait "$fpid" || rc=$?
	fpid=""
	[ "$rc" = 0 ] || echo "fuzz.sh: $t: libFuzzer exited $rc (log $dir/fuzz.log)"
	# fold what was found into the work corpus (only inputs that add coverage)
	"$bin" -merge=1 "$dir/corpus" "$dir/new" >"$dir/merge.log" 2>&1 || true
	rm -rf "${dir:?}/new"/*
	read -r cov ft _ _ <<<"$(last_stats "$dir/fuzz.log")" || true
	eps=$(final_eps "$dir/fuzz.log" "$mode")
	size=$(find "$dir/corpus" -maxdepth 1 -type f | wc -l)
	mapfile -t arts < <(find "$dir/artifacts" -maxdepth 1 -type f -newer "$stamp" | sort)
	nf=${#arts[@]}
	# by kind, from libFuzzer's file names (crash-, leak-, timeout-, oom-)
	ncr=$(printf '%s\n' "${arts[@]}" | grep -cE '/(crash|leak|death)-' || true)
	nto=$(printf '%s\n' "${arts[@]}" | grep -cE '/timeout-' || true)
	noom=$(printf '%s\n' "${arts[@]}" | grep -cE '/oom-' || true)
	found=$((found + nf))
	printf '%-12s %8s %8s %8s %8s\n' "$t" "${eps:--}" "${cov:--}" "$size" "$nf" >>"$summary"
	printf 'T\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "${eps:-}" "${cov:-}" "${ft:-}" "$size" \
		"${ncr:-0}" "${nto:-0}" "${noom:-0}" "$rc" "$dir/fuzz.log" >>"$records"
	i=0
	for a in "${arts[@]}"; do
		i=$((i + 1))
		# each finding's own signature: replay it (the first ten; a timeout
		# takes the full -timeout to replay)
		sig="(not replayed)"
		if [ "$i" -le 10 ]; then
			sig=$(timeout 120 "$bin" -timeout=25 -rss_limit_mb=4096 "$a" 2>&1 | grep -aE -m1 "$sigpat" | cut -c1-100 || true)
			[ -n "$sig" ] || sig="(no signature on replay: flaky or environment-dependent)"
		fi
		repro="$bin $a"
		if [ -x "$root/build/release/tools/kmgr-repro/kmgr-repro" ]; then
			repro="$root/build/release/tools/kmgr-repro/kmgr-repro replay $a"
		fi
		printf '    finding: %s\n      %s\n      reproduce: %s\n' "$(basename "$a")" "$sig" "$repro" >>"$summary"
		printf 'F\t%s\t%s\t%s\t%s\n' "$t" "$a" "${sig//$'\t'/ }" "$repro" >>"$records"
	done
done
echo
echo "== fuzz.sh summary (preset $preset, ${minutes} min, ${share}s per target, $jobs worker(s))"
printf '%-12s %8s %8s %8s %8s\n' target exec/s cov corpus findings
cat "$summary"
cp "$summary" "$work/summary.txt"
if [ -n "$json" ]; then
	python3 - "$records" "$json" "$preset" "$minutes" "$share" "$jobs" <<'PY'
import json, sys
rec, out, preset, minutes, share, jobs = sys.argv[1:]
num = lambda s: int(s) if s.isdigit() else None
targets, order = {}, []
for line in open(rec, errors="replace"):
    f = line.rstrip("\n").split("\t")
    if f[0] == "T":
        targets[f[1]] = {"target": f[1], "exec_per_s": num(f[2]), "cov": num(f[3]), "ft": num(f[4]),
                         "corpus": int(f[5]), "crashes": int(f[6]), "timeouts": int(f[7]),
                         "ooms": int(f[8]), "libfuzzer_exit": int(f[9]), "log": f[10], "findings": []}
        order.append(f[1])
    elif f[0] == "F":
        targets[f[1]]["findings"].append({"file": f[2], "signature": f[3], "reproduce": f[4]})
doc = {"preset": preset, "minutes": int(minutes), "seconds_per_target": int(share), "jobs": int(jobs),
       "targets": [targets[t] for t in order],
       "findings": sum(len(targets[t]["findings"]) for t in order)}
json.dump(doc, open(out, "w"), indent=2)
PY
	echo "fuzz.sh: JSON summary in $json"
fi
[ "$found" -eq 0 ] || { echo "fuzz.sh: $found finding(s)"; exit 1; }
echo "fuzz.sh: no findings"
