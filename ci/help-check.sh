#!/usr/bin/env bash
# ci/help-check.sh [--help] - every ci/*.sh (and ci/bench/, ci/nightly/) answers --help with its whole
# header comment and nothing else: exit 0, the header's last line printed
# (not cut short), and no line that is code of the script (no line past
# the header).  A script whose usage() writes its own text (a here-document:
# fault-sweep.sh) and afl-cc-cmplog.sh (a compiler wrapper whose --help is
# afl-cc.sh's, as its header says) are checked for exit 0 only.  Exit 0 when all pass, 1
# otherwise.
set -uo pipefail
. "$(dirname "$0")/lib/usage.sh"
case "${1:-}" in
-h | --help) kmgr_usage; exit 0 ;;
"") ;;
*) echo "help-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
esac
dir=$(cd "$(dirname "$0")" && pwd)
fail=0 n=0
for f in "$dir"/*.sh "$dir"/bench/*.sh "$dir"/nightly/*.sh; do
	n=$((n + 1))
	name=ci/${f#"$dir"/}
	out=$(bash "$f" --help 2>&1) || { echo "help-check: $name --help exits $?"; fail=1; continue; }
	[ "$(basename "$f")" != afl-cc-cmplog.sh ] || continue
	awk '/^usage\(\)/ { u = 1 } u && /<</ { found = 1 } u && /^}/ { exit } END { exit !found }' "$f" && continue
	# the header: comment lines from line 2; the last one must be printed
	last=$(awk 'NR == 1 { next } !/^#/ { exit } { l = $0 } END { sub(/^# ?/, "", l); print l }' "$f")
	grep -qxF -- "$last" <<<"$out" || { echo "help-check: $name --help stops before its header's last line: $last"; fail=1; }
	# code: the lines after the header, none of which may be printed
	while IFS= read -r code; do
		[ -n "$code" ] || continue
		if grep -qxF -- "$code" <<<"$out"; then
			echo "help-check: $name --help prints code: $code"
			fail=1
			break
		fi
	done < <(awk 'NR == 1 { next } !/^#/ { p = 1 } p' "$f" | head -n 5)
done
[ $fail = 0 ] && echo "help-check: $n scripts answer --help with their header"
exit $fail
