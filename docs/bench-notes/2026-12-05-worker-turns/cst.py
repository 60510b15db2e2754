#!/usr/bin/env python3
# cst.py T RUNS ROUNDS [SLICES_MS] [TURN]: the same work done by two fuzz
# workers (seeds 1 and 2, -runs=RUNS each, each its own copy of corpus/T,
# so no shared folder), in groups that take turns of TURN s (default 1) on
# CPU 0 while the others are SIGSTOPped, so that a change of the host's
# speed reaches every group alike:
#   alone  seed 1, then seed 2, one after the other
#   pair   both at once (the kernel switches between them)
#   alt    both alive, but only one runs in each of the group's turns
#   pairN  both at once, each with an EEVDF slice of N ms (sched_setattr)
# Prints each group's CPU seconds (wait4 rusage) and its ratio over alone.
# Needs build/asan (the worker asks for 50-ms slices itself).
import ctypes, os, shutil, signal, subprocess, sys, struct, time
root = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
t = sys.argv[1]; runs = int(sys.argv[2]); rounds = int(sys.argv[3])
slices = [int(x) for x in sys.argv[4].split(',') if x] if len(sys.argv) > 4 else []
turn = float(sys.argv[5]) if len(sys.argv) > 5 else 1.0
libc = ctypes.CDLL(None, use_errno=True)
def set_slice(ns):
    buf = ctypes.create_string_buffer(struct.pack('IIQiIQQQ', 48, 0, 0, 0, 0, ns, 0, 0), 48)
    if libc.syscall(314, 0, buf, 0) != 0: raise OSError(ctypes.get_errno(), 'sched_setattr')
def start(g, seed, sl):
    d = f'/dev/shm/cs/{g}-w{seed}'
    if os.path.exists(d): shutil.rmtree(d)
    shutil.copytree(f'{root}/corpus/{t}', d)
    def pre():
        os.sched_setaffinity(0, {0})
        if sl: set_slice(sl)
    p = subprocess.Popen([f'{root}/build/asan/fuzz/{t}', f'-dict={root}/corpus/{t}.dict',
        f'-runs={runs}', f'-seed={seed}', '-rss_limit_mb=4096', '-timeout=25', d],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=pre)
    os.kill(p.pid, signal.SIGSTOP); os.waitpid(p.pid, os.WUNTRACED)
    return p
class Group:
    def __init__(s, name):
        s.name = name; s.cpu = 0.0; s.live = []
        s.sl = int(name[4:]) * 1000000 if name.startswith('pair') and name != 'pair' else 0
        s.todo = [[1], [2]] if name == 'alone' else [[1, 2]]
        s.k = 0
    def step(s):
        if not s.live and s.todo:
            s.live = [start(s.name, k, s.sl) for k in s.todo.pop(0)]
        run = s.live
        if s.name == 'alt' and len(s.live) == 2:
            s.k ^= 1; run = [s.live[s.k]]
        for p in run: os.kill(p.pid, signal.SIGCONT)
        time.sleep(turn)
        for p in s.live: os.kill(p.pid, signal.SIGSTOP)
        for p in list(s.live):
            pid, st, ru = os.wait4(p.pid, os.WNOHANG | os.WUNTRACED)
            # reap the ones that ended; stopped ones report WIFSTOPPED
            if pid and not os.WIFSTOPPED(st):
                s.cpu += ru.ru_utime + ru.ru_stime; s.live.remove(p); p.returncode = 0
    def done(s): return not s.live and not s.todo
names = ['alone', 'pair', 'alt'] + [f'pair{x}' for x in slices]
for r in range(rounds):
    gs = [Group(n) for n in names]
    while not all(g.done() for g in gs):
        for g in gs:
            if not g.done(): g.step()
    a = gs[0].cpu
    print(f'round {r}: ' + ' '.join(f'{g.name} {g.cpu:.2f}s' for g in gs) + ' | ' +
          ' '.join(f'{g.name} x{g.cpu/a:.3f}' for g in gs[1:]), flush=True)
