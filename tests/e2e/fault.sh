#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Fault scenarios on the namespace testbed (called by e2e.sh):
#   hostkill    SIGKILL one host mid-operation: the others fail with a clear
#               error within the progress timeout, the box frees the job.
#   boxrestart  SIGKILL the box mid-operation and start it again: every host
#               fails with a clear error, then a new job runs and is exact.
#   boxkill2    a job striped over two boxes (--boxes 2): SIGKILL the second
#               mid-operation: every host fails within the progress timeout
#               with an error naming that box, the first frees its part.
#   twojobs     two jobs (3 and 4 hosts: a leak between them changes the
#               sums) run at the same time on one box; the box must list both
#               as active at once, and both must be exact.
set -euo pipefail

scenario=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/testbed/lib.sh
. "$here/../testbed/lib.sh"

pass() { echo "PASS: e2e/$scenario: $*"; exit 0; }
fail() { echo "FAIL: e2e/$scenario: $*"; exit 1; }

# The progress timeout of the job (box side) and of the host library.
export NR_TIMEOUT_MS=${NR_TIMEOUT_MS:-3000}
timeout_s=$((NR_TIMEOUT_MS / 1000))
hosts=4
[ "$scenario" = twojobs ] && hosts=7
[ "$scenario" = boxkill2 ] && export TB_BOXES=2
perf=$build/bench/host/nr-allreduce-perf

tb_init "$build"
trap 'tb_teardown' EXIT
trap 'exit 130' INT TERM
tb_setup "$hosts"
tb_box_start

# Number of jobs the box lists, and how many of them are active.
box_jobs() { tb_ctl --json jobs 2>/dev/null | jq -r '.jobs | length' 2>/dev/null || echo "?"; }
box_active() { tb_ctl --json jobs 2>/dev/null | jq -r '[.jobs[] | select(.state == "active")] | length' 2>/dev/null || echo "?"; }

# Start a long all-reduce (64 MiB, many iterations) and wait until the box has
# its job and the hosts are moving data.
start_long_job() {
	tb_launch "$1" 0 "$hosts" "$perf" --algo netreduce -b 64M -e 64M --iters 200 --warmup 0 --json
	local deadline=$((SECONDS + 60))
	until [ "$(box_active)" = 1 ]; do
		[ $SECONDS -lt $deadline ] || fail "no active job on the box 60 s after the hosts started"
		for pid in "${TB_LAUNCH_PIDS[@]}"; do
			kill -0 "$pid" 2>/dev/null || {
				tail -n 5 "$TB_RUNDIR/$1".*.log
				fail "a host exited before the job was active"
			}
		done
		sleep 0.2
	done
	sleep 1.5
	echo "job active on the box: $(tb_ctl jobs | tr '\n' ' ')"
}

# The error each surviving host printed (last line of its stderr).
host_error() { tail -n 1 "$TB_RUNDIR/$1.h$2.log" 2>/dev/null; }

# expect_failed TAG N [NEEDLE]: hosts 0..N-1 of launch TAG (tb_wait's TB_RCS, bound
# $bound, since $t0) each exited 2 with an error message; NAMED: how many of
# those messages hold NEEDLE.
expect_failed() {
	local tag=$1 n=$2 needle=${3:-} r rc msg
	elapsed=$((SECONDS - t0))
	NAMED=0
	for ((r = 0; r < n; r++)); do
		rc=${TB_RCS[$r]}
		msg=$(host_error "$tag" "$r")
		echo "host $r: exit $rc after <= ${elapsed} s: $msg"
		[ "$rc" = 2 ] || fail "host $r exited $rc (expected 2, an error; 124 = still running after ${bound} s)"
		[ -n "$msg" ] || fail "host $r failed without an error message"
		[ -n "$needle" ] && [[ $msg == *"$needle"* ]] && NAMED=$((NAMED + 1))
	done
	return 0
}

# wait_box_idle WHAT: box 0 has no active job within the progress timeout (+ margin).
wait_box_idle() {
	local deadline=$((SECONDS + timeout_s + 10))
	until [ "$(box_active)" = 0 ]; do
		[ $SECONDS -lt $deadline ] || { tb_ctl jobs; fail "$1"; }
		sleep 0.2
	done
}

case $scenario in
hostkill)
	start_long_job kill
	victim=$((hosts - 1))
	{ kill -KILL "${TB_LAUNCH_PIDS[$victim]}"; wait "${TB_LAUNCH_PIDS[$victim]}"; } 2>/dev/null || true
	t0=$SECONDS
	echo "killed host $victim (pid ${TB_LAUNCH_PIDS[$victim]}); progress timeout ${NR_TIMEOUT_MS} ms"
	survivors=("${TB_LAUNCH_PIDS[@]:0:$victim}")
	bound=$((timeout_s * 3 + 10))
	tb_wait "$bound" "${survivors[@]}"
	expect_failed kill "$victim"
	# The box must free the job: nothing active within the timeout (+ margin).
	wait_box_idle "the box still has an active job"
	echo "box jobs after the failure: $(tb_ctl jobs | tr '\n' ' ')"
	pass "3 surviving hosts failed with an error within ${elapsed} s (progress timeout ${timeout_s} s); box freed the job"
	;;
