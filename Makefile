# netreduce: the two commands of the README, and a few more.
#   make demo    namespace testbed, 4 hosts, through the box and the ring baseline
#   make test    every suite CI runs (unit, golden, EAL, end-to-end, fault, PyTorch, RTL, fuzz smoke,
#                the container testbed)
#   (make demo-rtl: the same testbed with the aggregator's RTL as the box's dataplane)
#   make demo-docker  the same as make demo, with the box and the hosts in containers
# Debian packages by need: make deps (root) installs all of them; make build installs
# none and names what it misses (no root needed); make demo installs only the demo's;
# make test installs all (CI runs it on a fresh machine).

SHELL := /bin/bash
BUILD ?= build
ASAN  ?= build-asan
FUZZ  ?= build-fuzz
FUZZ_SECONDS ?= 60
SOAK_MINUTES ?= 30
MESON_TEST := meson test --print-errorlogs --num-processes 2

# make build: the compilers and libraries meson looks for
BUILD_PKGS := build-essential pkg-config meson ninja-build python3 \
	libdpdk-dev libnuma-dev libibverbs-dev librdmacm-dev libcmocka-dev libisal-dev libpcap-dev \
	libjansson-dev zlib1g-dev libssl-dev openssl
# make demo: those and the testbed's tools
DEMO_PKGS := $(BUILD_PKGS) iproute2 ethtool procps psmisc jq
# the scale model (sim/, netreduce-plan): SimGrid and a C++ JSON library; make
# build skips it where they are missing
SIM_PKGS := libsimgrid-dev nlohmann-json3-dev
# make test and the rest: the sanitizers and fuzzers (clang), the RTL (verilator,
# iverilog, yosys), captures (tshark), MPI, containers, PyTorch, valgrind, and
# the operators' tools the deploy checks use: Prometheus and promtool (the
# e2e-prometheus scenario, promtool check metrics), the dashboard's JSON schema
# check (python3-jsonschema), curl, systemd-nspawn (deploy-systemd: the unit
# under systemd in a container); systemd-analyze comes with systemd
DEB_PKGS := $(DEMO_PKGS) clang llvm libclang-rt-14-dev dpdk-dev ibverbs-providers \
	tshark openmpi-bin libopenmpi-dev docker.io mmdebstrap \
	python3-torch python3-sklearn python3-matplotlib python3-numpy \
	python3-venv python3-setuptools python3-wheel \
	verilator iverilog yosys valgrind abigail-tools xz-utils clang-format $(SIM_PKGS) \
	prometheus python3-jsonschema curl systemd-container
# the packages of $(1) that are not installed
missing_pkgs = $(shell for p in $(1); do \
	dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done)
# install the packages of $(1) that are missing (root), or say how
define install_pkgs
	@missing="$(call missing_pkgs,$(1))"; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "make $@: missing Debian packages: $$missing" >&2; \
			echo "  install them as root: sudo make $(or $(MAKECMDGOALS),$@)" \
				"(or sudo apt-get install $$missing)" >&2; \
			exit 2; \
		fi; \
		echo "== installing Debian packages:" $$missing; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	fi
endef

DOCKER_HOSTS ?= 4
# torch 2.6 (Debian 13's) for the PyTorch suites beside Debian 12's 1.13: a root
# made once with mmdebstrap and cached here (tests/python/torch-env)
export NR_TORCH2_ROOT ?= /var/cache/netreduce/torch2.6-trixie
# the Python with a CUDA build of torch, for make gpu-check
GPU_PYTHON ?= python3

.PHONY: all reconfigure bench-transport deps deps-build deps-demo deps-demo-rtl deps-sim build asan torch2-root gpu-check gpu-carry test test-large demo demo-rtl demo-docker docker-clean bench bench-instr bench-e2e bench-accuracy bench-train bench-hier bench-boxes bench-coll bench-loss bench-dlcp sim-validate sim-report fuzz soak soak-tables rtl-long clean help

## the same as make build
all: build

## this list, from the "## " lines above each target of this Makefile
help:
	@awk '/^## /{h = h (h ? "\n" : "") substr($$0, 4); next} \
		/^[a-z][a-z0-9-]*:/ && h {split($$0, a, ":"); n = split(h, l, "\n"); \
			printf "make %-16s %s\n", a[1], l[1]; \
			for (i = 2; i <= n; i++) printf "%22s%s\n", "", l[i]} {h = ""}' \
		$(firstword $(MAKEFILE_LIST))

## install every Debian package the targets use (root)
deps:
	$(call install_pkgs,$(DEB_PKGS))

## install the packages make demo needs (root)
deps-demo:
	$(call install_pkgs,$(DEMO_PKGS))

## install the packages make demo-rtl needs (root)
deps-demo-rtl:
	$(call install_pkgs,$(DEMO_PKGS) verilator)

