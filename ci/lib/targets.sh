# ci/lib/targets.sh - sourced by the entry scripts: the fuzz targets, read
# from the one registry (fuzz/targets/TARGETS, NAME SHAPE a line), which
# the build reads too, so that a new target is added in one place.  Needs
# $KMGR_ROOT or the script's own folder's parent.
#
#   kmgr_targets [SEP]
#       the targets in build order, separated by SEP (default ",")
#
#   kmgr_target_list LIST
#       LIST (a,b) into the array tlist; each name must be a target of the
#       registry with a corpus (corpus/regressions is a folder of replay
#       inputs, not a target): else bad usage (kmgr_die, ci/lib/usage.sh)

kmgr_targets() {
	local sep=${1:-,} root=${KMGR_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
	local names
	names=$(awk '/^[^#]/ { print $1 }' "$root/fuzz/targets/TARGETS" | paste -sd ' ') || names=""
	if [ -z "$names" ]; then
		echo "targets.sh: no targets in $root/fuzz/targets/TARGETS" >&2
		return 1
	fi
	echo "${names// /$sep}"
}

kmgr_target_list() {
	local root=${KMGR_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)} t all
	all=$(kmgr_targets ,) || exit 1
	IFS=, read -r -a tlist <<<"$1"
	[ ${#tlist[@]} -gt 0 ] && [ -n "${tlist[*]}" ] || kmgr_die "--targets: no target named"
	for t in "${tlist[@]}"; do
		[[ ",$all," == *",$t,"* ]] && [ -d "$root/corpus/$t" ] ||
			kmgr_die "unknown target '$t' (targets: $all)"
	done
}
