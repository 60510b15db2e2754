#!/usr/bin/env bash
# ci/cli-check.sh - every program we build for people and every ci/*.sh
# script keeps one command-line convention: `--help` prints a usage text on
# stdout with exit 0 and nothing on stderr; bad usage (an unknown option)
# is exactly one line on stderr and exit 2.  For a program with
# subcommands, `PROG CMD --help` and `PROG CMD --no-such-option` too.
#
#   ci/cli-check.sh --build DIR [--programs-only] [--help]
#
# --programs-only: the programs of DIR, not the scripts (bash, the same
# whatever DIR was built with: ci/test.sh checks them once, in the asan
# preset, and only the programs in the other presets).
#
# The programs come from DIR/kmgr-programs.txt, which CMake writes: every
# target linked through kmgr_executable() that is not a test or a fuzz
# target (their command line is the fuzzing engine's), with the
# subcommands given in its KMGR_SUBCOMMANDS property; so a new tool is
# checked without an edit here.  The scripts are every ci/*.sh, ci/bench/*.sh
# and ci/nightly/*.sh.  A script
# whose text never mentions --help is reported without being run (run with
# --help it might start its whole job).
# Exit status: 0 all follow the convention, 1 some do not, 2 bad usage.
set -uo pipefail
. "$(dirname "$0")/lib/usage.sh"
root=$(cd "$(dirname "$0")/.." && pwd)
build="" programs_only=0

usage() { kmgr_usage; }
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	--programs-only) programs_only=1; shift ;;
	--build)
		[ $# -ge 2 ] && [ -n "$2" ] || { echo "cli-check: --build needs a value" >&2; exit 2; }
		build=$2
		shift 2
		;;
	*) echo "cli-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ -n "$build" ] || { echo "cli-check: give --build DIR (see --help)" >&2; exit 2; }
list="$build/kmgr-programs.txt"
[ -f "$list" ] || { echo "cli-check: no $list (configure DIR with CMake first)" >&2; exit 2; }

