#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tests/deploy/check_systemd.sh BUILD_DIR: the unit run by systemd itself.
# A container (systemd-nspawn --volatile=yes: a tmpfs root, this machine's
# /usr read-only, a private network) boots systemd as its PID 1, with the
# box as ninja install puts it (binaries, the unit, its sysusers.d file,
# /etc/netreduce) bound in, its options file set to two ring ports and a
# metrics token.  The container's systemd-sysusers makes the user netreduce
# at boot, of the installed file; the token is made as deploy/README.md
# says (mode 600, chown netreduce).  Then:
#   systemctl start: Type=notify's READY comes (the start returns), STATUS=
#   says healthy; /healthz 200 with the token (the box, as netreduce, read
#   it), 401 without; netreducectl health 0; the journal keeps the box's
#   lines with their priorities;
#   the service user: the box's uids and gids all netreduce's; its
#   permitted, effective, inheritable, ambient and bounding capabilities
#   all the unit's CapabilityBoundingSet (systemd's reading of it), no
#   CAP_SYS_ADMIN; the admin socket netreduce's, 0600, in a 0700 folder:
#   root's netreducectl is answered, a process of group netreduce is not;
#   DPDK's runtime files in /run/dpdk/netreduce (not the service's private
#   /tmp), where dpdk-telemetry.py -f netreduce, run by root, finds the box;
#   /dev/hugepages mounted gid=netreduce,mode=1770 (the drop-in of
#   deploy/README.md); with 2 MB hugepages free on this machine (128 or
#   more), the box takes them from there, its files netreduce's; else it
#   runs --no-huge, and says the hugepages went unchecked;
#   the worker's thread stopped (ptrace, that thread alone): STATUS= and
#   the journal say which worker is stuck, the watchdog starves, systemd
#   kills the box ("Watchdog timeout") and restarts it, healthy again;
#   systemctl stop: clean.
# Where this machine's PID 1 is not systemd (a container's), this is how
# the unit gets to run under systemd at all.  Exit 0 pass, 1 fail, 77 skip
# (no systemd-nspawn: the Debian package systemd-container; not root).
set -euo pipefail

build=$(cd "${1:?usage: check_systemd.sh BUILD_DIR}" && pwd)
fail() { echo "FAIL: deploy/systemd: $*"; [ -n "${P:-}" ] && inside journalctl -u netreduce-switch --no-pager -n 30 -o short-precise; exit 1; }
skip() { echo "SKIP: deploy/systemd: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (a container, ptrace)"
command -v systemd-nspawn > /dev/null || skip "systemd-nspawn not installed (Debian package systemd-container)"
root=$(mktemp -d /tmp/nr-systemd.XXXXXX)
machine=nrsd$$
NSPAWN=
P=
cleanup() {
	set +e
	[ -n "${TRACER:-}" ] && kill "$TRACER" 2> /dev/null
	[ -n "$NSPAWN" ] && kill "$NSPAWN" 2> /dev/null && sleep 2
	rmdir "/run/systemd/nspawn/propagate/$machine" 2> /dev/null
	rm -rf "$root"
}
trap cleanup EXIT

DESTDIR=$root/dest meson install -C "$build" --no-rebuild --quiet > "$root/install.log" 2>&1 ||
	{ cat "$root/install.log"; fail "ninja install into a DESTDIR failed"; }
unit=$(find "$root/dest" -name netreduce-switch.service -path '*systemd/system*' | head -1)
conf=$(find "$root/dest" -name netreduce-switch.conf | head -1)
bindir=$(dirname "$(find "$root/dest" -name netreduce-switch -type f | head -1)")
[ -n "$unit" ] && [ -n "$conf" ] && [ -n "$bindir" ] || fail "ninja install put no unit, options file or binary"
mkdir "$root/units"
cp "$unit" "$root/units/"
sysusers=$(find "$root/dest" -name netreduce.conf -path '*/lib/sysusers.d/*' | head -1)
[ -n "$sysusers" ] || fail "ninja install put no sysusers.d/netreduce.conf"
# hugepages: the machine's, through the container's /dev/hugepages mounted
# as deploy/README.md says (a drop-in of dev-hugepages.mount)
huge="--no-huge -m 256"
free2m=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages 2> /dev/null || echo 0)
[ "$free2m" -ge 128 ] && huge="-m 256"
mkdir "$root/units/dev-hugepages.mount.d"
cat > "$root/units/dev-hugepages.mount.d/netreduce.conf" <<'EOF'
[Unit]
After=systemd-sysusers.service
[Mount]
Options=nosuid,nodev,gid=netreduce,mode=1770
EOF
cat > "$conf" <<EOF
NETREDUCE_EAL_ARGS="-l 0,1 $huge --no-pci --vdev net_ring0 --vdev net_ring1 --file-prefix netreduce"
NETREDUCE_ARGS="--ctl-socket /run/netreduce/netreduce.sock --metrics-listen 127.0.0.1:9470 --metrics-token-file /etc/netreduce/metrics-token"
EOF

