#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# make gpu-carry's folder, tested where there is no GPU: tests/gpu/carry.sh packs
# it into a temporary folder; every library it holds resolves there (ldd with
# its run script's LD_LIBRARY_PATH); its run script runs the harness's local
# phase on host tensors (--device cpu after run's --device cuda) with the
# carried libnetreduce, from the repository root as on the device machine.
# Usage: test_carry.sh BUILD
set -euo pipefail
build=$(cd "${1:?usage: test_carry.sh BUILD}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d /tmp/nr-gpu-carry.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: gpu-carry: $*"; exit 1; }
"$top/tests/gpu/carry.sh" "$build" "$dir/c" >/dev/null
for f in "$dir"/c/lib/*; do
	name=$(basename "$f")
	[ "$name" = libnetreduce.so ] && continue
	ldd "$dir/c/lib/libnetreduce.so" | grep -q "$name" || fail "$name carried but not needed"
done
# with the run script's path, each carried library is the one the loader takes
out=$(LD_LIBRARY_PATH=$dir/c/lib ldd "$dir/c/lib/libnetreduce.so")
for f in "$dir"/c/lib/*.so.*; do
	grep -q "=> $dir/c/lib/$(basename "$f")" <<< "$out" ||
		fail "$(basename "$f") not taken from the folder: $out"
done
cd "$top"
log=$(GPU_PYTHON=/usr/bin/python3 bash "$dir/c/run" --device cpu --phases local --steps 1 \
	--size-mb 1 --reps 1 2>&1) || fail "the run script failed: $log"
grep -q "^PASS: gpu-check (cpu): local" <<< "$log" || fail "no PASS line: $log"
echo "PASS: gpu-carry: $(ls "$dir/c/lib" | tr '\n' ' ')($(du -sh "$dir/c" | cut -f1)); its run script ran the local phase with them"