tmp=$(mktemp -d /tmp/cli-check.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
bad=0 checked=0

fail() {
	echo "cli-check: FAIL: $*"
	bad=1
}

# run_case SECONDS STDOUT CMD...: one invocation, counted, in $tmp with
# stdin from /dev/null, stdout to STDOUT, stderr to $tmp/err, killed after
# SECONDS; its status in rc (124: still running)
run_case() {
	local secs=$1 out=$2
	shift 2
	(cd "$tmp" && timeout "$secs" "$@" </dev/null >"$out" 2>"$tmp/err")
	rc=$?
	checked=$((checked + 1))
}

# expect_help WHAT NAME CMD...: exit 0, a usage text on stdout (it says
# "usage" or names the program), stderr empty
expect_help() {
	local what=$1 name=$2
	shift 2
	run_case 60 "$tmp/out" "$@"
	[ $rc -eq 0 ] || { fail "$what --help: exit $rc, want 0"; return; }
	grep -qi -e usage -e "$name" "$tmp/out" || fail "$what --help: no usage text on stdout"
	[ -s "$tmp/err" ] && fail "$what --help: wrote to stderr: $(head -c 200 "$tmp/err")"
}

# expect_bad WHAT CMD...: exit 2, exactly one line on stderr
expect_bad() {
	local what=$1
	shift
	run_case 60 "$tmp/out" "$@"
	[ $rc -eq 2 ] || { fail "$what: exit $rc, want 2"; return; }
	[ "$(wc -l <"$tmp/err")" -eq 1 ] ||
		fail "$what: $(wc -l <"$tmp/err") lines on stderr, want 1: $(head -c 300 "$tmp/err")"
}

while read -r name path subs; do
	[ -n "$name" ] || continue
	[ -x "$path" ] || { fail "$name: $path is not built"; continue; }
	expect_help "$name" "$(basename "$path")" "$path" --help
	expect_bad "$name --no-such-option" "$path" --no-such-option
	for cmd in ${subs//,/ }; do
		expect_help "$name $cmd" "$(basename "$path")" "$path" "$cmd" --help
		expect_bad "$name $cmd --no-such-option" "$path" "$cmd" --no-such-option
	done
done <"$list"

scripts=("$root"/ci/*.sh "$root"/ci/bench/*.sh "$root"/ci/nightly/*.sh)
[ "$programs_only" = 0 ] || scripts=()
for script in "${scripts[@]}"; do
	name=ci/${script#"$root"/ci/}
	if ! grep -q -- '--help' "$script"; then
		fail "$name: does not handle --help (not run)"
		continue
	fi
	expect_help "$name" "$(basename "$script")" bash "$script" --help
	case "$name" in
	ci/afl-cc.sh | ci/afl-cc-cmplog.sh)
		# a compiler wrapper: every option is the compiler's; no argument
		# at all is its bad usage
		expect_bad "$name (no arguments)" bash "$script"
		;;
	*) expect_bad "$name --no-such-option" bash "$script" --no-such-option ;;
	esac
done

# A FIFO as an input is refused at once (opening it would wait for a
# writer), one line, a non-zero exit, within a second.
mkfifo "$tmp/fifo"
expect_refused() {
	local what=$1
	shift
	run_case 1 "$tmp/out" "$@"
	[ $rc -ne 124 ] || { fail "$what: still waiting after 1 s"; return; }
	[ $rc -ne 0 ] || { fail "$what: exit 0"; return; }
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$what: $(wc -l <"$tmp/err") lines on stderr, want 1"
}
bin_of() { awk -v n="$1" '$1 == n {print $2}' "$list"; }
expect_refused "kprog print FIFO" "$(bin_of kprog-tool)" print "$tmp/fifo"
expect_refused "kmgr-model show FIFO" "$(bin_of kmgr-model)" show "$tmp/fifo"
expect_refused "kmgr-repro show FIFO" "$(bin_of kmgr-repro)" show "$tmp/fifo" --target api_seq
expect_refused "stress_refdrain --replay FIFO" "$(bin_of stress_refdrain)" --replay "$tmp/fifo"
expect_refused "run_model FIFO" "$(bin_of run_model)" "$tmp/fifo"

# A full disk under a command that writes its result to stdout is an
# error (exit non-zero, one line), not an empty file and exit 0.
expect_full() {
	local what=$1
	shift
	run_case 60 /dev/full "$@"
	[ $rc -ne 0 ] || { fail "$what > /dev/full: exit 0"; return; }
	grep -q "standard output failed" "$tmp/err" || fail "$what > /dev/full: $(head -c 200 "$tmp/err")"
}
seed=$(find "$root/corpus/api_seq" -type f -size +0 | sort | head -n 1)
expect_full "kprog print" "$(bin_of kprog-tool)" print "$seed"
"$(bin_of kmgr-model)" create -o "$tmp/m.bin" --name m --input a:u8:16 --output y:u8:16 >/dev/null
expect_full "kmgr-model show" "$(bin_of kmgr-model)" show "$tmp/m.bin"
expect_full "kmgr-repro triage --json" "$(bin_of kmgr-repro)" triage "$root/corpus/regressions/api_seq" --json
expect_full "stress_refdrain (its summary)" "$(bin_of stress_refdrain)" --seconds 1 --threads 1 --seed 1 \
	--quiet --repro-dir "$tmp"

# kprog run's --repeat is a count; kprog parse never writes over its TEXT;
# --controlled takes no value but 0 or 1.
seed_text=$(find "$root/corpus/text/api_seq" -name '*.txt' | sort | head -n 1)
cp "$seed_text" "$tmp/same.txt"
expect_bad "kprog run --repeat 3x" "$(bin_of kprog-tool)" run "$seed_text" --text --repeat 3x
expect_bad "kprog run --repeat -1" "$(bin_of kprog-tool)" run "$seed_text" --text --repeat -1
expect_bad "kprog parse TEXT TEXT" "$(bin_of kprog-tool)" parse "$tmp/same.txt" "$tmp/same.txt"
cmp -s "$seed_text" "$tmp/same.txt" || fail "kprog parse TEXT TEXT: the text was replaced"
expect_bad "stress_refdrain --controlled=garbage" "$(bin_of stress_refdrain)" --controlled=garbage

# A read that fails says why: /proc/self/mem is a regular file whose
# first read fails (EIO), which must not pass for an empty or odd file.
expect_reason() {
	local what=$1 why=$2
	shift 2
	run_case 60 "$tmp/out" "$@"
	[ $rc -ne 0 ] || { fail "$what: exit 0"; return; }
	grep -q "$why" "$tmp/err" || fail "$what: no '$why': $(head -c 300 "$tmp/err")"
}
expect_reason "kmgr-repro show (a read error)" "Input/output error" \
	"$(bin_of kmgr-repro)" show /proc/self/mem --target api_seq
expect_reason "stress_refdrain --replay (a read error)" "Input/output error" \
	"$(bin_of stress_refdrain)" --replay /proc/self/mem

# The replay mains (release and coverage builds): --help, options, FIFOs,
# and a file that cannot be read.
if grep -q '^KMGR_FUZZ_ENGINE:[A-Z]*=replay$' "$build/CMakeCache.txt" 2>/dev/null; then
	expect_help "fuzz/api_seq (replay)" api_seq "$build/fuzz/api_seq" --help
	expect_bad "fuzz/api_seq --no-such-option" "$build/fuzz/api_seq" --no-such-option
	expect_refused "fuzz/api_seq FIFO" "$build/fuzz/api_seq" "$tmp/fifo"
	expect_reason "fuzz/api_seq (a read error)" "Input/output error" \
		"$build/fuzz/api_seq" /proc/self/mem
	expect_reason "fuzz/api_seq (no such file)" "No such file or directory" \
		"$build/fuzz/api_seq" "$tmp/no-such-file"
fi

# Numbers are decimal: 0x10 is refused, 010 is ten (base 0 read 16 and 8).
expect_bad "stress_refdrain --seconds 0x10" "$(bin_of stress_refdrain)" --seconds 0x10
run_case 60 "$tmp/out" "$(bin_of stress_refdrain)" --ops 010 --threads 1 --seconds 5 --seed 1 \
	--repro-dir "$tmp"
grep -q -- '--ops 10 ' "$tmp/out" "$tmp/err" ||
	fail "stress_refdrain --ops 010: not ten: $(grep -ho -- '--ops [0-9]*' "$tmp/out" "$tmp/err" | head -1)"

# Values refused before any work starts (a build, a run), one line each.
if [ "$programs_only" = 0 ]; then
	expect_bad "ci/fuzz.sh --json ''" bash "$root/ci/fuzz.sh" --json ''
	expect_bad "ci/fuzz.sh --json DIR" bash "$root/ci/fuzz.sh" --json "$tmp"
	expect_bad "ci/fuzz.sh --targets regressions" bash "$root/ci/fuzz.sh" --targets regressions
	expect_bad "ci/nightly.sh --keep x" bash "$root/ci/nightly.sh" --keep x
	expect_bad "ci/fault-sweep.sh --sites ," bash "$root/ci/fault-sweep.sh" --build "$build" --sites ,
	expect_bad "ci/fault-sweep.sh --shapes ," bash "$root/ci/fault-sweep.sh" --build "$build" --shapes ,
	expect_bad "ci/afl.sh --targets regressions" bash "$root/ci/afl.sh" --targets regressions
	expect_bad "ci/afl.sh --targets ," bash "$root/ci/afl.sh" --targets ,
	expect_bad "ci/afl.sh --seconds 5" bash "$root/ci/afl.sh" --seconds 5
	expect_bad "ci/afl.sh --seconds x" bash "$root/ci/afl.sh" --seconds x
	expect_bad "ci/afl.sh --jobs 100000" bash "$root/ci/afl.sh" --jobs 100000
	expect_bad "ci/fuzz.sh --jobs 100000" bash "$root/ci/fuzz.sh" --jobs 100000
	expect_bad "ci/fuzz.sh --targets ," bash "$root/ci/fuzz.sh" --targets ,
	expect_bad "ci/fuzz.sh --seconds 1" bash "$root/ci/fuzz.sh" --seconds 1
fi
# a repro file carries run parameters only: one naming an output path is
# refused (replaying it would write where its author chose)
printf 'binary stress_refdrain\nseconds 1\njson %s/victim\n' "$tmp" >"$tmp/path.repro"
echo keep >"$tmp/victim"
expect_bad "stress_refdrain --replay (a json line)" "$(bin_of stress_refdrain)" --replay "$tmp/path.repro"
[ "$(cat "$tmp/victim")" = keep ] || fail "stress_refdrain --replay (a json line): the file was written"
# an output that is a folder, or the input itself, is refused before the work
cp "$seed" "$tmp/crash-in"
expect_bad "kmgr-repro emit-c FILE -o FILE" "$(bin_of kmgr-repro)" emit-c "$tmp/crash-in" -o "$tmp/crash-in" --target api_seq
cmp -s "$seed" "$tmp/crash-in" || fail "kmgr-repro emit-c FILE -o FILE: the input was changed"
expect_bad "kmgr-repro minimize FILE -o DIR" "$(bin_of kmgr-repro)" minimize "$tmp/crash-in" -o "$tmp" --target api_seq

# ---- issue 38's leftovers: one rule each for plans, numbers, flags and outputs
stress_bin=$(bin_of stress_refdrain)
model_bin=$(bin_of kmgr-model)
kprog_bin=$(bin_of kprog-tool)
repro_bin=$(bin_of kmgr-repro)
# expect_early WHAT CMD...: refused (non-zero, one line) within 10 s by a
# command that would otherwise work 30 s or more: checked before the work.
# Killed 5 s after its SIGTERM: interrupted, a run writes its partial
# summary, and to a FIFO without a reader that open never returned.
expect_early() {
	local what=$1
	shift
	(cd "$tmp" && timeout -k 5 10 "$@" </dev/null >"$tmp/out" 2>"$tmp/err")
	rc=$?
	checked=$((checked + 1))
	[ $rc -ne 124 ] && [ $rc -ne 137 ] ||
		{ fail "$what: still running after 10 s (not refused before the work)"; return; }
	[ $rc -ne 0 ] || { fail "$what: exit 0"; return; }
	[ "$(wc -l <"$tmp/err")" -eq 1 ] ||
		fail "$what: $(wc -l <"$tmp/err") lines on stderr, want 1: $(head -c 300 "$tmp/err")"
}
# A fault plan is taken whole or refused, from KMGR_FAULT as from --fault:
# seven entries, 265 characters (a 256-byte buffer cut the last one).
e='alloc:emu.host_tensor_data:100000000'
plan="${e}1,${e}2,${e}3,${e}4,${e}5,${e}6,${e}7"
run_case 60 "$tmp/out" env KMGR_FAULT="$plan" "$stress_bin" --ops 50 --threads 1 --quiet \
	--json "$tmp/plan.json" --repro-dir "$tmp"
grep -qF "\"fault\": \"$plan\"" "$tmp/plan.json" 2>/dev/null ||
	fail "KMGR_FAULT (265 characters): the run's plan is not the one given: $(grep -o '"fault": "[^"]*"' "$tmp/plan.json" 2>/dev/null | tail -c 60)"
long="$plan,$plan,$plan"
run_case 60 "$tmp/out" env KMGR_FAULT="$long" "$stress_bin" --ops 50 --threads 1 --quiet --repro-dir "$tmp"
env_rc=$rc
expect_bad "stress_refdrain --fault (795 characters)" "$stress_bin" --ops 50 --fault "$long"
[ $env_rc -eq 2 ] || fail "KMGR_FAULT (795 characters): exit $env_rc, want 2 as --fault"
# --json: an output that cannot be written is refused before the run
expect_early "stress_refdrain --json DIR" "$stress_bin" --seconds 30 --json "$tmp"
expect_early "stress_refdrain --json ''" "$stress_bin" --seconds 30 --json ''
# FIFOs without a reader as outputs: refused before the work, never waited on
rm -f "$tmp/ofifo" && mkfifo "$tmp/ofifo"
cp "$seed" "$tmp/crash-38"
expect_early "stress_refdrain --json FIFO" "$stress_bin" --seconds 30 --json "$tmp/ofifo"
expect_early "kmgr-repro emit-c -o FIFO" "$repro_bin" emit-c "$tmp/crash-38" -o "$tmp/ofifo" --target api_seq
expect_early "kmgr-repro minimize -o FIFO" "$repro_bin" minimize "$tmp/crash-38" -o "$tmp/ofifo" --target api_seq
expect_early "kmgr-model create -o FIFO" "$model_bin" create -o "$tmp/ofifo" --name m --input a:u8:16 --output y:u8:16
# ... and with a reader it is written
# (the reader is there before the run: an O_RDWR open of a FIFO never
# blocks and counts as a reader, so the check does not race a background
# cat still starting, as it did under CI's release preset)
exec 7<>"$tmp/ofifo"
timeout 30 cat <&7 >"$tmp/fifo.out" &
reader=$!
run_case 30 "$tmp/out" "$stress_bin" --ops 20 --threads 1 --quiet --json "$tmp/ofifo" --repro-dir "$tmp"
sleep 0.5
kill "$reader" 2>/dev/null || true
wait "$reader" 2>/dev/null || true
exec 7<&-
grep -q '"binary": "stress_refdrain"' "$tmp/fifo.out" || fail "stress_refdrain --json FIFO (a reader): exit $rc, nothing read"
# a symbolic link to nothing is refused and stays a link
ln -s "$tmp/nowhere" "$tmp/dangling"
expect_bad "kmgr-model create -o DANGLING-LINK" "$model_bin" create -o "$tmp/dangling" --name m --input a:u8:16 --output y:u8:16
[ -L "$tmp/dangling" ] && [ ! -e "$tmp/nowhere" ] || fail "kmgr-model create -o DANGLING-LINK: the link was replaced or followed"
# One number rule: the variables refuse " 4" and "+4" as the flags do.
for v in 'KMGR_EMU_NC_COUNT= 4' 'KMGR_EMU_NC_COUNT=+4' 'NEURON_RT_VISIBLE_CORES= 1' 'NEURON_RT_VISIBLE_CORES=+1'; do
	run_case 60 "$tmp/out" env "$v" "$stress_bin" --ops 20 --threads 1 --quiet --repro-dir "$tmp"
	[ $rc -ne 0 ] || fail "$v: accepted"
done
for v in 'KMGR_EMU_NC_COUNT=04' 'NEURON_RT_VISIBLE_CORES=01'; do
	run_case 60 "$tmp/out" env "$v" "$stress_bin" --ops 20 --threads 1 --quiet --repro-dir "$tmp"
	[ $rc -eq 0 ] || fail "$v: refused: $(head -c 200 "$tmp/err")"
done
expect_bad "stress_refdrain --ops +5" "$stress_bin" --ops +5
expect_bad "stress_refdrain --ops ' 5'" "$stress_bin" --ops ' 5'
expect_bad "kprog run --repeat +3" "$kprog_bin" run "$seed_text" --text --repeat +3
expect_bad "kmgr-repro replay --times +2" "$repro_bin" replay "$tmp/crash-38" --times +2 --target api_seq
expect_bad "kmgr-model create --cores +2" "$model_bin" create -o "$tmp/m2.bin" --cores +2 --name m --input a:u8:16 --output y:u8:16
run_case 60 "$tmp/out" env 'KMGR_FAULT=alloc:+100:1' "$stress_bin" --ops 20 --threads 1 --quiet --repro-dir "$tmp"
[ $rc -eq 2 ] || fail "KMGR_FAULT=alloc:+100:1: exit $rc, want 2"
# Bad files and flags are bad usage (2) in kprog as in every tool; a flag
# takes no value but 0 or 1; a long option's error names it.
expect_bad "kprog print DIR" "$kprog_bin" print "$tmp"
expect_bad "kprog print NO-SUCH-FILE" "$kprog_bin" print "$tmp/no-such-file"
printf 'no program here\n' >"$tmp/bad.txt"
expect_bad "kprog parse BAD-TEXT" "$kprog_bin" parse "$tmp/bad.txt" "$tmp/bad.bin"
expect_bad "stress_refdrain --quiet=2" "$stress_bin" --quiet=2
run_case 60 "$tmp/out" "$stress_bin" --ops 20 --threads 1 --quiet=0 --repro-dir "$tmp"
[ "$(wc -l <"$tmp/out")" -gt 1 ] || fail "stress_refdrain --quiet=0: quiet (only the last line)"
expect_bad "kmgr-model create --cc=1" "$model_bin" create --cc=1 -o "$tmp/m3.bin"
grep -q -- "--cc=1" "$tmp/err" || fail "kmgr-model create --cc=1: does not name the option: $(cat "$tmp/err")"
# stress --replay of a binary file: one short line, no raw bytes echoed
head -c 65536 /dev/urandom | tr -d '\000\n ' >"$tmp/binary.repro"
run_case 60 "$tmp/out" "$stress_bin" --replay "$tmp/binary.repro"
[ $rc -eq 2 ] && [ "$(wc -c <"$tmp/err")" -lt 300 ] ||
	fail "stress_refdrain --replay BINARY: exit $rc, $(wc -c <"$tmp/err") bytes on stderr"
# A file the user may write in a folder they may not (0666 in 0555) is
# written, as the shell's > writes it (as an unprivileged user: root may
# write anywhere).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	mkdir -p "$tmp/ro" && echo old >"$tmp/ro/f" && chmod 0666 "$tmp/ro/f" && chmod 0555 "$tmp/ro"
	chmod 0755 "$tmp"
	run_case 60 "$tmp/out" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$model_bin" create -o "$tmp/ro/f" --name m --input a:u8:16 --output y:u8:16
	[ $rc -eq 0 ] && ! grep -qx old "$tmp/ro/f" ||
		fail "kmgr-model create -o FILE-0666-IN-DIR-0555 (as nobody): exit $rc: $(head -c 200 "$tmp/err")"
	chmod 0755 "$tmp/ro"
	chmod 0700 "$tmp"
fi
# The replay mains read no more than 16 MiB of one input.
if grep -q '^KMGR_FUZZ_ENGINE:[A-Z]*=replay$' "$build/CMakeCache.txt" 2>/dev/null; then
	truncate -s 1G "$tmp/huge"
	expect_early "fuzz/api_seq (a 1 GiB input)" "$build/fuzz/api_seq" "$tmp/huge"
	rm -f "$tmp/huge"
fi

if [ $bad -eq 0 ]; then
	echo "cli-check: $checked invocations follow the convention"
fi
exit $bad