# systemd as the container's PID 1 (nspawn asks no service manager here
# when this machine's PID 1 is not systemd: --keep-unit, --register=no).
# DPDK's EAL reads /sys/module, which nspawn's /sys leaves out: bound in.
# The container's bounding set lacks CAP_IPC_LOCK, which the unit gives the
# box: added, so that the box holds exactly the unit's set.
opts=()
[ "$(cat /proc/1/comm)" = systemd ] || opts=(--keep-unit --register=no)
systemd-nspawn --quiet "${opts[@]}" --directory=/ --volatile=yes --private-network \
	--capability=CAP_IPC_LOCK \
	--machine="$machine" --bind-ro="$bindir:/usr/local/bin" --bind-ro="$root/units:/etc/systemd/system" \
	--bind-ro="$sysusers:/etc/sysusers.d/netreduce.conf" \
	--bind="$(dirname "$conf"):/etc/netreduce" --bind-ro=/sys/module:/sys/module \
	-b systemd.firstboot=off < /dev/null > "$root/console.log" 2>&1 &
NSPAWN=$!
inside() { nsenter -t "$P" -a "$@"; }
for _ in $(seq 120); do
	P=$(pgrep -f '^/usr/lib/systemd/systemd systemd.firstboot=off' | head -1 || true)
	if [ -n "$P" ]; then
		state=$(inside systemctl is-system-running 2> /dev/null || true)
		case $state in running|degraded) break ;; esac
	fi
	kill -0 "$NSPAWN" 2> /dev/null || { tail -n 20 "$root/console.log"; skip "systemd-nspawn cannot run a container here (console above)"; }
	sleep 0.5
done
case ${state:-} in
running|degraded) ;;
*) tail -n 20 "$root/console.log"; fail "the container's systemd did not come up (state ${state:-none})" ;;
esac
echo "systemd $(inside systemctl --version | head -n 1 | awk '{print $2}') is PID 1 of container $machine ($state)"

# the user, made at boot by the container's systemd-sysusers of the
# installed file; /etc/netreduce root:netreduce 0750, as ninja install
# leaves it where the group exists; the token as deploy/README.md says
nr_uid=$(inside id -u netreduce) || fail "systemd-sysusers made no user netreduce of ${sysusers#"$root/dest"}"
nr_gid=$(inside id -g netreduce)
inside chgrp netreduce /etc/netreduce
inside sh -c 'umask 077; head -c 24 /dev/urandom | base64 > /etc/netreduce/metrics-token
	chown netreduce:netreduce /etc/netreduce/metrics-token'
token=$(inside cat /etc/netreduce/metrics-token)
hz() { inside curl -s -H "Authorization: Bearer $token" -w ' %{http_code}' 127.0.0.1:9470/healthz; }
hp=$(inside stat -f -c %T /dev/hugepages)/$(inside stat -c '%G %a' /dev/hugepages)
[ "$hp" = "hugetlbfs/netreduce 1770" ] || fail "/dev/hugepages: $hp, not hugetlbfs/netreduce 1770 (the drop-in)"
echo "the user netreduce (uid $nr_uid), made by systemd-sysusers; /dev/hugepages: $hp"