# make build installs nothing: it names what is missing and how to install it
## name the Debian packages make build needs and lacks (installs none)
deps-build:
	@missing="$(call missing_pkgs,$(BUILD_PKGS))"; \
	if [ -n "$$missing" ]; then \
		echo "make build: missing Debian packages: $$missing" >&2; \
		echo "  install them once as root: sudo make deps (everything: tests too)" \
			"or sudo apt-get install $$missing" >&2; \
		exit 2; \
	fi

$(BUILD)/build.ninja:
	meson setup $(BUILD) --buildtype=release -Db_ndebug=false

# (the scale model runs from $(BUILD): SimGrid's actors switch stacks, which the
# sanitizers do not follow)
$(ASAN)/build.ninja:
	meson setup $(ASAN) --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false \
		-Drtl=disabled -Dsim=disabled

# DPDK on (the box's burst loop is a target): its headers and its shared
# libraries work under clang with ASan and UBSan (the libraries themselves
# are not instrumented, the box's own code is)
$(FUZZ)/build.ninja:
	CC=clang meson setup $(FUZZ) --buildtype=debugoptimized -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false -Drtl=disabled -Dsim=disabled

## release build in build/ (BUILD) (any user; names missing packages)
build: deps-build $(BUILD)/build.ninja
	ninja -C $(BUILD)

## debug build with ASan and UBSan in build-asan/ (ASAN; the unit and golden suites)
asan: deps-build $(ASAN)/build.ninja
	ninja -C $(ASAN)

# Not fatal: without Debian 13's mirror the torch 2.6 tests skip and say why.
## the torch 2.6 root the PyTorch suites also run on (make test makes it)
torch2-root: deps
	@tests/python/torch-env make || \
		echo "WARNING: no torch 2.6 root: the torch2 tests will skip (tests/python/torch-env make)"

# A build directory configured before make test installed everything (make demo
# installs only the demo's packages, so build/ may have no RTL or scale model):
# configured again, so that every feature now installed is built and tested.
## meson setup --reconfigure the build directories that exist, so that every
## feature installed since they were configured is built (make test runs it)
reconfigure: deps
	@for d in $(BUILD) $(ASAN); do \
		if [ -f $$d/build.ninja ]; then \
			echo "== meson setup --reconfigure $$d (features installed since it was configured)"; \
			meson setup --reconfigure $$d > $$d/reconfigure.log 2>&1 || \
				{ cat $$d/reconfigure.log; echo "make: $$d: reconfigure failed; make clean" >&2; exit 2; }; \
		fi; \
	done

