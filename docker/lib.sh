# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# The netreduce container testbed, as functions: docker/testbed and the
# container test (tests/e2e/docker.sh) source this file.
#
#   dk_engine_up / dk_engine_down   a Docker engine (started here only if none
#                                   answers; stopped again only if started here)
#   dk_images                       debian:12 (mmdebstrap + docker import when
#                                   missing), then netreduce-box and
#                                   netreduce-host, rebuilt only when the
#                                   sources changed
#   dk_up N / dk_down               the topology of one run
#   dk_run ALGO BYTES               nr-allreduce-perf in every host at once
#
# Topology (every name starts with "nrd" + a 4-hex run id; every network is
# --internal, so no frame leaves the containers; every object carries the
# label netreduce.run=ID, which is what dk_down removes):
#
#   host container nrdIDh<i>              box container nrdIDbox
#   +-----------------------+             +--------------------------------+
#   | data 10.79.X.2/24     |-- network --| 10.79.X.254  net_af_packet     |
#   |  + NR_ADDR            |   nrdIDn<i> |              port i of         |
#   |    10.80.S.<i+1>/24   |             |              netreduce-switch  |
#   | ctl 10.78.S.<100+i>/24|-- network --| 10.78.S.254  control TCP :7100 |
#   +-----------------------+   nrdIDctl  +--------------------------------+
#
# X = 32*S + i, S = the first subnet slot (0..7) free on this engine.  A host's
# only data path to the others is its own network nrdIDn<i>, whose only other
# member is the box: RoCEv2 (soft transport), ARP and the rank-0 rendezvous on
# 10.80.S.0/24 all cross netreduce-switch (switch mode: aggregated when
# registered, L2-switched otherwise).  nrdIDctl carries only the hosts' control
# connection to the box.  With the verbs transport the data path is different:
# see docker/rxe.sh.

DK_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DK_TOPDIR=$(cd "$DK_DIR/.." && pwd)
DK_CTL_PORT=7100
DK_ROOT_PORT=29500
DK_MAX_HOSTS=32
DK_BASE=${DK_BASE:-debian:12}
# Docker's classic builder: the client may have no buildx plugin.
export DOCKER_BUILDKIT=0

dk_log() { printf '[docker %s] %s\n' "${DK_ID:-----}" "$*" >&2; }
dk_die() { dk_log "error: $*"; exit 2; }

# dk_step TEXT: a progress line; dk_done: the same line's time.
dk_step() { DK_STEP_T0=$SECONDS; dk_log "$* ..."; }
dk_done() { dk_log "  ${1:-done} ($((SECONDS - DK_STEP_T0)) s)"; }

dk_need_root() {
	[ "$(id -u)" = 0 ] || { echo "docker testbed: must run as root (starts the Docker engine," \
		"installs packages, configures the containers' interfaces); try: sudo $0" >&2; exit 2; }
}

dk_version() { sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$DK_TOPDIR/meson.build" | head -n 1; }

# dk_install PKG...: Debian packages that are not installed yet.
dk_install() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	command -v apt-get >/dev/null || { dk_log "no apt-get to install ${missing[*]}"; return 1; }
	dk_step "installing ${missing[*]} (apt-get)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
		{ apt-get update -qq >/dev/null 2>&1 &&
		  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; } ||
		{ dk_log "apt-get install ${missing[*]} failed"; return 1; }
	dk_done
}

# ---- the engine -------------------------------------------------------------

DK_ENGINE_PID=
DK_ENGINE_LOG=

# A process that runs (a zombie child, exited but not yet waited for, does not).
dk_alive() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st#Z}" = "$st" ]
}

