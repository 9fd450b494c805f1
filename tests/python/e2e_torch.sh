#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# PyTorch on the namespace testbed (4 hosts, the box), one scenario per meson
# test:  tests/python/e2e_torch.sh SCENARIO BUILD_DIR [TORCH]
# TORCH: 1.13 (default, Debian 12's) or 2.6 (Debian 13's, tests/python/torch-env)
#   train-box   DDP over the c10d backend "netreduce", through the box
#   train-hook  DDP over Gloo with netreduce's comm hook, through the box
#   train-ring  the backend with NR_ALGO=ring (our ring, through the box's L2)
#   train-bf16  DDP over Gloo with netreduce's bf16 hook: the float32 gradients
#               sent as bfloat16 through the box's bf16 job (FP32 sums in rank
#               order, rounded once), half the bytes
#               each: 20 steps, then every rank's parameters must be
#               bit-identical and equal a single process that applied the
#               same updates with the gradients summed in netreduce's order,
#               and every rank's counters must show all gradient bytes through
#               libnetreduce, none delegated (tests/python/check_train.py)
#   train-dlcp  the backend with netreduce's tolerant_hook and the bound on
#               tolerant gradients (NR_SHORT_PPM=150000) on links that lose 1%
#               of their frames each way: every bucket sent tolerant (with the short DSCP),
#               the box holding the bound; bit-identical ranks, and equal to
#               the reference while the box completed no packet short
#               (check_train.py --tolerant); small packets drop-eligible
#               (NR_DE_THRESH=1), some of them counted by the box (--de)
#   train-hier  the backend on 2 hosts x 2 processes (NR_LOCAL_SIZE=2,
#               NR_HIER=parallel): the hosts' sums through the box
#   train-racks the backend across 2 racks of 2 hosts (NR_RACKS=2,2), rack 0
#               with its box, rack 1 without one (incremental deployment)
#   train-torchrun  train-hier launched as users do: torchrun on each host
#               (--nnodes 2 --nproc_per_node 2), NR_LOCAL_SIZE and the local
#               rank from torchrun's LOCAL_WORLD_SIZE and LOCAL_RANK, NR_ADDR
#               listing the host's two addresses (both workers get the same
#               environment)
#               all without NR_RANK / NR_WORLD (torch gives them, as under
#               torchrun), checked against the order of hosts (racks) of 2
#               (check_train.py --groups 2)
#   train-prio  examples/train.py with tolerant DDP buckets on 100 Mbit/s links
#               serving the DSCP classes by priority, with the classes on the
#               hosts alone (NR_PRIO_BOX=0), with the box's order too, and without
#               NR_PRIO_CLASSES=3: the input side's bucket's median latency
#               must be lower with the classes (rank 0, per bucket)
#   train-fsdp  FSDP (CPU, torch 2.x) learning a teacher's 4 classes through the
#               box and on Gloo: every collective through libnetreduce, the losses
#               Gloo's within 1e-4, accuracy at least 0.6 (chance 0.25) and Gloo's
#               within 0.02, the full parameters the same bits on every rank
#   train-hsdp  HSDP (HYBRID_SHARD, a 2 x 2 DeviceMesh) through the box and on Gloo:
#               the mesh's groups are subgroups, each with a communicator of its
#               own (3 a rank: the world's, a shard group's, a replica group's,
#               on one soft transport socket), every collective through the box,
#               none delegated; losses, accuracy and parameters as train-fsdp
#   train-hsdp-quota  train-hsdp with the job's tenant allowed one box job (the
#               world group's): the box refuses the subgroups' jobs, so their
#               collectives go to Gloo, each kind counted as delegated with the
#               box's reason, the world's all-reduces through the box; losses,
#               accuracy and parameters as train-fsdp
#   train-hsdp-local  train-hsdp on 2 hosts x 2 ranks (NR_LOCAL_SIZE=2, parallel):
#               the shard groups, a host's two ranks, on Gloo (their packets never
#               leave the host), counted with that reason; the replica groups'
#               all-reduces through the box; losses, accuracy and parameters as
#               train-fsdp
#   train-fsdp-local  train-fsdp on 2 hosts x 2 ranks with NR_TORCH_LOCAL=group: its
#               all-gathers and reduce-scatters through the local-group path (a
#               host's ranks on a local Gloo group, the columns through the box),
#               none delegated; losses, accuracy and parameters as train-fsdp
#   local-group 2 hosts x 2 ranks: all-reduces through the local-group path
#               (NR_TORCH_LOCAL=group: local Gloo phases, the box for the shares) and
#               the library's shared memory (NR_LOCAL_SIZE=2, parallel), same run:
#               exact (integers), the same bits on every rank, counted, timed
#   local-group-quota  local-group's path with the tenant at 3 box jobs: one
#               column's all-gather job refused, every rank's all-gathers then
#               Gloo's (the host's ranks agree), counted with the reason; exact
#   collectives-rtl  on the RTL box (no reduce bor): the all-gathers refused once,
#               then Gloo's, counted with the reason; the all-reduce goes on
#   collectives FSDP's collectives on the backend, through the box: all-gathers of
#               any type byte for byte, reduce-scatters' shares exact, each one
#               counted through netreduce (tests/python/collectives.py)
#   fail-nobox  NR_BOX points at a closed port: every rank raises at
#               init_process_group, naming its rank, the job and the box
#   fail-kill   SIGKILL rank 2 mid-training: the others raise within the
#               progress timeout (+ slack), naming the job and rank 2 as the
#               one they waited for
#   fail-stall  rank 1 stops calling all_reduce (alive): the others raise
#               within the progress timeout, naming rank 1 as alive but absent
# Exit 0 pass, 1 fail, 77 skip (with the reason).
set -euo pipefail

