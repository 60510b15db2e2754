#!/usr/bin/env bash
# no_tree_paths.sh KMGR_REPRO SRC SCRATCH - the tool does not depend on the
# tree it was built from (issue 38): no suppressions= path of SRC compiled
# in (the files' text is, handed to each child as a memfd), and a copy of
# the tool away from its build tree, run from env -i, gives its replay
# children suppression files that exist.  (__FILE__ strings of the library
# are names in messages, not files it opens: not counted here.)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: no_tree_paths.sh KMGR_REPRO SRC SCRATCH" >&2; exit 2; }
tool=$1 src=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/elsewhere"
fail() { echo "no_tree_paths: $*" >&2; exit 1; }
if grep -a -q "suppressions=$src[^:\"]*" "$tool"; then
	fail "$tool names suppression files of its tree: $(grep -a -o "suppressions=$src[^:\"]*" "$tool" | sort -u | tr '\n' ' ')"
fi
cp "$tool" "$dir/elsewhere/kmgr-repro"
cat >"$dir/bin/stress_fake" <<'EOS'
#!/bin/sh
# print each sanitizer's suppressions= file and whether it can be read
for v in "$ASAN_OPTIONS" "$UBSAN_OPTIONS" "$LSAN_OPTIONS"; do
	f=$(echo "$v" | tr ':' '\n' | sed -n 's/^suppressions=//p')
	[ -n "$f" ] || { echo "no suppressions in '$v'" >&2; exit 3; }
	[ -r "$f" ] || { echo "unreadable suppressions $f" >&2; exit 4; }
done
echo "ERROR: AddressSanitizer: heap-use-after-free on address 0x1" >&2
exit 1
EOS
chmod +x "$dir/bin/stress_fake"
printf 'binary stress_fake\n' >"$dir/x.repro"
out=$(env -i PATH="$dir/bin:/usr/bin:/bin" HOME="$dir" "$dir/elsewhere/kmgr-repro" replay "$dir/x.repro" -v 2>&1) || true
grep -q "reproduced 1/1: heap-use-after-free" <<<"$out" || fail "a replay from env -i: $out"
echo "no_tree_paths: no suppressions= path of the tree compiled in; a moved tool's children read theirs"
