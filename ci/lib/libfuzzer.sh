# ci/lib/libfuzzer.sh - sourced by the ci/ scripts that read libFuzzer's
# output: the one parser of its status lines and final stats.
#
#   kmgr_lf_status LOG
#       "cov ft corp exec/s" of the newest status line, in either format:
#       fork mode "#N: cov: C ft: F corp: K exec/s: E ..." or in-process
#       "#N NEW cov: C ft: F corp: K/12Kb ... exec/s: E ..."; nothing when
#       the log has none yet.
#   kmgr_lf_final_eps LOG
#       the run's average exec/s from -print_final_stats=1, weighted by the
#       executions of each run when the log holds several (a finding
#       restarted it); nothing when there are none.

kmgr_lf_status() {
	grep -aE '^#[0-9]+:?[[:space:]]+([A-Z]+[[:space:]]+)?cov: ' "$1" 2>/dev/null | tail -1 |
		sed -nE 's/.*cov: ([0-9]+) ft: ([0-9]+) corp: ([0-9]+)[^ ]* .*exec\/s: ([0-9]+).*/\1 \2 \3 \4/p'
}

kmgr_lf_final_eps() {
	awk '/stat::number_of_executed_units/ {u = $2}
		/stat::average_exec_per_sec/ && $2 > 0 {n += u; s += u / $2}
		END {if (s > 0) printf "%d\n", n / s}' "$1"
}
