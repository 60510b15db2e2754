#!/usr/bin/env bash
# tests/check_exports.sh - the installed library exports the public API and
# nothing else.
#   check_exports.sh LIBNRT_SO INCLUDE_NRT_DIR [LIBNRT_A]
# The public API is every function declared in INCLUDE_NRT_DIR/*.h.  Fails
# (exit 1, one line per name) if `nm -D --defined-only` of the shared
# library shows a name the headers do not declare, or lacks one they do;
# with LIBNRT_A, also if the archive defines a global the headers do not
# declare (a name a program's own could collide with; __* excepted, below).
# Exit 2: bad usage.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ] || [ "$1" = --help ]; then
	echo "usage: check_exports.sh LIBNRT_SO INCLUDE_NRT_DIR [LIBNRT_A]" >&2
	exit 2
fi
so=$1 inc=$2 ar=${3:-}
nm=${NM:-nm}
for f in "$so" ${ar:+"$ar"}; do
	[ -f "$f" ] || { echo "check_exports: $f: no such file" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Declared functions: an identifier followed by '(' once comments and
# preprocessor lines are gone, less the keywords that can precede a '('
# (function-pointer typedefs are written (*NAME) and do not match).
cat "$inc"/*.h | perl -0777 -ne 's{/\*.*?\*/}{}gs; s{//[^\n]*}{}g; s{^[ \t]*#(?:[^\n]*\\\n)*[^\n]*}{}gm;
	print "$1\n" while /\b([A-Za-z_][A-Za-z0-9_]*)\s*\(/g' |
	grep -Evx 'void|sizeof|_Static_assert|static_assert|_Alignof|__attribute__|__typeof__' |
	sort -u >"$tmp/declared"
if [ ! -s "$tmp/declared" ]; then
	echo "check_exports: no function declarations found in $inc/*.h" >&2
	exit 2
fi

# Defined dynamic symbols without their version suffix; the version node's
# own absolute symbols (NRT_2.0.0, NRT_3.0.0) are not functions.
"$nm" -D --defined-only "$so" | awk '!($2 == "A" && $3 ~ /^NRT_[0-9]/) { print $3 }' |
	sed 's/@.*//' | sort -u >"$tmp/exported"

status=0
while read -r name; do
	echo "check_exports: $so exports $name, which no public header declares"
	status=1
done < <(comm -13 "$tmp/declared" "$tmp/exported")
while read -r name; do
	echo "check_exports: $so lacks $name, which a public header declares"
	status=1
done < <(comm -23 "$tmp/declared" "$tmp/exported")

# The archive may keep names of the implementation's namespace (__*: a
# sanitizer's bookkeeping, lib/CMakeLists.txt says why); no program defines
# those, so they cannot collide.
if [ -n "$ar" ]; then
	"$nm" -g --defined-only "$ar" | awk 'NF == 3 && $3 !~ /^__/ { print $3 }' | sort -u \
		>"$tmp/archived"
	while read -r name; do
		echo "check_exports: $ar defines the global $name, which no public header declares"
		status=1
	done < <(comm -13 "$tmp/declared" "$tmp/archived")
fi
[ $status -eq 0 ] && echo "check_exports: $(wc -l <"$tmp/exported") exported names, all declared in $inc"
exit $status