# dk_engine_up LOGDIR: make `docker info` answer.  Returns 1 (with the reason
# in DK_ENGINE_WHY) when no engine can be had; sets DK_ENGINE_PID when it
# started dockerd itself.
dk_engine_up() {
	local logdir=$1 i
	DK_ENGINE_WHY=
	if docker info >/dev/null 2>&1; then
		dk_log "engine: running ($(docker version -f '{{.Server.Version}}' 2>/dev/null)), using it"
		return 0
	fi
	if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
		dk_install docker.io || { DK_ENGINE_WHY="no Docker engine and apt-get install docker.io failed"; return 1; }
	fi
	if [ -S /var/run/docker.sock ] && pgrep -x dockerd >/dev/null; then
		DK_ENGINE_WHY="a dockerd runs but does not answer on /var/run/docker.sock (docker info)"
		return 1
	fi
	dk_step "engine: starting dockerd (--iptables=false --bridge=none)"
	DK_ENGINE_LOG="$logdir/dockerd.log"
	# Its own session: a Ctrl-C of the caller reaches our trap, not dockerd.
	setsid dockerd --iptables=false --ip-forward=false --bridge=none \
		--pidfile "$logdir/dockerd.pid" > "$DK_ENGINE_LOG" 2>&1 < /dev/null &
	DK_ENGINE_PID=$!
	for ((i = 0; i < 600; i++)); do
		if docker info >/dev/null 2>&1; then
			dk_done "engine up, dockerd pid $DK_ENGINE_PID"
			return 0
		fi
		dk_alive "$DK_ENGINE_PID" || break
		sleep 0.1
	done
	DK_ENGINE_WHY="dockerd did not start: $(grep -iE 'error|fail' "$DK_ENGINE_LOG" | tail -n 1)"
	dk_engine_down
	return 1
}

# Stop the engine if (and only if) dk_engine_up started it: dockerd stops the
# containerd it started.  Waits until both are gone.
dk_engine_down() {
	[ -n "$DK_ENGINE_PID" ] || return 0
	local i ctrd
	ctrd=$(cat /var/run/docker/containerd/containerd.pid 2>/dev/null || true)
	dk_step "engine: stopping dockerd (pid $DK_ENGINE_PID)"
	kill -TERM "$DK_ENGINE_PID" 2>/dev/null || true
	for ((i = 0; i < 300; i++)); do
		if dk_alive "$DK_ENGINE_PID" || { [ -n "$ctrd" ] && dk_alive "$ctrd"; }; then
			sleep 0.1
		else
			break
		fi
	done
	if dk_alive "$DK_ENGINE_PID"; then
		dk_log "dockerd did not stop in 30 s: killing it"
		kill -KILL "$DK_ENGINE_PID" 2>/dev/null || true
	fi
	wait "$DK_ENGINE_PID" 2>/dev/null || true
	# dockerd leaves its handle on this namespace mounted.
	if mountpoint -q /run/docker/netns/default 2>/dev/null; then
		umount /run/docker/netns/default 2>/dev/null || true
	fi
	DK_ENGINE_PID=
	dk_done "engine stopped"
}

# ---- images -----------------------------------------------------------------

# The base image: debian:12 as it is, else a minbase bookworm from mmdebstrap
# (the machine's Debian mirror when its apt sources name bookworm) imported
# under that name and labelled as ours (docker/testbed --clean-images removes
# only that one).
dk_base_image() {
	local work=$1 src=()
	docker image inspect "$DK_BASE" >/dev/null 2>&1 && return 0
	[ "$DK_BASE" = debian:12 ] || dk_die "base image $DK_BASE not found (docker pull $DK_BASE)"
	dk_install mmdebstrap || dk_die "no debian:12 image and mmdebstrap cannot be installed"
	if [ -f /etc/apt/sources.list.d/debian.sources ] &&
		grep -q bookworm /etc/apt/sources.list.d/debian.sources; then
		src=(/etc/apt/sources.list.d/debian.sources)
	fi
	dk_step "base image debian:12: mmdebstrap --variant=minbase bookworm"
	# No man pages, locales or docs (but the copyright files), here and in
	# every package the images add later (the dpkg option stays in the image).
	mmdebstrap --quiet --variant=minbase --dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		bookworm "$work/deb12.tar" "${src[@]}" > "$work/mmdebstrap.log" 2>&1 ||
		{ tail -n 20 "$work/mmdebstrap.log" >&2; dk_die "mmdebstrap failed (log above)"; }
	docker import --change 'LABEL netreduce.base=mmdebstrap' "$work/deb12.tar" debian:12 >/dev/null ||
		dk_die "docker import of the mmdebstrap tarball failed"
	rm -f "$work/deb12.tar"
	dk_done "imported as debian:12"
}

