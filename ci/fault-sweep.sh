#!/usr/bin/env bash
# ci/fault-sweep.sh - fail every allocation fault site in turn (its first
# hit) over each client shape, and check that every site is survived:
#
#   run_model    examples/run_model on a two-input, two-output model, the plan
#                given to libnrt through KMGR_FAULT (test builds read it at
#                nrt_init; docs/api-contract.md).  Pass: no crash or sanitizer
#                report; zero accounting at exit (libnrt's exit line, LSan);
#                exit 0 with outputs matching the compute formula, or exit 1
#                with a "run_model: CALL(...)" line naming the failed call.
#   run_model_nth
#                the same run_model, the plan alloc:any:N (the N-th allocation
#                of the run, whatever its site) for N = 1, 2, ... until a run
#                fires no fault: every allocation of the path fails once.
#   api_seq concurrent async faults
#                one seed program per fuzz target (corpus/text/T/, the first
#                file), its plan replaced by alloc:SITE:1, run by `kprog run`
#                with the oracle (statuses, outputs, refcounts, accounting
#                zero after nrt_close).  Pass: exit 0 and no sanitizer report;
#                "fired" when an operation failed (ops ok below the fault-free
#                run) or the library logged more errors than without the fault.
#   model_parse  `kmgr-model show` of the first model_parse corpus input, the
#                plan in KMGR_FAULT.  Pass: no crash or sanitizer report
#                (LSan: no leak); exit 0, or exit 1 with a "kmgr-model:" line.
#
# Prints one table row per (shape, site) and a summary; exits 1 if any site
# failed, 2 on bad usage.
set -u

usage() {
	cat <<'EOF'
usage: ci/fault-sweep.sh [--build DIR] [--sites S1,S2,...] [--shapes SH1,SH2,...] [--help]
  --build DIR    a build tree of a sanitizer preset (default build/asan); its libnrt
                 must read KMGR_FAULT (CMake option KMGR_NRT_FAULT_ENV, on in
                 the sanitizer presets)
  --sites LIST   fault site names or numbers (default: every site of
                 kmgr-model --list-fault-sites)
  --shapes LIST  run_model run_model_nth api_seq concurrent async faults model_parse
                 (default: all)
Exit status: 0 every site survived, 1 some site did not, 2 bad usage.
EOF
}

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$ROOT/build/asan
SITES=""
SHAPES="run_model,run_model_nth,api_seq,concurrent,async,faults,model_parse"
while [ $# -gt 0 ]; do
	case "$1" in
	--help | -h)
		usage
		exit 0
		;;
	--build | --sites | --shapes)
		if [ $# -lt 2 ] || [ -z "$2" ]; then
			echo "fault-sweep: $1 needs a value" >&2
			exit 2
		fi
		case "$1" in
		--build) BUILD=$(cd "$2" 2>/dev/null && pwd) || {
			echo "fault-sweep: no build tree $2" >&2
			exit 2
		} ;;
		--sites) SITES=$2 ;;
		--shapes) SHAPES=$2 ;;
		esac
		shift 2
		;;
	*)
		echo "fault-sweep: unknown argument '$1' (try --help)" >&2
		exit 2
		;;
	esac
done

if [ -z "${SHAPES//[, ]/}" ]; then
	echo "fault-sweep: --shapes names no shape (try --help)" >&2
	exit 2
fi
for sh in ${SHAPES//,/ }; do
	case "$sh" in
	run_model | run_model_nth | api_seq | concurrent | async | faults | model_parse) ;;
	*)
		echo "fault-sweep: unknown shape '$sh' (try --help)" >&2
		exit 2
		;;
	esac
done

RUN_MODEL=${FAULT_SWEEP_RUN_MODEL:-$BUILD/examples/run_model}
CHECKER=$BUILD/examples/check_run_model
KMGR_MODEL=$BUILD/tools/kmgr-model/kmgr-model
# kprog's home moves (fuzz/tools -> tools/kprog): take whichever is built.
KPROG=$(ls "$BUILD"/tools/kprog/kprog "$BUILD"/fuzz/kprog 2>/dev/null | head -1)
KPROG=${KPROG:-$BUILD/fuzz/kprog}
for b in "$RUN_MODEL" "$CHECKER" "$KMGR_MODEL" "$KPROG"; do
	if [ ! -x "$b" ]; then
		echo "fault-sweep: $b is missing: build the preset first" >&2
		exit 2
	fi
