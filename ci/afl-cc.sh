#!/bin/sh
# The afl preset's C compiler: afl-clang-lto where it works, else afl-clang-fast.
# AFL++ needs its own instrumentation pass; this wrapper picks the best one
# installed so that the preset needs no edit from machine to machine.
# Only the code the libFuzzer builds instrument gets edges (the allowlist
# says why); KMGR_AFL_CMPLOG=1 builds the CmpLog binary of ci/afl.sh.
here=$(cd "$(dirname "$0")" && pwd)
export AFL_LLVM_ALLOWLIST="${AFL_LLVM_ALLOWLIST:-$here/../fuzz/afl-allowlist.txt}"
[ -z "${KMGR_AFL_CMPLOG:-}" ] || export AFL_LLVM_CMPLOG=1
#   usage: ci/afl-cc.sh COMPILER-ARGUMENTS...   (every argument is the compiler's)
case "${1:-}" in
--help) sed -n '2,6p;10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
"") echo "afl-cc.sh: no arguments: give the C compiler's (see --help)" >&2; exit 2 ;;
esac
if command -v afl-clang-lto >/dev/null 2>&1 && [ -z "${KMGR_AFL_NO_LTO:-}" ]; then
	exec afl-clang-lto "$@"
fi
exec afl-clang-fast "$@"