# The files of the source tree that go into the images: tracked and new files
# (git), else every file but the build directories; never the docs, except
# deploy/'s, which ninja install puts on a server (deploy/meson.build).
dk_source_files() {
	(
		cd "$DK_TOPDIR" || exit 1
		if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
			git ls-files -co --exclude-standard
		else
			find . -type f ! -path './.git/*' ! -path './build*' | sed 's|^\./||'
		fi
	) | grep -vE '^(docker|docs|\.ci)/|^\.git' | awk '!/\.md$/ || /^deploy\//' | sort -u |
		while IFS= read -r f; do [ -f "$DK_TOPDIR/$f" ] && printf '%s\n' "$f"; done
}

# dk_context DIR: the build context as DIR/ctx.tar (src/ = sources, rt/ = the
# entry scripts, Dockerfile), byte-for-byte the same for the same files, so its
# hash (and NR_BOX_PMDS, the box image's extra DPDK driver packages) names the
# images (DK_TAG).
dk_context() {
	local work=$1 stage=$1/ctx
	rm -rf "$stage"
	mkdir -p "$stage/src" "$stage/rt"
	dk_source_files > "$work/files"
	[ -s "$work/files" ] || dk_die "no source files found under $DK_TOPDIR"
	(cd "$DK_TOPDIR" && xargs -d '\n' cp --parents -t "$stage/src" < "$work/files")
	cp "$DK_DIR/box-entry.sh" "$DK_DIR/host-entry.sh" "$stage/rt/"
	cp "$DK_DIR/Dockerfile" "$stage/"
	tar -C "$stage" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
		--mode='u+rwX,go+rX,go-w' -cf "$work/ctx.tar" .
	rm -rf "$stage"
	local h
	h=$(sha256sum "$work/ctx.tar" | cut -d' ' -f1)
	# Extra DPDK drivers in the box image make other images.
	[ -z "${NR_BOX_PMDS:-}" ] || h=$(echo "$h $NR_BOX_PMDS" | sha256sum | cut -d' ' -f1)
	DK_TAG="$(dk_version)-${h:0:12}"
}

# dk_build WORKDIR TARGET TAG...: docker build --target TARGET of the context.
dk_build() {
	local work=$1 target=$2 t tags=()
	shift 2
	for t in "$@"; do tags+=(-t "$t"); done
	docker build --force-rm --network host --target "$target" --label "netreduce.version=$(dk_version)" \
		--build-arg "BOX_PMDS=${NR_BOX_PMDS:-}" "${tags[@]}" - < "$work/ctx.tar" > "$work/build-$target.log" 2>&1 ||
		{ tail -n 30 "$work/build-$target.log" >&2; dk_die "docker build --target $target failed (log above)"; }
}

