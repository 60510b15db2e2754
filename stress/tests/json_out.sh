#!/usr/bin/env bash
# json_out.sh - `stress_X --json FILE`: a path that cannot be written is
# refused at start (exit 2, one line, before the run: a 60-second run must
# not start); a write that fails at the end (/dev/full, ulimit -f 0) is one
# line on stderr and exit 2, and an existing FILE keeps its old bytes; a
# good path gets the summary.
# usage: json_out.sh STRESS_BINARY SCRATCH
set -uo pipefail

if [ $# -ne 2 ]; then
	echo "usage: json_out.sh STRESS_BINARY SCRATCH" >&2
	exit 2
fi
bin=$1 dir=$2
bad=0
rm -rf "$dir" && mkdir -p "$dir" || exit 2
run=(--threads 2 --stall-seconds 20 --quiet --repro-dir "$dir")

fail() {
	echo "json_out: FAIL: $*" >&2
	bad=1
}

# a missing directory: refused before the run (timeout 20 < --seconds 60)
timeout 20 "$bin" "${run[@]}" --seconds 60 --json "$dir/no/such/dir/s.json" \
	>"$dir/stdout" 2>"$dir/stderr"
rc=$?
[ $rc -eq 2 ] || fail "--json into a missing directory: exit $rc, want 2"
[ "$(wc -l <"$dir/stderr")" -eq 1 ] || fail "--json into a missing directory: $(cat "$dir/stderr")"
grep -q SUCCESS "$dir/stdout" && fail "--json into a missing directory: the run started"

# a full device: the run happens, the summary is lost, exit 2
"$bin" "${run[@]}" --ops 200 --json /dev/full >"$dir/stdout" 2>"$dir/stderr"
rc=$?
[ $rc -eq 2 ] || fail "--json /dev/full: exit $rc, want 2"
grep -q "cannot write /dev/full" "$dir/stderr" || fail "--json /dev/full: $(cat "$dir/stderr")"

# a file size limit: exit 2, the old file stays whole, no temporary file
printf 'old bytes\n' >"$dir/s.json"
# TMPDIR: a TSan build writes a file into $TMPDIR before main, which
# ulimit -f 0 turns into SIGXFSZ (as in support/write_fail.sh)
(ulimit -f 0 && TMPDIR="$dir/no-tmpdir" exec "$bin" "${run[@]}" --ops 200 --json "$dir/s.json") 2>&1 >/dev/null |
	cat >"$dir/stderr"
rc=${PIPESTATUS[0]}
[ $rc -eq 2 ] || fail "--json under ulimit -f 0: exit $rc, want 2"
[ "$(cat "$dir/s.json")" = "old bytes" ] || fail "--json under ulimit -f 0: the old file changed"
ls "$dir"/s.json.tmp-* >/dev/null 2>&1 && fail "a temporary file was left"

# the positive control
"$bin" "${run[@]}" --ops 200 --json "$dir/s.json" >"$dir/stdout" 2>"$dir/stderr"
rc=$?
[ $rc -eq 0 ] || fail "--json to a good path: exit $rc: $(cat "$dir/stderr")"
grep -q '"result": "SUCCESS"' "$dir/s.json" || fail "--json to a good path: no summary"

[ $bad -eq 0 ] && echo "json_out: bad --json paths refused early, write errors reported"
exit $bad
