/* SPDX-License-Identifier: BSD-3-Clause */
/* The ring all-reduce over the plain ring of a communicator (nr_allreduce_ring.c). */
#ifndef NR_ALLREDUCE_RING_H
#define NR_ALLREDUCE_RING_H

#include "host/comm/comm_internal.h"

/* nr_ring_allreduce's contract (netreduce.h) on a communicator of one ring. */
int nr_ring_allreduce_flat(struct nr_comm *c, const void *sendbuf, void *recvbuf, size_t count,
			   enum nr_dtype dtype, enum nr_op op);

#endif /* NR_ALLREDUCE_RING_H */
