#!/usr/bin/env bash
# emitc_escape.sh - `kmgr-repro emit-c` writes C that compiles whatever the
# input path and --name hold: a path with "*/", "/*", "??/" and a quote, and
# a name with a quote, a backslash, a trigraph, comment delimiters and a
# newline.  The emitted test is compiled with the project's warnings as
# errors outside the source tree, as whoever gets it would: only a copy of
# the public headers (lib/include/nrt, what an install puts in include/)
# on the include path, linked against the build's libnrt.a, and run: it
# must print PASS under the exact name given.
# usage: emitc_escape.sh KMGR_REPRO SRC_DIR SCRATCH NRT_LIB CC [CFLAG...]
set -euo pipefail

if [ $# -lt 5 ]; then
	echo "usage: emitc_escape.sh KMGR_REPRO SRC_DIR SCRATCH NRT_LIB CC [CFLAG...]" >&2
	exit 2
fi
tool=$1 src=$2 scratch=$3 lib=$4 cc=$5
shift 5

rm -rf "$scratch"
mkdir -p "$scratch/include"
cp -r "$src/lib/include/nrt" "$scratch/include/"
dir="$scratch/x*/*y/z??/q\""
mkdir -p "$dir"
in="$dir/p\\r*"
cp "$src/corpus/regressions/concurrent/fuzz-1-exec-without-ref" "$in"
name=$'n"a\\m??/e*/ /*x\tend\nline2'

fail() {
	echo "emitc_escape: $*" >&2
	exit 1
}

"$tool" emit-c "$in" --target concurrent --name "$name" -o "$scratch/out.c" >/dev/null ||
	fail "emit-c failed"
"$cc" "$@" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-I"$scratch/include" "$scratch/out.c" "$lib" -lpthread -o "$scratch/out" ||
	fail "the emitted C does not compile: $scratch/out.c"
out=$("$scratch/out") || fail "the emitted test failed on the correct library"
case "$out" in
"$name: PASS"*) ;;
*) fail "the test does not print its name: $out" ;;
esac
echo "emitc_escape: compiled and ran under the name given"
