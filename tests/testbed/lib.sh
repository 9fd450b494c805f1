# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# The netreduce namespace testbed, as functions: tests/testbed/run and the
# end-to-end suites (tests/e2e/*.sh) source this file.
#
# Topology (every name starts with "nrt" + a 4-hex run id, so two runs on one
# machine never collide; nothing is created in the root namespace):
#
#   host ns nrtIDh<i>                      box ns nrtIDb
#   +-------------------+                  +-----------------------------------+
#   | nrtIDd<i>  data   |==== veth ========| nrtIDp<i>  net_af_packet port i   |
#   | 10.77.p.<i+1>/16  |  (htb both ways) |            of netreduce-switch    |
#   | (one per process p|                  |                                   |
#   |  with --procs)    |                  |                                   |
#   |                   |                  |            (or Linux bridge       |
#   |                   |                  |             nrtIDsw: --no-box)    |
#   | nrtIDm<i>  mgmt   |==== veth ========| nrtIDn<i> -- bridge nrtIDbr       |
#   | 10.76.k.<i+1>/24  |                  |             10.76.k.254/24        |
#   +-------------------+                  |   box control TCP :7100          |
#                                          +-----------------------------------+
# That is rack k = 0; with TB_RACKS (--racks) rack k has box ns nrtIDb<k>
# (k > 0) with the same inside, and racks k, k+1 are joined by nrtIDx<k> ==
# nrtIDy<k> (see tb_setup_inter_rack).
# With --loss/--dup/--reorder on a kernel without sch_netem, each data link
# gets a relay in the box ns: nrtIDd<i> == nrtIDa<i> <nr-impair> nrtIDc<i> ==
# nrtIDp<i>.  With netem, netem sits under htb on both ends of the link.
# Loss alone without netem is a drop filter in the kernel on both ends of
# the plain link instead (tb_drop_filter; TB_IMPAIR_KIND below).
#
# Data (RoCE, the rank-0 rendezvous, MPI's TCP) crosses the box; only the
# hosts' control connection to the box uses the management bridge.
#
# Boxes as rails (TB_BOXES=K > 1, --boxes; one rack): box k (k >= 1) has
# box ns nrtIDb<k> and a rail to every host: nrtIDr<k>d<i> (host ns) ==
# nrtIDr<k>p<i> (box k's port).  The rail's host end has the data link's MAC
# and addresses, added noprefixroute, and a route 10.77.0.0/16 of metric
# 100 + k: unbound sockets (rendezvous, ring, MPI, Gloo) take rail 0, a
# socket bound to the rail (SO_BINDTODEVICE, NR_RAILS) finds its route;
# rp_filter off in the host ns.  Box k's control: nrtIDu<k> (box 0's ns, on
# nrtIDbr) == nrtIDv<k> (box k's ns) 10.76.0.<254-k>/24.  The hosts get
# NR_BOX=box0,box1,... and NR_RAILS=nrtIDd<i>,nrtIDr1d<i>,...: channel c to
# box c mod K over rail c mod K.  Every rail link is shaped and impaired as
# the data link (netem or the drop filter; not the relay).
#
# Two paths (TB_PATHS=2, tb_setup_path_b): each host's data frames toward the
# box take one of two links by an L4 hash, as ECMP does: path A the data
# link above, path B nrtIDe<i> (host ns) == nrtIDq<i> (box ns), whose frames
# enter the box's port nrtIDp<i> (tc mirred).  The hash: the low bit of the
# UDP or TCP source port (a sprayed QP's consecutive ports alternate); the
# way back (box -> host) is path A.  Path B has its own rate
# (TB_PATH_B_RATE, Mbit/s) and loss (TB_PATH_B_LOSS, %): one path congested
# or lossy.  The kernels this runs on have no bonding and no multipath
# router in L2, so the fabric is the hash on the host's egress
# (tb_path_hash_bytecode).

TB_CTL_PORT=${TB_CTL_PORT:-7100}
TB_ROOT_PORT=${TB_ROOT_PORT:-29500}
TB_TORCH_PORT=${TB_TORCH_PORT:-29400}
TB_SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TB_TOPDIR=$(cd "$TB_SRCDIR/../.." && pwd)

tb_log() { printf '[testbed %s] %s\n' "${TB_ID:-?}" "$*" >&2; }
tb_die() { printf '[testbed %s] error: %s\n' "${TB_ID:-?}" "$*" >&2; exit 2; }

tb_need_root() {
	if [ "$(id -u)" != 0 ]; then
		echo "tests/testbed: must run as root (creates network namespaces, veths, tc" \
			"qdiscs and runs DPDK); try: sudo $0 $*" >&2
		exit 2
	fi
}

# tb_init BUILD_DIR: pick a run id and a run directory; call before tb_setup.
tb_init() {
	TB_BUILD=$(cd "${1:?build dir}" && pwd) || tb_die "no build directory '$1': run 'make build' or pass --build DIR"
	local try
	for try in 1 2 3 4 5 6 7 8; do
		TB_ID=$(printf '%04x' $(( (RANDOM ^ ($$ << 3) ^ (try << 11)) & 0xffff )))
		if ! ip netns list 2>/dev/null | grep -q "^nrt${TB_ID}" &&
		   [ ! -e "/tmp/nrt-${TB_ID}" ]; then
			break
		fi
	done
	TB_P="nrt${TB_ID}"
	tb_boxes_check
	TB_RUNDIR="/tmp/nrt-${TB_ID}"
	mkdir -m 0700 "$TB_RUNDIR" || tb_die "cannot create $TB_RUNDIR"
	TB_NS_BOX="${TB_P}b"
	TB_HOSTS=0
	TB_PROCS=${TB_PROCS:-1}
	TB_MODE=${TB_MODE:-box}
	TB_RATE=${TB_RATE:-0}
	TB_MTU=${TB_MTU:-4096}
	case $TB_MTU in 256|512|1024|2048|4096) ;;
	*) tb_die "RoCE MTU $TB_MTU: use 256, 512, 1024, 2048 or 4096 (an IB path MTU)" ;;
	esac
	TB_LOSS=${TB_LOSS:-0}
	TB_DUP=${TB_DUP:-0}
	TB_REORDER=${TB_REORDER:-0}
	TB_IMPAIR=none
	TB_BOX_PID=
	TB_BOX_PIDS=()
	TB_BOX_CGS=()
	TB_IMPAIR_PID=
	TB_IMPAIR_PIDS=()
	TB_RACKS=${TB_RACKS:-1}
	TB_RACK_HOSTS=0
	TB_NBOX=$(tb_nbox)
	TB_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	TB_BOX_ADDR="10.76.0.254"
	TB_SWITCH="${TB_BOX_ADDR}:${TB_CTL_PORT}"
	TB_CTL_SOCK="$TB_RUNDIR/ctl.sock"
	: > "$TB_RUNDIR/pids"
	printf '%s' "$TB_TOKEN" > "$TB_RUNDIR/token"
	[ -n "${TB_TLS:-}" ] && tb_tls_make
	chmod 0600 "$TB_RUNDIR/token"
}

# Boxes as rails (TB_BOXES, --boxes K): what they do not combine with.
tb_boxes_check() {
	TB_BOXES=${TB_BOXES:-1}
	[[ $TB_BOXES =~ ^[1-4]$ ]] || tb_die "TB_BOXES (--boxes) must be 1..4, not '$TB_BOXES'"
	[ -z "${TB_BOX_CPU:-}" ] || awk -v f="$TB_BOX_CPU" 'BEGIN { exit !(f ~ /^[0-9]*\.?[0-9]+$/ && f >= 0.01 && f <= 64) }' ||
		tb_die "TB_BOX_CPU (--box-cpu) must be a share of one core, 0.01 to 64, not '$TB_BOX_CPU'"
	[ "$TB_BOXES" -gt 1 ] || return 0
	[ "${TB_RACKS:-1}" = 1 ] || tb_die "--boxes $TB_BOXES (boxes as rails of one rack)" \
		"and --racks ${TB_RACKS} (a box per rack) do not combine: pick one"
	[ "${TB_MODE:-box}" != bridge ] || tb_die "--boxes $TB_BOXES needs the boxes: not with --no-box/--bridge"
	[ "${TB_PATHS:-1}" != 2 ] || tb_die "--boxes $TB_BOXES and TB_PATHS=2 (two paths to one box) do not combine"
	return 0
}
# The number of boxes (and box namespaces): a box per rack (TB_RACKS > 1),
# else TB_BOXES (rails).
tb_nbox() { if [ "${TB_RACKS:-1}" -gt 1 ]; then echo "$TB_RACKS"; else echo "${TB_BOXES:-1}"; fi; }
# Host i's interface of rail k (0: its data link).
tb_rail_dev() { if [ "$2" = 0 ]; then echo "${TB_P}d$1"; else echo "${TB_P}r$2d$1"; fi; }
# Box k's port of host i's rail k (0: the data link's).
tb_rail_port() { if [ "$2" = 0 ]; then echo "${TB_P}p$1"; else echo "${TB_P}r$2p$1"; fi; }

