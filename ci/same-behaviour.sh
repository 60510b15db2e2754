#!/usr/bin/env bash
# ci/same-behaviour.sh [--base REV] [--seed N] [--keep] [--help] - does this
# tree run programs exactly as REV does?
#
# Builds the kprog tool (asan preset, that target only) of REV, from
# `git archive REV` in a temporary directory, and of this tree (its
# build/asan), then runs `kprog run FILE -v --target T` of both over
#   - every file of corpus/<T>/ and corpus/regressions/<T>/,
#   - 240 pseudo-random inputs (fixed seed, 48 per program target, of 0 to
#     599 bytes),
# for every program target T (ci/lib/targets.sh, but model_parse), and
# compares what the runs say: each op's status (-v), the ops, steps and
# decision counts, the decision trace, the library's error lines, any
# ORACLE or KSCHED line, and the exit status.
#
#   --base REV   the revision to compare with (default: the merge-base of
#                HEAD and main)
#   --seed N     the random inputs' seed (default 25)
#   --keep       keep the temporary directory (its path is printed)
#
# Exit status: 0 identical, 1 a difference (the diff is printed) or a
# build failure, 2 usage; 128+signal on SIGINT, SIGTERM or SIGHUP, which
# stop the build or run in progress and remove the temporary directory.
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"

base="" seed=25 keep=0
while [ $# -gt 0 ]; do
	case $1 in
	--base | --seed) [ $# -ge 2 ] || kmgr_die "$1 needs a value" ;;&
	--base) base=$2; shift 2 ;;
	--seed)
		[[ $2 =~ ^[0-9]+$ ]] || kmgr_die "--seed wants a number, not '$2'"
		seed=$2
		shift 2
		;;
	--keep) keep=1; shift ;;
	-h | --help) kmgr_usage; exit 0 ;;
	*) kmgr_die "unknown argument '$1'" ;;
	esac
done

root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=ci/lib/signals.sh
. "$root/ci/lib/signals.sh"
kmgr_signals_reset "$0" "$@"
# shellcheck source=ci/lib/targets.sh
. "$root/ci/lib/targets.sh"
cd "$root"
if [ -z "$base" ]; then
	base=$(git merge-base HEAD main) || kmgr_die "no merge-base of HEAD and main; give --base"
fi
git rev-parse --verify -q "$base^{commit}" >/dev/null || kmgr_die "no such revision '$base'"

tmp=$(mktemp -d /tmp/same-behaviour.XXXXXX)
child=""
cleanup() {
	[ -z "$child" ] || kill "$child" 2>/dev/null || true
	if [ "$keep" = 1 ]; then echo "same-behaviour: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

build() { # build SRC BUILD LOG: the kprog tool of the asan preset
	kmgr_waited cmake --preset asan -S "$1" -B "$2" >"$3" 2>&1 &&
		kmgr_waited cmake --build "$2" -j2 --target kprog-tool >>"$3" 2>&1 ||
		{ tail -20 "$3" >&2; echo "same-behaviour: the build of $1 failed" >&2; exit 1; }
}

echo "same-behaviour: building $(git rev-parse --short "$base") (base) and this tree ..." >&2
mkdir -p "$tmp/base"
git archive "$base" | tar -C "$tmp/base" -xf -
build "$tmp/base" "$tmp/base/build/asan" "$tmp/base-build.log"
build "$root" "$root/build/asan" "$tmp/head-build.log"

mapfile -t targets < <(kmgr_targets ' ' | tr ' ' '\n' | grep -vx model_parse)
# the random inputs: one folder per target, the same bytes for both trees
python3 - "$tmp/random" "$seed" "${targets[@]}" <<'EOF'
import os, random, sys
out, seed, targets = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rng = random.Random(seed)
for i in range(240):
    t = targets[i % len(targets)]
    os.makedirs(os.path.join(out, t), exist_ok=True)
    with open(os.path.join(out, t, "r%03d" % i), "wb") as f:
        f.write(bytes(rng.randrange(256) for _ in range(rng.randrange(600))))
EOF

# run KPROG OUT: every input of every target, what each run says
run() {
	local kprog=$1 out=$2 t f rc
	: >"$out"
	for t in "${targets[@]}"; do
		for f in "$root/corpus/$t"/* "$root/corpus/regressions/$t"/* "$tmp/random/$t"/*; do
			[ -f "$f" ] || continue
			rc=0
			kmgr_waited "$kprog" run "$f" -v --target "$t" >"$tmp/one" 2>&1 || rc=$?
			{
				echo "== $t ${f#"$root/"} exit $rc"
				grep -E '^(kprog: op |ops |trace: |kmgr error: )|ORACLE|KSCHED' "$tmp/one" || true
			} >>"$out"
		done
	done
}
run "$tmp/base/build/asan/tools/kprog/kprog" "$tmp/base.out"
run "$root/build/asan/tools/kprog/kprog" "$tmp/head.out"

ncorpus=0 nreg=0 nrand=0
for t in "${targets[@]}"; do
	ncorpus=$((ncorpus + $(find "corpus/$t" -maxdepth 1 -type f 2>/dev/null | wc -l)))
	nreg=$((nreg + $(find "corpus/regressions/$t" -maxdepth 1 -type f 2>/dev/null | wc -l)))
	nrand=$((nrand + $(find "$tmp/random/$t" -maxdepth 1 -type f | wc -l)))
done
summary="$((ncorpus + nreg + nrand)) inputs ($ncorpus corpus, $nreg regressions, $nrand random)"
summary+=" over ${#targets[@]} targets ($(grep -c '^kprog: op ' "$tmp/head.out") op lines)"
if diff -u "$tmp/base.out" "$tmp/head.out" >"$tmp/diff"; then
	echo "same-behaviour: identical to $(git rev-parse --short "$base"): $summary"
	exit 0
fi
head -100 "$tmp/diff"
echo "same-behaviour: DIFFERENT from $(git rev-parse --short "$base"): $summary"
exit 1
