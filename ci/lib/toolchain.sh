# ci/lib/toolchain.sh - sourced by the entry scripts (fuzz.sh, afl.sh,
# coverage.sh, nightly.sh, oss-fuzz-build.sh --local-check, test.sh): the
# toolchain check, and a configure step that survives a failed or foreign
# earlier configure.  Needs $KMGR_ROOT, the source tree.
#
#   kmgr_toolchain WHO
#       every tool ci/deps.sh knows is present; if not, as root they are
#       installed the way ci/deps.sh does, otherwise one line names the
#       command to run and the script exits 2.  Nothing is built before.
#   kmgr_cache_ok DIR
#       0 when DIR/CMakeCache.txt is a finished configure of this tree with
#       a compiler that exists (not Unknown, not another source tree).
#   kmgr_configure WHO DIR [--always] CMAKE-ARGS...
#       configures DIR with `cmake -S $KMGR_ROOT -B DIR CMAKE-ARGS`: not at
#       all when its cache is fine (unless --always), afresh (--fresh) when
#       the cache is not; a failure removes a DIR this call created, prints
#       the first errors and exits 1.
#   kmgr_python_direct
#       when python3 on PATH is a pyenv shim, puts the interpreter it picks
#       first on PATH: the same python3, without the dozen bash scripts the
#       shim runs to pick it (~0.3 s of CPU a call against 0.03; the suite
#       makes about a hundred calls, most in its tests).

kmgr_toolchain() {
	local who=$1 missing
	if missing=$(bash "$KMGR_ROOT/ci/deps.sh" --check 2>&1); then
		return 0
	fi
	if [ "$(id -u)" = 0 ]; then
		echo "$who: ${missing#deps: }: installing them (ci/deps.sh)"
		bash "$KMGR_ROOT/ci/deps.sh" || { echo "$who: ci/deps.sh failed" >&2; exit 2; }
		return 0
	fi
	echo "$who: ${missing#deps: }; install them first: sudo bash ci/deps.sh" >&2
	exit 2
}

kmgr_cache_ok() {
	local c=$1/CMakeCache.txt cc home
	[ -f "$c" ] && [ -f "$1/build.ninja" ] || return 1
	! grep -q '^CMAKE_EXECUTABLE_FORMAT:INTERNAL=Unknown$' "$c" || return 1
	cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$c")
	[ -n "$cc" ] && command -v "$cc" >/dev/null 2>&1 || return 1
	home=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$c")
	[ -n "$home" ] && [ "$home" -ef "$KMGR_ROOT" ]
}

kmgr_configure() {
	local who=$1 dir=$2 always=0 created=0 fresh=() log rc=0
	shift 2
	[ "${1:-}" != --always ] || { always=1; shift; }
	if kmgr_cache_ok "$dir"; then
		[ "$always" = 1 ] || return 0
	elif [ -f "$dir/CMakeCache.txt" ]; then
		echo "$who: $dir holds the cache of a failed or foreign configure: configuring afresh" >&2
		fresh=(--fresh)
	fi
	[ -e "$dir" ] || created=1
	log=$(mktemp)
	cmake "${fresh[@]}" -S "$KMGR_ROOT" -B "$dir" "$@" >"$log" 2>&1 || rc=$?
	if [ "$rc" != 0 ]; then
		echo "$who: configuring $dir failed:" >&2
		grep -A3 -m3 'CMake Error' "$log" | head -n 12 >&2 || tail -n 12 "$log" >&2
		rm -f "$log"
		[ "$created" = 0 ] || rm -rf "$dir"
		exit 1
	fi
	rm -f "$log"
}

kmgr_python_direct() {
	local py
	case $(command -v python3) in
	*/shims/python3) ;;
	*) return 0 ;;
	esac
	py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || return 0
	[ -x "$py" ] || return 0
	PATH=$(dirname "$py"):$PATH
	export PATH
}
