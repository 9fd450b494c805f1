#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Validate docker/compose.yaml with whichever compose exists: the docker
# compose plugin, or Debian's docker-compose (v1).  No engine needed.
# Exit 77 (skip) when neither is installed.
set -euo pipefail
f="$(cd "$(dirname "$0")" && pwd)/compose.yaml"
if docker compose version >/dev/null 2>&1; then
	tool=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then
	tool=(docker-compose)
else
	echo "SKIP: neither 'docker compose' nor docker-compose is installed (apt-get install docker-compose)"
	exit 77
fi
out=$("${tool[@]}" -f "$f" config) || { echo "FAIL: ${tool[*]} -f $f config"; exit 1; }
for svc in box host0 host1 host2 host3; do
	grep -q "^  $svc:" <<< "$out" || { echo "FAIL: service $svc missing from the resolved config"; exit 1; }
done
echo "PASS: ${tool[*]} -f docker/compose.yaml config: box + 4 hosts"
