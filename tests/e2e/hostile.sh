#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A shared box attacked from a host of the data network (called by e2e.sh,
# scenario "hostile"; docs/trust.md).  The real box in switch mode on
# net_af_packet ports, five host namespaces: hosts 0-3 run tenant "victim"'s
# job, host 4 is tenant "mallory" and a stranger without a token.  The box
# runs as an operator of a shared box would: a tenants file giving each
# tenant its addresses and MACs (victim reserves one job and its job's
# admission budget), the operator's static MAC map of the hosts' ports
# (--l2-static), a pin cap a port, /metrics on the management network with
# an admin and a box-scope token.  Before the victim's job starts and while
# it runs, host 4
#   - floods frames carrying hosts 0-3's MACs (the pre-registration flood:
#     a learning box would move them to port 4 and break the rendezvous);
#   - as a stranger, guesses tokens until its address is blocked
#     (the shared-address lockout: mallory naming herself is still served);
#   - as mallory, creates a job naming host 1's MAC (the tenant's pin of
#     another's host; refused by name), pins MACs of her own past the pin
#     cap (refused, counted), fills the box with jobs until its room less
#     victim's reservation is gone (one tenant's many jobs against
#     another's first);
#   - scrapes /metrics without a token and with the box's (no job or tenant
#     family), as the admin's scraper would with its (every family).
# The victim's job must be exact, and host 4 must see none of its frames
# (a sniffer on its link counts RoCEv2 frames).  The plain-text fallback
# has its own scenario (e2e tls: the library refuses a plain-text box).
#
# HOSTILE_UNDEFENDED=1 leaves out the static map: the flood then moves the
# hosts' MACs (run by hand: the victim fails; docs/log.md).
set -euo pipefail

scenario=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/testbed/lib.sh
. "$here/../testbed/lib.sh"

pass() { echo "PASS: e2e/$scenario: $*"; exit 0; }
fail() { echo "FAIL: e2e/$scenario: $*"; exit 1; }

py=/usr/bin/python3
tool="$here/hostile.py"
perf=$build/bench/host/nr-allreduce-perf
export TB_PMD=af_packet
export NR_TIMEOUT_MS=${NR_TIMEOUT_MS:-10000}
victims=4 att=4 pin_cap=8 mport=9470

tb_init "$build"
trap 'tb_teardown' EXIT
trap 'exit 130' INT TERM

# ---- the operator's files --------------------------------------------------------
secret() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }
vtok=$(secret) mtok=$(secret) admin_mx=$(secret) box_mx=$(secret)
mallory_ip=$(tb_data_ip "$att")
mallory_mac=$(tb_host_mac "$att")
made=()      # MACs of mallory's own beyond her host's, for her pins
for k in $(seq 0 11); do made+=("$(printf '06:11:22:33:44:%02x' "$k")"); done
vips=() vmacs=()
for ((i = 0; i < victims; i++)); do vips+=("$(tb_data_ip "$i")"); vmacs+=("$(tb_host_mac "$i")"); done
# the victim's job: 4 ranks x 1 channel x NR_POOL_MSGS 8 of 64 KiB in 4 KiB packets
vmbufs=$((victims * 8 * 16))
jq -n --arg vt "$vtok" --arg mt "$mtok" --argjson vips "$(printf '%s\n' "${vips[@]}" | jq -R . | jq -s .)" \
	--argjson vmacs "$(printf '%s\n' "${vmacs[@]}" | jq -R . | jq -s .)" \
	--argjson mmacs "$(printf '%s\n' "$mallory_mac" "${made[@]}" | jq -R . | jq -s .)" \
	--arg mip "$mallory_ip" --argjson vmb "$vmbufs" \
	'{tenants: [
	   {name: "victim", token: $vt, ips: $vips, macs: $vmacs, reserve_jobs: 1, reserve_mbufs: $vmb},
	   {name: "mallory", token: $mt, ips: [$mip], macs: $mmacs}]}' > "$TB_RUNDIR/tenants.json"
: > "$TB_RUNDIR/l2-static"
for ((i = 0; i < victims; i++)); do
	echo "${vmacs[$i]} $i   # host $i: box port $i" >> "$TB_RUNDIR/l2-static"
done
printf '%s\n' "$admin_mx" > "$TB_RUNDIR/metrics-admin"
printf '%s\n' "$box_mx" > "$TB_RUNDIR/metrics-box"
chmod 600 "$TB_RUNDIR/tenants.json" "$TB_RUNDIR/metrics-admin" "$TB_RUNDIR/metrics-box"
static="--l2-static $TB_RUNDIR/l2-static"
[ -n "${HOSTILE_UNDEFENDED:-}" ] && static=""
TB_BOX_EXTRA="--tenants $TB_RUNDIR/tenants.json $static --l2-pin-cap $pin_cap
	--metrics-listen $(tb_box_addr 0):$mport --metrics-token-file $TB_RUNDIR/metrics-admin
	--metrics-box-token-file $TB_RUNDIR/metrics-box"
