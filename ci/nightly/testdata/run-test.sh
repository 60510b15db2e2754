#!/usr/bin/env bash
# ci/nightly/testdata/run-test.sh OUTDIR - the ctest nightly_report_render:
# ci/nightly/report.py over the fixture night (night/) with the fixture
# history (history/), then checks that what it wrote matches its inputs
# (figures taken from the fixture files here, by grep, not by the
# generator's parser) and that Chromium renders it with data
# (ci/nightly/report-check.sh; exit 77, SKIP, without Chromium), every link it
# holds leading to a file.  Then two nights in a row, the second with one
# finding more: that one, and only that one, is marked new; a third night
# with --keep 2 removes the first night's folder and keeps its figures in
# the trend file.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ci=$(cd "$here/../.." && pwd)
out=${1:?usage: run-test.sh OUTDIR}
rm -rf "$out" && mkdir -p "$out"
python3 "$ci/nightly/report.py" --night "$here/night" --history "$here/history" \
	--html "$out/nightly.html" --json "$out/nightly.json" --repro-tool "$here/fake-repro.sh"

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
# history/2026-11-30.json holds the use-after-free: known since then; the
# others reproduce and are new; "(no failure)" is neither
status = {f["bucket"].split(" in ")[0]: (f["new"], f["first_seen"]) for f in j["findings"]}
if status.get("heap-use-after-free") != (False, "2026-11-30"):
    bad.append("the use-after-free is %r, want known since 2026-11-30" % (status.get("heap-use-after-free"),))
if sum(1 for f in j["findings"] if f["new"]) != len([f for f in j["findings"] if f["reproduces"]]) - 1:
    bad.append("new: %r" % status)
for f in fz:
    want = "10/10" if f["reproduces"] else None
    if f["reproduces"] and f.get("reliability") != want:
        bad.append("bucket %r: reliability %r, want %s" % (f["bucket"], f.get("reliability"), want))
    if f["reproduces"] and len(f["frames"]) != 3:
        bad.append("bucket %r: frames %r, want its signature's 3" % (f["bucket"], f["frames"]))
for b in bad:
    print("run-test.sh: FAIL: " + b, file=sys.stderr)
print("run-test.sh: JSON %s" % ("bad" if bad else "matches the fixtures"))
sys.exit(1 if bad else 0)
PY
# Plots the fixtures call for: exec/s and cov per libFuzzer log, two for
# AFL++, the throughput bars, one drain histogram per run that has one,
# five trend plots (exec/s, cov, ops/s, findings, line coverage).
# One throughput panel per stress preset.
logs=$(ls "$here"/night/fuzz/*.log | wc -l)
drains=$(grep -l '"unload"' "$here"/night/stress/*.json | wc -l)
presets=$(ls "$here"/night/stress/*.json | xargs -n1 basename | cut -d- -f1 | sort -u | wc -l)
plots=$((2 * logs + 2 + presets + drains + 5))
# Links: each part's log (logs/), each libFuzzer log, each finding's file,
# each stress run's JSON and log, each coverage page.
files=$(find "$here/night/findings" -type f | wc -l)
covpages=$(find "$here/night/coverage" -name index.html | wc -l)
links=$(($(ls "$here"/night/logs | wc -l) + logs + files + 2 * runs + covpages))
bash "$ci/nightly/report-check.sh" "$out/nightly.html" --png "$out/screenshot.png" \
	--min-plots "$plots" --min-findings $((buckets + failed)) --min-stress "$runs" \
	--min-links "$links" --min-new 2

# Nights in a row, as ci/nightly.sh keeps them: NIGHTS/<run>/, one trend file.
nights=$out/nights
mkdir -p "$nights"
night() { # RUN [BUCKET-TO-DROP]: a copy of the fixture night as run RUN
	cp -r "$here/night" "$nights/$1"
	python3 - "$nights/$1" "$1" "${2:-}" <<'PY'
import json, os, sys
d, run, drop = sys.argv[1:]
m = json.load(open(os.path.join(d, "meta.json")))
m.update(run=run, date=run[:10])
json.dump(m, open(os.path.join(d, "meta.json"), "w"))
t = json.load(open(os.path.join(d, "triage.json")))
t["buckets"] = [b for b in t["buckets"] if not (drop and b["signature"].startswith(drop))]
json.dump(t, open(os.path.join(d, "triage.json"), "w"))
PY
	python3 "$ci/nightly/report.py" --night "$nights/$1" --history "$nights" \
		--trend "$nights/trend.json" --keep "${KEEP:-14}" --repro-tool "$here/fake-repro.sh"
}
night 2026-12-01T0100Z "ORACLE"
night 2026-12-02T0100Z
python3 - "$nights/2026-12-02T0100Z/nightly.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
new = [f["bucket"] for f in j["findings"] if f["new"]]
known = [f["first_seen"] for f in j["findings"] if f["reproduces"] and not f["new"]]
ok = len(new) == 1 and new[0].startswith("ORACLE") and known and \
    all(k == "2026-12-01T0100Z" for k in known)
print("run-test.sh: second night: new %r, known since %r%s" % (new, known, "" if ok else ": FAIL"))
sys.exit(0 if ok else 1)
PY
bash "$ci/nightly/report-check.sh" "$nights/2026-12-02T0100Z/nightly.html" --png "$out/second-night.png" \
	--min-plots "$plots" --min-new 1 --min-links "$links"
KEEP=2 night 2026-12-03T0100Z
left=$(ls -d "$nights"/2026-* | xargs -n1 basename | tr '\n' ' ')
in_trend=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["nights"]))' \
	"$nights/trend.json")
echo "run-test.sh: --keep 2 left $left; the trend keeps $in_trend night(s)"
[ "$left" = "2026-12-02T0100Z 2026-12-03T0100Z " ] && [ "$in_trend" = 3 ] ||
	{ echo "run-test.sh: FAIL: --keep 2 should leave the last two nights and a trend of 3" >&2; exit 1; }
