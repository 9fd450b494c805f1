#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Run nr-allreduce-perf in every host container at once (the compose testbed
# must be up); rank 0's output is printed.  Arguments go to nr-allreduce-perf,
# e.g.  docker/run-perf.sh --algo netreduce --check -b 4K -e 16M
set -euo pipefail
f="$(cd "$(dirname "$0")" && pwd)/compose.yaml"
if docker compose version >/dev/null 2>&1; then dc=(docker compose -f "$f"); else dc=(docker-compose -f "$f"); fi
hosts=${NR_HOSTS:-4}
pids=()
for ((i = hosts - 1; i >= 1; i--)); do
	"${dc[@]}" exec -T "host$i" nr-allreduce-perf "$@" > /dev/null &
	pids+=($!)
done
rc=0
"${dc[@]}" exec -T host0 nr-allreduce-perf "$@" || rc=$?
for p in "${pids[@]}"; do wait "$p" || rc=$((rc > $? ? rc : $?)); done
exit "$rc"