inside systemctl start netreduce-switch || fail "systemctl start netreduce-switch failed"
inside systemctl is-active netreduce-switch > /dev/null || fail "not active after start"
status=$(inside systemctl show netreduce-switch -p StatusText --value)
for _ in $(seq 30); do
	[[ $status == healthy* ]] && break
	sleep 0.2
	status=$(inside systemctl show netreduce-switch -p StatusText --value)
done
echo "started (Type=notify): STATUS=$status"
[[ $status == "healthy: 2 ports linked, 1 workers polling" ]] || fail "STATUS: $status"
health=$(hz)
[[ $health == "ok: 2 of 2 ports linked, 1 of 1 workers polling"*" 200" ]] || fail "GET /healthz: $health"
health=$(inside curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:9470/healthz)
[ "$health" = 401 ] || fail "GET /healthz without the token: $health, expected 401"
inside netreducectl --socket /run/netreduce/netreduce.sock health > /dev/null || fail "netreducectl health"

# the service user: uids, gids, capabilities of the running box
pid=$(inside systemctl show netreduce-switch -p MainPID --value)
st=$(inside cat "/proc/$pid/status")
for f in Uid Gid; do
	want=$nr_uid
	[ $f = Gid ] && want=$nr_gid
	ids=$(sed -n "s/^$f:[[:space:]]*//p" <<< "$st" | tr -s '[:space:]' ' ' | sed 's/ $//')
	[ "$ids" = "$want $want $want $want" ] ||
		fail "the box's $f: $ids (real, effective, saved, fs); expected netreduce's, $want"
