#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# End-to-end scenarios on the namespace testbed (tests/testbed), one per
# meson test:  tests/e2e/e2e.sh SCENARIO [BUILD_DIR]
# (meson passes NR_BUILD).  Exit 0 pass, 1 fail, 77 skip (with the reason).
# The last line is "PASS: e2e/SCENARIO ..." or "FAIL: e2e/SCENARIO: why".
set -euo pipefail

scenario=${1:?usage: e2e.sh SCENARIO [BUILD_DIR]}
build=${2:-${NR_BUILD:-build}}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
run="$top/tests/testbed/run"

skip() { echo "SKIP: e2e/$scenario: $*"; exit 77; }
pass() { echo "PASS: e2e/$scenario: $*"; exit 0; }
fail() { echo "FAIL: e2e/$scenario: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, veths, DPDK af_packet ports)"
for b in netreduce-switch bench/host/nr-allreduce-perf; do
	[ -x "$build/$b" ] || skip "$build/$b is not built"
done
for t in ip tc ethtool jq; do
	command -v "$t" >/dev/null || skip "$t not installed"
done
build=$(cd "$build" && pwd)

# run_check NAME EXPECTED_ROWS RUN_ARGS...: the testbed with --check --json;
# every host must exit 0, every row must say 0 wrong, and all rows must be there.
run_check() {
	local name=$1 rows=$2 out rc=0 got wrong
	shift 2
	out=$(mktemp /tmp/nrt-e2e.XXXXXX)
	echo "== $name: tests/testbed/run $*"
	# its stderr (the testbed's log) also to E2E_STDERR when set (pipefail:
	# the pipeline's status is the testbed's)
	"$run" --build "$build" --check --json --timeout "${E2E_TIMEOUT:-240}" "$@" 2>&1 > "$out" |
		tee "${E2E_STDERR:-/dev/null}" >&2 || rc=$?
	cat "$out"
	got=$(grep -c '^{' "$out" || true)
	wrong=$(jq -s 'map(.wrong) | add // 0' "$out")
	rm -f "$out"
	[ "$rc" = 0 ] || fail "$name: testbed exit $rc (1 = wrong results, 2 = a host failed or timed out)"
	[ "$got" = "$rows" ] || fail "$name: $got result rows, expected $rows"
	[ "$wrong" = 0 ] || fail "$name: $wrong wrong elements"
	echo "== $name: $got rows, 0 wrong"
}

# boxes_summed LOG K: each of the K boxes of a striped run (its stats line in
# the testbed's LOG) summed contributions, within 10% of an equal share.
boxes_summed() {
	local log=$1 k=$2 n
	grep -E "box( [0-9]+)?: backend .* contributions summed" "$log" || true
	n=$(grep -oE "box( [0-9]+)?: backend .* ([0-9]+) contributions summed" "$log" |
		awk -v k="$k" '{ c[NR] = $(NF - 2); s += c[NR] }
			END { ok = NR == k && s > 0; for (i = 1; i <= NR; i++) if (c[i] < 0.9 * s / k) ok = 0; print ok }')
	rm -f "$log"
	[ "$n" = 1 ] || fail "the $k boxes did not each sum their share of the job"
}

# Sizes: one element, odd byte counts (not a multiple of the MTU or of a
# message), powers of two, up to 64 MiB.
case $scenario in
hosts2)
	run_check "2 hosts" 9 --hosts 2 --algo netreduce --iters 2 --warmup 1 \
		--bytes 4,8,12,1020,4100,65540,1048580,4M,64M
	pass "2 hosts, 9 sizes 4 B..64 MiB, bit-identical to the rank-ordered reference"
	;;
max)
	# reduce max: the box job registered for it (nr-allreduce-perf --op max sets
	# NR_REDUCE=max), then the ring, each checked against the max of the ranks
	run_check "max through the box" 3 --hosts 4 --algo netreduce --iters 1 --warmup 1 \
		--bytes 4,65540,4M --perf-args '--op max'
	run_check "max on the ring" 3 --hosts 4 --algo ring --iters 1 --warmup 1 \
		--bytes 4,65540,4M --perf-args '--op max'
	pass "4 hosts, reduce max through the box (a job of reduce max) and on the ring, exact"
	;;