done

ALL_SITES=$("$KMGR_MODEL" --list-fault-sites | awk '{print $2}')
if [ -z "$SITES" ]; then
	SITES=$ALL_SITES
else
	SITES=${SITES//,/ }
	if [ -z "${SITES// /}" ]; then
		echo "fault-sweep: --sites names no site" >&2
		exit 2
	fi
	for s in $SITES; do
		if ! "$KMGR_MODEL" --list-fault-sites | awk -v s="$s" '$1 == s || $2 == s {f=1} END {exit !f}'; then
			echo "fault-sweep: unknown fault site '$s' (see kmgr-model --list-fault-sites)" >&2
			exit 2
		fi
	done
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/fault-sweep.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# A sanitizer report is what it says; keep the exit status ours to read.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=0:exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1"
unset NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS NEURON_RT_VISIBLE_CORES KMGR_FAULT

sanitizer_report() {
	grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|MemorySanitizer|ThreadSanitizer)|runtime error:|WARNING: ThreadSanitizer' "$1"
}

# ---- run_model ------------------------------------------------------------
setup_run_model() {
	mkdir -p "$WORK/rm"
	(cd "$WORK/rm" &&
		"$KMGR_MODEL" create -o model.bin --name sweep --input a:u8:16 --input b:u8:5 \
			--output x:u8:16 --output y:u8:7 >/dev/null &&
		"$CHECKER" gen . 16 5) || {
		echo "fault-sweep: cannot make the run_model model" >&2
		exit 1
	}
}

# run_run_model SITE [NTH]: prints "verdict|fired|exit|note".
run_run_model() {
	local site=$1 nth=${2:-1} d rc fired note
	d=$WORK/rm/$site.$nth
	mkdir -p "$d"
	(cd "$d" && KMGR_FAULT="alloc:$site:$nth" "$RUN_MODEL" ../model.bin a ../in0.bin b ../in1.bin \
		>out.txt 2>err.txt)
	rc=$?
	fired=$(sed -n 's/^libnrt: KMGR_FAULT run: \([0-9]*\) faults fired.*/\1/p' "$d/err.txt")
	note=$(grep -m1 '^run_model: ' "$d/err.txt" | cut -c1-60)
	if sanitizer_report "$d/err.txt" || [ "$rc" -ge 128 ] || [ "$rc" -eq 86 ]; then
		echo "CRASH|${fired:-?}|$rc|$(grep -m1 -E 'ERROR|runtime error' "$d/err.txt" | cut -c1-60)"
	elif [ "$rc" -eq 3 ] || grep -q 'accounting not zero' "$d/err.txt"; then
		echo "LEAK|${fired:-?}|$rc|$(grep -m1 'accounting not zero' "$d/err.txt" | cut -c1-60)"
	elif [ -z "$fired" ]; then
		echo "NO-CHECK|?|$rc|libnrt printed no KMGR_FAULT line (option KMGR_NRT_FAULT_ENV off?)"
	elif [ "$rc" -eq 0 ]; then
		if "$CHECKER" check "$d" 2 16 5 2 x:16 y:7 >/dev/null 2>&1; then
			echo "ok|$fired|0|outputs correct"
		else
			echo "WRONG|$fired|0|exit 0 with wrong outputs"
		fi
	elif [ -n "$note" ]; then
		echo "ok|$fired|$rc|$note"
	else
		echo "SILENT|$fired|$rc|exit $rc without a run_model: line"
	fi
}

