#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Box container start: every interface with an address in $NR_DATA_NETS
# (default 10.79.0.0/16, the per-host networks) becomes a net_af_packet port
# of netreduce-switch in switch mode; the control listener binds the address
# on the control network.  Extra arguments go to netreduce-switch.
set -euo pipefail
data_prefix=${NR_DATA_PREFIX:-10.79.}
ctl_addr=${NR_CTL_ADDR:?set NR_CTL_ADDR (the box address on the control network)}
ctl_port=${NR_CTL_PORT:-7100}
token=${NR_TOKEN:?set NR_TOKEN}

vdevs=() i=0
for ifc in $(ip -o -4 addr show | awk -v p="$data_prefix" 'index($4, p) == 1 { print $2 }' | sort -u); do
	# Raw frames through af_packet: no checksum offload, no segmentation.
	ethtool -K "$ifc" tx off tso off gso off gro off >/dev/null 2>&1 || true
	vdevs+=(--vdev "net_af_packet$i,iface=$ifc,qdisc_bypass=1")
	i=$((i + 1))
done
[ "$i" -gt 0 ] || { echo "box-entry: no interface in ${data_prefix}x; attach the host networks" >&2; exit 2; }
printf '%s\n' "$token" > /run/netreduce.token
chmod 0600 /run/netreduce.token
echo "box-entry: $i ports: ${vdevs[*]}"
exec netreduce-switch --no-pci --no-huge -m "${NR_BOX_MEM:-512}" --file-prefix nrbox \
	-l "${NR_BOX_LCORES:-0}" "${vdevs[@]}" -- --mode switch \
	--ctl-listen "$ctl_addr:$ctl_port" --token-file /run/netreduce.token \
	--ctl-socket /run/netreduce/netreduce.sock \
	--idle-sleep-us "${NR_IDLE_SLEEP_US:-50}" "$@"
