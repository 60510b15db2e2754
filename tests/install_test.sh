#!/usr/bin/env bash
# tests/install_test.sh - the ctest `install`: install this build into a
# scratch prefix and use it as a user would, from outside the build tree.
#   install_test.sh BUILD_DIR WORK_DIR SRC_DIR LIBDIR CC [SAN_FLAGS]
# 1. cmake --install into WORK_DIR/prefix; the headers, libraries, nrt.pc
#    and the CMake package are there.
# 2. tests/consumer/main.c built with `pkg-config --cflags --libs nrt` and
#    run; built again by tests/consumer/CMakeLists.txt (find_package(nrt),
#    nrt::nrt and nrt::nrt_static) and run.
# 3. tests/check_exports.sh on the installed libnrt.so (and libnrt.a); the
#    vendor's packaging: SONAME libnrt.so.1, nrt_* at version NRT_2.0.0 and
#    nrta_* at NRT_3.0.0, and the consumers' NEEDED entry is libnrt.so.1.
# 4. Every installed program starts from the prefix (--help), and the tools
#    do real work there: kmgr-model makes a model, run_model runs it,
#    kmgr-repro decodes a corpus input, a stress binary runs a second.
# SAN_FLAGS: the preset's sanitizer flags, which a program linking a
# sanitized libnrt must also be built with.
set -euo pipefail
if [ $# -lt 5 ] || [ $# -gt 6 ]; then
	echo "usage: install_test.sh BUILD_DIR WORK_DIR SRC_DIR LIBDIR CC [SAN_FLAGS]" >&2
	exit 2
fi
build=$1 work=$2 src=$3 libdir=$4 cc=$5 san=${6:-}
prefix=$work/prefix
step() { echo "--- $*"; }

rm -rf "$work"
mkdir -p "$work"
cd "$work" # nothing below may depend on the build tree as working directory

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in include/nrt/nrt.h include/nrt/nrt_async.h include/nrt/nrt_experimental.h \
	include/nrt/nrt_status.h include/nrt/nrt_version.h "$libdir/libnrt.so" "$libdir/libnrt.so.1" "$libdir/libnrt.a" "$libdir/pkgconfig/nrt.pc" \
	"$libdir/cmake/nrt/nrtConfig.cmake" "$libdir/cmake/nrt/nrtConfigVersion.cmake"; do
	[ -e "$prefix/$f" ] || { echo "install_test: $f is not under the prefix" >&2; exit 1; }
done

step "pkg-config consumer"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
version=$(pkg-config --modversion nrt)
flags=$(pkg-config --cflags --libs nrt)
echo "nrt $version: $flags"
# shellcheck disable=SC2086 # flags are words
"$cc" $san "$src/tests/consumer/main.c" $flags -Wl,-rpath,"$prefix/$libdir" -o consumer_pc
./consumer_pc

step "find_package consumer"
cmake -S "$src/tests/consumer" -B consumer-cmake -DCMAKE_PREFIX_PATH="$prefix" -DNRT_WANT_VERSION="$version" \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$san" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	>consumer-cmake.log
cmake --build consumer-cmake >>consumer-cmake.log
./consumer-cmake/consumer_shared
./consumer-cmake/consumer_static

step "one version"
# nrt.pc, the CMake package, the library file behind the SONAME and
# nrt_get_version say the same X.Y.Z (project(VERSION)), and
# find_package(nrt X.Y.Z) took it above.
pkg_cmake=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$prefix/$libdir/cmake/nrt/nrtConfigVersion.cmake")
file=$(readlink "$prefix/$libdir/libnrt.so.1")
runtime=$(./consumer_pc | sed -n 's/^consumer: runtime \([0-9.]*\),.*/\1/p')
echo "nrt.pc $version, CMake package $pkg_cmake, $file, nrt_get_version $runtime"
[ "$pkg_cmake" = "$version" ] && [ "$file" = "libnrt.so.$version" ] && [ "$runtime" = "$version" ] || {
	echo "install_test: the versions disagree" >&2
	exit 1
}

step "exports"
bash "$src/tests/check_exports.sh" "$prefix/$libdir/libnrt.so" "$prefix/include/nrt" \
	${KMGR_CHECK_ARCHIVE:+"$prefix/$libdir/libnrt.a"}

step "packaging"
so=$prefix/$libdir/libnrt.so
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libnrt.so.1 ] || { echo "install_test: SONAME is '$soname', not libnrt.so.1" >&2; exit 1; }
needed=$(readelf -d consumer_pc | sed -n 's/.*(NEEDED).*\[\(libnrt[^]]*\)\]/\1/p')
[ "$needed" = libnrt.so.1 ] || { echo "install_test: consumer needs '$needed', not libnrt.so.1" >&2; exit 1; }
# objdump -T: ... VERSION NAME; every nrt_ name at NRT_2.0.0, nrta_ at NRT_3.0.0.
misplaced=$(objdump -T "$so" | awk '$NF ~ /^nrta?_/ {
	want = ($NF ~ /^nrta_/) ? "NRT_3.0.0" : "NRT_2.0.0"
	if ($(NF - 1) != want) print $NF " at " $(NF - 1) }')
