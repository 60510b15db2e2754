#!/usr/bin/env python3
"""triage_json.py KMGR_REPRO SCRATCH_DIR SRC_DIR - `kmgr-repro triage --json`
gives buckets a program can use.

A crash directory with known contents: stress repro files whose (fake)
stress binary prints sanitizer reports: two reports of one crash state
(the library's frames alike, the callers below them the harness's in one
and a stress binary's in the other), a third with the same DEDUP_TOKEN but
another library frame (another state, another bucket), a leak, the
oracle's report, an unusable file and a real api_seq seed that runs clean;
a stress log that died of the first crash and names its repro file (the
same bucket as the files: one bug, one bucket across fuzz and stress); a
FIFO (skipped, and said so).  The JSON must parse and say exactly that:
buckets by crash state (crash_type, crash_state, key), counts, the
smallest example, its target, and a reproduce command that, run by `sh`
(dash: POSIX, no bash $'...') as printed, reproduces the bucket, also for
a file named with a quote, $( ) and a control byte, and runs nothing
else."""
import json
import os
import pathlib
import shutil
import subprocess
import sys

FAKE = r"""#!/bin/sh
# a stress binary's --replay FILE: the report named on the file's 'report' line
file=$2
report=$(sed -n 's/^report //p' "$file")
case $report in
oracle)
	echo 'ORACLE: refcount-zero: model 1 freed with 2 references' >&2
	exit 1 ;;
uaf-a | uaf-a2 | uaf-a3)
	fn=exec_sync caller="kh_exec @SRC@/fuzz/harness/harness.c:300:1"
	[ "$report" = uaf-a2 ] && caller="refdrain_worker @SRC@/stress/refdrain.c:80:2"
	[ "$report" = uaf-a3 ] && fn=exec_async
	echo '==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020' >&2
	echo '    #0 0x55 in __asan_memcpy /build/compiler-rt/asan.cpp:22:3' >&2
	echo "    #1 0x56 in $fn @SRC@/lib/kmgr/exec.c:40:2" >&2
	echo '    #2 0x57 in kmgr_exec @SRC@/lib/kmgr/exec.c:118:8' >&2
	echo "    #3 0x58 in $caller" >&2
	echo 'DEDUP_TOKEN: __asan_memcpy--exec_sync--kmgr_exec' >&2
	exit 1 ;;
leak-b)
	echo '==1==ERROR: LeakSanitizer: detected memory leaks' >&2
	echo '    #0 0x55 in malloc /build/compiler-rt/lsan.cpp:1:1' >&2
	echo '    #1 0x56 in kalloc @SRC@/lib/base/kalloc.c:10:2' >&2
	echo 'DEDUP_TOKEN: malloc--kalloc--kmgr_load' >&2
	exit 1 ;;
esac
exit 0
"""


def rep_text(fake, repro):
    return subprocess.run([str(fake), "--replay", str(repro)], capture_output=True,
                          text=True).stderr