tb_ns_host() { echo "${TB_P}h$1"; }
# tb_data_ip I [P]: the data address of process P (default 0) of host I.
tb_data_ip() { echo "10.77.${2:-0}.$(( $1 + 1 ))"; }
tb_mgmt_ip() { echo "10.76.$(tb_rack_of "$1").$(( $1 + 1 ))"; }
# The data links' Ethernet MTU for RoCE path MTU TB_MTU: the payload plus
# IP, UDP, BTH, RETH and ICRC (4096 + 60) with room to spare, never under 1500.
tb_link_mtu() { local m=$((TB_MTU + 104)); [ "$m" -ge 1500 ] || m=1500; echo "$m"; }
# The box's net_af_packet ring for a jumbo link MTU ("" for 1500: the default
# 2048-byte frames fit).  DPDK's PMD walks the ring as frames back to back, so
# a block must hold whole frames with no tail left (blocksz a multiple of
# framesz) and be whole pages; DPDK wants framesz - 32 within the box's mbuf
# data room (DP_MBUF_DATAROOM, 4352); the kernel puts a frame at offset 66 of
# its slot.  4352-byte frames, 16 to a 17-page block: frames up to 4286
# bytes, a link MTU up to 4272.
tb_af_ring() {
	[ "$(tb_link_mtu)" -gt 1500 ] || return 0
	[ "$(tb_link_mtu)" -le 4272 ] || tb_die "link MTU $(tb_link_mtu) over the box's 4272"
	echo ",framesz=4352,blocksz=69632,framecnt=512"
}
# The box's ports: TB_PMD af_packet or af_xdp.  net_af_xdp (XDP on the veth,
# its frames the box's mbufs, a page each) takes 1500-byte links only, a queue
# a port (one box worker); where it runs it is the faster (tests/testbed/README.md,
# "The box's ports"), so the default there, af_packet elsewhere.
tb_pmd() {
	if [ -n "${TB_PMD:-}" ]; then
		echo "$TB_PMD"
	elif [ "$(tb_link_mtu)" -le 1500 ] && [ "${TB_BOX_WORKERS:-1}" -le 1 ] &&
		grep -q ' xsk_' /proc/kallsyms 2>/dev/null &&
		ls /usr/lib/*/dpdk/pmds-*/librte_net_af_xdp.so* >/dev/null 2>&1; then
		echo af_xdp
	else
		echo af_packet
	fi
}
tb_host_mac() { printf '02:77:%02x:%02x:00:%02x' $(( 0x${TB_ID:0:2} )) $(( 0x${TB_ID:2:2} )) "$1"; }

tb_bin_switch() { echo "$TB_BUILD/netreduce-switch"; }
tb_bin_perf() { echo "$TB_BUILD/bench/host/nr-allreduce-perf"; }
tb_bin_mpi() { echo "$TB_BUILD/bench/e2e/nr-mpi-allreduce"; }
tb_bin_ctl() { echo "$TB_BUILD/control/netreducectl"; }
tb_bin_impair() { echo "$TB_BUILD/tests/e2e/nr-impair"; }

# Remember a process we started, so teardown kills it (and only it).
tb_track() { echo "$1" >> "$TB_RUNDIR/pids"; }

tb_set_mtu() {
	ip -n "$1" link set dev "$2" mtu "$(tb_link_mtu)" || tb_die "mtu $(tb_link_mtu) on $2 failed"
}

tb_quiet() { "$@" >/dev/null 2>&1; }

# Offloads off on a veth end: tx checksum (else UDP/TCP checksums arrive wrong
# through af_packet) and segmentation/GRO (else af_packet sees 64 KiB frames).
tb_offloads_off() {
	local ns=$1 dev=$2
	ip netns exec "$ns" ethtool -K "$dev" tx off tso off gso off gro off >/dev/null 2>&1 ||
		ip netns exec "$ns" ethtool -K "$dev" tx off >/dev/null 2>&1 ||
		tb_die "ethtool -K $dev tx off failed in $ns (install ethtool)"
}

tb_have_netem() {
	tc -n "$TB_NS_BOX" qdisc add dev lo root netem delay 0 >/dev/null 2>&1 || return 1
	tc -n "$TB_NS_BOX" qdisc del dev lo root >/dev/null 2>&1
	return 0
}

# Impairment is set up when a loss, dup or reorder share is nonzero, or always with
# TB_IMPAIR_ALWAYS=1 (the soak changes the mix while it runs: tb_impair_set).
# Which kind (TB_IMPAIR_KIND): netem where the kernel has it; else drop, a
# random-drop filter in the kernel (loss only: no dup, no reorder, and not
# with TB_IMPAIR_ALWAYS, whose mix may gain them); else relay, nr-impair.
# TB_IMPAIR_KIND=drop|relay picks one (drop: loss only).
tb_impaired() {
	[ "${TB_IMPAIR_ALWAYS:-0}" = 1 ] || [ "$TB_LOSS" != 0 ] || [ "$TB_DUP" != 0 ] ||
		[ "$TB_REORDER" != 0 ]
}

# The cBPF program of the drop filter: drop (TC_ACT_SHOT) when a random
# 32-bit number is below LOSS% of 2^32, else pass on (TC_ACT_UNSPEC: the
# next filter, the classes of TB_PRIO, or htb's default class).  In the
# kernel, before the queue, and silent to the sender as netem's loss is (an
# af_packet sender that saw an error would stop its batch); classic BPF in
# cls_bpf direct-action needs no tc action module.
tb_drop_bytecode() {
	local t
	t=$(awk -v p="$1" 'BEGIN { t = p / 100 * 4294967296; if (t > 4294967295) t = 4294967295; printf "%.0f", t }')
	# ld rand (SKF_AD_OFF + SKF_AD_RANDOM); jge #t, pass, drop; ret #-1; ret #2
	echo "4,32 0 0 4294963256,53 0 1 $t,6 0 0 4294967295,6 0 0 2"
}

# tb_drop_tc NS DEV add|replace LOSS: the drop filter dropping LOSS% on the
# htb root (handle 1:) of DEV's egress; tc's status.
tb_drop_tc() {
	tc -n "$1" filter "$3" dev "$2" parent 1: protocol all prio 1 handle 1 \
		bpf bytecode "$(tb_drop_bytecode "$4")" da
}

# The drop filter on the egress of one link end: on the htb root tb_shape put
# there (add), or its new loss (replace).
tb_drop_filter() {
	tb_drop_tc "$1" "$2" "${3:-add}" "$TB_LOSS" ||
		tb_die "tc bpf drop filter on $2 in $1 failed (a kernel without cls_bpf?" \
			"TB_IMPAIR_KIND=relay, bench-loss --impair relay, uses the user-space relay)"
}

# Whether this kernel takes the drop filter (htb and cls_bpf).
tb_have_drop_filter() {
	local ok=0
	tc -n "$TB_NS_BOX" qdisc add dev lo root handle 1: htb >/dev/null 2>&1 || return 1
	tb_drop_tc "$TB_NS_BOX" lo add 0 >/dev/null 2>&1 || ok=1
	tc -n "$TB_NS_BOX" qdisc del dev lo root >/dev/null 2>&1
	return $ok
}

# The cBPF classifier of the two-path fabric: a match (path B) for an IPv4
# UDP or TCP frame whose source port is odd, no match (path A) otherwise:
#   ldh [12]; jeq #0x800 else A; ldb [23]; jeq #17 L4; jeq #6 L4 else A;
#   L4: ldh [34] (IPv4 without options: RoCEv2's); jset #1 B else A.
tb_path_hash_bytecode() {
	echo "9,40 0 0 12,21 0 6 2048,48 0 0 23,21 1 0 17,21 0 3 6,40 0 0 34,69 0 1 1,6 0 0 4294967295,6 0 0 0"
}

# Path B of host i (TB_PATHS=2): its link, the hash on the data link's egress
# redirecting to it, its frames into the box's port, its rate and loss.
tb_setup_path_b() {
	local i=$1 ns=$2 bns=$3 e="${TB_P}e$i" q="${TB_P}q$i" d="${TB_P}d$i" p="${TB_P}p$i"
	ip link add "$e" netns "$ns" type veth peer name "$q" netns "$bns" ||
		tb_die "veth $e/$q failed"
	tb_set_mtu "$ns" "$e"
	tb_set_mtu "$bns" "$q"
	tb_offloads_off "$ns" "$e"
	tb_offloads_off "$bns" "$q"
	ip -n "$ns" link set "$e" up
	ip -n "$bns" link set "$q" up
	tc -n "$ns" qdisc add dev "$d" clsact &&
	tc -n "$ns" filter add dev "$d" egress protocol ip prio 1 bpf bytecode \
		"$(tb_path_hash_bytecode)" action mirred egress redirect dev "$e" ||
		tb_die "the two paths' hash on $d in $ns failed (no clsact, cls_bpf or act_mirred?)"
	tc -n "$bns" qdisc add dev "$q" ingress &&
	tc -n "$bns" filter add dev "$q" parent ffff: protocol all prio 1 u32 match u32 0 0 \
		action mirred ingress redirect dev "$p" ||
		tb_die "path B into the box's port $p in $bns failed (no u32 or act_mirred?)"
	TB_RATE=${TB_PATH_B_RATE:-$TB_RATE} TB_LOSS=${TB_PATH_B_LOSS:-$TB_LOSS} tb_shape "$ns" "$e" ""
}

