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
# Then (with KMGR_REPRO, the built tool) ci/nightly.sh itself, on a build
# root of stand-ins (a CMake cache and a build.ninja that build nothing):
# preset tsan's stress_refdrain prints a real TSan report
# (tools/kmgr-repro/tests/reports/fuzz-1-tsan-race-free.txt), saves a repro
# file and dies; stress_async sleeps; the night gets SIGTERM while it
# sleeps.  The interrupted night's report must still triage the dead run:
# its key (heap-use-after-free in clone_sets < exec_sync < kmgr_exec),
# its repro file linked, a reproduce command
# that names the tsan tree's kmgr-repro (not the asan tree's, which a
# real night builds first and which has no TSan stress binaries), marked
# partial; exit 143.
#   buckets.sh [KMGR_REPRO]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ci=$(cd "$here/../.." && pwd)
tool=${1:-}
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
[ $? = 0 ] || exit 1
[ -n "$tool" ] || { echo "buckets: no KMGR_REPRO given: the nightly.sh case skipped"; exit 0; }

# ci/nightly.sh interrupted after a stress run died (see the header)
src=$(cd "$ci/.." && pwd)
br=$tmp/broot
for p in asan tsan; do
	mkdir -p "$br/$p/stress" "$br/$p/tools/kmgr-repro"
	cp "$tool" "$br/$p/tools/kmgr-repro/kmgr-repro" || exit 1
	cat >"$br/$p/CMakeCache.txt" <<C
CMAKE_PROJECT_NAME:STATIC=kmgr
CMAKE_C_COMPILER:FILEPATH=$(command -v cc)
CMAKE_HOME_DIRECTORY:INTERNAL=$src
CMAKE_GENERATOR:INTERNAL=Ninja
CMAKE_MAKE_PROGRAM:FILEPATH=$(command -v ninja)
CMAKE_COMMAND:INTERNAL=$(command -v cmake)
C
	printf 'build %s: phony\n' kmgr-repro stress_refdrain stress_async stress_churn >"$br/$p/build.ninja"
done
cat >"$br/tsan/stress/stress_refdrain" <<'S'
#!/bin/sh
# a stress run that dies under TSan: its repro file, the report, exit 66
while [ $# -gt 0 ]; do [ "$1" = --repro-dir ] && dir=$2; shift; done
printf 'binary stress_refdrain\nseconds 60\nthreads 4\nseed 1\n' >"$dir/stress_refdrain-seed1-7.repro"
sed "s#@SRC@#$KMGR_TEST_SRC#g" "$KMGR_TEST_SRC/tools/kmgr-repro/tests/reports/fuzz-1-tsan-race-free.txt" >&2
echo "stress_refdrain: reproducer saved to $dir/stress_refdrain-seed1-7.repro" >&2
exit 66
S
printf '#!/bin/sh\nexec sleep 60\n' >"$br/tsan/stress/stress_async"
cat >"$br/tsan/stress/stress_churn" <<'S'
#!/bin/sh
# a stress run that fails its own check and lives: its summary (FAILURE),
# its repro file, a message naming this night's model (KMGR_TEST_MODEL)
while [ $# -gt 0 ]; do
	case $1 in --repro-dir) dir=$2 ;; --json) json=$2 ;; esac
	shift
done
msg="nrt_unload of model $KMGR_TEST_MODEL returned NRT_FAILURE"
printf 'binary stress_churn\nseconds 60\nthreads 4\nseed 1\n' >"$dir/stress_churn-seed1-9.repro"
echo "stress_churn: CHECK FAILED: $msg" >&2
echo "stress_churn: reproducer saved to $dir/stress_churn-seed1-9.repro" >&2
printf '{"binary": "stress_churn", "result": "FAILURE", "exit": 1, "command": "stress_churn",
 "failures": ["%s"], "repro": "stress_churn-seed1-9.repro"}\n' "$msg" >"$json"
