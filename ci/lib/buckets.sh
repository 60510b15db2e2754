# ci/lib/buckets.sh - sourced by fuzz.sh and afl.sh: a run's findings
# grouped into buckets by `kmgr-repro triage`, one bug a line however many
# files the engine saved for it (afl.sh listed every crash file: 478 lines
# for one bug found in a minute).
#
#   kmgr_buckets TOOL COPIES MAP NOUN OUT
#       TOOL (a kmgr-repro) triages COPIES, copies of the run's findings
#       in a folder a target (COPIES/<target>/<file>: the path names the
#       target).  MAP says where each copy came from: "<target>/<file>",
#       a tab, the finding's own path, one a line.  Prints
#       "  N NOUN(s) in M bucket(s):" and, for each bucket, its count, its
#       signature, its smallest finding (the original, not the copy) and
#       the command that replays it, quoted for any POSIX sh; writes the
#       buckets as JSON to OUT.  Status 1 with one line on stdout when
#       triage fails (OUT is then not written).  Its scratch files are
#       COPIES.triage and COPIES.err: COPIES belongs in the caller's scratch
#       space.
#
#   kmgr_shq S
#       S in single quotes for any POSIX sh (a ' as '\''), whatever bytes
#       it holds: bash's printf %q writes $'...' for a control byte, which
#       dash runs as text.

kmgr_buckets() {
	local tool=$1 copies=$2 map=$3 noun=$4 out=$5
	# triage's output beside COPIES, in the caller's scratch space
	if ! "$tool" triage "$copies" --json >"$copies.triage" 2>"$copies.err"; then
		echo "  ($noun(s) not grouped: kmgr-repro triage failed: $(tail -n 1 "$copies.err"))"
		return 1
	fi
	python3 - "$copies.triage" "$copies" "$map" "$tool" "$noun" "$out" <<'PY'
import json, os, shlex, sys
tri, copies, mapf, tool, noun, out = sys.argv[1:]
orig = {}
for line in open(mapf, encoding="utf-8", errors="surrogateescape"):
    k, _, v = line.rstrip("\n").partition("\t")
    orig[k] = v
buckets = []
for b in json.load(open(tri)).get("buckets", []):
    rel = os.path.relpath(b["example"], copies)  # <target>/<file>
    t = rel.split(os.sep)[0]
    real = orig.get(rel, b["example"])
    buckets.append({"signature": b["signature"], "key": b.get("key"),
                    "dedup_token": b.get("dedup_token"),
                    "count": b["count"], "target": t, "example": real,
                    "reproduce": "%s replay %s --target %s --times 10" % (
                        shlex.quote(tool), shlex.quote(real), t)})
json.dump(buckets, open(out, "w"), indent=1)
print("  %d %s(s) in %d bucket(s):" % (sum(b["count"] for b in buckets), noun, len(buckets)))
for b in buckets:
    print("  %5d  %s\n         e.g. %s\n         reproduce: %s" % (
        b["count"], b["signature"], b["example"], b["reproduce"]))
PY
}

kmgr_shq() {
	local q=\'
	printf "'%s'" "${1//$q/$q\\$q$q}"
}
