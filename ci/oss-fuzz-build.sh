#!/usr/bin/env bash
# ci/oss-fuzz-build.sh [--local-check [address|undefined|memory|all] | --check] [--help]
# Builds every fuzz target the OSS-Fuzz way (the build.sh of .clusterfuzzlite/
# and infra/oss-fuzz/ calls this): compiler $CC, flags $CFLAGS (they carry
# the one sanitizer of this job, $SANITIZER, and -fsanitize=fuzzer-no-link),
# linked by $CXX $CXXFLAGS (libFuzzer is C++) with $LIB_FUZZING_ENGINE;
# binaries to $OUT with <target>_seed_corpus.zip, .dict and .options.
# Sources from $SRC/kmgr-fuzz when set, else this checkout; build tree in
# $WORK; JOBS (default: nproc) parallel jobs; KMGR_WERROR=OFF drops -Werror.
# --local-check SAN sets those variables as OSS-Fuzz's compile step does for
# SAN (clang-19; address, undefined and memory are separate jobs), runs
# .clusterfuzzlite/build.sh with them (the sources linked at $SRC/kmgr-fuzz)
# into a temp $OUT and re-enacts check_build on each target: 4 runs with
# -seed=1337 that finish, >= 100 edges on the INFO line, the sanitizer call
# counts of bad_build_check (objdump), and a replay of the seed corpus.
# --check runs only those checks on what $OUT holds, for $SANITIZER.
# Exits 1 when a check fails, 2 on bad usage.
set -euo pipefail
. "$(dirname "$0")/lib/usage.sh"
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/ci/lib/targets.sh"
. "$here/ci/lib/options.sh"
read -r -a targets <<<"$(KMGR_ROOT=$here kmgr_targets " ")"
usage() { kmgr_usage; }

# OSS-Fuzz's compile flags per sanitizer (infra/base-images/base-clang):
# one sanitizer per job.  address carries no UBSan: check_build rejects an
# ASan binary with more than 200 calls into the UBSan runtime.
ossfuzz_env() {
	local san=$1 sanflags
	case "$san" in
	address) sanflags="-fsanitize=address -fsanitize-address-use-after-scope" ;;
	undefined)
		local checks=array-bounds,bool,builtin,enum,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound
		# unsigned-integer-overflow is instrumented but recoverable (the
		# runner silences it: UBSAN_OPTIONS=silence_unsigned_overflow=1)
		sanflags="-fsanitize=$checks,unsigned-integer-overflow -fno-sanitize-recover=$checks"
		;;
	memory) sanflags="-fsanitize=memory -fsanitize-memory-track-origins" ;;
	esac
	export SANITIZER=$san FUZZING_ENGINE=libfuzzer ARCHITECTURE=x86_64
	export CC=${KMGR_CC:-clang-19} CXX=${KMGR_CXX:-clang++-19}
	export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION $sanflags -fsanitize=fuzzer-no-link"
	export CXXFLAGS=$CFLAGS LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
	export UBSAN_OPTIONS=print_stacktrace=1:print_summary=1:silence_unsigned_overflow=1:dedup_token_length=3
	export ASAN_OPTIONS=alloc_dealloc_mismatch=0:allocator_may_return_null=1:detect_leaks=1:detect_stack_use_after_return=1:dedup_token_length=3
	export MSAN_OPTIONS=print_stats=1:dedup_token_length=3
}

