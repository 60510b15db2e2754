#!/usr/bin/env python3
"""triage_json.py KMGR_REPRO SCRATCH_DIR SRC_DIR - `kmgr-repro triage --json`
gives buckets a program can use.

A crash directory with known contents: stress repro files whose (fake)
stress binary prints sanitizer reports with a DEDUP_TOKEN line (two tokens;
two files share one token although their project frames differ), one report
without a token (the oracle's), an unusable file and a real api_seq seed
that runs clean.  The JSON must parse and say exactly that: buckets by
token where there is one, counts, the smallest example, its target, and a
reproduce command that, run by a shell as printed, reproduces the bucket
(also for a file name with a quote in it)."""
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
uaf-a | uaf-a2)
	fn=exec_sync
	[ "$report" = uaf-a2 ] && fn=exec_async
	echo '==1==ERROR: AddressSanitizer: heap-use-after-free on address 0x6020' >&2
	echo '    #0 0x55 in __asan_memcpy /build/compiler-rt/asan.cpp:22:3' >&2
	echo "    #1 0x56 in $fn @SRC@/lib/kmgr/exec.c:40:2" >&2
	echo '    #2 0x57 in kmgr_exec @SRC@/lib/kmgr/exec.c:118:8' >&2
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
        "b.repro": "binary stress_fake\nreport leak-b\nseed 3\n",
        "c.repro": "binary stress_fake\nreport oracle\n",
        "empty": "",
    }
    for name, text in files.items():
        (crashes / name).write_text(text)
    seed = sorted(p for p in (src / "corpus" / "api_seq").iterdir() if p.stat().st_size)[0]
    shutil.copy(seed, crashes / "clean")
    env = dict(os.environ, PATH=f"{bindir}:{os.environ.get('PATH', '')}")

    run = subprocess.run([tool, "triage", str(crashes), "--json", "--target", "api_seq"],
                         env=env, capture_output=True, text=True, timeout=120)
    check(run.returncode == 0, f"triage --json exited {run.returncode}: {run.stderr}")
    try:
        doc = json.loads(run.stdout)
    except json.JSONDecodeError as e:
        fail(f"not JSON ({e}):\n{run.stdout}")
    check(doc["files"] == 6, f"files {doc['files']}, not 6")
    by_token = {b["dedup_token"]: b for b in doc["buckets"] if b["dedup_token"]}
    by_sig = {b["signature"]: b for b in doc["buckets"]}
    check(len(doc["buckets"]) == 5, f"{len(doc['buckets'])} buckets, not 5: {doc['buckets']}")
    check(sum(b["count"] for b in doc["buckets"]) == 6, "counts do not add up to files")

    a = by_token.get("__asan_memcpy--exec_sync--kmgr_exec")
    check(a is not None, f"no bucket for the shared token: {list(by_token)}")
    check(a["count"] == 2, f"the shared token's bucket holds {a['count']}, not 2")
    check(a["signature"].startswith("heap-use-after-free in "), a["signature"])
    check(a["example"].endswith("/a2 it's.repro"), f"example {a['example']} is not the smaller")
    check(a["example_bytes"] == len(files["a2 it's.repro"]), "example_bytes")
    check(a["target"] is None, "a stress file has no target")
    b = by_token.get("malloc--kalloc--kmgr_load")
    check(b and b["count"] == 1 and b["signature"].startswith("LeakSanitizer"), f"leak {b}")
    c = by_sig.get("ORACLE: refcount-zero")
    check(c and c["dedup_token"] is None and c["count"] == 1, f"oracle bucket {c}")
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
        rep = subprocess.run(bucket["reproduce"], shell=True, env=env, capture_output=True,
                             text=True, timeout=120)
        check(expect in rep.stdout, f"`{bucket['reproduce']}` printed {rep.stdout!r}")

    text = subprocess.run([tool, "triage", str(crashes), "--target", "api_seq"], env=env,
                          capture_output=True, text=True, timeout=120).stdout
    check("[DEDUP_TOKEN malloc--kalloc--kmgr_load]" in text, f"text form:\n{text}")
    check("6 file(s), 5 bucket(s)" in text, f"text form:\n{text}")
    print(f"triage_json: {len(doc['buckets'])} buckets as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