scenario=${1:?usage: e2e_torch.sh SCENARIO BUILD_DIR [TORCH]}
build=${2:-${NR_BUILD:-build}}
torch=${3:-1.13}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
py=("$here/torch-env" run "$torch")

skip() { echo "SKIP: torch $torch/$scenario: $*"; exit 77; }
pass() { echo "PASS: torch $torch/$scenario: $*"; exit 0; }
fail() { echo "FAIL: torch $torch/$scenario: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces, veths, DPDK af_packet ports)"
why=$("$here/torch-env" check "$torch") || skip "$why"
"${py[@]}" -c 'import torch, sklearn' 2>/dev/null ||
	skip "torch $torch's python cannot import torch and sklearn (apt-get install python3-torch python3-sklearn)"
build=$(cd "$build" && pwd)
export NR_TORCH_BIND=$build
lib=$build/host/shared/libnetreduce.so
for f in "$build/netreduce-switch" "$lib"; do
	[ -e "$f" ] || skip "$f is not built"
done
for t in ip tc ethtool jq; do
	command -v "$t" >/dev/null || skip "$t not installed"
done

# shellcheck source=tests/testbed/lib.sh
. "$top/tests/testbed/lib.sh"

hosts=4
# A small model spread over 3 DDP buckets (1 KiB cap; the first step runs
# with DDP's initial buckets, later ones with the rebuilt ones).
# shellcheck disable=SC2054  # "64,32" is one argument
model=(--hidden 64,32 --batch 16 --lr 0.05 --bucket-cap-mb 0.001 --eval-every 10)
export NR_TIMEOUT_MS=${NR_TIMEOUT_MS:-4000}
timeout_s=$((NR_TIMEOUT_MS / 1000))
# A collective that stops raises within the progress timeout plus up to 1.5 s
# to find out who stopped (watch.py) plus slack for a loaded 2-core machine.
# init_process_group (from the START line) also rendezvouses, connects Gloo's
# mesh and tries the box for up to 3 s, all while 4 Python processes start.
bound=$((timeout_s + 4))
bound_init=$((timeout_s + 12))
# Exiting after the exception (Python and torch tearing down) is slow when the
# machine is busy; the exception's time is checked on its own.
exit_wait=$((bound + 90))
export PYTHONPATH=$top/python NETREDUCE_LIB=$lib PYTHONDONTWRITEBYTECODE=1

# The topologies: 4 ranks each; TB_* read by lib.sh.
# shellcheck disable=SC2034
# collectives_run TAG BOUND [ARGS]: tests/python/collectives.py on every host; each
# rank must exit 0 with its RESULT line (rank 0's in TAG.out, the others' in their log)
collectives_run() {
	local tag=$1 bound=$2 r line
	shift 2
	tb_launch "$tag" 0 "$hosts" "${py[@]}" "$here/collectives.py" "$@"
	tb_wait "$bound" "${TB_LAUNCH_PIDS[@]}"
	for ((r = 0; r < hosts; r++)); do
		line=$(cat "$TB_RUNDIR/$tag.out" "$TB_RUNDIR/$tag.h$r.log" 2>/dev/null | sed -n 's/^RESULT //p' |
			jq -c --argjson r "$r" 'select(.rank == $r)' 2>/dev/null || true)
		if [ "${TB_RCS[$r]}" != 0 ] || [ -z "$line" ]; then
			tail -n 20 "$TB_RUNDIR/$tag.h$r.log" 2>/dev/null || true
			fail "rank $r exited ${TB_RCS[$r]}: ${line:-no RESULT line}"
		fi
	done
}

case $scenario in
train-hier|train-torchrun|local-group|train-hsdp-local|train-fsdp-local) hosts=2 TB_PROCS=2 ;;
local-group-quota) hosts=2 TB_PROCS=2 quota=3 ;;
train-racks) TB_RACKS=2 TB_NOBOX_RACKS=1 ;;
train-dlcp) TB_LOSS=1 ;;
train-prio) TB_RATE=100 TB_PRIO=1 ;;
train-hsdp-quota) quota=1 ;;
collectives-rtl) TB_BACKEND=rtl
	# the RTL model takes about a millisecond a frame (tests/testbed/run --backend rtl)
	export NR_MSG_SIZE=16384 NR_POOL_MSGS=2 NR_TIMEOUT_MS=120000 ;;
esac
world=$((hosts * ${TB_PROCS:-1}))
tb_init "$build"
trap 'tb_teardown' EXIT
trap 'exit 130' INT TERM
tb_setup "$hosts"
if [ -n "${quota:-}" ]; then
	# the job's tenant: its hosts' addresses (each process's) and MACs, at most $quota box jobs (the
	# ranks' NR_TOKEN is its token; the box's own token file keeps the testbed's)
	TB_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	jq -n --arg t "$TB_TOKEN" --argjson q "$quota" \
		--argjson ips "$(for ((i = 0; i < hosts; i++)); do for ((p = 0; p < ${TB_PROCS:-1}; p++)); do
			tb_data_ip "$i" "$p"; done; done | jq -R . | jq -s .)" \
		--argjson macs "$(for ((i = 0; i < hosts; i++)); do tb_host_mac "$i"; echo; done | jq -R . | jq -s .)" \
		'{tenants: [{name: "hsdp", token: $t, ips: $ips, macs: $macs, max_jobs: $q}]}' \
		> "$TB_RUNDIR/tenants.json"
	chmod 600 "$TB_RUNDIR/tenants.json"
	export TB_BOX_EXTRA="--tenants $TB_RUNDIR/tenants.json"
