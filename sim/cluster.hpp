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

namespace nrsim {

struct Cluster {
	std::string name;
	std::vector<int> rack_hosts;   /* hosts (machines) in each rack */
	int gpus = 1;                  /* ranks (GPUs) per host */
	double nic = 0;                /* host link, each way */
	double intra = 0;              /* rate one rank reads what another rank of its host wrote */
	double tor_uplink = 0;         /* ToR to spine, each way (0: non-blocking) */
	double box_port = 0;           /* a box's port on its ToR, each way (0: non-blocking) */
	std::vector<bool> box;         /* rack k has a box */
	int rack_agents = 0;           /* NR_RACK_AGENTS (0: the smallest rack) */
	double lat_nic = 2e-6, lat_fabric = 1e-6, lat_intra = 1e-6;
	int mtu = 4096;                /* RoCE path MTU: payload bytes a packet */
	int header_bytes = 58;         /* Ethernet, IPv4, UDP, BTH, ICRC, FCS a packet */
	int window_packets = 128;      /* a host-to-host connection's packets in flight */
	int message_bytes = 65536;     /* NR_MSG_SIZE */
	int pool_msgs = 8;             /* NR_POOL_MSGS: a box connection has half in flight */
	double step_cost = 0;          /* software cost of one ring step or one phase */
	double tree_chunk = 512 * 1024; /* the tree's pipeline unit */

	int hosts() const;
	int ranks() const { return hosts() * gpus; }
	int racks() const { return (int)rack_hosts.size(); }
	int boxes() const;
	int rack_of_host(int h) const;
	int first_box() const;         /* the rack of the one box flat jobs use; -1: none */
	int agents() const;
};

/* The cluster described by j (a parsed cluster file, --set overrides applied);
 * throws std::invalid_argument naming the field on a bad value. */
Cluster cluster_from_json(const nlohmann::json &j);

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