# Links that serve the priority classes by priority (TB_PRIO=1; docs/short-slots.md,
# "Priority"): under the shaped link's class 1:1, band 1:10 (prio 0:
# exact messages, ACKs, anything unmarked) above the TB_PRIO_CLASSES (default
# 3) tolerant classes from DSCP TB_PRIO_DSCP (default 10; class k: + 8k, its
# highest first), each class's drop-eligible packets (+ 2) in its own band:
# a band of their own, served after the others, would reorder a QP's packets,
# which the box takes for loss; this kernel has no drop-precedence queue
# (GRED) to drop them first in the same one.  Each band may take the whole
# rate, htb lends it by prio.  u32 filters on the DSCP after the drop filter.
tb_prio_bands() {
	local ns=$1 dev=$2 n=${TB_PRIO_CLASSES:-3} d0=${TB_PRIO_DSCP:-10} k b last
	local c="tc -n $ns class" f="tc -n $ns filter"
	last=$((10 + n))
	for ((b = 10; b <= last; b++)); do
		$c add dev "$dev" parent 1:1 classid "1:$b" htb rate 1mbit ceil "${TB_RATE}mbit" \
			burst 64k cburst 64k prio $((b - 10)) quantum 30000 ||
			tb_die "tc htb band 1:$b on $dev failed"
		# shellcheck disable=SC2046
		tc -n "$ns" qdisc add dev "$dev" parent "1:$b" handle "$b:" $(tb_leaf_queue) ||
			tb_die "tc $(tb_leaf_queue) of band 1:$b on $dev failed"
	done
	for ((k = 0; k < n; k++)); do
		$f add dev "$dev" parent 1: protocol ip prio 2 u32 match ip dsfield \
			$(((d0 + 8 * k) << 2)) 0xfc flowid "1:$((10 + n - k))" &&
		$f add dev "$dev" parent 1: protocol ip prio 2 u32 match ip dsfield \
			$(((d0 + 8 * k + 2) << 2)) 0xfc flowid "1:$((10 + n - k))" ||
			tb_die "tc u32 DSCP filter on $dev failed"
	done
}

# The queue under each shaped class (and each priority band): 10,000 frames,
# seconds of a 100 Mbit/s link, unless TB_QUEUE_KB sizes it in KiB as a
# switch's port buffer is (a tail-drop byte FIFO: bfifo).  A frame that finds
# the queue full is dropped, counted by tc (tb_queue_drops), as a switch
# drops it; the transports take it for a loss.
tb_leaf_queue() {
	if [ -n "${TB_QUEUE_KB:-}" ]; then
		echo "bfifo limit $((TB_QUEUE_KB * 1024))"
	else
		echo "pfifo limit 10000"
	fi
}

# Frames the queues of the shaped links dropped (tb_leaf_queue), all links,
# both ends: the sum of tc's "dropped" of every leaf qdisc (drop filters not
# included: their drops are the impairment's).
tb_queue_drops() {
	local ns total=0 d
	for ns in $(ip netns list | awk -v p="$TB_P" 'index($1, p) == 1 { print $1 }'); do
		d=$(tc -n "$ns" -s qdisc show 2>/dev/null |
			awk '/^qdisc [bp]fifo/ { f = 1; next } /^qdisc/ { f = 0 }
			     f && /dropped/ { for (i = 1; i <= NF; i++) if ($i == "(dropped") { sub(",", "", $(i + 1)); s += $(i + 1) } }
			     END { print s + 0 }')
		total=$((total + d))
	done
	echo "$total"
}

# Shape (and, with netem or the drop filter, impair) the egress of one link end.
tb_shape() {
	local ns=$1 dev=$2 netem=$3
	local q="tc -n $ns qdisc" c="tc -n $ns class"
	if [ "$TB_IMPAIR" = drop ]; then
		# an htb root for the filter; unshaped: no class, every frame direct
		[ "$TB_RATE" != 0 ] || $q add dev "$dev" root handle 1: htb ||
			tb_die "tc htb on $dev failed"
	fi
	if [ "$TB_RATE" != 0 ]; then
		local def=1
		[ "${TB_PRIO:-0}" = 1 ] && def=10
		$q add dev "$dev" root handle 1: htb default "$def" r2q 100000 ||
			tb_die "tc htb on $dev failed"
		# a burst of 1 ms of the rate (at least 64 KiB): htb refills its tokens by
		# timer, and at Gbit/s 64 KiB is 50 us: the link would idle between ticks
		local burst=$((TB_RATE * 125 > 65536 ? TB_RATE * 125 : 65536))
		$c add dev "$dev" parent 1: classid 1:1 htb rate "${TB_RATE}mbit" \
			burst "$burst" cburst "$burst" quantum 30000 || tb_die "tc htb class on $dev failed"
		if [ "${TB_PRIO:-0}" = 1 ]; then
			[ -z "$netem" ] || tb_die "TB_PRIO=1 with netem: the drop filter's loss only"
			tb_prio_bands "$ns" "$dev"
		elif [ -n "$netem" ]; then
			[ -z "${TB_QUEUE_KB:-}" ] ||
				tb_die "TB_QUEUE_KB with netem: netem is the queue (10,000 frames); use the drop filter's loss (TB_IMPAIR_KIND=drop)"
			# shellcheck disable=SC2086
			$q add dev "$dev" parent 1:1 handle 10: netem $netem limit 10000 ||
				tb_die "netem under htb on $dev failed"
		else
			# shellcheck disable=SC2046
			$q add dev "$dev" parent 1:1 handle 10: $(tb_leaf_queue) ||
				tb_die "tc $(tb_leaf_queue) on $dev failed"
		fi
	elif [ -n "$netem" ]; then
		# shellcheck disable=SC2086
		$q add dev "$dev" root netem $netem limit 10000 || tb_die "netem on $dev failed"
	fi
	[ "$TB_IMPAIR" != drop ] || tb_drop_filter "$ns" "$dev"
}

# With TB_INTRA_RATE (Mbit/s) the host's own traffic between its processes
# (over lo: the flat ring's intra-host edges) is shaped like a slower
# intra-host link; the library's shared memory gets the same cap through
# NR_SHM_PACE_GBPS (tb_host_env).
tb_shape_intra() {
	local ns=$1
	[ -n "${TB_INTRA_RATE:-}" ] || return 0
	tc -n "$ns" qdisc add dev lo root handle 1: htb default 1 r2q 100000 &&
	tc -n "$ns" class add dev lo parent 1: classid 1:1 htb rate "${TB_INTRA_RATE}mbit" \
		burst 64k cburst 64k quantum 30000 || tb_die "tc htb on lo of $ns failed"
}

tb_netem_args() {
	local a=""
	[ "$TB_LOSS" != 0 ] && a="$a loss ${TB_LOSS}%"
	[ "$TB_DUP" != 0 ] && a="$a duplicate ${TB_DUP}%"
	# netem sends REORDER% at once and delays the rest by 1 ms: the ones sent
	# at once overtake those delayed.
	[ "$TB_REORDER" != 0 ] && a="$a delay 1ms reorder ${TB_REORDER}%"
	# a netem with nothing to do (TB_IMPAIR_ALWAYS at 0%)
	[ -n "$a" ] || a="delay 0ms"
	echo "$a"
}

# tb_impair_set LOSS DUP REORDER: change the impairment of every link while the
# testbed runs (set up with TB_IMPAIR_ALWAYS=1 or a nonzero rate).
tb_impair_set() {
	TB_LOSS=$1 TB_DUP=$2 TB_REORDER=$3
	case $TB_IMPAIR in
	user)
		printf '%s %s %s\n' "$1" "$2" "$3" > "$TB_RUNDIR/impair.ctl"
		local pid
		for pid in "${TB_IMPAIR_PIDS[@]}"; do
			kill -HUP "$pid" || tb_die "nr-impair (pid $pid) is gone"
		done
		;;
	netem)
		local i k where netem
		netem=$(tb_netem_args)
		where=root
		[ "$TB_RATE" != 0 ] && where="parent 1:1 handle 10:"
		for ((i = 0; i < TB_HOSTS; i++)); do
			# shellcheck disable=SC2086
			tc -n "$(tb_ns_host "$i")" qdisc change dev "${TB_P}d$i" $where netem $netem limit 10000 &&
			tc -n "$(tb_ns_box "$(tb_rack_of "$i")")" qdisc change dev "${TB_P}p$i" $where netem \
				$netem limit 10000 ||
				tb_die "tc qdisc change netem on link $i failed"
			for ((k = 1; k < ${TB_BOXES:-1}; k++)); do
				# shellcheck disable=SC2086
				if ! tc -n "$(tb_ns_host "$i")" qdisc change dev "$(tb_rail_dev "$i" "$k")" \
					$where netem $netem limit 10000 ||
					! tc -n "$(tb_ns_box "$k")" qdisc change dev "$(tb_rail_port "$i" "$k")" \
					$where netem $netem limit 10000; then
					tb_die "tc qdisc change netem on rail $k of host $i failed"
				fi
			done
		done
		;;
	drop)
		[ "$TB_DUP" = 0 ] && [ "$TB_REORDER" = 0 ] ||
			tb_die "tb_impair_set: the drop filter only drops (TB_IMPAIR_KIND=relay for dup and reorder)"
		local i k
		for ((i = 0; i < TB_HOSTS; i++)); do
			tb_drop_filter "$(tb_ns_host "$i")" "${TB_P}d$i" replace
			tb_drop_filter "$(tb_ns_box "$(tb_rack_of "$i")")" "${TB_P}p$i" replace
			for ((k = 1; k < ${TB_BOXES:-1}; k++)); do
				tb_drop_filter "$(tb_ns_host "$i")" "$(tb_rail_dev "$i" "$k")" replace
				tb_drop_filter "$(tb_ns_box "$k")" "$(tb_rail_port "$i" "$k")" replace
			done
			[ "${TB_PATHS:-1}" != 2 ] ||
				TB_LOSS=${TB_PATH_B_LOSS:-$TB_LOSS} tb_drop_filter "$(tb_ns_host "$i")" \
					"${TB_P}e$i" replace
		done
		;;
	*) tb_die "tb_impair_set: the testbed was set up without impairment (TB_IMPAIR_ALWAYS=1)" ;;
	esac
}

