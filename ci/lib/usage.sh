# ci/lib/usage.sh - sourced by the ci/ scripts whose --help is their header
# comment.
#
#   kmgr_usage
#       prints the calling script's header: its comment lines from line 2
#       to the first line that is not a comment, without the "# ".  The
#       header is the one place the usage is written; counting its lines
#       by hand printed code after some (and cut others short).
#
#   kmgr_die MESSAGE...
#       bad usage: "NAME: MESSAGE (see --help)", one line on stderr, and
#       exit 2 (ci/cli-check.sh's convention); NAME is the script's file
#       name without .sh.

kmgr_usage() {
	awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"
}

kmgr_die() {
	echo "$(basename "$0" .sh): $* (see --help)" >&2
	exit 2
}
