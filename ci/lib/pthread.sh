# ci/lib/pthread.sh - sourced by ci/kpt.sh and ci/pthread-eval.sh, which
# fuzz pthreads programs under the controlled scheduler (docs/pthread.md)
# on one pinned CPU, $cpu.  Needs signals.sh.
#
#   kmgr_pt_signature LOG
#       the failure LOG names, without addresses, pids or paths.
#
#   kmgr_pt_fuzz [--stamp] BIN SECONDS DIR [FLAG...]
#       libFuzzer from an empty corpus in DIR/corpus for up to SECONDS,
#       findings in DIR/art/, its log in DIR/log, FLAGs added; the
#       program's stdout closed (-close_fd_mask=1: a main that prints would
#       print once an input).  --stamp: each log line timestamped
#       ($EPOCHREALTIME: no fork a line).  In its own process group, its
#       pid in $fpid meanwhile, so that a signal to the script stops it.
#
#   kmgr_pt_traps ON_INTERRUPT
#       the scripts' way out: INT, TERM and HUP set $interrupted (INT,
#       TERM, HUP) and exit 128+signal; on exit the fuzzer in $fpid is
#       stopped, ON_INTERRUPT runs when a signal ended the script (it
#       prints what there is, marked so) and $scratch is removed.

kmgr_pt_sigpat='KSCHED [A-Z]+|KPT [A-Z_]+|(Address|Leak|Thread|Memory)Sanitizer: [A-Za-z-]+|Assertion `[^`]*'"'"' failed|runtime error: [a-z ]+|libFuzzer: [a-z -]+'

kmgr_pt_signature() { grep -aoE -m1 "$kmgr_pt_sigpat" "$1" | head -1 || true; }

kmgr_pt_fuzz() {
	local stamp=0 bin secs dir cmd
	[ "$1" != --stamp ] || { stamp=1; shift; }
	bin=$1 secs=$2 dir=$3
	shift 3
	cmd=(timeout -s KILL $((secs + 120)) taskset -c "$cpu" "$bin" -max_total_time="$secs" -timeout=25
		-rss_limit_mb=4096 -close_fd_mask=1 -artifact_prefix="$dir/art/" "$@" "$dir/corpus")
	mkdir -p "$dir/corpus" "$dir/art"
	set -m
	if [ "$stamp" = 1 ]; then
		("${cmd[@]}" 2>&1 | while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$dir/log") &
	else
		"${cmd[@]}" >"$dir/log" 2>&1 &
	fi
	fpid=$!
	set +m
	wait "$fpid" || true
	fpid=""
}

kmgr_pt_exit() {
	trap '' INT TERM HUP
	kmgr_stop_group "${fpid:-}"
	fpid=""
	[ -z "${interrupted:-}" ] || "$kmgr_pt_on_interrupt"
	[ -z "${scratch:-}" ] || rm -rf "$scratch"
}

kmgr_pt_traps() {
	kmgr_pt_on_interrupt=$1
	interrupted="" fpid=""
	trap kmgr_pt_exit EXIT
	trap 'interrupted=INT; exit 130' INT
	trap 'interrupted=TERM; exit 143' TERM
	trap 'interrupted=HUP; exit 129' HUP
}
