#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Box container start: netreduce-switch in switch mode with one net_af_packet
# port per data interface, the control listener on NR_CTL_ADDR:NR_CTL_PORT.
#   data interfaces: NR_BOX_IFACES (space-separated names), else every
#   interface with an IPv4 address starting with NR_DATA_PREFIX (default
#   10.79.); waits up to NR_IFACE_WAIT seconds (default 30) for them.
#   NR_TOKEN        the hosts' shared token (written to a 0600 file)
#   NR_RATE_MBIT    shape each port's egress to this rate (htb; 0 = off)
#   NR_BOX_LCORES, NR_BOX_MEM, NR_IDLE_SLEEP_US   EAL lcores, MB, idle sleep
# Extra arguments go to netreduce-switch (after its EAL arguments' --).
set -euo pipefail
prefix=${NR_DATA_PREFIX:-10.79.}
ctl_addr=${NR_CTL_ADDR:?set NR_CTL_ADDR (the box address on the control network)}
ctl_port=${NR_CTL_PORT:-7100}
token=${NR_TOKEN:?set NR_TOKEN (the token the hosts present)}
rate=${NR_RATE_MBIT:-0}

data_ifaces() {
	if [ -n "${NR_BOX_IFACES:-}" ]; then
		local i
		for i in $NR_BOX_IFACES; do [ -e "/sys/class/net/$i" ] && echo "$i"; done
	else
		ip -o -4 addr show | awk -v p="$prefix" 'index($4, p) == 1 { print $2 }' | sort -u
	fi
}
want=$(wc -w <<< "${NR_BOX_IFACES:-}")
for ((t = 0; t < ${NR_IFACE_WAIT:-30} * 10; t++)); do
	ifaces=$(data_ifaces)
	n=$(wc -w <<< "$ifaces")
	{ [ "$want" = 0 ] && [ "$n" -gt 0 ]; } || { [ "$want" -gt 0 ] && [ "$n" = "$want" ]; } && break
	sleep 0.1
done
[ -n "$ifaces" ] || { echo "box-entry: no data interface (${NR_BOX_IFACES:-an address in ${prefix}x});" \
	"attach the host networks before the box starts" >&2; exit 2; }

# The af_packet ring for a jumbo interface ("" up to 1500: the default 2048-byte
# frames fit).  DPDK's PMD walks the ring as frames back to back, so a block
# holds whole frames with no tail (blocksz a multiple of framesz, whole pages),
# and framesz - 32 must fit the box's mbufs (4352 bytes); the kernel puts a
# frame at offset 66 of its slot: 4352-byte frames, 16 to a 17-page block,
# take an interface MTU up to 4272.
af_ring() {
	local mtu; mtu=$(cat "/sys/class/net/$1/mtu")
	[ "$mtu" -gt 1500 ] || return 0
	[ "$mtu" -le 4272 ] || { echo "box-entry: $1 has MTU $mtu; the box's ports take up to 4272" >&2; exit 2; }
	echo ",framesz=4352,blocksz=69632,framecnt=512"
}

vdevs=() i=0
for ifc in $ifaces; do
	ip link set "$ifc" up
	# Raw frames through af_packet: no checksum offload, no segmentation.
	ethtool -K "$ifc" tx off tso off gso off gro off >/dev/null 2>&1 ||
		ethtool -K "$ifc" tx off >/dev/null || { echo "box-entry: ethtool -K $ifc tx off failed" >&2; exit 2; }
	if [ "$rate" != 0 ]; then
		tc qdisc replace dev "$ifc" root handle 1: htb default 1 r2q 100000
		tc class add dev "$ifc" parent 1: classid 1:1 htb rate "${rate}mbit" burst 64k cburst 64k quantum 30000
		tc qdisc add dev "$ifc" parent 1:1 handle 10: pfifo limit 10000
	fi
	# qdisc_bypass=0: frames go through the qdisc (the shaping above).
	vdevs+=(--vdev "net_af_packet$i,iface=$ifc,qdisc_bypass=0$(af_ring "$ifc")")
	i=$((i + 1))
done
umask 077
mkdir -p /run/netreduce
printf '%s\n' "$token" > /run/netreduce/token
echo "box-entry: $i ports (${ifaces//$'\n'/ }), MTU $(cat "/sys/class/net/${ifaces%%$'\n'*}/mtu"), control $ctl_addr:$ctl_port, rate ${rate} Mbit/s"
exec netreduce-switch --no-pci --no-huge -m "${NR_BOX_MEM:-512}" --file-prefix nrbox \
	-l "${NR_BOX_LCORES:-0}" "${vdevs[@]}" -- --mode switch \
	--ctl-listen "$ctl_addr:$ctl_port" --token-file /run/netreduce/token \
	--ctl-socket /run/netreduce/netreduce.sock \
	--idle-sleep-us "${NR_IDLE_SLEEP_US:-50}" "$@"