## all suites, as CI runs them (root)
test: deps reconfigure build asan torch2-root
	rm -f $(ASAN)/meson-logs/*.json $(BUILD)/meson-logs/*.json
	$(MESON_TEST) -C $(ASAN) --logbase unit --suite unit --suite golden
	$(MESON_TEST) -C $(BUILD) --logbase torch2 --suite torch2
	$(MESON_TEST) -C $(BUILD) --logbase eal --suite eal
	$(MESON_TEST) -C $(BUILD) --logbase e2e --suite e2e
	$(MESON_TEST) -C $(BUILD) --logbase rtl --suite rtl
	$(MESON_TEST) -C $(BUILD) --logbase sim --suite sim
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=5
	tests/summary $(ASAN) $(BUILD)

# On a machine with a CUDA GPU and torch built for it (GPU_PYTHON); skips without.
## netreduce.torch on a CUDA GPU: 4 ranks on it, backend, hook, NR_TORCH_LOCAL=group
## on NCCL, FSDP2; counters, staged all-reduce against host memory (skips without a GPU)
gpu-check: build
	NETREDUCE_LIB=$(CURDIR)/$(BUILD)/host/shared/libnetreduce.so $(GPU_PYTHON) tests/gpu/gpu_check.py

## build-gpu-carry/: libnetreduce and its libraries for a GPU machine without
## Debian's, and a run script for gpu_check.py there (tests/gpu/carry.sh)
gpu-carry: build
	tests/gpu/carry.sh $(BUILD) build-gpu-carry

# Opt-in, not part of make test: the larger testbed topologies (meson suite large).
## the larger testbed topologies, e.g. 4 hosts x 4 processes (root, opt-in)
test-large: build
	$(MESON_TEST) -C $(BUILD) --logbase large --suite large

# Links shaped to 200 Mbit/s so that they, not the 2 CPUs the box and the hosts
# share on a small machine, are the bottleneck: the comparison is then about traffic.
# only what the demo runs: the box, the benchmark program, netreducectl
DEMO_TARGETS := netreduce-switch bench/host/nr-allreduce-perf control/netreducectl

## 4-host namespace testbed: box vs ring, checked (root)
demo: deps-demo $(BUILD)/build.ninja
	ninja -C $(BUILD) $(DEMO_TARGETS)
	tests/testbed/run --build $(BUILD) --hosts 4 --algo netreduce,ring --check \
		--bytes 4K,1M,16M --rate 200

# Needs no local build: the images compile the sources (docker/testbed).
## box and DOCKER_HOSTS (default 4) hosts in containers: box vs ring,
## checked; starts the Docker engine and builds the images if needed (root)
demo-docker:
	docker/testbed --hosts $(DOCKER_HOSTS) --algo netreduce,ring --check \
		--bytes 4K,1M,16M --rate 200

## remove the container testbed's images (and its imported debian:12)
docker-clean:
	docker/testbed --clean-images

# The box with the aggregator's RTL (dataplane/rtl, on Verilator) as its
# dataplane: every frame through the model, a small job, every result checked.
## 3-host testbed, the box running the aggregator's RTL (Verilator), checked (root)
demo-rtl: deps-demo-rtl $(BUILD)/build.ninja
	ninja -C $(BUILD) $(DEMO_TARGETS)
	tests/testbed/run --build $(BUILD) --backend rtl --hosts 3 --algo netreduce --check \
		--bytes 4K,64K,1M --iters 1 --warmup 0

## engine and switch benchmarks (figures only)
bench: build
	$(BUILD)/bench/agg/nr-bench-agg
	$(BUILD)/bench/switch/nr-bench-switch

# Instructions, not time: the same count on a busy machine as on a quiet one.
## the box's instructions a packet by stage (callgrind: exact, load-free)
bench-instr: build
	tools/instr-count --build $(BUILD)

## shaped-link testbed sweep: netreduce vs our ring vs Gloo, fp32 and fp16
## (BENCH_E2E_ARGS: more options, tests/testbed/bench-e2e --help)
bench-e2e: build
	tests/testbed/bench-e2e --build $(BUILD) $(BENCH_E2E_ARGS)

# Opt-in: the soft transport against Gloo's TCP, two ranks both ways, Gbit/s a core by
# CPU time at RoCE MTU 1024 and 4096, on lo, a veth pair and through the box; a perf
# profile of each MTU into $(BUILD)/bench-transport/ (root; BENCH_TRANSPORT_ARGS).
## the soft transport vs Gloo's TCP, 2 ranks both ways: Gbit/s a core
## by CPU time at RoCE MTU 1 and 4 KiB on lo, veth and through the box,
## perf profiles (root; BENCH_TRANSPORT_ARGS, bench/transport/tp_bench.py -h)
bench-transport: build
	mkdir -p $(BUILD)/bench-transport
	/usr/bin/python3 bench/transport/tp_bench.py --build $(BUILD) --paths lo,veth,testbed \
		--perf $(BUILD)/bench-transport --out $(BUILD)/bench-transport/runs.jsonl \
		$(BENCH_TRANSPORT_ARGS)

# examples/train.py (an MLP with 4.5 MB of gradients on sklearn's digits) at 4
# and 8 ranks, every host link shaped to 100 Mbit/s; writes $(BUILD)/bench-train/.
# TORCH=2.6: the ranks on Debian 13's torch 2.6 (default: Debian 12's 1.13).
## PyTorch training on shaped links: netreduce vs gloo vs ring (root);
## TORCH=2.6 on torch 2.6
bench-train: build $(if $(filter 2.6,$(TORCH)),torch2-root)
	tests/testbed/bench-train --build $(BUILD) $(if $(TORCH),--torch $(TORCH))

# Opt-in: the 16-bit accuracy table of docs/16-bit.md, measured through the box.
## 16-bit all-reduce against the exact sum at 4, 8, 16 hosts: the box
## (rounded once) vs our ring and Gloo's (every hop), same data (root; TORCH=2.6)
bench-accuracy: build $(if $(filter 2.6,$(TORCH)),torch2-root)
	tests/testbed/bench-accuracy --build $(BUILD) $(if $(TORCH),--torch $(TORCH))

## 4 hosts x 2 processes (parallel, hierarchical, flat ring) at two
## intra/inter ratios; 2 racks x 4 hosts vs one ring, inter-rack bytes (root)
bench-hier: build
	tests/testbed/bench-hier --build $(BUILD)

## a job striped over 1, 2, 3 boxes, each capped to a quarter of a core
## (a cgroup), 4 hosts, 16 and 64 MiB, side by side (root)
bench-boxes: build
	tests/testbed/bench-boxes --build $(BUILD)

## FSDP's reduce-scatter and all-gather through the box against Gloo's, 4 and
## 8 hosts, 100 Mbit/s and unshaped links, 1-64 MiB (root)
bench-coll: build
	tests/testbed/bench-coll --build $(BUILD)

# The scale model (sim/README.md); make test runs the checks of suite sim.
## install the scale model's packages (SimGrid, nlohmann-json; root)
deps-sim:
	$(call install_pkgs,$(BUILD_PKGS) $(SIM_PKGS) python3-matplotlib)

## the scale model (build/netreduce-plan, SimGrid) against the testbed's
## measurements in sim/validation/, side by side
sim-validate: deps-sim $(BUILD)/build.ninja
	ninja -C $(BUILD) netreduce-plan
	/usr/bin/python3 sim/validate.py --plan $(BUILD)/netreduce-plan sim/validation/*.jsonl

## the scale model's plots and tables into docs/scale/ (docs/scale.md)
sim-report: deps-sim $(BUILD)/build.ninja
	ninja -C $(BUILD) netreduce-plan
	/usr/bin/python3 sim/report.py --plan $(BUILD)/netreduce-plan --out docs/scale

# Opt-in, not part of make test (24 testbeds, about 7 minutes here).
## netreduce vs ring at 0, 0.1, 1, 3% loss per link (4 hosts, 16 MiB,
## 100 Mbit/s, 1 Gbit/s, unshaped), go-back-N (rnic) beside selective
## repeat (sr): throughput and fraction of loss-free (root)
bench-loss: build
	tests/testbed/bench-loss --build $(BUILD)

# Opt-in, not part of make test: DLCP's bounded loss on training (tests/testbed/bench-dlcp
# --help); DLCP_ARGS adds its options, e.g. DLCP_ARGS="--variants bound,exact,gloo,scaled".
## PyTorch training at 0, 1, 3% loss per link (4 hosts, 100 Mbit/s):
## netreduce with the bound on tolerant gradients (NR_SHORT_PPM) vs without
## vs gloo: time to accuracy, throughput vs loss-free, short slots, QP health;
## table and plot in build/bench-dlcp/ (root; DLCP_ARGS, TORCH=2.6)
bench-dlcp: build $(if $(filter 2.6,$(TORCH)),torch2-root)
	tests/testbed/bench-dlcp --build $(BUILD) $(if $(TORCH),--torch $(TORCH)) $(DLCP_ARGS)

FUZZ_TARGETS := tests/fuzz/nrz-fuzz-parse tests/fuzz/nrz-fuzz-engine \
	tests/fuzz/nrz-fuzz-control tests/fuzz/nrz-fuzz-burst tests/fuzz/nrz-fuzz-soft \
	tests/fuzz/nrz-fuzz-ctlserver tests/fuzz/nrz-fuzz-rendezvous tests/fuzz/nrz-fuzz-owner \
	tests/fuzz/nrz-fuzz-l2 tests/fuzz/nrz-fuzz-tenant tests/fuzz/nrz-gen-corpus

# (a fuzz build set up before the burst target had DPDK disabled: turned on)
## every libFuzzer target for FUZZ_SECONDS (default 60) each
fuzz: deps $(FUZZ)/build.ninja
	@meson introspect $(FUZZ) --buildoptions | /usr/bin/python3 -c 'import json, sys; \
		sys.exit(any(o["name"] == "dpdk" and o["value"] == "disabled" for o in json.load(sys.stdin)))' \
		|| meson configure $(FUZZ) -Ddpdk=auto
	ninja -C $(FUZZ) $(FUZZ_TARGETS)
	tests/fuzz/run --build $(FUZZ) --seconds $(FUZZ_SECONDS) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

# Opt-in, not part of make test: 10,000 jobs (up to 256 connections x 4 channels)
# created and destroyed on a two-worker box, then a victim job exact at the fresh
# box's rate, memory flat (tests/hostile/test_hostile_tables.c; make test runs 300).
## 10,000 jobs created and destroyed on a two-worker box, then a job
## exact at the fresh box's rate, memory flat (root)
soak-tables: build
	NR_TABLES_CYCLES=10000 $(BUILD)/tests/hostile/test_hostile_tables

# Opt-in, not part of make test: see tests/testbed/soak --help.
## SOAK_MINUTES (default 30) of random all-reduces, loss, host kills and
## box restarts on the 8-host testbed, every result and frame checked (root)
soak: build
	tests/testbed/soak --build $(BUILD) --minutes $(SOAK_MINUTES)

# The aggregator's RTL (dataplane/rtl) on longer traces and more adder pairs than make test.
## the RTL against the software box on 8x longer traces, 10^7 adder pairs
rtl-long: build
	NR_RTL_LONG=1 NR_FP32_PAIRS=10000000 $(MESON_TEST) -C $(BUILD) --logbase rtl-long \
		--suite rtl --timeout-multiplier 10

## remove the build directories (BUILD, ASAN, FUZZ)
clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZ)
