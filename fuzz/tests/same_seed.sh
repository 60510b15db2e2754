#!/usr/bin/env bash
# same_seed.sh FUZZER WORK CORPUS RUNS: two campaigns with one -seed make
# the same mutations and keep the same inputs.
#
# libFuzzer draws every mutation from -seed; what else feeds its choices
# comes from the target.  Its CMP mutations take operands from the
# compares the target made, and a compare of two addresses (UBSan's
# pointer-overflow check, traced by trace-cmp) fed values that ASLR moves:
# two processes wrote different bytes into the inputs from their first
# such mutation on (api_seq: #1035 of 5,000), so an A/B of two builds
# never ran the same workload and a campaign could not be repeated.  This
# runs FUZZER twice, -seed=7 -runs=RUNS, each on a fresh copy of CORPUS,
# and compares the lines of each new or reduced input (what was kept, the
# mutations and their dictionary entries), less the figures that depend
# on time (exec/s, rss) and the execution count.  Without libFuzzer's two
# sources of its own (docs/fuzzing.md, "Same seed"): the corpus reload,
# which rereads the folder every second by the clock (-reload=0), and the
# leak check, which runs an input again when more was allocated than
# freed during it (-detect_leaks=0); with either, one pair of campaigns
# in six to twelve parted.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: same_seed.sh FUZZER WORK CORPUS RUNS" >&2; exit 2; }
bin=$1 work=$2 corpus=$3 runs=$4
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
for k in 1 2; do
	cp -r "$corpus" "$work/c$k"
	"$bin" -seed=7 -detect_leaks=0 -reload=0 -runs="$runs" -max_len=4096 "$work/c$k" >"$work/log$k" 2>&1 || {
		echo "same_seed: campaign $k failed:" >&2
		tail -20 "$work/log$k" >&2
		exit 1
	}
	grep -a '^#[0-9]*[[:space:]]*\(NEW\|REDUCE\)' "$work/log$k" |
		sed 's/^#[0-9]*[[:space:]]*//; s/ exec\/s: [0-9]*//; s/ rss: [0-9]*Mb//' >"$work/lines$k"
done
n=$(wc -l <"$work/lines1")
[ "$n" -gt 0 ] || { echo "same_seed: campaign 1 kept no input" >&2; exit 1; }
if ! cmp -s "$work/lines1" "$work/lines2"; then
	echo "same_seed: two campaigns of -seed=7 part ways; the first difference:" >&2
	diff "$work/lines1" "$work/lines2" | head -n 5 >&2
	exit 1
fi
echo "same_seed: $n inputs kept, the same in both campaigns of $runs runs"