# Racks (TB_RACKS, default 1): rack k has its own box namespace (tb_ns_box
# k), box (or, listed in TB_NOBOX_RACKS, a Linux bridge: a rack without a
# box), management bridge 10.76.k.0/24 with the box at 10.76.k.254, and hosts
# k*TB_RACK_HOSTS .. (k+1)*TB_RACK_HOSTS-1.  Rack k and rack k+1 are joined
# by the inter-rack link nrtIDx<k> (box ns k) == nrtIDy<k> (box ns k+1), a
# port of each box (or a member of the bridge), shaped to TB_INTER_RATE.
tb_ns_box() { if [ "${1:-0}" = 0 ]; then echo "${TB_P}b"; else echo "${TB_P}b$1"; fi; }
tb_rack_of() { if [ "${TB_RACK_HOSTS:-0}" -gt 0 ]; then echo $(( $1 / TB_RACK_HOSTS )); else echo 0; fi; }
# Box k's control address: 10.76.k.254 (rack k's), or with boxes as rails
# (TB_BOXES > 1) 10.76.0.<254-k> on rack 0's management network.
tb_box_addr() {
	if [ "${TB_BOXES:-1}" -gt 1 ]; then echo "10.76.0.$((254 - $1))"; else echo "10.76.$1.254"; fi
}
tb_switch() { echo "$(tb_box_addr "$1"):${TB_CTL_PORT}"; }
tb_ctl_sock() { if [ "$1" = 0 ]; then echo "$TB_RUNDIR/ctl.sock"; else echo "$TB_RUNDIR/ctl$1.sock"; fi; }
tb_box_log() { if [ "$1" = 0 ]; then echo "$TB_RUNDIR/box.log"; else echo "$TB_RUNDIR/box$1.log"; fi; }
# Rack k has a box (not --bridge, not listed in TB_NOBOX_RACKS).
tb_rack_box() {
	[ "$TB_MODE" != bridge ] && [[ ",${TB_NOBOX_RACKS:-}," != *",$1,"* ]]
}

# The box namespace of rack k: management bridge, and the data bridge of a rack without a box.
tb_setup_rack() {
	local k=$1 bns
	bns=$(tb_ns_box "$k")
	ip netns add "$bns" || tb_die "ip netns add $bns failed"
	echo "$bns" >> "$TB_RUNDIR/netns"
	ip -n "$bns" link set lo up
	ip -n "$bns" link add "${TB_P}br" type bridge || tb_die "no bridge support"
	ip -n "$bns" addr add "$(tb_box_addr "$k")/24" dev "${TB_P}br"
	ip -n "$bns" link set "${TB_P}br" up
	if ! tb_rack_box "$k"; then
		ip -n "$bns" link add "${TB_P}sw" type bridge
		ip -n "$bns" link set "${TB_P}sw" up
	fi
}

# Box k of the rails (TB_BOXES > 1, k >= 1): its namespace, and its control
# address on box 0's management bridge: nrtIDu<k> (box 0's ns, on the bridge)
# == nrtIDv<k> (box k's ns, tb_box_addr k).
tb_setup_rail_box() {
	local k=$1 bns b0 u="${TB_P}u$1" v="${TB_P}v$1"
	bns=$(tb_ns_box "$k")
	b0=$(tb_ns_box 0)
	ip netns add "$bns" || tb_die "ip netns add $bns failed"
	echo "$bns" >> "$TB_RUNDIR/netns"
	ip -n "$bns" link set lo up
	ip link add "$u" netns "$b0" type veth peer name "$v" netns "$bns" || tb_die "veth $u/$v failed"
	if ! { ip -n "$b0" link set "$u" master "${TB_P}br" && ip -n "$b0" link set "$u" up &&
		ip -n "$bns" addr add "$(tb_box_addr "$k")/24" dev "$v" && ip -n "$bns" link set "$v" up; }; then
		tb_die "box $k's management link $u/$v failed"
	fi
}

# Rail k (k >= 1) of host i: nrtIDr<k>d<i> in the host ns, with the data
# link's MAC and the host's data addresses (noprefixroute: rail 0 keeps the
# prefix route) and a route of metric 100 + k for sockets bound to it, ==
# nrtIDr<k>p<i>, a port of box k; shaped and impaired as the data link.
tb_setup_rail() {
	local i=$1 k=$2 netem=$3 ns bns d p q
	ns=$(tb_ns_host "$i")
	bns=$(tb_ns_box "$k")
	d=$(tb_rail_dev "$i" "$k")
	p=$(tb_rail_port "$i" "$k")
	ip link add "$d" netns "$ns" type veth peer name "$p" netns "$bns" || tb_die "veth $d/$p failed"
	ip -n "$ns" link set "$d" address "$(tb_host_mac "$i")"
	tb_set_mtu "$ns" "$d"
	tb_set_mtu "$bns" "$p"
	for ((q = 0; q < TB_PROCS; q++)); do
		ip -n "$ns" addr add "$(tb_data_ip "$i" "$q")/16" dev "$d" noprefixroute ||
			tb_die "address $(tb_data_ip "$i" "$q") on $d failed"
	done
	ip -n "$ns" link set "$d" up
	tb_offloads_off "$ns" "$d"
	tb_offloads_off "$bns" "$p"
	ip -n "$bns" link set "$p" up
	ip -n "$ns" route add 10.77.0.0/16 dev "$d" metric $((100 + k)) || tb_die "route on $d failed"
	# the host's addresses answer on every rail: no reverse-path check
	ip netns exec "$ns" sysctl -qw "net.ipv4.conf.$d.rp_filter=0" ||
		tb_die "rp_filter on $d in $ns failed"
	tb_shape "$ns" "$d" "$netem"
	tb_shape "$bns" "$p" "$netem"
}

