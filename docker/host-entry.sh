#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Host container start, then the command (default: sleep; the testbed runs
# nr-allreduce-perf with docker exec).  Soft transport (NR_TRANSPORT=soft):
#   - NR_ADDR/NR_DATA_PREFIXLEN (this host's data address; all hosts share one
#     subnet, switched by the box) on the interface whose IPv4 address starts
#     with NR_DATA_PREFIX (default 10.79., this host's own network);
#   - tx checksum offload and segmentation off there (frames cross af_packet);
#   - NR_DATA_MAC: that interface's MAC (the peers' NR_NEIGH entries name it);
#   - NR_NEIGH="IP=MAC ...": static neighbours (ARP through the box works
#     too; this removes a race at start);
#   - NR_RATE_MBIT: shape that interface's egress (htb; 0 = off).
# Verbs transport (NR_TRANSPORT=verbs): the RDMA device and its data address
# are set up outside the container (docker/rxe.sh); nothing to configure.
# Touches /run/nr-ready when done.
set -euo pipefail
if [ "${NR_TRANSPORT:-soft}" = soft ]; then
	prefix=${NR_DATA_PREFIX:-10.79.}
	addr=${NR_ADDR:?set NR_ADDR (this host data address)}
	ifc=$(ip -o -4 addr show | awk -v p="$prefix" 'index($4, p) == 1 { print $2; exit }')
	[ -n "$ifc" ] || { echo "host-entry: no interface with an address in ${prefix}x (the host's data network)" >&2; exit 2; }
	ip addr replace "$addr/${NR_DATA_PREFIXLEN:-24}" dev "$ifc"
	[ -z "${NR_DATA_MAC:-}" ] || ip link set dev "$ifc" address "$NR_DATA_MAC"
	ethtool -K "$ifc" tx off tso off gso off gro off >/dev/null 2>&1 ||
		ethtool -K "$ifc" tx off >/dev/null || { echo "host-entry: ethtool -K $ifc tx off failed" >&2; exit 2; }
	for nm in ${NR_NEIGH:-}; do
		[ "${nm%%=*}" = "$addr" ] || ip neigh replace "${nm%%=*}" lladdr "${nm#*=}" dev "$ifc" nud permanent
	done
	rate=${NR_RATE_MBIT:-0}
	if [ "$rate" != 0 ]; then
		tc qdisc replace dev "$ifc" root handle 1: htb default 1 r2q 100000
		tc class add dev "$ifc" parent 1: classid 1:1 htb rate "${rate}mbit" burst 64k cburst 64k quantum 30000
		tc qdisc add dev "$ifc" parent 1:1 handle 10: pfifo limit 10000
	fi
	echo "host-entry: rank ${NR_RANK:-?} on $ifc, $addr, soft transport, rate $rate Mbit/s"
else
	echo "host-entry: rank ${NR_RANK:-?}, $NR_TRANSPORT transport, device ${NR_DEVICE:-?}, $NR_ADDR"
fi
touch /run/nr-ready
exec "$@"
