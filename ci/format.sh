#!/usr/bin/env bash
# ci/format.sh [--check] - clang-format every C source and header we own.
# --check: change nothing, list the files that differ, exit 1 if any.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=fix
[ "${1:-}" = "--check" ] && mode=check
mapfile -t files < <(git ls-files '*.c' '*.h' | grep -v '^corpus/')
bad=0
for f in "${files[@]}"; do
	if [ $mode = check ]; then
		if ! clang-format --style=file "$f" | cmp -s - "$f"; then
			echo "format: $f differs (run ci/format.sh)"
			bad=1
		fi
	else
		clang-format --style=file -i "$f"
	fi
done
exit $bad
