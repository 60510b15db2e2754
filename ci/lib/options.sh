# ci/lib/options.sh - sourced by the scripts that read a target's
# corpus/T.options, the OSS-Fuzz file (INI: [sections] of key = value,
# '#' and ';' comments): fuzz.sh and oss-fuzz-build.sh, one parser.
#
#   kmgr_opt_keys FILE SECTION
#       the "key=value" lines of one [section], spaces around '=' trimmed
#   kmgr_opt_sections FILE
#       the section names, one a line

kmgr_opt_keys() {
	awk -v want="$2" '
		/^[ \t]*([#;]|$)/ { next }
		/^[ \t]*\[/ { s = $0; gsub(/[][ \t]/, "", s); next }
		s == want && index($0, "=") {
			k = substr($0, 1, index($0, "=") - 1); v = substr($0, index($0, "=") + 1)
			gsub(/^[ \t]+|[ \t]+$/, "", k); gsub(/^[ \t]+|[ \t]+$/, "", v)
			print k "=" v
		}' "$1"
}

kmgr_opt_sections() { awk '/^[ \t]*\[/ { s = $0; gsub(/[][ \t]/, "", s); print s }' "$1"; }
