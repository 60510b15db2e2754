#!/usr/bin/env bash
# ci/cli-check.sh - every program we build for people and every ci/*.sh
# script keeps one command-line convention: `--help` prints a usage text on
# stdout with exit 0 and nothing on stderr; bad usage (an unknown option)
# is exactly one line on stderr and exit 2.  For a program with
# subcommands, `PROG CMD --help` and `PROG CMD --no-such-option` too.
#
#   ci/cli-check.sh --build DIR [--help]
#
# The programs come from DIR/kmgr-programs.txt, which CMake writes: every
# target linked through kmgr_executable() that is not a test or a fuzz
# target (their command line is the fuzzing engine's), with the
# subcommands given in its KMGR_SUBCOMMANDS property; so a new tool is
# checked without an edit here.  The scripts are every ci/*.sh.  A script
# whose text never mentions --help is reported without being run (run with
# --help it might start its whole job).
# Exit status: 0 all follow the convention, 1 some do not, 2 bad usage.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=""

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
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

# expect_help WHAT NAME CMD...: exit 0, a usage text on stdout (it says
# "usage" or names the program), stderr empty
expect_help() {
	local what=$1 name=$2 rc
	shift 2
	(cd "$tmp" && timeout 60 "$@" </dev/null >"$tmp/out" 2>"$tmp/err")
	rc=$?
	checked=$((checked + 1))
	[ $rc -eq 0 ] || { fail "$what --help: exit $rc, want 0"; return; }
	grep -qi -e usage -e "$name" "$tmp/out" || fail "$what --help: no usage text on stdout"
	[ -s "$tmp/err" ] && fail "$what --help: wrote to stderr: $(head -c 200 "$tmp/err")"
}

# expect_bad WHAT CMD...: exit 2, exactly one line on stderr
expect_bad() {
	local what=$1 rc
	shift
	(cd "$tmp" && timeout 60 "$@" </dev/null >"$tmp/out" 2>"$tmp/err")
	rc=$?
	checked=$((checked + 1))
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

for script in "$root"/ci/*.sh; do
	name=ci/$(basename "$script")
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

# Values refused before any work starts (a build, a run), one line each.
expect_bad "ci/fuzz.sh --json ''" bash "$root/ci/fuzz.sh" --json ''
expect_bad "ci/fuzz.sh --json DIR" bash "$root/ci/fuzz.sh" --json "$tmp"
expect_bad "ci/fuzz.sh --targets regressions" bash "$root/ci/fuzz.sh" --targets regressions
expect_bad "ci/nightly.sh --keep x" bash "$root/ci/nightly.sh" --keep x

if [ $bad -eq 0 ]; then
	echo "cli-check: $checked invocations follow the convention"
fi
exit $bad
