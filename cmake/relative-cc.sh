#!/usr/bin/env bash
# cmake/relative-cc.sh SRC REL COMPILER ARG... - the compiler launcher of
# the builds with KMGR_RELATIVE_PATHS (CMakeLists.txt).  Ninja runs every
# compile in the build directory with the sources, include folders and
# flag files as absolute paths; this runs COMPILER ARG... with each SRC/
# in the arguments written REL/ (SRC seen from the build directory,
# e.g. ../../), so that the compiler never sees this checkout's absolute
# path: -ffile-prefix-map cannot reach all of what it would embed (ASan's
# per-file module name, UBSan's "unnamed struct at FILE" type names).
# The prefix map, rewritten too, then takes REL/ off __FILE__ and DWARF.
src=$1 rel=$2
shift 2
args=()
for a in "$@"; do
	args+=("${a//"$src/"/"$rel/"}")
done
exec "${args[@]}"
