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

kmgr_signals_reset() {
	local ign
	[ -z "${KMGR_SIGNALS_RESET:-}" ] || return 0
	ign=$(awk '/^SigIgn:/ {print $2}' "/proc/$$/status" 2>/dev/null) || return 0
	[ -n "$ign" ] && (((16#$ign & 2) != 0)) || return 0
	KMGR_SIGNALS_RESET=1 exec python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp("bash", ["bash"] + sys.argv[1:])' "$@"
}