half)
	# 16-bit elements: bf16 through the box (its job opens at the first call)
	# and on the ring, fp16 through the box; each checked bit for bit against
	# its reference (nr-allreduce-perf --check: through the box the FP32 sum in
	# rank order rounded once, on the ring rounded at every hop)
	run_check "bf16, 4 hosts" 8 --hosts 4 --algo netreduce,ring --iters 1 --warmup 1 \
		--bytes 2,4098,1048578,16M --perf-args '--dtype bf16'
	run_check "fp16, 4 hosts" 3 --hosts 4 --algo netreduce --iters 1 --warmup 0 \
		--bytes 2,65538,4M --perf-args '--dtype fp16'
	# accuracy through the box from PyTorch (tests/python/accuracy.py --check):
	# bf16 and fp16 gradients, normal and wide, the box's result the rounded-once
	# reference bit for bit and at least as exact as Gloo's ring on the same data
	/usr/bin/python3 -c 'import torch' 2>/dev/null || skip "no torch for the accuracy run"
	out=$(mktemp /tmp/nrt-e2e.XXXXXX)
	PYTHONPATH=$top/python NETREDUCE_LIB=$build/host/shared/libnetreduce.so NR_REPORT=0 \
		"$run" --build "$build" --hosts 4 --json --timeout 240 \
		--cmd "/usr/bin/python3 $top/tests/python/accuracy.py --check" > "$out" ||
		{ cat "$out"; rm -f "$out"; fail "accuracy.py through the box failed"; }
	cat "$out"
	got=$(jq -s 'map(select(.netreduce == "box" and .netreduce_exact)) | map([.dtype, .dist]) | unique | length' "$out")
	rm -f "$out"
	[ "$got" = 4 ] || fail "accuracy: $got of 4 (dtype, dist) rows through the box were the rounded-once reference"
	pass "4 hosts, bf16 through the box and on the ring, fp16 through the box: exact; through the box from PyTorch the rounded-once reference, at least as exact as Gloo's ring"
	;;
tls)
	# the box's control listener with TLS only (tests/testbed/run --tls): rank 0
	# registers the job with NR_TLS_CA (a plain-text client would be refused),
	# then every size through the box exact
	run_check "2 hosts, control over TLS" 3 --tls --hosts 2 --algo netreduce --iters 1 \
		--warmup 1 --bytes 4,65540,4M
	# a plain-text box and hosts that set neither NR_TLS_CA nor NR_TLS=off:
	# the library refuses before the token leaves, naming both
	log=$(mktemp /tmp/nrt-e2e.XXXXXX)
	if TB_PLAIN_UNSAID=1 "$run" --build "$build" --json --timeout 60 --hosts 2 --algo netreduce \
		--iters 1 --warmup 0 --bytes 4 > /dev/null 2> "$log"; then
		rm -f "$log"
		fail "hosts registered a job with a plain-text box without NR_TLS=off"
	fi
	grep -q "in plain text would read the token in clear" "$log" ||
		{ tail -n 20 "$log"; rm -f "$log"; fail "no host said why it refused the plain-text box"; }
	grep -o "set NR_TLS_CA .* NR_TLS=off[^;]*" "$log" | head -n 1
	rm -f "$log"
	pass "2 hosts, the job registered over TLS (the box refuses plain text), 3 sizes exact; a plain-text box refused by the library without NR_TLS=off"
	;;
