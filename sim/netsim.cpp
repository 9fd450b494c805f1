/* SPDX-License-Identifier: BSD-3-Clause */
/* sim/netsim.cpp: the platform and the phases on SimGrid (netsim.hpp). */
#include "netsim.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
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
	std::vector<sg4::Host *> rank_lib, rank_gpu, box;
	std::vector<sg4::Link *> intra_lib, intra_gpu, up, down, tor_up, tor_down, box_up, box_down, box_core;

	explicit Platform(const Cluster &cl) : c(cl) {}

	int host_of(int ep) const { return ep / c.gpus; }
	int nic_of(int ep) const { return host_of(ep) * c.nics + (ep % c.gpus) % c.nics; }

	sg4::Host *node(int ep, bool baseline) const
	{
		return is_box(ep) ? box[box_group_of(ep)] : (baseline ? rank_gpu : rank_lib)[ep];
	}

	bool crosses_nic(const Flow &f) const
	{
		return is_box(f.src) || is_box(f.dst) || host_of(f.src) != host_of(f.dst);
	}

	std::vector<sg4::LinkInRoute> route(int src, int dst, bool baseline) const
	{
		std::vector<sg4::LinkInRoute> r;
		if (!is_box(src) && !is_box(dst) && host_of(src) == host_of(dst)) {
			r.emplace_back((baseline ? intra_gpu : intra_lib)[dst]);
			return r;
		}
		int spine = c.racks(), ks = endpoint_rack(c, src), kd = endpoint_rack(c, dst);
		r.emplace_back(is_box(src) ? box_up[box_group_of(src)] : up[nic_of(src)]);
		if (ks != kd) {
			if (ks != spine)
				r.emplace_back(tor_up[ks]);
			if (kd != spine)
				r.emplace_back(tor_down[kd]);
		}
		if (is_box(dst)) {
			r.emplace_back(box_core[box_group_of(dst)]);
			r.emplace_back(box_down[box_group_of(dst)]);
		} else {
			r.emplace_back(down[nic_of(dst)]);
		}
		return r;
	}

	/* The latency of the way from src to dst. */
	double latency(int src, int dst) const
	{
		double l = 0;
		for (const sg4::LinkInRoute &r : route(src, dst, false))
			l += r.get_link()->get_latency();
		return l;
	}

	/* The most a flow can carry: its window over its round trip (the box's
	 * credits, half the job's pool of messages; a host's packet window). */
	double rate_bound(const Flow &f, bool baseline) const
	{
		double rtt = 0;
		for (const sg4::LinkInRoute &l : route(f.src, f.dst, baseline))
			rtt += l.get_link()->get_latency();
		for (const sg4::LinkInRoute &l : route(f.dst, f.src, baseline))
			rtt += l.get_link()->get_latency();
		double window = is_box(f.src) || is_box(f.dst)
					? c.pool_msgs / 2 * double(c.message_bytes) * c.wire()
					: c.window_packets * double(c.mtu + c.header_bytes);
		return rtt > 0 ? window / rtt : kUnbounded;
	}
};

