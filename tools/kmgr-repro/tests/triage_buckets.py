#!/usr/bin/env python3
"""triage_buckets.py KMGR_REPRO SCRATCH_DIR SRC_DIR - one bug, one bucket.

The reports in reports/ are real: ASan's, from crash files that
`ci/fuzz.sh --keep-going --targets concurrent` wrote with
mutants/fuzz-1-no-ref.patch applied (18 of them, from four access stacks:
cc_bootstrap, check_set, exec_sync, build_compute, every one freed by the
unload in kmgr_unstage_kelf_model), and the oracle's for
mutants/fuzz-6-clone-leak.patch (its regression input).  A fake stress
binary prints the report a repro file names, so kmgr-repro triage runs
them as it runs any crash.  It must give: the 18 in four buckets, one per
bad access (a use-after-free is keyed by its crash state, the top three
frames of its access: the free site alone merged two bugs that read one
object at two places, fuzz-1's and fuzz-7's), each signature naming the
free site; with the
fuzz-6 report, five; 300 distinct oracle failures, 300 buckets (no cap);
stress check failures by invariant and stalls by wait site; valid JSON,
and a reproduce command that works, for a file name that is not UTF-8."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

FAKE = r"""#!/bin/sh
# a stress binary's --replay FILE: print the report its 'report' line names
report=$(sed -n 's/^report //p' "$2")
case $report in
gen-oracle-*) echo "ORACLE: invariant-${report#gen-oracle-}: generated" >&2 ;;
*) sed "s#@SRC@#$KMGR_TEST_SRC#g" "$KMGR_TEST_REPORTS/$report" >&2 ;;
esac
exit 1
"""

STRESS = {
    "check-a1.txt": "stress_refdrain: CHECK FAILED: exec-after-unload: model 3 ran after its unload\n",
    "check-a2.txt": "stress_refdrain: CHECK FAILED: exec-after-unload: model 9 ran after its unload\n",
    "check-b.txt": "stress_refdrain: CHECK FAILED: refcount-zero: model 2 has 1 reference\n",
    # a check without an invariant prefix: its numbers differ run to run
    "check-c1.txt": "stress_churn: CHECK FAILED: nrt_unload of model 17 returned NRT_FAILURE\n",
    "check-c2.txt": "stress_churn: CHECK FAILED: nrt_unload of model 4 returned NRT_FAILURE\n",
    "check-d1.txt": "stress_async: CHECK FAILED: nrta_is_completed(0x1f) returned NRT_INVALID\n",
    "check-d2.txt": "stress_async: CHECK FAILED: nrta_is_completed(0x2a0) returned NRT_INVALID\n",
    "stall-a.txt": ("\n=== stress_refdrain WATCHDOG: no progress for 30.0 s (--stall-seconds 30); every"
                    " thread follows ===\n  thread 12 executor#0\n    wait site: kmgr_unload_nn at"
                    " @SRC@/lib/kmgr/unload.c:80\n"),
}


def tsan_race(first, second, caller):
    """A TSan data race report: the access (first) and the previous one (second),
    library frames, then the caller's (the harness or a stress binary)."""
    lines = ["==================", "WARNING: ThreadSanitizer: data race (pid=4242)",
             "  Write of size 4 at 0x7b0c00000010 by thread T2:"]
    for i, (fn, f) in enumerate(first + [caller]):
        lines.append(f"    #{i} {fn} @SRC@/{f}:{10 + i}:3 (bin+0x4f1{i:02x})")
    lines += ["", "  Previous read of size 4 at 0x7b0c00000010 by thread T1:"]
    for i, (fn, f) in enumerate(second + [caller]):
        lines.append(f"    #{i} {fn} @SRC@/{f}:{20 + i}:7 (bin+0x4f3{i:02x})")
    lines += ["", "  Location is heap block of size 64 at 0x7b0c00000000 allocated by main thread:",
              "    #0 calloc <null> (bin+0x1234)", "",
              f"SUMMARY: ThreadSanitizer: data race @SRC@/{first[0][1]}:10:3 in {first[0][0]}",
              "=================="]
    return "\n".join(lines) + "\n"


REF = [("kmgr_nn_ref_put", "lib/kmgr/registry.c"), ("kmgr_exec", "lib/kmgr/exec.c"),
       ("nrt_execute", "lib/nrt/exec.c")]
