/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The public calls of libnetreduce (netreduce.h), on top of everything: a
 * communicator is one ring of ranks (nr_comm.c, nr_allreduce_box.c,
 * nr_allreduce_ring.c), or, when its ranks share hosts (NR_LOCAL_SIZE > 1),
 * the layout of a topology whose collectives run on sub-communicators
 * (nr_allreduce_hier.c), or when they span racks (NR_RACKS,
 * nr_allreduce_rack.c).
 */
#include <string.h>

#include "host/netreduce.h"
#include "nr_allreduce_box.h"
#include "nr_allreduce_hier.h"
#include "nr_allreduce_rack.h"
#include "nr_allreduce_ring.h"
#include "nr_collective.h"
#include "nr_comm.h"
#include "nr_config.h"
#include "nr_topo.h"
#include "nr_util.h"

int nr_comm_init(const struct nr_config *cfg, struct nr_comm **comm)
{
	int rc;

	*comm = NULL;
	rc = nr_config_check(cfg);
	if (rc)
		return rc;
	if (cfg->racks)
		return nr_rack_init(cfg, comm);
	if (cfg->local_size > 1)
		return nr_hier_init(cfg, comm);
	return nr_flat_init(cfg, false, comm);
}

void nr_comm_destroy(struct nr_comm *comm)
{
	if (comm && comm->topo)
		nr_topo_destroy(comm);
	else
		nr_flat_destroy(comm);
}

/* A collective on a topology: the arguments, then the topology's all-reduce. */
static int topo_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			  enum nr_dtype dtype, enum nr_op op, bool ring)
{
	const char *fn = ring ? "nr_ring_allreduce" : "nr_allreduce";
	int rc;

	/* across racks a rack without a box takes part on its ring */
	if (!ring && !c->broken && !c->topo->racks && !c->topo->has_box)
		return nr_fail(c, NR_ERR_CONFIG, "nr_allreduce: no box configured (NR_SWITCH); "
			       "use nr_ring_allreduce without a box");
	if (nr_check_args(c, sendbuf, recvbuf, count, dtype, op, fn, &rc))
		return rc;
	if (op != NR_SUM)   /* the local and rack phases sum */
		return nr_fail(c, NR_ERR_INVALID, "%s: NR_MAX on hosts with several ranks or across "
			       "racks: their local and rack phases sum only", fn);
	rc = c->topo->racks ? nr_rack_allreduce(c, sendbuf, recvbuf, count, ring)
			    : nr_hier_allreduce(c, sendbuf, recvbuf, count, ring);
	if (rc && rc != NR_ERR_INVALID)
		c->broken = true;
	return rc;
}

/* One public all-reduce, counted in c->stats (nr_comm_stats). */
static int counted_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			     enum nr_dtype dtype, enum nr_op op, bool ring)
{
	uint64_t t0 = nr_now_ns();
	int rc;

	if (c && c->topo)
		rc = topo_allreduce(c, sendbuf, recvbuf, count, dtype, op, ring);
	else
		rc = ring ? nr_plain_allreduce(c, sendbuf, recvbuf, count, dtype, op)
			  : nr_box_allreduce(c, sendbuf, recvbuf, count, dtype, op);
	if (!c)
		return rc;
	__atomic_add_fetch(&c->stats.busy_ns, nr_now_ns() - t0, __ATOMIC_RELAXED);
	if (rc)
		__atomic_add_fetch(&c->stats.failed_calls, 1, __ATOMIC_RELAXED);
	else if (ring) {
		__atomic_add_fetch(&c->stats.ring_calls, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->stats.ring_bytes, (uint64_t)count * 4, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(&c->stats.box_calls, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&c->stats.box_bytes, (uint64_t)count * 4, __ATOMIC_RELAXED);
	}
	return rc;
}

int nr_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		 enum nr_dtype dtype, enum nr_op op)
{
	return counted_allreduce(c, sendbuf, recvbuf, count, dtype, op, false);
}

int nr_ring_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		      enum nr_dtype dtype, enum nr_op op)
{
	return counted_allreduce(c, sendbuf, recvbuf, count, dtype, op, true);
}

void nr_comm_stats(const struct nr_comm *c, struct nr_comm_stats *out)
{
	out->box_calls = __atomic_load_n(&c->stats.box_calls, __ATOMIC_RELAXED);
	out->box_bytes = __atomic_load_n(&c->stats.box_bytes, __ATOMIC_RELAXED);
	out->ring_calls = __atomic_load_n(&c->stats.ring_calls, __ATOMIC_RELAXED);
	out->ring_bytes = __atomic_load_n(&c->stats.ring_bytes, __ATOMIC_RELAXED);
	out->failed_calls = __atomic_load_n(&c->stats.failed_calls, __ATOMIC_RELAXED);
	out->busy_ns = __atomic_load_n(&c->stats.busy_ns, __ATOMIC_RELAXED);
}

int nr_comm_rank(const struct nr_comm *comm) { return comm->rank; }
int nr_comm_world(const struct nr_comm *comm) { return comm->world; }

/* The communicator that talks to the box (the comm itself when flat). */
static const struct nr_comm *box_comm(const struct nr_comm *comm)
{
	return !comm->topo ? comm : comm->topo->racks ? comm->topo->rack_comm : comm->topo->col;
}

uint32_t nr_comm_credits(const struct nr_comm *comm)
{
	const struct nr_comm *box = box_comm(comm);

	return box && box->has_box ? box->box.credits : 0;
}

unsigned nr_comm_channels(const struct nr_comm *comm)
{
	const struct nr_comm *box = box_comm(comm);

	return box && box->has_box ? box->n_channels : 1;
}

const char *nr_comm_algo(const struct nr_comm *comm)
{
	return !comm->topo ? "flat" : comm->topo->racks ? "racks" : nr_hier_variant_name(comm);
}