hosts3)
	run_check "3 hosts" 6 --hosts 3 --algo netreduce --iters 1 --warmup 1 \
		--bytes 4,20,4096,262148,1M,16777220
	# nr_reduce_scatter: each rank's share read out of the box's all-reduce,
	# shares that split messages (3 ranks, 64 KiB messages), fp32 and bf16
	run_check "reduce-scatter, 3 hosts" 2 --hosts 3 --algo netreduce --iters 1 --warmup 1 \
		--bytes 12,4M --perf-args '--reduce-scatter'
	run_check "reduce-scatter bf16, 3 hosts" 2 --hosts 3 --algo netreduce --iters 1 --warmup 1 \
		--bytes 6,1M --perf-args '--reduce-scatter --dtype bf16'
	# nr_allgather: the box's job of reduce bor gives every rank's bytes back, -0.0
	# and a signalling NaN among them; shares of odd byte counts (3, 33, 21,847)
	run_check "all-gather, 3 hosts" 3 --hosts 3 --algo netreduce --iters 1 --warmup 1 \
		--bytes 9,99,65541 --perf-args '--allgather'
	pass "3 hosts, 6 sizes 4 B..16 MiB, bit-identical to the rank-ordered reference;" \
		"reduce-scatter's shares (fp32, bf16) and all-gather's bytes too"
	;;
boxes2)
	# a job striped over two boxes as rails (tests/testbed/run --boxes 2:
	# NR_BOX lists both, NR_RAILS the hosts' links to them): box k sums
	# channels k, k + 2, ...; every result the rank-ordered reference bit for
	# bit, so the bits of one box's; 2 channels (one a box), then 4
	log=$(mktemp /tmp/nrt-e2e.XXXXXX)
	E2E_STDERR=$log run_check "2 boxes, fp32" 5 --boxes 2 --hosts 4 --algo netreduce --iters 1 \
		--warmup 1 --bytes 4,4100,65540,1048580,16M
	boxes_summed "$log" 2
	run_check "2 boxes, 4 channels" 2 --boxes 2 --channels 4 --hosts 4 --algo netreduce \
		--iters 2 --warmup 0 --bytes 262148,4M
	run_check "2 boxes, bf16" 2 --boxes 2 --hosts 4 --algo netreduce --iters 1 --warmup 0 \
		--bytes 4098,4M --perf-args '--dtype bf16'
	run_check "2 boxes, fp16" 2 --boxes 2 --hosts 4 --algo netreduce --iters 1 --warmup 0 \
		--bytes 2,1048578 --perf-args '--dtype fp16'
	run_check "2 boxes, all-gather" 2 --boxes 2 --hosts 4 --algo netreduce --iters 1 --warmup 0 \
		--bytes 12,65540 --perf-args '--allgather'
	run_check "2 boxes, reduce-scatter" 1 --boxes 2 --hosts 4 --algo netreduce --iters 1 \
		--warmup 0 --bytes 4M --perf-args '--reduce-scatter'
	pass "a job over 2 boxes (rails): fp32 (2 and 4 channels), bf16, fp16, all-gather," \
		"reduce-scatter, each bit-identical to the rank-ordered reference (one box's bits)"
	;;
boxes3)
	log=$(mktemp /tmp/nrt-e2e.XXXXXX)
	E2E_STDERR=$log run_check "3 boxes" 4 --boxes 3 --hosts 3 --algo netreduce --iters 1 \
		--warmup 1 --bytes 4,20,1048580,16777220
	boxes_summed "$log" 3
	run_check "3 boxes, 6 channels" 1 --boxes 3 --channels 6 --hosts 4 --algo netreduce \
		--iters 1 --warmup 0 --bytes 16M
	pass "a job over 3 boxes (rails), 3 and 4 hosts, 3 and 6 channels: bit-identical to" \
		"the rank-ordered reference"
	;;
hosts4)
	run_check "4 hosts" 5 --hosts 4 --algo netreduce --iters 1 --warmup 0 \
		--bytes 4,1028,65536,1048580,64M
	pass "4 hosts, 5 sizes 4 B..64 MiB, bit-identical to the rank-ordered reference"
	;;
