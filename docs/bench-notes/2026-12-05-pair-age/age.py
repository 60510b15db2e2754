#!/usr/bin/env python3
"""age.py T SECS: one worker pinned to CPU 0 (ci/fuzz.sh's flags, shipped corpus + dict,
-seed=1, folder on /dev/shm) for SECS s; every 2 s its CPU time (/proc) and executions
(the log's last #N), and the NEW/REDUCE lines so far. Prints per 20-s window: execs,
us CPU/exec, units added (NEW) and replaced (REDUCE) per 1000 execs."""
import os, re, shutil, subprocess, sys, tempfile, time
T, SECS = sys.argv[1], int(sys.argv[2])
os.sched_setaffinity(0, {1})
d = tempfile.mkdtemp(prefix="age.", dir="/dev/shm")
os.makedirs(d + "/c"); os.makedirs(d + "/new")
for f in os.listdir("corpus/" + T): shutil.copy("corpus/%s/%s" % (T, f), d + "/c/")
log = open(d + "/log", "w")
t0 = time.time()
p = subprocess.Popen(["taskset", "-c", "0", "build/asan/fuzz/" + T, "-dict=corpus/%s.dict" % T,
    "-max_len=4096", "-timeout=25", "-rss_limit_mb=4096", "-seed=1", "-max_total_time=%d" % SECS,
    d + "/new", d + "/c"], stdout=log, stderr=log)
tck = os.sysconf("SC_CLK_TCK")
samples = [(t0, 0.0, 0, 0, 0)]
def sample():
    try:
        st = open("/proc/%d/stat" % p.pid).read().rsplit(")", 1)[1].split()
    except OSError:
        return
    cpu = (int(st[11]) + int(st[12])) / tck
    txt = open(d + "/log", errors="replace").read()
    ns = re.findall(r"^#(\d+)\s+(NEW|REDUCE|pulse)", txt, re.M)
    n = int(ns[-1][0]) if ns else 0
    new = sum(1 for x in ns if x[1] == "NEW"); red = sum(1 for x in ns if x[1] == "REDUCE")
    samples.append((time.time(), cpu, n, new, red))
while p.poll() is None:
    time.sleep(2); sample()
prev = None
for s in samples:
    if prev is None or s[0] - prev[0] >= 19.5:
        if prev is not None and s[2] > prev[2]:
            de = s[2] - prev[2]
            print("%s %3.0f-%3.0f s: %8d execs  %5.1f us/exec  NEW %.2f  REDUCE %.2f /1000" % (T,
                prev[0] - t0, s[0] - t0, de, (s[1] - prev[1]) * 1e6 / de, (s[3] - prev[3]) * 1000 / de,
                (s[4] - prev[4]) * 1000 / de))
        prev = s
shutil.rmtree(d, ignore_errors=True)
