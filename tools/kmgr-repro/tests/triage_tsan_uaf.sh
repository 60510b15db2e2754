#!/usr/bin/env bash
# triage_tsan_uaf.sh KMGR_REPRO SRC_DIR SCRATCH - a use-after-free is keyed
# by its bad access and its free site: one key for one bug under ASan and
# TSan, two keys for two accesses of an object freed at one place.  All
# reports are real (reports/), signed as stress logs (a "stress_refdrain:"
# line; the signing is the same for crash files):
# - fuzz-1-tsan-uaf.txt, TSan's report of the concurrent target on a crash
#   file of mutants/fuzz-1-no-ref.patch: its second stack ("Previous write
#   ... by thread T9") is the free, through kfree (lib/base/kalloc.c);
#   fuzz-1-uaf-01.txt is ASan's report of that bug ("freed by thread",
#   kfree inlined).  Both read the model in cc_bootstrap: one key,
#   "heap-use-after-free in cc_bootstrap freed in kmgr_unstage_kelf_model
#   < kmgr_unload_nn".
# - fuzz-1-stress-check-then-tsan.txt (a nightly's stress_refdrain log on
#   that mutant: the binary's own "CHECK FAILED: ..." and then TSan's
#   heap-use-after-free, which wins) and fuzz-1-uaf-06.txt (ASan, a fuzz
#   crash file) read the model in check_set after the same free: one key,
#   "heap-use-after-free in check_set freed in ..." -- and another key than
#   cc_bootstrap's (before: one key for all four, by the free site alone,
#   which also merged fuzz-7-read-after-release's read in kmgr_exec).
# - fuzz-1-tsan-race-free.txt (stress_refdrain): a TSan "data race" whose
#   first access is the free (free < kfree < vtpb_destroy <
#   kmgr_unstage_kelf_model) racing a read in clone_sets: a use-after-free,
#   "heap-use-after-free in clone_sets freed in vtpb_destroy <
#   kmgr_unstage_kelf_model"; fuzz-1-asan-uaf-vtpb.txt (ASan, async target)
#   reads that object in kbl_compute_build_compute_resources: a key of its
#   own (before: one bucket with the race).
# - fuzz-1-tsan-segv.txt (a nightly's stress_refdrain log, same mutant):
#   TSan's "ERROR: ThreadSanitizer: SEGV on unknown address 0x0" in
#   cc_bootstrap, the freed model read as zeroes.  One stack, the faulting
#   one: its state is the type and its top three frames, as ASan's SEGV,
#   "SEGV in cc_bootstrap < kmgr_exec_pre < exec_sync" (before: read as a
#   two-access TSan report, two frames, and in a fuzz crash libFuzzer's
#   "deadly signal" stack taken for the second access).
# - nrt-1-race-load-first.txt and nrt-1-race-resolve-first.txt
#   (mutants/nrt-1-lookup-copy-after-unlock, api_nrt under TSan) are one
#   race reported from either side: one key.
set -uo pipefail
tool=$1 src=$2 tmp=$3
reports=$src/tools/kmgr-repro/tests/reports
rm -rf "$tmp" && mkdir -p "$tmp/logs" || exit 1
for r in fuzz-1-tsan-uaf fuzz-1-uaf-01 fuzz-1-tsan-race-free fuzz-1-asan-uaf-vtpb \
	fuzz-1-stress-check-then-tsan fuzz-1-uaf-06 fuzz-1-tsan-segv nrt-1-race-load-first nrt-1-race-resolve-first; do
	{ sed "s#@SRC@#$src#g" "$reports/$r.txt"; echo "stress_refdrain: reproducer saved to $r.repro"; } \
		>"$tmp/logs/$r.log"
done
"$tool" triage "$tmp/logs" --json >"$tmp/out.json" 2>"$tmp/err" ||
	{ echo "FAIL: triage exit $?: $(tail -n 1 "$tmp/err")"; exit 1; }
python3 - "$tmp/out.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["buckets"]
f = "freed in kmgr_unstage_kelf_model < kmgr_unload_nn"
want = sorted([("heap-use-after-free in cc_bootstrap " + f, 2),
               ("heap-use-after-free in check_set " + f, 2),
               ("heap-use-after-free in clone_sets freed in vtpb_destroy < kmgr_unstage_kelf_model", 1),
               ("heap-use-after-free in kbl_compute_build_compute_resources freed in vtpb_destroy < "
                "kmgr_unstage_kelf_model", 1),
               ("SEGV in cc_bootstrap < kmgr_exec_pre < exec_sync", 1),
               ("data race in nrt__model_resolve < nrt_model_get_nn vs nrt_model_link < nrt_load", 2)])
keys = sorted((x["key"], x["count"]) for x in b)
if keys != want:
    sys.exit("FAIL: buckets %s, want %s" % (keys, want))
print("ok: one use-after-free under ASan and TSan one key (twice); one free site read at two places "
      "two keys (twice, once a TSan race with the free); a race from either side one key; "
      "a TSan SEGV its faulting stack's three frames")
PY
