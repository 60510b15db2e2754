#!/usr/bin/env bash
# ci/nightly/testdata/bad-history.sh - the ctest nightly_bad_history: a
# --history folder with a damaged night (a nightly.json whose libFuzzer
# target has "final": null) and a trend.json with a night without "date"
# and one without "run": report.py still writes the page and the JSON,
# exit 0, with one warning per night it leaves out, and the good nights of
# the history (the fixtures' two) in the trend; the night without a date
# takes it from its run stamp.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ci=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bad-history.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() { echo "bad-history: FAIL: $*"; bad=1; }
cp -r "$here/history" "$tmp/history"
mkdir -p "$tmp/history/2026-12-01T0100Z"
cat >"$tmp/history/2026-12-01T0100Z/nightly.json" <<'J'
{"kind": "kmgr-nightly", "version": 1, "date": "2026-12-01", "run": "2026-12-01T0100Z",
 "fuzz": {"libfuzzer": {"api_seq": {"final": null, "series": []}}, "afl": {}},
 "findings": [], "stress": []}
J
cat >"$tmp/trend.json" <<'J'
{"kind": "kmgr-nightly-trend", "nights": [
 {"run": "2026-11-20T0100Z", "fuzz": {"api_seq": {"exec_s": 100, "cov": 50}}, "stress": {},
  "findings": 0, "finding_keys": []},
 {"date": "2026-11-21", "fuzz": {}, "stress": {}, "findings": 0},
 {"run": "2026-11-22T0100Z", "date": "2026-11-22", "fuzz": "oops", "stress": {}}
]}
J
python3 "$ci/nightly/report.py" --night "$here/night" --history "$tmp/history" --trend "$tmp/trend.json" \
	--reliability 0 --html "$tmp/n.html" --json "$tmp/n.json" --repro-tool "$here/fake-repro.sh" \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(tail -n 3 "$tmp/err")"
grep -q Traceback "$tmp/err" && fail "a Python traceback: $(tail -n 2 "$tmp/err")"
[ -s "$tmp/n.html" ] && [ -s "$tmp/n.json" ] || fail "no page or JSON written"
# the null "final" night is kept (its target without figures); the night
# without "run" and the one whose fuzz is not an object are left out, one
# warning each
w=$(grep -c 'warning:' "$tmp/err")
[ "$w" = 2 ] || fail "$w warnings, want 2: $(cat "$tmp/err")"
runs=$(python3 -c 'import json,sys; print(" ".join(n["run"] for n in json.load(open(sys.argv[1]))["trend"]))' \
	"$tmp/n.json" 2>/dev/null)
for r in 2026-11-20T0100Z 2026-12-01T0100Z; do
	[[ " $runs " == *" $r "* ]] || fail "night $r not in the trend ($runs)"
done
[ "$bad" = 0 ] && echo "bad-history: report written with $w warning(s); trend: $runs"
exit "$bad"
