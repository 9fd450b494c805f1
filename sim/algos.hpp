/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/algos.hpp: the all-reduce algorithms as phases of concurrent flows.
 *
 * An algorithm is data, built from the cluster without simulating anything:
 * phases that run one after the other (as the host library runs them), each
 * a set of groups that run at the same time; a group is a set of flows that
 * start together, repeated `steps` times (a ring's 2(n-1) steps, each the same
 * flows).  sim/netsim.cpp gives the flows to SimGrid's network model.
 *
 * Endpoints: rank r (0 .. ranks-1, host by host, rack by rack) is r; the box
 * of rack k is box_ep(k), a box at the spine box_ep(racks).
 */
#ifndef NR_SIM_ALGOS_HPP
#define NR_SIM_ALGOS_HPP

#include <string>
#include <vector>

#include "cluster.hpp"

namespace nrsim {

static inline int box_ep(int rack) { return -1 - rack; }
static inline bool is_box(int ep) { return ep < 0; }
static inline int box_rack(int ep) { return -1 - ep; }

struct Flow {
	int src, dst;
	double bytes;           /* payload; netsim adds the headers where it crosses a NIC */
};

struct Group {
	std::vector<Flow> flows;
	int steps = 1;
	double fill = 0;        /* pipeline fill a pipelined group adds once (the tree) */
};

struct Phase {
	std::string what;
	std::vector<Group> groups;
};

struct Algo {
	std::string name;       /* ring, tree, box, hier, parallel, racks, spine */
	std::string about;
	bool library = true;    /* the host library runs it (false: the model's extension) */
	std::vector<Phase> phases;
};

/* Every algorithm the cluster can run for `bytes` per rank (the box ones only
 * where it has a box).  `only`, when not empty, keeps those names. */
std::vector<Algo> build_algos(const Cluster &c, double bytes, const std::vector<std::string> &only = {});

/* Payload bytes of one all-reduce that cross between racks, both ways
 * together (what the testbed counts on its inter-rack link). */
double cross_rack_bytes(const Cluster &c, const Algo &a);

} /* namespace nrsim */

#endif
