#!/usr/bin/env bash
# ci/mutant-controls.sh [--preset P] [--only NAME[,NAME...]] [--jobs N] [--keep] [--check] [--help]
#
# The mutants as negative controls: every mutants/*.patch must turn its
# tests (mutants/CONTROLS) red.  In a copy of this tree (never in the
# checkout itself) the script configures one build of the preset (asan by
# default; ccache is used when it is installed), builds what the named tests
# run and checks they are green on the correct tree, then for each patch:
# applies it, rebuilds those executables, runs the tests, and reverts it.
# It prints one row per (patch, test) and fails when a test stays green, a
# patch does not apply or build, a test is red on the correct tree, or
# CONTROLS and mutants/ disagree.  Runs from a fresh clone; ci/nightly.sh
# runs it, ci/test.sh runs it when KMGR_MUTANT_CONTROLS=1.
#
#   --preset P    configure preset (default asan)
#   --only LIST   only these patches (names without .patch)
#   --jobs N      build parallelism (default $KMGR_JOBS or 2)
#   --keep        keep the temporary tree and print where it is
#   --check       no build: only that CONTROLS and mutants/ agree and that
#                 every patch still applies to this tree (ctest
#                 mutant_patches_apply: a change to lib/ that moves a
#                 patch's context is caught the day it lands, not at night)
#
# Exit status: 0 every test red on its mutant, 1 a control failed, 2 usage.
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
. "$(dirname "$0")/lib/tree.sh"

usage() { kmgr_usage; }
die_usage() {
	echo "mutant-controls: $*" >&2
	exit 2
}

src=$(cd "$(dirname "$0")/.." && pwd)
preset=asan only="" jobs=${KMGR_JOBS:-2} keep=0 check=0
while [ $# -gt 0 ]; do
	case $1 in
	--preset | --only | --jobs) [ $# -ge 2 ] || die_usage "$1 needs a value" ;;&
	--preset) preset=$2; shift ;;
	--only) only=$2; shift ;;
	--jobs) jobs=$2; shift ;;
	--keep) keep=1 ;;
	--check) check=1 ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die_usage "unknown argument '$1' (see --help)" ;;
	esac
	shift
done
case $jobs in '' | *[!0-9]*) die_usage "--jobs wants a number, not '$jobs'" ;; esac

controls=$src/mutants/CONTROLS
[ -f "$controls" ] || die_usage "no $controls"

# ---- the table, checked against mutants/ ----------------------------------
declare -A tests_of=()
declare -A why_none=()
order=()
bad=0
while read -r name tests rest; do
	case $name in '' | '#'*) continue ;; esac
	if [ "$tests" = - ] && [ -n "$rest" ] && [ -f "$src/mutants/$name.patch" ]; then
		why_none[$name]=$rest # no ctest can catch it: said why, reported, skipped
		tests_of[$name]=-
		continue
	fi
	if [ -z "$tests" ] || [ -n "$rest" ]; then
		echo "mutant-controls: CONTROLS: '$name' wants exactly one comma-separated test list" >&2
		bad=1
		continue
	fi
	if [ ! -f "$src/mutants/$name.patch" ]; then
		echo "mutant-controls: CONTROLS names $name, but there is no mutants/$name.patch" >&2
		bad=1
		continue
	fi
	tests_of[$name]=$tests
	order+=("$name")
