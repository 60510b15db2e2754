#!/usr/bin/env bash
# ci/pthread-eval.sh [--programs a,b] [--bug-seconds S] [--twin-seconds S] [--replays N]
#                    [--save DIR] [--build DIR] [--help]
# Does the controlled scheduler find the bug of each pthreads example
# (examples/pthread/, docs/pthread.md), and only the bug?  Builds the asan
# preset's pt_<p> and pt_<p>_twin (configuring build/asan if needed), then
# for each program, on one pinned CPU (taskset -c $KMGR_FUZZ_CPU, default 0):
#   1. fuzzes the bug build from an empty corpus until its first finding or
#      S seconds (--bug-seconds, default 600); the time to detect is net of
#      process start (libFuzzer's INITED line to the crash file's mtime);
#   2. replays the finding N times (--replays, default 10) and counts the
#      runs that fail with the finding's signature (KSCHED DEADLOCK, the
#      failed assertion, the ASan report kind);
#   3. runs the twin on the finding (it must pass), then fuzzes the twin
#      from an empty corpus for S seconds (--twin-seconds, default 60) and
#      counts its findings (there must be none).
# Prints one table: program, found, time to detect, signature, replays,
# twin on the finding, twin findings.  --programs: a subset (default: every
# KPT_EXAMPLES entry of examples/pthread/CMakeLists.txt).  --save DIR: copy
# each finding to DIR/<program>/ (corpus/pthread to commit it as the
# ctests' regression input).  --build DIR: an asan tree other than build/asan.
# Interrupted (INT, TERM, HUP): stops the fuzzer, prints the table so far
# marked "interrupted", removes its scratch folder, exits 128+signal.
# Exit status: 0 every bug found, replayed N/N, twin clean; 1 otherwise;
# 2 bad usage.
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
. "$(dirname "$0")/lib/signals.sh"
. "$(dirname "$0")/lib/pthread.sh"
kmgr_signals_reset "$0" "$@"
export LC_NUMERIC=C # $EPOCHREALTIME with a decimal point

root=$(cd "$(dirname "$0")/.." && pwd)
programs="" bug_s=600 twin_s=60 replays=10 save="" build=$root/build/asan
cpu=${KMGR_FUZZ_CPU:-0}
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) kmgr_usage; exit 0 ;;
	--programs | --bug-seconds | --twin-seconds | --replays | --save | --build)
		[ $# -ge 2 ] || kmgr_die "$1 needs a value"
		case "$1" in
		--programs) programs=$2 ;;
		--bug-seconds) bug_s=$2 ;;
		--twin-seconds) twin_s=$2 ;;
		--replays) replays=$2 ;;
		--save) save=$2 ;;
		--build) build=$2 ;;
		esac
		shift 2
		;;
	*) kmgr_die "unknown argument $1" ;;
	esac
done
for v in "$bug_s" "$twin_s" "$replays"; do
	[[ "$v" =~ ^[0-9]+$ ]] && [ "$v" -gt 0 ] || kmgr_die "seconds and replays are whole numbers > 0"