void build(Platform &p, const std::vector<Algo> &algos)
{
	const Cluster &c = p.c;
	auto *zone = sg4::create_full_zone("cluster");
	auto bw = [](double b) { return b > 0 ? b : kUnbounded; };
	/* The baselines' ranks (their own hosts: the GPUs' intra path) only where
	 * a baseline runs: a full zone's routing table is the square of its hosts. */
	bool baselines = std::any_of(algos.begin(), algos.end(), [](const Algo &a) { return a.baseline; });
	for (int r = 0; r < c.ranks(); r++) {
		std::string n = std::to_string(r);
		p.rank_lib.push_back(zone->create_host("r" + n, 1e9));
		p.rank_gpu.push_back(baselines ? zone->create_host("g" + n, 1e9) : p.rank_lib.back());
		p.intra_lib.push_back(zone->create_link("intra" + n, c.library_intra)->set_latency(c.lat_intra));
		p.intra_gpu.push_back(zone->create_link("gintra" + n, c.intra)->set_latency(c.lat_intra));
	}
	for (int i = 0; i < c.hosts() * c.nics; i++) {
		p.up.push_back(zone->create_link("up" + std::to_string(i), c.nic)->set_latency(c.lat_nic));
		p.down.push_back(zone->create_link("down" + std::to_string(i), c.nic)->set_latency(c.lat_nic));
	}
	for (int k = 0; k < c.racks(); k++) {
		std::string n = std::to_string(k);
		p.tor_up.push_back(zone->create_link("torup" + n, bw(c.tor_uplink))->set_latency(c.lat_fabric));
		p.tor_down.push_back(zone->create_link("tordown" + n, bw(c.tor_uplink))->set_latency(c.lat_fabric));
	}
	int boxes = c.groups() + 1;     /* groups(): the spine's box; past it the stripes' boxes the algorithms use */
	for (const Algo &a : algos)
		for (const Phase &ph : a.phases)
			for (const Group &g : ph.groups)
				for (int b : g.box_jobs)
					boxes = std::max(boxes, b + 1);
	for (int g = 0; g < boxes; g++) {
		std::string n = std::to_string(g);
		p.box.push_back(zone->create_host("box" + n, 1e9));
		p.box_up.push_back(zone->create_link("boxup" + n, bw(c.port_bw()))->set_latency(c.lat_nic));
		p.box_down.push_back(zone->create_link("boxdown" + n, bw(c.port_bw()))->set_latency(c.lat_nic));
		p.box_core.push_back(zone->create_link("boxcore" + n, kUnbounded)->set_latency(0));
	}
	std::map<std::tuple<int, int, bool>, bool> seen;
	for (const Algo &a : algos)
		for (const Phase &ph : a.phases)
			for (const Group &g : ph.groups)
				for (const Flow &f : g.flows) {
					bool base = a.baseline;
					if (is_box(f.src) || is_box(f.dst))
						base = false;   /* boxes talk to the library's ranks */
					if (seen[{f.src, f.dst, base}])
						continue;
					seen[{f.src, f.dst, base}] = true;
					std::vector<sg4::LinkInRoute> r = p.route(f.src, f.dst, base);
					/* The window: a link of its own on this pair's route (no
					 * two flows of a phase share a pair but the tree's of one
					 * GPU a host, whose windows then count once). */
					if (p.crosses_nic(f))
						r.emplace_back(zone->create_link("window" + std::to_string(f.src) + "_" +
										 std::to_string(f.dst) + (base ? "g" : ""),
										 p.rate_bound(f, base))->seal());
					zone->add_route(p.node(f.src, base)->get_netpoint(), p.node(f.dst, base)->get_netpoint(),
							nullptr, nullptr, r, false);
				}
	zone->seal();
}

/* One phase: every box's core at what the phase's box jobs on it use; every
 * group's flows start at once; a group's step ends when its last flow does; the
 * group takes steps x that + fill + its step costs (+ the way in of a box job).  Returns the phase's time
 * at the step cost's low and high end. */
std::pair<double, double> run_phase(const Platform &p, const Phase &ph, bool baseline)
{
	const Cluster &c = p.c;
	std::map<int, int> channels_on;         /* a box's channels, over the phase's box jobs on it */
	for (const Group &g : ph.groups)
		for (size_t i = 0; i < g.box_jobs.size(); i++)
			channels_on[g.box_jobs[i]] += i < g.box_channels.size() && g.box_channels[i] > 0
							      ? g.box_channels[i] : c.box_channels();
	for (size_t b = 0; b < p.box.size(); b++) {
		double cpu = channels_on.count((int)b) ? c.box_cpu_channels(channels_on[(int)b]) * c.wire() : 0;
		p.box_core[b]->set_bandwidth(cpu > 0 ? cpu : kUnbounded);
	}
	struct Send {
		sg4::Host *src, *dst;
		uint64_t bytes;
		size_t group;
	};
	std::vector<Send> sends;
	std::vector<double> last(ph.groups.size(), 0);
	double start = sg4::Engine::get_clock();
	for (size_t gi = 0; gi < ph.groups.size(); gi++)
		for (const Flow &f : ph.groups[gi].flows) {
			double bytes = p.crosses_nic(f) ? f.bytes * c.wire() : f.bytes;
			if (bytes < 1)
				continue;
			bool base = baseline && !is_box(f.src) && !is_box(f.dst);
			sends.push_back({p.node(f.src, base), p.node(f.dst, base), (uint64_t)bytes, gi});
		}
	/* The flows start together, each a mailbox's put and get, issued by an
	 * actor on its source and one on its destination, kBatch flows an actor.
	 * SimGrid 3.32 walks a list of pending comms at each comm's end: for
	 * Comm::sendto_async's host-to-host comms their square in all, whatever
	 * actor issues them (measured: 14 s for 40000 flows, 1 s as mailbox
	 * comms).  The network sees the same flows between the same hosts. */
	constexpr size_t kBatch = 64;
	static char payload;
	std::vector<double> finish(sends.size(), 0);
	std::map<std::string, std::vector<size_t>> out, in;
	for (size_t i = 0; i < sends.size(); i++) {
		out[sends[i].src->get_name()].push_back(i);
		in[sends[i].dst->get_name()].push_back(i);
	}
	std::vector<sg4::ActorPtr> issuers;
	for (bool put : {true, false})
		for (const auto &[host, ids] : put ? out : in)
			for (size_t first = 0; first < ids.size(); first += kBatch) {
				std::vector<size_t> batch(ids.begin() + first, ids.begin() + std::min(ids.size(), first + kBatch));
				sg4::Host *on = put ? sends[batch[0]].src : sends[batch[0]].dst;
				issuers.push_back(sg4::Actor::create("flows", on, [&sends, &finish, put, batch]() {
					std::vector<sg4::CommPtr> comms;
					for (size_t i : batch) {
						sg4::Mailbox *mb = sg4::Mailbox::by_name("flow" + std::to_string(i));
						if (put) {
							comms.push_back(mb->put_async(&payload, sends[i].bytes));
						} else {
							static void *sink;
							comms.push_back(mb->get_async<void>(&sink));
						}
					}
					sg4::Comm::wait_all(comms);
					if (!put)
						for (size_t k = 0; k < batch.size(); k++)
							finish[batch[k]] = comms[k]->get_finish_time();
				}));
			}
	for (const sg4::ActorPtr &a : issuers)
		a->join();
	for (size_t i = 0; i < sends.size(); i++)
		last[sends[i].group] = std::max(last[sends[i].group], finish[i] - start);
	double lo = 0, hi = 0;
	for (size_t gi = 0; gi < ph.groups.size(); gi++) {
		const Group &g = ph.groups[gi];
		if (g.flows.empty())
			continue;
		/* A box job's results flow back as its contributions arrive, but the
		 * last result leaves the box only after the last contribution reached
		 * it: its flows, which all start at once, take the way in once more. */
		double in = 0;
		if (!g.box_jobs.empty())
			for (const Flow &f : g.flows)
				if (is_box(f.dst) && !is_box(f.src))
					in = std::max(in, p.latency(f.src, f.dst));
		double t = g.steps * last[gi] + g.fill + in;
		lo = std::max(lo, t + g.costs() * c.step_lo);
		hi = std::max(hi, t + g.costs() * c.step_hi);
	}
	return {lo, hi};
}

