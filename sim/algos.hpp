/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/algos.hpp: the all-reduce algorithms as phases of concurrent flows.
 *
 * An algorithm is data, built from the cluster without simulating anything:
 * phases that run one after the other (as the host library runs them), each
 * a set of groups that run at the same time; a group is a set of flows that
 * start together, repeated `steps` times (a ring's 2(n-1) steps, each the same
 * flows).  sim/netsim.cpp gives the flows to SimGrid's network model.  With
 * several jobs (the cluster's `jobs`) each job's algorithm is built on its
 * hosts and their phases run side by side.
 *
 * Endpoints: rank r (0 .. ranks-1, host by host, rack by rack) is r; the box
 * of group g (Cluster::group_first) is box_ep(g), a box at the spine
 * box_ep(groups); with box.stripes K > 1 the K - 1 more boxes a job whose box
 * is group g's stripes over are box_ep(stripe_box(c, g, k)), k = 1 .. K-1,
 * on group g's ToR.
 */
#ifndef NR_SIM_ALGOS_HPP
#define NR_SIM_ALGOS_HPP

#include <string>
#include <vector>

#include "cluster.hpp"

namespace nrsim {

static inline int box_ep(int group) { return -1 - group; }
static inline bool is_box(int ep) { return ep < 0; }
static inline int box_group_of(int ep) { return -1 - ep; }

struct Flow {
	int src, dst;
	double bytes;           /* payload; netsim adds the headers where it crosses a NIC */
};

struct Group {
	std::vector<Flow> flows;
	int steps = 1;
	double fill = 0;        /* pipeline fill a pipelined group adds once (the tree) */
	int cost_steps = -1;    /* step costs (Cluster::step_lo..hi) it pays; -1: steps */
	std::vector<int> box_jobs;   /* a box's group index for each box job in it */
	std::vector<int> box_channels;  /* each box job's channels (0 or absent: box.channels) */

	int costs() const { return cost_steps >= 0 ? cost_steps : steps; }
};

struct Phase {
	std::string what;
	std::vector<Group> groups;
};

struct Algo {
	std::string name;       /* ring, tree, box, hier, parallel, racks, spine, striped, striped-hier,
	                         * striped-parallel */
	std::string about;
	bool library = true;    /* the host library runs it (false: the model's extension) */
	bool baseline = false;  /* NCCL's (ring, tree): GPU memory, the GPUs' intra path, no staging */
	std::vector<Phase> phases;
};

/* Every algorithm the cluster can run for `bytes` of fp32 gradients per rank
 * (dtype bf16/fp16: half as many bytes), the box ones only where it has a
 * box.  `only`, when not empty, keeps those names. */
std::vector<Algo> build_algos(const Cluster &c, double bytes, const std::vector<std::string> &only = {});

/* Payload bytes of one all-reduce that cross between racks, both ways
 * together (what the testbed counts on its inter-rack link). */
double cross_rack_bytes(const Cluster &c, const Algo &a);

/* The rack of an endpoint (the spine's box: racks()). */
int endpoint_rack(const Cluster &c, int ep);

/* The box (a group index for box_ep) of stripe k (0 .. box.stripes-1) of a
 * job whose one box is group g's: k = 0 that box, k > 0 one more box on the
 * same ToR. */
int stripe_box(const Cluster &c, int g, int k);

} /* namespace nrsim */

#endif
