#!/bin/sh
# ci/afl.sh's CmpLog build: ci/afl-cc.sh with AFL_LLVM_CMPLOG=1, as a
# compiler of its own so that CMake's compile and link steps (afl-clang-lto
# instruments at link time) both see it.
KMGR_AFL_CMPLOG=1 exec "$(dirname "$0")/afl-cc.sh" "$@"
