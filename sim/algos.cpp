/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/algos.cpp: the algorithms of host/README.md and docs/racks.md, and the
 * baselines as NCCL runs them, as phases (algos.hpp).  What each moves is
 * written next to it; sim/README.md has the table.
 */
#include "algos.hpp"

#include <algorithm>
#include <cmath>

#include "nccl.hpp"

namespace nrsim {

namespace {

/* One job: hosts first .. first+count-1, and its hosts in each box group. */
struct Job {
	int first = 0, count = 0;
	std::vector<int> groups;                  /* box groups it touches, in order */
	std::vector<std::vector<int>> members;    /* its hosts in each of them */
};

Job make_job(const Cluster &c, int j)
{
	Job job;
	job.count = c.hosts_per_job();
	job.first = j * job.count;
	for (int h = job.first; h < job.first + job.count; h++) {
		int g = c.group_of_host(h);
		if (job.groups.empty() || job.groups.back() != g) {
			job.groups.push_back(g);
			job.members.push_back({});
		}
		job.members.back().push_back(h);
	}
	return job;
}

int rank_of(const Cluster &c, int host, int gpu) { return host * c.gpus + gpu; }

/* The box a flat job (box, hier, parallel) uses: its first host's group's,
 * else the first box of the cluster; -1: none. */
int flat_box(const Cluster &c, const Job &job)
{
	if (c.group_has_box(job.groups[0]))
		return job.groups[0];
	for (int g = 0; g < c.groups(); g++)
		if (c.group_has_box(g))
			return g;
	return -1;
}

/* A ring over members, `data` bytes each: 2(n-1) steps, each rank sends
 * data/n to the next and receives data/n from the previous. */
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

/* One box job: every member streams `data` bytes to the box of group k and
 * gets the sum back on its own connection, packet by packet, all at once;
 * `channels` of the box's (0: box.channels). */
Group box_group(const std::vector<int> &members, int k, double data, int channels = 0)
{
	Group g;
	for (int r : members) {
		g.flows.push_back({r, box_ep(k), data});
		g.flows.push_back({box_ep(k), r, data});
	}
	g.box_jobs.push_back(k);
	g.box_channels.push_back(channels);
	return g;
}

/* Striping (NR_BOX's list of K boxes): the job's channels go to the boxes in
 * turn (channel c to box c mod K), each box a box job of its channels that
 * sums their messages, 1/K of every message.  With box.channels "auto" (one a
 * worker) each box has a channel a worker of its own and 1/K of the data;
 * with C channels box k has the n_k of them c = k mod K and n_k / C of it (a
 * box without a channel: nothing).  One box job a box: its members stream
 * their share to it and get the sum back, the K jobs at once. */
std::vector<Group> striped_groups(const Cluster &c, const std::vector<int> &members, int g0, double data)
{
	std::vector<Group> out;
	int k_all = c.box.stripes, ch = c.box.channels;
	for (int k = 0; k < k_all; k++) {
		int n = ch > 0 ? ch / k_all + (k < ch % k_all) : 0;
		if (ch > 0 && n == 0)
			continue;
		double share = ch > 0 ? double(n) / ch : 1.0 / k_all;
		out.push_back(box_group(members, stripe_box(c, g0, k), data * share, n));
	}
	return out;
}

/* Inside every host of the job: local rank p reads share p (data/G) from each
 * other rank of its host (the parallel variant's reduce-scatter; its
 * all-gather moves the same bytes). */
Group local_scatter(const Cluster &c, const Job &job, double data)
{
	Group g;
	for (int h = job.first; h < job.first + job.count; h++)
		for (int p = 0; p < c.gpus; p++)
			for (int q = 0; q < c.gpus; q++)
				if (p != q)
					g.flows.push_back({rank_of(c, h, q), rank_of(c, h, p), data / c.gpus});
	return g;
}

/* The ring as NCCL (and our library) runs it: host by host; with several
 * NICs a host (rail-optimised) one ring a NIC, each S/nics, ring c entering a
 * host at local rank c+1 and leaving it from local rank c, so that it crosses
 * between hosts on NIC c (a rank sends on NIC local rank mod nics). */
Algo ring(const Cluster &c, const Job &job, double s)
{
	Algo a{"ring", "the ring over every rank, host by host (NCCL's; our nr_ring_allreduce)", true, true, {}};
	Group all;
	for (int ch = 0; ch < c.nics; ch++) {
		std::vector<int> order;
		for (int h = job.first; h < job.first + job.count; h++)
			for (int i = 1; i <= c.gpus; i++)
				order.push_back(rank_of(c, h, (ch + i) % c.gpus));
		Group g = ring_group(order, s / c.nics);
		all.flows.insert(all.flows.end(), g.flows.begin(), g.flows.end());
		all.steps = g.steps;
	}
	if (c.collective != "allreduce")   /* one of its two halves: N-1 steps */
		all.steps /= 2;
	a.phases.push_back({"ring over " + std::to_string(job.count * c.gpus) + " ranks", {all}});
	return a;
}

/* NCCL's double binary tree (nccl.hpp: ncclGetDtree over the hosts), one pair
 * of trees a NIC: inside a host a chain of its G ranks (S up and S down each
 * edge); between hosts tree 0 and tree 1 carry S/2 each (per NIC S/2/nics),
 * up (reduce) and down (broadcast), tree 0 leaving a host from local rank
 * c, tree 1 from local rank c+1 on NIC c; all pipelined in tree_chunk pieces,
 * so every flow runs at once, plus the pipeline's fill. */
Algo tree(const Cluster &c, const Job &job, double s)
{
	Algo a{"tree", "double binary tree as NCCL builds it (ncclGetDtree)", false, true, {}};
	int m = job.count;
	Group g;
	for (int h = job.first; h < job.first + job.count; h++)
		for (int p = 0; p + 1 < c.gpus; p++) {
			g.flows.push_back({rank_of(c, h, p + 1), rank_of(c, h, p), s});
			g.flows.push_back({rank_of(c, h, p), rank_of(c, h, p + 1), s});
		}
	DoubleTree dt = nccl_double_tree(m);
	for (int ch = 0; ch < c.nics; ch++)
		for (int t = 0; t < 2; t++) {
			int e = (ch + t) % c.gpus;
			for (int i = 0; i < m; i++) {
				int p = dt.parent[t][i];
				if (p < 0)
					continue;
				int ri = rank_of(c, job.first + i, e), rp = rank_of(c, job.first + p, e);
				g.flows.push_back({ri, rp, s / 2 / c.nics});
				g.flows.push_back({rp, ri, s / 2 / c.nics});
			}
		}
	int depth = std::max(dt.depth[0], dt.depth[1]);
	g.fill = 2 * depth * (c.tree_chunk / 2 / c.nic) + 2 * (c.gpus - 1) * c.tree_chunk / c.intra;
	g.cost_steps = 2 * (depth + c.gpus - 1);   /* a step cost a hop, up and down */
	a.phases.push_back({"chains and two trees, pipelined", {g}});
	return a;
}

Algo box_flat(const Cluster &c, const Job &job, double s)
{
	int k = flat_box(c, job);
	Algo a{"box", "one box job of every rank (the box of group " + std::to_string(k) + ")", true, false, {}};
	std::vector<int> all;
	for (int r = job.first * c.gpus; r < (job.first + job.count) * c.gpus; r++)
		all.push_back(r);
	a.phases.push_back({"through the box", {box_group(all, k, s)}});
	return a;
}

/* NR_HIER=hierarchical: local rank 0 reads S from each other rank of its host,
 * one box job of the H local ranks 0, the others read S back from it. */
Algo hier(const Cluster &c, const Job &job, double s)
{
	int k = flat_box(c, job);
	Algo a{"hier", "hierarchical: local sum, one box job of the hosts, local copy", true, false, {}};
	Group red, bc;
	std::vector<int> leaders;
	for (int h = job.first; h < job.first + job.count; h++) {
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
Algo parallel(const Cluster &c, const Job &job, double s)
{
	int k = flat_box(c, job);
	Algo a{"parallel", "parallel: local reduce-scatter, a box job per local rank, local all-gather", true, false, {}};
	Phase boxes{"through the box, " + std::to_string(c.gpus) + " jobs", {}};
	for (int p = 0; p < c.gpus; p++) {
		std::vector<int> col;
		for (int h = job.first; h < job.first + job.count; h++)
			col.push_back(rank_of(c, h, p));
		boxes.groups.push_back(box_group(col, k, s / c.gpus));
	}
	a.phases.push_back({"local reduce-scatter", {local_scatter(c, job, s)}});
	a.phases.push_back(boxes);
	a.phases.push_back({"local all-gather", {local_scatter(c, job, s)}});
	return a;
}

/* docs/racks.md over the box groups (a box a rack, or a box a group of hosts:
 * NR_RACKS with each group a "rack"): group sums (the group's box, or its ring
 * without one), m agents' rings across groups of S/m each, the group's box
 * (or ring) again as the broadcast.  With G ranks a host (not in the library:
 * NR_RACKS refuses NR_LOCAL_SIZE) the model runs it per column of the
 * parallel variant. */
Algo racks(const Cluster &c, const Job &job, double s)
{
	Algo a{"racks", "", c.gpus == 1, false, {}};
	int smallest = job.count;
	int boxed = 0;
	for (size_t i = 0; i < job.groups.size(); i++) {
		smallest = std::min(smallest, (int)job.members[i].size());
		boxed += c.group_has_box(job.groups[i]);
	}
	int m = c.rack_agents > 0 ? std::min(c.rack_agents, smallest) : smallest;
	a.about = "racks (docs/racks.md): " + std::to_string(boxed) + " of " + std::to_string(job.groups.size()) +
		  (c.box.hosts_per_box > 0 ? " groups" : " racks") + " with a box, " + std::to_string(m) +
		  " agent(s) each";
	if (c.gpus > 1)
		a.about += ", per local rank (model only)";
	double d = s / c.gpus;
	Phase sum{"group sums", {}}, across{"across groups", {}};
	for (int p = 0; p < c.gpus; p++) {
		for (size_t i = 0; i < job.groups.size(); i++) {
			std::vector<int> members;
			for (int h : job.members[i])
				members.push_back(rank_of(c, h, p));
			sum.groups.push_back(c.group_has_box(job.groups[i]) ? box_group(members, job.groups[i], d)
									    : ring_group(members, d));
		}
		for (int j = 0; j < m; j++) {
			std::vector<int> agents;
			for (size_t i = 0; i < job.groups.size(); i++)
				agents.push_back(rank_of(c, job.members[i][j], p));
			across.groups.push_back(ring_group(agents, d / m));
		}
	}
	if (c.gpus > 1)
		a.phases.push_back({"local reduce-scatter", {local_scatter(c, job, s)}});
	a.phases.push_back(sum);
	a.phases.push_back(across);
	sum.what = "group broadcasts";
	a.phases.push_back(sum);
	if (c.gpus > 1)
		a.phases.push_back({"local all-gather", {local_scatter(c, job, s)}});
	return a;
}

/* Aggregation up a spine-leaf tree (the NetReduce paper's extension; not
 * built: docs/racks.md, "The choice"): every group's box sums its hosts and
 * streams the partial sums to a box at the spine, which sums the groups and
 * streams the total back down, all pipelined.  With G ranks a host, per local
 * rank as the parallel variant. */
Algo spine(const Cluster &c, const Job &job, double s)
{
	Algo a{"spine", "leaf boxes and a spine box, one pass (the paper's spine-leaf extension; model only)",
	       false, false, {}};
	double d = s / c.gpus;
	Group g;
	for (size_t i = 0; i < job.groups.size(); i++) {
		int k = job.groups[i];
		for (int p = 0; p < c.gpus; p++) {
			std::vector<int> members;
			for (int h : job.members[i])
				members.push_back(rank_of(c, h, p));
			Group leaf = box_group(members, k, d);
			g.flows.insert(g.flows.end(), leaf.flows.begin(), leaf.flows.end());
			g.box_jobs.push_back(k);
			g.box_jobs.push_back(c.groups());
		}
		/* the G columns' partial sums, one stream each way */
		g.flows.push_back({box_ep(k), box_ep(c.groups()), s});
		g.flows.push_back({box_ep(c.groups()), box_ep(k), s});
	}
	if (c.gpus > 1)
		a.phases.push_back({"local reduce-scatter", {local_scatter(c, job, s)}});
	a.phases.push_back({"up the leaves and the spine and back", {g}});
	if (c.gpus > 1)
		a.phases.push_back({"local all-gather", {local_scatter(c, job, s)}});
	return a;
}

/* The box algorithms striped over box.stripes boxes (striped_groups), on the
 * job's one box and K - 1 more on its ToR: `striped` as box (every rank S/K
 * to each box), `striped-hier` as hier (the local sums' S/K to each box),
 * `striped-parallel` as parallel (each local rank's share, S/G, split S/(G K)
 * to each box: G x K box jobs, G a box). */
Algo striped(const Cluster &c, const Job &job, double s)
{
	int k = flat_box(c, job);
	Algo a{"striped", "every rank over " + std::to_string(c.box.stripes) + " boxes (NR_BOX's list)", true, false, {}};
	std::vector<int> all;
	for (int r = job.first * c.gpus; r < (job.first + job.count) * c.gpus; r++)
		all.push_back(r);
	a.phases.push_back({"through " + std::to_string(c.box.stripes) + " boxes", striped_groups(c, all, k, s)});
	return a;
}

Algo striped_hier(const Cluster &c, const Job &job, double s)
{
	Algo a = hier(c, job, s);
	a.name = "striped-hier";
	a.about = "hierarchical, the local sums over " + std::to_string(c.box.stripes) + " boxes";
	std::vector<int> leaders;
	for (int h = job.first; h < job.first + job.count; h++)
		leaders.push_back(rank_of(c, h, 0));
	a.phases[1] = {"through " + std::to_string(c.box.stripes) + " boxes",
		       striped_groups(c, leaders, flat_box(c, job), s)};
	return a;
}

Algo striped_parallel(const Cluster &c, const Job &job, double s)
{
	Algo a = parallel(c, job, s);
	a.name = "striped-parallel";
	a.about = "parallel, each local rank's share over " + std::to_string(c.box.stripes) + " boxes";
	Phase boxes{"through " + std::to_string(c.box.stripes) + " boxes, " + std::to_string(c.gpus) + " jobs each", {}};
	for (int p = 0; p < c.gpus; p++) {
		std::vector<int> col;
		for (int h = job.first; h < job.first + job.count; h++)
			col.push_back(rank_of(c, h, p));
		for (Group &g : striped_groups(c, col, flat_box(c, job), s / c.gpus))
			boxes.groups.push_back(g);
	}
	a.phases[1] = boxes;
	return a;
}

/* Every algorithm one job can run (the striped ones with `with_striped`). */
std::vector<Algo> job_algos(const Cluster &c, const Job &job, double s, bool with_striped)
{
	std::vector<Algo> all;
	all.push_back(ring(c, job, s));
	if (c.collective != "allreduce") {   /* FSDP's: the ring, the box (flat or striped) */
		if (flat_box(c, job) >= 0 && c.gpus == 1) {
			all.push_back(box_flat(c, job, s));
			if (with_striped)
				all.push_back(striped(c, job, s));
		}
		return all;
	}
	if (job.count > 1)
		all.push_back(tree(c, job, s));
	if (flat_box(c, job) >= 0) {
		all.push_back(box_flat(c, job, s));
		if (c.gpus > 1) {
			all.push_back(hier(c, job, s));
			all.push_back(parallel(c, job, s));
		}
		if (with_striped) {
			all.push_back(striped(c, job, s));
			if (c.gpus > 1) {
				all.push_back(striped_hier(c, job, s));
				all.push_back(striped_parallel(c, job, s));
			}
		}
	}
	if (job.groups.size() > 1) {
		all.push_back(racks(c, job, s));
		bool every = std::all_of(job.groups.begin(), job.groups.end(),
					 [&](int g) { return c.group_has_box(g); });
		if (every)
			all.push_back(spine(c, job, s));
	}
	return all;
}

} /* namespace */

int stripe_box(const Cluster &c, int g, int k)
{
	return k == 0 ? g : c.groups() + 1 + g * (c.box.stripes - 1) + k - 1;
}

int endpoint_rack(const Cluster &c, int ep)
{
	if (!is_box(ep))
		return c.rack_of_host(ep / c.gpus);
	int g = box_group_of(ep);
	if (g > c.groups())     /* a stripe's box, on its job's box's ToR */
		return c.group_rack[(g - c.groups() - 1) / std::max(1, c.box.stripes - 1)];
	return g < c.groups() ? c.group_rack[g] : c.racks();
}

double cross_rack_bytes(const Cluster &c, const Algo &a)
{
	double sum = 0;
	for (const Phase &ph : a.phases)
		for (const Group &g : ph.groups)
			for (const Flow &f : g.flows)
				if (endpoint_rack(c, f.src) != endpoint_rack(c, f.dst))
					sum += g.steps * f.bytes;
	return sum;
}

std::vector<Algo> build_algos(const Cluster &c, double bytes, const std::vector<std::string> &only)
{
	double s = bytes * c.elem_scale();
	bool with_striped = c.box.stripes > 1 || std::any_of(only.begin(), only.end(), [](const std::string &n) {
		return n.rfind("striped", 0) == 0;
	});
	std::vector<Algo> all = job_algos(c, make_job(c, 0), s, with_striped);
	for (int j = 1; j < c.jobs; j++) {      /* the jobs side by side, phase by phase */
		std::vector<Algo> more = job_algos(c, make_job(c, j), s, with_striped), kept;
		for (Algo &a : all) {
			auto it = std::find_if(more.begin(), more.end(), [&](const Algo &b) { return b.name == a.name; });
			if (it == more.end() || it->phases.size() != a.phases.size())
				continue;       /* not every job can run it */
			for (size_t p = 0; p < a.phases.size(); p++)
				for (const Group &g : it->phases[p].groups)
					a.phases[p].groups.push_back(g);
			kept.push_back(a);
		}
		all = kept;
	}
	if (c.jobs > 1)
		for (Algo &a : all)
			a.about += " (" + std::to_string(c.jobs) + " jobs at once)";
	if (only.empty())
		return all;
	std::vector<Algo> kept;
	for (const Algo &a : all)
		if (std::find(only.begin(), only.end(), a.name) != only.end())
			kept.push_back(a);
	return kept;
}

} /* namespace nrsim */
