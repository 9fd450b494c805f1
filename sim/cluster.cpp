/* SPDX-License-Identifier: BSD-3-Clause */
/* sim/cluster.cpp: the cluster file (sim/README.md) into a Cluster. */
#include "cluster.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <stdexcept>

#ifndef NR_SIM_BOX_RATES
#define NR_SIM_BOX_RATES "sim/boxes/xeon-16c.jsonl"
#endif

namespace nrsim {

int Cluster::hosts() const
{
	int n = 0;
	for (int h : rack_hosts)
		n += h;
	return n;
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

int Cluster::group_of_host(int h) const
{
	for (int g = 0; g < groups(); g++)
		if (h >= group_first[g] && h < group_first[g] + group_size[g])
			return g;
	throw std::out_of_range("host beyond the cluster");
}

int Cluster::boxes() const
{
	int n = 0;
	for (int g = 0; g < groups(); g++)
		n += group_has_box(g);
	return n;
}

int Cluster::racks_with_box() const
{
	return (int)std::count(box_in_rack.begin(), box_in_rack.end(), true);
}

void Cluster::make_groups()
{
	group_first.clear();
	group_size.clear();
	group_rack.clear();
	int first = 0;
	for (int k = 0; k < racks(); k++) {
		int per = box.hosts_per_box > 0 ? box.hosts_per_box : rack_hosts[k];
		for (int h = 0; h < rack_hosts[k]; h += per) {
			group_first.push_back(first + h);
			group_size.push_back(std::min(per, rack_hosts[k] - h));
			group_rack.push_back(k);
		}
		first += rack_hosts[k];
	}
}

double Cluster::port_bw() const
{
	if (box.wire || !box.one_armed)
		return 0;
	return box.ports * (box.port_speed > 0 ? box.port_speed : nic);
}

int Cluster::box_workers_used(int box_jobs) const
{
	return std::max(1, std::min(box.workers, box_jobs * box_channels()));
}

double Cluster::box_cpu(int box_jobs) const
{
	return box_cpu_channels(box_jobs * box_channels());
}

double Cluster::box_cpu_channels(int channels) const
{
	if (box.wire)
		return 0;
	return box.rates.gbps(std::max(1, std::min(box.workers, channels)), mtu, dtype) * 1e9 / 8;
}

std::string Cluster::box_text() const
{
	if (box.wire)
		return "box at the wire's rate (no limit of its own)";
	char b[256];
	std::string how;
	double g = box.rates.gbps(box.workers, mtu, dtype, &how);
	snprintf(b, sizeof b, "box: a server of %d workers (%.4g Gbit/s at MTU %d, %s)", box.workers, g, mtu,
		 dtype.c_str());
	std::string s = b;
	if (box.one_armed) {
		double p = box.port_speed > 0 ? box.port_speed : nic;
		snprintf(b, sizeof b, ", one-armed on %d x %.4g Gbit/s", box.ports, p * 8 / 1e9);
		s += b;
	} else {
		s += ", the hosts' switch (a port a host)";
	}
	if (box.hosts_per_box > 0)
		s += ", one a group of " + std::to_string(box.hosts_per_box) + " hosts";
	if (box.stripes > 1)
		s += "; striped over " + std::to_string(box.stripes) + " such boxes";
	return s;
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

static double bandwidth_value(const nlohmann::json &v, const std::string &key)
{
	double bw;
	if (v.is_number())
		bw = v.get<double>();
	else if (v.is_string())
		bw = parse_bandwidth(v.get<std::string>());
	else
		throw std::invalid_argument(key + ": a bandwidth, e.g. \"12.5GBps\" or \"100Gbps\"");
	if (!(bw > 0))
		throw std::invalid_argument(key + ": must be above 0");
	return bw;
}

static double bandwidth_field(const nlohmann::json &j, const char *key, double dflt)
{
	return j.contains(key) ? bandwidth_value(j[key], key) : dflt;
}

static double time_value(const nlohmann::json &v, const std::string &key)
{
	if (v.is_number())
		return v.get<double>();
	if (v.is_string())
		return parse_time(v.get<std::string>());
	throw std::invalid_argument(key + ": a time, e.g. \"2us\"");
}

static double time_field(const nlohmann::json &j, const char *key, double dflt)
{
	return j.contains(key) ? time_value(j[key], key) : dflt;
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

static bool bool_field(const nlohmann::json &j, const char *key, bool dflt)
{
	if (!j.contains(key))
		return dflt;
	if (!j[key].is_boolean())
		throw std::invalid_argument(std::string(key) + ": true or false");
	return j[key].get<bool>();
}

static std::string choice_field(const nlohmann::json &j, const char *key, const std::string &dflt,
				const std::vector<std::string> &ok)
{
	if (!j.contains(key))
		return dflt;
	std::string list;
	for (const std::string &o : ok)
		list += (list.empty() ? "\"" : ", \"") + o + "\"";
	if (!j[key].is_string() || std::find(ok.begin(), ok.end(), j[key].get<std::string>()) == ok.end())
		throw std::invalid_argument(std::string(key) + ": one of " + list);
	return j[key].get<std::string>();
}

static std::string join_path(const std::string &dir, const std::string &p)
{
	if (p.empty() || p[0] == '/' || dir.empty() || dir == ".")
		return p;
	return dir + "/" + p;
}

/* "box": "wire" or {mode, workers, channels, ports, port_speed, per, rates}. */
static Box box_from_json(const nlohmann::json &j, const std::string &dir)
{
	Box b;
	b.rates_path = NR_SIM_BOX_RATES;
	if (!j.contains("box")) {
		b.rates = read_box_rates(b.rates_path);
		return b;
	}
	const nlohmann::json &v = j["box"];
	if (v.is_string() && v == "wire") {
		b.wire = true;
		return b;
	}
	if (!v.is_object())
		throw std::invalid_argument("box: \"wire\" (no limit of its own) or a server: {\"workers\": 8, "
					    "\"ports\": 2, \"port_speed\": \"100Gbps\", ...} (sim/README.md)");
	static const std::set<std::string> known = {"mode", "workers", "channels", "ports", "port_speed", "per",
						     "rates", "stripes"};
	for (const auto &kv : v.items())
		if (!known.count(kv.key()))
			throw std::invalid_argument("box: unknown field \"" + kv.key() +
						    "\" (mode, workers, channels, ports, port_speed, per, rates, stripes)");
	std::string mode = choice_field(v, "mode", "one-armed", {"one-armed", "switch"});
	b.one_armed = mode == "one-armed";
	try {
		b.workers = int_field(v, "workers", b.workers, 1, 4096);
		b.ports = int_field(v, "ports", b.ports, 1, 64);
		b.stripes = int_field(v, "stripes", b.stripes, 1, 1024);
	} catch (const std::invalid_argument &e) {
		throw std::invalid_argument(std::string("box.") + e.what());
	}
	if (v.contains("channels")) {
		const nlohmann::json &ch = v["channels"];
		if (ch.is_string() && ch == "auto")
			b.channels = 0;
		else if (ch.is_number_integer() && ch.get<int>() >= 1 && ch.get<int>() <= 16)
			b.channels = ch.get<int>();
		else
			throw std::invalid_argument("box.channels: \"auto\" (NR_CHANNELS=auto: one a worker) or 1..16");
	}
	if (v.contains("port_speed"))
		b.port_speed = bandwidth_value(v["port_speed"], "box.port_speed");
	if (v.contains("per")) {
		const nlohmann::json &p = v["per"];
		if (p.is_string() && p == "rack")
			b.hosts_per_box = 0;
		else if (p.is_number_integer() && p.get<int>() >= 1)
			b.hosts_per_box = p.get<int>();
		else
			throw std::invalid_argument("box.per: \"rack\" (a box a rack) or a number of hosts a box");
	}
	if (v.contains("rates")) {
		if (!v["rates"].is_string())
			throw std::invalid_argument("box.rates: the path of an nr-bench-switch --json file");
		b.rates_path = join_path(dir, v["rates"].get<std::string>());
	}
	b.rates = read_box_rates(b.rates_path);
	return b;
}

Cluster cluster_from_json(const nlohmann::json &j, const std::string &dir)
{
	static const std::set<std::string> known = {
		"name", "about", "racks", "hosts_per_rack", "rack_hosts", "gpus_per_host", "nic", "nics",
		"intra", "intra_link", "library_intra", "gpu_path", "gradients", "stage", "stage_chunk", "dtype",
		"tor_uplink", "oversubscription", "box", "boxes", "rack_agents", "jobs",
		"latency", "mtu", "header_bytes", "window_packets", "message_bytes", "pool_msgs",
		"step_cost", "tree_chunk", "collective",
		"variants",
	};
	if (!j.is_object())
		throw std::invalid_argument("a cluster file holds one JSON object");
	for (const auto &kv : j.items()) {
		if (kv.key() == "box_port")
			throw std::invalid_argument("box_port: the box is a server now: \"box\": {\"ports\": N, "
						    "\"port_speed\": \"...\"} (sim/README.md, \"The box\")");
		if (!known.count(kv.key()))
			throw std::invalid_argument("unknown field \"" + kv.key() + "\" (sim/README.md lists the fields)");
	}

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
	c.gpus = int_field(j, "gpus_per_host", 1, 1, 64);
	if (!j.contains("nic"))
		throw std::invalid_argument("nic (the host link's bandwidth, e.g. \"12.5GBps\") is required");
	c.nic = bandwidth_field(j, "nic", 0);
	c.nics = int_field(j, "nics", 1, 1, 64);
	if (c.nics > c.gpus)
		throw std::invalid_argument("nics=" + std::to_string(c.nics) + ": at most gpus_per_host (" +
					    std::to_string(c.gpus) + "): local rank p sends on NIC p mod nics");
	c.intra = bandwidth_field(j, "intra", c.gpus > 1 ? 0 : c.nic);
	if (c.intra == 0)
		throw std::invalid_argument("intra (the GPUs' own intra-host bandwidth a rank reads at, NVLink or "
					    "PCIe, e.g. \"100GBps\") is required with gpus_per_host > 1");
	c.intra_nvlink = choice_field(j, "intra_link", "nvlink", {"nvlink", "pcie"}) == "nvlink";
	c.gpu_path = bool_field(j, "gpu_path", false);
	c.library_intra = bandwidth_field(j, "library_intra", c.gpus > 1 && !c.gpu_path ? 0 : c.intra);
	if (c.gpu_path)
		c.library_intra = c.intra;
	if (c.library_intra == 0)
		throw std::invalid_argument("library_intra (the library's shared-memory rate a rank reads at: "
					    "NR_INTRA_GBPS, one core's copy rate as nr_comm_init measures it, e.g. "
					    "\"10GBps\") is required with gpus_per_host > 1, or gpu_path: true");
	c.gpu_gradients = choice_field(j, "gradients", "gpu", {"gpu", "host"}) == "gpu";
	c.stage = bandwidth_field(j, "stage", 55e9);
	if (j.contains("stage_chunk")) {
		const nlohmann::json &v = j["stage_chunk"];
		c.stage_chunk = parse_size(v.is_string() ? v.get<std::string>() : std::to_string(v.get<long long>()));
	}
	if (j.contains("dtype")) {
		if (!j["dtype"].is_string() || normal_dtype(j["dtype"].get<std::string>()).empty())
			throw std::invalid_argument("dtype: \"fp32\", \"bf16\" or \"fp16\" (the gradients' type)");
		c.dtype = normal_dtype(j["dtype"].get<std::string>());
	}
	if (j.contains("tor_uplink") && j.contains("oversubscription"))
		throw std::invalid_argument("tor_uplink or oversubscription, not both");
	c.tor_uplink = bandwidth_field(j, "tor_uplink", 0);
	if (j.contains("oversubscription")) {
		double o = j["oversubscription"].is_number() ? j["oversubscription"].get<double>() : 0;
		if (!(o >= 1))
			throw std::invalid_argument("oversubscription: at least 1 (1: non-blocking)");
		int most = *std::max_element(c.rack_hosts.begin(), c.rack_hosts.end());
		c.tor_uplink = most * c.nics * c.nic / o;
	}
	c.box = box_from_json(j, dir);

	const nlohmann::json boxes = j.value("boxes", nlohmann::json("all"));
	c.box_in_rack.assign(c.racks(), false);
	if (boxes.is_string()) {
		if (boxes == "all")
			c.box_in_rack.assign(c.racks(), true);
		else if (boxes != "none")
			throw std::invalid_argument("boxes: \"all\", \"none\", a list of racks or a fraction");
	} else if (boxes.is_array()) {
		for (const nlohmann::json &k : boxes) {
			if (!k.is_number_integer() || k.get<int>() < 0 || k.get<int>() >= c.racks())
				throw std::invalid_argument("boxes: rack indices 0.." + std::to_string(c.racks() - 1));
			c.box_in_rack[k.get<int>()] = true;
		}
	} else if (boxes.is_number()) {
		double f = boxes.get<double>();
		if (!(f >= 0 && f <= 1))
			throw std::invalid_argument("boxes: a fraction of racks is 0..1");
		int n = (int)std::lround(f * c.racks());
		for (int k = 0; k < n; k++)
			c.box_in_rack[k] = true;
	} else {
		throw std::invalid_argument("boxes: \"all\", \"none\", a list of racks or a fraction");
	}
	c.make_groups();
	c.rack_agents = int_field(j, "rack_agents", 0, 0, 4096);
	if (j.contains("collective")) {
		if (!j["collective"].is_string() ||
		    (j["collective"] != "allreduce" && j["collective"] != "reduce_scatter" &&
		     j["collective"] != "allgather"))
			throw std::invalid_argument("collective: \"allreduce\", \"reduce_scatter\" or "
						    "\"allgather\"");
		c.collective = j["collective"].get<std::string>();
	}
	c.jobs = int_field(j, "jobs", 1, 1, 4096);
	if (c.hosts() % c.jobs)
		throw std::invalid_argument("jobs=" + std::to_string(c.jobs) + ": must divide the " +
					    std::to_string(c.hosts()) + " hosts (jobs of consecutive hosts, all equal)");
	if (c.hosts_per_job() * c.gpus < 2)
		throw std::invalid_argument(c.jobs > 1 ? "jobs: each job needs at least two ranks"
						       : "a cluster of one rank has nothing to all-reduce");
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
	if (j.contains("step_cost")) {
		const nlohmann::json &s = j["step_cost"];
		if (s.is_array()) {
			if (s.size() != 2)
				throw std::invalid_argument("step_cost: a time or a band [low, high], e.g. [\"0.5us\", \"10us\"]");
			c.step_lo = time_value(s[0], "step_cost[0]");
			c.step_hi = time_value(s[1], "step_cost[1]");
			if (c.step_hi < c.step_lo)
				throw std::invalid_argument("step_cost: a band [low, high] with low <= high");
		} else {
			c.step_lo = c.step_hi = time_value(s, "step_cost");
		}
	}
	if (j.contains("tree_chunk")) {
		const nlohmann::json &v = j["tree_chunk"];
		c.tree_chunk = parse_size(v.is_string() ? v.get<std::string>() : std::to_string(v.get<long long>()));
	}
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
	if (v.is_null()) {      /* KEY=null: back to the default */
		if (dot == std::string::npos)
			j.erase(key);
		else if (j.contains(key.substr(0, dot)) && j[key.substr(0, dot)].is_object())
			j[key.substr(0, dot)].erase(key.substr(dot + 1));
	}
	else if (dot != std::string::npos) {
		nlohmann::json &outer = j[key.substr(0, dot)];
		if (!outer.is_object())     /* "box": "wire", then --set box.workers=4 */
			outer = nlohmann::json::object();
		outer[key.substr(dot + 1)] = v;
	}
	else
		j[key] = v;
}

} /* namespace nrsim */
