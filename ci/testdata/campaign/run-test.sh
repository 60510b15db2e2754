#!/usr/bin/env bash
# ci/testdata/campaign/run-test.sh BUILD quick|mutant - ci/fuzz.sh as a
# campaign, checked on real builds (the ctests fuzz_campaign and
# fuzz_campaign_mutant).
#   quick   BUILD is the test's own asan tree (fuzz_concurrent built):
#           - a second run on the same work folder is refused (one line, 2),
#             and a run started the moment the one before it exited is not
#           - its work folder on a full tmpfs (needs root to mount; else
#             that case is skipped with a line): exit 3, one FAILED line
#             naming "No space left on device", never "no findings"
#           - SIGKILL of fuzz.sh --jobs 2 mid-run: 5 s later no process of
#             the run is left and no .scratch.* in the work folder
#           - --jobs 2 over a 1-CPU quota: the two workers take turns
#             (ci/lib/turns.sh): sampled every 0.2 s from the first turn
#             on, never both running (one sample of slack for a turn's
#             edge), one of them stopped in most samples, and each worker
#             executed inputs
#           - a work folder on an ext4 without a journal gets one "note:"
#             line, one on a journaled ext4 none (loop-mounted images: root
#             and mkfs.ext4 needed, else skipped with a line)
#   mutant  mutants/fuzz-1-no-ref.patch applied in a copy of the tree,
#           a seed that crashes it in the work corpus (quarantined),
#           fuzz_concurrent built there (minutes: label slow), then
#           fuzz.sh --seconds 20 --targets concurrent: the target fuzzes
#           the whole 20 s though it finds the bug in the first seconds
#           (libFuzzer's output goes on >= 5 s after the first finding, the
#           target ran >= 15 s), exit 1 and the finding reported.
#           Only with KMGR_SLOW_TESTS=1 (else exit 77, SKIP): ci/test.sh
#           has no time for the build.
# $KMGR_CAMPAIGN_BUDGET (default "--seconds 20") is the budget flag.
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "$1" && pwd) mode=$2
budget=${KMGR_CAMPAIGN_BUDGET:---seconds 20}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/campaign-test.XXXXXX")
mnt="" ext4=()
cleanup() {
	[ -z "$mnt" ] || umount "$mnt" 2>/dev/null
	for m in "${ext4[@]}"; do umount "$m" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
bad=0
fail() { echo "campaign-test: FAIL: $*"; bad=1; }
left() { grep -lzx "KMGR_CAMPAIGN_MARK=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | paste -sd' '; }
# sigkill WHAT MARK PID OUT: the run PID (its processes carry MARK, its
# output in OUT) is at work; SIGKILL it: 5 s later none of them is left
sigkill() {
	local what=$1 mark=$2 pid=$3 out=$4
	[ -n "$(left "$mark")" ] || fail "$what: nothing was running: $(tail -n 3 "$out")"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	sleep 5
	[ -z "$(left "$mark")" ] ||
		fail "$what: 5 s later still running: $(left "$mark" | xargs ps -o pid=,args= -p | cut -c1-100 | paste -sd';')"
}

# ext4_mount NAME MKFS-FLAGS...: a 64 MiB ext4 image made with those flags,
# mounted at $tmp/NAME (cleanup unmounts it); when it cannot be, fails
# with the reason in $why.  Not in a subshell: ext4 lists the mounts.
ext4_mount() {
	local name=$1 mkfs
	shift
	mkfs=$(PATH=$PATH:/usr/sbin:/sbin command -v mkfs.ext4) || { why="no mkfs.ext4"; return 1; }
	mkdir -p "$tmp/$name"
	truncate -s 64M "$tmp/$name.img" && "$mkfs" -q -F "$@" "$tmp/$name.img" >/dev/null 2>&1 ||
		{ why="mkfs.ext4 failed"; return 1; }
	mount -o loop "$tmp/$name.img" "$tmp/$name" 2>/dev/null || { why="cannot mount a loop device (not root?)"; return 1; }
	ext4+=("$tmp/$name")
}

quick() {
	local rc pid n why="" w2=$tmp/w2 w3=$tmp/w3 fs=0
	# the work folders of the SIGKILL case (w2) and the cgroup case (w3) on
	# a journaled ext4 and on one without a journal, when this can mount
	if ext4_mount journaled && ext4_mount nojournal -O ^has_journal; then
		w2=$tmp/journaled/w2 w3=$tmp/nojournal/w3 fs=1
	else
		echo "campaign-test: $why: the ext4 work folder cases skipped"
	fi
	# SIGKILL of ci/nightly.sh while a stress binary runs: it dies too
	if [ -x "$build/stress/stress_refdrain" ]; then
		env KMGR_CAMPAIGN_MARK=night-$$ bash "$root/ci/nightly.sh" --minutes 1 --presets "$(basename "$build")" \
			--build-root "$(dirname "$build")" --binaries refdrain --skip-fuzz --skip-coverage --skip-mutants \
			--keep 0 --out "$tmp/nights" >"$tmp/night.out" 2>&1 &
		pid=$!
		for n in $(seq 150); do grep -q 'stress_refdrain (' "$tmp/night.out" 2>/dev/null && break; sleep 0.2; done
		sleep 2
		sigkill "nightly SIGKILL" "night-$$" "$pid" "$tmp/night.out"
		kill -KILL $(left "night-$$") 2>/dev/null
	fi
	# a second run of the same work folder while one runs
	env KMGR_FUZZ_BUILD="$build" KMGR_FUZZ_WORK="$tmp/w1" KMGR_CAMPAIGN_MARK=lock-$$ \
		bash "$root/ci/fuzz.sh" $budget --targets concurrent --jobs 1 >"$tmp/first.out" 2>&1 &
	pid=$!
	for n in $(seq 100); do [ -d "$tmp/w1/concurrent" ] && break; sleep 0.2; done
	env KMGR_FUZZ_BUILD="$build" KMGR_FUZZ_WORK="$tmp/w1" bash "$root/ci/fuzz.sh" $budget \
		--targets concurrent --jobs 1 >"$tmp/second.out" 2>"$tmp/second.err"
	rc=$?
	[ "$rc" = 2 ] && [ "$(wc -l <"$tmp/second.err")" = 1 ] && grep -q 'another fuzz.sh run' "$tmp/second.err" ||
		fail "a second run on one work folder: exit $rc, stderr: $(head -c 300 "$tmp/second.err")"
	# the first stopped by SIGTERM, then two runs one after the other on its
	# work folder, each started the moment the one before it exited: the
	# lock is free then (a watchdog that kept it half a second longer made
	# the next run "another fuzz.sh run")
	kill -TERM "$pid"
	wait "$pid"
	for n in 1 2; do
		env KMGR_FUZZ_BUILD="$build" KMGR_FUZZ_WORK="$tmp/w1" bash "$root/ci/fuzz.sh" --seconds 2 \
			--targets concurrent --jobs 1 >"$tmp/next.out" 2>&1
		rc=$?
		[ "$rc" = 0 ] && ! grep -q 'another fuzz.sh run' "$tmp/next.out" ||
			fail "run $n right after the one before on one work folder: exit $rc: $(tail -n 2 "$tmp/next.out")"
	done
	# SIGKILL of a run mid-way, with --jobs 2
	env KMGR_FUZZ_BUILD="$build" KMGR_FUZZ_WORK="$w2" KMGR_CAMPAIGN_MARK=kill-$$ \
		bash "$root/ci/fuzz.sh" $budget --targets concurrent --jobs 2 >"$tmp/kill.out" 2>&1 &
	pid=$!
	for n in $(seq 150); do grep -q '^== fuzz.sh: concurrent for' "$tmp/kill.out" && break; sleep 0.2; done
	sleep 3
	sigkill SIGKILL "kill-$$" "$pid" "$tmp/kill.out"
	[ -z "$(ls -d "$w2"/.scratch.* "$w2"/.summary.* "$w2"/.records.* 2>/dev/null)" ] ||
		fail "SIGKILL: scratch left: $(ls -d "$w2"/.s* "$w2"/.r* 2>/dev/null | paste -sd' ')"
	[ "$fs" = 0 ] || ! grep -q 'note:.*without a journal' "$tmp/kill.out" ||
		fail "a work folder on a journaled ext4: $(grep 'note:' "$tmp/kill.out")"
	kill -KILL $(left "kill-$$") 2>/dev/null
	# --jobs by default: the CPUs this process may run on; a cgroup CPU
	# quota of one CPU (a made-up cgroup tree, cgroup v2 and v1 files)
	mkdir -p "$tmp/cg/cpu"
	echo "100000 100000" >"$tmp/cg/cpu.max"
	echo 100000 >"$tmp/cg/cpu/cpu.cfs_quota_us"
	echo 100000 >"$tmp/cg/cpu/cpu.cfs_period_us"
	env KMGR_FUZZ_BUILD="$build" KMGR_FUZZ_WORK="$w3" KMGR_CGROUP_ROOT="$tmp/cg" bash "$root/ci/fuzz.sh" \
		--seconds 2 --targets concurrent --json "$tmp/cg.json" >"$tmp/cg.out" 2>&1 ||
		fail "--seconds 2 under a 1-CPU quota: $(tail -n 2 "$tmp/cg.out")"
	[ "$fs" = 0 ] || [ "$(grep -c "^fuzz.sh: note: $w3 is on an ext4 without a journal.*a KMGR_FUZZ_WORK on tmpfs" "$tmp/cg.out")" = 1 ] ||
		fail "a work folder on an ext4 without a journal: no one note line naming KMGR_FUZZ_WORK: $(head -n 4 "$tmp/cg.out")"
	grep -q '"jobs": 1,' "$tmp/cg.json" 2>/dev/null ||
		fail "--jobs default under a 1-CPU cgroup quota: $(grep -o '"jobs": [0-9]*' "$tmp/cg.json" 2>/dev/null)"
	# the budget as run, not --minutes' default of 10
	{ grep -q '"minutes": 0.03,' "$tmp/cg.json" && grep -q '"budget_s": 2,' "$tmp/cg.json"; } 2>/dev/null ||
		fail "--seconds 2: the JSON's budget: $(grep -oE '"(minutes|budget_s)": [0-9.]*' "$tmp/cg.json" 2>/dev/null | paste -sd' ')"
	turns
	# the work folder on a full disk
	mkdir -p "$tmp/full"
	if ! mount -t tmpfs -o size=2m tmpfs "$tmp/full" 2>/dev/null; then
		echo "campaign-test: cannot mount a tmpfs (not root): the full-disk case skipped"
		return 0
	fi
	mnt=$tmp/full
	head -c 3M /dev/zero >"$mnt/fill" 2>/dev/null
	env KMGR_FUZZ_BUILD="$build" KMGR_FUZZ_WORK="$mnt/w" bash "$root/ci/fuzz.sh" $budget \
		--targets concurrent --jobs 1 >"$tmp/full.out" 2>"$tmp/full.err"
	rc=$?
	[ "$rc" != 0 ] || fail "full disk: exit 0"
	grep -q 'no findings' "$tmp/full.out" && fail "full disk: says no findings"
	[ "$(grep -c 'FAILED' "$tmp/full.err")" = 1 ] && grep -q 'No space left on device' "$tmp/full.err" ||
		fail "full disk: no one line naming the cause: $(head -c 300 "$tmp/full.err")"
	echo "campaign-test: full disk: exit $rc, $(cat "$tmp/full.err")"
	# ci/nightly.sh with its --out there (no part run: the report alone)
	bash "$root/ci/nightly.sh" --minutes 1 --skip-stress --skip-fuzz --skip-coverage --skip-mutants \
		--keep 0 --out "$mnt/nights" >"$tmp/nfull.out" 2>&1
	rc=$?
	[ "$rc" != 0 ] || fail "nightly on a full disk: exit 0"
	grep -q '^nightly.sh: report ' "$tmp/nfull.out" && fail "nightly on a full disk: says 'report ...'"
	grep -q 'Traceback' "$tmp/nfull.out" && fail "nightly on a full disk: a Python traceback"
	[ "$(grep -c 'FAILED' "$tmp/nfull.out")" = 1 ] && grep -q 'No space left on device' "$tmp/nfull.out" ||
		fail "nightly on a full disk: no one FAILED line naming the cause: $(head -c 300 "$tmp/nfull.out")"
	[ -z "$(find "$mnt/nights" \( -name '*.tmp*' -o -name meta.json -size 0 \) 2>/dev/null)" ] ||
		fail "nightly on a full disk: left $(find "$mnt/nights" \( -name '*.tmp*' -o -name meta.json -size 0 \))"
	echo "campaign-test: nightly on a full disk: exit $rc, $(grep FAILED "$tmp/nfull.out")"
}

# turns: --jobs 2 where fuzz.sh sees one CPU (the 1-CPU quota of $tmp/cg):
# the two libFuzzer processes of the run take turns
turns() {
	local pid bin st both=0 one=0 n=0 k e p l a ps sts
	bin=$build/fuzz/concurrent
	env KMGR_FUZZ_BUILD="$build" KMGR_FUZZ_WORK="$tmp/w4" KMGR_CGROUP_ROOT="$tmp/cg" KMGR_CAMPAIGN_MARK=turns-$$ \
		bash "$root/ci/fuzz.sh" --seconds 8 --targets concurrent --jobs 2 >"$tmp/turns.out" 2>&1 &
	pid=$!
	while sleep 0.2 && kill -0 "$pid" 2>/dev/null; do
		# the states (R, S, D, T) of the run's libFuzzer processes, sorted,
		# read back to back with builtins (a fork between two reads would
		# let a turn's edge fall between them)
		ps=() sts=()
		for p in $(left "turns-$$"); do
			# a worker (-max_total_time), not the merge after them
			[ "/proc/$p/exe" -ef "$bin" ] && { mapfile -d '' a <"/proc/$p/cmdline"; } 2>/dev/null || continue
			[[ " ${a[*]} " != *" -max_total_time="* ]] || ps+=("$p")
		done
		for p in "${ps[@]}"; do { read -r l <"/proc/$p/stat"; } 2>/dev/null && sts+=("${l##*) }"); done
		st=$(for l in "${sts[@]}"; do echo "${l:0:1}"; done | sort | paste -sd '')
		# from the first turn on (before it, both start up at once)
		case $st in [RSD]T) one=$((one + 1)) ;; esac
		[ "$one" -gt 0 ] && [ "${#st}" = 2 ] || continue
		n=$((n + 1))
		case $st in [RSD][RSD]) both=$((both + 1)) ;; esac
	done
	wait "$pid" || fail "--jobs 2 over a 1-CPU quota: exit $?: $(tail -n 2 "$tmp/turns.out")"
	grep -q '2 worker(s), taking turns of 2s on 1 CPU(s)' "$tmp/turns.out" ||
		fail "--jobs 2 over a 1-CPU quota: no 'taking turns' line: $(grep '^== fuzz.sh: concurrent' "$tmp/turns.out")"
	[ "$n" -ge 10 ] && [ "$both" -le 1 ] && [ "$one" -ge $((n / 2)) ] ||
		fail "--jobs 2 over a 1-CPU quota: of $n samples with two workers, $both had both running, $one one stopped"
	for k in 0 1; do
		e=$(awk '/stat::number_of_executed_units/ { u = $2 } END { print u + 0 }' "$tmp/w4/concurrent/worker-$k.log" 2>/dev/null)
		[ "${e:-0}" -gt 0 ] || fail "--jobs 2 over a 1-CPU quota: worker $k executed nothing"
	done
	echo "campaign-test: --jobs 2 over a 1-CPU quota: $n samples, $both both running, $one one stopped"
}

