/* SPDX-License-Identifier: BSD-3-Clause */
/* sim/netsim.cpp: the platform and the phases on SimGrid (netsim.hpp). */
#include "netsim.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/log.h>

namespace sg4 = simgrid::s4u;

namespace nrsim {

namespace {

constexpr double kUnbounded = 1e15;     /* a non-blocking link, bytes/s */

struct Platform {
	const Cluster &c;
	std::vector<sg4::Host *> rank, box;
	std::vector<sg4::Link *> intra, up, down, tor_up, tor_down, box_up, box_down;

	explicit Platform(const Cluster &cl) : c(cl) {}

	int host_of(int ep) const { return ep / c.gpus; }

	sg4::Host *node(int ep) const { return is_box(ep) ? box[box_rack(ep)] : rank[ep]; }

	bool crosses_nic(const Flow &f) const
	{
		return is_box(f.src) || is_box(f.dst) || host_of(f.src) != host_of(f.dst);
	}

	/* The rack of an endpoint; the spine's box (algos.hpp) is "rack" R. */
	int rack(int ep) const { return is_box(ep) ? box_rack(ep) : c.rack_of_host(host_of(ep)); }

	std::vector<sg4::LinkInRoute> route(int src, int dst) const
	{
		std::vector<sg4::LinkInRoute> r;
		if (!is_box(src) && !is_box(dst) && host_of(src) == host_of(dst)) {
			r.emplace_back(intra[dst]);
			return r;
		}
		int spine = c.racks(), ks = rack(src), kd = rack(dst);
		r.emplace_back(is_box(src) ? box_up[ks] : up[host_of(src)]);
		if (ks != kd) {
			if (ks != spine)
				r.emplace_back(tor_up[ks]);
			if (kd != spine)
				r.emplace_back(tor_down[kd]);
		}
		r.emplace_back(is_box(dst) ? box_down[kd] : down[host_of(dst)]);
		return r;
	}