# dk_images WORKDIR: netreduce-box:DK_TAG and netreduce-host:DK_TAG, built
# when missing, also tagged VERSION.  The compilers and -dev packages stay
# cached as netreduce-build-deps:VERSION, so a source change only recompiles;
# the compile stage's own layers, older netreduce-* tags and their layers are
# removed, so one set stays cached (make docker-clean removes it).
dk_images() {
	local work=$1 kind img ver t what built=0
	ver=$(dk_version)
	dk_base_image "$work"
	dk_context "$work"
	for kind in host box; do
		img="netreduce-$kind:$DK_TAG"
		if docker image inspect "$img" >/dev/null 2>&1; then
			dk_log "image $img: up to date"
			continue
		fi
		if [ "$built" = 0 ]; then
			dk_step "build dependencies netreduce-build-deps:$ver (apt-get; cached after the first time)"
			dk_build "$work" build-deps "netreduce-build-deps:$ver"
			dk_done
		fi
		what="the runtime packages"
		[ "$built" = 1 ] || what="compiles the sources, then $what"
		dk_step "image $img: building ($what)"
		dk_build "$work" "$kind" "$img" "netreduce-$kind:$ver"
		dk_done "$(docker image inspect -f '{{.Size}}' "$img" | awk '{printf "%.0f MB", $1 / 1e6}')"
		built=1
		for t in $(docker images --format '{{.Repository}}:{{.Tag}}' "netreduce-$kind"); do
			case $t in "$img" | "netreduce-$kind:$ver") ;; *) docker rmi "$t" >/dev/null 2>&1 || true ;; esac
		done
	done
	if [ "$built" = 1 ]; then
		docker image prune -f --filter label=netreduce.stage=build >/dev/null 2>&1 || true
		docker image prune -f --filter label=netreduce.version >/dev/null 2>&1 || true
	fi
	rm -f "$work/ctx.tar" "$work/files"
}

# ---- the topology of one run ------------------------------------------------

dk_data_net() { echo "10.79.$((32 * DK_SLOT + $1))"; }
dk_data_ip() { echo "10.80.$DK_SLOT.$(($1 + 1))"; }
dk_ctl_ip() { echo "10.78.$DK_SLOT.$1"; }
dk_host_mac() { printf '02:80:%02x:%02x:%02x:%02x' $((0x${DK_ID:0:2})) $((0x${DK_ID:2:2})) "$DK_SLOT" $(($1 + 1)); }
dk_box_ip() { dk_ctl_ip 254; }

# dk_init WORKDIR: pick a run id (names) and a token.
dk_init() {
	DK_WORK=$1
	DK_ID=$(od -An -N2 -tx1 /dev/urandom | tr -d ' \n')
	DK_P="nrd$DK_ID"
	DK_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	DK_HOSTS=0
	DK_SLOT=
	DK_LABEL="netreduce.run=$DK_ID"
}

# Create an --internal network (optional third argument: its MTU); fails when
# its subnet is taken.
dk_net() {
	docker network create --internal --label "$DK_LABEL" --subnet "$2" \
		${3:+-o com.docker.network.driver.mtu=$3} "$1" >/dev/null 2>&1
}

# The data networks' Ethernet MTU for the hosts' RoCE path MTU DK_MTU (default
# 4096): the payload plus IP, UDP, BTH, RETH and ICRC with room to spare,
# never under 1500 (docker/box-entry.sh sizes its ports' frames to it).
dk_link_mtu() { local m=$((${DK_MTU:-4096} + 104)); [ "$m" -ge 1500 ] || m=1500; echo "$m"; }

# dk_ctl_net N: the run's subnet slot and its control network.
dk_ctl_net() {
	local s
	[ "$1" -ge 2 ] && [ "$1" -le "$DK_MAX_HOSTS" ] || dk_die "--hosts must be 2..$DK_MAX_HOSTS"
	DK_HOSTS=$1
	for s in 0 1 2 3 4 5 6 7; do
		if dk_net "${DK_P}ctl" "10.78.$s.0/24"; then DK_SLOT=$s; break; fi
	done
	[ -n "$DK_SLOT" ] || dk_die "no free subnet slot (10.78.0-7.0/24 all taken on this engine;" \
		"remove stale runs: docker/testbed --cleanup)"
	# Every container: tini as PID 1 (signals, reaping), the run's label, no
	# IPv6 chatter on the links.
	DK_COMMON=(--init --label "$DK_LABEL" --sysctl net.ipv6.conf.all.disable_ipv6=1
		--sysctl net.ipv6.conf.default.disable_ipv6=1 -e "NR_RATE_MBIT=${DK_RATE:-0}")
}

