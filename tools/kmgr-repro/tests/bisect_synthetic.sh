#!/usr/bin/env bash
# bisect_synthetic.sh KMGR_REPRO SCRATCH - kmgr-repro bisect over a small
# repository of its own, with the build and the test replaced
# (KMGR_BISECT_BUILD, KMGR_BISECT_TEST): seven commits, the fourth brings
# the bug, the second does not build.  bisect must name the fourth, skip the
# second when it meets it, build each commit at most once (a second bisect
# builds nothing), and verify must answer good / bad; bad usage exits 2.
# Both ends are tested first (--good at a bad commit, a crash that does not
# fail at --bad: exit 2); an interrupted build is not marked broken; a
# SIGKILL of bisect mid-build leaves no process behind, even one that
# left the build's process group (as ninja's compilers do); a TMPDIR with
# a quote in it is only a name; nothing is left in `git worktree list`.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: bisect_synthetic.sh KMGR_REPRO SCRATCH" >&2; exit 2; }
tool=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir/repo" "$dir/it's \$(x)"
export XDG_CACHE_HOME=$dir/cache TMPDIR="$dir/it's \$(x)"
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
grep -q "first bad commit: $c3" <<<"$out" || { echo "bisect_synthetic: the first bad commit is $c3 (c3), not found" >&2; exit 1; }
builds=$(echo "$out" | sed -n 's/^\([0-9]*\) build(s), [0-9]* test run(s), .* s$/\1/p')
[ -n "$builds" ] && [ "$builds" -ge 3 ] && [ "$builds" -le 6 ] || { echo "bisect_synthetic: '$builds' builds" >&2; exit 1; }
out=$("$tool" bisect "$dir/crash" --good "$c0" --bad "$c6" --repo "$dir/repo") || true
grep -q "first bad commit: $c3" <<<"$out" && grep -q "^0 build(s), " <<<"$out" || { echo "bisect_synthetic: the cache was not used: $out" >&2; exit 1; }
# the ends: --good at a bad commit, and a --bad at which the crash does not fail
for ends in "$c4 $c6 reproduces at --good" "$c0 $c2 does not reproduce at --bad"; do
	set -- $ends
	rc=0; "$tool" bisect "$dir/crash" --good "$1" --bad "$2" --repo "$dir/repo" >/dev/null 2>"$dir/err" || rc=$?
	[ "$rc" = 2 ] && grep -q -- "${*:3}" "$dir/err" || { echo "bisect_synthetic: --good $1 --bad $2: exit $rc, $(cat "$dir/err")" >&2; exit 1; }
done
"$tool" verify "$dir/crash" --rev "$c2" --repo "$dir/repo" >/dev/null || { echo "bisect_synthetic: $c2 not good" >&2; exit 1; }
rc=0; "$tool" verify "$dir/crash" --rev "$c5" --repo "$dir/repo" >/dev/null || rc=$?
[ "$rc" = 1 ] || { echo "bisect_synthetic: verify of a bad commit exited $rc" >&2; exit 1; }
for bad in "--good nope --bad $c6" "--good $c6 --bad $c0" "--good $c0"; do
	rc=0; "$tool" bisect "$dir/crash" $bad --repo "$dir/repo" >/dev/null 2>"$dir/err" || rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <"$dir/err")" = 1 ] || { echo "bisect_synthetic: '$bad': exit $rc, $(cat "$dir/err")" >&2; exit 1; }
done
rc=0; "$tool" bisect "$dir/crash" --good a --bad b --repo "$dir" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || { echo "bisect_synthetic: not a repository: exit $rc" >&2; exit 1; }
[ -z "$(ls -A "$TMPDIR")" ] || { echo "bisect_synthetic: scratch left: $(ls -A "$TMPDIR")" >&2; exit 1; }
[ "$(git -C "$dir/repo" worktree list | wc -l)" = 1 ] || { echo "bisect_synthetic: worktrees left" >&2; exit 1; }