build() {
	: "${CC:?CC is not set}" "${CFLAGS:?CFLAGS is not set}" "${OUT:?OUT is not set}"
	: "${LIB_FUZZING_ENGINE:?LIB_FUZZING_ENGINE is not set}"
	local src=$here work=${WORK:-} link=() cflags=$CFLAGS
	# libFuzzer's stack-depth feature (on with -fsanitize=fuzzer-no-link
	# under Linux) is the depth below the main stack, measured on fibers
	# whose stacks ASLR places anew in each process: the same input would
	# have other features in each run (fuzz/tests/features_stable.sh, and
	# KFUZZ_NO_DEPTH in fuzz/CMakeLists.txt for this tree's own builds)
	[ "${FUZZING_ENGINE:-libfuzzer}" != libfuzzer ] || cflags+=" -fno-sanitize-coverage=stack-depth"
	[ -z "${SRC:-}" ] || [ ! -f "$SRC/kmgr-fuzz/CMakeLists.txt" ] || src=$SRC/kmgr-fuzz
	[ -n "$work" ] || work=$(mktemp -d /tmp/oss-fuzz-work.XXXXXX)
	# libFuzzer is C++: link with $CXX $CXXFLAGS as OSS-Fuzz asks of C projects
	if [ -n "${CXX:-}" ]; then
		link=(-DCMAKE_C_LINK_EXECUTABLE="$CXX ${CXXFLAGS:-} <FLAGS> <CMAKE_C_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
	fi
	echo "oss-fuzz-build: ${SANITIZER:-?} build of $src in $work/build, $JOBS jobs"
	cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
		-DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$cflags" -DCMAKE_C_FLAGS_RELEASE="" "${link[@]}" \
		-DKMGR_SANITIZER=none -DKMGR_FUZZ_ENGINE=ossfuzz -DKMGR_WERROR="${KMGR_WERROR:-ON}" \
		-DKMGR_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" >"$work/configure.log" 2>&1 ||
		{ cat "$work/configure.log" >&2; echo "oss-fuzz-build: configure failed" >&2; exit 1; }
	cmake --build "$work/build" -j"$JOBS" $(printf -- '--target fuzz_%s ' "${targets[@]}")
	local t
	for t in "${targets[@]}"; do
		cp "$work/build/fuzz/$t" "$OUT/$t"
		rm -f "$OUT/${t}_seed_corpus.zip"
		(cd "$src/corpus/$t" && zip -q -j "$OUT/${t}_seed_corpus.zip" ./*)
		cp "$src/corpus/$t.dict" "$OUT/$t.dict"
		cp "$src/corpus/$t.options" "$OUT/$t.options"
	done
	echo "oss-fuzz-build: ${#targets[@]} targets in $OUT"
}

# libfuzzer_args T: what OSS-Fuzz's run_fuzzer adds from $OUT/T.options
# ([libfuzzer] section; the dict named there lives in $OUT).
libfuzzer_args() {
	local kv k v
	while IFS= read -r kv; do
		k=${kv%%=*} v=${kv#*=}
		[ "$k" != dict ] || v=$OUT/$v
		printf -- '-%s=%s\n' "$k" "$v"
	done < <(kmgr_opt_keys "$OUT/$1.options" libfuzzer)
}

# calls BIN PREFIX: calls into one sanitizer runtime, counted as
# bad_build_check counts them (objdump -dC, "call <__asan...").
calls() { objdump -dC "$1" | grep -cE "callq?\s+[0-9a-f]+\s+<$2" || true; }

# check_target T: bad_build_check's checks for one target; prints one line.
check_target() {
	local t=$1 bin=$OUT/$1 log=$WORK/$1.check.log edges a m u why=""
	local empty seeds
	empty=$(mktemp -d) seeds=$(mktemp -d)
	mapfile -t fargs < <(libfuzzer_args "$t")
	# check_engine and check_startup_crash: 4 runs, seed 1337, empty corpus
	"$bin" -seed=1337 -runs=4 "${fargs[@]}" "$empty" >"$log" 2>&1 || true
	edges=$(grep -oP 'INFO: Loaded [[:digit:]]+ module.*\(.*(counters|guards)\):[[:space:]]+\K[[:digit:]]+' "$log" | head -1 || true)
	grep -q 'Done 4 runs' "$log" || why+=" no 'Done 4 runs' (startup crash or exit);"
	[ "${edges:-0}" -ge 100 ] || why+=" ${edges:-0} edges < 100;"
	grep -q x86-64 <<<"$(file "$bin")" || why+=" not an x86-64 binary;"
	# check_mixed_sanitizers: bad_build_check's thresholds
	a=$(calls "$bin" __asan) m=$(calls "$bin" __msan) u=$(calls "$bin" __ubsan)
	case "$SANITIZER" in
	address)
		[ "$a" -ge 1000 ] || why+=" $a ASan calls < 1000;"
		[ "$m" -le 3 ] || why+=" $m MSan calls > 3;"
		[ "$u" -le 200 ] || why+=" $u UBSan calls > 200 (mixed ASan+UBSan build);"
		;;
	undefined)
		[ "$a" -eq 0 ] || why+=" $a ASan calls > 0;"
		[ "$m" -le 3 ] || why+=" $m MSan calls > 3;"
		[ "$u" -ge 168 ] || why+=" $u UBSan calls < 168;"
		;;
	memory)
		[ "$a" -eq 0 ] || why+=" $a ASan calls > 0;"
		[ "$m" -ge 1000 ] || why+=" $m MSan calls < 1000;"
		[ "$u" -le 200 ] || why+=" $u UBSan calls > 200;"
		;;
	esac
	# check_seed_corpus: -runs=0 over the unpacked seed corpus
	(cd "$seeds" && unzip -q "$OUT/${t}_seed_corpus.zip")
	"$bin" -rss_limit_mb=2560 -timeout=25 -runs=0 "${fargs[@]}" "$seeds" >>"$log" 2>&1 ||
		why+=" a seed crashes (log $log);"
	printf 'check_build %-4s %-11s %-9s edges %5s  calls asan %5s msan %5s ubsan %5s  seeds %4s  %s\n' \
		"$SANITIZER" "$t" "$([ -z "$why" ] && echo ok || echo FAILED)" "${edges:-?}" "$a" "$m" "$u" \
		"$(find "$seeds" -type f | wc -l)" "${why:+-${why%;}}"
	rm -rf "$empty" "$seeds"
	[ -z "$why" ]
}

local_check() {
	local san=$1 fail=0 t
	ossfuzz_env "$san"
	OUT=$(mktemp -d /tmp/oss-fuzz-out."$san".XXXXXX)
	WORK=$(mktemp -d /tmp/oss-fuzz-work."$san".XXXXXX)
	export OUT WORK
	# through .clusterfuzzlite/build.sh, as the service runs it: the
	# checkout at $SRC/kmgr-fuzz (a link here), KMGR_WERROR=OFF
	SRC=$(mktemp -d /tmp/oss-fuzz-src.XXXXXX)
	ln -s "$here" "$SRC/kmgr-fuzz"
	SRC=$SRC bash "$here/.clusterfuzzlite/build.sh"
	rm -rf "$SRC"
	for t in "${targets[@]}"; do
		check_target "$t" || fail=1
	done
	[ "$fail" = 0 ] && rm -rf "$OUT" "$WORK"
	return "$fail"
}

JOBS=${JOBS:-$(nproc)}
case "${1:-}" in
"") build ;;
-h | --help) usage ;;
--local-check)
	sans=${2:-all}
	[ "$sans" != all ] || sans="address undefined memory"
	fail=0
	for s in $sans; do
		case "$s" in address | undefined | memory) ;; *) echo "oss-fuzz-build: no sanitizer '$s' (address, undefined, memory, all)" >&2; exit 2 ;; esac
	done
	# here, not in OSS-Fuzz's image: the toolchain is this machine's
	KMGR_ROOT=$here
	. "$here/ci/lib/toolchain.sh"
	kmgr_toolchain oss-fuzz-build
	for s in $sans; do
		local_check "$s" || fail=1
	done
	exit "$fail"
	;;
--check)
	: "${OUT:?OUT is not set}" "${SANITIZER:?SANITIZER is not set}"
	WORK=${WORK:-$(mktemp -d /tmp/oss-fuzz-work.XXXXXX)}
	fail=0
	for t in "${targets[@]}"; do
		check_target "$t" || fail=1
	done
	exit "$fail"
	;;
*)
	echo "oss-fuzz-build: unknown argument $1 (--help)" >&2
	exit 2
	;;
esac
