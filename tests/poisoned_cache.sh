#!/usr/bin/env bash
# tests/poisoned_cache.sh SRC WORK - the ctest `poisoned_cache`: a build
# tree left by a configure whose compiler was missing (its cache says
# CMAKE_EXECUTABLE_FORMAT=Unknown) makes a later plain configure fail ("The
# install of the nrt_shared target requires changing an RPATH ...").  This
# makes such a tree the way the failed configure does, then runs README
# command 1 on it (ci/fuzz.sh --build-only, one target), which must
# configure afresh and build.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: poisoned_cache.sh SRC WORK" >&2; exit 2; }
src=$1 work=$2
build=$work/build
rm -rf "$work"
mkdir -p "$work"
if cmake -S "$src" -B "$build" --preset asan -DCMAKE_C_COMPILER=kmgr-no-such-clang-19 \
	>"$work/poison.log" 2>&1; then
	echo "poisoned_cache: the configure with a missing compiler succeeded" >&2
	exit 1
fi
grep -q '^CMAKE_EXECUTABLE_FORMAT:INTERNAL=Unknown$' "$build/CMakeCache.txt" ||
	{ echo "poisoned_cache: no poisoned cache to start from" >&2; exit 1; }
# the cache now names the real compiler, as after `ci/deps.sh` installed it
sed -i 's|^CMAKE_C_COMPILER:.*|CMAKE_C_COMPILER:STRING=clang-19|' "$build/CMakeCache.txt"
KMGR_FUZZ_BUILD=$build bash "$src/ci/fuzz.sh" --preset asan --targets model_parse --build-only
[ -x "$build/fuzz/model_parse" ] || { echo "poisoned_cache: no fuzz/model_parse built" >&2; exit 1; }
echo "poisoned_cache: ok (configured afresh and built over a poisoned cache)"
