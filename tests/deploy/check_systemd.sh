#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# tests/deploy/check_systemd.sh BUILD_DIR: the unit run by systemd itself.
# A container (systemd-nspawn --volatile=yes: a tmpfs root, this machine's
# /usr read-only, a private network) boots systemd as its PID 1, with the
# box as ninja install puts it (binaries, the unit, /etc/netreduce) bound
# in, its options file set to two ring ports.  Then:
#   systemctl start: Type=notify's READY comes (the start returns), STATUS=
#   says healthy; /healthz 200, netreducectl health 0; the journal keeps
#   the box's lines with their priorities;
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
cat > "$conf" <<'EOF'
NETREDUCE_EAL_ARGS="-l 0,1 --no-huge -m 256 --no-pci --vdev net_ring0 --vdev net_ring1 --file-prefix netreduce"
NETREDUCE_ARGS="--ctl-socket /run/netreduce/netreduce.sock --metrics-listen 127.0.0.1:9470"
EOF

# systemd as the container's PID 1 (nspawn asks no service manager here
# when this machine's PID 1 is not systemd: --keep-unit, --register=no).
# DPDK's EAL reads /sys/module, which nspawn's /sys leaves out: bound in.
opts=()
[ "$(cat /proc/1/comm)" = systemd ] || opts=(--keep-unit --register=no)
systemd-nspawn --quiet "${opts[@]}" --directory=/ --volatile=yes --private-network \
	--machine="$machine" --bind-ro="$bindir:/usr/local/bin" --bind-ro="$root/units:/etc/systemd/system" \
	--bind-ro="$(dirname "$conf"):/etc/netreduce" --bind-ro=/sys/module:/sys/module \
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
health=$(inside curl -s -w ' %{http_code}' 127.0.0.1:9470/healthz)
[[ $health == "ok: 2 of 2 ports linked, 1 of 1 workers polling"*" 200" ]] || fail "GET /healthz: $health"
inside netreducectl --socket /run/netreduce/netreduce.sock health > /dev/null || fail "netreducectl health"

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
	health=$(inside curl -s -w ' %{http_code}' 127.0.0.1:9470/healthz || true)
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
	"the watchdog restarted a box whose worker was stuck, priorities in the journal, exposure $score, stopped"
