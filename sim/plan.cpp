/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/plan.cpp: netreduce-plan, the scale model's command (sim/README.md).
 *
 *   netreduce-plan CLUSTER.json [--bytes LIST] [--algo LIST] [--set K=V]...
 *                  [--variant NAME] [--deploy] [--size [--factor F]] [--json]
 *   netreduce-plan --trees N
 *
 * For each variant of the cluster file and each size: the all-reduce time of
 * every algorithm on SimGrid (a band: the step cost's low and high end), its
 * algorithm and bus bandwidth, the speedup over the best baseline (NCCL's
 * tuner's pick); with --deploy the racks algorithm with boxes in 0..R racks;
 * with --size how many box servers the cluster needs (sizing.hpp), and how
 * many striped ones (striped.hpp).
 */
#include <algorithm>
#include <cerrno>
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
#include "evaluate.hpp"
#include "nccl.hpp"
#include "netsim.hpp"
#include "sizing.hpp"
#include "striped.hpp"

using namespace nrsim;

namespace {

const char *kAlgos[] = {"ring", "tree", "box", "hier", "parallel", "racks", "spine", "striped", "striped-hier",
			"striped-parallel"};

void usage(FILE *f)
{
	fputs("usage: netreduce-plan CLUSTER.json [options]\n"
	      "       netreduce-plan --trees N   (NCCL's double binary tree over N hosts, JSON lines)\n"
	      "  --bytes LIST     fp32 gradient bytes per rank, e.g. 100M,1G (default 100M);\n"
	      "                   dtype bf16/fp16 in the file moves half of them\n"
	      "  --algo LIST      of ring, tree, box, hier, parallel, racks, spine, striped,\n"
	      "                   striped-hier, striped-parallel (default: all the cluster can\n"
	      "                   run, the striped ones where box.stripes > 1; the baselines\n"
	      "                   ring and tree always run)\n"
	      "  --set KEY=VALUE  override a field of the file (repeatable): --set intra=100GBps,\n"
	      "                   --set latency.nic=5us, --set box.workers=4, --set box=wire\n"
	      "  --variant NAME   only this variant of the file's \"variants\" (\"base\": none)\n"
	      "  --deploy         also the racks algorithm with a box in 0, 1, ... R racks\n"
	      "  --size           how many box servers (cores, ports) beat the best baseline\n"
	      "  --factor F       by this factor (with --size; default 1.5)\n"
	      "  --max-cores N    the most workers a box server runs (with --size; default 64)\n"
	      "  --max-ports N    the most NIC ports it has (with --size; default 8)\n"
	      "  --max-stripes N  the most servers a job stripes over (with --size; default\n"
	      "                   128; 0: no striped search)\n"
	      "  --stripes-only   with --size, only the striped search\n"
	      "  --fixed-server   with --size, striped servers of --max-cores and --max-ports\n"
	      "                   only (no search for fewer; none: no 95% search)\n"
	      "  --json           JSON lines instead of tables\n"
	      "The cluster file's fields: sim/README.md.  Times come from SimGrid's\n"
	      "flow-level network model (CM02, max-min sharing) with the algorithms' phases\n"
	      "as the host library runs them; a time is a band (the step cost's low and high\n"
	      "end).  The best baseline is the algorithm NCCL's tuner picks (src/graph/\n"
	      "tuning.cc's model); tree, spine and racks with several GPUs a host are the\n"
	      "model's (marked *), not the library's.\n", f);
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
	if (c.jobs > 1)
		o << ", " << c.jobs << " jobs at once";
	o << "; host link " << (c.nics > 1 ? std::to_string(c.nics) + " x " : "") << human_bw(c.nic);
	if (c.gpus > 1) {
		o << ", GPUs' intra-host " << human_bw(c.intra) << (c.intra_nvlink ? " (NVLink)" : " (PCIe)");
		o << ", the library's " << human_bw(c.library_intra)
		  << (c.gpu_path ? " (GPU path)" : " (shared memory)");
	}
	if (c.racks() > 1)
		o << ", ToR uplink " << (c.tor_uplink > 0 ? human_bw(c.tor_uplink) : "non-blocking");
	o << "; MTU " << c.mtu << ", " << c.dtype;
	if (c.gpu_gradients && !c.gpu_path)
		o << ", staged at " << human_bw(c.stage);
	o << "\n   " << c.box_text() << "; boxes in " << c.racks_with_box() << " of " << c.racks() << " racks";
	if (c.groups() != c.racks())
		o << " (" << c.boxes() << " boxes)";
	char b[96];
	if (c.step_lo == c.step_hi)
		snprintf(b, sizeof b, "; step cost %.3g us", c.step_lo * 1e6);
	else
		snprintf(b, sizeof b, "; step cost %.3g-%.3g us", c.step_lo * 1e6, c.step_hi * 1e6);
	o << b;
	return o.str();
}

/* NCCL's bus bandwidth: 2(n-1)/n of the algorithm bandwidth for an all-reduce,
 * (n-1)/n for a reduce-scatter or an all-gather */
double busbw(const Cluster &c, double bytes, double seconds, int n)
{
	return bytes / seconds * (c.collective == "allreduce" ? 2.0 : 1.0) * (n - 1) / n;
}

std::string phases_text(const AlgoTime &t)
{
	std::ostringstream o;
	for (size_t i = 0; i < t.phases_lo.size(); i++) {
		char b[32];
		snprintf(b, sizeof b, "%s%.3g", i ? " + " : "", t.phases_lo[i] * 1e3);
		o << b;
	}
	if (t.staged_lo > 0) {
		char b[48];
		snprintf(b, sizeof b, " + staging %.3g", t.staged_lo * 1e3);
		o << b;
	}
	return o.str();
}

std::string band(double lo, double hi, double scale, const char *fmt)
{
	char a[32], b[32];
	snprintf(a, sizeof a, fmt, lo * scale);
	snprintf(b, sizeof b, fmt, hi * scale);
	return std::string(a) == b ? a : std::string(a) + "-" + b;
}

void print_table(const Cluster &c, const Evaluation &ev)
{
	double s = ev.bytes * c.elem_scale();
	int n = c.hosts_per_job() * c.gpus;
	printf("  %-9s %17s %10s %10s %13s  %s\n", "algorithm", "time, ms", "algbw GB/s", "busbw GB/s",
	       "vs baseline", "phases, ms (low end)");
	for (const Result &r : ev.rows) {
		std::string name = r.name + (r.library ? "" : "*");
		printf("  %-9s %17s %10.3f %10.3f %13s  %s\n", name.c_str(), band(r.t.lo, r.t.hi, 1e3, "%.3f").c_str(),
		       s / r.t.lo / 1e9, busbw(c, s, r.t.lo, n) / 1e9,
		       band(ev.best_lo() / r.t.lo, ev.best_hi() / r.t.hi, 1, "%.2f").c_str(), phases_text(r.t).c_str());
	}
	if (ev.best >= 0 && c.collective != "allreduce")
		printf("  the baseline: the ring (NCCL runs reduce-scatter and all-gather on rings)\n");
	else if (ev.best >= 0)
		printf("  the best baseline: %s, as NCCL's tuner picks it (%s/%s, its own model: %.3f ms)\n",
		       ev.rows[ev.best].name.c_str(), ev.tuner.algo.c_str(), ev.tuner.proto.c_str(),
		       ev.tuner.seconds * 1e3);
	if (c.gpus > 1 && c.hosts_per_job() > 2) {
		int h = c.hosts_per_job(), p = c.gpus, nn = h * p;
		double r = c.library_intra / (c.nic * c.nics);
		double par = 2.0 * h * (p - 1) / (nn - 2), hier = double(p) * nn / (nn - 2);
		printf("  the papers' condition (host/README.md's cost model): parallel beats the ring for "
		       "r > %.2f, hierarchical for r > %.2f; here r = library_intra / host link = %.2f\n",
		       par, hier, r);
	}
}

nlohmann::json row_json(const std::string &cname, const std::string &variant, const Cluster &c,
			const Evaluation &ev, const Result &r)
{
	double s = ev.bytes * c.elem_scale();
	int n = c.hosts_per_job() * c.gpus;
	nlohmann::json j = {
		{"cluster", cname}, {"variant", variant}, {"kind", "algos"}, {"algo", r.name},
		{"library", r.library}, {"baseline", r.baseline}, {"bytes", ev.bytes}, {"wire_bytes", s},
		{"dtype", c.dtype}, {"collective", c.collective}, {"ranks", n}, {"hosts", c.hosts_per_job()},
		{"gpus", c.gpus},
		{"jobs", c.jobs}, {"racks", c.racks()}, {"boxes", c.boxes()}, {"groups", c.groups()},
		{"seconds", r.t.lo}, {"seconds_hi", r.t.hi}, {"staged_seconds", r.t.staged_lo},
		{"phases", r.t.phases_lo}, {"algbw_Bps", s / r.t.lo}, {"busbw_Bps", busbw(c, s, r.t.lo, n)},
		{"cross_rack_bytes", r.cross_rack}, {"nic_Bps", c.nic}, {"nics", c.nics}, {"intra_Bps", c.intra},
		{"library_intra_Bps", c.library_intra}, {"tor_uplink_Bps", c.tor_uplink},
		{"step_lo", c.step_lo}, {"step_hi", c.step_hi}, {"box_wire", c.box.wire},
		{"tuner_algo", ev.tuner.algo}, {"tuner_proto", ev.tuner.proto}, {"tuner_seconds", ev.tuner.seconds}};
	if (!c.box.wire) {
		j["box_workers"] = c.box.workers;
		j["box_ports"] = c.box.one_armed ? c.box.ports : 0;
		j["box_gbps"] = c.box.rates.gbps(c.box.workers, c.mtu, c.dtype);
		j["box_port_Bps"] = c.port_bw();
	}
	if (ev.ring >= 0)
		j["speedup_ring"] = ev.rows[ev.ring].t.lo / r.t.lo;
	if (ev.best >= 0) {
		j["best_baseline"] = ev.rows[ev.best].name;
		j["speedup_best"] = ev.best_lo() / r.t.lo;
		j["speedup_best_hi"] = ev.best_hi() / r.t.hi;
	}
	return j;
}

void print_size(const Cluster &c, const SizeAnswer &a, bool as_json, const std::string &cname,
		const std::string &variant)
{
	auto cfg = [&](const SizeRow &r) {
		char b[96];
		if (r.wire)
			return std::string("no limit (the hosts' side alone)");
		if (r.ports > 0)
			snprintf(b, sizeof b, "%d cores, %d x %.4g Gbit/s", r.workers, r.ports,
				 (c.box.port_speed > 0 ? c.box.port_speed : c.nic) * 8 / 1e9);
		else
			snprintf(b, sizeof b, "%d cores", r.workers);
		return std::string(b);
	};
	if (as_json) {
		auto emit = [&](const SizeRow &r, const char *role) {
			nlohmann::json j = {{"cluster", cname}, {"variant", variant}, {"kind", "size"}, {"role", role},
				  {"bytes", a.bytes}, {"factor", a.factor}, {"baseline", a.baseline},
				  {"baseline_seconds", a.base_lo}, {"baseline_seconds_hi", a.base_hi},
				  {"boxes", r.boxes}, {"hosts_per_box", r.hosts_per_box}, {"wire", r.wire},
				  {"workers", r.workers}, {"ports", r.ports}, {"algo", r.algo}, {"library", r.library},
				  {"seconds", r.lo}, {"seconds_hi", r.hi}, {"speedup_best", r.speedup_lo},
				  {"speedup_best_hi", r.speedup_hi}, {"meets", r.meets}};
			std::cout << j.dump() << "\n";
		};
		for (size_t i = 0; i < a.rows.size(); i++)
			emit(a.rows[i], (int)i == a.answer ? "answer" : a.rows[i].wire ? "unlimited" : "server");
		for (const SizeRow &r : a.fewer)
			emit(r, "fewer");
		return;
	}
	printf("  sizing: %.4g MiB, the box algorithms against the best baseline, %s (%s ms); target %.2gx\n",
	       a.bytes / (1 << 20), a.baseline.c_str(), band(a.base_lo, a.base_hi, 1e3, "%.3f").c_str(), a.factor);
	printf("  %6s %12s  %-36s %-10s %17s %12s\n", "boxes", "hosts a box", "each box (searched)", "algorithm",
	       "time, ms", "vs baseline");
	for (size_t i = 0; i < a.rows.size(); i++) {
		const SizeRow &r = a.rows[i];
		printf("  %6d %12d  %-36s %-10s %17s %12s%s\n", r.boxes, r.hosts_per_box, cfg(r).c_str(),
		       (r.algo + (r.library ? "" : "*")).c_str(), band(r.lo, r.hi, 1e3, "%.3f").c_str(),
		       band(r.speedup_lo, r.speedup_hi, 1, "%.2f").c_str(),
		       (int)i == a.answer ? "  <- the answer" : r.meets ? "" : "");
	}
	if (a.answer >= 0) {
		const SizeRow &r = a.rows[a.answer];
		printf("  answer: %d box server%s of %s for %.2fx (%s at the step cost's high end)\n", r.boxes,
		       r.boxes == 1 ? "" : "s", cfg(r).c_str(), r.speedup_lo,
		       band(r.speedup_hi, r.speedup_hi, 1, "%.2fx").c_str());
		for (const SizeRow &f : a.fewer)
			printf("  fewer: %d box%s of %s: %sx\n", f.boxes, f.boxes == 1 ? "" : "es", cfg(f).c_str(),
			       band(f.speedup_lo, f.speedup_hi, 1, "%.2f").c_str());
	} else {
		printf("  answer: no number of these servers reaches %.2gx here (the rows say what each buys)\n",
		       a.factor);
	}
}

/* What bounds the most striping reaches: the largest part of its time. */
const char *stripe_bound(const StripeAnswer &a)
{
	double parts[] = {a.t_staging, a.t_local, a.t_nics, a.t_fabric, a.t_rest};
	const char *names[] = {"staging", "the local phases", "the hosts' NICs", "the ToR uplinks",
			       "latency, windows and step costs"};
	return names[std::max_element(parts, parts + 5) - parts];
}

void print_stripes(const Cluster &c, const StripeAnswer &a, bool as_json, const std::string &cname,
		   const std::string &variant)
{
	double port = (c.box.port_speed > 0 ? c.box.port_speed : c.nic) * 8 / 1e9;
	auto cfg = [&](const StripeRow &r) {
		char b[96];
		if (r.wire)
			return std::string("no limit (the hosts' side alone)");
		if (r.ports > 0)
			snprintf(b, sizeof b, "%d cores, %d x %.4g Gbit/s", r.workers, r.ports, port);
		else
			snprintf(b, sizeof b, "%d cores", r.workers);
		return std::string(b);
	};
	const StripeRow *ans = a.answer >= 0 ? &a.rows[a.answer] : nullptr;
	const StripeRow *near = a.approach >= 0 ? &a.rows[a.approach] : nullptr;
	const StripeRow *best = nullptr;        /* the fastest server row */
	for (const StripeRow &r : a.rows)
		if (!r.wire && (!best || r.lo < best->lo))
			best = &r;
	if (as_json) {
		for (const StripeRow &r : a.rows)
			std::cout << nlohmann::json({{"cluster", cname}, {"variant", variant}, {"kind", "stripes"},
				  {"role", r.role}, {"bytes", a.bytes}, {"factor", a.factor}, {"stripes", r.stripes},
				  {"servers", r.servers}, {"wire", r.wire}, {"workers", r.workers}, {"ports", r.ports},
				  {"algo", r.algo}, {"seconds", r.lo}, {"seconds_hi", r.hi}, {"speedup_best", r.speedup_lo},
				  {"speedup_best_hi", r.speedup_hi}, {"meets", r.meets}}).dump() << "\n";
		nlohmann::json j = {{"cluster", cname}, {"variant", variant}, {"kind", "stripes-answer"},
			  {"bytes", a.bytes}, {"factor", a.factor}, {"baseline", a.baseline},
			  {"baseline_seconds", a.base_lo}, {"baseline_seconds_hi", a.base_hi},
			  {"max_stripes", a.max_stripes}, {"most", a.most}, {"most_algo", a.rows[0].algo},
			  {"most_seconds", a.rows[0].lo}, {"local_seconds", a.t_local}, {"nics_seconds", a.t_nics},
			  {"fabric_seconds", a.t_fabric}, {"rest_seconds", a.t_rest}, {"staging_seconds", a.t_staging}, {"bound", stripe_bound(a)},
			  {"skipped", a.skipped}, {"servers", nullptr}};
		if (ans)
			j.update({{"servers", ans->servers}, {"workers", ans->workers}, {"ports", ans->ports},
				  {"algo", ans->algo}, {"speedup", ans->speedup_lo}, {"speedup_hi", ans->speedup_hi}});
		if (near)
			j.update({{"approach_servers", near->servers}, {"approach_speedup", near->speedup_lo}});
		if (best)
			j.update({{"best_servers", best->servers}, {"best_speedup", best->speedup_lo}});
		std::cout << j.dump() << "\n";
		return;
	}
	printf("  striping (NR_BOX's list): servers of the file's box a job stripes over, every host to every box; "
	       "target %.2gx over %s (%s ms)\n", a.factor, a.baseline.c_str(), band(a.base_lo, a.base_hi, 1e3, "%.3f").c_str());
	printf("  %8s  %-36s %-17s %17s %12s\n", "servers", "each (searched)", "algorithm", "time, ms", "vs baseline");
	for (size_t i = 0; i < a.rows.size(); i++) {
		const StripeRow &r = a.rows[i];
		printf("  %8s  %-36s %-17s %17s %12s%s\n", r.wire ? "-" : std::to_string(r.servers).c_str(), cfg(r).c_str(), r.algo.c_str(),
		       band(r.lo, r.hi, 1e3, "%.3f").c_str(), band(r.speedup_lo, r.speedup_hi, 1, "%.2f").c_str(),
		       (int)i == a.answer ? "  <- the answer" : (int)i == a.approach ? "  <- 95% of the most" : "");
	}
	if (!a.skipped.empty()) {
		std::string list;
		for (int n : a.skipped)
			list += (list.empty() ? "" : ", ") + std::to_string(n);
		printf("  not simulated: %s server%s of %d cores%s, whose cores or ports at their full rate cannot take "
		       "the hosts' data in the target time\n", list.c_str(), a.skipped.size() == 1 && a.skipped[0] == 1 ? "" : "s",
		       a.max_cores, a.max_ports > 0 ? (" and " + std::to_string(a.max_ports) + " ports").c_str() : "");
	}
	if (ans) {
		printf("  striped answer: %d server%s of %s for %.2fx (%.2fx at the step cost's high end)\n", ans->servers,
		       ans->servers == 1 ? "" : "s", cfg(*ans).c_str(), ans->speedup_lo, ans->speedup_hi);
		return;
	}
	if (a.rows[0].meets) {
		printf("  striped answer: none up to %d servers of %s (the most they reach: %.2fx); boxes without a "
		       "limit reach %.2fx\n", a.max_stripes, cfg(*best).c_str(), best->speedup_lo, a.most);
		return;
	}
	printf("  striped answer: none reaches %.2gx; the most, with boxes without a limit, is %.2fx (%.3f ms: local "
	       "phases %.3f + the hosts' NICs %.3f + the ToR uplinks past them %.3f + latency, windows and step "
	       "costs %.3f + staging %.3f): bounded by %s\n", a.factor, a.most, a.rows[0].lo * 1e3, a.t_local * 1e3,
	       a.t_nics * 1e3, a.t_fabric * 1e3, a.t_rest * 1e3, a.t_staging * 1e3, stripe_bound(a));
	if (near)
		printf("  %d server%s of %s reach %.2fx (95%% of it)\n", near->servers, near->servers == 1 ? "" : "s",
		       cfg(*near).c_str(), near->speedup_lo);
	else if (best)
		printf("  up to %d servers of %s reach at most %.2fx\n", a.max_stripes, cfg(*best).c_str(),
		       best->speedup_lo);
}

void print_trees(int n)
{
	DoubleTree t = nccl_double_tree(n);
	for (int k = 0; k < 2; k++)
		for (int r = 0; r < n; r++)
			std::cout << nlohmann::json({{"tree", k}, {"rank", r}, {"parent", t.parent[k][r]},
						     {"children", t.children[k][r]}})
					     .dump()
				  << "\n";
}

std::string dir_of(const std::string &path)
{
	size_t slash = path.rfind('/');
	return slash == std::string::npos ? "." : path.substr(0, slash);
}

int run(int argc, char **argv)
{
	std::string file, variant_only;
	std::vector<std::string> sets, only;
	std::vector<double> sizes;
	bool deploy = false, as_json = false, size = false, stripes_only = false;
	double factor = 1.5;
	SizeLimits lim;
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
				if (std::find(std::begin(kAlgos), std::end(kAlgos), s) == std::end(kAlgos))
					throw std::invalid_argument("--algo " + s + ": ring, tree, box, hier, parallel, racks, "
								    "spine, striped, striped-hier or striped-parallel");
		} else if (a == "--set") {
			sets.push_back(val());
		} else if (a == "--variant") {
			variant_only = val();
		} else if (a == "--deploy") {
			deploy = true;
		} else if (a == "--size") {
			size = true;
		} else if (a == "--factor") {
			std::string v = val();
			char *end = nullptr;
			factor = strtod(v.c_str(), &end);
			if (end == v.c_str() || *end || !(factor > 0))
				throw std::invalid_argument("--factor " + v + ": a speedup above 0, e.g. 1.5");
		} else if (a == "--max-cores" || a == "--max-ports") {
			std::string v = val();
			int n = atoi(v.c_str());
			if (n < 1 || n > 4096 || std::to_string(n) != v)
				throw std::invalid_argument(a + " " + v + ": an integer 1..4096");
			(a == "--max-cores" ? lim.cores : lim.ports) = n;
		} else if (a == "--max-stripes") {
			std::string v = val();
			int n = atoi(v.c_str());
			if (n < 0 || n > 1024 || std::to_string(n) != v)
				throw std::invalid_argument(a + " " + v + ": an integer 0..1024");
			lim.stripes = n;
		} else if (a == "--stripes-only") {
			stripes_only = true;
		} else if (a == "--fixed-server") {
			lim.fixed = true;
		} else if (a == "--trees") {
			std::string v = val();
			int n = atoi(v.c_str());
			if (n < 1 || n > 1 << 16)
				throw std::invalid_argument("--trees " + v + ": a number of hosts, 1..65536");
			print_trees(n);
			return 0;
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
		Cluster c = cluster_from_json(vj, dir_of(file));
		for (double bytes : sizes) {
			Evaluation ev = evaluate(c, bytes, only);
			if (as_json) {
				for (const Result &r : ev.rows)
					std::cout << row_json(cname, vname, c, ev, r).dump() << "\n";
			} else {
				printf("== %s%s: %s\n   %.0f bytes of fp32 gradients per rank (%.4g MiB)%s\n", cname.c_str(),
				       vname == "base" ? "" : (" [" + vname + "]").c_str(), describe(c).c_str(), bytes,
				       bytes / (1 << 20), c.dtype == "fp32" ? "" : (", " + c.dtype + ": half of them move").c_str());
				print_table(c, ev);
			}
			if (size && !stripes_only)
				print_size(c, size_boxes(c, bytes, factor, lim), as_json, cname, vname);
			if (size && lim.stripes > 0)
				print_stripes(c, size_striped(c, bytes, factor, lim), as_json, cname, vname);
			if (!deploy || c.racks() < 2)
				continue;
			double ring = ev.rows[ev.ring].t.lo;
			if (!as_json)
				printf("  where boxes pay off (racks algorithm, boxes in the first k racks):\n"
				       "  %8s %17s %8s\n", "k", "time, ms", "vs ring");
			std::vector<int> ks;
			int step = std::max(1, c.racks() / 8);
			for (int k = 0; k <= c.racks(); k += step)
				ks.push_back(k);
			if (ks.back() != c.racks())
				ks.push_back(c.racks());
			for (int k : ks) {
				Cluster d = c;
				std::fill(d.box_in_rack.begin(), d.box_in_rack.end(), false);
				std::fill(d.box_in_rack.begin(), d.box_in_rack.begin() + k, true);
				std::vector<Algo> algos = build_algos(d, bytes, {"racks"});
				if (algos.empty())
					continue;
				AlgoTime t = simulate(d, algos, bytes)[0];
				if (as_json) {
					nlohmann::json j = {{"cluster", cname}, {"variant", vname}, {"kind", "deploy"},
						  {"algo", "racks"}, {"bytes", bytes}, {"ranks", d.ranks()},
						  {"racks", d.racks()}, {"boxes", k}, {"seconds", t.lo}, {"seconds_hi", t.hi},
						  {"speedup_ring", ring / t.lo}};
					std::cout << j.dump() << "\n";
				} else {
					printf("  %4d/%-3d %17s %8.2f\n", k, d.racks(), band(t.lo, t.hi, 1e3, "%.3f").c_str(),
					       ring / t.lo);
				}
			}
		}
		if (!as_json)
			printf("\n");
	}
	if (!as_json)
		printf("(* the model's, not the host library's: tree is NCCL's double binary tree, spine the "
		       "papers' leaf-spine aggregation; racks with several GPUs a host runs per local rank.\n"
		       " A time a-b: the step cost at its band's low and high end; vs baseline at the same end)\n");
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