fi
tb_box_start

# launch TAG MODE [ENV=VALUE ...] -- [train_rank.py options]
launch() {
	local tag=$1 mode=$2 envs=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	mkdir -p "$TB_RUNDIR/$tag"
	tb_launch "$tag" 0 "$hosts" env "${envs[@]}" "${py[@]}" "$here/train_rank.py" --mode "$mode" \
		--out "$TB_RUNDIR/$tag" "${model[@]}" "$@"
}

# The failure line a rank printed ("ERROR <unix time> <message>").
error_line() { grep -h '^ERROR ' "$TB_RUNDIR/$1.h$2.log" 2>/dev/null | tail -n 1; }

# fsdp_run BACKEND STEPS [--hsdp]: tests/python/fsdp_rank.py on every host, rank 0's
# RESULT line on stdout (run inside $(...): what it says goes to stderr, or the
# capture would swallow it)
fsdp_env=()   # fsdp_run's ranks' environment beyond the testbed's
fsdp_run() {
	tb_launch "$1" 0 "$hosts" env "${fsdp_env[@]}" "${py[@]}" "$here/fsdp_rank.py" "$@"
	tb_wait 300 "${TB_LAUNCH_PIDS[@]}"
	printf '%s\n' "${TB_RCS[@]}" | grep -qvx 0 &&
		{ show_logs "$1" >&2; fail "$1: a rank failed" >&2; }
	sed -n 's/^RESULT //p' "$TB_RUNDIR/$1.out"
}

# fsdp_check: after fsdp_run netreduce into $nr and gloo into $gl: every rank's full
# parameters one digest (rank 0's printed, the others' in their logs), the losses
# Gloo's within 1e-4, both learnt (accuracy at least 0.6, chance 0.25) and within 0.02
# of each other
fsdp_check() {
	local digests
	digests=$(sed -n 's/^RESULT //p' "$TB_RUNDIR/netreduce.out" "$TB_RUNDIR"/netreduce.h*.log |
		jq -r .params | sort -u)
	[ "$(sed -n 's/^RESULT //p' "$TB_RUNDIR/netreduce.out" "$TB_RUNDIR"/netreduce.h*.log | wc -l)" = "$world" ] ||
		fail "not every rank printed its RESULT line"
	[ "$(wc -l <<< "$digests")" = 1 ] && [ "$digests" != null ] ||
		fail "the ranks' full parameters differ: $(tr '\n' ' ' <<< "$digests")"
	jq -e -n --argjson a "$nr" --argjson b "$gl" '[$a.losses, $b.losses] | transpose |
		all(.[0] - .[1] | fabs < 1e-4)' >/dev/null ||
		fail "losses differ from Gloo's: $(jq -c .losses <<< "$nr") against $(jq -c .losses <<< "$gl")"
	jq -e -n --argjson a "$nr" --argjson b "$gl" '$a.accuracy >= 0.6 and $b.accuracy >= 0.6 and
		($a.accuracy - $b.accuracy | fabs) <= 0.02' >/dev/null ||
		fail "accuracy $(jq .accuracy <<< "$nr") (Gloo $(jq .accuracy <<< "$gl")): not learnt, or not Gloo's"
}

# fsdp_both STEPS [--hsdp]: fsdp_run on netreduce into $nr, then on Gloo into $gl,
# both printed; skips where torch cannot run FSDP on the CPU
fsdp_both() {
	"${py[@]}" -c 'import torch.distributed.fsdp' 2>/dev/null || skip "torch $torch cannot import torch.distributed.fsdp"
	[ "$torch" != 1.13 ] || skip "FSDP on the CPU needs torch 2.x (the torch2 suite runs it)"
	nr=$(fsdp_run netreduce "$@")
	gl=$(fsdp_run gloo "$@")
	echo "netreduce: $(jq -c '{losses, accuracy, params, netreduce, gloo, delegated}' <<< "$nr")"
	echo "gloo:      $(jq -c '{losses, accuracy, params}' <<< "$gl")"
}

# nr_calls KIND: the calls through netreduce in $nr of the kinds KIND starts
nr_calls() {
	jq --arg k "$1" '[.netreduce | to_entries[] | select(.key | startswith($k)) | .value.calls] | add // 0' <<< "$nr"
}

# nr_summary: $nr's calls through netreduce by collective, for a PASS line
nr_summary() {
	jq -c '[.netreduce | to_entries[] | "\(.key | split(" ")[0]): \(.value.calls)"]' <<< "$nr"
}

show_logs() {
	local f
	for f in "$TB_RUNDIR/$1".h*.log; do
		echo "---- ${f##*/}"
		grep -h "ERROR " "$f" | tail -n 2
		tail -n 8 "$f"
	done
}

