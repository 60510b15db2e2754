"""ci/nightly/page.py - the nightly report's HTML page, one section a part
(head, findings, trend, fuzzing, coverage, stress), from what collect.py
gathered and svg.py draws."""
import html

from nightly.svg import bar_plot, fmt, hist_plot, line_plot, ns_label

# ------------------------------------------------------------------ page

CSS = """body{font-family:'DejaVu Sans',sans-serif;margin:16px;color:#222;max-width:1180px}
h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid #ccc;margin-top:28px}
table{border-collapse:collapse;font-size:12px;margin:8px 0}td,th{border:1px solid #ccc;
padding:3px 6px;text-align:left}th{background:#f0f0f0}td.n{text-align:right}
code{font-size:11px;background:#f6f6f6;padding:1px 3px;word-break:break-all}
.grid{display:flex;flex-wrap:wrap;gap:8px}.ok{color:#2a7}.bad{color:#c22;font-weight:bold}
.note{color:#666;font-size:12px}td.new{color:#fff;background:#c22;font-weight:bold}
td.known{color:#666}"""

RENDER_CHECK = """<script>
// Written by the browser after layout: how many plots drew a non-empty
// series (ci/nightly/report-check.sh reads this from the dumped DOM).
window.addEventListener('load', function () {
  var drawn = 0, marks = 0;
  document.querySelectorAll('svg.plot').forEach(function (s) {
    var ok = false;
    s.querySelectorAll('polyline.series, rect.bar').forEach(function (e) {
      var b = e.getBBox();
      if (b.width > 0 || b.height > 0) { ok = true; marks++; }
    });
    if (ok) drawn++;
  });
  var m = document.getElementById('render-check');
  m.setAttribute('data-plots-drawn', drawn);
  m.setAttribute('data-marks-drawn', marks);
});
</script>"""


def esc(v):
    return html.escape("" if v is None else str(v))


def link(label, target):
    """label as a link to target (relative to the page), plain without one."""
    if not target:
        return "<code>%s</code>" % esc(label)
    return '<a href="%s"><code>%s</code></a>' % (esc(target), esc(label))


def head_section(rep):
    meta = rep.get("meta", {})
    h = ['<h1>%s</h1>' % esc(rep["title"]),
         '<p class="note">%s; generated %s%s%s</p>' % (
             esc(rep["date"]), esc(rep["generated"]),
             "; %s min per run" % esc(meta["minutes"]) if meta.get("minutes") else "",
             "; commit %s" % esc(meta["commit"]) if meta.get("commit") else "")]
    if meta.get("interrupted"):
        h.append('<p id="interrupted" class="bad">interrupted by %s: the parts below are those '
                 'that finished (or had started)</p>' % esc(meta["interrupted"]))
    nf = sum(1 for f in rep["findings"] if f.get("reproduces"))
    nn = sum(1 for f in rep["findings"] if f.get("new"))
    bad = [r for r in rep["stress"] if r.get("result") != "SUCCESS"]
    h.append('<p id="verdict" class="%s">%d finding bucket(s), %d new tonight; %d of %d stress '
             'run(s) failed</p>' % ("bad" if nf or bad else "ok", nf, nn, len(bad),
                                    len(rep["stress"])))
    if rep.get("pruned"):
        h.append('<p class="note">pruned %d old night(s) (--keep %d; their figures stay in the '
                 'trend)</p>' % (len(rep["pruned"]), rep["keep"]))
    parts = meta.get("parts") or {}
    if parts:
        h.append('<table id="parts"><tr><th>part</th><th>exit</th><th>log</th></tr>%s</table>' %
                 "".join('<tr><td>%s</td><td class="%s">%s</td><td>%s</td></tr>' % (
                     esc(k), "ok" if v == 0 else "bad", esc(v),
                     link("log", rep["part_hrefs"].get(k)) if rep["part_hrefs"].get(k) else "-")
                     for k, v in parts.items()))
    if meta.get("command"):
        h.append('<p class="note">command: <code>%s</code></p>' % esc(meta["command"]))
    return h


def finding_status(f):
    # an interrupted night's finding: what was triaged before the signal
    part = ' <span class="partial">(partial night)</span>' if f.get("partial") else ""
    if not f.get("reproduces"):
        return '<td class="note">does not reproduce%s</td>' % part
    if f.get("new"):
        return '<td class="new">new%s</td>' % part
    return '<td class="known">known since %s (%d night(s))%s</td>' % (
        esc(f.get("first_seen")), f.get("nights") or 1, part)


