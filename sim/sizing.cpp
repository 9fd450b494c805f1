/* SPDX-License-Identifier: BSD-3-Clause */
/* sim/sizing.cpp: netreduce-plan --size (sizing.hpp). */
#include "sizing.hpp"

#include <algorithm>
#include <set>

#include "evaluate.hpp"

namespace nrsim {

namespace {

/* The library's box algorithms for a job over `groups` box groups: one box
 * takes the flat ones, several the racks algorithm over the groups. */
std::vector<std::string> box_algos(const Cluster &c, int groups)
{
	if (groups > 1)
		return {"racks"};
	if (c.gpus > 1)
		return {"box", "hier", "parallel"};
	return {"box"};
}

int job_groups(const Cluster &c)
{
	std::set<int> g;
	for (int h = 0; h < c.hosts_per_job(); h++)
		g.insert(c.group_of_host(h));
	return (int)g.size();
}

/* The fastest of the box algorithms on cluster `b`. */
SizeRow best_box(const Cluster &b, double bytes, const SizeAnswer &ans)
{
	std::vector<std::string> algos = box_algos(b, job_groups(b));
	Evaluation ev = evaluate(b, bytes, algos);
	SizeRow row;
	row.boxes = b.boxes();
	row.hosts_per_box = b.box.hosts_per_box > 0 ? b.box.hosts_per_box : b.rack_hosts[0];
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

} /* namespace */

SizeAnswer size_boxes(const Cluster &c, double bytes, double factor)
{
	SizeAnswer ans;
	ans.bytes = bytes;
	ans.factor = factor;
	Evaluation base = evaluate(c, bytes, {"ring"});
	ans.baseline = base.rows[base.best].name + " (NCCL's pick: " + base.tuner.algo + "/" + base.tuner.proto + ")";
	ans.base_lo = base.best_lo();
	ans.base_hi = base.best_hi();
	std::set<int> seen;
	int hosts = c.hosts_per_job();
	for (int g = hosts; g >= 1; g = g > 1 ? (g + 1) / 2 : 0) {
		Cluster cg = c;
		cg.box.hosts_per_box = g;
		cg.box_in_rack.assign(c.racks(), true);
		cg.make_groups();
		if (!seen.insert(cg.groups()).second || (g < 2 && c.gpus == 1))
			continue;
		Cluster cw = cg;
		cw.box.wire = true;
		ans.rows.push_back(best_box(cw, bytes, ans));
		SizeRow most = best_box(cg, bytes, ans);
		ans.rows.push_back(most);
		if (!most.meets || ans.answer >= 0)
			continue;
		if (c.box.wire) {
			ans.answer = (int)ans.rows.size() - 1;
			continue;
		}
		/* the fewest cores, then the fewest ports, that meet the target */
		SizeRow found = most;
		for (int w : worker_steps(c.box.workers)) {
			Cluster t = cg;
			t.box.workers = w;
			SizeRow r = best_box(t, bytes, ans);
			if (!r.meets)
				continue;
			found = r;
			for (int p = r.ports - 1; p >= 1; p--) {
				Cluster u = t;
				u.box.ports = p;
				SizeRow q = best_box(u, bytes, ans);
				if (!q.meets)
					break;
				found = q;
			}
			break;
		}
		ans.rows.push_back(found);
		ans.answer = (int)ans.rows.size() - 1;
		/* what fewer cores buy on that many boxes */
		for (int w : worker_steps(found.workers)) {
			if (w >= found.workers)
				break;
			Cluster t = cg;
			t.box.workers = w;
			t.box.ports = std::max(1, found.ports);
			ans.fewer.push_back(best_box(t, bytes, ans));
		}
	}
	return ans;
}

} /* namespace nrsim */