# dk_box_create DOCKER_CREATE_ARGS...: the box container on the control network.
dk_box_create() {
	docker create --name "${DK_P}box" "${DK_COMMON[@]}" --network "${DK_P}ctl" --ip "$(dk_box_ip)" \
		--cap-add NET_ADMIN --cap-add NET_RAW --cap-add IPC_LOCK \
		-e "NR_CTL_ADDR=$(dk_box_ip)" -e "NR_CTL_PORT=$DK_CTL_PORT" -e "NR_TOKEN=$DK_TOKEN" \
		"$@" "netreduce-box:$DK_TAG" > /dev/null || dk_die "docker create ${DK_P}box failed"
}

# dk_up N: networks, box, hosts; returns when every host is configured and
# the box's control listener accepts connections.  DK_RATE (Mbit/s, 0 = off)
# shapes every data link both ways (htb in the containers); DK_MTU is the
# hosts' RoCE MTU, the data networks' MTU follows (dk_link_mtu).
dk_up() {
	local n=$1 i neigh=""
	dk_step "testbed $DK_P: $n hosts, networks"
	dk_ctl_net "$n"
	for ((i = 0; i < n; i++)); do
		dk_net "${DK_P}n$i" "$(dk_data_net "$i").0/24" "$(dk_link_mtu)" ||
			dk_die "docker network create ${DK_P}n$i ($(dk_data_net "$i").0/24, MTU $(dk_link_mtu)) failed"
		neigh="$neigh${neigh:+ }$(dk_data_ip "$i")=$(dk_host_mac "$i")"
	done
	dk_step "testbed $DK_P: box"
	dk_box_create -e NR_DATA_PREFIX=10.79.
	for ((i = 0; i < n; i++)); do
		docker network connect --ip "$(dk_data_net "$i").254" "${DK_P}n$i" "${DK_P}box" ||
			dk_die "docker network connect ${DK_P}n$i ${DK_P}box failed"
	done
	docker start "${DK_P}box" > /dev/null || dk_die "docker start ${DK_P}box failed"
	dk_box_wait_ready 60
	dk_done "box up, control $(dk_box_ip):$DK_CTL_PORT"
	dk_step "testbed $DK_P: hosts"
	for ((i = 0; i < n; i++)); do
		docker create --name "${DK_P}h$i" "${DK_COMMON[@]}" --network "${DK_P}n$i" \
			--ip "$(dk_data_net "$i").2" --cap-add NET_ADMIN -e "NR_DATA_MAC=$(dk_host_mac "$i")" \
			-e "NR_RANK=$i" -e "NR_WORLD=$n" -e "NR_ROOT=$(dk_data_ip 0):$DK_ROOT_PORT" \
			-e "NR_ADDR=$(dk_data_ip "$i")" -e NR_DATA_PREFIXLEN=24 -e NR_DATA_PREFIX=10.79. \
			-e "NR_BOX=$(dk_box_ip):$DK_CTL_PORT" -e "NR_TOKEN=$DK_TOKEN" -e NR_TLS=off \
			-e NR_TRANSPORT=soft -e "NR_NEIGH=$neigh" -e "NR_MTU=${DK_MTU:-4096}" \
			"netreduce-host:$DK_TAG" > /dev/null || dk_die "docker create ${DK_P}h$i failed"
		docker network connect --ip "$(dk_ctl_ip $((100 + i)))" "${DK_P}ctl" "${DK_P}h$i" ||
			dk_die "docker network connect ${DK_P}ctl ${DK_P}h$i failed"
		docker start "${DK_P}h$i" > /dev/null || dk_die "docker start ${DK_P}h$i failed"
	done
	for ((i = 0; i < n; i++)); do dk_host_wait_ready "$i" 30; done
	dk_done "$n hosts configured"
}

