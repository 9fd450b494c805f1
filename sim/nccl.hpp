/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/nccl.hpp: the baselines as NCCL builds and picks them.
 *
 * The double binary tree as NCCL's src/graph/trees.cc builds it
 * (ncclGetBtree, ncclGetDtree): tree 0 the btree of ranks 0..n-1 whose leaves
 * are the odd ranks, tree 1 its mirror (n even) or the same shifted by one (n
 * odd), so that no rank is an inner node of both.  NCCL builds it over nodes
 * (hosts); inside a node its ranks form a chain.
 *
 * The tuner as NCCL's src/graph/tuning.cc has it (ncclTopoTuneModel,
 * ncclTopoGetAlgoTime; NVIDIA/nccl at b6475625fbcaa2c3c0e50eed2fa1255d7514d4a2, the 2.19-2.20 model): for
 * ring and tree with the LL, LL128 and Simple protocols a latency and a bus
 * bandwidth, the all-reduce's predicted time lat + bytes / algbw, and the
 * pick: the least.  Hopper GPUs and x86 Intel hosts (its per-architecture
 * constants), channels and per-channel bandwidths from the cluster's links
 * (sim/README.md, "Baselines").
 */
#ifndef NR_SIM_NCCL_HPP
#define NR_SIM_NCCL_HPP

#include <string>
#include <vector>

namespace nrsim {

/* ncclGetBtree: rank's parent u and children d0, d1 (-1: none). */
void nccl_btree(int nranks, int rank, int &u, int &d0, int &d1);

/* ncclGetDtree: parent and children in tree 0 and tree 1. */
void nccl_dtree(int nranks, int rank, int &u0, int &d0_0, int &d0_1, int &u1, int &d1_0, int &d1_1);

/* Both trees over n nodes: parent[t][i] (-1 at the root). */
struct DoubleTree {
	std::vector<int> parent[2];
	std::vector<std::vector<int>> children[2];
	int depth[2] = {0, 0};          /* edges from the root to the deepest leaf */
};
DoubleTree nccl_double_tree(int n);

/* What NCCL's tuner predicts for one all-reduce and what it picks. */
struct TunerChoice {
	std::string algo;               /* "ring" or "tree" */
	std::string proto;              /* "LL", "LL128", "Simple" */
	double seconds = 0;             /* its predicted time */
	struct Option { std::string algo, proto; double seconds; };
	std::vector<Option> options;    /* every enabled (algo, proto) */
};

struct TunerInput {
	int ranks = 2, nodes = 2;       /* the communicator: ranks, hosts */
	double bytes = 0;               /* per rank */
	double net_Bps = 0;             /* a host's NICs together, each way, bytes/s */
	double intra_Bps = 0;           /* a GPU's intra-host link, bytes/s */
	bool nvlink = true;             /* the intra-host link is NVLink (else PCI) */
	int nics = 1;
};
TunerChoice nccl_tuner(const TunerInput &in);

} /* namespace nrsim */

#endif
