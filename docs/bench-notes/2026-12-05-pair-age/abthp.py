#!/usr/bin/env python3
"""abthp.py T N ROUNDS KIND: group A = worker(s) without the THP preload, B = with it
(PRE, default ./thp.so: `gcc -O2 -shared -fPIC -o thp.so thp.c -lpthread`).  Run from the
tree's root after `. sanitizers/env.sh`.
KIND: one (one worker each) | pair (two workers at once each, a folder each, seeds 1,2).
Groups take turns of 2 s on CPU 0 (controller on CPU 1). Prints CPU s per group and A/B."""
import os, shutil, signal, subprocess, sys, tempfile, time
T, N, R, KIND = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
PRE = os.path.abspath(os.environ.get("PRE", "thp.so"))
os.sched_setaffinity(0, {1})
def start1(env_pre, seed):
    d = tempfile.mkdtemp(prefix="abenv.", dir="/dev/shm")
    env = dict(os.environ)
    if env_pre:
        env["LD_PRELOAD"] = PRE
    p = subprocess.Popen(["taskset", "-c", "0", "build/asan/fuzz/" + T, "-dict=corpus/%s.dict" % T,
                          "-max_len=4096", "-timeout=25", "-rss_limit_mb=4096", "-seed=%d" % seed,
                          "-runs=" + N, d, "corpus/" + T], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.send_signal(signal.SIGSTOP)
    return {"p": p, "dir": d, "cpu": None}
def done(w):
    if w["cpu"] is None:
        pid, st, ru = os.wait4(w["p"].pid, os.WNOHANG | os.WUNTRACED)
        if pid and (os.WIFEXITED(st) or os.WIFSIGNALED(st)):
            w["cpu"] = ru.ru_utime + ru.ru_stime
            w["p"].returncode = 0
            shutil.rmtree(w["dir"], ignore_errors=True)
    return w["cpu"] is not None
def gdone(g): return all([done(w) for w in g])
for rnd in range(R):
    n = 2 if KIND == "pair" else 1
    a = [start1(False, s + 1) for s in range(n)]
    b = [start1(True, s + 1) for s in range(n)]
    turn = [a, b] if rnd % 2 == 0 else [b, a]
    k = 0
    while not (gdone(a) and gdone(b)):
        g = turn[k % 2]; k += 1
        if gdone(g): continue
        for w in g:
            if not done(w): w["p"].send_signal(signal.SIGCONT)
        end = time.time() + 2
        while time.time() < end and not gdone(g): time.sleep(0.02)
        for w in g:
            if not done(w): w["p"].send_signal(signal.SIGSTOP)
    ca = sum(w["cpu"] for w in a); cb = sum(w["cpu"] for w in b)
    print("%s %s round %d: A %.2f  B(thp) %.2f  B/A %.3f" % (T, KIND, rnd + 1, ca, cb, cb / ca), flush=True)