done <"$controls"
for p in "$src"/mutants/*.patch; do
	n=$(basename "$p" .patch)
	if [ -z "${tests_of[$n]:-}" ]; then
		echo "mutant-controls: mutants/$n.patch has no line in mutants/CONTROLS" >&2
		bad=1
	fi
done
[ $bad -eq 0 ] || exit 1
if [ $check = 1 ]; then
	for p in "$src"/mutants/*.patch; do
		if ! (cd "$src" && patch -p1 -s -f --dry-run <"$p" >/dev/null 2>&1); then
			echo "mutant-controls: mutants/$(basename "$p") does not apply to this tree" >&2
			bad=1
		fi
	done
	[ $bad -eq 0 ] || exit 1
	echo "mutant-controls: ${#tests_of[@]} patches apply, CONTROLS and mutants/ agree"
	exit 0
fi
if [ -n "$only" ]; then
	sel=()
	for n in ${only//,/ }; do
		[ -n "${tests_of[$n]:-}" ] || die_usage "--only: no mutant '$n' in mutants/CONTROLS"
		sel+=("$n")
	done
	order=("${sel[@]}")
fi
rows=()
runnable=()
for n in "${order[@]}"; do
	if [ -n "${why_none[$n]:-}" ]; then
		rows+=("$n|-|no ctest control|-|${why_none[$n]}")
	else
		runnable+=("$n")
	fi
done
order=("${runnable[@]}")
print_table() {
	echo
	printf '| %-26s | %-44s | %-18s | %-22s | %s\n' mutant test result time "what says so"
	printf '|%s|%s|%s|%s|%s\n' "$(printf -- '-%.0s' {1..28})" "$(printf -- '-%.0s' {1..46})" \
		"$(printf -- '-%.0s' {1..20})" "$(printf -- '-%.0s' {1..24})" "------"
	for r in "${rows[@]}"; do
		IFS='|' read -r a b c d e <<<"$r"
		printf '| %-26s | %-44s | %-18s | %-22s | %s\n' "$a" "$b" "$c" "$d" "${e:-}"
	done
}
if [ ${#order[@]} -eq 0 ]; then
	print_table
	exit 0
fi

# ---- a copy of the tree and one build of the preset ------------------------
tmp=$(mktemp -d /tmp/mutant-controls.XXXXXX)
cleanup() {
	if [ $keep = 1 ]; then echo "mutant-controls: kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
tree=$tmp/tree
build=$tree/build/$preset
kmgr_tree_copy "$src" "$tree"
launcher=()
if command -v ccache >/dev/null 2>&1; then
	launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
	# hits across runs in different temp dirs (and with a checkout's own build)
	export CCACHE_BASEDIR=$tree CCACHE_NOHASHDIR=1
fi
start=$(date +%s)
stamp() { echo "=== [$(($(date +%s) - start))s] $*"; }
stamp "configure $preset in $tree"
cmake --preset "$preset" -S "$tree" "${launcher[@]}" >"$tmp/configure.log" 2>&1 ||
	{
		tail -20 "$tmp/configure.log" >&2
		exit 1
	}

# The executables a test runs: the words of its command that live in the
# build tree (the test binary, or the binaries a script test is handed),
# read from the generated CTestTestfile.cmake (ctest -N cannot name what is
# not built yet).
outputs_of() {
	find "$build" -name CTestTestfile.cmake -exec grep -h -F "add_test([=[$1]=] " {} + |
		head -1 | grep -oE '"[^"]*"' | tr -d '"' | sed -n "s|^$build/||p"
}
declare -A outs_of=()
all_tests=()
for n in "${order[@]}"; do
	for t in ${tests_of[$n]//,/ }; do
		[ -z "${outs_of[$t]:-}" ] || continue
		o=$(outputs_of "$t" | tr '\n' ' ')
		if [ -z "$o" ]; then
			echo "mutant-controls: CONTROLS: $n names '$t', which is no ctest of the $preset preset" >&2
			exit 1
		fi
		outs_of[$t]=$o
		all_tests+=("$t")
	done
done

build_for() { # build_for TEST... : the executables those tests run
	local o=() t
	for t in "$@"; do
		# shellcheck disable=SC2206
		o+=(${outs_of[$t]})
	done
	ninja -C "$build" -j "$jobs" "${o[@]}" >"$tmp/build.log" 2>&1
}
run_test() { # run_test TEST: 0 green, 1 red; the test's output in $tmp/last.log
	ctest --test-dir "$build" -R "^$1\$" --output-on-failure >"$tmp/last.log" 2>&1
}

stamp "build what ${#all_tests[@]} tests run (correct tree)"
build_for "${all_tests[@]}" || {
	tail -20 "$tmp/build.log" >&2
	exit 1
}
stamp "the tests must be green on the correct tree"
for t in "${all_tests[@]}"; do
	if ! run_test "$t"; then
		echo "mutant-controls: $t is red on the correct tree; it controls nothing" >&2
		tail -20 "$tmp/last.log" >&2
		exit 1
	fi
done

# ---- each mutant ------------------------------------------------------------
failed=0
for n in "${order[@]}"; do
	patch=$src/mutants/$n.patch
	t0=$(date +%s)
	if ! (cd "$tree" && patch -p1 -s --dry-run <"$patch" >/dev/null); then
		rows+=("$n|-|DOES NOT APPLY|0")
		failed=1
		continue
	fi
	kmgr_apply_mutant "$tree" "$patch"
	# shellcheck disable=SC2086
	if ! build_for ${tests_of[$n]//,/ }; then
		rows+=("$n|-|DOES NOT BUILD|$(($(date +%s) - t0))")
		tail -20 "$tmp/build.log" >&2
		failed=1
	else
		tb=$(($(date +%s) - t0))
		for t in ${tests_of[$n]//,/ }; do
			t1=$(date +%s)
			if run_test "$t"; then
				verdict="GREEN (not caught)"
				failed=1
			else
				verdict=red
			fi
			# the first line that says why: a sanitizer, the oracle, the
			# scheduler, a ktest assertion (file.c:N: what), a timeout
			why=$(grep -m1 -oE 'AddressSanitizer: [a-z-]+|LeakSanitizer: [a-z ]+|runtime error|ORACLE[: ][A-Za-z -]+|KSCHED [A-Z]+|CHECK FAILED|[A-Za-z0-9_]+\.c:[0-9]+: [^"]{1,48}|Timeout' "$tmp/last.log" | head -1 || true)
			[ "$verdict" = red ] || why="the test passed"
			rows+=("$n|$t|$verdict|build ${tb}s, test $(($(date +%s) - t1))s|${why:-exit != 0}")
		done
	fi
	(cd "$tree" && patch -p1 -s -R <"$patch")
	stamp "$n done"
done

print_table
stamp "total"
if [ $failed -ne 0 ]; then
	echo "mutant-controls: FAILED: a mutant was not caught by its tests (see the table)"
	exit 1
fi
echo "mutant-controls: every mutant turned its tests red (${#order[@]} patches; ${#why_none[@]} without a ctest control, said why)"