UNL = [("kmgr_unload_nn", "lib/kmgr/unload.c"), ("nrt_unload", "lib/nrt/model.c")]
STAGE = [("kmgr_stage_kelf", "lib/kmgr/stage.c"), ("kmgr_load_nn", "lib/kmgr/load.c")]
HARNESS = ("kh_exec", "fuzz/harness/harness.c")
WORKER = ("refdrain_worker", "stress/refdrain.c")
STATES = {
    # one race found by fuzzing (harness caller) and by stress: one state
    "race-1-fuzz.txt": tsan_race(REF, UNL, HARNESS),
    "race-1-stress.txt": tsan_race(REF, UNL, WORKER),
    # another race (another second access): another state
    "race-2.txt": tsan_race(REF, STAGE, WORKER),
    # stalls: the facade function that waits decides
    "stall-sync.txt": ("=== stress_refdrain WATCHDOG: no progress for 30.0 s ===\n  thread 3 executor#0\n"
                       "    wait site: ks_cond_wait at @SRC@/lib/sched/cond.c:40, in kmgr_sync_exec"
                       " at @SRC@/lib/kmgr/exec.c:210\n"),
    "stall-async.txt": ("=== stress_async WATCHDOG: no progress for 30.0 s ===\n  thread 5 executor#1\n"
                        "    wait site: ks_cond_wait at @SRC@/lib/sched/cond.c:40, in exec_async_wait"
                        " at @SRC@/lib/kmgr/async.c:88\n"),
    # the oracle: its check and the operation, not the checker's frames
    "oracle-exec-a.txt": "ORACLE: status-mismatch: op 3 nrt_execute returned 5, the reference model says 0\n",
    "oracle-exec-b.txt": "ORACLE: status-mismatch: op 9 nrt_execute returned 4, the reference model says 0\n",
    "oracle-load.txt": "ORACLE: status-mismatch: op 2 nrt_load returned 1, the reference model says 0\n",
    "oracle-paren.txt": ("ORACLE: not-linearizable: op 4 (nrt_unload) on model 2 answered"
                         " INVALID_HANDLE while it was loaded\n"),
    "oracle-noop.txt": "ORACLE: id-reused: load returned id 3 twice\n",
}


def fail(msg):
    print(f"triage_buckets: {msg}", file=sys.stderr)
    sys.exit(1)


