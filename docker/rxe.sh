# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# The container testbed with the verbs transport on soft-RoCE (rdma_rxe),
# sourced by docker/testbed after docker/lib.sh (--transport verbs).
#
# Why the rxe devices live outside the containers: rdma_rxe sends and receives
# through a UDP socket of the initial network namespace (kernels before
# network-namespace support in rxe), so an rxe device made on a container's
# interface never sees its traffic.  So, for host i, in this (the initial)
# namespace:
#
#   nrdIDk<i>  veth end, NR_ADDR 10.80.S.<i+1>/24, MAC 02:80:..:<i+1>, the
#              netdev of RDMA device nrdIDrxe<i> (rdma link add ... type rxe)
#   nrdIDq<i>  its peer, moved into the box container: net_af_packet port i
#
# and host container i gets that device's /dev/infiniband/uverbsN (only that
# node: --device, made before the container starts, so it is visible in it) and
# NR_DEVICE=nrdIDrxe<i>.  Device names carry the run id, so they are unique on
# the machine.  The RDMA subsystem must be in shared network-namespace mode
# (rdma system show: netns shared, the default) for the container to see the
# device.  Control (box listener) and the rank-0 rendezvous use the control
# network; RoCE crosses the box.
#
# All hosts' data addresses are local addresses of this namespace; traffic
# between them still leaves through each device's own veth because rxe routes
# with the output interface set to its netdev (a route lookup bound to an
# interface skips the other interfaces' local routes), and is accepted at the
# receiving veth with accept_local=1 and rp_filter off there (the sender's
# address is local too).  net.ipv4.conf.all.rp_filter=1 (strict) would still
# drop it: it is set to 2 (loose) for the run and restored after.

dk_rxe_dev() { echo "${DK_P}rxe$1"; }

# dk_rxe_check: 0 when rdma_rxe can be used here, else 1 with DK_RXE_WHY.
dk_rxe_check() {
	DK_RXE_WHY=
	if [ ! -d /sys/module/rdma_rxe ] && ! modprobe rdma_rxe 2>/dev/null; then
		DK_RXE_WHY="kernel $(uname -r) has no rdma_rxe module (modprobe rdma_rxe failed);"
		DK_RXE_WHY="$DK_RXE_WHY use --transport soft, or hosts with real RNICs (docker/README.md)"
		return 1
	fi
	command -v rdma >/dev/null || { DK_RXE_WHY="the rdma tool is missing (apt-get install iproute2)"; return 1; }
	if rdma system show 2>/dev/null | grep -q 'netns exclusive'; then
		DK_RXE_WHY="the RDMA subsystem is in exclusive netns mode: containers cannot see devices of this namespace (rdma system set netns shared)"
		return 1
	fi
	return 0
}

