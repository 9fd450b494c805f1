#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The box as its operators watch it, on the namespace testbed (called by
# e2e.sh):
#   prometheus  a real Prometheus (Debian's) in the box's namespace scrapes
#               the box's --metrics-listen every 100 ms, with
#               deploy/prometheus.yml's job, while 4 hosts run a named job
#               (NR_JOB) of 16 MiB all-reduces at 200 Mbit/s a link, checked.
#               Then its HTTP API is asked for:
#                 a rate: sum(rate(netreduce_port_rx_bytes_total[D])) over the
#                   run, times D, against the bytes the hosts' links sent in
#                   it (within 5%);
#                 a per-job counter: netreduce_job_aggregated_total of the job
#                   by its name, against the contributions the hosts sent
#                   (ranks x packets x all-reduces, exactly), and its tenant;
#               promtool check metrics clean on a scrape taken while the job
#               ran, GET /healthz 200 and netreducectl health 0.
set -euo pipefail

scenario=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/testbed/lib.sh
. "$here/../testbed/lib.sh"

pass() { echo "PASS: e2e/$scenario: $*"; exit 0; }
fail() { echo "FAIL: e2e/$scenario: $*"; exit 1; }
skip() { echo "SKIP: e2e/$scenario: $*"; exit 77; }

[ "$scenario" = prometheus ] || { echo "ops.sh: unknown scenario '$scenario'" >&2; exit 2; }
for t in prometheus promtool curl; do
	command -v "$t" >/dev/null || skip "$t not installed (Debian packages prometheus, curl: make deps)"
done

hosts=4 mb=16 iters=3 warmup=1
ops=$((iters + warmup + 1))            # --check runs one more
mport=9470 pport=9090
perf=$build/bench/host/nr-allreduce-perf
export TB_RATE=200
tb_init "$build"
trap 'tb_teardown' EXIT
trap 'exit 130' INT TERM
tb_setup "$hosts"
# the listener is beyond loopback: its bearer token, a file of mode 600, as
# deploy/README.md says; Prometheus reads it from credentials_file
mtok=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
(umask 077 && printf '%s\n' "$mtok" > "$TB_RUNDIR/metrics-token")
TB_BOX_EXTRA="--metrics-listen 10.76.0.254:$mport --metrics-token-file $TB_RUNDIR/metrics-token"
tb_box_start
inbox() { ip netns exec "$TB_NS_BOX" "$@"; }
auth=(-H "Authorization: Bearer $mtok")
# from a host's namespace (another machine on the fabric), without the token
# or with another: 401, no counter, no job, no tenant in the answer
h0() { ip netns exec "$(tb_ns_host 0)" "$@"; }
for hdr in "" "Authorization: Bearer $(printf '%s' "$mtok" | tr 0-9a-f 1-9a-f0)" "Authorization: Basic $mtok"; do
	for path in metrics healthz; do
		out=$(h0 curl -s -w '\n%{http_code}' ${hdr:+-H "$hdr"} "http://10.76.0.254:$mport/$path")
		[ "${out##*$'\n'}" = 401 ] || fail "GET /$path from host 0 ${hdr:+with a wrong token }answered ${out##*$'\n'}"
		! grep -q netreduce_ <<< "$out" || fail "GET /$path without the token gave counters away"
	done
done
echo "GET /metrics and /healthz from another namespace without the bearer token: 401, nothing served"

# Prometheus in the box's namespace, deploy/prometheus.yml's job aimed at
# the box, every 100 ms
sed -e "s|'192.0.2.10:9470'|'10.76.0.254:$mport'|" -e 's/scrape_interval: 5s/scrape_interval: 100ms/' \
	-e "s|/etc/netreduce/metrics-token|$TB_RUNDIR/metrics-token|" \
	-e 's/scrape_timeout: 5s/scrape_timeout: 100ms/' "$TB_TOPDIR/deploy/prometheus.yml" \
	> "$TB_RUNDIR/prometheus.yml"
grep -q "10.76.0.254:$mport" "$TB_RUNDIR/prometheus.yml" || fail "deploy/prometheus.yml has no target to aim"
grep -q "credentials_file: $TB_RUNDIR/metrics-token" "$TB_RUNDIR/prometheus.yml" ||
	fail "deploy/prometheus.yml gives Prometheus no bearer token file"
