#!/bin/sh
# ci/afl.sh's CmpLog build: ci/afl-cc.sh with AFL_LLVM_CMPLOG=1, as a
# compiler of its own so that CMake's compile and link steps (afl-clang-lto
# instruments at link time) both see it.
#   ci/afl-cc-cmplog.sh COMPILER-ARGUMENTS...   (--help and usage: ci/afl-cc.sh's)
KMGR_AFL_CMPLOG=1 exec "$(dirname "$0")/afl-cc.sh" "$@"
