#!/usr/bin/env bash
# ci/nightly/testdata/buckets.sh - the ctest nightly_buckets: one bug, one
# row.  A night whose fuzz triage (asan), TSan fuzz triage and stress-log
# triage (the fields of `kmgr-repro triage --json`: crash_type,
# crash_state, key, count, example, reproduce) name the same key K1 three
# times and another key K2 once, with a history where K1 and K3 were seen:
# the report has two finding rows (K1: count 1+2+3, sources fuzz (asan),
# fuzz (tsan) and stress; known since the first night), K2 new, and K3 in a
# "not seen tonight" row with its first and last night.  A finding without
# a key (an older triage JSON) keeps a row of its own.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ci=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/buckets.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=$tmp/night h=$tmp/hist
mkdir -p "$n" "$h/2026-12-01T0100Z" "$h/2026-12-02T0100Z"
echo '{"date": "2026-12-03", "run": "2026-12-03T0100Z"}' >"$n/meta.json"
b() { # KEY COUNT TYPE FRAME
	printf '{"signature": "%s in %s", "crash_type": "%s", "crash_state": ["%s", "b", "c"], "key": "%s",
	  "count": %d, "example": "/x/%s", "reproduce": "kmgr-repro replay /x/%s"}' "$3" "$4" "$3" "$4" "$1" "$2" "$1" "$1"
}
echo "{\"buckets\": [$(b K1 1 heap-use-after-free f1), {\"signature\": \"old-style in q\", \"count\": 1, \"example\": \"/x/old\"}]}" >"$n/triage-asan.json"
echo "{\"buckets\": [$(b K1 2 heap-use-after-free f1), $(b K2 1 data-race g1)]}" >"$n/triage-tsan.json"
echo "{\"buckets\": [$(b K1 3 heap-use-after-free f1)]}" >"$n/triage-stress.json"
for r in 2026-12-01T0100Z 2026-12-02T0100Z; do
	keys='["K1", "K3"]'
	[ "$r" = 2026-12-02T0100Z ] && keys='["K1"]'
	cat >"$h/$r/nightly.json" <<J
{"kind": "kmgr-nightly", "date": "${r:0:10}", "run": "$r", "fuzz": {"libfuzzer": {}},
 "findings": [], "stress": []}
J
	python3 - "$h/$r/nightly.json" "$keys" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["findings"] = [{"key": k, "bucket": k, "reproduces": True, "crash_type": "t-" + k,
                  "frames": ["f"]} for k in json.loads(sys.argv[2])]
json.dump(j, open(sys.argv[1], "w"))
PY
done
python3 "$ci/nightly/report.py" --night "$n" --history "$h" --reliability 0 --repro-tool "$here/fake-repro.sh" \
	>"$tmp/out" 2>"$tmp/err" || { echo "buckets: FAIL: report.py: $(tail -n 2 "$tmp/err")"; exit 1; }
python3 - "$n/nightly.json" "$n/nightly.html" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
page = open(sys.argv[2]).read()
bad = []
by = {f["key"]: f for f in j["findings"]}
if len(j["findings"]) != 3:
    bad.append("%d finding rows, want 3 (K1, K2, the keyless one)" % len(j["findings"]))
k1 = by.get("K1") or {}
if k1.get("count") != 6:
    bad.append("K1 count %s, want 6" % k1.get("count"))
for s in ("fuzz (asan)", "fuzz (tsan)", "stress"):
    if s not in (k1.get("source") or "").split(", "):
        bad.append("K1 sources %r lack %s" % (k1.get("source"), s))
if k1.get("first_seen") != "2026-12-01T0100Z" or k1.get("new"):
    bad.append("K1 not known since 2026-12-01T0100Z: %s" % k1.get("first_seen"))
if not (by.get("K2") or {}).get("new"):
    bad.append("K2 not new")
gone = j.get("not_seen") or []
if [g["key"] for g in gone] != ["K3"] or gone[0]["last_seen"] != "2026-12-01T0100Z":
    bad.append("not seen tonight: %s, want K3 last seen 2026-12-01T0100Z" % gone)
if page.count('<tr class="gone">') != 1 or "not seen tonight" not in page:
    bad.append("the page has no 'not seen tonight' row")
for b in bad:
    print("buckets: FAIL: " + b)
if not bad:
    print("buckets: ok (3 rows, K1 x6 from fuzz asan/tsan and stress, K3 not seen tonight)")
sys.exit(1 if bad else 0)
PY
