/* SPDX-License-Identifier: BSD-3-Clause */
/* sim/boxrate.cpp: nr-bench-switch --json into a box's rate (boxrate.hpp). */
#include "boxrate.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace nrsim {

std::string normal_dtype(const std::string &s)
{
	if (s == "fp32" || s == "float32" || s == "float" || s == "f32")
		return "fp32";
	if (s == "bf16" || s == "bfloat16")
		return "bf16";
	if (s == "fp16" || s == "float16" || s == "half" || s == "f16")
		return "fp16";
	return "";
}

BoxRates read_box_rates(const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		throw std::invalid_argument("box.rates \"" + path + "\": " + strerror(errno) +
					    " (an nr-bench-switch --json file; sim/boxes/ has the shipped ones)");
	BoxRates r;
	r.path = path;
	std::string line;
	for (int n = 1; std::getline(in, line); n++) {
		size_t b = line.find_first_not_of(" \t\r");
		if (b == std::string::npos)
			continue;
		if (line[b] == '#') {
			r.about.push_back(line.substr(b + 1));
			continue;
		}
		nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
		std::string where = path + ":" + std::to_string(n);
		if (j.is_discarded() || !j.is_object())
			throw std::invalid_argument(where + ": not a JSON object (nr-bench-switch --json writes one a line; "
							    "comments start with #)");
		if (j.value("bench", "") != "switch" || j.value("path", "") != "aggregate")
			continue;
		RateRow row;
		std::string dt = j.contains("dtype") && j["dtype"].is_string() ? j["dtype"].get<std::string>() : "fp32";
		row.dtype = normal_dtype(dt);
		if (row.dtype.empty())
			throw std::invalid_argument(where + ": dtype \"" + dt + "\": fp32, bf16 or fp16");
		if (!j.contains("payload") || !j["payload"].is_number_integer() || !j.contains("gbps") ||
		    !j["gbps"].is_number() || !j.contains("workers") || !j["workers"].is_number_integer())
			throw std::invalid_argument(where + ": an aggregate row needs payload, workers (integers) and gbps");
		row.payload = j["payload"].get<int>();
		row.workers = j["workers"].get<int>();
		row.gbps = j["gbps"].get<double>();
		row.channels = j.value("job", "") == "channels";
		if (row.payload < 64 || row.workers < 1 || !(row.gbps > 0))
			throw std::invalid_argument(where + ": payload >= 64, workers >= 1 and gbps > 0 (a failed run? "
							    "measure again)");
		r.rows.push_back(row);
	}
	if (r.rows.empty())
		throw std::invalid_argument("box.rates \"" + path + "\": no aggregate rows ({\"bench\":\"switch\","
					    "\"path\":\"aggregate\",...}): is it nr-bench-switch --json's output?");
	return r;
}

namespace {

double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	size_t n = v.size();
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string num(double v)
{
	char b[32];
	snprintf(b, sizeof b, "%g", v);
	return b;
}

/* Gbit/s at w workers from the measured (workers -> Gbit/s) of one payload. */
double at_workers(const std::map<int, double> &m, int w, std::string &how)
{
	auto hit = m.find(w);
	if (hit != m.end()) {
		how += std::to_string(w) + " workers measured";
		return hit->second;
	}
	auto hi = m.upper_bound(w);
	if (hi == m.end()) {
		auto last = std::prev(m.end());
		how += std::to_string(w) + " workers at the " + std::to_string(last->first) + "-worker rate a worker";
		return last->second * w / last->first;
	}
	if (hi == m.begin()) {
		how += std::to_string(w) + " workers at the " + std::to_string(hi->first) + "-worker rate a worker";
		return hi->second * w / hi->first;
	}
	auto lo = std::prev(hi);
	how += std::to_string(w) + " workers between " + std::to_string(lo->first) + " and " + std::to_string(hi->first);
	return lo->second + (hi->second - lo->second) * (w - lo->first) / double(hi->first - lo->first);
}

} /* namespace */

double BoxRates::gbps(int workers, int mtu, const std::string &dtype, std::string *how) const
{
	std::string d = dtype, note;
	if (!std::any_of(rows.begin(), rows.end(), [&](const RateRow &r) { return r.dtype == d; })) {
		note = "; no " + d + " rows: fp32's payload rate";
		d = "fp32";
		if (!std::any_of(rows.begin(), rows.end(), [&](const RateRow &r) { return r.dtype == d; }))
			throw std::invalid_argument("box.rates \"" + path + "\": no rows of " + dtype + " or fp32");
	}
	/* payload -> workers -> the median of its rows; the one-core stage row
	 * only where no one-worker channels row was measured */
	std::map<int, std::map<int, std::vector<double>>> chan, core;
	for (const RateRow &r : rows)
		if (r.dtype == d)
			(r.channels ? chan : core)[r.payload][r.workers].push_back(r.gbps);
	std::map<int, std::map<int, double>> by;
	for (auto *src : {&chan, &core})
		for (const auto &[p, ws] : *src)
			for (const auto &[w, v] : ws)
				if (!by[p].count(w))
					by[p][w] = median(v);
	std::string h;
	double g;
	auto exact = by.find(mtu);
	if (exact != by.end()) {
		g = at_workers(exact->second, workers, h);
		h += " at " + std::to_string(mtu) + " B";
	} else if (by.size() == 1) {
		int p = by.begin()->first;
		g = at_workers(by.begin()->second, workers, h) * mtu / p;
		h += " at " + std::to_string(p) + " B, a packet's time taken as at " + std::to_string(p) + " B";
	} else {
		/* the two measured payloads around mtu (or nearest it on one side) */
		auto hi = by.upper_bound(mtu);
		if (hi == by.end())
			hi = std::prev(by.end());
		if (hi == by.begin())
			hi = std::next(hi);
		auto lo = std::prev(hi);
		std::string h1, h2;
		double g1 = at_workers(lo->second, workers, h1), g2 = at_workers(hi->second, workers, h2);
		double t1 = lo->first * 8 / g1, t2 = hi->first * 8 / g2;   /* ns a packet */
		double t = t1 + (t2 - t1) * (mtu - lo->first) / double(hi->first - lo->first);
		if (!(t > 0))
			throw std::invalid_argument("box.rates \"" + path + "\": MTU " + std::to_string(mtu) +
						    " lies too far from the measured payloads (measure it: nr-bench-switch "
						    "--payload " + std::to_string(mtu) + " --json)");
		g = mtu * 8 / t;
		h = h1 + ", a packet's time linear between " + std::to_string(lo->first) + " and " +
		    std::to_string(hi->first) + " B";
	}
	if (how)
		*how = num(g) + " Gbit/s: " + h + note;
	return g;
}

} /* namespace nrsim */