promtool check config "$TB_RUNDIR/prometheus.yml" > /dev/null ||
	fail "promtool check config deploy/prometheus.yml (as the test sets it) failed"
inbox prometheus --config.file="$TB_RUNDIR/prometheus.yml" --storage.tsdb.path="$TB_RUNDIR/tsdb" \
	--web.listen-address="127.0.0.1:$pport" --log.level=warn > "$TB_RUNDIR/prometheus.log" 2>&1 &
tb_track "$!"
promq() {   # QUERY [TIME]: the first result's value, "" when none
	inbox curl -sf "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1" \
		${2:+--data-urlencode "time=$2"} | jq -r '.data.result[0].value[1] // empty'
}
deadline=$((SECONDS + 60))
until [ "$(promq 'up{job="netreduce"}')" = 1 ]; do
	[ $SECONDS -lt $deadline ] || { tail -n 20 "$TB_RUNDIR/prometheus.log"; fail "Prometheus did not scrape the box within 60 s"; }
	sleep 0.3
done
echo "Prometheus $(prometheus --version 2>&1 | head -n 1 | awk '{print $3}') scrapes the box every 100 ms"

hosts_tx() {   # bytes the hosts' data links sent so far
	local i s=0
	for ((i = 0; i < hosts; i++)); do
		s=$((s + $(ip -n "$(tb_ns_host "$i")" -j -s link show dev "${TB_P}d$i" | jq '.[0].stats64.tx.bytes')))
	done
	echo "$s"
}

tx0=$(hosts_tx)
t0=$(date +%s.%N)
TB_HOST_ENV="NR_JOB=e2e-prom NR_SOFT_STATS=1"
tb_launch prom 0 "$hosts" "$perf" --algo netreduce -b "${mb}M" -e "${mb}M" --iters "$iters" \
	--warmup "$warmup" --check --json --hold 1000
# a scrape while the job lives, through promtool
scrape=$TB_RUNDIR/scrape.txt
deadline=$((SECONDS + 60))
until inbox curl -sf "${auth[@]}" "http://10.76.0.254:$mport/metrics" > "$scrape" && grep -q 'name="e2e-prom"' "$scrape"; do
	[ $SECONDS -lt $deadline ] || fail "the job e2e-prom never showed in GET /metrics"
	sleep 0.2
done
lint=$(promtool check metrics < "$scrape" 2>&1) || fail "promtool check metrics: $lint"
[ -z "$lint" ] || fail "promtool check metrics: $lint"
echo "promtool check metrics: clean ($(grep -c '^# TYPE' "$scrape") families, $(wc -l < "$scrape") lines)"
health=$(inbox curl -s -w ' %{http_code}' "${auth[@]}" "http://10.76.0.254:$mport/healthz")
[[ $health == "ok: "*" 200" ]] || fail "GET /healthz during the run: $health"
tb_ctl health > /dev/null || fail "netreducectl health: exit $? during the run"

tb_wait 240 "${TB_LAUNCH_PIDS[@]}"
t1=$(date +%s.%N)
tx1=$(hosts_tx)
for ((r = 0; r < hosts; r++)); do
	[ "${TB_RCS[$r]}" = 0 ] || { tail -n 5 "$TB_RUNDIR/prom.h$r.log"; fail "host $r exit ${TB_RCS[$r]}"; }
done
wrong=$(grep '^{' "$TB_RUNDIR/prom.out" | jq -s 'map(.wrong) | add // 0')
[ "$wrong" = 0 ] || fail "$wrong wrong elements"
grep '^{' "$TB_RUNDIR/prom.out" | jq -c '{bytes, time_us, algbw_gbps}'
sleep 0.5     # a last scrape of the idle box

# what the hosts sent: data packets of 4 KiB (NR_MTU 4096), every rank's
contrib=$((hosts * mb * 1024 * 1024 / TB_MTU * ops))
sent=0
for ((r = 0; r < hosts; r++)); do
	n=$(grep -o 'tx_data=[0-9]*' "$TB_RUNDIR/prom.h$r.log" | tail -n 1 | cut -d= -f2 || true)
	re=$(grep -o 'tx_retrans=[0-9]*' "$TB_RUNDIR/prom.h$r.log" | tail -n 1 | cut -d= -f2 || true)
	sent=$((sent + ${n:-0} - ${re:-0}))