# Host i: namespace, data link (through a relay with user-space impairment),
# addresses, management link, shaping.
tb_setup_host() {
	local i=$1 netem=$2 k q ns bns d p
	k=$(tb_rack_of "$i")
	bns=$(tb_ns_box "$k")
	ns=$(tb_ns_host "$i")
	d="${TB_P}d$i"
	p="${TB_P}p$i"
	ip netns add "$ns" || tb_die "ip netns add $ns failed"
	echo "$ns" >> "$TB_RUNDIR/netns"
	ip -n "$ns" link set lo up
	if [ "${TB_BOXES:-1}" -gt 1 ]; then
		ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
			net.ipv4.conf.default.rp_filter=0 || tb_die "rp_filter in $ns failed"
	fi
	if [ "$TB_IMPAIR" = user ]; then
		ip link add "$d" netns "$ns" type veth peer name "${TB_P}a$i" netns "$bns"
		ip link add "${TB_P}c$i" netns "$bns" type veth peer name "$p" netns "$bns"
		for dev in "${TB_P}a$i" "${TB_P}c$i"; do
			tb_offloads_off "$bns" "$dev"
			ip -n "$bns" link set "$dev" up
		done
	else
		ip link add "$d" netns "$ns" type veth peer name "$p" netns "$bns" ||
			tb_die "veth $d/$p failed"
	fi
	ip -n "$ns" link set "$d" address "$(tb_host_mac "$i")"
	tb_set_mtu "$ns" "$d"
	tb_set_mtu "$bns" "$p"
	if [ "$TB_IMPAIR" = user ]; then
		tb_set_mtu "$bns" "${TB_P}a$i"
		tb_set_mtu "$bns" "${TB_P}c$i"
	fi
	for ((q = 0; q < TB_PROCS; q++)); do
		ip -n "$ns" addr add "$(tb_data_ip "$i" "$q")/16" dev "$d"
	done
	ip -n "$ns" link set "$d" up
	tb_shape_intra "$ns"
	tb_offloads_off "$ns" "$d"
	tb_offloads_off "$bns" "$p"
	ip -n "$bns" link set "$p" up
	tb_rack_box "$k" || ip -n "$bns" link set "$p" master "${TB_P}sw"
	# management link
	ip link add "${TB_P}m$i" netns "$ns" type veth peer name "${TB_P}n$i" netns "$bns"
	ip -n "$ns" addr add "$(tb_mgmt_ip "$i")/24" dev "${TB_P}m$i"
	ip -n "$ns" link set "${TB_P}m$i" up
	ip -n "$bns" link set "${TB_P}n$i" master "${TB_P}br"
	ip -n "$bns" link set "${TB_P}n$i" up
	# shaping (both directions) and netem impairment
	tb_shape "$ns" "$d" "$netem"
	if [ "$TB_IMPAIR" = user ]; then
		tb_shape "$bns" "${TB_P}a$i" ""
	else
		tb_shape "$bns" "$p" "$netem"
	fi
	if [ "${TB_PATHS:-1}" = 2 ]; then
		[ "$TB_IMPAIR" != user ] && [ "$TB_IMPAIR" != netem ] ||
			tb_die "TB_PATHS=2 takes the drop filter's loss only (TB_IMPAIR_KIND=drop)"
		tb_setup_path_b "$i" "$ns" "$bns"
	fi
	local r
	for ((r = 1; r < ${TB_BOXES:-1}; r++)); do
		tb_setup_rail "$i" "$r" "$netem"
	done
	for ((q = 0; q < TB_PROCS; q++)); do
		printf '%s %s %s\n' "$(tb_data_ip "$i" "$q")" "$ns" "$(tb_mgmt_ip "$i")" \
			>> "$TB_RUNDIR/hostmap"
	done
}

# The link between rack k and rack k+1, shaped to TB_INTER_RATE both ways.
tb_setup_inter_rack() {
	local k=$1 a b x="${TB_P}x$1" y="${TB_P}y$1"
	a=$(tb_ns_box "$k")
	b=$(tb_ns_box $((k + 1)))
	ip link add "$x" netns "$a" type veth peer name "$y" netns "$b" || tb_die "veth $x/$y failed"
	tb_set_mtu "$a" "$x"
	tb_set_mtu "$b" "$y"
	tb_offloads_off "$a" "$x"
	tb_offloads_off "$b" "$y"
	ip -n "$a" link set "$x" up
	ip -n "$b" link set "$y" up
	TB_RATE=${TB_INTER_RATE:-0} tb_shape "$a" "$x" ""
	TB_RATE=${TB_INTER_RATE:-0} tb_shape "$b" "$y" ""
	tb_rack_box "$k" || ip -n "$a" link set "$x" master "${TB_P}sw"
	tb_rack_box $((k + 1)) || ip -n "$b" link set "$y" master "${TB_P}sw"
}

# Bytes the inter-rack link between rack k and k+1 carried so far, both ways.
tb_inter_rack_bytes() {
	ip -n "$(tb_ns_box "$1")" -j -s link show dev "${TB_P}x$1" |
		jq '.[0].stats64 | .tx.bytes + .rx.bytes'
}

# User-space impairment: one nr-impair per rack, in its box namespace, on the
# relays of its hosts' links; all read RUNDIR/impair.ctl on SIGHUP.
tb_start_impair() {
	local k i pairs log
	printf '%s %s %s\n' "$TB_LOSS" "$TB_DUP" "$TB_REORDER" > "$TB_RUNDIR/impair.ctl"
	TB_IMPAIR_PIDS=()
	for ((k = 0; k < TB_RACKS; k++)); do
		pairs=()
		for ((i = k * TB_RACK_HOSTS; i < (k + 1) * TB_RACK_HOSTS; i++)); do
			pairs+=("${TB_P}a$i:${TB_P}c$i")
		done
		log="$TB_RUNDIR/impair.log"
		[ "$k" = 0 ] || log="$TB_RUNDIR/impair$k.log"
		ip netns exec "$(tb_ns_box "$k")" "$(tb_bin_impair)" --loss "$TB_LOSS" --dup "$TB_DUP" \
			--reorder "$TB_REORDER" --seed "$(( ${TB_SEED:-$$} + k ))" \
			--control "$TB_RUNDIR/impair.ctl" "${pairs[@]}" > "$log" 2>&1 &
		TB_IMPAIR_PIDS+=($!)
		tb_track "$!"
		sleep 0.2
		kill -0 "$!" 2>/dev/null || { cat "$log" >&2; tb_die "nr-impair failed"; }
	done
	TB_IMPAIR_PID=${TB_IMPAIR_PIDS[0]}
}

# tb_setup N: namespaces, links, addresses, shaping, impairment; N hosts in
# TB_RACKS racks.
tb_setup() {
	local n=$1 i j k q ns netem=""
	TB_HOSTS=$n
	TB_RACKS=${TB_RACKS:-1}
	tb_boxes_check
	TB_NBOX=$(tb_nbox)
	[ "$n" -ge 1 ] && [ "$n" -le 64 ] || tb_die "--hosts must be 1..64"
	[ $((n % TB_RACKS)) = 0 ] || tb_die "$n hosts do not split into $TB_RACKS equal racks"
	TB_RACK_HOSTS=$((n / TB_RACKS))
	[ -z "${TB_QUEUE_KB:-}" ] || { [[ $TB_QUEUE_KB =~ ^[0-9]+$ ]] && [ "$TB_QUEUE_KB" -ge 8 ]; } ||
		tb_die "TB_QUEUE_KB=$TB_QUEUE_KB: a queue's depth in KiB, at least 8 (two 4 KiB frames)"
	for ((k = 0; k < TB_RACKS; k++)); do
		tb_setup_rack "$k"
	done
	for ((k = 1; k < TB_BOXES; k++)); do
		tb_setup_rail_box "$k"
	done
	if tb_impaired; then
		local kind=${TB_IMPAIR_KIND:-auto}
		case $kind in
		auto|drop|relay) ;;
		*) tb_die "TB_IMPAIR_KIND must be auto, drop or relay, not '$kind'" ;;
		esac
		if [ "$kind" = drop ] && { [ "$TB_DUP" != 0 ] || [ "$TB_REORDER" != 0 ]; }; then
			tb_die "TB_IMPAIR_KIND=drop only drops: no --dup or --reorder"
		fi
		if [ "$kind" = auto ] && tb_have_netem; then
			TB_IMPAIR=netem
			netem=$(tb_netem_args)
		elif [ "$kind" = drop ] || { [ "$kind" = auto ] && [ "$TB_DUP" = 0 ] &&
				[ "$TB_REORDER" = 0 ] && [ "${TB_IMPAIR_ALWAYS:-0}" != 1 ] &&
				tb_have_drop_filter; }; then
			TB_IMPAIR=drop
		else
			TB_IMPAIR=user
			[ -x "$(tb_bin_impair)" ] || tb_die "this kernel has no sch_netem and" \
				"$(tb_bin_impair) is not built (ninja -C $TB_BUILD tests/e2e/nr-impair)"
			[ "$TB_BOXES" = 1 ] || tb_die "--boxes $TB_BOXES: the user-space relay (nr-impair:" \
				"--dup/--reorder on a kernel without sch_netem, TB_IMPAIR_KIND=relay) sits on" \
				"rail 0's links only; the rails take netem, or without it --loss alone (the drop filter)"
		fi
	fi
	: > "$TB_RUNDIR/hostmap"
	for ((i = 0; i < n; i++)); do
		tb_setup_host "$i" "$netem"
	done
	for ((k = 0; k + 1 < TB_RACKS; k++)); do
		tb_setup_inter_rack "$k"
	done
	# Static neighbours: hosts find each other without depending on ARP
	# flooding through the box (ARP still works; this only removes a race).
	for ((i = 0; i < n; i++)); do
		ns=$(tb_ns_host "$i")
		for ((j = 0; j < n; j++)); do
			[ "$j" = "$i" ] && continue
			for ((q = 0; q < TB_PROCS; q++)); do
				for ((k = 0; k < TB_BOXES; k++)); do
					ip -n "$ns" neigh replace "$(tb_data_ip "$j" "$q")" lladdr \
						"$(tb_host_mac "$j")" dev "$(tb_rail_dev "$i" "$k")" nud permanent
				done
			done
		done
	done
	[ "$TB_IMPAIR" = user ] && tb_start_impair
	local boxes=0 cap=""
	for ((k = 0; k < TB_NBOX; k++)); do
		tb_rack_box "$k" && boxes=$((boxes + 1))
	done
	[ -z "${TB_BOX_CPU:-}" ] || [ "$boxes" = 0 ] || cap=" capped at ${TB_BOX_CPU} core each"
	if [ "$TB_BOXES" -gt 1 ]; then
		boxes="$boxes boxes as rails (channel c: box c mod $TB_BOXES)$cap"
	else
		boxes="$boxes box(es)$cap"
	fi
	tb_log "$n hosts x $TB_PROCS processes in $TB_RACKS rack(s), $boxes, RoCE MTU $TB_MTU (links $(tb_link_mtu))," \
		"box ports net_$(tb_pmd)," \
		"${TB_NOBOX_RACKS:+(without a box: rack $TB_NOBOX_RACKS) }mode $TB_MODE," \
		"rate ${TB_RATE} Mbit/s (intra-host ${TB_INTRA_RATE:-unshaped}," \
		"inter-rack ${TB_INTER_RATE:-unshaped}), loss ${TB_LOSS}% dup ${TB_DUP}%" \
		"reorder ${TB_REORDER}% (impairment: $TB_IMPAIR)${TB_PATHS:+, $TB_PATHS paths (B: ${TB_PATH_B_RATE:-$TB_RATE} Mbit/s, loss ${TB_PATH_B_LOSS:-$TB_LOSS}%)}${TB_PRIO:+, priority bands (TB_PRIO)}," \
		"run dir $TB_RUNDIR"
}

