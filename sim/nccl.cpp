/* SPDX-License-Identifier: BSD-3-Clause */
/* sim/nccl.cpp: NCCL's double binary tree and its tuner's model (nccl.hpp). */
#include "nccl.hpp"

#include <algorithm>
#include <cmath>

namespace nrsim {

/* trees.cc's ncclGetBtree: the tree whose root is 0, its one child the
 * highest power of two below n; a rank's first set bit gives its level. */
void nccl_btree(int nranks, int rank, int &u, int &d0, int &d1)
{
	int bit;
	for (bit = 1; bit < nranks; bit <<= 1)
		if (bit & rank)
			break;
	if (rank == 0) {
		u = -1;
		d0 = -1;
		d1 = nranks > 1 ? bit >> 1 : -1;   /* the root's one child */
		return;
	}
	int up = (rank ^ bit) | (bit << 1);
	if (up >= nranks)
		up = rank ^ bit;
	u = up;
	int lowbit = bit >> 1;
	d0 = lowbit == 0 ? -1 : rank - lowbit;
	int down1 = lowbit == 0 ? -1 : rank + lowbit;
	while (down1 >= nranks) {             /* as trees.cc: halve until in bounds */
		down1 = lowbit == 0 ? -1 : rank + lowbit;
		lowbit >>= 1;
	}
	d1 = down1;
}

/* trees.cc's ncclGetDtree: tree 1 is tree 0 mirrored (n even) or shifted by
 * one rank (n odd). */
void nccl_dtree(int nranks, int rank, int &u0, int &d0_0, int &d0_1, int &u1, int &d1_0, int &d1_1)
{
	nccl_btree(nranks, rank, u0, d0_0, d0_1);
	int u, d0, d1;
	if (nranks % 2 == 1) {
		int shift = (rank - 1 + nranks) % nranks;
		nccl_btree(nranks, shift, u, d0, d1);
		u1 = u == -1 ? -1 : (u + 1) % nranks;
		d1_0 = d0 == -1 ? -1 : (d0 + 1) % nranks;
		d1_1 = d1 == -1 ? -1 : (d1 + 1) % nranks;
	} else {
		nccl_btree(nranks, nranks - 1 - rank, u, d0, d1);
		u1 = u == -1 ? -1 : nranks - 1 - u;
		d1_0 = d0 == -1 ? -1 : nranks - 1 - d0;
		d1_1 = d1 == -1 ? -1 : nranks - 1 - d1;
	}
}

DoubleTree nccl_double_tree(int n)
{
	DoubleTree t;
	for (int k = 0; k < 2; k++) {
		t.parent[k].assign(n, -1);
		t.children[k].assign(n, {});
	}
	for (int r = 0; r < n; r++) {
		int u[2], d[2][2];
		nccl_dtree(n, r, u[0], d[0][0], d[0][1], u[1], d[1][0], d[1][1]);
		for (int k = 0; k < 2; k++) {
			t.parent[k][r] = u[k];
			for (int x : d[k])
				if (x >= 0)
					t.children[k][r].push_back(x);
		}
	}
	for (int k = 0; k < 2; k++)
		for (int r = 0; r < n; r++) {
			int dep = 0;
			for (int x = r; t.parent[k][x] >= 0 && dep <= n; x = t.parent[k][x])
				dep++;
			t.depth[k] = std::max(t.depth[k], dep);
		}
	return t;
}

namespace {

/* tuning.cc, the constants this model uses: index [algo: 0 tree, 1 ring]
 * [proto: 0 LL, 1 LL128, 2 Simple]. */
const double kBaseLat[2][3] = {{6.8, 14.0, 0}, {6.6, 14.0, 8.4}};
const double kHwLatNvlink[2][3] = {{.6, 1.25, 28}, {.6, 1.9, 3.4}};
const double kHwLatPci[2][3] = {{1.0, 1.9, 28}, {1.0, 2.5, 5.7}};
const double kHwLatNet[2][3] = {{5.0, 8.5, 28}, {2.7, 4.0, 14.0}};
/* Hopper rows; columns: 1 node, 2 nodes, more (index2) */
const double kLlMaxBwIntel[3] = {39.0, 39.0, 20.4};   /* llMaxBws: N1 Hopper 87.7 */
const double kLlMaxBwHopperN1 = 87.7;
const double kPerChMaxRingLL128Bw = 36.7;
const double kPerChMaxTreeLL128Bw[3] = {36.7, 36.7, 29.0};
const double kPerChMaxTreeBw[3] = {38.7, 41.4, 36.0};
const double kNetOverheadIntel = 1.0;                  /* us, getNetOverhead: x86 Intel */
const double kTreeCorrection[3][23] = {
	{1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
	{1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0},
	{.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};
const char *kAlgo[2] = {"tree", "ring"};
const char *kProto[3] = {"LL", "LL128", "Simple"};

int log2i(long long n)
{
	int l = 0;
	while (n >>= 1)
		l++;
	return l;
}

} /* namespace */

TunerChoice nccl_tuner(const TunerInput &in)
{
	TunerChoice out;
	int nNodes = in.nodes, nRanks = in.ranks;
	/* The graphs: two channels a NIC (NCCL's search duplicates its channels),
	 * each at its share of the NICs; inside one node the channels share the
	 * intra-host link. */
	int nChannels = 2 * std::max(1, in.nics);
	double bwInter = in.net_Bps / 1e9 / nChannels;
	double bwIntra = nNodes == 1 ? in.intra_Bps / 1e9 / nChannels : bwInter;
	int index2 = nNodes <= 2 ? nNodes - 1 : 2;
	double llMaxBw = nNodes == 1 ? kLlMaxBwHopperN1 : kLlMaxBwIntel[index2];
	double ppn = double(nRanks) / nNodes;
	const double (*intraHw)[3] = in.nvlink ? kHwLatNvlink : kHwLatPci;
	int nsteps = 2 * (nRanks - 1);
	int nInterSteps = nNodes > 1 ? 2 * nNodes : 0;
	for (int a = 0; a < 2; a++)
		for (int p = 0; p < 3; p++) {
			/* LL128 only on NVLink inside (tuning.cc: typeIntra <= PATH_NVB) */
			if (p == 1 && !in.nvlink)
				continue;
			double bw = nNodes <= 2 ? bwIntra : bwInter;
			double busBw = nChannels * bw;
			bool ring = a == 1, tree = a == 0;
			if (ring && p == 0)
				busBw = std::min(llMaxBw, busBw * 1.0 / 4.0);
			if (ring && p == 1)
				busBw = std::min(busBw * (ppn < 2 ? 0.7 : 0.92), nChannels * kPerChMaxRingLL128Bw);
			if (tree)
				busBw = std::min(busBw * .92, nChannels * kPerChMaxTreeBw[index2]);
			if (tree && p == 0)
				busBw = std::min(busBw * 1.0 / 3.8, llMaxBw);
			if (tree && p == 1)
				busBw = std::min(busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
						 nChannels * kPerChMaxTreeLL128Bw[index2]);
			double algBw = busBw * (ring ? double(nRanks) / nsteps : .5);
			double lat = kBaseLat[a][p];
			double intraLat = intraHw[a][p];
			double interLat = kHwLatNet[a][p];
			if (ring) {
				double netOverhead = 0;
				if (nNodes > 1)
					netOverhead = kNetOverheadIntel * (p == 2 ? 3 : 1);
				intraLat = std::max(intraLat, netOverhead);
				lat += (nsteps - nInterSteps) * intraLat + nInterSteps * interLat;
			} else {
				lat += 2 * ((nRanks / nNodes - 1) * intraLat + log2i(nNodes) * interLat);
			}
			/* ncclTopoGetAlgoTime */
			int logSize = log2i((long long)in.bytes >> 6);
			if (tree && logSize < 23)
				algBw *= kTreeCorrection[p][logSize];
			if (ring && p == 2 && nNodes > 1 && in.bytes / (nChannels * nRanks) >= 64)
				lat *= 1.4;                     /* the ring's plateau, compCap >= 80 */
			double us = lat + in.bytes / (1000 * algBw);
			if (!(algBw > 0))
				continue;
			out.options.push_back({kAlgo[a], kProto[p], us * 1e-6});
		}
	auto best = std::min_element(out.options.begin(), out.options.end(),
				     [](const auto &x, const auto &y) { return x.seconds < y.seconds; });
	out.algo = best->algo;
	out.proto = best->proto;
	out.seconds = best->seconds;
	return out;
}

} /* namespace nrsim */
