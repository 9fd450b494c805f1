/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * All-reduce across racks (docs/racks.md): R racks, a box per rack (or
 * none: incremental deployment), ranks rack by rack (NR_RACKS = hosts per
 * rack).  Each rack's hosts are one ordinary communicator whose box ring is a
 * job on that rack's box; the first m hosts of every rack (m = the smallest
 * rack's size, or NR_RACK_AGENTS) are its agents; agents j of the R racks
 * form an ordinary ring.
 *
 *   1. rack sum      every host of rack k gets S_k: through rack k's box
 *                    (rank order), or, in a rack without a box, on the
 *                    rack's plain ring (the ring's order);
 *   2. across racks  agent j all-reduces piece j of S_k (the buffer cut into
 *                    m pieces) on the agents' plain ring j, crossing the
 *                    links between racks: piece j of the total T;
 *   3. back in rack  one more all-reduce in the rack (box or ring as in 1)
 *                    in which agent j gives piece j of T and -0.0 elsewhere,
 *                    every other host -0.0: each element has one term that
 *                    is not -0.0, and x + (-0.0) is x for every x, so every
 *                    host gets T's exact bits.
 * Every connection is a standard RC connection between two hosts; the boxes
 * only ever aggregate their own rack's job.  nr_ring_allreduce runs the same
 * three steps with every rack on its plain ring.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/comm/nr_bootstrap.h"
#include "host/comm/nr_topo.h"
#include "host/comm/nr_util.h"
#include "nr_allreduce_box.h"
#include "nr_allreduce_rack.h"
#include "nr_allreduce_ring.h"
#include "nr_local.h"

/* FNV-1a of the layout, to check that every rank has rank 0's. */
static uint64_t layout_hash(const char *racks)
{
	uint64_t h = 1469598103934665603ull;

	for (; *racks; racks++)
		h = (h ^ (uint8_t)*racks) * 1099511628211ull;
	return h & 0x7fffffffffffffffull;
}

/* Where this rank sits: its rack, its place there, the agents per rack. */
static void place(struct nr_comm *w, struct nr_topo *t, const struct nr_config *cfg, int *first)
{
	int r = w->rank;

	t->racks = true;
	t->has_box = t->rack_box = cfg->switch_addr != NULL;
	t->nracks = nr_racks_parse(cfg->racks, t->rack_sizes, NR_RACKS_MAX);
	t->agents = t->rack_sizes[0];
	*first = 0;
	for (int k = 0; k < t->nracks; k++) {
		if (t->rack_sizes[k] < t->agents)
			t->agents = t->rack_sizes[k];
		if (r >= 0 && r < t->rack_sizes[k]) {
			t->rack = k;
			t->rack_rank = r;
			*first = w->rank - r;
		}
		r -= t->rack_sizes[k];
	}
	if (cfg->rack_agents > 0 && cfg->rack_agents < t->agents)   /* checked: <= the smallest */
		t->agents = cfg->rack_agents;
	snprintf(t->rack_name, sizeof(t->rack_name), "rack %d", t->rack);
	snprintf(t->agent_name, sizeof(t->agent_name), "agents %d", t->rack_rank);
}

int nr_rack_init(const struct nr_config *cfg, struct nr_comm **comm)
{
	struct nr_comm *w;
	struct nr_topo *t;
	uint64_t v, mine;
	int rc, first;

	rc = nr_topo_layout_init(cfg, &w);
	if (rc)
		return rc;
	t = w->topo;
	place(w, t, cfg, &first);
	mine = layout_hash(cfg->racks) ^ ((uint64_t)t->agents << 48);
	v = mine;
	rc = nr_barrier_bcast(w, "checking the racks", &v);
	if (!rc && v != mine)
		rc = nr_fail(w, NR_ERR_CONFIG, "rank %d: NR_RACKS=%s with %d agents per rack differs "
			     "from rank 0's (NR_RACKS, NR_RACK_AGENTS): every rank must use the same",
			     w->rank, cfg->racks, t->agents);
	if (!rc && t->rack_rank < t->agents && cfg->udp_port == 65535)
		rc = nr_fail(w, NR_ERR_CONFIG, "rank %d: an agent's second communicator listens on "
			     "NR_UDP_PORT + 1: NR_UDP_PORT must be below 65535", w->rank);
	if (!rc)
		rc = nr_topo_sub_init(w, t->rack_name, t->rack, t->rack_rank, t->rack_sizes[t->rack],
				      first, cfg->switch_addr, cfg->udp_port, &t->rack_comm);
	if (!rc && t->rack_rank < t->agents)   /* agents j: rank j of rack 0 is their rank 0 */
		rc = nr_topo_sub_init(w, t->agent_name, t->nracks + t->rack_rank, t->rack, t->nracks,
				      t->rack_rank, NULL, cfg->udp_port + 1, &t->agent);
	return nr_topo_init_end(w, rc, "connecting the racks", comm);
}

/* An all-reduce on the rack's communicator: through its box, or on its plain ring. */
static int in_rack(struct nr_comm *w, bool box, const float *src, float *dst, size_t count)
{
	struct nr_topo *t = w->topo;
	int rc = box ? nr_box_allreduce(t->rack_comm, src, dst, count, NR_FLOAT32, NR_SUM, 0)
		     : nr_ring_allreduce_flat(t->rack_comm, src, dst, count, NR_FLOAT32, NR_SUM);

	return nr_topo_sub_fail(w, t->rack_name, t->rack_comm, rc);
}

int nr_rack_allreduce(struct nr_comm *w, const float *src, float *dst, size_t count, bool ring)
{
	struct nr_topo *t = w->topo;
	bool box = !ring && t->rack_box;
	size_t off = 0, len = 0;
	int rc;

	rc = in_rack(w, box, src, dst, count);
	if (rc || t->nracks == 1)
		return rc;
	if (t->agent) {
		nr_local_share(count, t->agents, t->rack_rank, &off, &len);
		rc = nr_ring_allreduce_flat(t->agent, dst + off, dst + off, len, NR_FLOAT32, NR_SUM);
		if (rc)
			return nr_topo_sub_fail(w, t->agent_name, t->agent, rc);
	}
	if (t->rack_sizes[t->rack] == 1)
		return 0;
	rc = nr_topo_buf(w, count);
	if (rc)
		return rc;
	for (size_t i = 0; i < count; i++)
		t->buf[i] = -0.0f;
	memcpy(t->buf + off, dst + off, len * sizeof(float));
	return in_rack(w, box, t->buf, dst, count);
}
