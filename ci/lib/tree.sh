# ci/lib/tree.sh - sourced by the scripts that build a changed copy of the
# source tree (mutant-eval.sh, mutant-controls.sh, stress-mutants.sh, the
# fuzz_add_target test): never in the checkout itself.
#
#   kmgr_tree_copy SRC DEST
#       DEST (created) gets SRC's files without its build trees (build/,
#       build-*), fuzz work (fuzz-work/), nightly output (nightly-out/)
#       and .git: what a build needs, whatever state SRC is in.
#   kmgr_apply_mutant TREE PATCH
#       applies PATCH (a mutants/*.patch, patch -p1) in TREE; status 1,
#       with a line naming the patch, when it does not apply.

kmgr_tree_copy() {
	mkdir -p "$2"
	tar -C "$1" --exclude=./build --exclude='./build-*' --exclude=./fuzz-work --exclude=./.git \
		--exclude=./nightly-out -cf - . | tar -C "$2" -xf -
}

kmgr_apply_mutant() {
	(cd "$1" && patch -p1 -s <"$2") || {
		echo "$(basename "$0"): $(basename "$2") does not apply" >&2
		return 1
	}
}
