#!/usr/bin/env python3
"""ci/nightly-report.py - one self-contained HTML page and a JSON file from a night's outputs.

    ci/nightly-report.py --night DIR [--history DIR] [--date YYYY-MM-DD]
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
import glob
import html
import json
import math
import os
import re
import shutil
import subprocess
import sys

KIND = "kmgr-nightly"
TREND_KIND = "kmgr-nightly-trend"
def read_targets():
    """The fuzz targets, from the one registry the build and ci/ read."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "targets",
                        "TARGETS")
    with open(path, encoding="utf-8") as f:
        return tuple(line.split()[0] for line in f if line.strip() and not line.startswith("#"))


TARGETS = read_targets()
PRESETS = ("asan", "tsan", "msan")
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
          "#17becf", "#7f7f7f", "#bcbd22")
MAX_POINTS = 400

# ------------------------------------------------------------------ parsing

LF_EXECS = re.compile(r"#(\d+)")
LF_COV = re.compile(r"\bcov: (\d+)")
LF_FT = re.compile(r"\bft: (\d+)")
LF_CORP = re.compile(r"\bcorp: (\d+)")
LF_EPS = re.compile(r"exec/s:? (\d+)")
LF_TIME = re.compile(r"\btime: (\d+)s")
LF_AVG = re.compile(r"average_exec_per_sec:\s*(\d+)")


def downsample(pts, n=MAX_POINTS):
    """At most n points, evenly spread, the first and the last kept."""
    if len(pts) <= n:
        return pts
    step = (len(pts) - 1) / (n - 1)
    return [pts[round(i * step)] for i in range(n)]


def parse_libfuzzer(path):
    """Points (t_s, execs, cov, exec_s, corpus) of one libFuzzer log.

    Time comes from -fork's "time: Ns" when given, else execs / exec/s
    (libFuzzer's exec/s is the run's average so far; 0 in the first second).
    A log holding several runs (the exec counter starts again) is laid end
    to end."""
    pts, offset, last_t, last_n = [], 0.0, 0.0, -1
    avg = None
    with open(path, errors="replace") as f:
        for line in f:
            m = LF_AVG.search(line)
            if m:
                avg = int(m.group(1))
                continue
            c, e, n = LF_COV.search(line), LF_EPS.search(line), LF_EXECS.search(line)
            if not (c and e and n):
                continue
            execs, eps = int(n.group(1)), int(e.group(1))
            tm = LF_TIME.search(line)
            if execs < last_n:
                offset = last_t
            t = float(tm.group(1)) if tm else (execs / eps if eps else 0.0)
            last_t, last_n = offset + t, execs
            corp = LF_CORP.search(line)
            pts.append([round(last_t, 2), execs, int(c.group(1)), eps,
                        int(corp.group(1)) if corp else None])
    if not pts:
        return None
    final = {"seconds": pts[-1][0], "execs": pts[-1][1], "cov": max(p[2] for p in pts),
             "exec_s": avg if avg is not None else pts[-1][3], "corpus": pts[-1][4]}
    return {"engine": "libfuzzer", "log": path, "final": final, "series": downsample(pts)}


def parse_afl(path):
    """Points (t_s, execs, edges, exec_s, corpus) of one AFL++ plot_data."""
    cols, rows = None, []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("#"):
                cols = [c.strip() for c in line[1:].split(",")]
                continue
            if cols and line:
                vals = [v.strip() for v in line.split(",")]
                if len(vals) >= len(cols):
                    rows.append(dict(zip(cols, vals)))
    if not rows:
        return None

    def num(r, *keys):
        for k in keys:
            if k in r:
                try:
                    return float(r[k].rstrip("%"))
                except ValueError:
                    return None
        return None

    t0 = num(rows[0], "relative_time", "unix_time") or 0.0
    pts = []
    for r in rows:
        t = (num(r, "relative_time", "unix_time") or 0.0) - (t0 if "unix_time" in r else 0.0)
        edges = num(r, "edges_found")
        if edges is None:
            edges = num(r, "map_size")  # older AFL++: a percentage of the map
        pts.append([t, int(num(r, "total_execs") or 0), edges, num(r, "execs_per_sec") or 0.0,
                    int(num(r, "corpus_count", "paths_total") or 0)])
    final = {"seconds": pts[-1][0], "execs": pts[-1][1], "cov": pts[-1][2],
             "exec_s": pts[-1][3], "corpus": pts[-1][4]}
    return {"engine": "afl++", "log": path, "final": final, "series": downsample(pts)}


