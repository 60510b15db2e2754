# Source this (". sanitizers/env.sh") to get the same sanitizer options the
# tests use, outside ctest: fuzzing runs, the reproducer, stress.
_kmgr_src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_kmgr_opts() {
	grep -v '^[[:space:]]*#' "$_kmgr_src/sanitizers/$1.options" | grep -v '^[[:space:]]*$' |
		sed "s|@SRC@|$_kmgr_src|g" | paste -sd: -
}
export ASAN_OPTIONS="$(_kmgr_opts asan)"
export UBSAN_OPTIONS="$(_kmgr_opts ubsan)"
export LSAN_OPTIONS="$(_kmgr_opts lsan)"
export TSAN_OPTIONS="$(_kmgr_opts tsan)"
export MSAN_OPTIONS="$(_kmgr_opts msan)"
unset -f _kmgr_opts
