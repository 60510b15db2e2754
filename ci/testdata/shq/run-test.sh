#!/usr/bin/env bash
# ci/testdata/shq/run-test.sh - kmgr_shq (ci/lib/buckets.sh), which quotes
# the paths of the reproduce lines fuzz.sh writes: a string with a quote,
# a $( ), a backslash, a space, a newline and a control byte, quoted and
# run by sh (dash where it is /bin/sh), comes back byte for byte and runs
# nothing (the $( ) would create a file).
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
. "$root/ci/lib/buckets.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shq-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bad=0
s=$(printf "a'b \$(touch %s/ran) c\\\\d\001e\nf''" "$tmp")
q=$(kmgr_shq "$s")
out=$(env -i PATH=/usr/bin:/bin sh -c "printf '%s' $q")
[ "$out" = "$s" ] || { echo "shq-test: FAIL: sh read back '$out', not '$s' (quoted: $q)"; bad=1; }
[ ! -e "$tmp/ran" ] || { echo "shq-test: FAIL: the \$( ) ran (quoted: $q)"; bad=1; }
[ "$(kmgr_shq '')" = "''" ] || { echo "shq-test: FAIL: the empty string is $(kmgr_shq '')"; bad=1; }
[ "$bad" = 0 ] && echo "shq-test: ok: $q"
exit "$bad"
