#!/bin/sh
# The afl preset's C compiler: afl-clang-lto where it works, else afl-clang-fast.
# AFL++ needs its own instrumentation pass; this wrapper picks the best one
# installed so that the preset needs no edit from machine to machine.
if command -v afl-clang-lto >/dev/null 2>&1 && [ -z "${KMGR_AFL_NO_LTO:-}" ]; then
	exec afl-clang-lto "$@"
fi
exec afl-clang-fast "$@"
