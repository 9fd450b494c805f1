/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/evaluate.hpp: one cluster at one size: every algorithm simulated, and
 * the best baseline as NCCL's tuner would pick it (nccl.hpp).
 */
#ifndef NR_SIM_EVALUATE_HPP
#define NR_SIM_EVALUATE_HPP

#include <string>
#include <vector>

#include "algos.hpp"
#include "cluster.hpp"
#include "nccl.hpp"
#include "netsim.hpp"

namespace nrsim {

struct Result {
	std::string name, about;
	bool library = true, baseline = false;
	AlgoTime t;
	double cross_rack = 0;
};

struct Evaluation {
	double bytes = 0;               /* fp32 gradient bytes a rank, as asked */
	std::vector<Result> rows;
	TunerChoice tuner;              /* NCCL's pick for one job */
	int best = -1;                  /* the row of the picked baseline (-1: not simulated) */
	int ring = -1;

	double best_lo() const { return best >= 0 ? rows[best].t.lo : 0; }
	double best_hi() const { return best >= 0 ? rows[best].t.hi : 0; }
	const Result *find(const std::string &name) const;
};

/* Simulate the algorithms of `only` (all when empty) plus the baselines the
 * pick needs; throws std::invalid_argument when none of `only` runs here. */
Evaluation evaluate(const Cluster &c, double bytes, const std::vector<std::string> &only = {});

/* NCCL's tuner's input for one job of the cluster. */
TunerInput tuner_input(const Cluster &c, double bytes);

} /* namespace nrsim */

#endif