# Every survivor in RANKS must have failed: exit 3, an ERROR line naming its
# rank, the job and PATTERN (extended regex), at most LIMIT s after T0 (a time,
# or "start": the rank's START line, just before init_process_group).
check_failed() {
	local tag=$1 when=$2 limit=$3 pattern=$4 r line t t0 msg late
	shift 4
	for r in "$@"; do
		t0=$when
		[ "$when" = start ] && t0=$(grep -h '^START ' "$TB_RUNDIR/$tag.h$r.log" | cut -d' ' -f2)
		line=$(error_line "$tag" "$r")
		[ -n "$line" ] || { show_logs "$tag"; fail "rank $r did not report an error"; }
		t=$(echo "$line" | cut -d' ' -f2)
		msg=$(echo "$line" | cut -d' ' -f3-)
		echo "rank $r: $msg"
		late=$(awk -v t="$t" -v t0="$t0" 'BEGIN { printf "%.1f", t - t0 }')
		echo "rank $r: raised ${late} s after the event (bound ${limit} s)"
		awk -v l="$late" -v b="$limit" 'BEGIN { exit !(l <= b) }' ||
			fail "rank $r raised ${late} s after the event, more than ${limit} s"
		echo "$msg" | grep -qE "netreduce job nr-[0-9a-f]+, rank $r: " ||
			fail "rank $r: the message does not name the job and the rank"
		echo "$msg" | grep -qE "$pattern" || fail "rank $r: the message does not match /$pattern/"
	done
}

# lg_run TAG ENV...: tests/python/local_group.py on 2 ranks a host; every rank's
# RESULT line, one a line
lg_run() {
	local tag=$1 r f
	shift
	TB_LAUNCH_PROCS=2 tb_launch "$tag" 0 "$hosts" env -u NR_RANK -u NR_WORLD \
		LOCAL_WORLD_SIZE=2 "$@" "${py[@]}" "$here/local_group.py"
	tb_wait 300 "${TB_LAUNCH_PIDS[@]}"
	printf '%s\n' "${TB_RCS[@]}" | grep -qvx 0 &&
		{ show_logs "$tag" >&2; fail "$tag: a rank failed" >&2; }
	for f in "$TB_RUNDIR/$tag.out" "$TB_RUNDIR/$tag".h*.log; do
		sed -n 's/^RESULT //p' "$f"
	done
}

# Wait until rank 0 logged step N (its stdout is one JSON line per step).
wait_step() {
	local tag=$1 n=$2 deadline=$((SECONDS + 120))
	until [ "$(grep -c '"step"' "$TB_RUNDIR/$tag.out" 2>/dev/null || true)" -ge "$n" ]; do
		[ $SECONDS -lt $deadline ] || { show_logs "$tag"; fail "rank 0 did not reach step $n in 120 s"; }
		for pid in "${TB_LAUNCH_PIDS[@]}"; do
			kill -0 "$pid" 2>/dev/null || { show_logs "$tag"; fail "a rank exited before step $n"; }
		done
		sleep 0.2
	done
}

case $scenario in
train-box|train-hook|train-ring|train-bf16|train-hier|train-racks|train-torchrun|train-dlcp)
	mode=${scenario#train-} envs=() groups=1 check=()
	case $mode in
	bf16)
		mode=hook-bf16 ;;
	dlcp)
		mode=box-tolerant envs=(NR_SHORT_PPM=150000 NR_DE_THRESH=1) check=(--tolerant 150000 --de) ;;
	torchrun)
		# one torchrun a host; its workers share this environment
		mode=box groups=2 run=$TB_RUNDIR/torchrun.sh
		cat > "$run" <<-'EOF'
		#!/bin/bash
		# NR_ADDR: the testbed's address of process 0 on this host (10.77.0.H),
		# then process 1's (10.77.1.H)
		export NR_ADDR=$NR_ADDR,${NR_ADDR/#10.77.0./10.77.1.}
		env=$1 ver=$2 logs=$3
		shift 3
		# torchrun.py: torchrun with the defaults Debian's torch builds cannot take
		exec "$env" run "$ver" "$(dirname "$env")/torchrun.py" --nnodes 2 --nproc_per_node 2 \
			--node_rank "$RANK" --master_addr "$MASTER_ADDR" --master_port "$MASTER_PORT" \
			--log_dir "$logs/torchrun-$RANK" "$@"
		EOF
		chmod +x "$run"
		mkdir -p "$TB_RUNDIR/$scenario"
		tb_launch "$scenario" 0 "$hosts" env -u NR_RANK -u NR_WORLD -u WORLD_SIZE NR_HIER=parallel \
			"$run" "$here/torch-env" "$torch" "$TB_RUNDIR" "$here/train_rank.py" --mode box \
			--out "$TB_RUNDIR/$scenario" "${model[@]}" --steps 20 --quiet
		tb_wait 240 "${TB_LAUNCH_PIDS[@]}"
		for ((r = 0; r < hosts; r++)); do
			[ "${TB_RCS[$r]}" = 0 ] || { show_logs "$scenario"; fail "host $r's torchrun exited ${TB_RCS[$r]} (124: timed out)"; }
		done
		;;
	hier)
		mode=box groups=2 TB_LAUNCH_PROCS=2
		envs=(-u NR_RANK -u NR_WORLD NR_LOCAL_SIZE=2 NR_HIER=parallel) ;;
	racks)
		mode=box groups=2
		# shellcheck disable=SC2054  # "2,2" is one value
		envs=(-u NR_RANK -u NR_WORLD NR_RACKS=2,2) ;;
	esac
	if [ "$scenario" != train-torchrun ]; then
		launch "$scenario" "$mode" "${envs[@]}" -- --steps 20 --quiet
		TB_LAUNCH_PROCS=1
		tb_wait 240 "${TB_LAUNCH_PIDS[@]}"
		for ((r = 0; r < world; r++)); do
			[ "${TB_RCS[$r]}" = 0 ] || { show_logs "$scenario"; fail "rank $r exited ${TB_RCS[$r]} (124: timed out)"; }
		done
	fi
	cat "$TB_RUNDIR/$scenario.out"
	out=$("${py[@]}" "$here/check_train.py" --mode "$mode" --dir "$TB_RUNDIR/$scenario" \
		--world "$world" --groups "$groups" "${check[@]}" "${model[@]}" --steps 20) ||
		{ echo "$out"; fail "parameters differ"; }
	echo "$out"
	pass "$out"
	;;
