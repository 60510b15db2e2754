"""ci/nightly/collect.py - the nightly report's inputs: a night's logs, JSON
files and triage read into one dict, the history of earlier nights, the
findings' replays (ci/nightly/report.py assembles; docstring there)."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys

KIND = "kmgr-nightly"
TREND_KIND = "kmgr-nightly-trend"


def read_targets():
    """The fuzz targets, from the one registry the build and ci/ read."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz",
                        "targets", "TARGETS")
    with open(path, encoding="utf-8") as f:
        return tuple(line.split()[0] for line in f if line.strip() and not line.startswith("#"))


TARGETS = read_targets()
PRESETS = ("asan", "tsan", "msan")
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
                                    "latency_ns", "died", "interrupted", "triage_log")}
        r["preset"] = preset
        r["file"] = p
        for sub in j.values():
            if isinstance(sub, dict) and "executions_per_s" in sub:
                r["executions_per_s"] = sub["executions_per_s"]
        runs.append(r)
    return runs


TRIAGE_LINE = re.compile(r"^\s*(\d+)\s+(.*?)\s+smallest: (.*) \((\d+) bytes\)\s*$")


def triage_source(name):
    """The source of a triage file's findings: triage-P.json a fuzz preset's
    (fuzz (P)), triage-stress-P.json the dead stress runs of preset P
    (stress (P)), triage-stress.json (older nights) stress."""
    m = re.fullmatch(r"triage-(stress-)?(\w+)\.json", name)
    if not m:
        return "fuzz"
    if m.group(1):
        return "stress (%s)" % m.group(2)
    return "stress" if m.group(2) == "stress" else "fuzz (%s)" % m.group(2)


