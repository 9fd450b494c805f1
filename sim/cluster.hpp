/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/cluster.hpp: the cluster the scale model simulates, read from a small
 * JSON file (sim/README.md, "The cluster file").
 *
 * Bandwidths are bytes per second, times seconds; the file writes them with
 * SimGrid's units ("12.5GBps" bytes, "100Gbps" or "100Mbps" bits, "2us").
 */
#ifndef NR_SIM_CLUSTER_HPP
#define NR_SIM_CLUSTER_HPP

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "boxrate.hpp"

namespace nrsim {

/* The box: a server running netreduce-switch (sim/README.md, "The box"), or
 * "wire": a box without a limit of its own (the papers' switch-sized box). */
struct Box {
	bool wire = false;             /* no limit: ports and cores at the wire's rate */
	bool one_armed = true;         /* one-armed: its ports carry the hosts' traffic in and the
	                                * results out; switch: a port a host, the box is the switch */
	int workers = 8;               /* cores running the data path (netreduce-switch workers) */
	int channels = 0;              /* NR_CHANNELS of each box job (0: auto, one a worker) */
	int ports = 1;                 /* one-armed: NIC ports */
	double port_speed = 0;         /* a port, each way (0: the host link's) */
	int hosts_per_box = 0;         /* a box per group of this many hosts (0: a box a rack) */
	int stripes = 1;               /* boxes a job's box algorithms stripe over (NR_BOX's list) */
	std::string rates_path;        /* nr-bench-switch --json file */
	BoxRates rates;                /* read from rates_path */
};

struct Cluster {
	std::string name;
	std::vector<int> rack_hosts;   /* hosts (machines) in each rack */
	int gpus = 1;                  /* ranks (GPUs) per host */
	double nic = 0;                /* one host NIC, each way */
	int nics = 1;                  /* NICs a host (rail-optimised: local rank p on NIC p mod nics) */
	double intra = 0;              /* rate one rank reads what another rank of its host wrote,
	                                * on the GPUs' own path (NVLink, PCIe): the baselines' */
	bool intra_nvlink = true;      /* intra is NVLink (NCCL's tuner: NVLink or PCI figures) */
	double library_intra = 0;      /* the library's shared-memory rate (NR_INTRA_GBPS) */
	bool gpu_path = false;         /* the library reads GPU memory itself (local phases at intra,
	                                * no staging); false: as it is today */
	bool gpu_gradients = true;     /* the gradients live on the GPUs (staged by the library) */
	double stage = 0;              /* pinned host<->GPU copy rate, each way, a GPU */
	double stage_chunk = 4 << 20;  /* NR_STAGE_CHUNK_KB */
	std::string dtype = "fp32";    /* gradient type: fp32, bf16, fp16 */
	/* what is timed: "allreduce", or FSDP's "reduce_scatter" and "allgather" (the
	 * ring's N-1 steps, no tree: NCCL runs both on rings; the box's all-reduce of
	 * S, a box being transparent to a connection; no local phases or racks) */
	std::string collective = "allreduce";
	double tor_uplink = 0;         /* ToR to spine, each way (0: non-blocking) */
	Box box;
	std::vector<bool> box_in_rack; /* rack k has boxes */
	int rack_agents = 0;           /* NR_RACK_AGENTS (0: the smallest group) */
	int jobs = 1;                  /* equal jobs of consecutive hosts, all at once */
	double lat_nic = 2e-6, lat_fabric = 1e-6, lat_intra = 1e-6;
	int mtu = 4096;                /* RoCE path MTU: payload bytes a packet */
	int header_bytes = 58;         /* Ethernet, IPv4, UDP, BTH, ICRC, FCS a packet */
	int window_packets = 128;      /* a host-to-host connection's packets in flight */
	int message_bytes = 65536;     /* NR_MSG_SIZE */
	int pool_msgs = 8;             /* NR_POOL_MSGS: a box connection has half in flight */
	double step_lo = 0.5e-6;       /* software cost of one ring step or one phase: a band */
	double step_hi = 10e-6;
	double tree_chunk = 512 * 1024; /* the tree's pipeline unit */

	/* Box groups ("domains"): the hosts behind one box, within a rack. */
	std::vector<int> group_first, group_size, group_rack;

	int hosts() const;
	int ranks() const { return hosts() * gpus; }
	int racks() const { return (int)rack_hosts.size(); }
	int groups() const { return (int)group_first.size(); }
	int group_of_host(int h) const;
	bool group_has_box(int g) const { return box_in_rack[group_rack[g]]; }
	int boxes() const;             /* groups with a box */
	int racks_with_box() const;
	int rack_of_host(int h) const;
	int hosts_per_job() const { return hosts() / jobs; }
	double elem_scale() const { return dtype == "fp32" ? 1.0 : 0.5; }
	double wire() const { return double(mtu + header_bytes) / mtu; }
	double port_bw() const;        /* a box's port side, each way, bytes/s (0: unbounded) */
	int box_channels() const { return box.channels > 0 ? box.channels : box.workers; }
	int box_workers_used(int box_jobs) const;
	double box_cpu(int box_jobs) const;    /* payload bytes/s a box sums (0: unbounded) */
	double box_cpu_channels(int channels) const;   /* the same, its jobs' channels together */
	std::string box_text() const;
	void make_groups();            /* from rack_hosts and box.hosts_per_box */
};

/* The cluster described by j (a parsed cluster file, --set overrides applied);
 * `dir` is the cluster file's folder (relative paths in it are read from
 * there).  Throws std::invalid_argument naming the field on a bad value. */
Cluster cluster_from_json(const nlohmann::json &j, const std::string &dir = ".");

/* Apply one "key=value" override (JSON value, or a bare string) to j. */
void cluster_set(nlohmann::json &j, const std::string &kv);

/* "12.5GBps", "100Gbps", "100Mbps", "1e9" (bytes/s) -> bytes per second. */
double parse_bandwidth(const std::string &s);
/* "2us", "1.5ms", "0" -> seconds. */
double parse_time(const std::string &s);
/* "4M", "16MiB", "100MB", "4096" -> bytes (M, MiB: 2^20; MB: 10^6). */
double parse_size(const std::string &s);

} /* namespace nrsim */

#endif
