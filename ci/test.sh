#!/usr/bin/env bash
# ci/test.sh - the README's test command: install what is missing, check the
# formatting and the layering (ci/check-layering.sh), then configure, build
# and ctest the asan, tsan, msan and release presets, and check that the afl
# preset builds.
# Budget: under 25 minutes on 2 cores from a clean clone.
#   ci/test.sh [--help]   (KMGR_PRESETS, KMGR_JOBS, KMGR_SKIP_AFL adjust it)
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
case "${1:-}" in
"") ;;
-h | --help) kmgr_usage; exit 0 ;;
*) echo "test: unknown argument $1 (see --help)" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
KMGR_ROOT=$PWD
. ci/lib/toolchain.sh
start=$(date +%s)
stamp() { echo "=== [$(($(date +%s) - start))s] $*"; }

stamp "deps"
bash ci/deps.sh

stamp "format"
bash ci/format.sh --check

# Only lib/sched touches threads, locks, atomics and time; the self-test
# proves the check still turns red on a bad line.
stamp "layering"
bash ci/check-layering.sh
bash ci/check-layering.sh --self-test

stamp "ClusterFuzzLite/OSS-Fuzz files"
bash ci/cflite-check.sh --yaml-only

jobs=${KMGR_JOBS:-2}
for preset in ${KMGR_PRESETS:-asan tsan msan release}; do
	stamp "configure $preset"
	# afresh over the cache of a failed or foreign configure
	kmgr_configure test.sh "build/$preset" --always --preset "$preset" >/dev/null
	stamp "build $preset"
	cmake --build --preset "$preset" -j "$jobs"
	stamp "test $preset"
	ctest --preset "$preset" -j "$jobs"
done

if [ -z "${KMGR_SKIP_AFL:-}" ]; then
	stamp "afl build check"
	kmgr_configure test.sh build/afl --always --preset afl >/dev/null
	cmake --build --preset afl -j "$jobs"
	ctest --preset afl -L fuzz-regression -j "$jobs"
fi
# The mutants as negative controls take longer than CI's budget allows
# (BENCHMARKS.md); ci/nightly.sh runs them, and so does this when asked.
if [ -n "${KMGR_MUTANT_CONTROLS:-}" ]; then
	stamp "mutant controls"
	bash ci/mutant-controls.sh --jobs "$jobs"
fi
stamp "all green"
