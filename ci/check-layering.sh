#!/usr/bin/env bash
# ci/check-layering.sh [--self-test] [--help] - the layering rule, checked.
#
# The rule (docs/contributing.md, "Layering"): lib/sched is the only code
# that touches threads, locks, atomics and time.  Everything else goes through
# lib/sched/ksched.h (ks_mutex_*, ks_atomic_*, ks_usleep, ks_now_ns,
# ks_wall_ns, ks_thread_*), which is what lets the controlled scheduler
# take over every interleaving and keeps the wall clock out of controlled
# runs.  Nothing outside lib/sched reads ks_atomic_t's member either: the
# quiet family (ks_atomic_load_quiet, _store_quiet, _reset, _cas_quiet,
# _max_quiet, _peek) is the way in.  And the fuzz wing's calls go one way,
# targets -> harness -> oracle -> prog (docs/harness.md), which its
# #include lines show.
#
# Scope: every *.c and *.h under lib/ (but lib/sched/), fuzz/, stress/,
# tools/ and support/: the code that runs the library, and may run under the controlled
# scheduler.  Not examples/ (user code on the installed library and its
# public headers only, where threads are the user's own business; in
# examples/pthread/, user pthreads programs that kpt forwards), not
# corpus/ (emitted tests are generated from tools/kmgr-repro, which is
# checked), not build trees.
#
# Rules, matched on the code with comments and string literals blanked:
#   threads        <pthread.h> <threads.h> <semaphore.h> pthread_* thrd_* mtx_*
#                  cnd_* tss_* sem_wait/post/... sched_yield
#   atomics        <stdatomic.h> _Atomic atomic_*() atomic_int & co. __atomic_*
#                  __sync_*
#   ks-internals   .v / ->v (the member of ks_atomic_t)
#   time           clock_gettime clock_nanosleep nanosleep usleep sleep time()
#                  gettimeofday clock() timespec_get alarm setitimer timer_*
# and on the #include "..." lines:
#   wing           fuzz/prog/ includes nothing from harness/ or oracle/;
#                  fuzz/oracle/ nothing from harness/ or prog/; stress/
#                  nothing from harness/ or prog/ (it links koracle alone)
#
# Exceptions live in ci/layering-allow.txt, one a line:
#   PATH RULE REASON...     (RULE: one of the above, or * for all)
# An entry without a reason or with an unknown rule is an error; one that
# no longer matches anything is reported (delete it) but does not fail, so
# that the change which removes the last raw call is not blocked by it.
#
# --self-test copies the checked tree to a temporary directory, checks the
# copy is green, then injects one bad line per rule (and a bad allow-list
# entry) and requires each to turn the check red; comments and strings that
# name raw calls must stay green, a stale entry must be reported.
#
# Exit status: 0 clean, 1 violations (each printed as path:line: [rule]),
# 2 usage.
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"

usage() { kmgr_usage; }

root=$(cd "$(dirname "$0")/.." && pwd)
mode=check
while [ $# -gt 0 ]; do
	case $1 in
	--self-test) mode=self-test ;;
	--root)
		[ $# -ge 2 ] || { echo "check-layering: --root needs a directory" >&2; exit 2; }
		root=$2
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	*)
		echo "check-layering: unknown argument '$1' (see --help)" >&2
		exit 2
		;;
	esac
	shift
done