# dk_rxe_up N: control network, veths and rxe devices here, box, hosts.
dk_rxe_up() {
	local n=$1 i k q dev uv ifaces="" pid
	dk_step "testbed $DK_P: $n hosts on rxe, control network"
	dk_ctl_net "$n"
	DK_RXE_RP=$(sysctl -n net.ipv4.conf.all.rp_filter)
	[ "$DK_RXE_RP" != 1 ] || sysctl -qw net.ipv4.conf.all.rp_filter=2
	dk_step "testbed $DK_P: veths and rxe devices"
	for ((i = 0; i < n; i++)); do
		k="${DK_P}k$i" q="${DK_P}q$i"
		ip link add "$k" type veth peer name "$q" || dk_die "ip link add $k type veth failed"
		ip link set "$k" address "$(dk_host_mac "$i")"
		sysctl -qw "net.ipv4.conf.$k.accept_local=1" "net.ipv4.conf.$k.rp_filter=0" \
			"net.ipv6.conf.$k.disable_ipv6=1" "net.ipv6.conf.$q.disable_ipv6=1"
		ip addr add "$(dk_data_ip "$i")/24" dev "$k"
		ethtool -K "$k" tx off tso off gso off gro off >/dev/null 2>&1 || ethtool -K "$k" tx off >/dev/null
		ip link set "$k" up
		if [ "${DK_RATE:-0}" != 0 ]; then   # the box shapes the other direction
			tc qdisc replace dev "$k" root handle 1: htb default 1 r2q 100000 &&
			tc class add dev "$k" parent 1: classid 1:1 htb rate "${DK_RATE}mbit" burst 64k cburst 64k quantum 30000 ||
				dk_die "tc htb on $k failed"
		fi
		ifaces="$ifaces${ifaces:+ }$q"
	done
	for ((i = 0; i < n; i++)); do
		local j
		for ((j = 0; j < n; j++)); do
			[ "$j" = "$i" ] || ip neigh replace "$(dk_data_ip "$j")" lladdr "$(dk_host_mac "$j")" \
				dev "${DK_P}k$i" nud permanent
		done
		dev=$(dk_rxe_dev "$i")
		rdma link add "$dev" type rxe netdev "${DK_P}k$i" || dk_die "rdma link add $dev type rxe netdev ${DK_P}k$i failed"
	done
	dk_done
	dk_step "testbed $DK_P: box"
	dk_box_create -e "NR_BOX_IFACES=$ifaces"
	docker start "${DK_P}box" > /dev/null || dk_die "docker start ${DK_P}box failed"
	pid=$(docker inspect -f '{{.State.Pid}}' "${DK_P}box")
	for q in $ifaces; do
		ip link set "$q" netns "$pid" || dk_die "cannot move $q into the box container (pid $pid)"
	done
	dk_box_wait_ready 60
	dk_done "box up, control $(dk_box_ip):$DK_CTL_PORT"
	dk_step "testbed $DK_P: hosts"
	for ((i = 0; i < n; i++)); do
		dev=$(dk_rxe_dev "$i")
		uv=
		for f in /sys/class/infiniband_verbs/uverbs*/ibdev; do
			[ "$(cat "$f" 2>/dev/null)" = "$dev" ] && uv=$(basename "$(dirname "$f")")
		done
		[ -n "$uv" ] && [ -c "/dev/infiniband/$uv" ] || dk_die "no /dev/infiniband/uverbs* node for $dev"
		# CAP_IPC_LOCK: memory registration beyond RLIMIT_MEMLOCK.
		docker create --name "${DK_P}h$i" "${DK_COMMON[@]}" --network "${DK_P}ctl" \
			--ip "$(dk_ctl_ip $((100 + i)))" --cap-add IPC_LOCK --device "/dev/infiniband/$uv" \
			-e "NR_RANK=$i" -e "NR_WORLD=$n" -e "NR_ROOT=$(dk_ctl_ip 100):$DK_ROOT_PORT" \
			-e "NR_ADDR=$(dk_data_ip "$i")" -e "NR_BOX=$(dk_box_ip):$DK_CTL_PORT" \
			-e "NR_TOKEN=$DK_TOKEN" -e NR_TLS=off -e NR_TRANSPORT=verbs -e "NR_DEVICE=$dev" \
			"netreduce-host:$DK_TAG" > /dev/null || dk_die "docker create ${DK_P}h$i failed"
		docker start "${DK_P}h$i" > /dev/null || dk_die "docker start ${DK_P}h$i failed"
	done
	for ((i = 0; i < n; i++)); do dk_host_wait_ready "$i" 30; done
	dk_done "$n hosts configured"
}

# Remove this run's rxe devices and veths (the box ends go with the box's
# namespace), restore rp_filter.  Safe to call twice.
dk_rxe_down() {
	[ -n "${DK_P:-}" ] || return 0
	local i
	for ((i = 0; i < DK_MAX_HOSTS; i++)); do
		[ -e "/sys/class/infiniband/$(dk_rxe_dev "$i")" ] && rdma link delete "$(dk_rxe_dev "$i")"
		[ -e "/sys/class/net/${DK_P}k$i" ] && ip link del "${DK_P}k$i" 2>/dev/null
	done
	if [ -n "${DK_RXE_RP:-}" ]; then
		sysctl -qw "net.ipv4.conf.all.rp_filter=$DK_RXE_RP"
		DK_RXE_RP=
	fi
	return 0
}
