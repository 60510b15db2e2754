#!/usr/bin/env bash
# ci/testdata/nightly/run-test.sh OUTDIR - the ctest nightly_report_render:
# ci/nightly-report.py over the fixture night (night/) with the fixture
# history (history/), then checks that what it wrote matches its inputs
# (figures taken from the fixture files here, by grep, not by the
# generator's parser) and that Chromium renders it with data
# (ci/report-check.sh; exit 77, SKIP, without Chromium).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ci=$(cd "$here/../.." && pwd)
out=${1:?usage: run-test.sh OUTDIR}
rm -rf "$out" && mkdir -p "$out"
python3 "$ci/nightly-report.py" --night "$here/night" --history "$here/history" \
	--html "$out/nightly.html" --json "$out/nightly.json" --repro-tool kmgr-repro

# The JSON against the fixtures: every libFuzzer log's best cov and last
# execs, the triage buckets, the stress runs, three nights in the trend.
expect=()
for log in "$here"/night/fuzz/*.log; do
	t=$(basename "$log" .log)
	cov=$(grep -oE 'cov: [0-9]+' "$log" | cut -d' ' -f2 | sort -n | tail -1)
	execs=$(grep -E 'cov: [0-9]+' "$log" | grep -oE '^#[0-9]+' | tail -1 | tr -d '#')
	expect+=("$t=$cov=$execs")
done
buckets=$(grep -c '"signature"' "$here/night/triage.json")
runs=$(ls "$here"/night/stress/*.json | wc -l)
failed=$(grep -l '"result": "FAILURE"' "$here"/night/stress/*.json | wc -l)
nights=$(($(ls "$here"/history/*.json | wc -l) + 1))
python3 - "$out/nightly.json" "$buckets" "$runs" "$failed" "$nights" "${expect[@]}" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
buckets, runs, failed, nights = map(int, sys.argv[2:6])
bad = []
for e in sys.argv[6:]:
    t, cov, execs = e.split("=")
    f = j["fuzz"]["libfuzzer"].get(t, {}).get("final", {})
    if f.get("cov") != int(cov) or f.get("execs") != int(execs):
        bad.append("%s: final %r, the log says cov %s, execs %s" % (t, f, cov, execs))
    if len(j["fuzz"]["libfuzzer"].get(t, {}).get("series", [])) < 3:
        bad.append("%s: fewer than 3 points over time" % t)
fz = [f for f in j["findings"] if f["source"] == "fuzz"]
if len(fz) != buckets:
    bad.append("%d triage buckets, the file has %d" % (len(fz), buckets))
for f in fz:
    if f["smallest"] not in f["reproduce"]:
        bad.append("bucket %r: its reproduce command lacks its file" % f["bucket"])
if len(j["stress"]) != runs:
    bad.append("%d stress runs, %d files" % (len(j["stress"]), runs))
if len([f for f in j["findings"] if f["source"].startswith("stress")]) != failed:
    bad.append("stress failures not all among the findings")
if not all(r["latency_ns"]["unload"]["buckets"] for r in j["stress"] if "unload" in r["latency_ns"]):
    bad.append("a drain-latency histogram lost its buckets")
if len(j["trend"]) != nights:
    bad.append("%d nights in the trend, want %d" % (len(j["trend"]), nights))
if not j["fuzz"]["afl"]:
    bad.append("the AFL++ plot_data was not read")
for b in bad:
    print("run-test.sh: FAIL: " + b, file=sys.stderr)
print("run-test.sh: JSON %s" % ("bad" if bad else "matches the fixtures"))
sys.exit(1 if bad else 0)
PY
# Plots the fixtures call for: exec/s and cov per libFuzzer log, two for
# AFL++, the throughput bars, one drain histogram per run that has one,
# five trend plots (exec/s, cov, ops/s, findings, line coverage).
logs=$(ls "$here"/night/fuzz/*.log | wc -l)
drains=$(grep -l '"unload"' "$here"/night/stress/*.json | wc -l)
plots=$((2 * logs + 2 + 1 + drains + 5))
bash "$ci/report-check.sh" "$out/nightly.html" --png "$out/screenshot.png" \
	--min-plots "$plots" --min-findings $((buckets + failed)) --min-stress "$runs"
