/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/algos.cpp: the algorithms of host/README.md and docs/racks.md, and the
 * reference peers, as phases (algos.hpp).  What each moves is written next to
 * it; sim/README.md has the table.
 */
#include "algos.hpp"

#include <algorithm>
#include <cmath>

namespace nrsim {

namespace {

int rank_of(const Cluster &c, int host, int gpu) { return host * c.gpus + gpu; }

/* The hosts of rack k. */
std::vector<int> rack_members(const Cluster &c, int k)
{
	std::vector<int> hosts;
	int first = 0;
	for (int i = 0; i < k; i++)
		first += c.rack_hosts[i];
	for (int h = 0; h < c.rack_hosts[k]; h++)
		hosts.push_back(first + h);
	return hosts;
}

/* Our ring (nr_ring_allreduce) over members, `data` bytes each: 2(n-1) steps,
 * each rank sends data/n to the next and receives data/n from the previous. */
Group ring_group(const std::vector<int> &members, double data)
{
	Group g;
	int n = (int)members.size();
	if (n < 2)
		return g;
	for (int i = 0; i < n; i++)
		g.flows.push_back({members[i], members[(i + 1) % n], data / n});
	g.steps = 2 * (n - 1);
	return g;
}

/* One box job: every member streams `data` bytes to the box of rack k and
 * gets the sum back on its own connection, packet by packet, all at once. */
Group box_group(const std::vector<int> &members, int k, double data)
{
	Group g;
	for (int r : members) {
		g.flows.push_back({r, box_ep(k), data});
		g.flows.push_back({box_ep(k), r, data});
	}
	return g;
}

/* Inside every host: local rank p reads share p (data/G) from each other rank
 * of its host (the parallel variant's reduce-scatter; its all-gather moves the
 * same bytes). */
Group local_scatter(const Cluster &c, double data)
{
	Group g;
	for (int h = 0; h < c.hosts(); h++)
		for (int p = 0; p < c.gpus; p++)
			for (int q = 0; q < c.gpus; q++)
				if (p != q)
					g.flows.push_back({rank_of(c, h, q), rank_of(c, h, p), data / c.gpus});
	return g;
}

Algo ring(const Cluster &c, double s)
{
	Algo a{"ring", "our ring over every rank, host by host (nr_ring_allreduce)", true, {}};
	std::vector<int> all(c.ranks());
	for (int r = 0; r < c.ranks(); r++)
		all[r] = r;
	a.phases.push_back({"ring over " + std::to_string(c.ranks()) + " ranks", {ring_group(all, s)}});
	return a;
}

/* The NCCL-style double binary tree (reference peer, not in the library):
 * inside a host a chain of its G ranks (S up and S down each edge), between
 * hosts two binary trees of the hosts, each carrying S/2 up (reduce) and down
 * (broadcast), host h interior in at most one of them; everything pipelined
 * in chunks of tree_chunk, so all flows run at once, plus the pipeline's fill. */
Algo tree(const Cluster &c, double s)
{
	Algo a{"tree", "double binary tree (NCCL-style reference peer)", false, {}};
	int m = c.hosts();
	Group g;
	for (int h = 0; h < m; h++)
		for (int p = 0; p + 1 < c.gpus; p++) {
			g.flows.push_back({rank_of(c, h, p + 1), rank_of(c, h, p), s});
			g.flows.push_back({rank_of(c, h, p), rank_of(c, h, p + 1), s});
		}
	/* Tree A: the balanced in-order binary tree of hosts 0..m-1 (the root of
	 * [lo, hi] is its middle); tree B: the same mirrored (m even) or shifted
	 * by one (m odd), so that most leaves of A are inner nodes of B. */
	std::vector<int> parent(m, -1);
	int depth = 0;
	struct Span { int lo, hi, up, level; };
	std::vector<Span> todo{{0, m - 1, -1, 1}};
	while (!todo.empty()) {
		Span sp = todo.back();
		todo.pop_back();
		if (sp.lo > sp.hi)
			continue;
		int mid = (sp.lo + sp.hi) / 2;
		parent[mid] = sp.up;
		depth = std::max(depth, sp.level);
		todo.push_back({sp.lo, mid - 1, mid, sp.level + 1});
		todo.push_back({mid + 1, sp.hi, mid, sp.level + 1});
	}
	for (int t = 0; t < 2 && m > 1; t++) {
		for (int i = 0; i < m; i++) {
			int p = parent[i];
			if (p < 0)
				continue;
			int ci = t == 0 ? i : (m % 2 == 0 ? m - 1 - i : (i + 1) % m);
			int cp = t == 0 ? p : (m % 2 == 0 ? m - 1 - p : (p + 1) % m);
			int gi = t == 0 ? 0 : c.gpus - 1;   /* tree B leaves the host from its last rank */
			g.flows.push_back({rank_of(c, ci, gi), rank_of(c, cp, gi), s / 2});
			g.flows.push_back({rank_of(c, cp, gi), rank_of(c, ci, gi), s / 2});
		}
	}
	g.fill = 2 * depth * (c.tree_chunk / 2 / c.nic) + 2 * (c.gpus - 1) * c.tree_chunk / c.intra;
	a.phases.push_back({"chains and two trees, pipelined", {g}});
	return a;
}

Algo box_flat(const Cluster &c, double s)
{
	int k = c.first_box();
	Algo a{"box", "one box job of every rank (the box of rack " + std::to_string(k) + ")", true, {}};
	std::vector<int> all(c.ranks());
	for (int r = 0; r < c.ranks(); r++)
		all[r] = r;
	a.phases.push_back({"through the box", {box_group(all, k, s)}});
	return a;
}

/* NR_HIER=hierarchical: local rank 0 reads S from each other rank of its host,
 * one box job of the H local ranks 0, the others read S back from it. */
Algo hier(const Cluster &c, double s)
{
	int k = c.first_box();
	Algo a{"hier", "hierarchical: local sum, one box job of the hosts, local copy", true, {}};
	Group red, bc;
	std::vector<int> leaders;
	for (int h = 0; h < c.hosts(); h++) {
		leaders.push_back(rank_of(c, h, 0));
		for (int p = 1; p < c.gpus; p++) {
			red.flows.push_back({rank_of(c, h, p), rank_of(c, h, 0), s});
			bc.flows.push_back({rank_of(c, h, 0), rank_of(c, h, p), s});
		}
	}
	a.phases.push_back({"local sum at local rank 0", {red}});
	a.phases.push_back({"through the box", {box_group(leaders, k, s)}});
	a.phases.push_back({"local copy", {bc}});
	return a;
}

/* NR_HIER=parallel: local reduce-scatter, G box jobs (column p: local rank p
 * of every host) of S/G, local all-gather. */
Algo parallel(const Cluster &c, double s)
{
	int k = c.first_box();
	Algo a{"parallel", "parallel: local reduce-scatter, a box job per local rank, local all-gather", true, {}};
	Phase boxes{"through the box, " + std::to_string(c.gpus) + " jobs", {}};
	Group all;
	for (int p = 0; p < c.gpus; p++) {
		std::vector<int> col;
		for (int h = 0; h < c.hosts(); h++)
			col.push_back(rank_of(c, h, p));
		Group g = box_group(col, k, s / c.gpus);
		all.flows.insert(all.flows.end(), g.flows.begin(), g.flows.end());
	}
	boxes.groups.push_back(all);
	a.phases.push_back({"local reduce-scatter", {local_scatter(c, s)}});
	a.phases.push_back(boxes);
	a.phases.push_back({"local all-gather", {local_scatter(c, s)}});
	return a;
}

/* docs/racks.md: rack sums (the rack's box, or its ring without one), m agents'
 * rings across racks of S/m each, the rack's box (or ring) again as the
 * broadcast.  With G ranks a host (not in the library: NR_RACKS refuses
 * NR_LOCAL_SIZE) the model runs it per column of the parallel variant. */
Algo racks(const Cluster &c, double s)
{
	Algo a{"racks", "", c.gpus == 1, {}};
	int m = c.agents();
	a.about = "racks (docs/racks.md): " + std::to_string(c.boxes()) + " of " +
		  std::to_string(c.racks()) + " racks with a box, " + std::to_string(m) + " agent(s) a rack";
	if (c.gpus > 1)
		a.about += ", per local rank (model only)";
	double d = s / c.gpus;
	Phase sum{"rack sums", {}}, across{"across racks", {}};
	for (int p = 0; p < c.gpus; p++) {
		for (int k = 0; k < c.racks(); k++) {
			std::vector<int> members;
			for (int h : rack_members(c, k))
				members.push_back(rank_of(c, h, p));
			sum.groups.push_back(c.box[k] ? box_group(members, k, d) : ring_group(members, d));
		}
		for (int j = 0; j < m; j++) {
			std::vector<int> agents;
			for (int k = 0; k < c.racks(); k++)
				agents.push_back(rank_of(c, rack_members(c, k)[j], p));
			across.groups.push_back(ring_group(agents, d / m));
		}
	}
	if (c.gpus > 1)
		a.phases.push_back({"local reduce-scatter", {local_scatter(c, s)}});
	a.phases.push_back(sum);
	a.phases.push_back(across);
	sum.what = "rack broadcasts";
	a.phases.push_back(sum);
	if (c.gpus > 1)
		a.phases.push_back({"local all-gather", {local_scatter(c, s)}});
	return a;
}

/* Aggregation up a spine-leaf tree (the NetReduce paper's extension; not
 * built: docs/racks.md, "The choice"): every rack's box sums its rack and
 * streams the partial sums to a box at the spine, which sums the racks and
 * streams the total back down, all pipelined.  With G ranks a host, per local
 * rank as the parallel variant. */
Algo spine(const Cluster &c, double s)
{
	Algo a{"spine", "leaf boxes and a spine box, one pass (the paper's spine-leaf extension; model only)",
	       false, {}};
	double d = s / c.gpus;
	Group g;
	for (int k = 0; k < c.racks(); k++) {
		for (int p = 0; p < c.gpus; p++) {
			std::vector<int> members;
			for (int h : rack_members(c, k))
				members.push_back(rank_of(c, h, p));
			Group leaf = box_group(members, k, d);
			g.flows.insert(g.flows.end(), leaf.flows.begin(), leaf.flows.end());
		}
		/* the G columns' partial sums, one stream each way */
		g.flows.push_back({box_ep(k), box_ep(c.racks()), s});
		g.flows.push_back({box_ep(c.racks()), box_ep(k), s});
	}
	if (c.gpus > 1)
		a.phases.push_back({"local reduce-scatter", {local_scatter(c, s)}});
	a.phases.push_back({"up the leaves and the spine and back", {g}});
	if (c.gpus > 1)
		a.phases.push_back({"local all-gather", {local_scatter(c, s)}});
	return a;
}

} /* namespace */

double cross_rack_bytes(const Cluster &c, const Algo &a)
{
	auto rack = [&c](int ep) { return is_box(ep) ? box_rack(ep) : c.rack_of_host(ep / c.gpus); };
	double sum = 0;
	for (const Phase &ph : a.phases)
		for (const Group &g : ph.groups)
			for (const Flow &f : g.flows)
				if (rack(f.src) != rack(f.dst))
					sum += g.steps * f.bytes;
	return sum;
}

std::vector<Algo> build_algos(const Cluster &c, double bytes, const std::vector<std::string> &only)
{
	std::vector<Algo> all;
	all.push_back(ring(c, bytes));
	if (c.hosts() > 1)
		all.push_back(tree(c, bytes));
	if (c.first_box() >= 0) {
		all.push_back(box_flat(c, bytes));
		if (c.gpus > 1) {
			all.push_back(hier(c, bytes));
			all.push_back(parallel(c, bytes));
		}
	}
	if (c.racks() > 1) {
		all.push_back(racks(c, bytes));
		if (c.boxes() == c.racks())
			all.push_back(spine(c, bytes));
	}
	if (only.empty())
		return all;
	std::vector<Algo> kept;
	for (const Algo &a : all)
		if (std::find(only.begin(), only.end(), a.name) != only.end())
			kept.push_back(a);
	return kept;
}

} /* namespace nrsim */
