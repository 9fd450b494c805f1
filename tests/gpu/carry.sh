#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# make gpu-carry: what a lent GPU machine (Ubuntu, torch with CUDA, nothing of
# Debian 12) needs to run tests/gpu/gpu_check.py, in one folder of at most a
# few MiB to carry beside the working tree:
#   DIR/lib/   libnetreduce.so and the libraries ldd names that such a machine
#              lacks (ISA-L, jansson, libibverbs, libnl-3, libnl-route-3)
#   DIR/run    runs gpu_check.py --device cuda with them (its arguments passed on)
# Then, on the machine, from the repository root: bash DIR/run --json $OUT/gpu.json
# (../shared/notes/device-machine.md says how it is carried).
# Usage: carry.sh BUILD DIR
set -euo pipefail
build=${1:?usage: carry.sh BUILD DIR}
dir=${2:?usage: carry.sh BUILD DIR}
lib=$build/host/shared/libnetreduce.so
[ -f "$lib" ] || { echo "carry.sh: no $lib: make build first" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/lib"
cp -L "$lib" "$dir/lib/libnetreduce.so"
# the libraries that are not glibc's, zlib's nor OpenSSL 3's (those the machine has)
ldd "$lib" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
	while read -r name path; do
		case $name in
		libc.so.* | libm.so.* | libz.so.* | libssl.so.3 | libcrypto.so.3) ;;
		*) cp -L "$path" "$dir/lib/$name" ;;
		esac
	done
cat > "$dir/run" <<'RUN'
#!/bin/bash
# made by tests/gpu/carry.sh: gpu_check.py on CUDA with the carried libnetreduce
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export NETREDUCE_LIB=$here/lib/libnetreduce.so
export PYTHONPATH=$PWD/python${PYTHONPATH:+:$PYTHONPATH}
exec "${GPU_PYTHON:-python3}" tests/gpu/gpu_check.py --device cuda "$@"
RUN
chmod +x "$dir/run"
echo "carry.sh: $dir ($(du -sh "$dir" | cut -f1)): carry it, then from the repository root:" \
	"bash $dir/run --json \$OUT/gpu.json"