def collect_triage(night, tool):
    """Buckets from kmgr-repro triage: its --json when there is one, else
    the text lines "COUNT  SIGNATURE  smallest: PATH (N bytes)".  An
    interrupted night's (meta.json "interrupted") are marked partial."""
    buckets = []
    files = sorted(glob.glob(os.path.join(night, "triage.json")) +
                   glob.glob(os.path.join(night, "triage-*.json")))
    meta = load_json(os.path.join(night, "meta.json"))
    partial = isinstance(meta, dict) and bool(meta.get("interrupted"))
    for path in files:
        j = load_json(path)
        source = triage_source(os.path.basename(path))
        items = (j.get("buckets", j) if isinstance(j, dict) else j) if j is not None else None
        for b in items if isinstance(items, list) else []:
            if not isinstance(b, dict):
                continue
            # kmgr-repro triage --json: signature, dedup_token, count,
            # example, example_bytes, target, reproduce
            sig = str(b.get("signature") or "?")
            if source.startswith("stress") and sig.startswith("("):
                # a triage that does not read stress logs yet ("(unusable
                # file)", "(no failure)"): the runs keep their own rows
                continue
            try:
                count = int(b.get("count", 1))
            except (TypeError, ValueError):
                count = 1
            # a stress log's bucket: its repro file is what reproduces it
            # (the link), the log is the report
            buckets.append({"bucket": sig, "count": count,
                            "smallest": str(b.get("repro_file") or b.get("example") or ""),
                            "size": b.get("example_bytes"), "target": b.get("target"),
                            "dedup_token": b.get("dedup_token"), "key": b.get("key"),
                            "reproduce": b.get("reproduce"), "source": source,
                            **({"partial": True} if partial else {}),
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


def stress_findings(runs, triaged=0):
    """A finding per failed stress run; runs whose log nightly.sh sent to
    triage (those that died, with no --json summary of their own, and those
    that failed a check: "triage_log") are left to triage-stress-P.json when
    its buckets count them all (triaged: the sum of its buckets' counts)."""
    out = []

    def sent(r):
        return r.get("died") or r.get("triage_log")
    triaged = triaged >= sum(1 for r in runs if sent(r))
    for r in runs:
        if r.get("result") == "SUCCESS" or r.get("interrupted"):
            continue
        if triaged and sent(r):
            continue
        fails = r.get("failures") or ["FAILURE without a message"]
        cmd = r.get("command") or ""
        rep = r.get("repro") or ""
        if rep and os.sep not in rep:
            rep = os.path.join("repro", rep)  # nightly.sh's --repro-dir, in the night
        out.append({"bucket": "%s: %s" % (r.get("binary"), fails[0]), "count": len(fails),
                    "smallest": rep, "source": "stress %s" % r.get("preset", ""),
                    "reproduces": True,
                    "reproduce": cmd if r.get("died") else
                    ("%s --replay %s" % (cmd.split()[0], rep)) if rep and cmd else cmd})
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


def merge_by_key(findings):
    """One row per bug: findings of the same key (triage's crash-state key)
    across fuzz and stress, ASan and TSan, become one, their counts summed
    and their sources listed."""
    rows, by = [], {}
    for f in findings:
        k = f.get("key")
        if k and k in by:
            m = by[k]
            m["count"] = m.get("count", 1) + f.get("count", 1)
            if f.get("source") and f["source"] not in m["source"].split(", "):
                m["source"] += ", " + f["source"]
            m.setdefault("examples", []).append(f.get("smallest"))
            continue
        if k:
            by[k] = f
        rows.append(f)
    return rows


def finding_key(f):
    """What makes two nights' findings the same bug: triage's bucket key
    (the free site of a use-after-free, ...), else the crash state."""
    return str(f.get("key") or f.get("dedup_token") or f.get("bucket") or "")


def mark_new(findings, trend, this_run=None):
    """Each finding new, or known since the first night (oldest first in
    trend) whose finding keys hold its key; first_seen and last_seen (this
    night when it is here).  Returns the known findings not seen tonight,
    one per key: {key, label, first_seen, last_seen, nights}."""
    first, last, nights, labels = {}, {}, {}, {}
    for n in trend:
        for k in n.get("finding_keys") or []:
            first.setdefault(k, n["run"])
            last[k] = n["run"]
            nights[k] = nights.get(k, 0) + 1
        labels.update(n.get("finding_labels") or {})
    for f in findings:
        f["key"] = finding_key(f)
        f["crash_type"], f["frames"] = crash_state(f)
        f["first_seen"] = first.get(f["key"])
        f["last_seen"] = this_run if f.get("reproduces") else last.get(f["key"])
        f["nights"] = nights.get(f["key"], 0) + (1 if f.get("reproduces") else 0)
        f["new"] = bool(f.get("reproduces")) and f["key"] not in first
    here = {f["key"] for f in findings if f.get("reproduces")}
    return [{"key": k, "label": labels.get(k) or k, "first_seen": first[k], "last_seen": last[k],
             "nights": nights[k]} for k in sorted(first, key=lambda k: last[k], reverse=True)
            if k not in here]


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
        rp = r.get("repro")
        if rp:
            rp = rp if os.path.isabs(rp) else os.path.join(night, "repro", os.path.basename(rp))
            if os.path.exists(rp):
                r["repro_href"] = href(rp, page_dir)
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
            try:
                nights[run_id(j)] = sane_night(night_totals(j))
            except (AttributeError, KeyError, TypeError, ValueError) as e:
                bad_night(p, e)
    t = load_json(trend_file) if trend_file else None
    if isinstance(t, dict) and t.get("kind") == TREND_KIND and isinstance(t.get("nights"), list):
        for i, n in enumerate(t["nights"]):
            if isinstance(n, dict) and n.get("run") and n["run"] != this_run:
                try:
                    nights.setdefault(n["run"], sane_night(n))
                except (AttributeError, KeyError, TypeError, ValueError) as e:
                    bad_night("%s night %d" % (trend_file, i + 1), e)
            elif not isinstance(n, dict) or not n.get("run"):
                bad_night("%s night %d" % (trend_file, i + 1), "no run stamp")
    return [nights[k] for k in sorted(nights)]


def bad_night(where, why):
    """One warning for a night the trend leaves out (a damaged or older file):
    the report goes on with the others."""
    sys.stderr.write("nightly-report: warning: %s: left out of the trend (%s)\n" % (
        where, why if isinstance(why, str) else "%s: %s" % (type(why).__name__, why)))


def sane_night(n):
    """A night's totals with every field the page reads: a night without a
    date takes it from its run stamp (YYYY-MM-DD...); fields of the wrong
    type are errors (the caller warns and leaves the night out)."""
    run = str(n["run"])
    date = n.get("date") or (run[:10] if re.match(r"\d{4}-\d{2}-\d{2}", run) else None)
    if not date:
        raise ValueError("no date")
    fuzz = n.get("fuzz") or {}
    stress = n.get("stress") or {}
    if not isinstance(fuzz, dict) or not isinstance(stress, dict):
        raise TypeError("fuzz or stress is not an object")
    fuzz = {t: v if isinstance(v, dict) else {} for t, v in fuzz.items()}
    return dict(n, date=str(date), run=run, fuzz=fuzz, stress=stress,
                findings=n.get("findings") or 0, finding_keys=n.get("finding_keys") or [])


def write_trend(path, trend):
    """The trend file, written whole or not at all."""
    tmp = "%s.tmp%d" % (path, os.getpid())
    try:
        with open(tmp, "w") as f:
            json.dump({"kind": TREND_KIND, "nights": trend}, f, indent=1)
        os.replace(tmp, path)
    except OSError:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
            "finding_labels": {finding_key(f): "%s %s" % (
                f.get("crash_type") or f.get("bucket") or "",
                " < ".join(f.get("frames") or [])) for f in j.get("findings", [])
                if f.get("reproduces")},
            "fuzz": {t: {"exec_s": (v.get("final") or {}).get("exec_s"),
                         "cov": (v.get("final") or {}).get("cov")}
                     for t, v in ((j.get("fuzz") or {}).get("libfuzzer") or {}).items()
                     if isinstance(v, dict)},
            "stress": {"%s/%s" % (r.get("preset"), r.get("binary")): r.get("ops_per_s")
                       for r in j.get("stress", []) if r.get("ops_per_s") is not None},
            "findings": sum(1 for f in j.get("findings", []) if f.get("reproduces")),
            "lines_pct": next((r["lines"]["percent"] for r in j.get("coverage") or []
                               if r.get("target") == "all"), None)}
