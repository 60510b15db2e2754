#!/usr/bin/env bash
# ci/bench/fuzz-curves.sh BIN_A BIN_B CORPUS --out DIR [--seconds N] [--dict FILE]
#                   [--labels A,B]
# Coverage and feature curves of two builds of one libFuzzer target, side
# by side in one run: A on CPU 0 and B on CPU 1 at the same time, each from
# its own copy of CORPUS with -seed=1, for N seconds (default 600).  Every
# 10 s the latest "cov: ft: corp:" of each is sampled from its log.
# DIR/curves.csv (seconds, then cov, ft, corpus of A and of B), DIR/A.log
# and DIR/B.log, and DIR/curves.png when gnuplot is there (cov and ft
# against time, A and B on each panel).  Interrupted (INT, TERM, HUP): stops
# both runs, keeps the samples so far (the CSV's first line says
# "interrupted") and exits 128+signal.  Exit 2 on bad usage.
set -euo pipefail
. "$(dirname "$0")/../lib/usage.sh"
. "$(dirname "$0")/../lib/signals.sh"
. "$(dirname "$0")/../lib/libfuzzer.sh"
kmgr_signals_reset "$0" "$@"

case "${1:-}" in -h | --help) kmgr_usage; exit 0 ;; -*) kmgr_die "unknown option $1" ;; esac
[ $# -ge 3 ] || kmgr_die "want BIN_A BIN_B CORPUS"
a=$1 b=$2 corpus=$3; shift 3
secs=600 dict="" out="" labels="A,B"
while [ $# -gt 0 ]; do
	[ $# -ge 2 ] || kmgr_die "$1 needs a value" # every option takes a value
	case "$1" in
	--seconds) secs=$2; shift 2 ;;
	--dict) dict=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--labels) labels=$2; shift 2 ;;
	*) kmgr_die "unknown option $1" ;;
	esac
done
for f in "$a" "$b"; do [ -x "$f" ] || kmgr_die "$f is not an executable"; done
[ -d "$corpus" ] || kmgr_die "$corpus is not a directory"
[ -n "$out" ] || kmgr_die "--out DIR is required"
[[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -gt 0 ] || kmgr_die "--seconds N, N >= 1"
[ -z "$dict" ] || [ -f "$dict" ] || kmgr_die "no dictionary $dict"
[[ "$labels" == *,* ]] || kmgr_die "--labels A,B"
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/sanitizers/env.sh"
mkdir -p "$out"
tmp=$(mktemp -d /tmp/fuzz-curves.XXXXXX)
pids=()
stop() {
	local sig=$1
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	sed -i "1s/^/# interrupted by SIG$sig\n/" "$out/curves.csv" 2>/dev/null || true
	rm -rf "$tmp"
	echo "fuzz-curves: interrupted; samples so far in $out/curves.csv" >&2
	case "$sig" in INT) exit 130 ;; TERM) exit 143 ;; *) exit 129 ;; esac
}
trap 'stop INT' INT
trap 'stop TERM' TERM
trap 'stop HUP' HUP

# start BIN CPU TAG: a run of secs seconds from a fresh copy of the corpus
start() {
	mkdir -p "$tmp/work-$3"
	cp "$corpus"/* "$tmp/work-$3/" 2>/dev/null || true
	taskset -c "$2" "$1" -seed=1 -max_total_time="$secs" -timeout=25 -rss_limit_mb=4096 \
		-max_len=4096 -print_final_stats=1 ${dict:+-dict="$dict"} "$tmp/work-$3" \
		>"$out/$3.log" 2>&1 &
	pids+=($!)
}

# last LOG: "cov ft corpus" of the latest status line, or "0 0 0"
last() {
	kmgr_lf_status "$1" | awk '{print $1, $2, $3} END {if (!NR) print "0 0 0"}'
}

start "$a" 0 A
start "$b" 1 B
echo "# seconds ${labels%,*}_cov ${labels%,*}_ft ${labels%,*}_corpus ${labels#*,}_cov ${labels#*,}_ft ${labels#*,}_corpus" \
	>"$out/curves.csv"
t0=$SECONDS
while kill -0 "${pids[0]}" 2>/dev/null || kill -0 "${pids[1]}" 2>/dev/null; do
	sleep 10 & # in the background: a signal's trap runs at once, not after it
	wait $! || true
	echo "$((SECONDS - t0)) $(last "$out/A.log") $(last "$out/B.log")" >>"$out/curves.csv"
done
wait || true
rm -rf "$tmp"
tail -n 1 "$out/curves.csv" | awk -v l="$labels" '{split(l, n, ","); printf "fuzz-curves: after %ss: %s cov %s ft %s; %s cov %s ft %s\n", $1, n[1], $2, $3, n[2], $5, $6}'
if command -v gnuplot >/dev/null; then
	gnuplot <<EOF
set terminal png size 1000,420
set output "$out/curves.png"
set multiplot layout 1,2
set xlabel "seconds"
set key bottom right
set title "coverage (cov)"
plot "$out/curves.csv" using 1:2 with lines title "${labels%,*}", "" using 1:5 with lines title "${labels#*,}"
set title "features (ft)"
plot "$out/curves.csv" using 1:3 with lines title "${labels%,*}", "" using 1:6 with lines title "${labels#*,}"
unset multiplot
EOF
	echo "fuzz-curves: $out/curves.png"
fi