hosts8)
	run_check "8 hosts" 5 --hosts 8 --algo netreduce --iters 1 --warmup 0 \
		--bytes 4,4100,1M,16M,64M
	pass "8 hosts, 5 sizes 4 B..64 MiB, bit-identical to the rank-ordered reference"
	;;
hosts16)
	# 16 hosts through one box (4 KiB RoCE MTU, the testbed's default), then
	# the same with 1% of the frames lost on every link, both ways
	log=$(mktemp /tmp/nrt-e2e.XXXXXX)
	E2E_STDERR=$log run_check "16 hosts" 4 --hosts 16 --algo netreduce --iters 1 --warmup 0 \
		--bytes 4,4100,1048580,4M
	grep -q 'RoCE MTU 4096 (links 4200)' "$log" || { rm -f "$log"; fail "the testbed did not run at MTU 4096"; }
	rm -f "$log"
	run_check "16 hosts, 1% loss" 3 --hosts 16 --algo netreduce --loss 1 --iters 1 --warmup 0 \
		--bytes 12,262148,4M
	pass "16 hosts through one box, 4 B..4 MiB, without and with 1% loss: exact"
	;;
mtu1024)
	# the 1500-byte fabric's RoCE MTU, kept as an option: 1 KiB packets,
	# 1500-byte links, the box's ports on their default frames
	log=$(mktemp /tmp/nrt-e2e.XXXXXX)
	E2E_STDERR=$log run_check "4 hosts, RoCE MTU 1024" 6 --hosts 4 --mtu 1024 --algo netreduce,ring \
		--iters 1 --warmup 0 --bytes 4,4100,4M
	grep -q 'RoCE MTU 1024 (links 1500)' "$log" || { rm -f "$log"; fail "the testbed did not run at MTU 1024"; }
	rm -f "$log"
	pass "4 hosts at RoCE MTU 1024 (1500-byte links), through the box and on the ring: exact"
	;;
ring4)
	run_check "ring baseline, 4 hosts" 3 --hosts 4 --algo ring --iters 1 --warmup 1 \
		--bytes 4,4100,1M
	pass "ring baseline through the box's L2 switching, 4 hosts"
	;;
bridge-ring)
	# The baseline a user runs first: no box anywhere, hosts on a Linux bridge,
	# and no NR_BOX in their environment.
	run_check "ring over a plain bridge, 4 hosts" 4 --bridge --hosts 4 --algo ring \
		--iters 1 --warmup 1 --bytes 4,4100,1048580,16M
	pass "ring all-reduce over a Linux bridge with no box, 4 hosts, 4 B..16 MiB: exact"
	;;
ring-impair4)
	# The baseline under loss: no box NAKs on the plain ring's behalf, so
	# each loss its receiver's NAK does not recover waits for the sender's
	# ACK timeout (adaptive, as ConnectX: from 33.5 ms; a fixed 1.07 s one
	# made this scenario take minutes).
	run_check "plain ring, 4 hosts, 1% loss, 1% dup, 1% reorder" 4 --hosts 4 --algo ring \
		--loss 1 --dup 1 --reorder 1 --iters 2 --warmup 0 --bytes 4,4100,1048580,4M
	pass "ring baseline, 4 hosts, 1% loss, 1% duplication, 1% reordering on every link: exact"
	;;
impair4)
	run_check "4 hosts, 1% loss, 1% dup, 1% reorder" 4 --hosts 4 --algo netreduce \
		--loss 1 --dup 1 --reorder 1 --iters 2 --warmup 0 --bytes 4,4100,1048580,16M
	pass "4 hosts with 1% loss, 1% duplication, 1% reordering on every link: exact"
	;;
impair8)
	run_check "8 hosts, 1% loss, 1% dup, 1% reorder" 3 --hosts 8 --algo netreduce \
		--loss 1 --dup 1 --reorder 1 --iters 1 --warmup 0 --bytes 12,262148,4M
	pass "8 hosts with 1% loss, 1% duplication, 1% reordering on every link: exact"
	;;
