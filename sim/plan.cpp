/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/plan.cpp: netreduce-plan, the scale model's command (sim/README.md).
 *
 *   netreduce-plan CLUSTER.json [--bytes LIST] [--algo LIST] [--set K=V]...
 *                  [--variant NAME] [--deploy] [--json]
 *
 * For each variant of the cluster file and each size: the all-reduce time of
 * every algorithm on SimGrid, its algorithm and bus bandwidth, the speedup
 * over the ring; with --deploy the racks algorithm with boxes in 0..R racks.
 */
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algos.hpp"
#include "cluster.hpp"
#include "netsim.hpp"

using namespace nrsim;

namespace {

void usage(FILE *f)
{
	fputs("usage: netreduce-plan CLUSTER.json [options]\n"
	      "  --bytes LIST     gradient bytes per rank, e.g. 100M,1G (default 100M)\n"
	      "  --algo LIST      of ring, tree, box, hier, parallel, racks, spine (default:\n"
	      "                   all the cluster can run)\n"
	      "  --set KEY=VALUE  override a field of the file (repeatable): --set intra=100GBps,\n"
	      "                   --set latency.nic=5us, --set boxes=0.5\n"
	      "  --variant NAME   only this variant of the file's \"variants\" (\"base\": none)\n"
	      "  --deploy         also the racks algorithm with a box in 0, 1, ... R racks\n"
	      "  --json           JSON lines instead of tables\n"
	      "The cluster file's fields: sim/README.md.  Times come from SimGrid's\n"
	      "flow-level network model (CM02, max-min sharing) with the algorithms' phases\n"
	      "as the host library runs them; tree, spine and racks with several GPUs a\n"
	      "host are the model's (marked *), not the library's.\n", f);
}

std::vector<std::string> split(const std::string &s)
{
	std::vector<std::string> out;
	std::stringstream ss(s);
	std::string item;
	while (std::getline(ss, item, ','))
		if (!item.empty())
			out.push_back(item);
	return out;
}

std::string human_bw(double bps)
{
	char b[64];
	if (bps >= 1e9)
		snprintf(b, sizeof b, "%.4g GB/s", bps / 1e9);
	else
		snprintf(b, sizeof b, "%.4g Mbit/s", bps * 8 / 1e6);
	return b;
}

std::string describe(const Cluster &c)
{
	std::ostringstream o;
	bool same = std::all_of(c.rack_hosts.begin(), c.rack_hosts.end(),
				[&](int h) { return h == c.rack_hosts[0]; });
	o << c.hosts() << " hosts x " << c.gpus << " GPUs (" << c.ranks() << " ranks) in " << c.racks()
	  << (c.racks() == 1 ? " rack" : " racks");
	if (same && c.racks() > 1)
		o << " of " << c.rack_hosts[0];
	o << "; host link " << human_bw(c.nic);
	if (c.gpus > 1)
		o << ", intra-host " << human_bw(c.intra) << " (r = " << c.intra / c.nic << ")";
	if (c.racks() > 1)
		o << ", ToR uplink " << (c.tor_uplink > 0 ? human_bw(c.tor_uplink) : "non-blocking");
	o << "; boxes in " << c.boxes() << " of " << c.racks() << " racks; MTU " << c.mtu;
	return o.str();
}

struct Row {
	std::string variant, algo, about, phases;
	bool library;
	double bytes, seconds;
	int ranks;
	double xrack;
};

double busbw(double bytes, double seconds, int n)
{
	return bytes / seconds * 2.0 * (n - 1) / n;
}

void print_table(const Cluster &c, const std::vector<Row> &rows)
{
	double ring = 0;
	for (const Row &r : rows)
		if (r.algo == "ring")
			ring = r.seconds;
	printf("  %-9s %12s %12s %12s %8s  %s\n", "algorithm", "time, ms", "algbw GB/s", "busbw GB/s",
	       "vs ring", "phases, ms");
	for (const Row &r : rows)
		printf("  %-9s %12.3f %12.3f %12.3f %8.2f  %s\n", (r.algo + (r.library ? "" : "*")).c_str(),
		       r.seconds * 1e3, r.bytes / r.seconds / 1e9, busbw(r.bytes, r.seconds, r.ranks) / 1e9,
		       ring > 0 ? ring / r.seconds : 0.0, r.phases.c_str());
	if (c.gpus > 1 && c.hosts() > 2) {
		int h = c.hosts(), p = c.gpus, n = h * p;
		double r = c.intra / c.nic;
		double par = 2.0 * h * (p - 1) / (n - 2), hier = double(p) * n / (n - 2);
		printf("  the papers' condition (host/README.md's cost model): parallel beats the ring for "
		       "r > %.2f, hierarchical for r > %.2f; here r = %.2f\n", par, hier, r);
	}
}

std::string phases_text(const AlgoTime &t)
{
	std::ostringstream o;
	for (size_t i = 0; i < t.phases.size(); i++) {
		char b[32];
		snprintf(b, sizeof b, "%s%.3g", i ? " + " : "", t.phases[i] * 1e3);
		o << b;
	}
	return o.str();
}

std::vector<Row> run_one(const std::string &variant, const Cluster &c, double bytes,
			 const std::vector<std::string> &only)
{
	std::vector<Algo> algos = build_algos(c, bytes, only);
	if (algos.empty())
		throw std::invalid_argument("none of --algo runs on this cluster (box, hier, parallel need a box; "
					    "hier, parallel several GPUs a host; racks several racks)");
	std::vector<AlgoTime> times = simulate(c, algos);
	std::vector<Row> rows;
	for (size_t i = 0; i < algos.size(); i++)
		rows.push_back({variant, algos[i].name, algos[i].about, phases_text(times[i]), algos[i].library,
				bytes, times[i].seconds, c.ranks(), cross_rack_bytes(c, algos[i])});
	return rows;
}

void emit_json(const std::string &cluster, const Cluster &c, const std::vector<Row> &rows,
	       const char *kind, int boxed)
{
	double ring = 0;
	for (const Row &r : rows)
		if (r.algo == "ring")
			ring = r.seconds;
	for (const Row &r : rows) {
		nlohmann::json j = {{"cluster", cluster}, {"variant", r.variant}, {"kind", kind}, {"algo", r.algo},
			  {"library", r.library}, {"bytes", r.bytes}, {"ranks", r.ranks}, {"hosts", c.hosts()},
			  {"gpus", c.gpus}, {"racks", c.racks()}, {"boxes", boxed}, {"seconds", r.seconds},
			  {"algbw_Bps", r.bytes / r.seconds}, {"busbw_Bps", busbw(r.bytes, r.seconds, r.ranks)},
			  {"cross_rack_bytes", r.xrack}, {"nic_Bps", c.nic}, {"intra_Bps", c.intra}, {"tor_uplink_Bps", c.tor_uplink}};
		if (ring > 0)
			j["speedup_ring"] = ring / r.seconds;
		std::cout << j.dump() << "\n";
	}
}

int run(int argc, char **argv)
{
	std::string file, variant_only;
	std::vector<std::string> sets, only;
	std::vector<double> sizes;
	bool deploy = false, as_json = false;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto val = [&]() -> std::string {
			if (i + 1 >= argc)
				throw std::invalid_argument(a + " needs a value (see --help)");
			return argv[++i];
		};
		if (a == "-h" || a == "--help") {
			usage(stdout);
			return 0;
		} else if (a == "--bytes") {
			for (const std::string &s : split(val()))
				sizes.push_back(parse_size(s));
		} else if (a == "--algo") {
			only = split(val());
			for (const std::string &s : only)
				if (s != "ring" && s != "tree" && s != "box" && s != "hier" && s != "parallel" && s != "racks" &&
				    s != "spine")
					throw std::invalid_argument("--algo " + s + ": ring, tree, box, hier, parallel, racks or spine");
		} else if (a == "--set") {
			sets.push_back(val());
		} else if (a == "--variant") {
			variant_only = val();
		} else if (a == "--deploy") {
			deploy = true;
		} else if (a == "--json") {
			as_json = true;
		} else if (!a.empty() && a[0] == '-') {
			throw std::invalid_argument("unknown option " + a + " (see --help)");
		} else if (file.empty()) {
			file = a;
		} else {
			throw std::invalid_argument("one cluster file, not " + a + " too");
		}
	}
	if (file.empty()) {
		usage(stderr);
		return 2;
	}
	if (sizes.empty())
		sizes.push_back(100 * 1024.0 * 1024);
	std::ifstream in(file);
	if (!in)
		throw std::invalid_argument(file + ": " + strerror(errno));
	nlohmann::json base = nlohmann::json::parse(in, nullptr, false, true);
	if (base.is_discarded())
		throw std::invalid_argument(file + ": not valid JSON");
	for (const std::string &s : sets)
		cluster_set(base, s);
	std::vector<std::pair<std::string, nlohmann::json>> variants{{"base", base}};
	if (base.contains("variants")) {
		for (const auto &kv : base["variants"].items()) {
			nlohmann::json v = base;
			v.erase("variants");
			for (const auto &f : kv.value().items())
				v[f.key()] = f.value();
			for (const std::string &s : sets)   /* --set wins over a variant */
				cluster_set(v, s);
			variants.push_back({kv.key(), v});
		}
		variants[0].second.erase("variants");
		if (variant_only.empty())
			variants.erase(variants.begin());   /* the variants are the file's cases */
	}
	if (!variant_only.empty()) {
		auto it = std::find_if(variants.begin(), variants.end(),
				       [&](const auto &v) { return v.first == variant_only; });
		if (it == variants.end())
			throw std::invalid_argument("--variant " + variant_only + ": not in " + file);
		variants = {*it};
	}