def findings_section(rep):
    h = ['<h2 id="findings-h">Findings by bucket</h2>']
    gone = rep.get("not_seen") or []
    if not rep["findings"]:
        h.append('<p class="note" id="no-findings">no findings</p>')
        return h + not_seen_table(gone)
    h.append('<table id="findings"><tr><th>status</th><th>crash state</th><th>top frames</th>'
             '<th>count</th><th>source</th><th>reliability</th><th>smallest</th>'
             '<th>reproduce</th></tr>')
    order = sorted(rep["findings"], key=lambda f: (not f.get("new"), not f.get("reproduces")))
    for f in order:
        h.append('<tr class="finding%s%s">%s<td>%s</td><td>%s</td><td class="n">%d</td><td>%s</td>'
                 '<td class="n">%s</td><td>%s</td><td><code>%s</code></td></tr>' % (
                     "" if f.get("reproduces") else " no-repro", " new" if f.get("new") else "",
                     finding_status(f), esc(f.get("crash_type")),
                     "<br>".join(esc(x) for x in f.get("frames") or []) or "-", f["count"],
                     esc(f.get("source")), esc(f.get("reliability") or "-"),
                     link(f.get("smallest"), f.get("href")), esc(f.get("reproduce"))))
    h.append('</table>')
    return h + not_seen_table(gone)


def not_seen_table(gone):
    """The known findings (one row per crash-state key) absent tonight: fixed,
    or gone shallow; first and last night seen."""
    if not gone:
        return []
    h = ['<table id="not-seen"><tr><th>status</th><th>crash state</th><th>first seen</th>'
         '<th>last seen</th><th>nights</th></tr>']
    for g in gone:
        h.append('<tr class="gone"><td class="note">not seen tonight</td><td>%s</td><td>%s</td>'
                 '<td>%s</td><td class="n">%d</td></tr>' % (
                     esc(g["label"]), esc(g["first_seen"]), esc(g["last_seen"]), g["nights"]))
    h.append('</table>')
    return h


def trend_section(rep):
    tr = rep["trend"]
    h = ['<h2 id="trend">Trend across nights (%d night(s))</h2>' % len(tr)]
    if len(tr) < 2:
        return h + ['<p class="note">one night only: give --history DIR with earlier '
                    'nightly JSON files for a trend</p>']
    dates = [str(n["date"])[5:] for n in tr]  # MM-DD
    if len(set(dates)) < len(dates):  # several runs a day: MM-DD HH:MM
        dates = [n["run"][5:10] + " " + n["run"][11:13] + ":" + n["run"][13:15]
                 if len(n["run"]) >= 15 else n["run"][5:] for n in tr]
    tg = sorted({t for n in tr for t in n["fuzz"]})
    keys = sorted({k for n in tr for k in n["stress"]})
    h.append('<div class="grid">')
    h.append(line_plot("final exec/s per night", [
        (t, [(i, n["fuzz"].get(t, {}).get("exec_s")) for i, n in enumerate(tr)]) for t in tg],
        "night", "exec/s", xcat=dates, logy=True))
    h.append(line_plot("coverage (cov) per night", [
        (t, [(i, n["fuzz"].get(t, {}).get("cov")) for i, n in enumerate(tr)]) for t in tg],
        "night", "cov", xcat=dates, zero=False))
    h.append(line_plot("stress ops/s per night", [
        (k, [(i, n["stress"].get(k)) for i, n in enumerate(tr)]) for k in keys],
        "night", "ops/s", xcat=dates, logy=True))
    h.append(line_plot("finding buckets per night", [
        ("findings", [(i, n["findings"]) for i, n in enumerate(tr)])],
        "night", "buckets", xcat=dates))
    if any(n.get("lines_pct") is not None for n in tr):
        h.append(line_plot("line coverage of the grown corpus per night", [
            ("all targets", [(i, n.get("lines_pct")) for i, n in enumerate(tr)])],
            "night", "% of lines", xcat=dates, zero=False))
    h.append('</div>')
    return h


