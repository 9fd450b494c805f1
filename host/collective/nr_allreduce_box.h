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

#endif /* NR_ALLREDUCE_BOX_H */
