#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The container testbed (docker/testbed) end to end: 2 and then 4 host
# containers, all-reduce through the box container and over the ring, every
# result checked bit for bit.  Prepares what is missing first (docker.io and
# mmdebstrap from apt, the engine, the debian:12 base, the images: the cold
# path takes minutes, later runs seconds).  Afterwards nothing of the run may
# be left: no container, no network, no Docker bridge or veth in this
# namespace, and no engine process if the engine was not running before.
# Exit 0 pass, 1 fail, 77 skip (no Docker engine can be started, or not root).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
testbed="$top/docker/testbed"

skip() { echo "SKIP: e2e/docker: $*"; exit 77; }
pass() { echo "PASS: e2e/docker: $*"; exit 0; }
fail() { echo "FAIL: e2e/docker: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (starts the Docker engine, configures container interfaces)"
command -v jq >/dev/null || skip "jq not installed"

docker_links() { ip -o link show 2>/dev/null | awk -F': ' '{ print $2 }' | sed 's/@.*//' | grep -E '^(br-|veth|docker)' | sort || true; }
engine_before=0
docker info >/dev/null 2>&1 && engine_before=1
links_before=$(docker_links)

out=$(mktemp /tmp/nrd-e2e.XXXXXX)
log=$(mktemp /tmp/nrd-e2e-log.XXXXXX)
trap 'rm -f "$out" "$log"' EXIT
# Sizes: one element, a message and one element, 1 MiB and one element.
sizes=4,65540,1048580
rc=0
"$testbed" --hosts 2,4 --algo netreduce,ring --bytes "$sizes" --iters 2 --warmup 1 --check --json \
	--timeout "${E2E_TIMEOUT:-240}" > "$out" 2> "$log" || rc=$?
cat "$log"
cat "$out"
if [ "$rc" = 77 ]; then
	skip "$(grep -m1 -E 'no Docker engine' "$log" | sed 's/^\[docker [^]]*\] //')"
fi
[ "$rc" = 0 ] || fail "docker/testbed exit $rc (1 = wrong results, 2 = a step or a host failed; log above)"

rows=$(grep -c '^{' "$out" || true)
[ "$rows" = 12 ] || fail "$rows result rows, expected 12 (N=2,4 x netreduce,ring x 3 sizes)"
wrong=$(jq -s 'map(.wrong) | add // 0' "$out")
[ "$wrong" = 0 ] || fail "$wrong wrong elements"
for n in 2 4; do
	for a in netreduce ring; do
		got=$(jq -s --arg a "$a" --argjson n "$n" 'map(select(.algo == $a and .ranks == $n)) | length' "$out")
		[ "$got" = 3 ] || fail "$got rows for $a with $n ranks, expected 3"
	done
done
# The box aggregated (netreduce) and switched (ring): its counters, printed by
# the testbed for each run.
for n in 2 4; do
	grep -qE "box counters \(N=$n\): .*held [1-9][0-9]*, results [1-9].*forwarded [1-9]" "$log" ||
		fail "the box's counters for N=$n show no held contributions, results or forwarded (ring) frames"
done

# Nothing left behind.
if docker info >/dev/null 2>&1; then
	[ "$engine_before" = 1 ] || fail "the engine started for the test still answers"
	left=$(docker ps -aq --filter label=netreduce.run; docker network ls -q --filter label=netreduce.run)
	[ -z "$left" ] || fail "left on the engine: $left"
elif [ "$engine_before" = 1 ]; then
	fail "the engine that was running before the test no longer answers"
fi
if [ "$engine_before" = 0 ]; then
	pid=$(sed -n 's/.*engine up, dockerd pid \([0-9]*\).*/\1/p' "$log" | tail -n 1)
	[ -n "$pid" ] || fail "no engine ran before, and the testbed did not say which dockerd it started"
	[ -d "/proc/$pid" ] && fail "the dockerd the testbed started (pid $pid) is left"
	pgrep -f '^containerd --config /var/run/docker/containerd' >/dev/null &&
		fail "the engine's containerd is left"
	mountpoint -q /run/docker/netns/default 2>/dev/null && fail "the engine's /run/docker/netns/default mount is left"
fi
links_after=$(docker_links)
[ "$links_after" = "$links_before" ] ||
	fail "interfaces left in this namespace: $(comm -13 <(echo "$links_before") <(echo "$links_after") | tr '\n' ' ')"
pass "2 and 4 host containers through the box container and over the ring, 3 sizes 4 B..1 MiB," \
	"bit-identical; nothing left behind (docker/testbed: $(grep -oE 'OK \([0-9]+ s\)' "$log" | tail -n 1 | tr -d 'OK()'))"
