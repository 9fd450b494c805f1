/* SPDX-License-Identifier: BSD-3-Clause */
/* sim/cluster.cpp: the cluster file (sim/README.md) into a Cluster. */
#include "cluster.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>

namespace nrsim {


int Cluster::hosts() const
{
	int n = 0;
	for (int h : rack_hosts)
		n += h;
	return n;
}

int Cluster::boxes() const
{
	return (int)std::count(box.begin(), box.end(), true);
}

int Cluster::rack_of_host(int h) const
{
	for (int k = 0; k < racks(); k++) {
		if (h < rack_hosts[k])
			return k;
		h -= rack_hosts[k];
	}
	throw std::out_of_range("host beyond the cluster");
}

int Cluster::first_box() const
{
	for (int k = 0; k < racks(); k++)
		if (box[k])
			return k;
	return -1;
}

int Cluster::agents() const
{
	int smallest = *std::min_element(rack_hosts.begin(), rack_hosts.end());
	return rack_agents > 0 ? std::min(rack_agents, smallest) : smallest;
}

static double number_unit(const std::string &s, const char *what, std::string &unit)
{
	char *end = nullptr;
	double v = std::strtod(s.c_str(), &end);
	if (end == s.c_str() || !std::isfinite(v) || v < 0)
		throw std::invalid_argument(std::string(what) + " \"" + s + "\": not a number");
	unit = end;
	return v;
}

double parse_bandwidth(const std::string &s)
{
	static const struct { const char *unit; double scale; } units[] = {
		{"", 1}, {"Bps", 1}, {"kBps", 1e3}, {"MBps", 1e6}, {"GBps", 1e9}, {"TBps", 1e12},
		{"bps", 1 / 8.}, {"kbps", 1e3 / 8}, {"Mbps", 1e6 / 8}, {"Gbps", 1e9 / 8},
		{"Tbps", 1e12 / 8},
	};
	std::string unit;
	double v = number_unit(s, "bandwidth", unit);
	for (const auto &u : units)
		if (unit == u.unit)
			return v * u.scale;
	throw std::invalid_argument("bandwidth \"" + s +
				    "\": unit must be Bps, kBps, MBps, GBps, TBps (bytes) or bps, kbps, Mbps, Gbps, Tbps (bits)");
}

double parse_time(const std::string &s)
{
	static const struct { const char *unit; double scale; } units[] = {
		{"", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9},
	};
	std::string unit;
	double v = number_unit(s, "time", unit);
	for (const auto &u : units)
		if (unit == u.unit)
			return v * u.scale;
	throw std::invalid_argument("time \"" + s + "\": unit must be s, ms, us or ns");
}

double parse_size(const std::string &s)
{
	static const struct { const char *unit; double scale; } units[] = {
		{"", 1}, {"B", 1}, {"K", 1024}, {"KiB", 1024}, {"kB", 1e3}, {"M", 1 << 20},
		{"MiB", 1 << 20}, {"MB", 1e6}, {"G", 1 << 30}, {"GiB", 1 << 30}, {"GB", 1e9},
	};
	std::string unit;
	double v = number_unit(s, "size", unit);
	for (const auto &u : units)
		if (unit == u.unit && v >= 1)
			return std::round(v * u.scale);
	throw std::invalid_argument("size \"" + s + "\": a positive number of bytes, K/KiB, M/MiB, G/GiB, kB, MB or GB");
}

static double bandwidth_field(const nlohmann::json &j, const char *key, double dflt)
{
	if (!j.contains(key))
		return dflt;
	const nlohmann::json &v = j[key];
	double bw = v.is_number() ? v.get<double>() : parse_bandwidth(v.get<std::string>());
	if (bw <= 0)
		throw std::invalid_argument(std::string(key) + ": must be above 0");
	return bw;
}

static double time_field(const nlohmann::json &j, const char *key, double dflt)
{
	if (!j.contains(key))
		return dflt;
	const nlohmann::json &v = j[key];
	return v.is_number() ? v.get<double>() : parse_time(v.get<std::string>());
}

static int int_field(const nlohmann::json &j, const char *key, int dflt, int lo, int hi)
{
	if (!j.contains(key))
		return dflt;
	if (!j[key].is_number_integer())
		throw std::invalid_argument(std::string(key) + ": must be an integer");
	int v = j[key].get<int>();
	if (v < lo || v > hi)
		throw std::invalid_argument(std::string(key) + "=" + std::to_string(v) + ": must be " +
					    std::to_string(lo) + ".." + std::to_string(hi));
	return v;
}

Cluster cluster_from_json(const nlohmann::json &j)
{
	static const std::set<std::string> known = {
		"name", "about", "racks", "hosts_per_rack", "rack_hosts", "gpus_per_host", "nic",
		"intra", "tor_uplink", "oversubscription", "box_port", "boxes", "rack_agents",
		"latency", "mtu", "header_bytes", "window_packets", "message_bytes", "pool_msgs",
		"step_cost", "tree_chunk",
		"variants",
	};
	if (!j.is_object())
		throw std::invalid_argument("a cluster file holds one JSON object");
	for (const auto &kv : j.items())
		if (!known.count(kv.key()))
			throw std::invalid_argument("unknown field \"" + kv.key() + "\" (sim/README.md lists the fields)");

	Cluster c;
	c.name = j.value("name", std::string("cluster"));
	if (j.contains("rack_hosts")) {
		if (j.contains("racks") || j.contains("hosts_per_rack"))
			throw std::invalid_argument("rack_hosts or racks with hosts_per_rack, not both");
		for (const nlohmann::json &h : j["rack_hosts"]) {
			if (!h.is_number_integer() || h.get<int>() < 1 || h.get<int>() > 4096)
				throw std::invalid_argument("rack_hosts: integers 1..4096");
			c.rack_hosts.push_back(h.get<int>());
		}
		if (c.rack_hosts.empty())
			throw std::invalid_argument("rack_hosts: at least one rack");
	} else {
		int racks = int_field(j, "racks", 1, 1, 1024);
		int hpr = int_field(j, "hosts_per_rack", 0, 1, 4096);
		if (hpr == 0)
			throw std::invalid_argument("hosts_per_rack (or rack_hosts) is required");
		c.rack_hosts.assign(racks, hpr);
	}
	if (c.hosts() < 2 && int_field(j, "gpus_per_host", 1, 1, 64) < 2)
		throw std::invalid_argument("a cluster of one rank has nothing to all-reduce");
	c.gpus = int_field(j, "gpus_per_host", 1, 1, 64);
	if (!j.contains("nic"))
		throw std::invalid_argument("nic (the host link's bandwidth, e.g. \"12.5GBps\") is required");
	c.nic = bandwidth_field(j, "nic", 0);
	c.intra = bandwidth_field(j, "intra", c.gpus > 1 ? 0 : c.nic);
	if (c.intra == 0)
		throw std::invalid_argument("intra (the intra-host bandwidth, e.g. \"15.75GBps\") is required with gpus_per_host > 1");
	if (j.contains("tor_uplink") && j.contains("oversubscription"))
		throw std::invalid_argument("tor_uplink or oversubscription, not both");
	c.tor_uplink = bandwidth_field(j, "tor_uplink", 0);
	if (j.contains("oversubscription")) {
		double o = j["oversubscription"].get<double>();
		if (!(o >= 1))
			throw std::invalid_argument("oversubscription: at least 1 (1: non-blocking)");
		int most = *std::max_element(c.rack_hosts.begin(), c.rack_hosts.end());
		c.tor_uplink = most * c.nic / o;
	}
	c.box_port = bandwidth_field(j, "box_port", 0);

	const nlohmann::json boxes = j.value("boxes", nlohmann::json("all"));
	c.box.assign(c.racks(), false);
	if (boxes.is_string()) {
		if (boxes == "all")
			c.box.assign(c.racks(), true);
		else if (boxes != "none")
			throw std::invalid_argument("boxes: \"all\", \"none\", a list of racks or a fraction");
	} else if (boxes.is_array()) {
		for (const nlohmann::json &k : boxes) {
			if (!k.is_number_integer() || k.get<int>() < 0 || k.get<int>() >= c.racks())
				throw std::invalid_argument("boxes: rack indices 0.." + std::to_string(c.racks() - 1));
			c.box[k.get<int>()] = true;
		}
	} else if (boxes.is_number()) {
		double f = boxes.get<double>();
		if (!(f >= 0 && f <= 1))
			throw std::invalid_argument("boxes: a fraction of racks is 0..1");
		int n = (int)std::lround(f * c.racks());
		for (int k = 0; k < n; k++)
			c.box[k] = true;
	} else {
		throw std::invalid_argument("boxes: \"all\", \"none\", a list of racks or a fraction");
	}
	c.rack_agents = int_field(j, "rack_agents", 0, 0, 4096);
	if (j.contains("latency")) {
		const nlohmann::json &l = j["latency"];
		for (const auto &kv : l.items())
			if (kv.key() != "nic" && kv.key() != "fabric" && kv.key() != "intra")
				throw std::invalid_argument("latency: fields nic, fabric, intra");
		c.lat_nic = time_field(l, "nic", c.lat_nic);
		c.lat_fabric = time_field(l, "fabric", c.lat_fabric);
		c.lat_intra = time_field(l, "intra", c.lat_intra);
	}
	c.mtu = int_field(j, "mtu", c.mtu, 256, 9000);
	c.header_bytes = int_field(j, "header_bytes", c.header_bytes, 0, 512);
	c.window_packets = int_field(j, "window_packets", c.window_packets, 1, 1 << 20);
	c.message_bytes = int_field(j, "message_bytes", c.message_bytes, c.mtu, 1 << 30);
	if (c.message_bytes % c.mtu)
		throw std::invalid_argument("message_bytes=" + std::to_string(c.message_bytes) +
					    ": a multiple of mtu (" + std::to_string(c.mtu) + ")");
	c.pool_msgs = int_field(j, "pool_msgs", c.pool_msgs, 2, 1 << 16);
	c.step_cost = time_field(j, "step_cost", c.step_cost);
	if (j.contains("tree_chunk"))
		c.tree_chunk = parse_size(j["tree_chunk"].is_string() ? j["tree_chunk"].get<std::string>()
						: std::to_string(j["tree_chunk"].get<long long>()));
	return c;
}

void cluster_set(nlohmann::json &j, const std::string &kv)
{
	size_t eq = kv.find('=');
	if (eq == std::string::npos || eq == 0)
		throw std::invalid_argument("--set \"" + kv + "\": KEY=VALUE");
	std::string key = kv.substr(0, eq), val = kv.substr(eq + 1);
	nlohmann::json v = nlohmann::json::parse(val, nullptr, false);
	if (v.is_discarded())
		v = val;        /* a bare string: "12.5GBps" */
	size_t dot = key.find('.');
	if (v.is_null())        /* KEY=null: back to the default */
		dot == std::string::npos ? (void)j.erase(key)
					 : (void)j[key.substr(0, dot)].erase(key.substr(dot + 1));
	else if (dot != std::string::npos)
		j[key.substr(0, dot)][key.substr(dot + 1)] = v;
	else
		j[key] = v;
}

} /* namespace nrsim */
