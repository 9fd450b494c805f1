/* SPDX-License-Identifier: BSD-3-Clause */
/* sim/sizing.cpp: netreduce-plan --size (sizing.hpp). */
#include "sizing.hpp"

#include <algorithm>
#include <set>

#include "evaluate.hpp"

namespace nrsim {

namespace {

int job_groups(const Cluster &c)
{
	std::set<int> g;
	for (int h = 0; h < c.hosts_per_job(); h++)
		g.insert(c.group_of_host(h));
	return (int)g.size();
}

/* The fastest of `algos` on cluster `b`. */
SizeRow best_box(const Cluster &b, double bytes, const std::vector<std::string> &algos, const SizeAnswer &ans)
{
	Evaluation ev = evaluate(b, bytes, algos);
	SizeRow row;
	std::set<int> used;
	int most = 0;
	for (int j = 0; j < b.jobs; j++)
		for (int h = j * b.hosts_per_job(); h < (j + 1) * b.hosts_per_job(); h++)
			used.insert(b.group_of_host(h));
	if (algos[0] != "racks") {      /* one box a job (its first rack's; jobs may share it) */
		row.boxes = b.boxes();
		most = b.hosts_per_job() * b.jobs / b.boxes();
	} else {
		row.boxes = (int)used.size();
		for (int g : used)
			most = std::max(most, b.group_size[g]);
	}
	row.hosts_per_box = most;
	row.wire = b.box.wire;
	row.workers = b.box.wire ? 0 : b.box.workers;
	row.ports = b.box.wire || !b.box.one_armed ? 0 : b.box.ports;
	for (const Result &r : ev.rows) {
		if (std::find(algos.begin(), algos.end(), r.name) == algos.end())
			continue;
		if (row.algo.empty() || r.t.lo < row.lo) {
			row.algo = r.name;
			row.library = r.library;
			row.lo = r.t.lo;
			row.hi = r.t.hi;
		}
	}
	row.speedup_lo = ans.base_lo / row.lo;
	row.speedup_hi = ans.base_hi / row.hi;
	row.meets = row.speedup_lo >= ans.factor;
	return row;
}

std::vector<int> worker_steps(int most)
{
	std::vector<int> ws;
	for (int w = 1; w < most; w *= 2)
		ws.push_back(w);
	ws.push_back(most);
	return ws;
}

struct Layout {
	Cluster c;
	std::vector<std::string> algos;
};

/* One box a job, then a box a rack, a box a group of half as many hosts ... */
std::vector<Layout> layouts(const Cluster &c)
{
	std::vector<Layout> out;
	Cluster one = c;
	one.box.hosts_per_box = 0;
	one.box_in_rack.assign(c.racks(), false);
	one.make_groups();
	for (int j = 0; j < c.jobs; j++)        /* each job's first rack */
		one.box_in_rack[one.group_rack[one.group_of_host(j * c.hosts_per_job())]] = true;
	if (c.gpus > 1)
		out.push_back({one, {"box", "hier", "parallel"}});
	else
		out.push_back({one, {"box"}});
	std::set<int> seen;
	int rack = *std::max_element(c.rack_hosts.begin(), c.rack_hosts.end());
	for (int g = rack; g >= (c.gpus > 1 ? 1 : 2); g = g > 1 ? (g + 1) / 2 : 0) {
		Cluster cg = c;
		cg.box.hosts_per_box = g >= rack ? 0 : g;
		cg.box_in_rack.assign(c.racks(), true);
		cg.make_groups();
		if (job_groups(cg) < 2 || !seen.insert(cg.groups()).second)
			continue;
		out.push_back({cg, {"racks"}});
	}
	return out;
}

} /* namespace */

SizeAnswer size_boxes(const Cluster &c, double bytes, double factor, const SizeLimits &lim)
{
	SizeAnswer ans;
	ans.bytes = bytes;
	ans.factor = factor;
	Evaluation base = evaluate(c, bytes, {"ring"});
	ans.baseline = base.rows[base.best].name + " (NCCL's pick: " + base.tuner.algo + "/" + base.tuner.proto + ")";
	ans.base_lo = base.best_lo();
	ans.base_hi = base.best_hi();
	for (const Layout &l : layouts(c)) {
		Cluster cw = l.c;
		cw.box.wire = true;
		ans.rows.push_back(best_box(cw, bytes, l.algos, ans));
		if (c.box.wire) {
			if (ans.rows.back().meets && ans.answer < 0)
				ans.answer = (int)ans.rows.size() - 1;
			continue;
		}
		Cluster big = l.c;
		big.box.workers = lim.cores;
		big.box.ports = lim.ports;
		SizeRow most = best_box(big, bytes, l.algos, ans);
		ans.rows.push_back(most);
		if (!most.meets || ans.answer >= 0)
			continue;
		/* the fewest cores, then the fewest ports, that meet the target */
		SizeRow found = most;
		for (int w : worker_steps(lim.cores)) {
			Cluster t = big;
			t.box.workers = w;
			SizeRow r = best_box(t, bytes, l.algos, ans);
			if (!r.meets)
				continue;
			found = r;
			for (int p = r.ports - 1; p >= 1; p--) {
				Cluster u = t;
				u.box.ports = p;
				SizeRow q = best_box(u, bytes, l.algos, ans);
				if (!q.meets)
					break;
				found = q;
			}
			break;
		}
		ans.rows.push_back(found);
		ans.answer = (int)ans.rows.size() - 1;
		/* what fewer cores buy in that layout */
		for (int w : worker_steps(found.workers)) {
			if (w >= found.workers)
				break;
			Cluster t = big;
			t.box.workers = w;
			t.box.ports = std::max(1, found.ports);
			ans.fewer.push_back(best_box(t, bytes, l.algos, ans));
		}
	}
	return ans;
}

} /* namespace nrsim */
