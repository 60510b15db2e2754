# ci/lib/prune.sh - sourced by ci/nightly.sh: what a night keeps of its
# coverage report (ci/coverage.sh --out DIR: 40-odd MB of per-file HTML).
#
#   kmgr_prune_coverage DIR
#       keeps DIR's summary (index.html, summary.json) and each target's
#       html/index.html, summary.txt and style sheet; the per-file pages go
#       into DIR/<target>/html.tar.gz, the *.json and *.lcov exports are
#       gzipped.  One line: the size before and after.  Status 1, with a
#       line, when the archive cannot be written (the files then stay).

kmgr_prune_coverage() {
	local dir=$1 t before after
	[ -d "$dir" ] || return 0
	before=$(du -sk "$dir" | cut -f1)
	for t in "$dir"/*/; do
		t=${t%/}
		if [ -d "$t/html" ]; then
			if ! tar -C "$t/html" -czf "$t/html.tar.gz" --exclude=./index.html --exclude=./style.css . 2>/dev/null; then
				rm -f "$t/html.tar.gz"
				echo "prune: cannot write $t/html.tar.gz: the coverage pages stay whole" >&2
				return 1
			fi
			find "$t/html" -mindepth 1 \( -path "$t/html/index.html" -o -path "$t/html/style.css" \) -prune \
				-o -type f -print0 | xargs -0r rm -f
			find "$t/html" -mindepth 1 -type d -empty -delete
		fi
		find "$t" -maxdepth 1 -type f \( -name '*.json' -o -name '*.lcov' \) -size +64k -print0 |
			xargs -0r gzip -f
	done
	after=$(du -sk "$dir" | cut -f1)
	echo "coverage pages: ${before} KiB -> ${after} KiB (each target's summary kept; per-file pages in" \
		"<target>/html.tar.gz)"
}