done
all=$(sed -nE 's/^set\(KPT_EXAMPLES (.*)\)$/\1/p' "$root/examples/pthread/CMakeLists.txt")
[ -n "$all" ] || { echo "pthread-eval: no set(KPT_EXAMPLES ...) in examples/pthread/CMakeLists.txt" >&2; exit 2; }
[ -n "$programs" ] || programs=${all// /,}
IFS=, read -r -a plist <<<"$programs"
[ ${#plist[@]} -gt 0 ] || kmgr_die "--programs: no program named"
for p in "${plist[@]}"; do
	[[ " $all " = *" $p "* ]] || kmgr_die "unknown program '$p' (programs: ${all// /,})"
done
if [ -n "$save" ]; then
	mkdir -p "$save" 2>/dev/null && [ -w "$save" ] || kmgr_die "--save $save: cannot write there"
	save=$(cd "$save" && pwd)
fi
command -v taskset >/dev/null 2>&1 || kmgr_die "taskset is missing (util-linux)"

KMGR_ROOT=$root
. "$root/ci/lib/toolchain.sh"
kmgr_toolchain pthread-eval
kmgr_configure pthread-eval "$build" --preset asan
tgts=()
for p in "${plist[@]}"; do tgts+=(--target "pt_$p" --target "pt_${p}_twin"); done
echo "== pthread-eval: building ${#tgts[@]} targets in $build" >&2
cmake --build "$build" -j2 "${tgts[@]}" >&2
. "$root/sanitizers/env.sh"

scratch=$(mktemp -d "${TMPDIR:-/tmp}/pthread-eval.XXXXXX")
table=$scratch/table
: >"$table"
print_table() {
	printf '%-12s %-5s %9s %-44s %7s %9s %12s\n' program found detect signature replays \
		"twin/crash" "twin ${twin_s}s"
	cat "$table"
}
interrupted_table() {
	echo
	echo "== pthread-eval: interrupted by SIG$interrupted; the results so far:"
	print_table
}
kmgr_pt_traps interrupted_table

ok=1
for p in "${plist[@]}"; do
	bin=$build/examples/pthread/pt_$p twin=$build/examples/pthread/pt_${p}_twin
	work=$scratch/$p
	echo "== pthread-eval: $p: fuzzing the bug for up to ${bug_s}s" >&2
	kmgr_pt_fuzz --stamp "$bin" "$bug_s" "$work/bug" -print_final_stats=1
	crash=$(ls -1 "$work/bug/art/" 2>/dev/null | head -1 || true)
	if [ -z "$crash" ]; then
		ok=0
		found=no ttd="-" sig="-" rep="-" twc="-"
	else
		found=yes
		t_init=$(awk '/INITED/ {print $1; exit}' "$work/bug/log")
		t_crash=$(find "$work/bug/art/$crash" -printf '%T@')
		if [ -n "$t_init" ]; then
			# a line is stamped when it is read, a little after it is
			# written: a finding within the first inputs can look earlier
			ttd=$(awk -v a="$t_init" -v b="$t_crash" 'BEGIN {d = b - a; printf "%.2fs", d < 0 ? 0 : d}')
		else
			ttd=seed # the empty input itself failed
		fi
		sig=$(kmgr_pt_signature "$work/bug/log")
		fails=0
		for i in $(seq "$replays"); do
			# the subshell keeps the shell's "Aborted" line in the replay's log
			(timeout -s KILL 60 taskset -c "$cpu" "$bin" "$work/bug/art/$crash") \
				>"$work/replay.$i.log" 2>&1 && continue
			[ "$(kmgr_pt_signature "$work/replay.$i.log")" = "$sig" ] && fails=$((fails + 1))
		done
		rep=$fails/$replays
		[ "$fails" = "$replays" ] || ok=0
		if (timeout -s KILL 60 taskset -c "$cpu" "$twin" "$work/bug/art/$crash") \
			>"$work/twin-replay.log" 2>&1; then
			twc=pass
		else
			twc=FAIL ok=0
		fi
		if [ -n "$save" ]; then
			mkdir -p "$save/$p"
			cp "$work/bug/art/$crash" "$save/$p/$crash"
		fi
	fi
	echo "== pthread-eval: $p: fuzzing the twin for ${twin_s}s" >&2
	kmgr_pt_fuzz --stamp "$twin" "$twin_s" "$work/twin" -print_final_stats=1
	tf=$(ls -1 "$work/twin/art/" 2>/dev/null | wc -l)
	[ "$tf" = 0 ] || ok=0
	[ "$tf" = 0 ] || tf="$tf ($(kmgr_pt_signature "$work/twin/log"))"
	printf '%-12s %-5s %9s %-44s %7s %9s %12s\n' "$p" "$found" "$ttd" "${sig:0:44}" "$rep" "$twc" \
		"$tf" >>"$table"
	tail -1 "$table" >&2
done
echo
print_table
[ -z "$save" ] || echo "pthread-eval: findings copied to $save/<program>/"
[ "$ok" = 1 ]
