/* SPDX-License-Identifier: BSD-3-Clause */
/* sim/striped.cpp: netreduce-plan --size for striping (striped.hpp). */
#include "striped.hpp"

#include <algorithm>
#include <map>

#include "algos.hpp"
#include "evaluate.hpp"
#include "netsim.hpp"

namespace nrsim {

namespace {

struct Search {
	const Cluster &c;
	double bytes;
	StripeAnswer &ans;
	Cluster one;                    /* a box a job (its first rack's), as box, hier, parallel use */
	std::vector<std::string> algos;
	double load = 0;                /* payload bytes into one of the jobs' boxes, all stripes together */
	std::map<std::string, double> unlimited;   /* each algorithm's time with boxes without a limit */

	Search(const Cluster &cl, double b, StripeAnswer &a) : c(cl), bytes(b), ans(a), one(cl)
	{
		one.box.hosts_per_box = 0;
		one.box_in_rack.assign(c.racks(), false);
		one.make_groups();
		for (int j = 0; j < c.jobs; j++)
			one.box_in_rack[one.group_rack[one.group_of_host(j * c.hosts_per_job())]] = true;
		algos = {"striped"};
		if (c.gpus > 1)
			algos = {"striped", "striped-hier", "striped-parallel"};
		/* the least any of them brings a box: a host's S (striped-hier,
		 * striped-parallel; striped a rank's, as much with one GPU a host) */
		load = bytes * c.elem_scale() * c.hosts() / one.boxes();
	}

	/* Can K servers like cl's carry the load within `seconds` at their full
	 * rate (their cores' sum, their ports' payload)?  The model's box never
	 * beats that, so a K that cannot is not simulated. */
	bool can(const Cluster &cl, int k, double seconds) const
	{
		if (cl.box.wire)
			return true;
		double rate = cl.box_cpu_channels(cl.box.workers);
		if (cl.port_bw() > 0)
			rate = std::min(rate, cl.port_bw() / cl.wire());
		return load / (k * rate) <= seconds;
	}

	/* The fastest of `names` (all the striped ones when empty) on K servers like cl. */
	StripeRow eval(const Cluster &cl, int k, const char *role, double target,
		       const std::vector<std::string> &names = {})
	{
		Cluster t = cl;
		t.box.stripes = k;
		std::vector<Algo> built = build_algos(t, bytes, names.empty() ? algos : names);
		std::vector<AlgoTime> times = simulate(t, built, bytes);
		StripeRow row;
		row.stripes = k;
		row.servers = k * t.boxes();
		row.wire = t.box.wire;
		row.workers = t.box.wire ? 0 : t.box.workers;
		row.ports = t.box.wire || !t.box.one_armed ? 0 : t.box.ports;
		row.role = role;
		for (size_t i = 0; i < built.size(); i++) {
			if (row.wire)
				unlimited[built[i].name] = times[i].lo;
			if (row.algo.empty() || times[i].lo < row.lo) {
				row.algo = built[i].name;
				row.lo = times[i].lo;
				row.hi = times[i].hi;
				if (row.wire)
					take_apart(t, built[i], times[i]);
			}
		}
		row.speedup_lo = ans.base_lo / row.lo;
		row.speedup_hi = ans.base_hi / row.hi;
		row.meets = row.speedup_lo >= target;
		return row;
	}

	/* The algorithms that reach `target` with boxes without a limit: servers
	 * only slow them, so the others are not simulated on servers. */
	std::vector<std::string> viable(double target) const
	{
		std::vector<std::string> v;
		for (const auto &[name, t] : unlimited)
			if (ans.base_lo / t >= target)
				v.push_back(name);
		return v;
	}