# ---- fuzz target shapes (kprog run) ----------------------------------------
prog_for() {
	local t=$1 site=$2 seed
	seed=$(ls "$ROOT"/corpus/text/"$t"/*.txt | head -1)
	grep -v '^fault ' "$seed" >"$WORK/$t.$site.txt"
	[ -n "$site" ] && echo "fault alloc:$site:1" >>"$WORK/$t.$site.txt"
	echo "$WORK/$t.$site.txt"
}

declare -A BASE_OK BASE_ERR
baseline_prog() {
	local t=$1 p
	p=$(prog_for "$t" "")
	"$KPROG" run "$p" --text >"$p.out" 2>"$p.err" || {
		echo "fault-sweep: the fault-free $t seed fails: fix that first" >&2
		exit 1
	}
	BASE_OK[$t]=$(awk '/^ops /{print $4}' "$p.out")
	BASE_ERR[$t]=$(grep -c '^kmgr error' "$p.err")
}

run_prog() {
	local t=$1 site=$2 p rc ok errs
	p=$(prog_for "$t" "$site")
	"$KPROG" run "$p" --text >"$p.out" 2>"$p.err"
	rc=$?
	ok=$(awk '/^ops /{print $4}' "$p.out")
	errs=$(grep -c '^kmgr error' "$p.err")
	if sanitizer_report "$p.err" || [ "$rc" -ne 0 ]; then
		echo "CRASH|?|$rc|$(grep -m1 -vE '^kmgr (error|warn)' "$p.err" | cut -c1-60)"
	elif [ "${ok:-0}" -lt "${BASE_OK[$t]}" ] || [ "$errs" -gt "${BASE_ERR[$t]}" ]; then
		echo "ok|yes|0|ops ok ${ok:-?}/${BASE_OK[$t]}, oracle passed"
	else
		echo "ok|no|0|not on this program's path"
	fi
}

# ---- model_parse -----------------------------------------------------------
run_model_parse() {
	local site=$1 input rc d=$WORK/mp
	mkdir -p "$d"
	input=$(ls "$ROOT"/corpus/model_parse/* | head -1)
	KMGR_FAULT="alloc:$site:1" "$KMGR_MODEL" show "$input" >"$d/out" 2>"$d/err"
	rc=$?
	if sanitizer_report "$d/err" || [ "$rc" -ge 128 ] || [ "$rc" -eq 86 ]; then
		echo "CRASH|?|$rc|$(grep -m1 -E 'ERROR|runtime error' "$d/err" | cut -c1-60)"
	elif [ "$rc" -eq 0 ]; then
		echo "ok|no|0|not on the parser's path"
	elif grep -q '^kmgr-model: ' "$d/err"; then
		echo "ok|yes|$rc|$(grep -m1 '^kmgr-model: ' "$d/err" | cut -c1-60)"
	else
		echo "SILENT|yes|$rc|exit $rc without a kmgr-model: line"
	fi
}

bad=0
total=0
fired_total=0
printf '%-12s %-22s %-8s %-5s %-4s %s\n' shape site verdict fired exit note
for sh in ${SHAPES//,/ }; do
	case "$sh" in
	run_model | run_model_nth) setup_run_model ;;
	model_parse) ;;
	*) baseline_prog "$sh" ;;
	esac
	if [ "$sh" = run_model_nth ]; then
		for ((n = 1; n <= 1000; n++)); do
			row=$(run_run_model any "$n")
			IFS='|' read -r verdict fired rc note <<<"$row"
			[ "$verdict" = ok ] && [ "$fired" = 0 ] && break
			printf '%-12s %-22s %-8s %-5s %-4s %s\n' "$sh" "any:$n" "$verdict" "$fired" "$rc" "$note"
			total=$((total + 1))
			[ "$verdict" = ok ] || bad=$((bad + 1))
			fired_total=$((fired_total + 1))
		done
		continue
	fi
	for site in $SITES; do
		case "$sh" in
		run_model) row=$(run_run_model "$site") ;;
		model_parse) row=$(run_model_parse "$site") ;;
		*) row=$(run_prog "$sh" "$site") ;;
		esac
		IFS='|' read -r verdict fired rc note <<<"$row"
		printf '%-12s %-22s %-8s %-5s %-4s %s\n' "$sh" "$site" "$verdict" "$fired" "$rc" "$note"
		total=$((total + 1))
		[ "$verdict" = ok ] || bad=$((bad + 1))
		case "$fired" in '' | 0 | no | '?') ;; *) fired_total=$((fired_total + 1)) ;; esac
	done
done
echo "fault-sweep: $total (shape, site) runs over $(echo "$SITES" | wc -w) sites, $fired_total with the fault fired, $bad failed"
[ "$bad" -eq 0 ]