def target_of(path, root):
    """The target a log belongs to: a path component (or the file's stem)
    naming a known target, else the parent folder's name."""
    rel = os.path.relpath(path, root)
    parts = rel.replace("\\", "/").split("/")
    stem = os.path.splitext(parts[-1])[0]
    for p in reversed(parts[:-1] + [stem]):
        p = p[5:] if p.startswith("fuzz_") else p
        if p in TARGETS:
            return p
    return stem if stem not in ("fuzz", "plot_data") else (parts[-2] if len(parts) > 1 else stem)


def with_preset(target, preset):
    return "%s (%s)" % (target, preset) if preset else target


def collect_fuzz(night):
    out = {}
    for p in sorted(glob.glob(os.path.join(night, "fuzz", "**", "*.log"), recursive=True)):
        if os.path.basename(p) in ("merge.log",):
            continue
        r = parse_libfuzzer(p)
        if r:
            first = os.path.relpath(p, os.path.join(night, "fuzz")).split(os.sep)[0]
            key = with_preset(target_of(p, os.path.join(night, "fuzz")),
                              first if first in PRESETS else None)
            while key in out:
                key += "'"
            out[key] = r
    afl = {}
    for p in sorted(glob.glob(os.path.join(night, "afl", "**", "plot_data"), recursive=True)):
        r = parse_afl(p)
        if r:
            inst = os.path.basename(os.path.dirname(p))
            afl["%s/%s" % (target_of(p, os.path.join(night, "afl")), inst)] = r
    # ci/fuzz.sh --json: its exec/s is the run's own figure (weighted over
    # the restarts after a finding, all workers in fork mode)
    for preset, t in fuzz_json_targets(night):
        v = out.get(with_preset(t.get("target"), preset))
        if v and t.get("exec_per_s") is not None:
            v["final"]["exec_s"] = t["exec_per_s"]
        if v and t.get("corpus") is not None:
            v["final"]["corpus"] = t["corpus"]
    return out, afl


def fuzz_json_targets(night):
    """(preset or None, record) for each per-target record of ci/fuzz.sh
    --json (fuzz.json, fuzz-<preset>.json); [] when absent or odd."""
    out = []
    for p in sorted(glob.glob(os.path.join(night, "fuzz*.json"))):
        m = re.fullmatch(r"fuzz(?:-(\w+))?\.json", os.path.basename(p))
        fj = load_json(p) if m else None
        ts = fj.get("targets") if isinstance(fj, dict) else None
        if isinstance(ts, list):
            out += [(m.group(1), t) for t in ts if isinstance(t, dict)]
    return out


def fuzz_json_findings(night, tool):
    """Findings as ci/fuzz.sh --json saw them (one replay each), grouped by
    signature: the fallback when there is no triage output."""
    groups = {}
    for _, t in fuzz_json_targets(night):
        for f in t.get("findings") if isinstance(t.get("findings"), list) else []:
            if not isinstance(f, dict):
                continue
            g = groups.setdefault(f.get("signature") or "(no signature)",
                                  {"bucket": f.get("signature") or "(no signature)", "count": 0,
                                   "smallest": f.get("file"), "source": "fuzz %s" % t.get("target", ""),
                                   "reproduces": True, "reproduce": f.get("reproduce")})
            g["count"] += 1
    return list(groups.values())


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def collect_stress(night):
    runs = []
    for p in sorted(glob.glob(os.path.join(night, "stress", "*.json"))):
        j = load_json(p)
        stem = os.path.splitext(os.path.basename(p))[0]
        preset = stem.split("-", 1)[0] if "-" in stem else ""
        if not isinstance(j, dict) or "binary" not in j:
            runs.append({"file": p, "binary": stem, "preset": preset, "result": "NO SUMMARY",
                         "failures": ["unreadable JSON (the run crashed?): see its log"]})
            continue
        r = {k: j.get(k) for k in ("binary", "result", "exit", "command", "ops", "ops_per_s",
                                    "elapsed_s", "drains", "stall", "failures", "repro",
                                    "latency_ns")}
        r["preset"] = preset
        r["file"] = p
        for sub in j.values():
            if isinstance(sub, dict) and "executions_per_s" in sub:
                r["executions_per_s"] = sub["executions_per_s"]
        runs.append(r)
    return runs


