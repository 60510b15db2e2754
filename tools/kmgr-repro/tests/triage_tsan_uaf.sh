#!/usr/bin/env bash
# triage_tsan_uaf.sh KMGR_REPRO SRC_DIR SCRATCH - a use-after-free is keyed
# by its crash state, the type and the top three library frames of its bad
# access: one key for one bug under ASan and TSan, two keys for two
# accesses of an object freed at one place.  All reports are real
# (reports/), signed as stress logs (a "stress_refdrain:" line; the signing
# is the same for crash files):
# - fuzz-1-tsan-uaf.txt, TSan's report of the concurrent target on a crash
#   file of mutants/fuzz-1-no-ref.patch: its second stack ("Previous write
#   ... by thread T9") is the free, through kfree (lib/base/kalloc.c);
#   fuzz-1-uaf-01.txt is ASan's report of that bug ("freed by thread",
#   kfree inlined).  fuzz-1-tsan-race-kelf-free.txt (the 2026-12-04T1518Z
#   night's stress_refdrain log, same mutant) is a TSan race whose write is
#   the free of the model's kelf stage (dlr_kelf_unstage <
#   kmgr_unstage_kelf_model) and whose read is the same line of
#   cc_bootstrap (mod->kelf_model->h_model: ASan caught the model's read,
#   TSan the stage's).  All three: "heap-use-after-free in cc_bootstrap <
#   kmgr_exec_pre < exec_sync" (with the free site in the key, the third
#   was a row of its own in that night).
# - fuzz-1-stress-check-then-tsan.txt (a nightly's stress_refdrain log on
#   that mutant: the binary's own "CHECK FAILED: ..." and then TSan's
#   heap-use-after-free, which wins) and fuzz-1-uaf-06.txt (ASan, a fuzz
#   crash file) read the model in check_set after the same free: one key,
#   and another than cc_bootstrap's (before: one key for all of them, by
#   the free site alone, which also merged fuzz-7-read-after-release's
#   read in kmgr_exec).
# - fuzz-1-tsan-race-free.txt (stress_refdrain): a TSan "data race" whose
#   first access is the free (free < kfree < vtpb_destroy <
#   kmgr_unstage_kelf_model) racing a read in clone_sets: a use-after-free,
#   "heap-use-after-free in clone_sets < exec_sync < kmgr_exec";
#   fuzz-1-asan-uaf-vtpb.txt (ASan, async target) reads that object in
#   kbl_compute_build_compute_resources: a key of its own (before: one
#   bucket with the race).
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
# - sched-race-slot.txt (the 2026-12-04T1518Z night's TSan fuzz build of
#   concurrent): a race inside lib/sched itself (a thread slot's counter
#   written by ks_ctl_mem_access, since fixed): the framework's fault,
#   keyed with lib/sched's frames and "framework:", not filed as a race
#   in the facade function the hook ran in (before: "data race in
#   dlr_kelf_stage_model_add < stage_thread vs stage_thread").
set -uo pipefail
tool=$1 src=$2 tmp=$3
reports=$src/tools/kmgr-repro/tests/reports
rm -rf "$tmp" && mkdir -p "$tmp/logs" || exit 1
for r in fuzz-1-tsan-uaf fuzz-1-uaf-01 fuzz-1-tsan-race-kelf-free fuzz-1-tsan-race-free fuzz-1-asan-uaf-vtpb \
	fuzz-1-stress-check-then-tsan fuzz-1-uaf-06 fuzz-1-tsan-segv nrt-1-race-load-first nrt-1-race-resolve-first sched-race-slot; do
	{ sed "s#@SRC@#$src#g" "$reports/$r.txt"; echo "stress_refdrain: reproducer saved to $r.repro"; } \
		>"$tmp/logs/$r.log"
done
"$tool" triage "$tmp/logs" --json >"$tmp/out.json" 2>"$tmp/err" ||
	{ echo "FAIL: triage exit $?: $(tail -n 1 "$tmp/err")"; exit 1; }
python3 - "$tmp/out.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))["buckets"]
u = "heap-use-after-free in "
want = sorted([(u + "cc_bootstrap < kmgr_exec_pre < exec_sync", 3),
               (u + "check_set < dlr_check_valid_io_sets < kmgr_exec_pre", 2),
               (u + "clone_sets < exec_sync < kmgr_exec", 1),
               (u + "kbl_compute_build_compute_resources < build_compute < kmgr_exec_pre", 1),
               ("SEGV in cc_bootstrap < kmgr_exec_pre < exec_sync", 1),
               ("data race in nrt__model_resolve < nrt_model_get_nn vs nrt_model_link < nrt_load", 2),
               ("framework: data race in ks_ctl_mem_access < dlr_kelf_stage_model_add"
                " vs ks_ctl_mem_access < stage_thread", 1)])
keys = sorted((x["key"], x["count"]) for x in b)
if keys != want:
    sys.exit("FAIL: buckets %s, want %s" % (keys, want))
# the signature (the console's line, replay's and minimize's "same crash")
# says it too, not only the key
fw = [x["signature"] for x in b if x["key"].startswith("framework: ")]
if fw != ["framework: data race in ks_ctl_mem_access < dlr_kelf_stage_model_add"
          " vs ks_ctl_mem_access < stage_thread"]:
    sys.exit("FAIL: the framework race's signature is %s" % fw)
print("ok: one use-after-free under ASan and TSan one key (twice, once a TSan race with another object's free); one free site read at two places "
      "two keys (twice, once a TSan race with the free); a race from either side one key; "
      "a TSan SEGV its faulting stack's three frames; a race in lib/sched the framework's")
PY