std::vector<AlgoTime> simulate_here(const Cluster &c, const std::vector<Algo> &algos, double bytes)
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
	/* run_phase's actors issue flows and wait: small stacks, no guard pages
	 * (each a mapping of its own: Linux allows 65530) */
	sg4::Engine::set_config("contexts/stack-size", 64);
	sg4::Engine::set_config("contexts/guard-size", 0);
	Platform p(c);
	build(p, algos);
	std::vector<AlgoTime> out;
	sg4::Actor::create("driver", p.rank_lib[0], [&]() {
		for (const Algo &a : algos) {
			AlgoTime t;
			t.name = a.name;
			for (const Phase &ph : a.phases) {
				auto [lo, hi] = run_phase(p, ph, a.baseline);
				t.phases_lo.push_back(lo);
				t.phases_hi.push_back(hi);
				t.lo += lo;
				t.hi += hi;
			}
			double lo = staged_time(c, a, bytes, t.lo, c.step_lo), hi = staged_time(c, a, bytes, t.hi, c.step_hi);
			t.staged_lo = lo - t.lo;
			t.staged_hi = hi - t.hi;
			t.lo = lo;
			t.hi = hi;
			out.push_back(t);
		}
	});
	e.run();
	return out;
}

} /* namespace */

double staged_time(const Cluster &c, const Algo &a, double bytes, double t, double step)
{
	if (a.baseline || !c.gpu_gradients || c.gpu_path)
		return t;
	double s = bytes * c.elem_scale();
	double chunk = std::min(c.stage_chunk, s);
	double chunks = std::ceil(s / chunk);
	double per_call = a.phases.size() * step + 4 * c.lat_nic;
	return std::max(t, s / c.stage) + 2 * chunk / c.stage + (chunks - 1) * per_call;
}

std::vector<AlgoTime> simulate(const Cluster &c, const std::vector<Algo> &algos, double bytes)
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
			for (const AlgoTime &t : simulate_here(c, algos, bytes))
				j.push_back({{"name", t.name}, {"lo", t.lo}, {"hi", t.hi}, {"phases_lo", t.phases_lo},
					     {"phases_hi", t.phases_hi}, {"staged_lo", t.staged_lo}, {"staged_hi", t.staged_hi}});
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
	for (const auto &a : j) {
		AlgoTime t;
		t.name = a["name"];
		t.lo = a["lo"];
		t.hi = a["hi"];
		t.phases_lo = a["phases_lo"].get<std::vector<double>>();
		t.phases_hi = a["phases_hi"].get<std::vector<double>>();
		t.staged_lo = a["staged_lo"];
		t.staged_hi = a["staged_hi"];
		out.push_back(t);
	}
	return out;
}

} /* namespace nrsim */