TRIAGE_LINE = re.compile(r"^\s*(\d+)\s+(.*?)\s+smallest: (.*) \((\d+) bytes\)\s*$")


def collect_triage(night, tool):
    """Buckets from kmgr-repro triage: its --json when there is one, else
    the text lines "COUNT  SIGNATURE  smallest: PATH (N bytes)"."""
    buckets = []
    files = sorted(glob.glob(os.path.join(night, "triage.json")) +
                   glob.glob(os.path.join(night, "triage-*.json")))
    for path in files:
        j = load_json(path)
        m = re.fullmatch(r"triage-(\w+)\.json", os.path.basename(path))
        source = "fuzz (%s)" % m.group(1) if m else "fuzz"
        items = (j.get("buckets", j) if isinstance(j, dict) else j) if j is not None else None
        for b in items if isinstance(items, list) else []:
            if not isinstance(b, dict):
                continue
            # kmgr-repro triage --json: signature, dedup_token, count,
            # example, example_bytes, target, reproduce
            sig = str(b.get("signature") or "?")
            try:
                count = int(b.get("count", 1))
            except (TypeError, ValueError):
                count = 1
            buckets.append({"bucket": sig, "count": count,
                            "smallest": str(b.get("example") or ""),
                            "size": b.get("example_bytes"), "target": b.get("target"),
                            "dedup_token": b.get("dedup_token"), "key": b.get("key"),
                            "reproduce": b.get("reproduce"), "source": source,
                            **{k: b[k] for k in ("crash_type", "crash_state", "frames")
                               if b.get(k)}})
    if not files:
        p = os.path.join(night, "triage.txt")
        if os.path.exists(p):
            for line in open(p, errors="replace"):
                m = TRIAGE_LINE.match(line)
                if m:
                    buckets.append({"bucket": m.group(2), "count": int(m.group(1)),
                                    "smallest": m.group(3), "size": int(m.group(4)),
                                    "source": "fuzz"})
    for b in buckets:
        b["reproduces"] = not b["bucket"].startswith("(")
        if not b.get("reproduce"):
            b["reproduce"] = "%s replay %s --times 10" % (tool, b["smallest"])
    return buckets


def stress_findings(runs):
    out = []
    for r in runs:
        if r.get("result") == "SUCCESS":
            continue
        fails = r.get("failures") or ["FAILURE without a message"]
        cmd = r.get("command") or ""
        rep = r.get("repro") or ""
        out.append({"bucket": "%s: %s" % (r.get("binary"), fails[0]), "count": len(fails),
                    "smallest": rep, "source": "stress %s" % r.get("preset", ""),
                    "reproduces": True,
                    "reproduce": ("%s --replay %s" % (cmd.split()[0], rep)) if rep and cmd
                    else cmd})
    return out


SIG_FRAMES = re.compile(r"^(.*?) in (\S.*)$")
REPRODUCED = re.compile(r"reproduced (\d+)/(\d+)")


def crash_state(f):
    """(crash type, top frames) of a finding: triage's own fields when it
    gives them, else read off its signature "TYPE in F1 < F2 < F3"."""
    frames = f.get("frames") or f.get("crash_state")
    if frames:
        if isinstance(frames, str):
            frames = [x.strip() for x in re.split(r"\n|<", frames) if x.strip()]
        return str(f.get("crash_type") or f["bucket"].split(" in ")[0]), [str(x) for x in frames][:3]
    m = SIG_FRAMES.match(f["bucket"])
    if not m or f["source"].startswith("stress"):
        return f["bucket"], []
    return m.group(1), [x.strip() for x in m.group(2).split("<")][:3]


def finding_key(f):
    """What makes two nights' findings the same bug: triage's bucket key
    (the free site of a use-after-free, ...), else the crash state."""
    return str(f.get("key") or f.get("dedup_token") or f.get("bucket") or "")


def mark_new(findings, trend):
    """Each finding new, or known since the first night (oldest first in
    trend) whose finding keys hold its key."""
    first = {}
    for n in trend:
        for k in n.get("finding_keys") or []:
            first.setdefault(k, n["run"])
    for f in findings:
        f["key"] = finding_key(f)
        f["crash_type"], f["frames"] = crash_state(f)
        f["first_seen"] = first.get(f["key"])
        f["new"] = bool(f.get("reproduces")) and f["key"] not in first


def runnable(tool):
    if os.sep in tool:
        return os.path.isfile(tool) and os.access(tool, os.X_OK)
    return shutil.which(tool) is not None