exit 1
S
chmod +x "$br/tsan/stress/"*
# night BINARIES: a night of those stress binaries, SIGTERM once
# stress_async runs (when it is one of them)
night() {
	rm -rf "$tmp/nights"
	env KMGR_TEST_SRC="$src" KMGR_TEST_MODEL="${model:-1}" bash "$ci/nightly.sh" --minutes 1 --presets tsan --build-root "$br" \
		--binaries "$1" --skip-fuzz --skip-coverage --skip-mutants --keep 0 \
		--out "$tmp/nights" >"$tmp/night.out" 2>&1 &
	pid=$!
	if [[ "$1" == *async* ]]; then
		for _ in $(seq 100); do grep -q 'stress_async (tsan) for' "$tmp/night.out" && break; sleep 0.1; done
		sleep 0.5
		kill -TERM "$pid"
	fi
	wait "$pid"
}
# check WHAT: the night's one row is the dead run, triaged with the tsan
# tree's tool; "interrupted": marked partial
check() {
	python3 - "$tmp/nights"/*/nightly.json "$br" "$1" <<'PY'
import json, sys
j, br, what = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
bad = []
key = "heap-use-after-free in clone_sets < exec_sync < kmgr_exec"
rows = [f for f in j["findings"] if f.get("key") == key]
if bool(j["meta"].get("interrupted")) != (what == "interrupted"):
    bad.append("meta.json interrupted: %r" % j["meta"].get("interrupted"))
if len(rows) != 1:
    bad.append("no row keyed %r: %s" % (key, [(f.get("key"), f.get("bucket")) for f in j["findings"]]))
else:
    f = rows[0]
    tsan = "'%s/tsan/tools/kmgr-repro/kmgr-repro' replay " % br
    if not (f.get("reproduce") or "").startswith(tsan) or "stress_refdrain-seed1-7.repro" not in f["reproduce"]:
        bad.append("reproduce %r, want %s... the repro file" % (f.get("reproduce"), tsan))
    if not f.get("href") or not f["href"].endswith("stress_refdrain-seed1-7.repro"):
        bad.append("no link to the repro file: %r" % f.get("href"))
    if bool(f.get("partial")) != (what == "interrupted") or not f.get("source", "").startswith("stress (tsan)"):
        bad.append("partial %r, source %r" % (f.get("partial"), f.get("source")))
if len(j["findings"]) != 1:
    bad.append("%d finding rows, want 1 (the dead run triaged)" % len(j["findings"]))
for b in bad:
    print("buckets: FAIL: %s night: %s" % (what, b))
if not bad:
    print("buckets: ok (%s night: the dead TSan stress run triaged%s, reproduce with the tsan "
          "tree's kmgr-repro)" % (what, ", partial" if what == "interrupted" else ""))
sys.exit(1 if bad else 0)
PY
}
night refdrain
rc=$?
[ "$rc" = 1 ] || { echo "buckets: FAIL: a night with a dead run: exit $rc, want 1: $(tail -n 3 "$tmp/night.out")"; exit 1; }
check whole || exit 1
night "refdrain async"
rc=$?
[ "$rc" = 143 ] || { echo "buckets: FAIL: interrupted night: exit $rc, want 143: $(tail -n 3 "$tmp/night.out")"; exit 1; }
# its "report ..." line on the night's output, not in the stress run's log
grep -q '^nightly.sh: report .*interrupted by SIGTERM' "$tmp/night.out" ||
	{ echo "buckets: FAIL: interrupted night: no report line: $(tail -n 2 "$tmp/night.out")"; exit 1; }
check interrupted
# A run that failed its check without dying, on two nights whose messages
# name other models: one row a night, keyed by triage's check with the
# numbers as N, the same key both nights (the run's own row, "stress_churn:
# nrt_unload of model 17 ...", was a new bucket every night).
for model in 17 4; do
	night churn
	rc=$?
	[ "$rc" = 1 ] || { echo "buckets: FAIL: a night with a failed check: exit $rc, want 1: $(tail -n 3 "$tmp/night.out")"; exit 1; }
	python3 - "$tmp/nights"/*/nightly.json "$model" <<'PY' || exit 1
import json, sys
j, model = json.load(open(sys.argv[1])), sys.argv[2]
key = "stress check: nrt_unload of model N returned NRT_FAILURE"
rows = [(f.get("key"), f.get("bucket"), f.get("source")) for f in j["findings"]]
bad = []
if len(rows) != 1 or rows[0][0] != key or not (rows[0][2] or "").startswith("stress (tsan)"):
    bad.append("rows %s, want one keyed %r from stress (tsan)" % (rows, key))
elif "stress_churn-seed1-9.repro" not in (j["findings"][0].get("reproduce") or ""):
    bad.append("reproduce %r names no repro file" % j["findings"][0].get("reproduce"))
for b in bad:
    print("buckets: FAIL: failed check, model %s: %s" % (model, b))
if not bad:
    print("buckets: ok (a failed check, model %s: one row keyed %r)" % (model, key))
sys.exit(1 if bad else 0)
PY
done
