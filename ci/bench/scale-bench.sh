#!/usr/bin/env bash
# ci/bench/scale-bench.sh [--seconds N] [--target T] [--help]
# BENCHMARKS.md, "Every core": exec/s and coverage of one target with one and
# with two workers, for libFuzzer (in-process, -jobs=2 -workers=2 on one
# corpus folder, -fork=1, -fork=2) and AFL++ (-M alone, -M + -S; CmpLog on
# new finds only, as ci/afl.sh runs it), one run after the other in this
# invocation, each from
# a fresh copy of corpus/T with the target's dictionary.  Needs the asan
# build (build/asan) and ci/afl.sh's two builds (build/afl, build/afl-cmplog).
# Prints one row per run: engine, workers, exec/s (all workers over the wall
# time), coverage (libFuzzer cov; AFL++ edges_found), corpus, AFL stability.
set -euo pipefail
secs=240 t=api_seq
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	--seconds | --target)
		[ $# -ge 2 ] || { echo "scale-bench: $1 needs a value" >&2; exit 2; }
		if [ "$1" = --seconds ]; then secs=$2; else t=$2; fi
		shift 2
		;;
	*) echo "scale-bench: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
done
[[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -ge 10 ] || { echo "scale-bench: --seconds N, N >= 10" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -d "$root/corpus/$t" ] || { echo "scale-bench: unknown target $t" >&2; exit 2; }
lf=$root/build/asan/fuzz/$t afl=$root/build/afl/fuzz/$t cl=$root/build/afl-cmplog/fuzz/$t
for b in "$lf" "$afl" "$cl"; do
	[ -x "$b" ] || { echo "scale-bench: $b missing (cmake --build --preset asan; ci/afl.sh builds the AFL++ ones)" >&2; exit 2; }
done
. "$root/sanitizers/env.sh"
. "$root/ci/lib/afl.sh"
. "$root/ci/lib/libfuzzer.sh"
work=$(mktemp -d /tmp/scale-bench.XXXXXX)
# Every afl-fuzz of this run, and so its fork servers and their children,
# carries KMGR_SCALE_RUN=$run (ci/lib/afl.sh): a CmpLog persistent-mode
# child is left stopped even after afl-fuzz -V ends normally, one per run
# when nothing reaps it.  reap kills what is left after each AFL++ row.
run=$$.$RANDOM$RANDOM
reap() { kmgr_reap_tagged "KMGR_SCALE_RUN=$run" scale-bench || true; }
trap 'reap; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
dict=$root/corpus/$t.dict
row() { printf '%-10s %-13s %7s %8s %7s %7s %9s\n' "$@"; }
row engine mode workers exec/s cov corpus stability

# libFuzzer: in-process, two in-process jobs on one corpus folder, then fork
# mode with 1 and 2 workers
for mode in inproc jobs2 1 2; do
	d=$work/lf-$mode
	mkdir -p "$d/corpus" "$d/art"
	cp "$root/corpus/$t"/* "$d/corpus/"
	args=(-dict="$dict" -max_len=4096 -timeout=25 -rss_limit_mb=4096 -max_total_time="$secs" -artifact_prefix="$d/art/")
	if [ "$mode" = inproc ]; then
		"$lf" "${args[@]}" -print_final_stats=1 "$d/corpus" >"$d/log" 2>&1 || true
		eps=$(kmgr_lf_final_eps "$d/log")
		w=1
	elif [ "$mode" = jobs2 ]; then
		# each job writes fuzz-<i>.log in the working folder; exec/s: the sum
		(cd "$d" && "$lf" "${args[@]}" -print_final_stats=1 -jobs=2 -workers=2 "$d/corpus" \
			>"$d/log" 2>&1) || true
		cat "$d"/fuzz-*.log >>"$d/log" 2>/dev/null || true
		eps=0
		for f in "$d"/fuzz-*.log; do
			v=$(kmgr_lf_final_eps "$f")
			eps=$((eps + ${v:-0}))
		done
		w=2
	else
		"$lf" "${args[@]}" -fork="$mode" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
			"$d/corpus" >"$d/log" 2>&1 || true
		eps=$(kmgr_lf_status "$d/log" | awk '{print $4}')
		w=$mode mode=fork
	fi
	cov=$(grep -aoE 'cov: [0-9]+' "$d/log" | cut -d' ' -f2 | sort -n | tail -1)
	row libFuzzer "$mode" "$w" "${eps:-?}" "${cov:-?}" "$(find "$d/corpus" -type f | wc -l)" -
done

# AFL++: -M alone (with CmpLog), then -M + -S (CmpLog on the secondary)
kmgr_afl_env
export AFL_CMPLOG_ONLY_NEW=1
for n in 1 2; do
	out=$work/afl-$n
	if [ "$n" = 1 ]; then
		KMGR_SCALE_RUN=$run afl-fuzz -M main -c "$cl" -i "$root/corpus/$t" -o "$out" -x "$dict" -m none -t 5000 -V "$secs" -- "$afl" >"$work/afl-$n-main.log" 2>&1 || true
	else
		KMGR_SCALE_RUN=$run afl-fuzz -M main -i "$root/corpus/$t" -o "$out" -x "$dict" -m none -t 5000 -V "$secs" -- "$afl" >"$work/afl-$n-main.log" 2>&1 &
		p=$!
		KMGR_SCALE_RUN=$run afl-fuzz -S s1 -c "$cl" -i "$root/corpus/$t" -o "$out" -x "$dict" -m none -t 5000 -V "$secs" -- "$afl" >"$work/afl-$n-s1.log" 2>&1 || true
		wait "$p" || true
	fi
	reap
	st() { cat "$out"/*/fuzzer_stats 2>/dev/null | awk -v k="$1" '$1 == k {print $3}'; }
	execs=$(st execs_done | awk '{s += $1} END {printf "%d", s}')
	row AFL++ "$([ "$n" = 1 ] && echo M+cmplog || echo M+S-cmplog)" "$n" "$((execs / secs))" \
		"$(st edges_found | sort -n | tail -1)" "$(st corpus_count | sort -n | tail -1)" "$(st stability | tr '\n' ' ')"
done
