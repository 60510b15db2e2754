# ci/lib/afl.sh - sourced by the scripts that run afl-fuzz (afl.sh,
# bench/scale-bench.sh).  A run tags every process it starts with an environment
# variable (NAME=VALUE), which afl-fuzz passes on to its fork servers and
# their test processes.  That tag is the only way to find them all: a fork
# server calls setsid (no group kill reaches it), and a CmpLog
# persistent-mode child, stopped (SIGSTOP) between two inputs, keeps a
# SIGTERM pending, stays stopped and is reparented to init for good.
#
#   kmgr_afl_env
#       the environment afl-fuzz wants, over sanitizers/env.sh's: ASan and
#       UBSan abort without symbolizing, LSan unsymbolized, no MSan or TSan
#       options (an ASan build: afl-fuzz refuses MSAN_OPTIONS without its
#       exit code); and for a shared machine: no CPU pinning (afl-fuzz would
#       refuse when another instance holds the free cores), no UI, no
#       cpufreq check, crashes kept even when the kernel's core_pattern
#       pipes them elsewhere.
#   kmgr_tagged NAME=VALUE
#       the pids of the processes whose environment holds NAME=VALUE
#   kmgr_reap_tagged NAME=VALUE WHO
#       SIGKILL (which also ends a stopped process) to every such process
#       until none is left, five rounds at most; says "WHO: processes of
#       this run survive: PIDS" on stderr and returns 1 if some do.

kmgr_afl_env() {
	export ASAN_OPTIONS="$ASAN_OPTIONS:abort_on_error=1:symbolize=0"
	export UBSAN_OPTIONS="$UBSAN_OPTIONS:halt_on_error=1:abort_on_error=1:symbolize=0"
	export LSAN_OPTIONS="$LSAN_OPTIONS:symbolize=0"
	unset MSAN_OPTIONS TSAN_OPTIONS
	export AFL_NO_UI=1 AFL_NO_AFFINITY=1 AFL_SKIP_CPUFREQ=1
	export AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1
}

kmgr_tagged() {
	grep -lzx "$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true
}

kmgr_reap_tagged() {
	local left i
	for i in 1 2 3 4 5; do
		left=$(kmgr_tagged "$1")
		[ -n "$left" ] || return 0
		# shellcheck disable=SC2086
		kill -KILL $left 2>/dev/null || true
		sleep 0.2
	done
	left=$(kmgr_tagged "$1")
	[ -n "$left" ] || return 0
	echo "$2: processes of this run survive: $(echo "$left" | paste -sd' ')" >&2
	return 1
}