def measure_reliability(findings, default_tool, times):
    """Replays each fuzz finding's smallest file `times` times: "k/N", with
    the kmgr-repro its reproduce command names (the preset that found it),
    else default_tool."""
    if times <= 0:
        return
    for f in findings:
        path, target = f.get("path"), f.get("target")
        if not f["source"].startswith("fuzz") or not path or not os.path.isfile(path):
            continue
        words = (f.get("reproduce") or "").split()
        tool = words[0] if words and runnable(words[0]) else default_tool
        if not runnable(tool):
            continue
        cmd = [tool, "replay", path, "--times", str(times)] + (["--target", target] if target else [])
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                               timeout=60 + 30 * times)
        except (OSError, subprocess.TimeoutExpired):
            f["reliability"] = "timed out"
            continue
        m = REPRODUCED.search(r.stdout + r.stderr)
        f["reliability"] = "%s/%s" % m.groups() if m else "?"


def href(path, page_dir):
    """A link to path relative to the page, None when there is no such file."""
    if not path or not os.path.exists(path):
        return None
    return os.path.relpath(os.path.abspath(path), os.path.abspath(page_dir))


def resolve(path, night):
    """A path as the night wrote it: absolute, or relative to the night."""
    if not path or os.path.isabs(path) or not os.path.exists(os.path.join(night, path)):
        return path
    return os.path.join(night, path)


PART_LOGS = {"fuzz": "fuzz.log", "coverage": "coverage.log", "triage": "triage.err",
             "mutants": "mutants.log", "afl": "afl.log"}


def part_log(night, name):
    """The log ci/nightly.sh wrote for a part (logs/), None if it has none."""
    if name in PART_LOGS:
        f = PART_LOGS[name]
    elif name.startswith("fuzz_"):
        f = "fuzz-%s.log" % name[5:]
    elif name.startswith("triage_"):
        f = "triage-%s.err" % name[7:]
    elif name.startswith("build_"):
        f = "build-%s.log" % name[6:]
    elif name.startswith("stress_"):
        f = "%s.log" % name[7:].replace("_", "-", 1)
    else:
        return None
    p = os.path.join(night, "logs", f)
    return p if os.path.exists(p) else None


def add_links(rep, night, page_dir):
    for v in rep["fuzz"]["libfuzzer"].values():
        v["href"] = href(v["log"], page_dir)
    for f in rep["findings"]:
        f["path"] = resolve(f.get("smallest"), night)
        f["href"] = href(f["path"], page_dir)
    for r in rep["stress"]:
        r["href"] = href(r["file"], page_dir)
        b = str(r.get("binary") or "").replace("stress_", "")
        r["log_href"] = href(os.path.join(night, "logs", "%s-%s.log" % (r["preset"], b)), page_dir)
    for r in rep.get("coverage") or []:
        r["href"] = href(os.path.join(rep["coverage_dir"], str(r.get("target")), "html",
                                      "index.html"), page_dir)
    rep["part_hrefs"] = {k: href(part_log(night, k), page_dir)
                         for k in (rep["meta"].get("parts") or {})}


def run_id(j):
    """A night's identity: meta's run stamp (several runs a day), else its date."""
    return str(j.get("run") or j.get("date") or "")


def collect_history(hdir, trend_file, this_run):
    """Earlier nights' totals, oldest first: from their JSON files
    (DIR/*.json and DIR/<night>/nightly.json, not the nights' other JSON
    files: coverage exports run to megabytes) and from the trend file,
    which keeps the nights --keep removed."""
    nights = {}
    for p in sorted(glob.glob(os.path.join(hdir, "*.json")) +
                    glob.glob(os.path.join(hdir, "*", "nightly.json"))):
        j = load_json(p)
        if isinstance(j, dict) and j.get("kind") == KIND and run_id(j) != this_run:
            nights[run_id(j)] = night_totals(j)
    t = load_json(trend_file) if trend_file else None
    if isinstance(t, dict) and t.get("kind") == TREND_KIND and isinstance(t.get("nights"), list):
        for n in t["nights"]:
            if isinstance(n, dict) and n.get("run") and n["run"] != this_run:
                nights.setdefault(n["run"], n)
    return [nights[k] for k in sorted(nights)]


def write_trend(path, trend):
    """The trend file, written whole or not at all."""
    tmp = "%s.tmp%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump({"kind": TREND_KIND, "nights": trend}, f, indent=1)
    os.replace(tmp, path)


