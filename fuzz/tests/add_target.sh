#!/usr/bin/env bash
# fuzz/tests/add_target.sh SRC SCRATCH C_COMPILER - adding a fuzz target is
# its .c file and one line of fuzz/targets/TARGETS, nothing else.
#
# Copies the source tree to SCRATCH, adds a throwaway program target
# (zz_throwaway.c: concurrent.c under another name) and its registry line
# (shaped as concurrent), configures and builds that copy (replay mains,
# no sanitizer, unoptimised), then checks that every reader of the registry knows the
# new target: the build (the binary fuzz/zz_throwaway replays
# corpus/concurrent/), the C side (kprog runs a program --target
# zz_throwaway), the shell (ci/lib/targets.sh) and Python
# (ci/nightly/report.py's TARGETS).  Exit 0 when all do.
set -eu
src=$1 scratch=$2 cc=$3
tree=$scratch/tree
. "$src/ci/lib/tree.sh"
rm -rf "$scratch"
kmgr_tree_copy "$src" "$tree"
# the change: one new file, one new line
printf '/* zz_throwaway.c - the concurrent shape under a new name. */\n#include "target.h"\n\nKFUZZ_PROGRAM_TARGET(zz_throwaway)\n' \
	>"$tree/fuzz/targets/zz_throwaway.c"
echo "zz_throwaway concurrent" >>"$tree/fuzz/targets/TARGETS"

# Debug and KMGR_UNITY: what is checked is that the registry line is
# enough, not the code generated; unoptimised and one compile a folder,
# the copy builds in 7 CPU-s instead of 24 (KMGR_UNITY is also what
# the asan, tsan, msan and afl presets build, cmake/unity.cmake).
cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_C_COMPILER="$cc" -DKMGR_FUZZ_ENGINE=replay \
	-DKMGR_SANITIZER=none -DCMAKE_BUILD_TYPE=Debug -DKMGR_UNITY=ON >"$scratch/cmake.log" 2>&1 ||
	{ cat "$scratch/cmake.log"; echo "add_target: the copy does not configure"; exit 1; }
cmake --build "$tree/build" --target fuzz_zz_throwaway kprog-tool >"$scratch/build.log" 2>&1 ||
	{ tail -20 "$scratch/build.log"; echo "add_target: the new target does not build"; exit 1; }

"$tree/build/fuzz/zz_throwaway" "$src/corpus/concurrent" >"$scratch/replay.log" 2>&1 ||
	{ tail -5 "$scratch/replay.log"; echo "add_target: zz_throwaway does not replay corpus/concurrent"; exit 1; }
seed=$(ls "$src/corpus/concurrent" | head -n 1)
"$tree/build/tools/kprog/kprog" run "$src/corpus/concurrent/$seed" --target zz_throwaway \
	>"$scratch/kprog.log" 2>&1 ||
	{ tail -5 "$scratch/kprog.log"; echo "add_target: kprog does not know --target zz_throwaway"; exit 1; }
names=$(KMGR_ROOT=$tree bash -c '. "$KMGR_ROOT/ci/lib/targets.sh"; kmgr_targets " "')
case " $names " in
*" zz_throwaway "*) ;;
*) echo "add_target: ci/lib/targets.sh lists '$names', not zz_throwaway"; exit 1 ;;
esac
python3 -c "
import importlib.util, sys
spec = importlib.util.spec_from_file_location('nr', sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
sys.exit(0 if 'zz_throwaway' in m.TARGETS else 1)" "$tree/ci/nightly/report.py" ||
	{ echo "add_target: ci/nightly/report.py does not list zz_throwaway"; exit 1; }
rm -rf "$scratch"
echo "add_target: a .c file and a line: the build, kprog, ci/lib/targets.sh and the nightly report know zz_throwaway"