# Interrupted mid-build (SIGINT): exit 130, the commit marked neither built
# nor broken.  Killed mid-build (SIGKILL): nothing of the build survives,
# not even a process in a session of its own (setsid, as ninja's compilers
# leave the build's process group).
echo "bug 5" >state && c7=$(commit c7)
tag=$$$RANDOM build0=$KMGR_BISECT_BUILD
export KMGR_BISECT_BUILD="setsid sleep 3$tag & sleep 3$tag; exit 0"
"$tool" bisect "$dir/crash" --good "$c0" --bad "$c7" --repo "$dir/repo" >"$dir/out" 2>&1 &
pid=$!
for _ in $(seq 100); do pgrep -f "sleep 3$tag" >/dev/null && break; sleep 0.1; done
kill -INT $pid
rc=0; wait $pid || rc=$?
[ "$rc" = 130 ] || { echo "bisect_synthetic: SIGINT mid-build: exit $rc; $(cat "$dir/out")" >&2; exit 1; }
marks=$(ls -A "$XDG_CACHE_HOME/kmgr-fuzz/bisect/$c7/asan" | grep -v '^build.log$' || true)
[ -z "$marks" ] || { echo "bisect_synthetic: an interrupted build was marked: $marks" >&2; exit 1; }
sleep 0.5
! pgrep -f "sleep 3$tag" >/dev/null || { echo "bisect_synthetic: SIGINT left $(pgrep -af "sleep 3$tag")" >&2; pgrep -f "sleep 3$tag" | xargs -r kill; exit 1; }
"$tool" bisect "$dir/crash" --good "$c0" --bad "$c7" --repo "$dir/repo" >"$dir/out" 2>&1 &
pid=$!
for _ in $(seq 100); do [ "$(pgrep -fc "sleep 3$tag")" -ge 2 ] && break; sleep 0.1; done
kill -KILL $pid
wait $pid 2>/dev/null || true
for _ in $(seq 50); do pgrep -f "sleep 3$tag" >/dev/null || break; sleep 0.1; done
left=$(pgrep -af "sleep 3$tag" || true)
[ -z "$left" ] || { echo "bisect_synthetic: SIGKILL mid-build left: $left" >&2; pgrep -f "sleep 3$tag" | xargs -r kill; exit 1; }
[ "$(git -C "$dir/repo" worktree list | wc -l)" = 1 ] || { echo "bisect_synthetic: worktrees left" >&2; exit 1; }
export KMGR_BISECT_BUILD=$build0
# A range longer than 4,096 commits is read whole (it was cut there, and
# the answer was then a commit never tested): 5,000 commits, the bug in
# the 4,500th (fast-import: a second).
long=$dir/long
git init -q "$long"
for i in $(seq 5000); do
	st=ok; [ "$i" -ge 4500 ] && st="bug $i"
	printf 'commit refs/heads/master\ncommitter t <t@t> %d +0000\ndata %d\nc%d\nM 644 inline state\ndata %d\n%s\n' \
		"$i" "$((${#i} + 1))" "$i" "$((${#st} + 1))" "$st"
done | git -C "$long" fast-import --quiet
lfirst=$(git -C "$long" rev-list --max-parents=0 master)
lbug=$(git -C "$long" log --format=%H --grep='^c4500$' master)
out=$(XDG_CACHE_HOME=$dir/cache-long "$tool" bisect "$dir/crash" --good "$lfirst" --bad master --repo "$long" --times 1) || true
grep -q "^bisect: 4999 commit(s)" <<<"$out" && grep -q "first bad commit: $lbug" <<<"$out" || { echo "bisect_synthetic: 5,000 commits: $(echo "$out" | grep -v '^  ')" >&2; exit 1; }
echo "bisect_synthetic: a range of 4,999 commits searched whole: $(echo "$out" | tail -1)"

# A full cache disk: one line, exit 2 (no fclose(NULL) crash).  Needs a
# tmpfs mount (root); said and skipped otherwise.
full=$dir/full
mkdir -p "$full"
if mount -t tmpfs -o size=512k tmpfs "$full" 2>/dev/null; then
	trap 'umount "$full" 2>/dev/null || true' EXIT
	head -c 600k /dev/zero >"$full/filler" 2>/dev/null || true
	rc=0
	XDG_CACHE_HOME=$full "$tool" bisect "$dir/crash" --good "$c0" --bad "$c6" --repo "$dir/repo" >/dev/null 2>"$dir/err" || rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <"$dir/err")" = 1 ] || { echo "bisect_synthetic: a full cache disk: exit $rc, $(cat "$dir/err")" >&2; exit 1; }
	echo "bisect_synthetic: a full cache disk: $(cat "$dir/err")"
	umount "$full"
	trap - EXIT
else
	echo "bisect_synthetic: cannot mount a tmpfs here: the full-disk case not checked"
fi
echo "bisect_synthetic: found $c3 in $builds build(s), cached on the second run; ends tested; verify and bad usage as documented; SIGINT and SIGKILL mid-build leave nothing"