# The checker proper: perl, because it blanks comments and strings while
# keeping line numbers, which a grep cannot.  Reads the allow-list, then
# the files named on stdin.
check_tree() {
	local dir=$1
	(
		cd "$dir"
		find lib fuzz stress tools support -path lib/sched -prune -o \
			-type f \( -name '*.c' -o -name '*.h' \) -print 2>/dev/null | LC_ALL=C sort |
			perl -e '
use strict; use warnings;
my %rules = (
  "threads" => qr{#\s*include\s*<(?:pthread|threads|semaphore)\.h>|\bpthread_\w+|\b(?:thrd|mtx|cnd|tss)_\w+\s*\(|\bsem_(?:init|wait|trywait|timedwait|post|destroy|getvalue)\s*\(|\bsched_yield\s*\(},
  "atomics" => qr{#\s*include\s*<stdatomic\.h>|\b_Atomic\b|\batomic_\w+\s*\(|\b__atomic_\w+|\b__sync_\w+|\bATOMIC_(?:VAR|FLAG)_INIT\b|\batomic_(?:bool|s?char|uchar|u?short|u?int|u?long|u?llong|flag|size_t|ptrdiff_t|u?intptr_t|u?intmax_t|u?int(?:_least|_fast)?\d+_t)\b},
  "ks-internals" => qr{(?:\.|->)v\b},
  "time" => qr{\b(?:clock_gettime|clock_nanosleep|nanosleep|usleep|sleep|time|gettimeofday|clock|timespec_get|alarm|setitimer|timer_create|timer_settime)\s*\(},
);
# The wing: a file under the key may not #include a path the value matches.
my %wing = (
  "fuzz/prog/" => qr{^(?:harness|oracle)/},
  "fuzz/oracle/" => qr{^(?:harness|prog)/},
  "stress/" => qr{^(?:harness|prog)/},
);
my $allow_file = "ci/layering-allow.txt";
my (%allow, %used, $bad);
if (open(my $af, "<", $allow_file)) {
  while (my $l = <$af>) {
    chomp $l;
    next if $l =~ /^\s*(#|$)/;
    my ($path, $rule, $why) = split(/\s+/, $l, 3);
    if (!defined $why || $why !~ /\S/) {
      print "$allow_file:$.: entry without a reason: $l\n"; $bad++; next;
    }
    if ($rule ne "*" && $rule ne "wing" && !exists $rules{$rule}) {
      print "$allow_file:$.: unknown rule \"$rule\" (threads, atomics, ks-internals, time, wing, *)\n"; $bad++; next;
    }
    $allow{"$path $rule"} = $.;
  }
  close $af;
}
my $nfiles = 0;
while (my $f = <STDIN>) {
  chomp $f;
  open(my $fh, "<", $f) or die "check-layering: cannot read $f: $!\n";
  local $/; my $src = <$fh>; close $fh;
  $nfiles++;
  my $iln = 0;
  for my $line (split /\n/, $src, -1) {
    $iln++;
    next unless $line =~ /^\s*#\s*include\s*"([^"]+)"/;
    my $inc = $1;
    for my $pre (sort keys %wing) {
      next unless index($f, $pre) == 0 && $inc =~ $wing{$pre};
      if (exists $allow{"$f wing"}) { $used{"$f wing"} = 1; next; }
      print "$f:$iln: [wing] #include \"$inc\"\n"; $bad++;
    }
  }
  # Blank comments and string/char literals, keep the newlines.
  $src =~ s{(/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\x27(?:\\.|[^\x27\\\n])*\x27)}{
    my $m = $1; my $keep = ($m =~ /^"/) ? "\"\"" : ($m =~ /^\x27/ ? "\x27\x27" : " ");
    my $nl = ($m =~ tr/\n//); $keep . ("\n" x $nl)
  }gse;
  my $ln = 0;
  for my $line (split /\n/, $src, -1) {
    $ln++;
    RULE: for my $rule (sort keys %rules) {
      next unless $line =~ $rules{$rule};
      my $hit = $&;
      for my $key ("$f $rule", "$f *") {
        if (exists $allow{$key}) { $used{$key} = 1; next RULE; }
      }
      print "$f:$ln: [$rule] $hit\n"; $bad++;
    }
  }
}
for my $key (sort keys %allow) {
  next if $used{$key};
  print "$allow_file:$allow{$key}: stale entry \"$key\": nothing matches it any more; delete the line\n";
}
if ($bad) {
  print "check-layering: $bad violation(s) in $nfiles files; only lib/sched touches threads, locks, atomics and time, and the fuzz wing calls one way (ci/check-layering.sh --help)\n";
  exit 1;
}
print "check-layering: $nfiles files clean (" . scalar(keys %used) . " allow-list entries used)\n";
'
	)
}

if [ "$mode" = check ]; then
	check_tree "$root"
	exit $?
fi

# ---- self-test ----------------------------------------------------------
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copy() {
	rm -rf "$tmp/t"
	mkdir -p "$tmp/t/ci"
	(cd "$root" && cp -r lib fuzz stress tools support "$tmp/t/" 2>/dev/null || true)
	[ -f "$root/ci/layering-allow.txt" ] && cp "$root/ci/layering-allow.txt" "$tmp/t/ci/"
	return 0
}
fail=0
expect() { # expect red|green WHAT RULE: run the check on the copy
	local want=$1 what=$2 rule=$3 out rc=0
	out=$(check_tree "$tmp/t") || rc=$?
	if [ "$want" = red ] && [ $rc -ne 0 ] && grep -qF -- "$rule" <<<"$out"; then
		echo "self-test: red as it must be: $what"
		grep -m1 -F -- "$rule" <<<"$out" | sed 's/^/    /'
	elif [ "$want" = green ] && [ $rc -eq 0 ] && grep -qF -- "$rule" <<<"$out"; then
		echo "self-test: green as it must be: $what"
	else
		echo "self-test: FAILED: $what: wanted $want, got rc=$rc"
		head -5 <<<"$out" | sed 's/^/    /'
		fail=1
	fi
}
inject() { # inject FILE LINE: append one line to FILE in the copy
	printf '%s\n' "$2" >>"$tmp/t/$1"
}

copy
expect green "the tree as it is" "files clean"
copy
inject lib/kmgr/registry.c 'static pthread_mutex_t layering_bad = PTHREAD_MUTEX_INITIALIZER;'
expect red "a raw pthread mutex in lib/kmgr" "lib/kmgr/registry.c:"
copy
inject lib/emu/device.c '#include <stdatomic.h>'
expect red "<stdatomic.h> in lib/emu" "[atomics]"
copy
inject lib/base/klog.c 'static int layering_bad(int *p) { return __atomic_load_n(p, 0); }'
expect red "an __atomic builtin in lib/base" "lib/base/klog.c:"
copy
inject lib/nrt/model.c 'static long layering_bad(ks_atomic_t *a) { return a->v; }'
expect red "reaching into ks_atomic_t.v in lib/nrt" "[ks-internals]"
copy
inject stress/refdrain.c 'static void layering_bad(void) { usleep(10); }'
expect red "a raw usleep in stress/" "[time]"
copy
inject fuzz/targets/api_seq.c 'static long layering_bad(void) { return (long)time(NULL); }'
expect red "time() in a fuzz target" "fuzz/targets/api_seq.c:"
copy
inject lib/kmgr/unload.c 'static atomic_int layering_bad;'
expect red "an atomic_int (a <stdatomic.h> typedef) in lib/kmgr" "lib/kmgr/unload.c:"
copy
inject stress/watchdog.c 'static long layering_bad(ks_atomic_t *a) { return a->v; }'
expect red "an allow-listed file breaking a rule it is not excepted from" "stress/watchdog.c:"
copy
echo "lib/kmgr/exec.c threads the self-test's stale entry" >>"$tmp/t/ci/layering-allow.txt"
expect green "a stale allow-list entry (reported, not fatal)" "stale entry"
copy
echo "lib/kmgr/exec.c locks no such rule" >>"$tmp/t/ci/layering-allow.txt"
expect red "an allow-list entry with an unknown rule" "unknown rule"
copy
echo "lib/kmgr/exec.c threads" >>"$tmp/t/ci/layering-allow.txt"
expect red "an allow-list entry without a reason" "without a reason"
# the wing: FILE|HEADER|WHAT, one wrong-way include each
while IFS='|' read -r file header what; do
	copy
	inject "$file" "#include \"$header\""
	expect red "$what" "$file:"
done <<'WING'
fuzz/prog/decode.c|harness/harness.h|prog/ including the harness
fuzz/prog/shape.c|oracle/oracle.h|prog/ including the oracle
fuzz/oracle/check.c|harness/run.h|the oracle including the harness
fuzz/oracle/model.c|prog/prog.h|the oracle including prog/
stress/torture.c|harness/harness.h|stress/ including the harness
stress/churn.c|prog/prog.h|stress/ including prog/
WING
copy
inject fuzz/harness/harness.c '#include "prog/prog.h"'
inject fuzz/harness/harness.c '#include "oracle/oracle.h"'
expect green "the harness including the oracle and prog/ (the wing's direction)" "files clean"
copy
inject lib/kmgr/load.c '/* not pthread_create(), atomic_load() or time(): ks_thread_create */'
inject lib/kmgr/load.c 'static const char layering_ok[] = "pthread_mutex_lock usleep(1)";'
expect green "comments and strings that name raw calls" "files clean"
if [ $fail -ne 0 ]; then
	echo "check-layering --self-test: FAILED"
	exit 1
fi
echo "check-layering --self-test: every injected violation was seen red"