fail-nobox)
	launch nobox box NR_BOX="$TB_BOX_ADDR:1" -- --steps 20 --quiet
	tb_wait 180 "${TB_LAUNCH_PIDS[@]}"
	for ((r = 0; r < hosts; r++)); do
		[ "${TB_RCS[$r]}" = 3 ] || { show_logs nobox; fail "rank $r exited ${TB_RCS[$r]}, expected 3 (an error)"; }
	done
	check_failed nobox start "$bound_init" "init .*box at $TB_BOX_ADDR:1.*(cannot register the job with the box|rank 0 reports)" \
		0 1 2 3
	pass "every rank raised at init_process_group within ${bound_init} s, naming itself, the job and the unreachable box"
	;;
fail-kill)
	launch kill box -- --steps 100000 --eval-every 1000
	wait_step kill 15
	victim=2
	{ kill -KILL "${TB_LAUNCH_PIDS[$victim]}"; wait "${TB_LAUNCH_PIDS[$victim]}"; } 2>/dev/null || true
	t0=$(date +%s.%N)
	echo "killed rank $victim (pid ${TB_LAUNCH_PIDS[$victim]}) at step $(grep -c '"step"' "$TB_RUNDIR/kill.out");" \
		"progress timeout ${NR_TIMEOUT_MS} ms"
	tb_wait "$exit_wait" "${TB_LAUNCH_PIDS[0]}" "${TB_LAUNCH_PIDS[1]}" "${TB_LAUNCH_PIDS[3]}"
	for i in 0 1 2; do
		[ "${TB_RCS[$i]}" = 3 ] || { show_logs kill; fail "a survivor exited ${TB_RCS[$i]}, expected 3 (an error; 124: still running)"; }
	done
	check_failed kill "$t0" "$bound" "all_reduce #[0-9]+ .*waited for rank $victim \(no heartbeat for [0-9.]+ s: it died or hangs" 0 1 3
	pass "ranks 0, 1, 3 raised within ${bound} s of rank $victim's death, naming it"
	;;
train-prio)
	# Priority classes on a bottleneck: examples/train.py (3.3 MB of gradients,
	# four layers of 512, a bucket each or more: DDP's cap 0.5 MB, tolerant) on
	# 100 Mbit/s links whose queues serve
	# the classes by priority (TB_PRIO: htb bands on the DSCP, lib.sh), once
	# with NR_PRIO_CLASSES=3 (the input side's buckets in the highest class,
	# run beside the others on a channel of their own, the box emitting their
	# slots first) and once without (every bucket after the one before).  Per
	# bucket, rank 0's median latency from the hook's handing it over to its
	# result: the input side's bucket must arrive sooner with the classes.
	prio_run() {
		local tag=$1
		shift
		tb_launch "$tag" 0 "$hosts" env NR_SHORT_PPM=150000 "$@" "${py[@]}" \
			"$top/examples/train.py" --backend netreduce --ddp-hook netreduce-tolerant \
			--hidden 512,512,512,512 --bucket-cap-mb 0.5 --steps 25 --warmup 5 --eval-every 100 \
			--quiet
		tb_wait 400 "${TB_LAUNCH_PIDS[@]}"
		printf '%s\n' "${TB_RCS[@]}" | grep -qvx 0 && { show_logs "$tag"; fail "$tag: a rank failed"; }
		grep -q '"summary"' "$TB_RUNDIR/$tag.out" || fail "$tag: no summary"
		grep '"summary"' "$TB_RUNDIR/$tag.out" | jq -c '.netreduce.buckets'
	}
	without=$(prio_run prio-off)
	# the classes on the hosts alone: their channels and traffic classes, the
	# box emitting in arrival order (NR_PRIO_BOX=0): the box's order's share apart
	chans=$(prio_run prio-hosts NR_PRIO_CLASSES=3 NR_PRIO_BOX=0)
	with=$(prio_run prio-on NR_PRIO_CLASSES=3)
	# the box counts its short slots by class, and the summary says so
	grep '"summary"' "$TB_RUNDIR/prio-on.out" | jq -e '.netreduce.short_by_class | length == 3' \
		>/dev/null || fail "prio-on: the summary has no short_by_class of 3 classes"
	echo "per bucket (index: 0 the output side), median latency s, class:"
	jq -rn --argjson a "$without" --argjson h "$chans" --argjson b "$with" \
		'def ms(x): x.median_s // null | if . then .*1000 | round / 1000 else "-" end;
		$a | keys_unsorted | .[] as $k |
		"  bucket \($k): without classes \(ms($a[$k])) s, the hosts\u0027 channels alone" +
		" \(ms($h[$k])) s, with the box\u0027s order too \(ms($b[$k])) s (class \($b[$k].class // "-"))"'
	last=$(jq -rn --argjson a "$without" '$a | keys | map(tonumber) | max')
	[ "$last" -ge 2 ] || fail "only $((last + 1)) bucket(s): nothing to prioritise"
	read -r off mid on < <(jq -rn --argjson a "$without" --argjson h "$chans" --argjson b "$with" \
		--arg k "$last" '"\($a[$k].median_s) \($h[$k].median_s) \($b[$k].median_s)"')
	off=$(printf '%.3f' "$off")
	mid=$(printf '%.3f' "$mid")
	on=$(printf '%.3f' "$on")
	awk -v a="$off" -v b="$on" 'BEGIN { exit !(b < a) }' ||
		fail "the input side's bucket $last took $on s with the classes, $off s without"
	# the shares are reported, not held to a bound: one run each, on 2 shared cores
	pass "the input side's bucket $last in $on s with priority classes, $off s without" \
		"(median, rank 0): $mid s with the hosts' channels alone, so the hosts' share" \
		"$(awk -v a="$off" -v b="$mid" 'BEGIN { printf "%.3f", a - b }') s," \
		"the box's order's $(awk -v a="$mid" -v b="$on" 'BEGIN { printf "%.3f", a - b }') s"
	;;