	/* The most a flow can carry: its window over its round trip (the box's
	 * credits, half the job's pool of messages; a host's packet window). */
	double rate_bound(const Flow &f) const
	{
		double rtt = 0;
		for (const sg4::LinkInRoute &l : route(f.src, f.dst))
			rtt += l.get_link()->get_latency();
		for (const sg4::LinkInRoute &l : route(f.dst, f.src))
			rtt += l.get_link()->get_latency();
		double wire = double(c.mtu + c.header_bytes) / c.mtu;
		double window = is_box(f.src) || is_box(f.dst)
					? c.pool_msgs / 2 * double(c.message_bytes) * wire
					: c.window_packets * double(c.mtu + c.header_bytes);
		return rtt > 0 ? window / rtt : kUnbounded;
	}
};

void build(Platform &p, const std::vector<Algo> &algos)
{
	const Cluster &c = p.c;
	auto *zone = sg4::create_full_zone("cluster");
	auto bw = [](double b) { return b > 0 ? b : kUnbounded; };
	for (int r = 0; r < c.ranks(); r++) {
		p.rank.push_back(zone->create_host("r" + std::to_string(r), 1e9));
		p.intra.push_back(zone->create_link("intra" + std::to_string(r), c.intra)->set_latency(c.lat_intra));
	}
	for (int h = 0; h < c.hosts(); h++) {
		p.up.push_back(zone->create_link("up" + std::to_string(h), c.nic)->set_latency(c.lat_nic));
		p.down.push_back(zone->create_link("down" + std::to_string(h), c.nic)->set_latency(c.lat_nic));
	}
	for (int k = 0; k <= c.racks(); k++) {      /* k = racks(): the spine's box */
		std::string n = std::to_string(k);
		if (k < c.racks()) {
			p.tor_up.push_back(zone->create_link("torup" + n, bw(c.tor_uplink))->set_latency(c.lat_fabric));
			p.tor_down.push_back(zone->create_link("tordown" + n, bw(c.tor_uplink))->set_latency(c.lat_fabric));
		}
		p.box.push_back(zone->create_host("box" + n, 1e9));
		p.box_up.push_back(zone->create_link("boxup" + n, bw(c.box_port))->set_latency(c.lat_nic));
		p.box_down.push_back(zone->create_link("boxdown" + n, bw(c.box_port))->set_latency(c.lat_nic));
	}
	std::map<std::pair<int, int>, bool> seen;
	for (const Algo &a : algos)
		for (const Phase &ph : a.phases)
			for (const Group &g : ph.groups)
				for (const Flow &f : g.flows) {
					if (seen[{f.src, f.dst}])
						continue;
					seen[{f.src, f.dst}] = true;
					std::vector<sg4::LinkInRoute> r = p.route(f.src, f.dst);
					/* The window: a link of its own on this pair's route (no
					 * two flows of a phase share a pair but the tree's of one
					 * GPU a host, whose windows then count once). */
					if (p.crosses_nic(f))
						r.emplace_back(zone->create_link("window" + std::to_string(f.src) + "_" +
										 std::to_string(f.dst), p.rate_bound(f))->seal());
					zone->add_route(p.node(f.src)->get_netpoint(), p.node(f.dst)->get_netpoint(),
							nullptr, nullptr, r, false);
				}
	zone->seal();
}

/* One phase: every group's flows start at once; a group's step ends when its
 * last flow does; the group takes steps x (that + step_cost) + fill. */
double run_phase(const Platform &p, const Phase &ph)
{
	const Cluster &c = p.c;
	double wire = double(c.mtu + c.header_bytes) / c.mtu;
	std::vector<sg4::CommPtr> comms;
	std::vector<size_t> group_of;
	std::vector<double> last(ph.groups.size(), 0);
	double start = sg4::Engine::get_clock();
	for (size_t gi = 0; gi < ph.groups.size(); gi++)
		for (const Flow &f : ph.groups[gi].flows) {
			double bytes = p.crosses_nic(f) ? f.bytes * wire : f.bytes;
			if (bytes < 1)
				continue;
			comms.push_back(sg4::Comm::sendto_async(p.node(f.src), p.node(f.dst), (uint64_t)bytes));
			group_of.push_back(gi);
		}
	sg4::Comm::wait_all(comms);
	for (size_t i = 0; i < comms.size(); i++)
		last[group_of[i]] = std::max(last[group_of[i]], comms[i]->get_finish_time() - start);
	double t = 0;
	for (size_t gi = 0; gi < ph.groups.size(); gi++) {
		const Group &g = ph.groups[gi];
		if (g.flows.empty())
			continue;
		t = std::max(t, g.steps * (last[gi] + c.step_cost) + g.fill);
	}
	return t;
}

std::vector<AlgoTime> simulate_here(const Cluster &c, const std::vector<Algo> &algos)
{
	int argc = 1;
	char name[] = "netreduce-plan";
	char *argv[] = {name, nullptr};
	sg4::Engine e(&argc, argv);
	xbt_log_control_set("root.thres:critical");
	sg4::Engine::set_config("network/model:CM02");
	/* Our hosts ACK once in up to 128 packets: no reverse traffic per flow
	 * (SimGrid's default charges 5% of each flow to the reverse route). */
	sg4::Engine::set_config("network/crosstraffic", false);
	sg4::Engine::set_config("network/TCP-gamma", 1e18);    /* windows: Platform::rate_bound */
	Platform p(c);
	build(p, algos);
	std::vector<AlgoTime> out;
	sg4::Actor::create("driver", p.rank[0], [&]() {
		for (const Algo &a : algos) {
			AlgoTime t{a.name, 0, {}};
			for (const Phase &ph : a.phases) {
				t.phases.push_back(run_phase(p, ph));
				t.seconds += t.phases.back();
			}
			out.push_back(t);
		}
	});
	e.run();
	return out;
}

} /* namespace */

std::vector<AlgoTime> simulate(const Cluster &c, const std::vector<Algo> &algos)
{
	int fd[2];
	if (pipe(fd) != 0)
		throw std::runtime_error(std::string("pipe: ") + strerror(errno));
	fflush(nullptr);
	pid_t pid = fork();
	if (pid < 0)
		throw std::runtime_error(std::string("fork: ") + strerror(errno));
	if (pid == 0) {
		close(fd[0]);
		int rc = 0;
		std::string msg;
		try {
			nlohmann::json j = nlohmann::json::array();
			for (const AlgoTime &t : simulate_here(c, algos))
				j.push_back({{"name", t.name}, {"seconds", t.seconds}, {"phases", t.phases}});
			msg = j.dump();
		} catch (const std::exception &ex) {
			msg = nlohmann::json({{"error", ex.what()}}).dump();
			rc = 1;
		}
		const char *b = msg.data();
		size_t n = msg.size();
		while (n > 0) {
			ssize_t w = write(fd[1], b, n);
			if (w <= 0)
				_exit(2);
			b += w;
			n -= (size_t)w;
		}
		_exit(rc);
	}
	close(fd[1]);
	std::string msg;
	char buf[65536];
	ssize_t n;
	while ((n = read(fd[0], buf, sizeof buf)) > 0)
		msg.append(buf, (size_t)n);
	close(fd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	nlohmann::json j = nlohmann::json::parse(msg, nullptr, false);
	if (j.is_discarded() || (j.is_object() && j.contains("error")) || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		throw std::runtime_error("the simulation failed: " +
					 (j.is_object() && j.contains("error") ? j["error"].get<std::string>()
					  : "exit status " + std::to_string(status)));
	std::vector<AlgoTime> out;
	for (const auto &a : j)
		out.push_back({a["name"], a["seconds"], a["phases"].get<std::vector<double>>()});
	return out;
}

} /* namespace nrsim */
