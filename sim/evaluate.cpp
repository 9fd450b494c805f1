/* SPDX-License-Identifier: BSD-3-Clause */
/* sim/evaluate.cpp: a cluster at a size, with the baseline NCCL would pick. */
#include "evaluate.hpp"

#include <algorithm>
#include <stdexcept>

namespace nrsim {

const Result *Evaluation::find(const std::string &name) const
{
	for (const Result &r : rows)
		if (r.name == name)
			return &r;
	return nullptr;
}

TunerInput tuner_input(const Cluster &c, double bytes)
{
	TunerInput in;
	in.nodes = c.hosts_per_job();
	in.ranks = in.nodes * c.gpus;
	in.bytes = bytes * c.elem_scale();
	in.net_Bps = c.nic * c.nics;
	in.intra_Bps = c.intra;
	in.nvlink = c.intra_nvlink;
	in.nics = c.nics;
	return in;
}

Evaluation evaluate(const Cluster &c, double bytes, const std::vector<std::string> &only)
{
	Evaluation ev;
	ev.bytes = bytes;
	std::vector<std::string> want = only;
	if (!want.empty())      /* the pick needs both baselines */
		for (const char *b : {"ring", "tree"})
			if (std::find(want.begin(), want.end(), b) == want.end())
				want.push_back(b);
	std::vector<Algo> algos = build_algos(c, bytes, want);
	bool any = only.empty();
	for (const Algo &a : algos)
		any = any || std::find(only.begin(), only.end(), a.name) != only.end();
	if (!any)
		throw std::invalid_argument("none of --algo runs on this cluster (box, hier, parallel, striped* need a box; "
					    "hier, parallel, striped-hier, striped-parallel several GPUs a host; racks, spine "
					    "several box groups)");
	std::vector<AlgoTime> times = simulate(c, algos, bytes);
	for (size_t i = 0; i < algos.size(); i++)
		ev.rows.push_back({algos[i].name, algos[i].about, algos[i].library, algos[i].baseline, times[i],
				   cross_rack_bytes(c, algos[i])});
	ev.tuner = nccl_tuner(tuner_input(c, bytes));
	for (size_t i = 0; i < ev.rows.size(); i++) {
		if (ev.rows[i].name == "ring")
			ev.ring = (int)i;
		if (ev.rows[i].name == ev.tuner.algo)
			ev.best = (int)i;
	}
	if (ev.best < 0)
		ev.best = ev.ring;      /* one host: no tree */
	/* drop the baselines that were only simulated for the pick */
	if (!only.empty()) {
		std::vector<Result> kept;
		int best = -1, ring = -1;
		for (size_t i = 0; i < ev.rows.size(); i++) {
			bool asked = std::find(only.begin(), only.end(), ev.rows[i].name) != only.end();
			if (!asked && (int)i != ev.best && (int)i != ev.ring)
				continue;
			if ((int)i == ev.best)
				best = (int)kept.size();
			if ((int)i == ev.ring)
				ring = (int)kept.size();
			kept.push_back(ev.rows[i]);
		}
		ev.rows = kept;
		ev.best = best;
		ev.ring = ring;
	}
	return ev;
}

} /* namespace nrsim */
