# ci/lib/cpus.sh - sourced by the scripts whose --jobs default is "every
# CPU": the CPUs this process may run on, not the machine's.
#
#   kmgr_cpus
#       the smaller of the CPUs in this process's affinity mask
#       (sched_getaffinity, which taskset and cpusets set; `nproc` reads
#       it too but also obeys OMP_NUM_THREADS) and the cgroup v2 CPU quota
#       (cpu.max "QUOTA PERIOD" of this process's cgroup and its parents,
#       rounded up; cgroup v1: cpu.cfs_quota_us / cpu.cfs_period_us);
#       at least 1.  $KMGR_CGROUP_ROOT stands for
#       /sys/fs/cgroup (a test points it at a made-up tree).
#
#   kmgr_cpu_list
#       the CPU numbers of this process's affinity mask, in order, on one
#       line (nothing if python3 cannot say).

kmgr_cpus() {
	python3 - "${KMGR_CGROUP_ROOT:-/sys/fs/cgroup}" <<'PY' 2>/dev/null || echo 1
import os, sys
root = sys.argv[1]
n = len(os.sched_getaffinity(0))
rel = ""
try:
    for line in open("/proc/self/cgroup"):
        if line.startswith("0::"):
            rel = line[3:].strip().strip("/")
except OSError:
    pass
parts = rel.split("/") if rel else []
for i in range(len(parts), -1, -1):
    try:
        quota, period = open(os.path.join(root, *parts[:i], "cpu.max")).read().split()[:2]
    except (OSError, ValueError):
        continue
    if quota != "max" and int(period) > 0:
        n = min(n, max(1, -(-int(quota) // int(period))))
# cgroup v1: the cpu controller's quota (-1: none)
try:
    for line in open("/proc/self/cgroup"):
        _, ctl, path = line.rstrip("\n").split(":", 2)
        if "cpu" in ctl.split(","):
            d = os.path.join(root, "cpu", path.strip("/"))
            q = int(open(os.path.join(d, "cpu.cfs_quota_us")).read())
            per = int(open(os.path.join(d, "cpu.cfs_period_us")).read())
            if q > 0 and per > 0:
                n = min(n, max(1, -(-q // per)))
except (OSError, ValueError):
    pass
print(max(1, n))
PY
}

kmgr_cpu_list() {
	python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))' 2>/dev/null || true
}
