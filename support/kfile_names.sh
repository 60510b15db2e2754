#!/usr/bin/env bash
# kfile_names.sh KMGR_MODEL SCRATCH - what kfile promises about the file it
# replaces, seen through kmgr-model create: a destination name of 250
# characters works (the temporary name is short), a 0600 file stays 0600,
# and a file with two names (a hard link) keeps both on the new bytes.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: kfile_names.sh KMGR_MODEL SCRATCH" >&2; exit 2; }
tool=$1 dir=$2
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
make() { "$tool" create -o "$1" --name "$2" --input a:u8:16 --output y:u8:16 >/dev/null; }
long=$(printf 'm%.0s' $(seq 250))
make "$long" long || { echo "kfile_names: a 250-character name failed" >&2; exit 1; }
make private.bin first && chmod 600 private.bin && make private.bin second
[ "$(stat -c %a private.bin)" = 600 ] || { echo "kfile_names: 0600 became $(stat -c %a private.bin)" >&2; exit 1; }
make one.bin first && ln one.bin two.bin && make one.bin second
cmp -s one.bin two.bin || { echo "kfile_names: the hard link still holds the old bytes" >&2; exit 1; }
[ -z "$(ls -A | grep '\.kf-' || true)" ] || { echo "kfile_names: a temporary file was left" >&2; exit 1; }
echo "kfile_names: long name, mode and hard link kept"