def fuzz_section(rep):
    lf, afl = rep["fuzz"]["libfuzzer"], rep["fuzz"]["afl"]
    h = ['<h2 id="fuzz">Fuzzing: exec/s and coverage over time</h2>']
    if lf:
        h.append('<table id="fuzz-table"><tr><th>target</th><th>exec/s</th><th>cov</th>'
                 '<th>corpus</th><th>execs</th><th>seconds</th><th>log</th></tr>')
        for t, v in lf.items():
            f = v["final"]
            h.append('<tr class="fuzz-row"><td>%s</td><td class="n">%s</td><td class="n">%s</td>'
                     '<td class="n">%s</td><td class="n">%s</td><td class="n">%s</td>'
                     '<td>%s</td></tr>' % (
                         esc(t), fmt(f["exec_s"]), fmt(f["cov"]), fmt(f["corpus"]),
                         fmt(f["execs"]), fmt(f["seconds"]), link(v["log"], v.get("href"))))
        h.append('</table><div class="grid">')
        for t, v in lf.items():
            s = v["series"]
            h.append(line_plot("%s: exec/s" % t, [(t, [(p[0], p[3]) for p in s])],
                               "seconds", "exec/s"))
            h.append(line_plot("%s: coverage (cov)" % t, [(t, [(p[0], p[2]) for p in s])],
                               "seconds", "cov", zero=False))
        h.append('</div>')
    else:
        h.append('<p class="note">no libFuzzer log in this night (fuzzing skipped?)</p>')
    if afl:
        h.append('<h3>AFL++ (plot_data)</h3><div class="grid">')
        h.append(line_plot("AFL++ exec/s", [(k, [(p[0], p[3]) for p in v["series"]])
                                            for k, v in afl.items()], "seconds", "exec/s"))
        h.append(line_plot("AFL++ edges found", [(k, [(p[0], p[2]) for p in v["series"]])
                                                 for k, v in afl.items()], "seconds", "edges", zero=False))
        h.append('</div>')
    return h


def coverage_section(rep):
    cov = rep.get("coverage")
    if not cov:
        return []
    h = ['<h3 id="coverage">Coverage over the grown corpus (ci/coverage.sh)</h3>'
         '<table id="coverage-table"><tr><th>target</th><th>inputs</th><th>lines</th>'
         '<th>functions</th><th>regions</th><th>branches</th></tr>']
    for r in cov:
        h.append('<tr class="coverage-row"><td>%s</td><td class="n">%s</td>%s</tr>' % (
            link(r.get("target"), r.get("href")), fmt(r.get("inputs")), "".join(
                '<td class="n">%.2f%% (%s/%s)</td>' % (
                    r[k]["percent"], fmt(r[k]["covered"]), fmt(r[k]["count"]))
                for k in ("lines", "functions", "regions", "branches"))))
    h.append('</table>')
    return h


def stress_section(rep):
    h = ['<h2 id="stress">Stress: throughput and drain latency</h2>']
    if not rep["stress"]:
        return h + ['<p class="note">no stress summaries in this night</p>']
    h.append('<table id="stress-table"><tr><th>preset</th><th>binary</th><th>result</th>'
             '<th>ops/s</th><th>executions/s</th><th>drain p50 / p99 / max</th>'
             '<th>failures / reproduce</th><th>files</th></tr>')
    for r in rep["stress"]:
        un = (r.get("latency_ns") or {}).get("unload")
        dr = " / ".join(ns_label(un[k]) for k in ("p50", "p99", "max")) \
            if un and un.get("count") else "-"
        fl = "; ".join(r.get("failures") or []) or "none"
        files = " ".join(link(n, r.get(k)) for n, k in (("json", "href"), ("log", "log_href"),
                                                        ("repro", "repro_href"))
                         if r.get(k)) or "-"
        h.append('<tr class="stress-row"><td>%s</td><td>%s</td><td class="%s">%s</td>'
                 '<td class="n">%s</td><td class="n">%s</td><td>%s</td><td>%s%s</td>'
                 '<td>%s</td></tr>' % (
                     esc(r.get("preset")), esc(r.get("binary")),
                     "ok" if r.get("result") == "SUCCESS" and not r.get("interrupted") else "bad",
                     esc("INTERRUPTED" if r.get("interrupted") else r.get("result")),
                     fmt(r.get("ops_per_s")), fmt(r.get("executions_per_s")), dr, esc(fl),
                     " <code>%s</code>" % esc(r["command"]) if r.get("command") else "", files))
    h.append('</table><div class="grid">')
    # one panel per preset: a sanitizer preset runs orders of magnitude slower
    for preset in sorted({r.get("preset") for r in rep["stress"]}):
        h.append(bar_plot("stress throughput, %s (ops/s)" % preset,
                          [(str(r.get("binary")).replace("stress_", ""), r.get("ops_per_s"))
                           for r in rep["stress"] if r.get("preset") == preset], "ops/s"))
    for r in rep["stress"]:
        un = (r.get("latency_ns") or {}).get("unload")
        if un is not None:
            h.append(hist_plot("%s %s: drain (unload) latency" % (
                r.get("preset"), r.get("binary")), un))
    h.append('</div>')
    return h


def page(rep):
    h = ['<!doctype html><html lang="en"><head><meta charset="utf-8">',
         '<title>%s</title><style>%s</style></head><body>' % (esc(rep["title"]), CSS),
         '<meta id="render-check" data-plots-drawn="0" data-marks-drawn="0">']
    for section in (head_section, findings_section, trend_section, fuzz_section,
                    coverage_section, stress_section):
        h += section(rep)
    h.append(RENDER_CHECK)
    h.append('</body></html>')
    return "\n".join(h)