fail-stall)
	launch stall box -- --steps 100000 --eval-every 1000 --stall-at 10 --stall-rank 1
	wait_step stall 10
	# the others enter the next collective right after step 10; rank 1 sleeps
	t0=$(date +%s.%N)
	tb_wait "$exit_wait" "${TB_LAUNCH_PIDS[0]}" "${TB_LAUNCH_PIDS[2]}" "${TB_LAUNCH_PIDS[3]}"
	for i in 0 1 2; do
		[ "${TB_RCS[$i]}" = 3 ] || { show_logs stall; fail "a rank exited ${TB_RCS[$i]}, expected 3 (an error; 124: still running)"; }
	done
	kill -0 "${TB_LAUNCH_PIDS[1]}" 2>/dev/null || fail "the stalled rank 1 exited (it should sleep)"
	check_failed stall "$t0" "$bound" "all_reduce #[0-9]+ .*waited for rank 1 \(alive, but its last collective is #[0-9]+" 0 2 3
	pass "ranks 0, 2, 3 raised within ${bound} s, naming rank 1 as alive but no longer calling all_reduce"
	;;
train-fsdp)
	# FSDP (FullyShardedDataParallel, CPU: torch 2.x) through the box, then on Gloo:
	# every collective FSDP issues reaches libnetreduce (none delegated, none
	# Gloo's but what c10d does itself), and the losses follow Gloo's within
	# float tolerance (the box sums in rank order, Gloo in its own)
	fsdp_both 40
	[ "$(jq '.delegated | length' <<< "$nr")" = 0 ] || fail "FSDP's collectives delegated: $(jq -c .delegated <<< "$nr")"
	for k in allgather reduce_scatter; do   # FSDP on the CPU gathers with the list form
		[ "$(nr_calls "$k")" -ge 40 ] ||
			fail "fewer than a $k a step through netreduce: $(jq -c .netreduce <<< "$nr")"
	done
	fsdp_check
	pass "FSDP, 40 steps on 4 ranks: its all-gathers and reduce-scatters through the box" \
		"($(nr_summary)), none delegated," \
		"losses within 1e-4 of Gloo's, accuracy $(jq .accuracy <<< "$nr") (Gloo $(jq .accuracy <<< "$gl"), chance 0.25)," \
		"full parameters bit-identical on every rank"
	;;
train-hsdp)
	fsdp_both 40 --hsdp
	[ "$(jq '.delegated | length' <<< "$nr")" = 0 ] || fail "HSDP's collectives delegated: $(jq -c .delegated <<< "$nr")"
	[ "$(jq .workers <<< "$nr")" = 3 ] ||
		fail "rank 0 has $(jq .workers <<< "$nr") communicators, expected 3 (the world's, its shard and replica groups')"
	# the shard group's all-gathers and reduce-scatters, the replica group's
	# all-reduces of the gradient shards and the world's of the losses
	for k in allgather:40 reduce_scatter:40 all_reduce:80; do
		[ "$(nr_calls "${k%:*}")" -ge "${k#*:}" ] ||
			fail "fewer than ${k#*:} ${k%:*} through netreduce: $(jq -c .netreduce <<< "$nr")"
	done
	[ "$(jq '.library.box_calls // 0' <<< "$nr")" -gt 0 ] || fail "no call reached the box: $(jq -c .library <<< "$nr")"
	fsdp_check
	pass "HSDP on a 2 x 2 mesh, 40 steps: 3 communicators a rank, every collective through the box" \
		"($(nr_summary)), none delegated;" \
		"losses within 1e-4 of Gloo's, accuracy $(jq .accuracy <<< "$nr") (Gloo $(jq .accuracy <<< "$gl"), chance 0.25)," \
		"full parameters bit-identical on every rank"
	;;
train-hsdp-local)
	# 2 hosts of 2 ranks (the library's parallel layout for the world group): the
	# mesh's shard groups are a host's two ranks (their packets never leave the
	# host: Gloo's, counted with that reason), its replica groups one rank of each
	# host (a flat communicator each, through the box)
	fsdp_env=(-u NR_RANK -u NR_WORLD NR_LOCAL_SIZE=2 NR_HIER=parallel)
	export TB_LAUNCH_PROCS=2
	fsdp_both 40 --hsdp
	[ "$(jq .workers <<< "$nr")" = 2 ] ||
		fail "rank 0 has $(jq .workers <<< "$nr") communicators, expected 2 (the world's and its replica group's)"
	for k in allgather reduce_scatter; do
		jq -e --arg k "$k" '[.delegated | to_entries[] | select(.key | startswith($k)) |
			select(.value.why | test("share host 0: packets between a host.s ranks never leave it")) |
			.value.calls] | add // 0 > 0' <<< "$nr" >/dev/null ||
			fail "no $k delegated with the shared host's reason: $(jq -c .delegated <<< "$nr")"
	done
	# the replica group's all-reduces of the gradient shards and the world's of the losses
	[ "$(nr_calls all_reduce)" -ge 80 ] ||
		fail "fewer than 80 all-reduces through the box: $(jq -c .netreduce <<< "$nr")"
	fsdp_check
	pass "HSDP on 2 hosts x 2 ranks (a 2 x 2 mesh), 40 steps: the shard groups (a host's ranks) on" \
		"Gloo, counted with that reason; the replica groups' and the world's all-reduces through the box" \
		"($(nr_summary));" \
		"losses, accuracy $(jq .accuracy <<< "$nr") and parameters as Gloo's"
	;;