done
echo "the hosts sent $sent data packets, $((tx1 - tx0)) bytes on their links in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b - a}') s;" \
	"$ops all-reduces of $hosts x $mb MiB are $contrib contributions"

# the per-job counter, by the job's name, as Prometheus kept it
job=$(promq "max_over_time(netreduce_job_aggregated_total{name=\"e2e-prom\"}[10m])" "$t1")
tenant=$(inbox curl -sf "http://127.0.0.1:$pport/api/v1/query" --data-urlencode \
	"query=last_over_time(netreduce_job_ranks{name=\"e2e-prom\"}[10m])" --data-urlencode "time=$t1" |
	jq -r '.data.result[0].metric.tenant // empty')
echo "Prometheus: netreduce_job_aggregated_total{name=\"e2e-prom\",tenant=\"$tenant\"} = $job"
[ "$job" = "$contrib" ] || fail "the job's aggregated contributions: Prometheus has ${job:-none}, the hosts sent $contrib"
[ "$sent" -ge "$contrib" ] || fail "the hosts' own counters say $sent data packets, fewer than $contrib"
[ "$tenant" = default ] || fail "the job's tenant label: '$tenant', expected default (the token's tenant)"

# a rate: the box's ports' received bytes over the run, against the hosts' links
d_ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%d", (b - a) * 1000}')
rate=$(promq "sum(rate(netreduce_port_rx_bytes_total[${d_ms}ms]))" "$t1")
[ -n "$rate" ] || fail "no rate of netreduce_port_rx_bytes_total from Prometheus"
ratio=$(awk -v r="$rate" -v d="$d_ms" -v b="$((tx1 - tx0))" 'BEGIN{printf "%.4f", r * d / 1000 / b}')
echo "Prometheus: sum(rate(netreduce_port_rx_bytes_total[${d_ms}ms])) = $(awk -v r="$rate" 'BEGIN{printf "%.0f", r}') B/s;" \
	"x ${d_ms} ms / the hosts' $((tx1 - tx0)) bytes = $ratio"
awk -v x="$ratio" 'BEGIN{exit !(x >= 0.95 && x <= 1.05)}' ||
	fail "the box received $ratio of what the hosts' links sent, by Prometheus' rate (0.95..1.05 expected)"
# and the counter itself, at the run's two ends: what the box's ports took in
rx0=$(promq 'sum(netreduce_port_rx_bytes_total)' "$t0")
rx1=$(promq 'sum(netreduce_port_rx_bytes_total)' "$t1")
exact=$(awk -v a="$rx0" -v b="$rx1" -v h="$((tx1 - tx0))" 'BEGIN{printf "%.4f", (b - a) / h}')
echo "Prometheus: sum(netreduce_port_rx_bytes_total) grew by $(awk -v a="$rx0" -v b="$rx1" 'BEGIN{printf "%.0f", b - a}') bytes" \
	"over the run: $exact of the hosts' bytes"
awk -v x="$exact" 'BEGIN{exit !(x >= 0.99 && x <= 1.0)}' ||
	fail "the box's ports received $exact of what the hosts' links sent (0.99..1: a frame the af_packet ring dropped at most)"
scrapes=$(promq "count_over_time(up{job=\"netreduce\"}[${d_ms}ms])" "$t1")
took=$(promq "avg_over_time(scrape_duration_seconds{job=\"netreduce\"}[${d_ms}ms])" "$t1")
up=$(promq "min_over_time(up{job=\"netreduce\"}[${d_ms}ms])" "$t1")
echo "Prometheus scraped the box $scrapes times in the run's $d_ms ms (a scrape took" \
	"$(awk -v t="$took" 'BEGIN{printf "%.1f", t * 1000}') ms on average; every one up: $up)"
[ "$up" = 1 ] || fail "a scrape failed during the run (min up = $up)"
pass "Prometheus scraped the box every 100 ms during 16 MiB all-reduces of 4 hosts (exact);" \
	"the job's aggregated contributions by name = $contrib, as the hosts sent; the ports' received" \
	"rate x time = $ratio of the hosts' bytes; promtool clean"
