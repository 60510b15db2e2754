#!/usr/bin/env bash
# triage_tsan_uaf.sh KMGR_REPRO SRC_DIR SCRATCH - one use-after-free, one
# bucket under ASan and TSan.  reports/fuzz-1-tsan-uaf.txt is real: TSan's
# report of the concurrent target on a crash file that ci/fuzz.sh --preset
# tsan found with mutants/fuzz-1-no-ref.patch applied; its second stack
# ("Previous write ... by thread T9") is the free, through kfree
# (lib/base/kalloc.c, a frame in that build).  reports/fuzz-1-uaf-01.txt
# is ASan's report of the same bug ("freed by thread", kfree inlined).
# Signed as stress logs (a "stress_refdrain:" line; the signing is the
# same for crash files), both must give one bucket, keyed by the free
# site: "heap-use-after-free freed in kmgr_unstage_kelf_model <
# kmgr_unload_nn".  Before: two buckets, TSan's keyed by its access
# frames ("... vs kfree < kmgr_unstage_kelf_model"), so a nightly showed
# one bug as an ASan row and a TSan row.
# reports/fuzz-1-tsan-race-free.txt (the nightly's stress_refdrain log on
# the same mutant) is a TSan "data race" whose first access is the free
# (free < kfree < vtpb_destroy < kmgr_unstage_kelf_model) racing a read
# in clone_sets; reports/fuzz-1-asan-uaf-vtpb.txt is ASan's report, the
# same night's async target, of that object's use after that free.  Both
# must be one bucket, "heap-use-after-free freed in vtpb_destroy <
# kmgr_unstage_kelf_model" (before: the race keyed by its access frames).
# reports/fuzz-1-stress-check-then-tsan.txt (another night's
# stress_refdrain log, same mutant) holds the binary's own "CHECK FAILED:
# kmgr_exec on model 1 returned NRT_INVALID" and then TSan's
# heap-use-after-free of the model freed by the unload: the sanitizer's
# report is the state (before: "stress check: ...", a row of its own).
# So five reports, two buckets, of three and two; a race with no free in it keeps its
# own state (kmgr_repro_triage_buckets: two races, two buckets).
# reports/nrt-1-race-load-first.txt and nrt-1-race-resolve-first.txt
# (mutants/nrt-1-lookup-copy-after-unlock, two crash files of one night's
# api_nrt target under TSan) are one race reported from either side:
# "nrt_model_link < nrt_load vs nrt__model_resolve < nrt_model_get_nn"
# and the reverse.  One bucket (before: two rows in that night).
set -uo pipefail
tool=$1 src=$2 tmp=$3
reports=$src/tools/kmgr-repro/tests/reports
rm -rf "$tmp" && mkdir -p "$tmp/logs" || exit 1
for r in fuzz-1-tsan-uaf fuzz-1-uaf-01 fuzz-1-tsan-race-free fuzz-1-asan-uaf-vtpb \
	fuzz-1-stress-check-then-tsan nrt-1-race-load-first nrt-1-race-resolve-first; do
	{ sed "s#@SRC@#$src#g" "$reports/$r.txt"; echo "stress_refdrain: reproducer saved to $r.repro"; } \
		>"$tmp/logs/$r.log"
done
"$tool" triage "$tmp/logs" --json >"$tmp/out.json" 2>"$tmp/err" ||
	{ echo "FAIL: triage exit $?: $(tail -n 1 "$tmp/err")"; exit 1; }
python3 - "$tmp/out.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["buckets"]
want = sorted([("heap-use-after-free freed in kmgr_unstage_kelf_model < kmgr_unload_nn", 3),
               ("heap-use-after-free freed in vtpb_destroy < kmgr_unstage_kelf_model", 2),
               ("data race in nrt__model_resolve < nrt_model_get_nn vs nrt_model_link < nrt_load", 2)])
keys = sorted((x["key"], x["count"]) for x in b)
if keys != want:
    sys.exit("FAIL: buckets %s, want %s" % (keys, want))
print("ok: ASan and TSan reports of two use-after-frees (one a TSan race with the free): "
      "two buckets; a race from either side one; a stress check before a sanitizer's report gives way to it")
PY
