#!/usr/bin/env bash
# ci/nightly.sh - the nightly stress run: every stress binary for N minutes
# in the tsan preset and in the release preset (jemalloc, MALLOC_CONF=junk:true),
# then the fuzz targets (ci/fuzz.sh --minutes N), and a dated summary in
# markdown and JSON: throughput, findings and their repro files.
#
#   ci/nightly.sh [--minutes N] [--out DIR] [--threads N] [--presets "tsan release"]
#                 [--binaries "refdrain async churn faults"] [--skip-fuzz]
#                 [--build-root DIR]
#
# Exit status: 0 when every run succeeded, 1 otherwise.  Builds go to
# DIR/<preset> (default build/<preset>, the presets' own trees).
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
minutes=10
out="$src/nightly"
threads=4
presets="tsan release"
binaries="refdrain async churn faults"
fuzz=1
build_root="$src/build"
while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) minutes=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--threads) threads=$2; shift 2 ;;
	--presets) presets=$2; shift 2 ;;
	--binaries) binaries=$2; shift 2 ;;
	--skip-fuzz) fuzz=0; shift ;;
	--build-root) build_root=$2; shift 2 ;;
	-h|--help) sed -n '2,12p' "$0"; exit 0 ;;
	*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
done
case "$minutes" in '' | *[!0-9.]*) echo "--minutes: a number" >&2; exit 2 ;; esac
day=$(date -u +%Y-%m-%d)
mkdir -p "$out/$day/repro" "$out/$day/logs"
runs="$out/$day/runs.tsv"
: >"$runs"
. "$src/sanitizers/env.sh"
secs=$(awk "BEGIN { printf \"%d\", $minutes * 60 }")
stamp() { echo "=== [$(date -u +%H:%M:%S)] $*"; }

for preset in $presets; do
	build="$build_root/$preset"
	stamp "build $preset"
	cmake --preset "$preset" -S "$src" -B "$build" >/dev/null || { echo "configure $preset failed"; exit 1; }
	targets=""
	for b in $binaries; do targets="$targets stress_$b"; done
	cmake --build "$build" -j2 --target $targets || { echo "build $preset failed"; exit 1; }
	for b in $binaries; do
		json="$out/$day/$preset-$b.json"
		log="$out/$day/logs/$preset-$b.log"
		stamp "stress_$b ($preset) for ${secs}s"
		env_extra=""
		[ "$preset" = release ] && env_extra="MALLOC_CONF=junk:true"
		(cd "$out/$day" && env $env_extra "$build/stress/stress_$b" --seconds "$secs" \
			--threads "$threads" --seed "$(date -u +%j)" --stall-seconds 60 \
			--json "$json" --repro-dir "$out/$day/repro" --quiet) >"$log" 2>&1
		rc=$?
		tail -n 1 "$log"
		printf '%s\t%s\t%s\t%s\t%s\n' "$preset" "$b" "$rc" "$json" "$log" >>"$runs"
	done
done

fuzz_rc=-1
if [ "$fuzz" = 1 ]; then
	if [ -x "$src/ci/fuzz.sh" ]; then
		stamp "ci/fuzz.sh --minutes $minutes"
		"$src/ci/fuzz.sh" --minutes "$minutes" >"$out/$day/logs/fuzz.log" 2>&1
		fuzz_rc=$?
		tail -n 20 "$out/$day/logs/fuzz.log"
	else
		echo "ci/fuzz.sh not found: fuzzing skipped" | tee "$out/$day/logs/fuzz.log"
	fi
fi

python3 - "$out/$day" "$day" "$minutes" "$fuzz_rc" <<'PY'
import json, os, sys
d, day, minutes, fuzz_rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
runs, ok = [], True
for line in open(os.path.join(d, "runs.tsv")):
    preset, b, rc, js, log = line.rstrip("\n").split("\t")
    r = {"preset": preset, "binary": "stress_" + b, "exit": int(rc), "log": log}
    try:
        j = json.load(open(js))
        r.update(result=j["result"], ops_per_s=j["ops_per_s"], command=j["command"],
                 failures=j["failures"], repro=j["repro"], stall=j["stall"],
                 latency_ns=j["latency_ns"], executions_per_s=j.get("refdrain", {}).get("executions_per_s"))
    except Exception as e:  # a crash leaves no JSON: the log and the repro file say why
        r.update(result="FAILURE", failures=["no summary (%s): see the log" % e.__class__.__name__])
        reps = [f for f in os.listdir(os.path.join(d, "repro")) if f.startswith("stress_" + b)]
        r["repro"] = ", ".join(os.path.join(d, "repro", f) for f in reps)
    if int(rc) != 0:
        ok = False
    runs.append(r)
fuzz_log = os.path.join(d, "logs", "fuzz.log")
findings = []
if fuzz_rc != -1 and os.path.exists(fuzz_log):
    for line in open(fuzz_log, errors="replace"):
        if line.strip().startswith("reproduce:"):
            findings.append(line.split("reproduce:", 1)[1].strip())
summary = {"date": day, "minutes": float(minutes), "stress": runs,
           "fuzz": {"exit": fuzz_rc, "log": fuzz_log if fuzz_rc != -1 else None,
                    "findings": findings}}
json.dump(summary, open(os.path.join(d, "..", "stress-%s.json" % day), "w"), indent=2)
md = ["# Nightly %s (%s min per run)" % (day, minutes), "",
      "| preset | binary | result | exit | ops/s | executions/s | drain p50 / p99 / max (us) | findings |",
      "|---|---|---|---:|---:|---:|---|---|"]
for r in runs:
    un = r.get("latency_ns", {}).get("unload")
    dr = "%.0f / %.0f / %.0f" % (un["p50"] / 1e3, un["p99"] / 1e3, un["max"] / 1e3) if un and un["count"] else "-"
    f = "; ".join(r.get("failures", [])) or "none"
    if r.get("repro"):
        f += " (repro: `%s`)" % r["repro"]
    md.append("| %s | %s | %s | %d | %s | %s | %s | %s |" % (
        r["preset"], r["binary"], r["result"], r["exit"],
        "%.0f" % r["ops_per_s"] if "ops_per_s" in r else "-",
        "%.0f" % r["executions_per_s"] if r.get("executions_per_s") else "-", dr, f.replace("|", "\\|")))
md += ["", "Fuzzing: " + ("skipped" if fuzz_rc == -1 else "ci/fuzz.sh exit %d, %d finding(s), log `%s`" % (fuzz_rc, len(findings), fuzz_log))]
md += ["- reproduce: `%s`" % f for f in findings]
if fuzz_rc != -1 and os.path.exists(fuzz_log):
    tail = open(fuzz_log, errors="replace").read().splitlines()[-25:]
    md += ["", "```"] + tail + ["```"]
open(os.path.join(d, "..", "stress-%s.md" % day), "w").write("\n".join(md) + "\n")
print("\n".join(md))
sys.exit(0 if ok and fuzz_rc in (-1, 0) else 1)
PY
rc=$?
echo "summary: $out/stress-$day.md and $out/stress-$day.json"
exit $rc
