#!/usr/bin/env bash
# tools/kmgr-repro/eval/run.sh N [BUILD_OF_CORRECT_TREE]
# The evaluation of injected bug N (mutants/fuzz-N-*.patch) with the
# padded program eval/fuzz-N.<target>.txt: in a copy of the tree with the
# mutant applied (asan preset), replay the original 10 times, minimize it,
# replay the result 10 times, emit it as C, and build and run that test
# against the mutant library and against the correct one (BUILD, default
# build/asan, must hold lib/libnrt.a and tools/kmgr-repro/kmgr-repro).
set -euo pipefail
[ $# -ge 1 ] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
n=$1
src=$(cd "$(dirname "$0")/../../.." && pwd)
good=${2:-$src/build/asan}
prog=$(ls "$src"/tools/kmgr-repro/eval/fuzz-$n.*.txt)
target=$(basename "$prog" .txt); target=${target#fuzz-$n.}
patch=$(ls "$src"/mutants/fuzz-$n-*.patch)
tmp=$(mktemp -d /tmp/kmgr-repro-eval.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tar -C "$src" --exclude=./build --exclude='./build-*' --exclude=./.git -cf - . | tar -C "$tmp" -xf -
(cd "$tmp" && patch -p1 -s < "$patch")
cmake --preset asan -S "$tmp" -B "$tmp/b" > "$tmp/configure.log" 2>&1
cmake --build "$tmp/b" -j2 --target kmgr-repro > "$tmp/build.log" 2>&1 || { tail "$tmp/build.log"; exit 2; }
bad=$tmp/b/tools/kmgr-repro/kmgr-repro
echo "== $(basename "$patch") ($target)"
"$bad" replay "$prog" --target "$target" --times 10 | tail -1 | sed 's/^/mutant, original:  /' || true
"$good/tools/kmgr-repro/kmgr-repro" replay "$prog" --target "$target" | tail -1 |
	sed 's/^/correct, original: /' || true
"$bad" minimize "$prog" --target "$target" -o "$tmp/min" | tail -2 || true
"$bad" replay "$tmp/min" --target "$target" --times 10 | tail -1 | sed 's/^/mutant, minimized: /' || true
"$bad" emit-c "$tmp/min" --target "$target" -o "$tmp/fuzz_$n.c" > /dev/null
for lib in "$tmp/b" "$good"; do
	which=mutant; [ "$lib" = "$good" ] && which=correct
	clang -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
		-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -O1 \
		-I"$src/lib" -I"$src/lib/include" "$tmp/fuzz_$n.c" "$lib/lib/libnrt.a" -lpthread \
		-o "$tmp/t-$which"
	rc=0; (cd "$tmp" && timeout 120 "./t-$which" > "run-$which.log" 2>&1) || rc=$?
	echo "emitted C on the $which library: exit $rc" \
		"$(grep -m1 -oE 'AddressSanitizer: [a-z-]+|LeakSanitizer|ORACLE: [a-z-]+|KSCHED [A-Z]+|PASS' "$tmp/run-$which.log" || true)"
done