	std::string cname = base.value("name", file);
	for (const auto &[vname, vj] : variants) {
		Cluster c = cluster_from_json(vj);
		for (double bytes : sizes) {
			std::vector<Row> rows = run_one(vname, c, bytes, only);
			if (as_json) {
				emit_json(cname, c, rows, "algos", c.boxes());
			} else {
				printf("== %s%s: %s\n   %.0f bytes per rank (%.4g MiB)\n", cname.c_str(),
				       vname == "base" ? "" : (" [" + vname + "]").c_str(), describe(c).c_str(), bytes,
				       bytes / (1 << 20));
				print_table(c, rows);
			}
			if (!deploy || c.racks() < 2)
				continue;
			double ring = 0;
			for (const Row &r : rows)
				if (r.algo == "ring")
					ring = r.seconds;
			if (ring == 0)
				ring = run_one(vname, c, bytes, {"ring"})[0].seconds;
			if (!as_json)
				printf("  where boxes pay off (racks algorithm, boxes in the first k racks):\n"
				       "  %8s %12s %8s\n", "k", "time, ms", "vs ring");
			std::vector<int> ks;
			int step = std::max(1, c.racks() / 8);
			for (int k = 0; k <= c.racks(); k += step)
				ks.push_back(k);
			if (ks.back() != c.racks())
				ks.push_back(c.racks());
			for (int k : ks) {
				Cluster d = c;
				std::fill(d.box.begin(), d.box.end(), false);
				std::fill(d.box.begin(), d.box.begin() + k, true);
				std::vector<Row> r = run_one(vname, d, bytes, {"racks"});
				if (as_json) {
					nlohmann::json j = {{"cluster", cname}, {"variant", vname}, {"kind", "deploy"},
						  {"algo", "racks"}, {"bytes", bytes}, {"ranks", d.ranks()},
						  {"racks", d.racks()}, {"boxes", k}, {"seconds", r[0].seconds},
						  {"speedup_ring", ring / r[0].seconds}};
					std::cout << j.dump() << "\n";
				} else {
					printf("  %4d/%-3d %12.3f %8.2f\n", k, d.racks(), r[0].seconds * 1e3,
					       ring / r[0].seconds);
				}
			}
		}
		if (!as_json)
			printf("\n");
	}
	if (!as_json)
		printf("(* the model's, not the host library's: tree is the NCCL-style reference peer, spine the "
		       "papers' leaf-spine aggregation; racks with several GPUs a host runs per local rank)\n");
	return 0;
}

} /* namespace */

int main(int argc, char **argv)
{
	try {
		return run(argc, argv);
	} catch (const std::exception &ex) {
		fprintf(stderr, "netreduce-plan: %s\n", ex.what());
		return 2;
	}
}