def triage(tool, d, env):
    run = subprocess.run([tool, "triage", str(d), "--json"], env=env, capture_output=True,
                         timeout=600)
    if run.returncode != 0:
        fail(f"triage {d} exited {run.returncode}: {run.stderr[-500:]!r}")
    try:
        return json.loads(run.stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        fail(f"triage {d}: not JSON ({e})")


def repro_files(d, reports):
    d.mkdir(parents=True)
    for i, r in enumerate(reports):
        (d / f"{i:03d}.repro").write_text(f"binary stress_fake\nreport {r}\n")


def main():
    if len(sys.argv) != 4:
        print("usage: triage_buckets.py KMGR_REPRO SCRATCH_DIR SRC_DIR", file=sys.stderr)
        return 2
    tool, scratch, src = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    here = pathlib.Path(__file__).resolve().parent / "reports"
    shutil.rmtree(scratch, ignore_errors=True)
    bindir, reports = scratch / "bin", scratch / "reports"
    bindir.mkdir(parents=True)
    shutil.copytree(here, reports)
    for name, text in list(STRESS.items()) + list(STATES.items()):
        (reports / name).write_text(text)
    fake = bindir / "stress_fake"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ.get('PATH', '')}",
               KMGR_TEST_SRC=str(src), KMGR_TEST_REPORTS=str(reports))
    uaf = sorted(p.name for p in here.glob("fuzz-1-uaf-*.txt"))
    if len(uaf) != 18:
        fail(f"{len(uaf)} fuzz-1 reports, want 18")

    repro_files(scratch / "one-bug", uaf)
    doc = triage(tool, scratch / "one-bug", env)
    got = sorted((b["key"], b["count"]) for b in doc["buckets"])
    want = sorted(("heap-use-after-free in " + u, n) for u, n in
                  (("cc_bootstrap < kmgr_exec_pre < exec_sync", 5),
                   ("check_set < dlr_check_valid_io_sets < kmgr_exec_pre", 5),
                   ("exec_sync < kmgr_exec", 5), ("build_compute < kmgr_exec_pre < exec_sync", 3)))
    if got != want:
        fail("18 reports of four accesses after one free gave %s, want %s" % (got, want))
    for b in doc["buckets"]:
        if "freed in kmgr_unstage_kelf_model < kmgr_unload_nn" not in b["signature"]:
            fail(f"a bucket's signature does not name the free site: {b['signature']}")
    print("triage_buckets: 18 files of four accesses after one free -> 4 buckets (5, 5, 5, 3)")

    repro_files(scratch / "two-bugs", uaf + ["fuzz-6-leak.txt"])
    doc = triage(tool, scratch / "two-bugs", env)
    sigs = sorted(b["signature"] for b in doc["buckets"])
    if len(sigs) != 5 or not any(s.startswith("ORACLE: leak-after-close") for s in sigs):
        fail(f"two mutants gave {sigs}")
    print("triage_buckets: two mutants -> 5 buckets (fuzz-1's four, fuzz-6's one)")

    repro_files(scratch / "many", [f"gen-oracle-{i}" for i in range(300)])
    doc = triage(tool, scratch / "many", env)
    if len(doc["buckets"]) != 300:
        fail(f"300 distinct failures gave {len(doc['buckets'])} buckets")
    print("triage_buckets: 300 distinct failures -> 300 buckets")

    repro_files(scratch / "stress", list(STRESS))
    doc = triage(tool, scratch / "stress", env)
    got = sorted((b["signature"], b["count"]) for b in doc["buckets"])
    want = [("stress check: exec-after-unload", 2),
            ("stress check: nrt_unload of model N returned NRT_FAILURE", 2),
            ("stress check: nrta_is_completed(0xN) returned NRT_INVALID", 2),
            ("stress check: refcount-zero", 1), ("stress stall at kmgr_unload_nn", 1)]
    if got != want:
        fail(f"stress reports bucketed as {got}, want {want}")
    print("triage_buckets: stress checks by invariant (or message, its numbers as N), stalls by "
          "wait site")

    repro_files(scratch / "states", list(STATES))
    doc = triage(tool, scratch / "states", env)
    got = sorted((b["signature"], b["count"]) for b in doc["buckets"])
    want = [("ORACLE: id-reused in load", 1),
            ("ORACLE: not-linearizable in nrt_unload", 1),
            ("ORACLE: status-mismatch in nrt_execute", 2),
            ("ORACLE: status-mismatch in nrt_load", 1),
            ("data race in kmgr_nn_ref_put < kmgr_exec vs kmgr_stage_kelf < kmgr_load_nn", 1),
            ("data race in kmgr_nn_ref_put < kmgr_exec vs kmgr_unload_nn < nrt_unload", 2),
            ("stress stall at exec_async_wait", 1), ("stress stall at kmgr_sync_exec", 1)]
    if got != want:
        fail(f"crash states {got}, want {want}")
    race = [b for b in doc["buckets"] if b["count"] == 2 and b["crash_type"] == "data race"][0]
    if race["crash_state"] != ["kmgr_nn_ref_put", "kmgr_exec", "vs", "kmgr_unload_nn",
                               "nrt_unload"]:
        fail(f"a race's crash_state {race['crash_state']}")
    print("triage_buckets: two TSan races -> 2 buckets (one race by fuzz and stress: 1); "
          "stalls by their waiting facade function; the oracle by check and operation")

    odd = scratch / "odd"
    odd.mkdir()
    name = b"crash-\xff\xfe-it's"
    with open(os.path.join(bytes(odd), name), "w") as f:
        f.write("binary stress_fake\nreport fuzz-6-leak.txt\n")
    doc = triage(tool, odd, env)
    b = doc["buckets"][0]
    rep = subprocess.run(["sh", "-c", b["reproduce"]], env=env, capture_output=True,
                         text=True, errors="replace", timeout=120)
    if "reproduced 1/1" not in rep.stdout:
        fail(f"`{b['reproduce']}` for a non-UTF-8 name printed {rep.stdout!r} {rep.stderr!r}")
    print("triage_buckets: a non-UTF-8 file name: valid JSON, its reproduce command works")

    with open("/dev/full", "w") as full:
        run = subprocess.run([tool, "triage", str(odd), "--json"], env=env, stdout=full,
                             stderr=subprocess.PIPE, timeout=120)
    if run.returncode == 0 or b"writing to standard output failed" not in run.stderr:
        fail(f"triage --json > /dev/full: exit {run.returncode}, {run.stderr!r}")
    print("triage_buckets: a full disk under --json is an error, not an empty file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
