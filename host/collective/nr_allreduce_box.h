/* SPDX-License-Identifier: BSD-3-Clause */
/* All-reduce through the box on one ring of ranks (nr_allreduce_box.c). */
#ifndef NR_ALLREDUCE_BOX_H
#define NR_ALLREDUCE_BOX_H

#include "host/comm/comm_internal.h"

/*
 * nr_allreduce_flags' contract (netreduce.h) on a communicator of one ring:
 * rank order 0..N-1; NR_MSG_TOLERANT marks the op's messages with the job's
 * short DSCP where c->short_tos says they can be.
 */
int nr_box_allreduce(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
		     enum nr_dtype dtype, enum nr_op op, unsigned flags);
/*
 * nr_reduce_scatter's contract (netreduce.h) on a communicator of one ring
 * without priority classes: count is the share's elements, the all-reduce of
 * count x world whose share alone is copied out.
 */
int nr_box_reduce_scatter(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			  enum nr_dtype dtype, enum nr_op op);
/*
 * nr_allgather's contract (netreduce.h) on a communicator of one ring with a
 * box, its arguments checked: count bytes a rank, through the job of reduce
 * "bor" (c->box[NR_BOX_BOR], opened at the first call: collective).
 */
int nr_box_allgather(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count);
/*
 * nr_allreduce_multi's contract (netreduce.h) where the communicator has
 * priority classes (c->classes): the requests at once, an op per channel.
 */
int nr_box_allreduce_multi(struct nr_comm *c, const struct nr_allreduce_req *reqs, unsigned n,
			   uint64_t *done_ns);

#endif /* NR_ALLREDUCE_BOX_H */
