/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives among the local ranks of one host, through their shared
 * segment (nr_local.c over nr_shm.c).  The buffer of count floats is cut
 * into nshares contiguous shares (nr_local_share); local rank q < nshares
 * owns share q:
 *   nshares = P   parallel all-reduce: every local rank owns 1/P
 *   nshares = 1   hierarchical: local rank 0 owns all (reduce to it,
 *                 broadcast from it)
 * Summation order: element i of the local sum is
 * ((x_0[i] + x_1[i]) + x_2[i]) + ... + x_{P-1}[i], local-rank order, whatever
 * nshares is.  Every local rank calls the same operations with the same
 * count and nshares, in the same order.
 */
#ifndef NR_LOCAL_H
#define NR_LOCAL_H

#include <stddef.h>

#include "host/comm/nr_shm.h"

/* Share q of count floats in nshares: the first count % nshares shares have one more. */
void nr_local_share(size_t count, int nshares, int q, size_t *off, size_t *len);

/*
 * Every local rank gives src (count floats); local rank q < nshares gets
 * share q of the local sum in share (its len floats; NULL for the others).
 * 0 or a negative nr_err (nr_shm_error says why; the other ranks fail too).
 */
int nr_local_reduce_scatter(struct nr_shm *s, const float *src, size_t count, int nshares,
			    float *share);
/* Local rank q < nshares gives share q (share); every local rank gets all count floats in dst. */
int nr_local_all_gather(struct nr_shm *s, const float *share, size_t count, int nshares,
			float *dst);

#endif /* NR_LOCAL_H */