def prune_nights(hdir, keep, this_night):
    """Removes the night folders of hdir beyond the newest `keep` (this
    night counted); only folders holding this script's nightly.json."""
    folders = []
    for p in glob.glob(os.path.join(hdir, "*", "nightly.json")):
        d = os.path.dirname(p)
        j = load_json(p)
        if isinstance(j, dict) and j.get("kind") == KIND and \
                os.path.realpath(d) != os.path.realpath(this_night):
            folders.append((run_id(j), d))
    folders.sort()
    gone = folders[:max(0, len(folders) - (keep - 1))]
    for _, d in gone:
        shutil.rmtree(d)
    return [d for _, d in gone]


def night_totals(j):
    return {"date": j.get("date"), "run": run_id(j),
            "finding_keys": sorted({finding_key(f) for f in j.get("findings", [])
                                    if f.get("reproduces")}),
            "fuzz": {t: {"exec_s": v["final"].get("exec_s"), "cov": v["final"].get("cov")}
                     for t, v in j.get("fuzz", {}).get("libfuzzer", {}).items()},
            "stress": {"%s/%s" % (r.get("preset"), r.get("binary")): r.get("ops_per_s")
                       for r in j.get("stress", []) if r.get("ops_per_s") is not None},
            "findings": sum(1 for f in j.get("findings", []) if f.get("reproduces")),
            "lines_pct": next((r["lines"]["percent"] for r in j.get("coverage") or []
                               if r.get("target") == "all"), None)}


# ------------------------------------------------------------------ plots

def color_of(name, i):
    """A target keeps its colour on every plot of the page."""
    base = name.split("/")[0].split(" (")[0].rstrip("'")
    if base in TARGETS:
        # a second preset of the same target: the palette's other half
        other = " (" in name and not name.endswith(" (asan)")
        return COLORS[(TARGETS.index(base) + (len(TARGETS) if other else 0)) % len(COLORS)]
    return COLORS[(i + len(TARGETS)) % len(COLORS)] if i < len(COLORS) - len(TARGETS) \
        else COLORS[i % len(COLORS)]


def nice_ticks(lo, hi, n=5):
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw), default=10 * mag)
    start = math.floor(lo / step) * step
    ticks, v = [], start
    while v <= hi + step * 0.5:
        ticks.append(v)
        v += step
    return ticks


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1e6:
        return "%.3gM" % (v / 1e6)
    if a >= 1e4:
        return "%.3gk" % (v / 1e3)
    if a == int(a):
        return "%d" % v
    return "%.3g" % v