sr4)
	# Selective repeat (NR_SOFT_PROFILE=sr on every host, the box job
	# registered selective; docs/short-slots.md): 1% loss both ways on every
	# link, netreduce and the plain ring exact; the hosts resent lost packets
	# alone (tx_sel_resent) for selective NAKs (the box's for a sender's gap,
	# a receiver's on the ring) and never went back N for a sequence NAK.
	log=$(mktemp /tmp/nrt-e2e-sr.XXXXXX)
	NR_SOFT_PROFILE=sr NR_SOFT_STATS=1 TB_KEEP_RUNDIR=1 E2E_STDERR=$log \
		run_check "selective repeat, 4 hosts, 1% loss" 6 --hosts 4 --algo netreduce,ring \
		--loss 1 --iters 2 --warmup 0 --bytes 4,4100,4M
	dir=$(sed -n 's/.*run dir kept: //p' "$log" | tail -n 1)
	rm -f "$log"
	[ -n "$dir" ] && [ -d "$dir" ] || fail "the testbed's run dir was not kept"
	sum() { cat "$dir"/L*.log | { grep -o "$1=[0-9]*" || true; } | cut -d= -f2 |
		awk '{ s += $1 } END { print s + 0 }'; }
	resent=$(sum tx_sel_resent) naks=$(sum rx_nak_sel) seq=$(sum rx_nak_seq)
	rm -rf "$dir"
	echo "== hosts: $resent packets resent alone, $naks selective NAKs in, $seq sequence NAKs in"
	[ "$resent" -gt 0 ] && [ "$naks" -gt 0 ] || fail "no selective resend under 1% loss"
	[ "$seq" = 0 ] || fail "$seq sequence NAKs reached selective-repeat hosts"
	pass "selective repeat, 4 hosts, 1% loss on every link, through the box and on the ring: exact, $resent packets resent alone"
	;;
prio-spray)
	# Priority classes and spraying on the two-path testbed (tests/testbed/lib.sh,
	# TB_PATHS): every call 3 tolerant pieces of classes 0..2 and an exact one,
	# at once on 4 box channels on even ranks, one after the other on odd ones;
	# every box-ring QP sprays over 2 UDP source ports, so over both paths;
	# path B slower (40 Mbit/s) and both paths losing 1%.  A bound of 1 ppm
	# leaves no message a short slot (exact sums), so --check holds every
	# piece to the rank-ordered reference.
	NR_SHORT_PPM=1 NR_PRIO_CLASSES=3 NR_SPRAY_PORTS=2 NR_SPRAY_REORDER=6 TB_PATHS=2 \
	TB_PATH_B_RATE=40 TB_IMPAIR_KIND=drop \
		run_check "classes and spraying, 4 hosts, two paths, 1% loss" 3 --hosts 4 \
		--algo netreduce --rate 100 --loss 1 --iters 2 --warmup 0 \
		--bytes 4100,1048580,4M --perf-args "--classes 3"
	pass "4 hosts, 3 classes and an exact piece at once, sprayed over two paths with 1% loss: exact"
	;;
