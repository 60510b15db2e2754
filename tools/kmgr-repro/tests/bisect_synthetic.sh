#!/usr/bin/env bash
# bisect_synthetic.sh KMGR_REPRO SCRATCH - kmgr-repro bisect over a small
# repository of its own, with the build and the test replaced
# (KMGR_BISECT_BUILD, KMGR_BISECT_TEST): seven commits, the fourth brings
# the bug, the second does not build.  bisect must name the fourth, skip the
# second when it meets it, build each commit at most once (a second bisect
# builds nothing), and verify must answer good / bad; bad usage exits 2.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: bisect_synthetic.sh KMGR_REPRO SCRATCH" >&2; exit 2; }
tool=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir/repo"
export XDG_CACHE_HOME=$dir/cache TMPDIR=$dir
export KMGR_BISECT_BUILD='test ! -e "$KMGR_BISECT_SRC/BROKEN" && cp "$KMGR_BISECT_SRC/state" "$KMGR_BISECT_OUT/"'
export KMGR_BISECT_TEST='if grep -q bug "$KMGR_BISECT_OUT/state"; then exit 1; fi; exit 0'
cd "$dir/repo"
git init -q && git config user.email t@t && git config user.name t
commit() { git add -A && git commit -qm "$1" && git rev-parse HEAD; }
echo ok >state && c0=$(commit c0)
touch BROKEN && c1=$(commit "c1 broken")
rm BROKEN && echo ok2 >state && c2=$(commit c2)
echo bug >state && c3=$(commit "c3 the bug")
echo "bug 2" >state && c4=$(commit c4)
echo "bug 3" >state && c5=$(commit c5)
echo "bug 4" >state && c6=$(commit c6)
echo crash >"$dir/crash"
out=$("$tool" bisect "$dir/crash" --good "$c0" --bad "$c6" --repo "$dir/repo") || true
echo "$out"
echo "$out" | grep -q "first bad commit: $c3" || { echo "bisect_synthetic: the first bad commit is $c3 (c3), not found" >&2; exit 1; }
builds=$(echo "$out" | sed -n 's/.*(\([0-9]*\) build(s)).*/\1/p')
[ "$builds" -ge 2 ] && [ "$builds" -le 6 ] || { echo "bisect_synthetic: $builds builds" >&2; exit 1; }
out=$("$tool" bisect "$dir/crash" --good "$c0" --bad "$c6" --repo "$dir/repo") || true
echo "$out" | grep -q "first bad commit: $c3 (0 build(s))" || { echo "bisect_synthetic: the cache was not used: $out" >&2; exit 1; }
"$tool" verify "$dir/crash" --rev "$c2" --repo "$dir/repo" >/dev/null || { echo "bisect_synthetic: $c2 not good" >&2; exit 1; }
rc=0; "$tool" verify "$dir/crash" --rev "$c5" --repo "$dir/repo" >/dev/null || rc=$?
[ "$rc" = 1 ] || { echo "bisect_synthetic: verify of a bad commit exited $rc" >&2; exit 1; }
for bad in "--good nope --bad $c6" "--good $c6 --bad $c0" "--good $c0"; do
	rc=0; "$tool" bisect "$dir/crash" $bad --repo "$dir/repo" >/dev/null 2>"$dir/err" || rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <"$dir/err")" = 1 ] || { echo "bisect_synthetic: '$bad': exit $rc, $(cat "$dir/err")" >&2; exit 1; }
done
rc=0; "$tool" bisect "$dir/crash" --good a --bad b --repo "$dir" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "bisect_synthetic: not a repository: exit $rc" >&2; exit 1; }
[ -z "$(ls -d "$dir"/kmgr-bisect-* 2>/dev/null)" ] || { echo "bisect_synthetic: scratch left" >&2; exit 1; }
echo "bisect_synthetic: found $c3 in $builds build(s), cached on the second run; verify and bad usage as documented"
