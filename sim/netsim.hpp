/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/netsim.hpp: the algorithms' flows on SimGrid's flow-level network model.
 *
 * The platform: every rank a SimGrid host with its own intra-host link (the
 * rate it reads what the other ranks of its host wrote), every host (machine)
 * a link up and a link down to its ToR, every rack a link up and down to the
 * spine, every box a port up and down on its ToR (the spine's box on the
 * spine).  A flow between two hosts
 * crosses up(src), [ToR up, ToR down when the racks differ], down(dst); one
 * inside a host the destination's intra link.  A flow that crosses a NIC
 * carries header_bytes per mtu of payload, and at most window_packets packets
 * in flight.
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
	double seconds = 0;
	std::vector<double> phases;     /* seconds of each phase, in order */
};

/* Simulate each algorithm alone on the cluster's network.  Runs SimGrid in a
 * child process (its engine lives once per process), so it can be called any
 * number of times; throws std::runtime_error if the simulation fails. */
std::vector<AlgoTime> simulate(const Cluster &c, const std::vector<Algo> &algos);

} /* namespace nrsim */

#endif