rtl3)
	# netreduce-switch --backend rtl: the box's ports, every frame through the
	# aggregator's RTL model (the testbed gives the hosts small windows and
	# long RoCE timeouts for it); the box must say its frames went through
	# the model.
	[ -e "$build/dataplane/rtl/libnr_rtl.a" ] ||
		skip "this build has no RTL model (needs verilator; meson -Drtl=enabled)"
	log=$(mktemp /tmp/nrt-e2e.XXXXXX)
	E2E_STDERR=$log run_check "3 hosts on the RTL" 3 --backend rtl --hosts 3 --algo netreduce \
		--iters 1 --warmup 0 --bytes 4,65540,1M
	line=$(grep -o 'box: backend rtl.*' "$log" || true)
	rm -f "$log"
	echo "== $line"
	[[ $line =~ \ ([0-9]+)\ frames\ through\ the\ model,\ ([0-9]+)\ results ]] ||
		fail "the box did not report frames through the RTL model"
	[ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" -gt 0 ] ||
		fail "no frames or no results through the RTL model: $line"
	# nr_allgather on it: the aggregator has no reduce bor, the job is refused by
	# name and every rank gets NR_ERR_UNSUPPORTED (not a broken communicator)
	out=$("$run" --build "$build" --backend rtl --hosts 3 --algo netreduce --coll allgather \
		--iters 1 --warmup 0 --bytes 12 --timeout 120 2>&1) && fail "an all-gather on the RTL box passed"
	grep -q "reduce bor: the aggregator's register map has sum only" <<< "$out" ||
		{ echo "$out" | tail -n 20; fail "the RTL box's refusal of reduce bor was not named"; }
	grep -q "the box takes no job for this call" <<< "$out" ||
		{ echo "$out" | tail -n 20; fail "nr_allgather did not return NR_ERR_UNSUPPORTED"; }
	pass "3 hosts, the box on the aggregator's RTL (Verilator), 4 B..1 MiB: exact;" \
		"an all-gather refused by name (no reduce bor), NR_ERR_UNSUPPORTED"
	;;
hier4x2)
	# 4 hosts of 2 ranks (NR_LOCAL_SIZE=2, one address per rank on the
	# host's one link): both variants through the box and the flat ring of
	# all 8 ranks, bit-identical to their documented orders under loss.
	run_check "4 hosts x 2 processes, 1% loss, 1% dup, 1% reorder" 12 --hosts 4 --procs 2 \
		--algo parallel,hierarchical,ring --loss 1 --dup 1 --reorder 1 --iters 1 --warmup 0 \
		--bytes 4,4100,1048580,4M
	pass "4 hosts x 2 processes (parallel, hierarchical, flat ring) with 1% loss, dup, reorder: exact"
	;;
hier4x4)
	# (suite large, make test-large) 16 processes on 4 hosts.
	run_check "4 hosts x 4 processes, 1% loss, 1% dup, 1% reorder" 12 --hosts 4 --procs 4 \
		--algo parallel,hierarchical,ring --loss 1 --dup 1 --reorder 1 --iters 1 --warmup 0 \
		--bytes 4,4100,1048580,16M
	pass "4 hosts x 4 processes (parallel, hierarchical, flat ring) with 1% loss, dup, reorder: exact"
	;;
racks2x2)
	# Two racks of 2 hosts, a box each (docs/racks.md), then rack 1 without a
	# box (a Linux bridge: incremental deployment), under loss: the library
	# across racks and the flat ring over all 4 hosts, each exact.
	run_check "2 racks x 2 hosts, a box each, 1% loss, dup, reorder" 8 --racks 2 --hosts 2 \
		--inter-rate 500 --algo netreduce,ring --loss 1 --dup 1 --reorder 1 --iters 1 --warmup 0 \
		--bytes 4,4100,1048580,4M
	run_check "2 racks x 2 hosts, rack 1 without a box, 1% loss, dup, reorder" 4 --racks 2 \
		--hosts 2 --no-box-racks 1 --algo netreduce --loss 1 --dup 1 --reorder 1 --iters 1 \
		--warmup 0 --bytes 4,4100,1048580,4M
	pass "2 racks x 2 hosts (boxes in both racks, then in rack 0 only) with 1% loss, dup, reorder: exact"
	;;
