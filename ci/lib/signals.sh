# ci/lib/signals.sh - sourced by the long-running scripts (fuzz.sh, afl.sh,
# nightly.sh).  Their rule (ci/signal-check.sh checks it): SIGINT, SIGTERM
# and SIGHUP stop everything the script started, it keeps what it has
# (a summary or report marked "interrupted"), removes its scratch files and
# exits 128+signal.
#
#   kmgr_signals_reset "$0" "$@"
#       a script started in the background by a non-interactive shell
#       (`ci/fuzz.sh &` in another script) inherits SIGINT ignored, and bash
#       can neither trap nor reset a signal ignored on entry: `kill -INT`
#       would do nothing.  Then the script is run again, at once, with
#       SIGINT back to its default, so its trap works.
#
#   kmgr_stop_group PID
#       stops the process group PID leads (a child started in a group of
#       its own, with everything it forked): SIGTERM (and SIGCONT, for a
#       stopped one), up to 5 s to end, then SIGKILL; then reaps PID.
#       Nothing when PID is empty.
#
#   kmgr_waited CMD...
#       runs CMD in the background and waits for it, with its PID in
#       $child meanwhile (the caller's trap stops it), so that a signal is
#       acted on at once: bash runs a trap only after a foreground command
#       ends.  Returns CMD's status.

kmgr_signals_reset() {
	local ign
	[ -z "${KMGR_SIGNALS_RESET:-}" ] || return 0
	ign=$(awk '/^SigIgn:/ {print $2}' "/proc/$$/status" 2>/dev/null) || return 0
	[ -n "$ign" ] && (((16#$ign & 2) != 0)) || return 0
	KMGR_SIGNALS_RESET=1 exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp("bash", ["bash"] + sys.argv[1:])' "$@"
}

kmgr_stop_group() {
	local pid=$1 i
	[ -n "$pid" ] || return 0
	kill -TERM -- "-$pid" 2>/dev/null || true
	# a stopped process (workers taking turns, ci/lib/turns.sh) acts on
	# the SIGTERM only once continued
	kill -CONT -- "-$pid" 2>/dev/null || true
	for i in $(seq 50); do
		kill -0 -- "-$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

kmgr_waited() {
	local rc=0
	"$@" &
	child=$!
	# (bash's own "line N: PID Aborted" notice on stderr is dropped: the
	# caller reads the status and says what died, in its own words)
	wait "$child" 2>/dev/null || rc=$?
	child=""
	return "$rc"
}