def svg_frame(w, h, title, xlabel, ylabel, kind, nseries, npoints, body):
    return ('<svg class="plot" data-kind="%s" data-series="%d" data-points="%d" '
            'xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'role="img" aria-label="%s"><rect width="100%%" height="100%%" fill="#fff"/>'
            '<text x="%d" y="16" text-anchor="middle" font-size="13" font-weight="bold">%s</text>'
            '<text x="%d" y="%d" text-anchor="middle" font-size="11">%s</text>'
            '<text x="12" y="%d" font-size="11" transform="rotate(-90 12 %d)" '
            'text-anchor="middle">%s</text>%s</svg>' % (
                kind, nseries, npoints, w, h, w, h, html.escape(title), w // 2, html.escape(title),
                w // 2, h - 4, html.escape(xlabel), h // 2, h // 2, html.escape(ylabel), body))


def line_plot(title, series, xlabel, ylabel, w=380, h=210, xcat=None, logy=False):
    """series: [(name, [(x, y), ...])]; xcat: category labels for x = 0..n-1;
    logy: a log10 y axis (figures orders of magnitude apart; y <= 0 dropped)."""
    series = [(n, [(x, y) for x, y in pts if x is not None and y is not None])
              for n, pts in series]
    if logy:
        series = [(n, [(x, math.log10(y)) for x, y in pts if y > 0]) for n, pts in series]
        title += " (log scale)"
    series = [(n, pts) for n, pts in series if pts]
    npts = sum(len(p) for _, p in series)
    if not npts:
        return empty_plot(title, "no data")
    L, R, B = 58, 12, 40
    T = 30 + 13 * len(series)  # the legend sits above the plot area, not over it
    h += 13 * max(0, len(series) - 2)
    xs = [x for _, p in series for x, _ in p]
    ys = [y for _, p in series for _, y in p]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x0, x1 = x0 - 1, x1 + 1
    if logy:
        yt = list(range(math.floor(min(ys)), max(math.ceil(max(ys)), math.floor(min(ys)) + 1) + 1))
    else:
        yt = nice_ticks(min(0, min(ys)), max(ys))
    y0, y1 = yt[0], yt[-1]
    yfmt = (lambda v: fmt(10 ** v)) if logy else fmt

    def X(x):
        return L + (x - x0) / (x1 - x0) * (w - L - R)

    def Y(y):
        return h - B - (y - y0) / (y1 - y0) * (h - T - B)

    body = []
    for v in yt:
        body.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                    '<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>' % (
                        L, w - R, Y(v), Y(v), L - 4, Y(v) + 3, yfmt(v)))
    if xcat:
        for i, lab in enumerate(xcat):
            body.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>' % (
                X(i), h - B + 14, html.escape(lab)))
    else:
        for v in nice_ticks(x0, x1, 6):
            if x0 <= v <= x1:
                body.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>'
                            % (X(v), h - B + 14, fmt(v)))
    body.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>' % (L, w - R, h - B, h - B))
    body.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>' % (L, L, T, h - B))
    for i, (name, pts) in enumerate(series):
        col = color_of(name, i)
        d = " ".join("%.1f,%.1f" % (X(x), Y(y)) for x, y in pts)
        body.append('<polyline class="series" data-name="%s" data-n="%d" fill="none" '
                    'stroke="%s" stroke-width="2" points="%s"/>' % (
                        html.escape(name), len(pts), col, d))
        if len(pts) <= 40:
            body += ['<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>' % (X(x), Y(y), col)
                     for x, y in pts]
        ly = 22 + 13 * i
        body.append('<rect x="%d" y="%d" width="10" height="10" fill="%s"/>'
                    '<text x="%d" y="%d" font-size="10">%s (last %s)</text>' % (
                        L + 8, ly, col, L + 22, ly + 9, html.escape(name), yfmt(pts[-1][1])))
    return svg_frame(w, h, title, xlabel, ylabel, "line", len(series), npts, "".join(body))


def bar_plot(title, bars, ylabel, w=380, h=210, logx_labels=False, xlabel=""):
    """bars: [(label, value)]."""
    bars = [(lab, v) for lab, v in bars if v is not None]
    if not bars:
        return empty_plot(title, "no data")
    L, R, T, B = 58, 12, 26, 70 if not logx_labels else 40
    yt = nice_ticks(0, max(v for _, v in bars))
    y1 = yt[-1] or 1
    bw = (w - L - R) / len(bars)
    body = []
    for v in yt:
        y = h - B - v / y1 * (h - T - B)
        body.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>'
                    '<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>' % (
                        L, w - R, y, y, L - 4, y + 3, fmt(v)))
    every = max(1, math.ceil(len(bars) / (8 if logx_labels else 12)))
    for i, (lab, v) in enumerate(bars):
        x = L + i * bw
        bh = v / y1 * (h - T - B)
        col = COLORS[0] if logx_labels else COLORS[i % len(COLORS)]
        body.append('<rect class="bar" data-value="%s" x="%.1f" y="%.1f" width="%.1f" '
                    'height="%.1f" fill="%s"><title>%s: %s</title></rect>' % (
                        v, x + bw * 0.1, h - B - bh, max(bw * 0.8, 1), bh, col,
                        html.escape(lab), fmt(v)))
        if i % every == 0:
            if logx_labels:
                body.append('<text x="%.1f" y="%d" font-size="9" text-anchor="middle">%s</text>'
                            % (x + bw / 2, h - B + 12, html.escape(lab)))
            else:
                body.append('<text x="%.1f" y="%d" font-size="10" text-anchor="end" '
                            'transform="rotate(-30 %.1f %d)">%s</text>' % (
                                x + bw / 2, h - B + 12, x + bw / 2, h - B + 12, html.escape(lab)))
    body.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>' % (L, w - R, h - B, h - B))
    return svg_frame(w, h, title, xlabel, ylabel, "bar", 1, len(bars), "".join(body))


