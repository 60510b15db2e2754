#!/usr/bin/env bash
# ci/nightly/testdata/fake-repro.sh replay FILE --times N [--target T] -
# stands in for kmgr-repro in run-test.sh, so the report's reliability
# column is checked without a build: "reproduced N/N" for a file that
# exists, exit 2 otherwise.
set -euo pipefail
[ "${1:-}" = replay ] && [ -f "${2:-}" ] && [ "${3:-}" = --times ] || exit 2
echo "reproduced $4/$4: fixture"
