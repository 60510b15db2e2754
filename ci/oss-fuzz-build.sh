#!/usr/bin/env bash
# ci/oss-fuzz-build.sh [--local-check]
# Builds every fuzz target the OSS-Fuzz way: compiler $CC, flags $CFLAGS
# (which carry the sanitizer and -fsanitize=fuzzer-no-link), link with
# $LIB_FUZZING_ENGINE, binaries to $OUT with <target>_seed_corpus.zip,
# <target>.dict and <target>.options next to them.  $WORK (default: a
# temp dir) holds the build tree.
# --local-check sets those variables itself (clang, ASan+UBSan, libFuzzer),
# builds into a temp $OUT and runs each binary like OSS-Fuzz's check_build:
# `-runs=4 -seed=1337` on an empty corpus, then once over its seed corpus.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
targets=(model_parse api_seq concurrent async faults)

local_check=0
if [ "${1:-}" = "--local-check" ]; then
	local_check=1
	export CC=${CC:-clang-19}
	export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address,undefined -fno-sanitize-recover=all -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
	export LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
	OUT=$(mktemp -d /tmp/oss-fuzz-out.XXXXXX)
	export OUT
elif [ -n "${1:-}" ]; then
	sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
fi
: "${CC:?CC is not set}" "${CFLAGS:?CFLAGS is not set}" "${OUT:?OUT is not set}"
: "${LIB_FUZZING_ENGINE:?LIB_FUZZING_ENGINE is not set}"
WORK=${WORK:-$(mktemp -d /tmp/oss-fuzz-work.XXXXXX)}

cmake -S "$root" -B "$WORK/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
	-DCMAKE_C_COMPILER="$CC" -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_C_FLAGS_RELEASE="" \
	-DKMGR_SANITIZER=none -DKMGR_FUZZ_ENGINE=ossfuzz \
	-DKMGR_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" >"$WORK/configure.log"
cmake --build "$WORK/build" -j"${JOBS:-2}" $(printf -- '--target fuzz_%s ' "${targets[@]}")
for t in "${targets[@]}"; do
	cp "$WORK/build/fuzz/$t" "$OUT/$t"
	rm -f "$OUT/${t}_seed_corpus.zip"
	(cd "$root/corpus/$t" && zip -q -j "$OUT/${t}_seed_corpus.zip" ./*)
	cp "$root/corpus/$t.dict" "$OUT/$t.dict"
	cp "$root/corpus/$t.options" "$OUT/$t.options"
done
echo "oss-fuzz-build: ${#targets[@]} targets in $OUT"
[ "$local_check" = 1 ] || exit 0

fail=0
for t in "${targets[@]}"; do
	empty=$(mktemp -d)
	seeds=$(mktemp -d)
	(cd "$seeds" && unzip -q "$OUT/${t}_seed_corpus.zip")
	if "$OUT/$t" -runs=4 -seed=1337 "$empty" >"$WORK/$t.check.log" 2>&1 &&
		"$OUT/$t" -runs=0 -dict="$OUT/$t.dict" "$seeds" >>"$WORK/$t.check.log" 2>&1; then
		echo "check_build $t: ok ($(ls "$seeds" | wc -l) seeds)"
	else
		echo "check_build $t: FAILED (log $WORK/$t.check.log)"
		fail=1
	fi
	rm -rf "$empty" "$seeds"
done
exit $fail