def empty_plot(title, why, w=380, h=120):
    return ('<svg class="plot-empty" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">'
            '<rect width="100%%" height="100%%" fill="#f6f6f6"/>'
            '<text x="%d" y="20" text-anchor="middle" font-size="13" font-weight="bold">%s</text>'
            '<text x="%d" y="%d" text-anchor="middle" font-size="12" fill="#888">%s</text></svg>'
            % (w, h, w // 2, html.escape(title), w // 2, h // 2 + 10, html.escape(why)))


def ns_label(ns):
    for unit, div in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= div:
            return "%.3g%s" % (ns / div, unit)
    return "%dns" % ns


def hist_plot(title, lat):
    """Drain latency: the log-linear buckets folded into powers of two."""
    b = lat.get("buckets") if lat else None
    if not b:
        if lat and lat.get("count"):
            return bar_plot(title + " (percentiles only)",
                            [("p50", lat["p50"] / 1e3), ("p99", lat["p99"] / 1e3),
                             ("max", lat["max"] / 1e3)], "us")
        return empty_plot(title, "no samples")
    folded = {}
    for lo, n in b:
        e = int(math.log2(lo)) if lo > 0 else 0
        folded[e] = folded.get(e, 0) + n
    lo_e, hi_e = min(folded), max(folded)
    bars = [(ns_label(2 ** e), folded.get(e, 0)) for e in range(lo_e, hi_e + 1)]
    return bar_plot(title, bars, "samples", logx_labels=True, xlabel="latency (bucket lower bound)")


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
// series (ci/report-check.sh reads this from the dumped DOM).
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
    if not f.get("reproduces"):
        return '<td class="note">does not reproduce</td>'
    if f.get("new"):
        return '<td class="new">new</td>'
    return '<td class="known">known since %s</td>' % esc(f.get("first_seen"))


def findings_section(rep):
    h = ['<h2 id="findings-h">Findings by bucket</h2>']
    if not rep["findings"]:
        return h + ['<p class="note" id="no-findings">no findings</p>']
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
        "night", "cov", xcat=dates))
    h.append(line_plot("stress ops/s per night", [
        (k, [(i, n["stress"].get(k)) for i, n in enumerate(tr)]) for k in keys],
        "night", "ops/s", xcat=dates, logy=True))
    h.append(line_plot("finding buckets per night", [
        ("findings", [(i, n["findings"]) for i, n in enumerate(tr)])],
        "night", "buckets", xcat=dates))
    if any(n.get("lines_pct") is not None for n in tr):
        h.append(line_plot("line coverage of the grown corpus per night", [
            ("all targets", [(i, n.get("lines_pct")) for i, n in enumerate(tr)])],
            "night", "% of lines", xcat=dates))
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
                               "seconds", "cov"))
        h.append('</div>')
    else:
        h.append('<p class="note">no libFuzzer log in this night (fuzzing skipped?)</p>')
    if afl:
        h.append('<h3>AFL++ (plot_data)</h3><div class="grid">')
        h.append(line_plot("AFL++ exec/s", [(k, [(p[0], p[3]) for p in v["series"]])
                                            for k, v in afl.items()], "seconds", "exec/s"))
        h.append(line_plot("AFL++ edges found", [(k, [(p[0], p[2]) for p in v["series"]])
                                                 for k, v in afl.items()], "seconds", "edges"))
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
        files = " ".join(link(n, r.get(k)) for n, k in (("json", "href"), ("log", "log_href"))
                         if r.get(k)) or "-"
        h.append('<tr class="stress-row"><td>%s</td><td>%s</td><td class="%s">%s</td>'
                 '<td class="n">%s</td><td class="n">%s</td><td>%s</td><td>%s%s</td>'
                 '<td>%s</td></tr>' % (
                     esc(r.get("preset")), esc(r.get("binary")),
                     "ok" if r.get("result") == "SUCCESS" else "bad", esc(r.get("result")),
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


def main(argv):
    ap = argparse.ArgumentParser(
        prog="nightly-report.py",
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
    findings += stress_findings(stress)
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
    mark_new(findings, hist)
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
    with open(json_out, "w") as f:
        json.dump(rep, f, indent=1)
    with open(html_out, "w") as f:
        f.write(page(rep))
    print("nightly-report: %s (%d libFuzzer target(s), %d AFL++ instance(s), %d finding "
          "bucket(s), %d new, %d stress run(s), %d night(s) in the trend%s) and %s" % (
              html_out, len(lf), len(afl), len(findings), sum(1 for f in findings if f["new"]),
              len(stress), len(rep["trend"]),
              ", %d old night(s) pruned" % len(rep["pruned"]) if rep.get("pruned") else "",
              json_out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
