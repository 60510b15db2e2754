#!/usr/bin/env bash
# ci/testdata/cflite/run-test.sh - the ctest cflite_submit_check: on copies
# of .clusterfuzzlite/, .github/workflows/ and infra/oss-fuzz/, checks that
# `ci/cflite-check.sh --submit-check` refuses the shipped files (their
# TODO-BEFORE-SUBMIT fields) and each kind of wrong value, and accepts the
# files once every field is filled.  The filled-in values are fixtures of
# this test, under a name that says so, not anybody's contact.
set -euo pipefail
ci=$(cd "$(dirname "$0")/../.." && pwd)
root=$(cd "$ci/.." && pwd)
tmp=$(mktemp -d /tmp/cflite-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fails=0

# copy DIR: a tree with the three folders as shipped
copy() {
	rm -rf "$1" && mkdir -p "$1/.github" "$1/infra"
	cp -r "$root/.clusterfuzzlite" "$1/"
	cp -r "$root/.github/workflows" "$1/.github/"
	cp -r "$root/infra/oss-fuzz" "$1/infra/"
}
# fill DIR URL MAIL: every TODO-BEFORE-SUBMIT field given a value
fill() {
	sed -i -e "s|^homepage: .*|homepage: \"$2\"|" -e "s|^main_repo: .*|main_repo: \"$2\"|" \
		-e "s|^primary_contact: .*|primary_contact: \"$3\"|" "$1/infra/oss-fuzz/project.yaml"
	sed -i "s|git clone --depth 1 .* kmgr-fuzz\$|git clone --depth 1 $2 kmgr-fuzz|" "$1/infra/oss-fuzz/Dockerfile"
}
# check FLAG NAME STATUS PATTERN DIR: cflite-check.sh FLAG on DIR exits
# STATUS and prints a line matching PATTERN
check() {
	local out rc=0
	out=$(KMGR_CFLITE_ROOT=$5 bash "$ci/cflite-check.sh" "$1" 2>&1) || rc=$?
	if [ "$rc" = "$3" ] && grep -qE "$4" <<<"$out"; then
		echo "ok   $2 (exit $rc)"
	else
		echo "FAIL $2: exit $rc, wanted $3 and /$4/; output:"
		sed 's/^/     /' <<<"$out"
		fails=$((fails + 1))
	fi
}
# expect NAME STATUS PATTERN DIR: the same with --submit-check
expect() { check --submit-check "$@"; }
url=https://git.cflite-test-fixture.dev/kmgr-fuzz
mail=oncall@cflite-test-fixture.dev

copy "$tmp/shipped"
expect "shipped files refused" 1 "project.yaml: line [0-9]+: placeholder left: primary_contact" "$tmp/shipped"
expect "shipped Dockerfile refused" 1 "Dockerfile: line [0-9]+: placeholder left" "$tmp/shipped"
out=$(KMGR_CFLITE_ROOT=$tmp/shipped bash "$ci/cflite-check.sh" --yaml-only 2>&1) ||
	{ echo "FAIL --yaml-only on the shipped files: $out"; fails=$((fails + 1)); }

copy "$tmp/filled" && fill "$tmp/filled" "$url" "$mail"
expect "filled in: ready" 0 "ready to submit" "$tmp/filled"

copy "$tmp/mail" && fill "$tmp/mail" "$url" "maintainer@example.org"
expect "example.org contact" 1 "primary_contact 'maintainer@example.org' is not a real e-mail" "$tmp/mail"

copy "$tmp/http" && fill "$tmp/http" "$url" "$mail"
sed -i "s|^homepage: .*|homepage: \"http://cflite-test-fixture.dev\"|" "$tmp/http/infra/oss-fuzz/project.yaml"
expect "http homepage" 1 "homepage 'http://cflite-test-fixture.dev' is not an https URL" "$tmp/http"

copy "$tmp/clone" && fill "$tmp/clone" "$url" "$mail"
sed -i "s|git clone --depth 1 .* kmgr-fuzz\$|git clone --depth 1 https://github.com/OWNER/kmgr-fuzz kmgr-fuzz|" \
	"$tmp/clone/infra/oss-fuzz/Dockerfile"
expect "Dockerfile clones OWNER" 1 "placeholder left: RUN git clone" "$tmp/clone"
expect "Dockerfile clones another repo" 1 "clones 'https://github.com/OWNER/kmgr-fuzz', project.yaml's main_repo" "$tmp/clone"

copy "$tmp/ccs" && fill "$tmp/ccs" "$url" "$mail"
sed -i 's|^auto_ccs: .*|auto_ccs: ["second@host.invalid"]|' "$tmp/ccs/infra/oss-fuzz/project.yaml"
expect "auto_ccs at .invalid" 1 "auto_ccs entry 'second@host.invalid'" "$tmp/ccs"

# --yaml-only: a `with:` key no ClusterFuzzLite action has (a typo GitHub
# passes with a warning), and a code-change build with no storage repo.
expect_yaml() { check --yaml-only "$@"; }
copy "$tmp/sarf" && sed -i 's|output-sarif: true|output-sarf: true|' "$tmp/sarf/.github/workflows/cflite_pr.yml"
expect_yaml "output-sarf" 1 "run_fuzzers has no input 'output-sarf' \\(did you mean 'output-sarif'\\?\\)" "$tmp/sarf"
copy "$tmp/bulid" && sed -i 's|^\(  *\)language: c$|&\n\1upload-bulid: true|' "$tmp/bulid/.github/workflows/cflite_build.yml"
expect_yaml "upload-bulid" 1 "build_fuzzers has no input 'upload-bulid'" "$tmp/bulid"
copy "$tmp/nostore" && python3 - "$tmp/nostore/.github/workflows/cflite_pr.yml" <<'PY'
import sys
f = sys.argv[1]
lines = open(f).read().split("\n")
# the build step's storage lines: those before the Run Fuzzers step
run = next(i for i, l in enumerate(lines) if "Run Fuzzers" in l)
keep = [l for i, l in enumerate(lines) if i > run or "storage-repo" not in l]
open(f, "w").write("\n".join(keep))
PY
expect_yaml "PR build without storage-repo" 1 "code-change mode with no storage-repo on its build_fuzzers" "$tmp/nostore"

[ "$fails" = 0 ] || { echo "cflite_submit_check: $fails case(s) failed"; exit 1; }
echo "cflite_submit_check: all cases as expected"
