#!/usr/bin/env bash
# features_stable.sh FUZZER WORK CORPUS...: the same inputs give the same
# libFuzzer features in every process.
#
# Each worker of ci/fuzz.sh is a process of its own, loaded by the kernel
# at another random address (ASLR), and a crash file is replayed in yet
# another.  A feature that follows the addresses (a branch on a pointer, a
# stack depth measured between the main stack and a fiber's mmap'd one)
# makes libFuzzer keep or drop an input by where the binary was loaded:
# two workers with one seed and one corpus part ways, and a merge keeps
# other inputs each time.  This runs FUZZER's merge over CORPUS (libFuzzer
# records each input's features in its control file) in three processes,
# one after the other, and compares the features recorded for each input.
# On a difference it names the input and the features only one process saw.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: features_stable.sh FUZZER WORK CORPUS..." >&2; exit 2; }
bin=$1 work=$2
shift 2
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
for k in 1 2 3; do
	mkdir "$work/out$k"
	# the control file: one line per input (its path), then "FT i f..."
	# per input i, in the order the merge ran them (by size: the same in
	# every process)
	"$bin" -merge=1 -merge_control_file="$work/cf$k" "$work/out$k" "$@" >"$work/log$k" 2>&1 || {
		echo "features_stable: the merge failed in process $k:" >&2
		tail -20 "$work/log$k" >&2
		exit 1
	}
	grep '^FT ' "$work/cf$k" >"$work/ft$k" || true
done
n=$(wc -l <"$work/ft1")
[ "$n" -gt 0 ] || { echo "features_stable: the merge recorded no input" >&2; exit 1; }
bad=0
for k in 2 3; do
	cmp -s "$work/ft1" "$work/ft$k" && continue
	bad=1
	# FT i f...: the input's path is line i + 3 of the control file (its
	# first two lines are the number of files and of the first set)
	diff "$work/ft1" "$work/ft$k" | awk -v cf="$work/cf1" -v k="$k" '
		/^[<>] FT / { for (i = 4; i <= NF; i++) seen[$3 " " $i] = seen[$3 " " $i] $1 }
		END {
			for (x in seen) if (seen[x] != "<>" && seen[x] != "><") {
				split(x, p, " ")
				if (!(p[1] in name)) {
					name[p[1]] = ""
					while ((getline l < cf) > 0 && ++ln <= p[1] + 3) if (ln == p[1] + 3) name[p[1]] = l
					close(cf); ln = 0
				}
				printf "features_stable: %s: feature %s only in process %s\n", name[p[1]], p[2], seen[x] == "<" ? 1 : k
			}
		}' | sort | head -20
done
[ "$bad" = 0 ] || { echo "features_stable: FAIL: the same inputs gave other features in another process" >&2; exit 1; }
echo "features_stable: $n inputs, the same features in 3 processes"