export TB_BOX_EXTRA

tb_setup $((victims + 1))
tb_box_start

ns_att=$(tb_ns_host "$att")
if_att="${TB_P}d$att"
in_att() { ip netns exec "$ns_att" "$@"; }
# ctl: each argument a request (JSON), sent from host 4; the replies, a line each
ctl() { printf '%s\n' "$@" | in_att "$py" "$tool" ctl "$TB_SWITCH"; }
# a counter of the box's totals (netreducectl --json stats)
box_ctr() { jq -r --arg c "$1" 'first(.. | objects | .totals? | objects | .[$c]) // "?"' "$TB_RUNDIR/stats.json"; }

# ---- the attacks before the victim registers ------------------------------------
# (ip netns exec execs the tool: $! is its pid, for the SIGTERM that ends it)
ip netns exec "$ns_att" "$py" "$tool" sniff "$if_att" > "$TB_RUNDIR/sniff.json" &
sniff_pid=$!
tb_track "$sniff_pid"
# mallory's own MACs learned on her port (she pins only what was seen)
in_att timeout 1 "$py" "$tool" flood "$if_att" "$(IFS=,; echo "$mallory_mac,${made[*]}")" 20 >/dev/null || true
ip netns exec "$ns_att" "$py" "$tool" flood "$if_att" "$(IFS=,; echo "${vmacs[*]}")" 200 \
	> "$TB_RUNDIR/flood.json" &
flood_pid=$!
tb_track "$flood_pid"
sleep 1

# A job spec of mallory's: two ranks on her address, QPs from q, MACs a and b.
mspec() {
	jq -nc --arg ip "$mallory_ip" --argjson q "$1" --arg a "$2" --arg b "$3" \
		'{mtu: 4096, msg_size: 65536, pool_msgs: 8, conns: [
		   {src_ip: $ip, dst_ip: $ip, src_qpn: $q, dst_qpn: ($q + 1), ipsn: 0, src_mac: $a, dst_mac: $b},
		   {src_ip: $ip, dst_ip: $ip, src_qpn: ($q + 2), dst_qpn: ($q + 3), ipsn: 0, src_mac: $b, dst_mac: $a}]}'
}
mreq() { jq -nc --arg t "$mtok" --argjson s "$(mspec "$@")" '{op: "job_create", token: $t, tenant: "mallory", spec: $s}'; }

# 1. the stranger's guesses from host 4's address, then mallory naming herself
guesses=()
for k in $(seq 12); do guesses+=("$(jq -nc --arg t "wrong-guess-$k-of-the-token" '{op: "backend_info", token: $t}')"); done
last=$(ctl "${guesses[@]}" | tail -n 1)
echo "the stranger's 12th guess: $last"
grep -q 'too many failed authentications from this address' <<< "$last" ||
	fail "12 bad tokens from one address were not throttled: $last"
r=$(ctl "$(jq -nc --arg t "$mtok" '{op: "backend_info", token: $t}')")
grep -q 'too many failed authentications' <<< "$r" || fail "the blocked address served an unnamed request: $r"
r=$(ctl "$(jq -nc --arg t "$mtok" '{op: "backend_info", token: $t, tenant: "mallory"}')")
[ "$(jq -r .ok <<< "$r")" = true ] || fail "mallory naming herself behind the blocked address was refused: $r"
echo "shared address: blocked unnamed, mallory naming herself served"

# 2. mallory's job naming host 1's MAC: refused by name
r=$(ctl "$(mreq 100 "${vmacs[1]}" "$mallory_mac")")
echo "mallory's job on host 1's MAC: $r"
grep -q "${vmacs[1]} is not tenant mallory's MAC" <<< "$r" || fail "mallory's pin of host 1's MAC was not refused by name: $r"