# EAL + application arguments of box k (rack k's, or rail k's with
# TB_BOXES > 1: its ports the hosts' rail-k links, its lcore CPU k mod the
# CPUs, so the rails' boxes do not share one core) (netreduce-switch --help;
# TB_BACKEND: its --backend, sw or rtl).
# TB_BOX_WORKERS=N (N >= 2): N worker lcores besides the control lcore, all
# free to run on every CPU of the machine, and an RX/TX queue pair per worker
# on every port (net_af_packet qpairs=N: its sockets share the port's frames
# by flow hash, so a channel's frames land on any worker: software steering).
tb_box_cmd() {
	local k=${1:-0} i n=0 prefix="${TB_P}" ifs=() q="" lc=(-l "${TB_BOX_LCORE:-0}")
	local w=${TB_BOX_WORKERS:-1}
	[ "$k" = 0 ] || prefix="${TB_P}r$k"
	[ "${TB_BOXES:-1}" -gt 1 ] && lc=(-l $(( (${TB_BOX_LCORE:-0} + k) % $(nproc) )))
	if [ "$w" -ge 2 ]; then
		lc=(--lcores "(0-$w)@(0-$(($(nproc) - 1)))")
		q=",qpairs=$w"
	fi
	local cmd=("$(tb_bin_switch)" --no-pci --no-huge -m "${TB_BOX_MEM:-512}" --file-prefix "$prefix"
		"${lc[@]}" --log-level "${TB_BOX_LOGLEVEL:-6}")
	# more EAL arguments, e.g. -d DIR: DPDK's PMDs carried to a machine without them
	# shellcheck disable=SC2206
	[ -n "${TB_EAL_EXTRA:-}" ] && cmd+=($TB_EAL_EXTRA)
	if [ "${TB_BOXES:-1}" -gt 1 ]; then
		for ((i = 0; i < TB_HOSTS; i++)); do
			ifs+=("$(tb_rail_port "$i" "$k")")
		done
	else
		for ((i = k * TB_RACK_HOSTS; i < (k + 1) * TB_RACK_HOSTS; i++)); do
			ifs+=("${TB_P}p$i")
		done
		[ $((k + 1)) -lt "$TB_RACKS" ] && ifs+=("${TB_P}x$k")
		[ "$k" -gt 0 ] && ifs+=("${TB_P}y$((k - 1))")
	fi
	for i in "${ifs[@]}"; do
		if [ "$(tb_pmd)" = af_xdp ]; then
			[ "$(tb_link_mtu)" -le 1500 ] || tb_die "TB_PMD=af_xdp: an XDP frame is a page," \
				"the link MTU $(tb_link_mtu) does not fit (use --mtu 1024, or af_packet)"
			cmd+=(--vdev "net_af_xdp$n,iface=$i,start_queue=0,queue_count=${w}")
		else
			cmd+=(--vdev "net_af_packet$n,iface=$i,qdisc_bypass=0$q$(tb_af_ring)")
		fi
		n=$((n + 1))
	done
	cmd+=(--)
	# net_af_xdp: the box's mbufs are its umem's frames, at most a page each
	[ "$(tb_pmd)" = af_xdp ] && cmd+=(--mbuf-size 2176)
	cmd+=(--mode switch --ctl-listen "$(tb_switch "$k")" --token-file "$TB_RUNDIR/token"
		--ctl-socket "$(tb_ctl_sock "$k")" --idle-sleep-us "${TB_IDLE_SLEEP_US:-50}")
	# rails: each box the operator's map of the hosts' MACs to its ports, as a
	# rail fabric is wired (every host's MAC on every rail): nothing learnt,
	# nothing moved (docs/trust.md, --l2-static)
	if [ "${TB_BOXES:-1}" -gt 1 ]; then
		local map="$TB_RUNDIR/l2-static$k"
		: > "$map"
		for ((i = 0; i < TB_HOSTS; i++)); do
			echo "$(tb_host_mac "$i") $i" >> "$map"
		done
		cmd+=(--l2-static "$map")
	fi
	[ -n "${TB_TLS:-}" ] && cmd+=(--tls-cert "$TB_RUNDIR/tls/box.pem" --tls-key "$TB_RUNDIR/tls/box.key")
	[ -n "${TB_BACKEND:-}" ] && cmd+=(--backend "$TB_BACKEND")
	# shellcheck disable=SC2206
	[ -n "${TB_BOX_EXTRA:-}" ] && cmd+=($TB_BOX_EXTRA)
	# box k's alone (TB_BOX1_EXTRA: the second box's), after the others'
	local own="TB_BOX${k}_EXTRA"
	# shellcheck disable=SC2206
	[ -n "${!own:-}" ] && cmd+=(${!own})
	printf '%q ' "${cmd[@]}"
}

# TB_TLS: a CA and the boxes' certificate (every box's address, racks' or
# rails', in its subjectAltName) in $TB_RUNDIR/tls, made as deploy/README.md shows.
tb_tls_make() {
	local d="$TB_RUNDIR/tls" san="" k ec=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
	for ((k = 0; k < $(tb_nbox); k++)); do
		san="${san:+$san,}IP:$(tb_box_addr "$k")"
	done
	mkdir -m 0700 "$d" || tb_die "cannot create $d"
	(cd "$d" && umask 077 &&
		openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 2 -subj /CN=nrt-ca &&
		openssl req "${ec[@]}" -keyout box.key -out box.csr -subj "/CN=$(tb_box_addr 0)" &&
		printf 'subjectAltName=%s\n' "$san" > san.ext &&
		openssl x509 -req -in box.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
			-extfile san.ext -out box.pem && chmod 644 ca.pem box.pem) > "$d/openssl.log" 2>&1 ||
		tb_die "openssl could not make the TLS certificates ($d/openssl.log)"
}

# The boxes' CPU cap (TB_BOX_CPU, --box-cpu FRAC): each box process in a
# cgroup of its own, nrt<ID>box<k>, allowed FRAC of one core (quota FRAC x
# the period, TB_BOX_CPU_PERIOD_US, default 10 ms: at the kernel's 100 ms a
# box capped to 0.25 ran 25 ms then stood 75 ms, a stall its RoCE peers'
# windows see, not a slower box).  The hierarchy with the cpu controller: cgroup v2
# (cpu.max) at /sys/fs/cgroup or /sys/fs/cgroup/unified, else v1's cpu
# (cpu.cfs_quota_us).  Prints "v1|v2 DIR" of the hierarchy's root.
tb_cg_root() {
	local b
	for b in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		if [ -f "$b/cgroup.controllers" ] && grep -qw cpu "$b/cgroup.controllers"; then
			echo "v2 $b"
			return 0
		fi
	done
	for b in /sys/fs/cgroup/cpu /sys/fs/cgroup/cpu,cpuacct /sys/fs/cgroup/cpuacct,cpu; do
		if [ -f "$b/cpu.cfs_quota_us" ]; then
			echo "v1 $b"
			return 0
		fi
	done
	return 1
}