racks2x4)
	# (suite large, make test-large) two racks of 4 hosts; then rack 0 without a box.
	run_check "2 racks x 4 hosts, a box each, 1% loss, dup, reorder" 8 --racks 2 --hosts 4 \
		--algo netreduce,ring --loss 1 --dup 1 --reorder 1 --iters 1 --warmup 0 \
		--bytes 4,4100,1048580,16M
	run_check "2 racks x 4 hosts, rack 0 without a box" 4 --racks 2 --hosts 4 --no-box-racks 0 \
		--algo netreduce --loss 1 --dup 1 --reorder 1 --iters 1 --warmup 0 \
		--bytes 4,4100,1048580,16M
	pass "2 racks x 4 hosts (boxes in both racks, then in rack 1 only) with 1% loss, dup, reorder: exact"
	;;
workers2)
	# One job on a box of 2 workers: the hosts open as many channels as the
	# box has workers (NR_CHANNELS=auto), the box runs one channel on each;
	# net_af_packet has no rte_flow, so frames that land on the other worker
	# are handed over.  Exact under loss, duplication and reordering, and
	# every frame accounted for once the box is idle.
	stats=$(mktemp /tmp/nrt-e2e-stats.XXXXXX)
	run_check "4 hosts, 2 box workers, channels auto, 1% loss, 1% dup, 1% reorder" 3 --hosts 4 \
		--box-workers 2 --channels auto --loss 1 --dup 1 --reorder 1 --iters 1 --warmup 0 \
		--bytes 4100,1048580,4M --stats-out "$stats"
	jq -c '.stats.totals | {rx, handoff_in, handoff_out, forwarded, flooded, filtered, held,
		resent, dropped, results, freed_held}' "$stats" || fail "no box stats"
	bad=$(jq -r '.stats.totals as $t |
		($t.rx + $t.handoff_in) as $in |
		($t.forwarded + $t.flooded + $t.filtered + $t.handoff_out + $t.held + $t.resent + $t.dropped) as $out |
		if $in != $out then "rx + handoff_in = \($in), accounted \($out)"
		elif $t.held != $t.results + $t.freed_held then "held \($t.held) != results \($t.results) + freed \($t.freed_held)"
		elif $t.handoff_in != $t.handoff_out then "handoff_in \($t.handoff_in) != handoff_out \($t.handoff_out)"
		else empty end' "$stats")
	workers=$(jq '[.stats.lcores[] | select(.counters.results > 0)] | length' "$stats")
	steer=$(jq -r '[.stats.ports[].steering] | unique | join(",")' "$stats")
	rm -f "$stats"
	[ -z "$bad" ] || fail "frames not accounted for: $bad"
	[ "$workers" = 2 ] || fail "$workers of 2 workers emitted results: the job's channels are not spread"
	pass "one job, 2 channels on 2 box workers (steering $steer), 1% loss/dup/reorder: exact, every frame accounted for"
	;;
late)
	# One rank enters the collective 60 s after the others (a slow data
	# loader), RNIC profile: an RNIC's 7 retries of at most 1.07 s would put
	# the early senders' QPs in error after ~8.6 s; the box's hold RNR NAKs
	# (docs/architecture.md, rule 11) keep them waiting without spending a
	# retry.  The progress timeout (host and box job) covers the 60 s.
	NR_SOFT_PROFILE=rnic run_check "4 hosts, rank 3 60 s late" 1 --hosts 4 --algo netreduce \
		--iters 1 --warmup 0 --bytes 1M --progress-timeout 120000 --perf-args '--late 3:60'
	pass "rank 3 entered the all-reduce 60 s late under the RNIC profile: completed, exact, no QP in error"
	;;
hostkill|boxrestart|boxkill2|twojobs)
	exec "$here/fault.sh" "$scenario" "$build"
	;;
prometheus)
	exec "$here/ops.sh" "$scenario" "$build"
	;;
hostile)
	/usr/bin/python3 -c "import json" 2>/dev/null || skip "no /usr/bin/python3 for the attacker's tools"
	exec "$here/hostile.sh" "$scenario" "$build"
	;;
*)
	echo "e2e.sh: unknown scenario '$scenario'" >&2
	exit 2
	;;
esac
