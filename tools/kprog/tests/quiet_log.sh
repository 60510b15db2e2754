#!/usr/bin/env bash
# quiet_log.sh - a program that loads, unloads everything and is closed
# logs nothing but what the facade says for a good run: no error or
# warning line.  The harness's own look at which slots unload_all emptied
# used to go through a facade entry point, which logs the seed's "Failed
# to find model: N" for every id it no longer finds, after every
# unload_all (issue 38).  Sync and async, one model and two, an
# unload_all after an unload, then the teardown's nrt_close.
# usage: quiet_log.sh KPROG SCRATCH
set -euo pipefail

if [ $# -ne 2 ]; then
	echo "usage: quiet_log.sh KPROG SCRATCH" >&2
	exit 2
fi
kprog=$1 scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
bad=0
n=0
for mode in sync async; do
	for ops in 't0 load slot=0 tmpl=0|t0 unload_all' \
		't0 load slot=0 tmpl=0|t0 load slot=1 tmpl=1|t0 unload slot=0|t0 unload_all|t0 load slot=0 tmpl=0|t0 unload_all'; do
		n=$((n + 1))
		{
			echo "config mode=$mode nc=2 qdepth=2 threads=1"
			tr '|' '\n' <<<"$ops"
		} >"$scratch/p$n.txt"
		"$kprog" parse "$scratch/p$n.txt" "$scratch/p$n.bin"
		rc=0
		KMGR_LOG_LEVEL=info "$kprog" run "$scratch/p$n.bin" --target concurrent -v \
			>"$scratch/p$n.out" 2>&1 || rc=$?
		# it ran: unload_all succeeded and unloaded what was loaded
		if [ "$rc" != 0 ] || grep -E 'kmgr (error|warn)' "$scratch/p$n.out" >"$scratch/p$n.bad" ||
			! grep -q 'unload_all -> 0' "$scratch/p$n.out" || ! grep -q 'Unloaded NN' "$scratch/p$n.out"; then
			echo "quiet_log: FAIL: $mode: ${ops//|/; }: exit $rc, log:"
			sed 's/^/  /' "$scratch/p$n.out"
			bad=1
		else
			echo "ok   $mode: ${ops//|/; }: $(grep -c 'Unloaded NN' "$scratch/p$n.out") unloaded, no error or warning"
		fi
	done
done
exit "$bad"