def fail(msg):
    print(f"triage_json: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def main():
    if len(sys.argv) != 4:
        print("usage: triage_json.py KMGR_REPRO SCRATCH_DIR SRC_DIR", file=sys.stderr)
        return 2
    tool, scratch, src = sys.argv[1], pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
    shutil.rmtree(scratch, ignore_errors=True)
    crashes, bindir = scratch / "crashes", scratch / "bin"
    crashes.mkdir(parents=True)
    bindir.mkdir()
    fake = bindir / "stress_fake"
    fake.write_text(FAKE.replace("@SRC@", str(src)))
    fake.chmod(0o755)
    files = {
        "a1.repro": "binary stress_fake\nreport uaf-a\nseed 1\n",
        "a2 it's.repro": "binary stress_fake\nreport uaf-a2\n",
        "a3.repro": "binary stress_fake\nreport uaf-a3\nseed 33\n",
        "b.repro": "binary stress_fake\nreport leak-b\nseed 3\n",
        "c.repro": "binary stress_fake\nreport oracle\n",
        "empty": "",
    }
    for name, text in files.items():
        (crashes / name).write_text(text)
    seed = sorted(p for p in (src / "corpus" / "api_seq").iterdir() if p.stat().st_size)[0]
    shutil.copy(seed, crashes / "clean")
    env = dict(os.environ, PATH=f"{bindir}:{os.environ.get('PATH', '')}")
    # a stress run that died of the first crash: its log, naming its repro file
    rep = subprocess.run([str(fake), "--replay", str(crashes / "a1.repro")],
                         capture_output=True, text=True)
    (crashes / "stress_fake.log").write_text(
        "stress_fake: 4 threads, 2 s\n" + rep.stderr +
        "stress_fake: reproducer saved to a1.repro\n")
    os.mkfifo(crashes / "fifo")

    run = subprocess.run([tool, "triage", str(crashes), "--json", "--target", "api_seq"],
                         env=env, capture_output=True, text=True, timeout=120)
    check(run.returncode == 0, f"triage --json exited {run.returncode}: {run.stderr}")
    try:
        doc = json.loads(run.stdout)
    except json.JSONDecodeError as e:
        fail(f"not JSON ({e}):\n{run.stdout}")
    check(doc["files"] == 8, f"files {doc['files']}, not 8")
    by_token = {b["dedup_token"]: b for b in doc["buckets"] if b["dedup_token"]}
    by_sig = {b["signature"]: b for b in doc["buckets"]}
    check(len(doc["buckets"]) == 6, f"{len(doc['buckets'])} buckets, not 6: {doc['buckets']}")
    check(sum(b["count"] for b in doc["buckets"]) == 8, "counts do not add up to files")
    check("skipped " in run.stderr and "fifo: not a regular file (a FIFO)" in run.stderr,
          f"the FIFO was skipped without a word: {run.stderr!r}")
    for b in doc["buckets"]:
        for field in ("crash_type", "crash_state", "key", "count", "example", "reproduce"):
            check(field in b, f"bucket without {field}: {b}")

    a = by_sig.get("heap-use-after-free in exec_sync < kmgr_exec")
    check(a is not None, f"no bucket for the state exec_sync < kmgr_exec: {list(by_sig)}")
    check(a["count"] == 3, f"the state's bucket holds {a['count']}, not 3 (2 files, 1 log)")
    check(a["crash_type"] == "heap-use-after-free", a["crash_type"])
    check(a["crash_state"] == ["exec_sync", "kmgr_exec"], a["crash_state"])
    check(a["example"].endswith("/a2 it's.repro"), f"example {a['example']} is not the smaller")
    a3 = by_sig.get("heap-use-after-free in exec_async < kmgr_exec")
    check(a3 and a3["count"] == 1 and a3["dedup_token"] == a["dedup_token"],
          f"the same DEDUP_TOKEN, another state: not its own bucket: {a3}")
    check(a["example_bytes"] == len(files["a2 it's.repro"]), "example_bytes")
    check(a["target"] is None, "a stress file has no target")
    b = by_token.get("malloc--kalloc--kmgr_load")
    check(b and b["count"] == 1 and b["signature"].startswith("LeakSanitizer"), f"leak {b}")
    c = by_sig.get("ORACLE: refcount-zero")
    check(c and c["dedup_token"] is None and c["count"] == 1, f"oracle bucket {c}")
    check(c["crash_type"] == "ORACLE: refcount-zero", c)
    u = by_sig.get("(unusable file)")
    check(u and u["count"] == 1 and u["example"].endswith("/empty"), f"unusable {u}")
    check(" show '" in u["reproduce"], f"unusable file's command {u['reproduce']}")
    n = by_sig.get("(no failure)")
    check(n and n["target"] == "api_seq" and n["reproduce"].endswith(" --target api_seq"),
          f"clean file {n}")

    # The commands, run by a shell exactly as printed.
    for bucket, expect in ((a, "reproduced 1/1: heap-use-after-free"),
                           (b, "reproduced 1/1: LeakSanitizer"),
                           (n, "no failure")):
        rep = subprocess.run(["sh", "-c", bucket["reproduce"]], env=env, capture_output=True,
                             text=True, timeout=120)
        check(expect in rep.stdout, f"`{bucket['reproduce']}` printed {rep.stdout!r}")

    text = subprocess.run([tool, "triage", str(crashes), "--target", "api_seq"], env=env,
                          capture_output=True, text=True, timeout=120).stdout
    check("[DEDUP_TOKEN malloc--kalloc--kmgr_load]" in text, f"text form:\n{text}")
    check("8 file(s), 6 bucket(s)" in text, f"text form:\n{text}")

    # A stress log alone: its crash state, and the command of its repro file.
    logs = scratch / "logs"
    logs.mkdir()
    shutil.copy(crashes / "stress_fake.log", logs / "stress_fake.log")
    shutil.copy(crashes / "a1.repro", logs / "a1.repro")
    (logs / "orphan.log").write_text("stress_fake: 4 threads\n" + rep_text(fake, crashes / "c.repro"))
    run = subprocess.run([tool, "triage", str(logs), "--json"], env=env, capture_output=True,
                         text=True, timeout=120)
    doc = json.loads(run.stdout)
    lb = {b["signature"]: b for b in doc["buckets"]}
    la = lb.get(a["signature"])
    check(la and la["count"] == 2 and len(lb) == 2, f"the log and its repro file: {lb}")
    rep = subprocess.run(["sh", "-c", la["reproduce"]], env=env, capture_output=True,
                         text=True, timeout=120)
    check("reproduced 1/1: heap-use-after-free" in rep.stdout, f"{la['reproduce']}: {rep}")
    (logs / "a1.repro").unlink()
    doc = json.loads(subprocess.run([tool, "triage", str(logs), "--json"], env=env,
                                    capture_output=True, text=True, timeout=120).stdout)
    lb = {b["example"].rsplit("/", 1)[1]: b for b in doc["buckets"]}
    check(lb["stress_fake.log"]["signature"] == a["signature"] and
          lb["stress_fake.log"]["reproduce"] is None, f"a log whose repro file is gone: {lb}")
    (logs / "a1.repro").write_text(files["a1.repro"])
    (logs / "a1.repro").rename(scratch / "a1.repro")
    (logs / "stress_fake.log").write_text((logs / "stress_fake.log").read_text().replace(
        "saved to a1.repro", f"saved to {scratch / 'a1.repro'}"))
    doc = json.loads(subprocess.run([tool, "triage", str(logs), "--json"], env=env,
                                    capture_output=True, text=True, timeout=120).stdout)
    lb = {b["example"].rsplit("/", 1)[1]: b for b in doc["buckets"]}
    check(lb["stress_fake.log"]["repro_file"] == str(scratch / "a1.repro") and
          "a1.repro" in lb["stress_fake.log"]["reproduce"], f"the log's repro file: {lb}")
    o = lb["orphan.log"]
    check(o["crash_type"] == "ORACLE: refcount-zero" and o["reproduce"] is None,
          f"a log naming no repro file: {o}")

    # A file named with a quote, $( ) and a control byte: its command, run
    # by sh (dash), replays it and runs nothing else.
    odd = scratch / "odd"
    odd.mkdir()
    name = "x\x01'$(touch PWNED) #`touch PWNED2`"
    (odd / name).write_text(files["a1.repro"])
    run = subprocess.run([tool, "triage", str(odd), "--json"], env=env, capture_output=True,
                         text=True, timeout=120)
    cmd = json.loads(run.stdout)["buckets"][0]["reproduce"]
    check("$'" not in cmd, f"bash-only quoting: {cmd!r}")
    rep = subprocess.run(["dash" if shutil.which("dash") else "sh", "-c", cmd], env=env,
                         cwd=odd, capture_output=True, text=True, timeout=120)
    check("reproduced 1/1: heap-use-after-free" in rep.stdout, f"`{cmd!r}`: {rep.stdout!r}")
    check(not (odd / "PWNED").exists() and not (odd / "PWNED2").exists(),
          f"`{cmd!r}` ran a command of the file's name")
    print("triage_json: a hostile file name: its command replays it under dash, runs nothing")
    print("triage_json: buckets by crash state, their fields, stress logs and a FIFO as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
