# ci/lib/options.sh - sourced by the scripts that read a target's
# corpus/T.options, the OSS-Fuzz file (INI: [sections] of key = value,
# '#' and ';' comments): fuzz.sh, scale-bench.sh and oss-fuzz-build.sh, one
# parser.
#
#   kmgr_opt_keys FILE SECTION
#       the "key=value" lines of one [section], spaces around '=' trimmed
#   kmgr_opt_sections FILE
#       the section names, one a line
#   kmgr_libfuzzer_flags FILE
#       the [libfuzzer] section as libFuzzer's flags ("-key=value") in the
#       array kmgr_opt_flags, a relative dict resolved next to FILE (none
#       when FILE does not exist): how ci/fuzz.sh and scale-bench run a
#       worker
#   kmgr_tsan_no_abort
#       TSAN_OPTIONS and UBSAN_OPTIONS with abort_on_error=0: a TSan report
#       in a libFuzzer binary then ends through libFuzzer's death callback
#       (the crash file) and _exit, not abort() and its deadly-signal
#       handler, whose stack printing can wedge inside TSan's malloc.  Both:
#       the tsan preset's binaries carry UBSan, whose runtime parses
#       UBSAN_OPTIONS after TSAN_OPTIONS into the same common flags, so its
#       abort_on_error=1 won over TSan's 0 (ctest fuzz_tsan_no_abort)

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

kmgr_tsan_no_abort() {
	export TSAN_OPTIONS="${TSAN_OPTIONS:-}:abort_on_error=0" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:abort_on_error=0"
}

kmgr_opt_sections() { awk '/^[ \t]*\[/ { s = $0; gsub(/[][ \t]/, "", s); print s }' "$1"; }

kmgr_libfuzzer_flags() {
	local kv k v
	kmgr_opt_flags=()
	[ -f "$1" ] || return 0
	while IFS= read -r kv; do
		k=${kv%%=*} v=${kv#*=}
		[ "$k" != dict ] || [[ "$v" = /* ]] || v=${1%/*}/$v
		kmgr_opt_flags+=("-$k=$v")
	done < <(kmgr_opt_keys "$1" libfuzzer)
}