[ -z "$misplaced" ] || { echo "install_test: wrong version nodes: $misplaced" >&2; exit 1; }
echo "SONAME $soname; nrt_* at NRT_2.0.0, nrta_* at NRT_3.0.0"
# The fuzz builds' memory access points (lib/sched/ctl_access.c) stay out of
# the installed library: no callback defined, none called.
cov=$(nm "$so" "$prefix/$libdir/libnrt.a" 2>/dev/null | grep -c '__sanitizer_cov_\(load\|store\)' || true)
[ "$cov" = 0 ] || { echo "install_test: libnrt carries $cov load/store callback symbols" >&2; exit 1; }

step "no build or source paths"
# KMGR_CHECK_PATHS (the builds with KMGR_RELATIVE_PATHS, CMakeLists.txt):
# no installed file holds the source or the build directory: __FILE__,
# UBSan's type names and DWARF are relative to the source root.  The
# prefix itself, which lies in the build tree here, is where nrt.pc and
# the CMake package point and is taken out first.
if [ -n "${KMGR_CHECK_PATHS:-}" ]; then
	python3 - "$prefix" "$src" "$build" <<'PY'
import os, re, sys

prefix = os.path.realpath(sys.argv[1]).encode()
dirs = {os.fsencode(d) for p in sys.argv[2:] for d in (p.rstrip("/"), os.path.realpath(p))}
pat = re.compile(b"(?:" + b"|".join(re.escape(d) for d in sorted(dirs, key=len, reverse=True))
                 + b")[^\\0\\n]{0,80}")
bad = 0
for root, _, files in os.walk(prefix):
    for name in files:
        path = os.path.join(root, name)
        if os.path.islink(path):
            continue
        with open(path, "rb") as f:
            hits = pat.findall(f.read().replace(prefix, b""))
        if hits:
            bad += 1
            print("install_test: %s holds %d string(s) with the source or build directory, e.g. %r"
                  % (os.fsdecode(path), len(hits), hits[0]), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
	echo "no installed file names $src or $build"
fi

step "installed programs"
# Each starts from the prefix: 0 for --help, or 1/2 for a tool that takes
# --help as a bad argument; a missing library or a crash is above 2.
for t in "$prefix"/bin/*; do
	rc=0
	"$t" --help >/dev/null 2>&1 || rc=$?
	[ $rc -le 2 ] || { echo "install_test: $t --help exited $rc" >&2; exit 1; }
done
"$prefix/bin/kmgr-model" create -o model.bin --name consumer --input a:u8:16 --output x:u8:16
"$prefix/bin/kmgr-model" show model.bin >/dev/null
"$prefix/bin/run_model" model.bin
[ -s x.out ] || { echo "install_test: run_model wrote no x.out" >&2; exit 1; }
input=$(find "$src/corpus/regressions/api_seq" -type f -size +0 | sort | head -n 1)
"$prefix/bin/kmgr-repro" show --target api_seq "$input" >/dev/null
"$prefix/bin/stress_refdrain" --seconds 1 --threads 2 --seed 1 --quiet --repro-dir "$work"
echo "install_test: ok"
