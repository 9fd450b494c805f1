/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/netsim.hpp: the algorithms' flows on SimGrid's flow-level network model.
 *
 * The platform: every rank a SimGrid host with its own intra-host link (the
 * rate it reads what the other ranks of its host wrote), every host (machine)
 * a link up and a link down to its ToR, every rack a link up and down to the
 * spine, every box a port up and down on its ToR (the spine's box on the
 * spine, a striped job's boxes on its one box's ToR), and every box a core
 * link its inbound flows cross: what its workers sum (Cluster::box_cpu, set
 * phase by phase for the channels of the box jobs the phase runs on it).  A flow between two hosts crosses up(src NIC), [ToR up, ToR
 * down when the racks differ], down(dst NIC); one inside a host the
 * destination's intra link (the GPUs' for the baselines, the library's
 * shared memory for the rest).  A flow that crosses a NIC carries
 * header_bytes per mtu of payload, and at most its window in flight.
 */
#ifndef NR_SIM_NETSIM_HPP
#define NR_SIM_NETSIM_HPP

#include <string>
#include <vector>

#include "algos.hpp"
#include "cluster.hpp"

namespace nrsim {

struct AlgoTime {
	std::string name;
	double lo = 0, hi = 0;          /* seconds with the step cost at its band's low and high end */
	std::vector<double> phases_lo, phases_hi;   /* seconds of each phase, in order */
	double staged_lo = 0, staged_hi = 0;        /* what staging GPU<->host added (in lo, hi) */
};

/* Simulate each algorithm alone on the cluster's network, for `bytes` of
 * fp32 gradients a rank (Cluster::elem_scale of them move).  Runs SimGrid in
 * a child process (its engine lives once per process), so it can be called
 * any number of times; throws std::runtime_error if the simulation fails. */
std::vector<AlgoTime> simulate(const Cluster &c, const std::vector<Algo> &algos, double bytes);

/* What the library's staging of GPU gradients through pinned host memory
 * (python/netreduce/torch/staging.py: chunks of stage_chunk, copies on their
 * own streams overlapping the all-reduce of the chunk before) makes of an
 * all-reduce of time t with `phases` phases: the slower of the wire and the
 * copies, the first chunk's copy in and the last one's out, and a call's
 * fixed cost (its phases' step costs and a round trip) for every chunk past
 * the first.  0 added for the baselines and where nothing is staged. */
double staged_time(const Cluster &c, const Algo &a, double bytes, double t, double step);

} /* namespace nrsim */

#endif
