/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/sizing.hpp: netreduce-plan --size: how many box servers, of how many
 * cores and ports, a cluster needs for the library's box algorithms to beat
 * the best baseline (NCCL's pick) by a factor, and what fewer buy.
 *
 * The cluster file's box gives the rates a core sums (its nr-bench-switch
 * file) and a port's speed; the search finds the cores and ports.  The
 * layouts, fewest boxes first: one box for the whole job (the flat
 * algorithms: box, hierarchical, parallel), then a box a rack and a box a
 * group of half as many hosts, and so on (the racks algorithm over the
 * groups: the way the library spreads a job over several boxes).  For each:
 * boxes without a limit (what the hosts' side alone costs), the largest
 * server (--max-cores, --max-ports), and where that meets the target the
 * fewest cores (powers of two) and then ports that do, each point simulated.
 */
#ifndef NR_SIM_SIZING_HPP
#define NR_SIM_SIZING_HPP

#include <string>
#include <vector>

#include "cluster.hpp"

namespace nrsim {

struct SizeRow {
	int boxes = 0, hosts_per_box = 0;  /* boxes of the job(s), the most hosts a box serves */
	int workers = 0, ports = 0;     /* a box's; 0 with `wire` */
	bool wire = false;              /* boxes without a limit (the hosts' side alone) */
	std::string algo;
	bool library = true;
	double lo = 0, hi = 0;          /* seconds */
	double speedup_lo = 0, speedup_hi = 0;  /* the baseline's time / this, at each end of the band */
	bool meets = false;
};

struct SizeAnswer {
	double bytes = 0, factor = 0;
	std::string baseline;           /* ring or tree (NCCL's pick), with its protocol */
	double base_lo = 0, base_hi = 0;
	std::vector<SizeRow> rows;      /* per box count: unlimited, the most a server gives, the answer */
	int answer = -1;                /* the row of the fewest boxes that meet the target (-1: none) */
	std::vector<SizeRow> fewer;     /* the answer's box count with fewer cores and ports */
};

struct SizeLimits {
	int cores = 64;                 /* the most workers a server runs */
	int ports = 8;                  /* the most NIC ports it has */
	int stripes = 128;              /* the most boxes a job stripes over (striped.hpp; 0: none) */
	bool fixed = false;             /* striped: servers of cores x ports as given, no search below them */
};

SizeAnswer size_boxes(const Cluster &c, double bytes, double factor, const SizeLimits &lim = {});

} /* namespace nrsim */

#endif
