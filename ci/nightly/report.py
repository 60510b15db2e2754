#!/usr/bin/env python3
"""ci/nightly/report.py - one self-contained HTML page and a JSON file from a night's outputs.

    ci/nightly/report.py --night DIR [--history DIR] [--date YYYY-MM-DD]
                         [--html FILE] [--json FILE] [--repro-tool PATH] [--title TEXT]

DIR holds what ci/nightly.sh collected (every part optional, a missing one is
said so on the page, never invented):
  fuzz/[PRESET/]<target>.log or fuzz/**/<target>/fuzz.log   libFuzzer output:
      the "#N ... cov: X ... exec/s: Y" lines, -fork's "#N: cov: X ... time: Ts"
      too; under a preset folder (asan, tsan, msan) named "<target> (PRESET)"
  afl/**/plot_data                                 AFL++ plot data
  stress/*.json                                    the stress binaries' --json
  triage.json, triage-<P>.json or triage.txt       kmgr-repro triage over the findings
  fuzz.json, fuzz-<PRESET>.json                    ci/fuzz.sh --json (exec/s; findings
                                                   when there is no triage)
  meta.json                                        {"minutes", "commit", "command", ...}
--history DIR: earlier nights' JSON files (this script's, "kind": "kmgr-nightly"),
DIR/<night>/nightly.json and DIR/trend.json, for the trend across nights and to
tell a new finding from a known one.  --trend FILE keeps every night's totals
and finding keys in one small JSON; --keep N then removes the night folders
beside DIR beyond the newest N (their figures stay in the trend).  Each finding
is replayed --reliability N times with --repro-tool when that tool runs here.
Default outputs: DIR/nightly.html, DIR/nightly.json.  Every log, crash file,
coverage page and stress JSON the page names is a link relative to the page.
Python 3 standard library only.  Exit status: 0 written, 2 bad usage.
"""
import argparse
import datetime
import os
import sys

# the modules live in ci/nightly/; no bytecode written into the source tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from nightly.collect import *  # noqa: E402,F401,F403
from nightly.svg import *  # noqa: E402,F401,F403
from nightly.page import *  # noqa: E402,F401,F403


def main(argv):
    ap = argparse.ArgumentParser(
        prog="report.py",
        description="One self-contained HTML page (inline SVG plots) and a JSON file from a "
                    "night's fuzz logs, AFL++ plot_data, stress --json outputs and kmgr-repro "
                    "triage; --history adds the trend across nights.")
    ap.add_argument("--night", required=True, help="the night's folder (see the module doc)")
    ap.add_argument("--history", help="folder of earlier nights' JSON files")
    ap.add_argument("--date", help="YYYY-MM-DD (default: meta.json's, else today, UTC)")
    ap.add_argument("--html", help="output page (default NIGHT/nightly.html)")
    ap.add_argument("--json", help="output JSON (default NIGHT/nightly.json)")
    ap.add_argument("--repro-tool", default="kmgr-repro",
                    help="the kmgr-repro path used in reproduce commands")
    ap.add_argument("--title", default="kmgr-fuzz nightly")
    ap.add_argument("--trend", help="the trend file to read and update (every night's totals "
                    "and finding keys)")
    ap.add_argument("--keep", type=int, default=0,
                    help="remove the night folders beside --night (its parent's) beyond the "
                         "newest N (needs --trend; default 0: keep all)")
    ap.add_argument("--reliability", type=int, default=10,
                    help="replay each fuzz finding N times with --repro-tool (0: do not)")
    a = ap.parse_args(argv)
    if a.keep < 0 or a.reliability < 0:
        ap.error("--keep and --reliability: a whole number >= 0")
    if a.keep and not a.trend:
        ap.error("--keep needs --trend (which keeps the figures of the nights it removes)")
    if not os.path.isdir(a.night):
        ap.error("--night %s: not a directory" % a.night)
    if a.history and not os.path.isdir(a.history):
        ap.error("--history %s: not a directory" % a.history)
    meta = load_json(os.path.join(a.night, "meta.json")) or {}
    date = a.date or meta.get("date") or datetime.datetime.utcnow().strftime("%Y-%m-%d")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
        ap.error("--date: YYYY-MM-DD")
    lf, afl = collect_fuzz(a.night)
    stress = collect_stress(a.night)
    findings = collect_triage(a.night, a.repro_tool) or fuzz_json_findings(a.night, a.repro_tool)
    findings += stress_findings(stress, sum(f.get("count", 1) for f in findings
                                            if f.get("source", "").startswith("stress")))
    findings = merge_by_key(findings)
    rep = {"kind": KIND, "version": 1, "date": date, "run": meta.get("run") or date,
           "title": "%s %s" % (a.title, meta.get("run") or date),
           "generated": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M:%S UTC"),
           "meta": meta, "fuzz": {"libfuzzer": lf, "afl": afl}, "findings": findings,
           "stress": stress}
    cj = load_json(os.path.join(a.night, "coverage", "summary.json"))
    if isinstance(cj, dict) and isinstance(cj.get("targets"), list):
        rep["coverage"] = cj["targets"]
        rep["coverage_dir"] = os.path.join(a.night, "coverage")
    hist = collect_history(a.history, a.trend, rep["run"]) if a.history else []
    rep["not_seen"] = mark_new(findings, hist, rep["run"])
    html_out = a.html or os.path.join(a.night, "nightly.html")
    json_out = a.json or os.path.join(a.night, "nightly.json")
    add_links(rep, a.night, os.path.dirname(os.path.abspath(html_out)))
    measure_reliability(findings, a.repro_tool, a.reliability)
    rep["trend"] = hist + [night_totals(rep)]
    if a.trend:
        write_trend(a.trend, rep["trend"])
    if a.keep:
        rep["keep"] = a.keep
        rep["pruned"] = prune_nights(os.path.dirname(os.path.abspath(a.night)), a.keep, a.night)
    for path, text in ((json_out, json.dumps(rep, indent=1)), (html_out, page(rep))):
        write_whole(path, text)
    print("nightly-report: %s (%d libFuzzer target(s), %d AFL++ instance(s), %d finding "
          "bucket(s), %d new, %d stress run(s), %d night(s) in the trend%s) and %s" % (
              html_out, len(lf), len(afl), len(findings), sum(1 for f in findings if f["new"]),
              len(stress), len(rep["trend"]),
              ", %d old night(s) pruned" % len(rep["pruned"]) if rep.get("pruned") else "",
              json_out))
    return 0


def write_whole(path, text):
    """PATH holds TEXT whole or is left as it was (a full disk)."""
    tmp = "%s.tmp%d" % (path, os.getpid())
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except OSError as e:
        # a full disk, a read-only folder: one line, no traceback
        sys.stderr.write("nightly-report: FAILED: %s%s\n" % (
            e.strerror or e, ": %s" % e.filename if e.filename else ""))
        sys.exit(1)