done
capnames() {
	/usr/bin/python3 -c '
import sys
n = ("chown dac_override dac_read_search fowner fsetid kill setgid setuid setpcap "
     "linux_immutable net_bind_service net_broadcast net_admin net_raw ipc_lock ipc_owner "
     "sys_module sys_rawio sys_chroot sys_ptrace sys_pacct sys_admin sys_boot sys_nice "
     "sys_resource sys_time sys_tty_config mknod lease audit_write audit_control setfcap "
     "mac_override mac_admin syslog wake_alarm block_suspend audit_read perfmon bpf "
     "checkpoint_restore").split()
m = int(sys.argv[1], 16)
print(" ".join(sorted("cap_" + c for i, c in enumerate(n) if m >> i & 1)))' "$1"
}
unitcaps=$(inside systemctl show netreduce-switch -p CapabilityBoundingSet --value |
	tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')
[ -n "$unitcaps" ] || fail "systemd reads no CapabilityBoundingSet= in the unit"
for f in CapPrm CapEff CapInh CapAmb CapBnd; do
	got=$(capnames "$(sed -n "s/^$f:[[:space:]]*//p" <<< "$st")")
	[ "$got" = "$unitcaps" ] || fail "the box's $f: ${got:-none}; expected the unit's $unitcaps"
done
[[ " $unitcaps " != *" cap_sys_admin "* ]] || fail "the box holds cap_sys_admin"
echo "the box runs as netreduce (uid $nr_uid, gid $nr_gid) with $unitcaps:" \
	"permitted, effective, ambient, bounding"
sock=$(inside stat -c '%U %a' /run/netreduce /run/netreduce/netreduce.sock | tr '\n' ' ')
[ "$sock" = "netreduce 700 netreduce 600 " ] || fail "/run/netreduce, its socket: $sock"
out=$(inside setpriv --reuid=nobody --regid=netreduce --clear-groups \
	netreducectl --socket /run/netreduce/netreduce.sock health 2>&1) &&
	fail "a process of group netreduce (not root, not the user) was answered on the admin socket"
[[ $out == *"Permission denied"* ]] || fail "group netreduce on the admin socket: $out"
echo "admin socket: netreduce's, 0600; root is answered, group netreduce is not (Permission denied)"
[ "$(inside stat -c %U /run/dpdk/netreduce/dpdk_telemetry.v2)" = netreduce ] ||
	fail "no telemetry socket of netreduce's in /run/dpdk/netreduce: DPDK put its runtime files elsewhere"
tel=$(echo /eal/params | inside dpdk-telemetry.py -f netreduce 2>&1 || true)
[[ $tel == *'{"/eal/params": ["/usr/local/bin/netreduce-switch", '* ]] ||
	fail "dpdk-telemetry.py -f netreduce did not reach the box: $tel"
echo "DPDK's runtime files in /run/dpdk/netreduce, netreduce's; dpdk-telemetry.py -f netreduce reaches the box"
if [ "$free2m" -ge 128 ]; then
	hp=$(inside sh -c 'stat -c %U /dev/hugepages/netreducemap_* | sort -u')
	[ "$hp" = netreduce ] || fail "the box's hugepage files in /dev/hugepages: owner ${hp:-(none: no file)}"
	huge="hugepages in /dev/hugepages (gid=netreduce,mode=1770), the box's files netreduce's"
else
	huge="--no-huge: fewer than 128 2 MB hugepages free here ($free2m), the box's hugepage files unchecked"
fi
echo "memory: $huge"

# the worker stuck: systemd's watchdog restarts the box
sw=$(pgrep -f 'file-prefix netreduce -- --ctl-socket /run/netreduce' | head -1)
tid=
for t in /proc/"$sw"/task/*; do [ "$(cat "$t/comm")" = rte-worker-1 ] && tid=${t##*/}; done
[ -n "$tid" ] || fail "no worker thread rte-worker-1 in the box (pid $sw)"
/usr/bin/python3 - "$tid" > "$root/tracer.log" 2>&1 <<'EOF' &
import ctypes, os, sys, time
tid = int(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
if libc.ptrace(0x4206, tid, None, None) or libc.ptrace(0x4207, tid, None, None):
    sys.exit('ptrace: ' + os.strerror(ctypes.get_errno()))
os.waitpid(tid, 0x40000000)
print('stopped', flush=True)
time.sleep(14)          # past WatchdogSec (10 s) and --stall-ms
libc.ptrace(17, tid, None, None)
EOF
TRACER=$!
t0=$SECONDS
wait "$TRACER" || { cat "$root/tracer.log"; fail "could not stop the worker thread"; }
TRACER=
for _ in $(seq 60); do
	[ "$(inside systemctl show netreduce-switch -p NRestarts --value)" -ge 1 ] &&
		inside systemctl is-active netreduce-switch > /dev/null && break
	sleep 0.5
done
log=$(inside journalctl -u netreduce-switch --no-pager -o cat)
grep -q 'worker 0 (lcore 1): stuck' <<< "$log" || fail "the journal does not name the stuck worker"
grep -q 'Watchdog timeout' <<< "$log" || fail "systemd saw no watchdog timeout"
[ "$(inside systemctl show netreduce-switch -p NRestarts --value)" = 1 ] || fail "no restart after the watchdog"
for _ in $(seq 30); do
	health=$(hz || true)
	[[ $health == *" 200" ]] && break
	sleep 0.3
done
[[ $health == "ok: "*" 200" ]] || fail "GET /healthz after the restart: $health"
echo "worker stopped: the journal named it, systemd's watchdog killed the box, restarted it" \
	"($((SECONDS - t0)) s), healthy again"
prio=$(inside journalctl -u netreduce-switch -o json --no-pager | /usr/bin/python3 -c '
import collections, json, sys
c = collections.Counter(json.loads(l).get("PRIORITY") for l in sys.stdin
                        if json.loads(l).get("_COMM", "").startswith("netreduce"))
print(" ".join("%s:%d" % kv for kv in sorted(c.items())))')
echo "the box's journal lines by priority: $prio"
[[ $prio == *"2:"* && $prio == *"6:"* ]] || fail "the journal kept no priorities (2 crit, 6 info): $prio"
score=$(inside systemd-analyze security netreduce-switch --no-pager 2>&1 |
	sed -n 's/.*Overall exposure level for netreduce-switch.service: \([0-9.]*\).*/\1/p')
inside systemctl stop netreduce-switch
inside systemctl is-active netreduce-switch > /dev/null && fail "still active after systemctl stop"
echo "PASS: deploy/systemd: under systemd (PID 1 of a container): Type=notify start, STATUS healthy," \
	"as netreduce with the unit's capabilities ambient, the watchdog restarted a box whose worker" \
	"was stuck, priorities in the journal, exposure $score, stopped; $huge"