dk_box_wait_ready() {
	local deadline=$((SECONDS + $1))
	while [ $SECONDS -lt $deadline ]; do
		if [ "$(docker inspect -f '{{.State.Running}}' "${DK_P}box" 2>/dev/null)" != true ]; then
			docker logs --tail 30 "${DK_P}box" >&2 2>&1
			dk_die "the box container exited during start (its log above)"
		fi
		docker exec "${DK_P}box" bash -c "exec 3<>/dev/tcp/$(dk_box_ip)/$DK_CTL_PORT" 2>/dev/null && return 0
		sleep 0.3
	done
	docker logs --tail 30 "${DK_P}box" >&2 2>&1
	dk_die "box control listener $(dk_box_ip):$DK_CTL_PORT not up after $1 s (box log above)"
}

dk_host_wait_ready() {
	local i=$1 deadline=$((SECONDS + $2))
	while [ $SECONDS -lt $deadline ]; do
		docker exec "${DK_P}h$i" test -e /run/nr-ready 2>/dev/null && return 0
		if [ "$(docker inspect -f '{{.State.Running}}' "${DK_P}h$i" 2>/dev/null)" != true ]; then
			break
		fi
		sleep 0.2
	done
	docker logs --tail 20 "${DK_P}h$i" >&2 2>&1
	dk_die "host container ${DK_P}h$i not configured after $2 s (its log above)"
}

# dk_run TAG ALGO PERF_ARGS...: nr-allreduce-perf in every host at once (rank 0
# last); rank 0's JSON lines in WORK/TAG.out, every rank's stderr in
# WORK/TAG.h<i>.log.  Returns 0, 1 (wrong elements) or 2 (a rank failed or
# timed out after DK_TIMEOUT seconds).
dk_run() {
	local tag=$1 i rc worst=0 pids=()
	shift
	for ((i = DK_HOSTS - 1; i >= 0; i--)); do
		if [ "$i" = 0 ]; then
			timeout -k 5 "${DK_TIMEOUT:-300}" docker exec "${DK_P}h$i" nr-allreduce-perf "$@" \
				> "$DK_WORK/$tag.out" 2> "$DK_WORK/$tag.h$i.log" &
		else
			timeout -k 5 "${DK_TIMEOUT:-300}" docker exec "${DK_P}h$i" nr-allreduce-perf "$@" \
				> "$DK_WORK/$tag.h$i.log" 2>&1 &
		fi
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		rc=0
		wait "$i" || rc=$?
		if [ "$rc" = 1 ] && [ "$worst" = 0 ]; then worst=1; fi
		if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then worst=2; fi
	done
	if [ "$worst" = 2 ]; then
		for ((i = 0; i < DK_HOSTS; i++)); do
			[ -s "$DK_WORK/$tag.h$i.log" ] || continue
			echo "---- ${DK_P}h$i" >&2
			tail -n 15 "$DK_WORK/$tag.h$i.log" >&2
		done
		echo "---- ${DK_P}box" >&2
		docker logs --tail 15 "${DK_P}box" >&2 2>&1
	fi
	return "$worst"
}

# What is left of run ID (containers, networks) on the engine: empty when clean.
dk_leftovers() {
	docker ps -aq --filter "label=netreduce.run=$1"
	docker network ls -q --filter "label=netreduce.run=$1"
}

# dk_remove ID: every container and network labelled with run ID.
dk_remove() {
	local c n
	c=$(docker ps -aq --filter "label=netreduce.run=$1")
	# shellcheck disable=SC2086
	[ -z "$c" ] || docker rm -f $c > /dev/null 2>&1
	n=$(docker network ls -q --filter "label=netreduce.run=$1")
	# shellcheck disable=SC2086
	[ -z "$n" ] || docker network rm $n > /dev/null 2>&1
}

# Remove the run's containers and networks (safe to call twice, from a trap).
dk_down() {
	[ -n "${DK_ID:-}" ] || return 0
	if docker info >/dev/null 2>&1; then
		dk_remove "$DK_ID"
		[ -z "$(dk_leftovers "$DK_ID")" ] || dk_log "warning: left on the engine: $(dk_leftovers "$DK_ID" | tr '\n' ' ')"
	fi
	dk_log "testbed $DK_P removed"
	DK_ID=
}