train-fsdp-local)
	# 2 hosts of 2 ranks, NR_TORCH_LOCAL=group: FSDP's reduce-scatters and
	# all-gathers of the world group composed of a local phase on the host's
	# Gloo group and each local rank's column through the box
	fsdp_env=(-u NR_RANK -u NR_WORLD LOCAL_WORLD_SIZE=2 NR_TORCH_LOCAL=group)
	export TB_LAUNCH_PROCS=2
	fsdp_both 40
	[ "$(jq '.delegated | length' <<< "$nr")" = 0 ] || fail "FSDP's collectives delegated: $(jq -c .delegated <<< "$nr")"
	for k in allgather reduce_scatter; do
		[ "$(jq --arg k "$k" '[.netreduce | to_entries[] | select(.key | startswith($k) and
			endswith("local group")) | .value.calls] | add // 0' <<< "$nr")" -ge 40 ] ||
			fail "fewer than a $k a step through the local-group path: $(jq -c .netreduce <<< "$nr")"
	done
	fsdp_check
	pass "FSDP on 2 hosts x 2 ranks (NR_TORCH_LOCAL=group), 40 steps: its all-gathers and" \
		"reduce-scatters through the local group and the box's columns ($(nr_summary)), none" \
		"delegated; losses, accuracy $(jq .accuracy <<< "$nr") and parameters as Gloo's"
	;;
train-hsdp-quota)
	fsdp_both 40 --hsdp
	[ "$(jq .workers <<< "$nr")" = 1 ] ||
		fail "rank 0 has $(jq .workers <<< "$nr") communicators, expected 1 (the world's: the box took no other job)"
	for k in allgather reduce_scatter all_reduce; do
		jq -e --arg k "$k" '[.delegated | to_entries[] | select(.key | startswith($k)) |
			select(.value.why | test("box took no job for this subgroup.*quota")) | .value.calls] | add // 0 > 0' \
			<<< "$nr" >/dev/null || fail "no $k delegated with the box's refusal: $(jq -c .delegated <<< "$nr")"
	done
	[ "$(nr_calls all_reduce)" -ge 40 ] ||
		fail "the world group's all-reduces (a loss a step) did not go through the box: $(jq -c .netreduce <<< "$nr")"
	fsdp_check
	pass "HSDP, its tenant at a quota of 1 job: the subgroups' collectives on Gloo, counted as" \
		"delegated with the box's refusal ($(jq -r '[.delegated[]][0].why' <<< "$nr"));" \
		"the world group's all-reduces through the box; losses, accuracy $(jq .accuracy <<< "$nr") and" \
		"parameters as Gloo's"
	;;
local-group)
	grp=$(lg_run lgroup NR_TORCH_LOCAL=group)
	lib=$(lg_run llib NR_TORCH_LOCAL=library NR_LOCAL_SIZE=2 NR_HIER=parallel)
	[ "$(wc -l <<< "$grp")" = "$world" ] && [ "$(wc -l <<< "$lib")" = "$world" ] ||
		fail "RESULT lines: $(wc -l <<< "$grp") and $(wc -l <<< "$lib") of $world"
	jq -e -s 'all(.checks | to_entries | all(.value))' <<< "$grp" >/dev/null ||
		fail "the local-group path: a sum is not exact: $(jq -c -s 'map(.checks)' <<< "$grp")"
	jq -e -s 'all(.checks | to_entries | all((.key | startswith("bf16")) or .value))' <<< "$lib" >/dev/null ||
		fail "the library's path: a sum is not exact: $(jq -c -s 'map(.checks)' <<< "$lib")"
	[ "$(jq -s 'map(.digest) | unique | length' <<< "$grp")" = 1 ] ||
		fail "the local-group path: the ranks' results differ: $(jq -c -s 'map(.digest)' <<< "$grp")"
	# counted: each all-reduce through the local group, its shares through the
	# columns' communicators (the library), the local phases on Gloo
	calls=$(jq -s 'map([.netreduce | to_entries[] | select(.key | endswith("local group")) | .value.calls] | add // 0) | min' <<< "$grp")
	cols=$(jq -s 'map([.netreduce | to_entries[] | select(.key | endswith("column")) | .value.calls] | add // 0) | min' <<< "$grp")
	# (Gloo of torch 1.13 has no reduce-scatter: a local all-reduce instead)
	lrs=$(jq -s 'map((.gloo["local reduce_scatter"] // 0) + (.gloo["local all_reduce"] // 0)) | min' <<< "$grp")
	boxc=$(jq -s 'map(.library.box_calls // 0) | min' <<< "$grp")
	[ "$calls" -ge 13 ] && [ "$cols" -ge "$calls" ] && [ "$lrs" -ge "$calls" ] && [ "$boxc" -ge "$cols" ] ||
		fail "counts: $calls all-reduces through the local group, $cols column shares, $lrs" \
			"local reduce-scatters, $boxc library box calls (a rank's least)"
	# FSDP's collectives: 3 reduce-scatters and 2 all-gathers a rank through the
	# local group and the columns, nothing delegated to Gloo
	rsg=$(jq -s 'map([.netreduce | to_entries[] | select(.key | startswith("reduce_scatter") and endswith("local group")) | .value.calls] | add // 0) | min' <<< "$grp")
	agg=$(jq -s 'map([.netreduce | to_entries[] | select(.key | startswith("allgather") and endswith("float32 cpu contiguous local group")) | .value.calls] | add // 0) | min' <<< "$grp")
	[ "$rsg" = 3 ] && [ "$agg" = 2 ] ||
		fail "the local-group path: $rsg reduce-scatters and $agg all-gathers through it (a" \
			"rank's least), expected 3 and 2"
	[ "$(jq -s 'map(.delegated | length) | add' <<< "$grp")" = 0 ] ||
		fail "the local-group path delegated to Gloo: $(jq -c -s 'map(.delegated)' <<< "$grp")"
	echo "median ms of rank 0, local group (NR_TORCH_LOCAL=group) vs the library's shared memory (parallel):"
	jq -r -n --argjson g "$(head -n 1 <<< "$grp")" --argjson l "$(head -n 1 <<< "$lib")" \
		'$g.ms | to_entries[] | "  \(.key): \(.value * 100 | round / 100) vs \(if $l.ms[.key] then ($l.ms[.key] * 100 | round / 100) else "- (the library sums float32 only)" end)"'
	pass "2 hosts x 2 ranks: the local-group path exact (fp32, odd, AVG, bf16 rounded once)," \
		"the same bits on every rank, $calls all-reduces a rank through it ($cols column shares" \
		"through the box, $lrs local phases on Gloo), $rsg reduce-scatters and $agg all-gathers" \
		"(-0.0 and NaN payloads kept), none delegated; timed beside the library's path"
	;;