# tb_box_cg_make K: box K's cgroup with its cap; prints its directory.
tb_box_cg_make() {
	local k=$1 v root dir period=${TB_BOX_CPU_PERIOD_US:-10000} quota
	read -r v root <<< "$(tb_cg_root)" || true
	[ -n "${root:-}" ] || tb_die "--box-cpu: no cgroup hierarchy with the cpu controller" \
		"(/sys/fs/cgroup cpu.max, or v1's /sys/fs/cgroup/cpu)"
	quota=$(awk -v f="$TB_BOX_CPU" -v p="$period" 'BEGIN { q = int(f * p + 0.5); if (q < 1000) q = 1000; print q }')
	dir="$root/nrt${TB_ID}box$k"
	if [ "$v" = v2 ] && ! grep -qw cpu "$root/cgroup.subtree_control"; then
		echo +cpu > "$root/cgroup.subtree_control" ||
			tb_die "--box-cpu: cannot enable the cpu controller in $root/cgroup.subtree_control"
	fi
	mkdir -p "$dir" || tb_die "--box-cpu: mkdir $dir failed"
	if [ "$v" = v2 ]; then
		echo "$quota $period" > "$dir/cpu.max"
	else
		echo "$period" > "$dir/cpu.cfs_period_us" && echo "$quota" > "$dir/cpu.cfs_quota_us"
	fi || tb_die "--box-cpu: cannot set the CPU quota of $dir"
	echo "$dir"
}

# The cap box K's cgroup DIR holds now, for the log.
tb_box_cg_cap() {
	if [ -f "$1/cpu.max" ]; then
		echo "cpu.max $(cat "$1/cpu.max")"
	else
		echo "cfs_quota_us $(cat "$1/cpu.cfs_quota_us") / cfs_period_us $(cat "$1/cpu.cfs_period_us")"
	fi
}

# tb_box_cgroups_rm ID: remove run ID's box cgroups (their processes gone);
# teardown and run --cleanup.
tb_box_cgroups_rm() {
	local id=$1 d t
	for d in /sys/fs/cgroup/nrt"${id}"box* /sys/fs/cgroup/unified/nrt"${id}"box* \
		/sys/fs/cgroup/cpu/nrt"${id}"box* /sys/fs/cgroup/cpu,cpuacct/nrt"${id}"box* \
		/sys/fs/cgroup/cpuacct,cpu/nrt"${id}"box*; do
		[ -d "$d" ] || continue
		for t in 1 2 3 4 5 6 7 8 9 10; do
			rmdir "$d" 2>/dev/null && break
			sleep 0.2
		done
		[ ! -d "$d" ] || tb_log "cgroup $d not removed (processes left: $(xargs < "$d/cgroup.procs" 2>/dev/null))"
	done
}

# Wait until box k's control listener accepts TCP connections.
tb_box_wait_ready() {
	local k=$1 deadline=$((SECONDS + ${2:-30})) log
	log=$(tb_box_log "$k")
	while [ $SECONDS -lt $deadline ]; do
		if ! kill -0 "${TB_BOX_PIDS[$k]}" 2>/dev/null; then
			tail -n 30 "$log" >&2
			tb_die "netreduce-switch of box $k exited during start (log above, $log)"
		fi
		if ip netns exec "$(tb_ns_box "$k")" bash -c \
			"exec 3<>/dev/tcp/$(tb_box_addr "$k")/${TB_CTL_PORT}" 2>/dev/null; then
			return 0
		fi
		sleep 0.2
	done
	tail -n 30 "$log" >&2
	tb_die "netreduce-switch control listener $(tb_switch "$k") not up after ${2:-30} s"
}

# Start the box of every rack that has one, or every rail's (TB_BOX_PID: box
# 0's); with TB_BOX_CPU each in its cgroup, joined before the box runs (so
# every thread it starts is capped).
tb_box_start() {
	local k cmd log cg
	TB_BOX_PIDS=()
	TB_BOX_CGS=()
	for ((k = 0; k < $(tb_nbox); k++)); do
		TB_BOX_PIDS+=("")
		tb_rack_box "$k" || continue
		[ -x "$(tb_bin_switch)" ] || tb_die "$(tb_bin_switch) not built (ninja -C $TB_BUILD" \
			"netreduce-switch), or use --no-box for ring/mpi over a Linux bridge"
		cmd=$(tb_box_cmd "$k")
		log=$(tb_box_log "$k")
		cg=""
		if [ -n "${TB_BOX_CPU:-}" ]; then
			cg=$(tb_box_cg_make "$k") || tb_die "--box-cpu: no cgroup for box $k (above)"
		fi
		TB_BOX_CGS[k]=$cg
		echo "# $cmd" >> "$log"
		# the subshell joins the cgroup (in the root mount namespace: ip netns
		# exec mounts its own /sys), then becomes the box
		(
			[ -z "$cg" ] || echo "$BASHPID" > "$cg/cgroup.procs" ||
				{ echo "cannot join cgroup $cg" >&2; exit 1; }
			exec ip netns exec "$(tb_ns_box "$k")" bash -c "ulimit -l unlimited 2>/dev/null; exec $cmd"
		) >> "$log" 2>&1 &
		TB_BOX_PIDS[k]=$!
		tb_track "$!"
	done
	TB_BOX_PID=${TB_BOX_PIDS[0]}
	local what=rack
	[ "${TB_BOXES:-1}" -gt 1 ] && what=rail
	for ((k = 0; k < $(tb_nbox); k++)); do
		[ -n "${TB_BOX_PIDS[$k]}" ] || continue
		tb_box_wait_ready "$k" 40
		tb_log "box of $what $k up (pid ${TB_BOX_PIDS[$k]}, control $(tb_switch "$k")," \
			"socket $(tb_ctl_sock "$k"))"
		cg=${TB_BOX_CGS[$k]}
		if [ -n "$cg" ]; then
			local th="$cg/cgroup.threads"
			[ -f "$th" ] || th="$cg/tasks"
			grep -qx "${TB_BOX_PIDS[$k]}" "$cg/cgroup.procs" ||
				tb_die "box $k (pid ${TB_BOX_PIDS[$k]}) is not in its cgroup $cg"
			tb_log "box $k capped at $TB_BOX_CPU core: cgroup $cg, $(tb_box_cg_cap "$cg")," \
				"$(wc -l < "$cg/cgroup.procs") process, $(wc -l < "$th") threads"
		fi
	done
}