mutant() {
	local rc src=$tmp/src secs first last
	if [ "${KMGR_SLOW_TESTS:-0}" != 1 ]; then
		echo "campaign-test: mutant: builds a mutant tree (minutes); set KMGR_SLOW_TESTS=1 to run it"
		exit 77
	fi
	. "$root/ci/lib/tree.sh"
	kmgr_tree_copy "$root" "$src" && kmgr_apply_mutant "$src" "$root/mutants/fuzz-1-no-ref.patch" ||
		{ fail "cannot make the mutant tree"; return; }
	(cmake -S "$src" -B "$src/build/asan" --preset asan >"$tmp/cfg.log" 2>&1 &&
		cmake --build "$src/build/asan" -j2 --target fuzz_concurrent kmgr-repro >"$tmp/build.log" 2>&1) ||
		{ fail "mutant build failed: $(tail -n 3 "$tmp/build.log")"; return; }
	# a seed that crashes the mutant as libFuzzer reads the corpus (the
	# bug's own regression input): it goes to quarantine/ and the campaign
	# goes on; it used to stop it at its first second
	mkdir -p "$tmp/mw/concurrent/corpus"
	cp "$root/corpus/regressions/concurrent/fuzz-1-exec-without-ref" "$tmp/mw/concurrent/corpus/" ||
		{ fail "no fuzz-1 regression input"; return; }
	env KMGR_FUZZ_WORK="$tmp/mw" bash "$src/ci/fuzz.sh" $budget --targets concurrent --jobs 1 \
		--json "$tmp/m.json" >"$tmp/m.out" 2>&1
	rc=$?
	[ -f "$tmp/mw/concurrent/quarantine/fuzz-1-exec-without-ref" ] &&
		grep -q 'concurrent: a seed crashes as libFuzzer reads the corpus: fuzz-1-exec-without-ref moved to' "$tmp/m.out" ||
		fail "mutant campaign: the crashing seed not quarantined: $(grep 'seed' "$tmp/m.out" | head -n 2)"
	[ "$rc" = 1 ] || fail "mutant campaign: exit $rc, want 1 (findings): $(tail -n 3 "$tmp/m.out")"
	grep -q 'finding recorded; fuzzing on' "$tmp/m.out" || fail "mutant campaign: no 'finding recorded; fuzzing on'"
	grep -qE 'finding\(s\) in [0-9]+ bucket' "$tmp/m.out" || fail "mutant campaign: no buckets reported"
	# the fuzzing time: libFuzzer's own clock, summed over the restarts
	# after each finding (the first finding comes within seconds)
	secs=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["targets"][0]; print(t["seconds"] or 0)' \
		"$tmp/m.json" 2>/dev/null || echo 0)
	# libFuzzer's last output (run-0.log, the last restart's) came at least
	# 5 s after the first finding: it fuzzed on
	first=$(find "$tmp/mw/concurrent/artifacts" -type f -printf '%T@\n' | sort -n | head -1)
	last=$(stat -c %Y "$tmp/mw/concurrent/run-0.log" 2>/dev/null)
	awk -v f="${first:-0}" -v l="${last:-0}" 'BEGIN { exit !(f > 0 && l - f >= 5) }' ||
		fail "mutant campaign: libFuzzer's output ended $(awk -v f="${first:-0}" -v l="${last:-0}" \
			'BEGIN { printf "%.0f", l - f }') s after the first finding: it stopped"
	[ "${secs:-0}" -ge 15 ] || fail "mutant campaign: fuzzed ${secs}s of 20"
	echo "campaign-test: mutant: exit $rc, $(find "$tmp/mw/concurrent/artifacts" -type f | wc -l) finding(s)," \
		"fuzzing went on $(awk -v f="$first" -v l="$last" 'BEGIN { printf "%.0f", l - f }') s after the first;" \
		"${secs}s fuzzed"
}

case "$mode" in
quick) quick ;;
mutant) mutant ;;
*) echo "run-test.sh BUILD quick|mutant" >&2; exit 2 ;;
esac
[ "$bad" = 0 ] && echo "campaign-test: $mode: ok"
exit "$bad"