local-group-quota)
	# the tenant at 3 box jobs: both columns' all-reduce jobs, and the all-gather
	# job of whichever column asks first; the other's is refused.  The host's ranks
	# agree at the first all-gather: every rank's all-gathers go to Gloo, counted
	# with the reason, none waits for a rank that went elsewhere
	grp=$(lg_run lquota NR_TORCH_LOCAL=group)
	[ "$(wc -l <<< "$grp")" = "$world" ] || fail "RESULT lines: $(wc -l <<< "$grp") of $world"
	jq -c -s 'map({rank, delegated})[]' <<< "$grp"
	jq -e -s 'all(.checks | to_entries | all(.value))' <<< "$grp" >/dev/null ||
		fail "not exact: $(jq -c -s 'map(.checks)' <<< "$grp")"
	agg=$(jq -s 'map([.netreduce | to_entries[] | select(.key | startswith("allgather") and endswith("local group")) | .value.calls] | add // 0) | max' <<< "$grp")
	off=$(jq -s 'map([.delegated | to_entries[] | select(.key | startswith("allgather") and endswith("float32 cpu contiguous")) | select(.value.why | test("all-gather job")) | .value.calls] | add // 0) | min' <<< "$grp")
	quota=$(jq -s 'map([.delegated[] | select(.why | test("quota"))] | length) | add' <<< "$grp")
	[ "$agg" = 0 ] && [ "$off" = 2 ] && [ "$quota" -ge 2 ] ||
		fail "all-gathers: $agg through the local group (a rank's most; expected 0), $off" \
			"delegated with the box's refusal (a rank's least; expected 2), $quota ranks" \
			"naming the quota: $(jq -c -s 'map(.delegated)' <<< "$grp")"
	pass "2 hosts x 2 ranks, the tenant at 3 jobs: one column's all-gather job refused, every" \
		"rank's all-gathers on Gloo (exact, counted with the reason), the all-reduces and" \
		"reduce-scatters through the box, exact"
	;;
collectives-rtl)
	# a box whose aggregator has no reduce bor (the RTL's): the first all-gather
	# finds its job refused, the all-gathers go to Gloo counted with the box's
	# reason, the communicator goes on (tests/python/collectives.py --refused)
	[ -e "$build/dataplane/rtl/libnr_rtl.a" ] ||
		skip "this build has no RTL model (needs verilator; meson -Drtl=enabled)"
	collectives_run collr 300 --refused
	sed -n 's/^RESULT //p' "$TB_RUNDIR/collr.out" | jq -c '.delegated'
	pass "the RTL box refused the all-gather's job: 2 all-gathers a rank through Gloo, counted" \
		"with its reason; an all-reduce after them through the box, exact"
	;;
collectives)
	# FSDP's collectives through the box (tests/python/collectives.py): all-gathers
	# of any type byte for byte, reduce-scatters' shares exact, each one counted
	# through netreduce and the library
	collectives_run coll 240
	sed -n 's/^RESULT //p' "$TB_RUNDIR/coll.out" | jq -c '{rank, issued, box_calls, netreduce}'
	pass "4 ranks: all_gather_into_tensor (fp32 with -0.0, sNaN, Inf; bf16; uint8) and all_gather" \
		"byte for byte, reduce_scatter_tensor (fp32 SUM, AVG; bf16) exact, all through the box"
	;;
*)
	echo "e2e_torch.sh: unknown scenario $scenario" >&2
	exit 2
	;;
esac
