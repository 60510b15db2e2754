#!/usr/bin/env python3
"""abfs.py T N ROUNDS DIR_A DIR_B: one libFuzzer worker (build/asan/fuzz/T,
shipped corpus and dict, -seed=1, -runs=N) with its folder in DIR_A against
the same worker with its folder in DIR_B.  Both start stopped; they take
turns of 2 s on CPU 0 (this controller on CPU 1) until both are done, so a
host whose speed drifts slows both alike.  Prints each one's user + system
CPU seconds (wait4) and A/B per round.  Run from the tree's root after
`. sanitizers/env.sh`."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

T, N, R, A, B = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
os.sched_setaffinity(0, {1})


def start(base):
    d = tempfile.mkdtemp(prefix="abfs.", dir=base)
    p = subprocess.Popen(["taskset", "-c", "0", "build/asan/fuzz/" + T, "-dict=corpus/%s.dict" % T,
                          "-max_len=4096", "-timeout=25", "-rss_limit_mb=4096", "-seed=1",
                          "-runs=" + N, d, "corpus/" + T],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.send_signal(signal.SIGSTOP)
    return {"p": p, "dir": d, "cpu": None}


def done(w):
    if w["cpu"] is None:
        pid, st, ru = os.wait4(w["p"].pid, os.WNOHANG | os.WUNTRACED)
        if pid and (os.WIFEXITED(st) or os.WIFSIGNALED(st)):
            w["cpu"] = (ru.ru_utime, ru.ru_stime)
            w["p"].returncode = 0
            shutil.rmtree(w["dir"], ignore_errors=True)
    return w["cpu"] is not None


for rnd in range(R):
    a, b = start(A), start(B)
    turn = [a, b] if rnd % 2 == 0 else [b, a]
    k = 0
    while not (done(a) and done(b)):
        w = turn[k % 2]
        k += 1
        if done(w):
            continue
        w["p"].send_signal(signal.SIGCONT)
        end = time.time() + 2
        while time.time() < end and not done(w):
            time.sleep(0.02)
        if not done(w):
            w["p"].send_signal(signal.SIGSTOP)
    print("%s round %d: A %.2f + %.2f  B %.2f + %.2f  A/B %.3f" % (
        T, rnd + 1, a["cpu"][0], a["cpu"][1], b["cpu"][0], b["cpu"][1], sum(a["cpu"]) / sum(b["cpu"])),
        flush=True)
