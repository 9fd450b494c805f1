#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Host container start: put the data address $NR_ADDR (one /16 shared by all
# hosts, switched by the box) on the interface of this host's own network,
# turn off checksum offload there, create the soft-RoCE device on it
# (rdma link add rxe0 type rxe netdev IF; needs the rdma_rxe module on the
# host kernel), then run the command (default: sleep; use
#   docker compose exec hostN nr-allreduce-perf ...).
set -euo pipefail
data_prefix=${NR_DATA_PREFIX:-10.79.}
addr=${NR_ADDR:?set NR_ADDR (this host data address)}
ifc=$(ip -o -4 addr show | awk -v p="$data_prefix" 'index($4, p) == 1 { print $2; exit }')
[ -n "$ifc" ] || { echo "host-entry: no interface in ${data_prefix}x" >&2; exit 2; }
ip addr replace "$addr/${NR_DATA_PREFIXLEN:-16}" dev "$ifc"
ethtool -K "$ifc" tx off >/dev/null 2>&1 || echo "host-entry: ethtool -K $ifc tx off failed" >&2
if ! rdma link show 2>/dev/null | grep -q "netdev $ifc\$"; then
	rdma link add "${NR_DEVICE:-rxe0}" type rxe netdev "$ifc" ||
		{ echo "host-entry: rdma link add failed: load rdma_rxe on the host (modprobe rdma_rxe)" \
			"and run the container privileged or with CAP_NET_ADMIN and /dev/infiniband" >&2; exit 2; }
fi
export NR_TRANSPORT=${NR_TRANSPORT:-verbs} NR_DEVICE=${NR_DEVICE:-rxe0}
echo "host-entry: rank ${NR_RANK:-?} on $ifc $addr, device $NR_DEVICE"
exec "$@"