boxrestart)
	start_long_job restart
	t0=$SECONDS
	old=$TB_BOX_PID
	{ kill -KILL "$TB_BOX_PID"; wait "$TB_BOX_PID"; } 2>/dev/null || true
	TB_BOX_PID=
	echo "killed the box (pid $old); restarting it"
	tb_box_start
	bound=$((timeout_s * 3 + 20))
	tb_wait "$bound" "${TB_LAUNCH_PIDS[@]}"
	expect_failed restart "$hosts"
	echo "box jobs after the restart: $(tb_ctl jobs | tr '\n' ' ')"
	# A new job on the restarted box, checked.
	tb_launch after 0 "$hosts" "$perf" --algo netreduce -b 4 -e 1M -f 16 --iters 2 --warmup 1 \
		--check --json
	tb_wait 120 "${TB_LAUNCH_PIDS[@]}"
	cat "$TB_RUNDIR/after.out"
	for ((r = 0; r < hosts; r++)); do
		[ "${TB_RCS[$r]}" = 0 ] || { tail -n 5 "$TB_RUNDIR/after.h$r.log"; fail "new job after the restart: host $r exit ${TB_RCS[$r]}"; }
	done
	rows=$(grep -c '^{' "$TB_RUNDIR/after.out" || true)
	wrong=$(grep '^{' "$TB_RUNDIR/after.out" | jq -s 'map(.wrong) | add // 0')
	[ "$rows" = 5 ] && [ "$wrong" = 0 ] || fail "new job after the restart: $rows rows, $wrong wrong"
	pass "all hosts failed with an error within ${elapsed} s of the box's death; a new job on the restarted box is exact"
	;;
boxkill2)
	start_long_job boxkill
	[ "$(tb_ctl_box 1 --json jobs | jq -r '[.jobs[] | select(.state == "active")] | length')" = 1 ] ||
		fail "the second box has no active part of the job"
	t0=$SECONDS
	victim=$(tb_switch 1)
	{ kill -KILL "${TB_BOX_PIDS[1]}"; wait "${TB_BOX_PIDS[1]}"; } 2>/dev/null || true
	echo "killed the second box ($victim, pid ${TB_BOX_PIDS[1]}); progress timeout ${NR_TIMEOUT_MS} ms"
	bound=$((timeout_s * 3 + 10))
	tb_wait "$bound" "${TB_LAUNCH_PIDS[@]}"
	# a rank's own wait names the dead box; one that stopped after a peer's
	# failure may report that peer instead
	expect_failed boxkill "$hosts" "$victim"
	named=$NAMED
	[ "$named" -ge 1 ] || fail "no host named the dead box $victim"
	wait_box_idle "the first box still has an active part"
	pass "the second of two boxes killed mid-job: all $hosts hosts failed within ${elapsed} s" \
		"(progress timeout ${timeout_s} s), $named naming $victim; the first box freed its part"
	;;
twojobs)
	# --iters 40: each job runs a few seconds, so that the box's job list, read
	# every 0.1 s, surely sees the two at once (at 3 a job took 0.1 s and one
	# fresh clone's run saw them one after the other)
	args=(--algo netreduce -b 4100 -e 16M -f 4 --iters 40 --warmup 1 --check --json)
	tb_launch jobA 0 3 "$perf" "${args[@]}"
	pids=("${TB_LAUNCH_PIDS[@]}")
	tb_launch jobB 3 4 "$perf" "${args[@]}"
	pids+=("${TB_LAUNCH_PIDS[@]}")
	both=0
	while :; do
		alive=0
		for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ "$alive" = 1 ] || break
		[ "$(box_active)" = 2 ] && { both=1; echo "box: $(tb_ctl jobs | tr '\n' ' ')"; break; }
		sleep 0.1
	done
	tb_wait 300 "${pids[@]}"
	for ((r = 0; r < 7; r++)); do
		[ "${TB_RCS[$r]}" = 0 ] || { tail -n 5 "$TB_RUNDIR"/job*.h$r.log; fail "host $r exit ${TB_RCS[$r]}"; }
	done
	cat "$TB_RUNDIR/jobA.out" "$TB_RUNDIR/jobB.out"
	for j in jobA jobB; do
		rows=$(grep -c '^{' "$TB_RUNDIR/$j.out" || true)
		wrong=$(grep '^{' "$TB_RUNDIR/$j.out" | jq -s 'map(.wrong) | add // 0')
		[ "$rows" = 6 ] && [ "$wrong" = 0 ] || fail "$j: $rows rows (expected 6), $wrong wrong"
	done
	[ "$both" = 1 ] || fail "the box never listed both jobs as active at once (not concurrent?)"
	pass "jobs of 3 and 4 hosts active on the box at the same time, both exact (4100 B..16 MiB)"
	;;
*)
	echo "fault.sh: unknown scenario $scenario" >&2
	exit 2
	;;
esac