# 3. mallory's pins past the cap: pairs of her made-up MACs
pins_ok=0 pins_refused=0 q=200
for ((k = 0; k < ${#made[@]}; k += 2)); do
	r=$(ctl "$(mreq "$q" "${made[$k]}" "${made[$((k + 1))]}")")
	q=$((q + 4))
	if [ "$(jq -r .ok <<< "$r")" = true ]; then
		pins_ok=$((pins_ok + 1))
	else
		grep -q -- "--l2-pin-cap" <<< "$r" || fail "mallory's pin job refused for another reason: $r"
		pins_refused=$((pins_refused + 1))
	fi
done
echo "mallory's pin jobs: $pins_ok pinned, $pins_refused refused at the cap ($pin_cap a port)"
[ "$pins_ok" -le $((pin_cap / 2)) ] && [ "$pins_refused" -ge 2 ] ||
	fail "the pin cap did not hold: $pins_ok pair jobs pinned, $pins_refused refused (cap $pin_cap)"

# 4. mallory's many jobs, on two MACs she pinned already, until the box refuses her
jobs_ok=0 refusal=""
while [ $jobs_ok -lt 80 ]; do
	r=$(ctl "$(mreq "$q" "${made[0]}" "${made[1]}")")
	q=$((q + 4))
	if [ "$(jq -r .ok <<< "$r")" = true ]; then
		jobs_ok=$((jobs_ok + 1))
	else
		refusal=$r
		break
	fi
done
echo "mallory's jobs: $jobs_ok more made, then: $refusal"
grep -q "reserve\|reserved" <<< "$refusal" ||
	fail "mallory's many jobs were not stopped by the victim's reservation: $refusal"

# 5. /metrics from host 4's namespace
m_none=$(in_att "$py" "$tool" http "http://$(tb_box_addr 0):$mport/metrics")
m_box=$(in_att "$py" "$tool" http "http://$(tb_box_addr 0):$mport/metrics" "$box_mx")
m_admin=$(in_att "$py" "$tool" http "http://$(tb_box_addr 0):$mport/metrics" "$admin_mx")
echo "/metrics from host 4: no token $(jq -c .status <<< "$m_none"), box token $(jq -c \
	'[.status, (.families | length)]' <<< "$m_box"), admin token $(jq -c '[.status, (.families | length)]' <<< "$m_admin")"
[ "$(jq .status <<< "$m_none")" = 401 ] || fail "/metrics answered without a token: $m_none"
[ "$(jq .status <<< "$m_box")" = 200 ] || fail "/metrics refused the box-scope token: $m_box"
[ "$(jq '[.families[] | select(test("^netreduce_(job|tenant)_"))] | length' <<< "$m_box")" = 0 ] ||
	fail "/metrics gave the box scope job or tenant families: $m_box"
[ "$(jq '[.families[] | select(test("^netreduce_job_"))] | length' <<< "$m_admin")" -gt 0 ] ||
	fail "/metrics gave the admin no job families (mallory's jobs are there): $m_admin"

# ---- the victim's job, the flood still on -----------------------------------------
export TB_HOST_ENV="NR_TOKEN=$vtok NR_TENANT=victim NR_POOL_MSGS=8 NR_MSG_SIZE=65536"
tb_launch victim 0 "$victims" "$perf" --algo netreduce -b 4 -e 4M -f 16 --iters 3 --warmup 1 \
	--check --json
tb_wait 240 "${TB_LAUNCH_PIDS[@]}"
for ((r = 0; r < victims; r++)); do
	[ "${TB_RCS[$r]}" = 0 ] || { tail -n 5 "$TB_RUNDIR/victim.h$r.log"; kill "$flood_pid" 2>/dev/null || true
		fail "the victim's rank $r exited ${TB_RCS[$r]}: $(tail -n 1 "$TB_RUNDIR/victim.h$r.log")"; }
done
rows=$(grep -c '^{' "$TB_RUNDIR/victim.out" || true)
wrong=$(grep '^{' "$TB_RUNDIR/victim.out" | jq -s 'map(.wrong) | add // 0')
cat "$TB_RUNDIR/victim.out"
kill -TERM "$flood_pid" "$sniff_pid"
wait "$flood_pid" "$sniff_pid" 2>/dev/null || true
sent=$(jq .sent "$TB_RUNDIR/flood.json" 2>/dev/null || echo "?")
roce=$(jq .roce "$TB_RUNDIR/sniff.json" 2>/dev/null || echo "?")
tb_ctl --json stats > "$TB_RUNDIR/stats.json"
pinned=$(box_ctr l2_pinned) moved=$(box_ctr l2_moved)
echo "victim: $rows rows, $wrong wrong; flood frames $sent, l2_pinned $pinned, l2_moved $moved;" \
	"RoCEv2 frames that reached host 4: $roce"
[ "$rows" = 6 ] && [ "$wrong" = 0 ] || fail "the victim's job: $rows rows (6 expected), $wrong wrong"
[ "$roce" = 0 ] || fail "$roce RoCEv2 frames reached the attacker's port"
[ "$sent" != "?" ] && [ "$sent" -gt 0 ] || fail "the flood sent nothing"
if [ -n "$static" ]; then
	[ "$moved" = 0 ] || fail "the flood moved $moved MACs past the static map"
	# every flood frame that reached the box was named (a few may be lost on the veth)
	[ "$pinned" -le "$sent" ] && [ "$pinned" -ge $((sent - sent / 20)) ] ||
		fail "l2_pinned $pinned does not count the $sent flood frames"
fi
pass "victim exact (6 sizes, 4 B..4 MiB) beside $sent flood frames of its MACs," \
	"a blocked address, a refused pin of its MAC, $pins_refused pins refused at the cap," \
	"$jobs_ok jobs of mallory's stopped at its reservation, /metrics scoped; none of its frames to host 4"
