/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/striped.hpp: netreduce-plan --size for striping (NR_BOX's list of K
 * boxes, sim/README.md "Striping"): the fewest box servers a job stripes over
 * that beat the best baseline (NCCL's pick) by a factor, and the cores and
 * ports each needs; or, where none does, the most striping reaches and what
 * bounds it.
 *
 * The layout: the job's one box (as box, hierarchical, parallel use it) and
 * K - 1 more on its ToR (across racks their traffic crosses the uplinks), every host to every box, each box a server of the
 * cluster file's (its rates a core, its port speed), running the striped
 * algorithms (striped, striped-hier, striped-parallel).  The search:
 *   1. boxes without a limit (4 of them, so that a box connection's credits
 *      bind no rank): the most striping reaches, the hosts' side alone;
 *      where that misses the target, the answer is none, with its time taken
 *      apart (staging, local phases, the hosts' NICs, the ToR uplinks past
 *      them, the rest: latency, windows, step costs) and the fewest largest
 *      servers that reach 95% of it;
 *   2. else K = 1, 2, 4 ... (up to --max-stripes) of the largest server
 *      (--max-cores, --max-ports) until one meets the target, then at that K
 *      the fewest cores (powers of two), then ports, that do; and what K / 2
 *      buy.
 * A K, or a server, whose cores or ports cannot carry the hosts' data to the
 * boxes within the target time even at their full rate is not simulated (the
 * model's box never sums faster): the output says which were skipped so.
 * With lim.fixed (--fixed-server) the servers are the largest and no more:
 * neither fewer cores and ports nor the 95% search.
 */
#ifndef NR_SIM_STRIPED_HPP
#define NR_SIM_STRIPED_HPP

#include <string>
#include <vector>

#include "cluster.hpp"
#include "sizing.hpp"

namespace nrsim {

struct StripeRow {
	int stripes = 0, servers = 0;   /* boxes a job stripes over; servers in all (stripes x the jobs' boxes) */
	int workers = 0, ports = 0;     /* a server's (0 with wire) */
	bool wire = false;              /* boxes without a limit */
	std::string algo;
	double lo = 0, hi = 0;          /* seconds */
	double speedup_lo = 0, speedup_hi = 0;
	bool meets = false;
	std::string role;               /* unlimited, server, answer, fewer, approach */
};

struct StripeAnswer {
	double bytes = 0, factor = 0;
	std::string baseline;
	double base_lo = 0, base_hi = 0;
	int max_stripes = 0, max_cores = 0, max_ports = 0;     /* the search's bounds (ports 0: no port limit) */
	std::vector<StripeRow> rows;
	int answer = -1;                /* the row that meets the target with the fewest servers */
	int approach = -1;              /* none meets: the row of the fewest servers reaching 95% of the most */
	/* the unlimited row's time taken apart (seconds, low end of the band) */
	double most = 0;                /* its speedup: the most striping reaches */
	double t_local = 0, t_nics = 0, t_fabric = 0, t_rest = 0, t_staging = 0;
	std::vector<int> skipped;       /* server counts not simulated: their cores or ports too slow */
};

StripeAnswer size_striped(const Cluster &c, double bytes, double factor, const SizeLimits &lim);

} /* namespace nrsim */

#endif