tb_box_stop() {
	local pid t
	for pid in "${TB_BOX_PIDS[@]}"; do
		[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null
	done
	for pid in "${TB_BOX_PIDS[@]}"; do
		[ -n "$pid" ] || continue
		for t in $(seq 50); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	TB_BOX_PIDS=()
	TB_BOX_PID=
}

# netreducectl against the box's UNIX socket.
tb_ctl() {
	ip netns exec "$TB_NS_BOX" "$(tb_bin_ctl)" --socket "$TB_CTL_SOCK" "$@"
}
# tb_ctl_box K ARGS: netreducectl against box K's socket.
tb_ctl_box() {
	local k=$1
	shift
	ip netns exec "$(tb_ns_box "$k")" "$(tb_bin_ctl)" --socket "$(tb_ctl_sock "$k")" "$@"
}

# tb_host_env I RANK WORLD ROOT_I [P]: the environment of process P (default
# 0) of host I: libnetreduce's NR_*, and torch.distributed's env://
# rendezvous (MASTER_ADDR/PORT: the job's first host, on the data path
# through the box; RANK, WORLD_SIZE) with Gloo bound to the host's data
# interface (GLOO_SOCKET_IFNAME), NR_INTER_GBPS when the links are shaped
# (TB_RATE), plus TB_HOST_ENV (extra NAME=VALUE words).
# Over a plain bridge there is no box: NR_BOX stays unset, so the library
# runs without one (ring only) instead of trying to register a job.  NR_TOKEN
# goes to every host, a rack without a box too: the rendezvous' key comes from
# it, and every rank needs the same (host/README.md, NR_JOB_SECRET).
# Boxes as rails (TB_BOXES = K > 1): NR_BOX lists the K boxes (box 0 first),
# NR_RAILS the host's interface to each (rail 0 its data link), NR_CHANNELS
# TB_CHANNELS or K: channel c goes to box c mod K over rail c mod K.
tb_host_env() {
	local i=$1 rank=$2 world=$3 root=$4 proc=${5:-0} box="NR_TOKEN=$TB_TOKEN" k b
	local nboxes=${TB_BOXES:-1} list="" rails="" chan=${TB_CHANNELS:-}
	k=$(tb_rack_of "$i")
	if tb_rack_box "$k" && [ -z "${TB_HOST_NOBOX:-}" ]; then
		box="NR_BOX=$(tb_switch "$k") NR_TOKEN=$TB_TOKEN"
		if [ "$nboxes" -gt 1 ]; then
			# boxes as rails: every box, box 0 first, and the host's rail
			# to each; channels a multiple of the boxes (default one each)
			for ((b = 0; b < nboxes; b++)); do
				list="${list:+$list,}$(tb_switch "$b")"
				rails="${rails:+$rails,}$(tb_rail_dev "$i" "$b")"
			done
			box="NR_BOX=$list NR_RAILS=$rails NR_TOKEN=$TB_TOKEN"
			chan=${chan:-$nboxes}
		fi
		# the control network is the testbed's own: plain text said so
		# (NR_TLS=off), but with --tls; TB_PLAIN_UNSAID=1 leaves both
		# out, as a user who forgot would (e2e tls: the library refuses)
		if [ -n "${TB_TLS:-}" ]; then
			box="$box NR_TLS_CA=$TB_RUNDIR/tls/ca.pem"
		elif [ -z "${TB_PLAIN_UNSAID:-}" ]; then
			box="$box NR_TLS=off"
		fi
	fi
	[ -n "$chan" ] && box="$box NR_CHANNELS=$chan"
	# shaped host links: the library sizes its soft window and picks its
	# hierarchy by the link's speed, which the veth's sysfs speed does not tell
	[ "${TB_RATE:-0}" != 0 ] && box="$box NR_INTER_GBPS=$(awk -v r="$TB_RATE" 'BEGIN{print r / 1000}')"
	echo "NR_RANK=$rank NR_WORLD=$world NR_ROOT=$(tb_data_ip "$root"):$((TB_ROOT_PORT + root))" \
		"$box NR_MTU=$TB_MTU NR_TRANSPORT=${TB_TRANSPORT:-soft} NR_ADDR=$(tb_data_ip "$i" "$proc")" \
		"MASTER_ADDR=$(tb_data_ip "$root") MASTER_PORT=$((TB_TORCH_PORT + root))" \
		"RANK=$rank WORLD_SIZE=$world GLOO_SOCKET_IFNAME=${TB_P}d$i ${TB_HOST_ENV:-}"
}

# tb_launch TAG FIRST COUNT CMD...: start CMD in hosts FIRST..FIRST+COUNT-1,
# TB_LAUNCH_PROCS (default 1) processes each (ranks host by host: process p
# of the job's host r is rank r * procs + p) in the background.  Rank 0's
# stdout goes to RUNDIR/TAG.out; every process's stderr (and other ranks'
# stdout) to RUNDIR/TAG.h<i>[.<p>].log.  Sets TB_LAUNCH_PIDS.
tb_launch() {
	local tag=$1 first=$2 count=$3 procs=${TB_LAUNCH_PROCS:-1} r i p rank log
	shift 3
	TB_LAUNCH_PIDS=()
	: > "$TB_RUNDIR/$tag.out"
	for ((r = 0; r < count; r++)); do
		i=$((first + r))
		for ((p = 0; p < procs; p++)); do
			local envs
			rank=$((r * procs + p))
			envs=$(tb_host_env "$i" "$rank" $((count * procs)) "$first" "$p")
			log="$TB_RUNDIR/$tag.h$i.log"
			[ "$p" = 0 ] || log="$TB_RUNDIR/$tag.h$i.$p.log"
			if [ "$rank" = 0 ]; then
				# shellcheck disable=SC2086
				ip netns exec "$(tb_ns_host "$i")" env $envs "$@" \
					> "$TB_RUNDIR/$tag.out" 2> "$log" &
			else
				# shellcheck disable=SC2086
				ip netns exec "$(tb_ns_host "$i")" env $envs "$@" > "$log" 2>&1 &
			fi
			TB_LAUNCH_PIDS+=($!)
			tb_track "$!"
		done
	done
}

# CPU ticks (user + system, all threads) a process used so far, 0 once it is
# gone; tb_cpu_note keeps the last seen in TB_CPU[pid] (tb_wait polls it, so a
# host's figure misses at most its last 0.1 s) and the busiest half second's
# use in TB_CPU_PEAK[pid], in thousandths of a core: a run's steady state,
# not diluted by its start, warm-up and check.
declare -gA TB_CPU=() TB_CPU_PEAK=() TB_CPU_T=() TB_CPU_K=()
TB_HZ=$(getconf CLK_TCK 2>/dev/null || echo 100)
tb_cpu_ticks() {
	local f
	f=$(cat "/proc/$1/stat" 2>/dev/null) || { echo 0; return; }
	f=${f##*) }                     # after the command name, field 3 on
	set -- $f
	echo $(( ${12} + ${13} ))       # fields 14 and 15: utime, stime
}
tb_cpu_note() {
	local t now=${EPOCHREALTIME/./} dt
	t=$(tb_cpu_ticks "$1")
	[ "$t" -gt 0 ] || return 0
	TB_CPU[$1]=$t
	if [ -z "${TB_CPU_T[$1]:-}" ]; then
		TB_CPU_T[$1]=$now TB_CPU_K[$1]=$t
		return 0
	fi
	dt=$((now - TB_CPU_T[$1]))
	[ "$dt" -ge 500000 ] || return 0
	local m=$(( (t - TB_CPU_K[$1]) * 1000000000 / TB_HZ / dt ))
	[ "$m" -gt "${TB_CPU_PEAK[$1]:-0}" ] && TB_CPU_PEAK[$1]=$m
	TB_CPU_T[$1]=$now TB_CPU_K[$1]=$t
	return 0
}

# tb_wait TIMEOUT PID...: wait for all; kill all at the timeout.  Sets
# TB_RCS to the exit codes in PID order (124 = timed out).  Must run in the
# shell that started the processes (not in a subshell).
tb_wait() {
	local timeout=$1 deadline pid left rc
	shift
	deadline=$((SECONDS + timeout))
	TB_RCS=()
	local -A timed_out=()
	while :; do
		left=0
		for pid in "$@"; do
			if kill -0 "$pid" 2>/dev/null; then
				left=1
				tb_cpu_note "$pid"
			fi
		done
		for pid in ${TB_WAIT_WATCH:-}; do      # the boxes, while the ranks run
			tb_cpu_note "$pid"
		done
		[ "$left" = 0 ] && break
		if [ $SECONDS -ge $deadline ]; then
			for pid in "$@"; do
				if kill -0 "$pid" 2>/dev/null; then
					timed_out[$pid]=1
					tb_kill_tree "$pid" TERM
				fi
			done
			sleep 1
			for pid in "$@"; do tb_kill_tree "$pid" KILL; done
			break
		fi
		sleep 0.1
	done
	for pid in "$@"; do
		rc=0
		wait "$pid" 2>/dev/null || rc=$?
		[ -n "${timed_out[$pid]:-}" ] && rc=124
		TB_RCS+=("$rc")
	done
}

# Signal a process and its descendants (ip netns exec -> env -> the program).
tb_kill_tree() {
	local pid=$1 sig=${2:-TERM} c
	for c in $(pgrep -P "$pid" 2>/dev/null); do
		tb_kill_tree "$c" "$sig"
	done
	kill "-$sig" "$pid" 2>/dev/null || true
}

# Kill every process still inside our namespaces (ours by construction),
# delete the namespaces (which deletes their veths, bridges and qdiscs), the
# boxes' cgroups (--box-cpu) and the run directory.  Safe to call twice and
# from a trap.
tb_teardown() {
	[ -n "${TB_RUNDIR:-}" ] && [ -d "$TB_RUNDIR" ] || return 0
	set +e
	local pid ns
	tb_box_stop
	local k=0
	for pid in "${TB_IMPAIR_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		if [ "$k" = 0 ]; then
			tb_log "$(tail -n 1 "$TB_RUNDIR/impair.log")"
		else
			tb_log "rack $k: $(tail -n 1 "$TB_RUNDIR/impair$k.log")"
		fi
		k=$((k + 1))
	done
	TB_IMPAIR_PIDS=()
	TB_IMPAIR_PID=
	if [ -f "$TB_RUNDIR/pids" ]; then
		while read -r pid; do
			[ -n "$pid" ] && tb_kill_tree "$pid" TERM
		done < "$TB_RUNDIR/pids"
	fi
	if [ -f "$TB_RUNDIR/netns" ]; then
		while read -r ns; do
			for pid in $(ip netns pids "$ns" 2>/dev/null); do
				kill -TERM "$pid" 2>/dev/null
			done
		done < "$TB_RUNDIR/netns"
		sleep 0.3
		while read -r ns; do
			for pid in $(ip netns pids "$ns" 2>/dev/null); do
				kill -KILL "$pid" 2>/dev/null
			done
		done < "$TB_RUNDIR/netns"
		while read -r ns; do
			ip netns del "$ns" 2>/dev/null
		done < "$TB_RUNDIR/netns"
	fi
	tb_box_cgroups_rm "$TB_ID"
	# DPDK leaves its runtime files under /var/run/dpdk/<file-prefix>.
	rm -rf "/var/run/dpdk/${TB_P:?}" "/var/run/dpdk/${TB_P:?}r"* 2>/dev/null
	if [ -n "${TB_KEEP_RUNDIR:-}" ]; then
		tb_log "run dir kept: $TB_RUNDIR"
	else
		rm -rf "$TB_RUNDIR"
	fi
	TB_RUNDIR=
}

# Verify nothing of this run is left (used by the e2e suites).
tb_leftovers() {
	local p=$1
	ip netns list | grep "^$p" || true
	ip -br link | grep "$p" || true
	ls -d "/tmp/nrt-${p#nrt}" 2>/dev/null || true
}
