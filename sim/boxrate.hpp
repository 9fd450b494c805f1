/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sim/boxrate.hpp: what a box server sums, read from `nr-bench-switch --json`
 * (bench/switch/bench_switch.c; sim/README.md, "The box").
 *
 * The file's rows of the aggregate path ({"bench":"switch","path":"aggregate",
 * ...}) give payload Gbit/s entering the box (N contributions a packet
 * position, by CPU time) at a payload size (the RoCE MTU) on a number of
 * workers: the "job":"channels" rows one job on K workers, the row without
 * "job" one core.  Every other row and every other field is left alone, so a
 * newer bench's output (a "dtype" field, bf16 and fp16 rows) reads as it is.
 * Lines starting with '#' say where the figures come from.
 */
#ifndef NR_SIM_BOXRATE_HPP
#define NR_SIM_BOXRATE_HPP

#include <string>
#include <vector>

namespace nrsim {

struct RateRow {
	std::string dtype;      /* fp32 (no "dtype" field), bf16, fp16 */
	int payload = 0;        /* bytes a packet: the RoCE MTU */
	int workers = 0;
	double gbps = 0;        /* payload Gbit/s entering the box */
	bool channels = false;  /* a "job":"channels" row (else the one-core stage row) */
};

struct BoxRates {
	std::string path;
	std::vector<std::string> about;   /* the file's '#' lines */
	std::vector<RateRow> rows;

	/* Payload Gbit/s a box of `workers` workers sums at RoCE MTU `mtu` for
	 * gradients of `dtype`.  Measured where the file has the point; between
	 * measured worker counts linear, past the largest at its rate a worker;
	 * between measured payloads a packet's time is taken linear in its size
	 * (two points), past them extrapolated on the same line; a dtype the file
	 * lacks takes fp32's payload rate.  `how`, if given, says which. */
	double gbps(int workers, int mtu, const std::string &dtype, std::string *how = nullptr) const;
};

/* Read an nr-bench-switch --json file; throws std::invalid_argument naming
 * the file (and line) and what to do about it. */
BoxRates read_box_rates(const std::string &path);

/* "fp32", "float32", "bf16", "bfloat16", "fp16", "float16", "half" -> fp32,
 * bf16, fp16; "" when unknown. */
std::string normal_dtype(const std::string &s);

} /* namespace nrsim */

#endif
