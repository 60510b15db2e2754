#!/usr/bin/env bash
# ci/nightly/testdata/page-format.sh - the ctest nightly_page_format: the
# nightly page's figures read right (issue 38).
#   - one number format: no exponent anywhere on the fixture night's page
#     (4.09e+03 beside 12.4k), and fmt(4090.5) is "4090"
#   - the coverage-per-night axis spans the data, not 0..max (three nights
#     of cov 1200..1269 drew flat lines): its lowest tick is above 0
#   - a stress panel with 12.4k beside 1.34M ops/s is on a log scale
#   - a night's coverage report is pruned: summary and index pages kept,
#     per-file pages archived, the folder much smaller
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ci=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/page-format.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
bad=0
fail() { echo "page-format: FAIL: $*"; bad=1; }
python3 "$ci/nightly/report.py" --night "$here/night" --history "$here/history" --reliability 0 \
	--html "$tmp/n.html" --json "$tmp/n.json" --repro-tool "$here/fake-repro.sh" >/dev/null 2>"$tmp/err" ||
	fail "report.py: $(tail -n 1 "$tmp/err")"
e=$(grep -oE '>[0-9.]+e[+-][0-9]+[a-zA-Z]*<' "$tmp/n.html" | head -3 | paste -sd' ')
[ -z "$e" ] || fail "figures with an exponent on the page: $e"
python3 - "$ci" <<'PY' || bad=1
import re, sys
sys.path.insert(0, sys.argv[1])
sys.dont_write_bytecode = True
from nightly import svg, page
bad = 0
def fail(m):
    global bad
    print("page-format: FAIL: " + m)
    bad = 1
if svg.fmt(4090.5) != "4090":
    fail("fmt(4090.5) is %r" % svg.fmt(4090.5))
rep = {"trend": [{"date": "2026-12-0%d" % i, "run": "2026-12-0%dT0100Z" % i, "findings": 0,
                  "fuzz": {"api_seq": {"exec_s": 1000, "cov": c}}, "stress": {}}
                 for i, c in ((1, 1200), (2, 1240), (3, 1269))]}
html = "".join(page.trend_section(rep))
m = re.search(r'aria-label="coverage \(cov\) per night".*?</svg>', html)
ticks = [t for t in re.findall(r'text-anchor="end">([^<]+)<', m.group(0))] if m else []
if not ticks or ticks[0] in ("0", "0.0"):
    fail("coverage per night: y ticks %s start at 0" % ticks)
b = svg.bar_plot("stress throughput, release (ops/s)", [("refdrain", 12400), ("churn", 1340000)],
                 "ops/s")
if "log scale" not in b:
    fail("stress panel with 12.4k and 1.34M: linear")
sys.exit(bad)
PY
# the coverage report of a night
mkdir -p "$tmp/cov/api_seq/html/coverage/src"
echo '<a href="api_seq/html/index.html">api_seq</a>' >"$tmp/cov/index.html"
echo '{"targets": []}' >"$tmp/cov/summary.json"
echo '<html>totals</html>' >"$tmp/cov/api_seq/html/index.html"
for i in $(seq 40); do
	for j in $(seq 2000); do echo "<tr><td>$j</td><td class='covered'>line $j of file $i</td></tr>"; done \
		>"$tmp/cov/api_seq/html/coverage/src/f$i.c.html"
done
before=$(du -sk "$tmp/cov" | cut -f1)
bash -c '. "$1/lib/prune.sh" && kmgr_prune_coverage "$2"' _ "$ci" "$tmp/cov" >"$tmp/prune.out" 2>&1 ||
	fail "prune: $(cat "$tmp/prune.out")"
after=$(du -sk "$tmp/cov" | cut -f1)
[ -f "$tmp/cov/index.html" ] && [ -f "$tmp/cov/summary.json" ] && [ -f "$tmp/cov/api_seq/html/index.html" ] ||
	fail "prune: a summary page is gone"
[ "$after" -lt $((before / 4)) ] || fail "prune: ${before} KiB -> ${after} KiB"
[ "$bad" = 0 ] && echo "page-format: ok (coverage ${before} KiB -> ${after} KiB)"
exit "$bad"