	/* The unlimited row's time: its local phases (no box in them), its box
	 * phase as the hosts' NICs' share (the most bytes a NIC carries either
	 * way over its rate), what the ToR uplinks add past that (the most bytes
	 * an uplink carries over its rate, less the NICs'), and the rest
	 * (latency, windows, step costs); and what staging added. */
	void take_apart(const Cluster &t, const Algo &a, const AlgoTime &r)
	{
		ans.t_local = ans.t_nics = ans.t_fabric = ans.t_rest = 0;
		for (size_t i = 0; i < a.phases.size(); i++) {
			std::map<int, double> up, down, tor_up, tor_down;
			bool boxed = false;
			for (const Group &g : a.phases[i].groups)
				for (const Flow &f : g.flows) {
					if (!is_box(f.src) && !is_box(f.dst))
						continue;
					boxed = true;
					double b = g.steps * f.bytes * t.wire();
					int ep = is_box(f.src) ? f.dst : f.src;
					int nic = ep / t.gpus * t.nics + (ep % t.gpus) % t.nics;
					(is_box(f.src) ? down : up)[nic] += b;
					int rs = endpoint_rack(t, f.src), rd = endpoint_rack(t, f.dst);
					if (rs != rd) {
						if (rs < t.racks())
							tor_up[rs] += b;
						if (rd < t.racks())
							tor_down[rd] += b;
					}
				}
			if (!boxed) {
				ans.t_local += r.phases_lo[i];
				continue;
			}
			double nics = 0, uplinks = 0;
			for (const auto &m : {up, down})
				for (const auto &kv : m)
					nics = std::max(nics, kv.second / t.nic);
			if (t.tor_uplink > 0)
				for (const auto &m : {tor_up, tor_down})
					for (const auto &kv : m)
						uplinks = std::max(uplinks, kv.second / t.tor_uplink);
			double fabric = std::min(std::max(0.0, uplinks - nics), r.phases_lo[i] - nics);
			ans.t_nics += nics;
			ans.t_fabric += fabric;
			ans.t_rest += r.phases_lo[i] - nics - fabric;
		}
		ans.t_staging = r.staged_lo;
	}

	/* The fewest K (1, 2, 4 ...) of servers like cl reaching `target`; -1: none up to the bound. */
	int fewest(const Cluster &cl, double target, const char *role)
	{
		std::vector<int> ks;
		for (int k = 1; k < ans.max_stripes; k *= 2)
			ks.push_back(k);
		ks.push_back(ans.max_stripes);
		for (int k : ks) {
			if (!can(cl, k, ans.base_lo / target)) {
				ans.skipped.push_back(k * one.boxes());
				continue;
			}
			ans.rows.push_back(eval(cl, k, role, target, viable(target)));
			if (ans.rows.back().meets)
				return (int)ans.rows.size() - 1;
		}
		return -1;
	}
};

std::vector<int> worker_steps(int most)
{
	std::vector<int> ws;
	for (int w = 1; w < most; w *= 2)
		ws.push_back(w);
	ws.push_back(most);
	return ws;
}

} /* namespace */

StripeAnswer size_striped(const Cluster &c, double bytes, double factor, const SizeLimits &lim)
{
	StripeAnswer ans;
	ans.bytes = bytes;
	ans.factor = factor;
	ans.max_stripes = std::max(1, lim.stripes);
	ans.max_cores = lim.cores;
	ans.max_ports = c.box.one_armed ? lim.ports : 0;
	Evaluation base = evaluate(c, bytes, {"ring"});
	ans.baseline = base.rows[base.best].name + " (NCCL's pick: " + base.tuner.algo + "/" + base.tuner.proto + ")";
	ans.base_lo = base.best_lo();
	ans.base_hi = base.best_hi();
	Search s(c, bytes, ans);

	Cluster wire = s.one;
	wire.box.wire = true;
	ans.rows.push_back(s.eval(wire, std::min(4, ans.max_stripes), "unlimited", factor));
	ans.most = ans.rows[0].speedup_lo;
	if (c.box.wire) {
		if (ans.rows[0].meets)
			ans.answer = 0;
		return ans;
	}
	Cluster big = s.one;
	big.box.workers = lim.cores;
	big.box.ports = lim.ports;
	if (!ans.rows[0].meets) {
		/* none: the fewest largest servers that come within 5% of the most */
		if (!lim.fixed)
			ans.approach = s.fewest(big, 0.95 * ans.most, "approach");
		return ans;
	}
	int at = s.fewest(big, factor, "server");
	if (at < 0)
		return ans;
	if (lim.fixed) {
		ans.rows[at].role = "answer";
		ans.answer = at;
		return ans;
	}
	/* at that K: the fewest cores, then ports, that still meet it */
	int k = ans.rows[at].stripes;
	StripeRow found = ans.rows[at];
	for (int w : worker_steps(lim.cores)) {
		Cluster t = big;
		t.box.workers = w;
		if (!s.can(t, k, ans.base_lo / factor))
			continue;
		StripeRow r = w == lim.cores ? ans.rows[at] : s.eval(t, k, "server", factor, s.viable(factor));
		if (!r.meets)
			continue;
		found = r;
		for (int p = r.ports - 1; p >= 1; p--) {
			Cluster u = t;
			u.box.ports = p;
			if (!s.can(u, k, ans.base_lo / factor))
				break;
			StripeRow q = s.eval(u, k, "server", factor, s.viable(factor));
			if (!q.meets)
				break;
			found = q;
		}
		break;
	}
	found.role = "answer";
	ans.rows.push_back(found);
	ans.answer = (int)ans.rows.size() - 1;
	return ans;
}

} /* namespace nrsim */
