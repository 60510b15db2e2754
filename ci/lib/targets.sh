# ci/lib/targets.sh - sourced by the entry scripts: the fuzz targets, read
# from the one list the build has (KFUZZ_TARGETS in fuzz/CMakeLists.txt),
# so that a new target is added in one place.  Needs $KMGR_ROOT or the
# script's own folder's parent.
#
#   kmgr_targets [SEP]
#       the targets in build order, separated by SEP (default ",")

kmgr_targets() {
	local sep=${1:-,} root=${KMGR_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
	local line
	line=$(grep -E '^set\(KFUZZ_TARGETS ' "$root/fuzz/CMakeLists.txt") || {
		echo "targets.sh: no set(KFUZZ_TARGETS ...) in fuzz/CMakeLists.txt" >&2
		return 1
	}
	line=${line#set(KFUZZ_TARGETS }
	line=${line%)}
	echo "${line// /$sep}"
}
