/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Drop-eligible packets by magnitude (DLCP; docs/short-slots.md, "Magnitude"):
 * inside a tolerant all-reduce, a packet whose every element is smaller in
 * magnitude than thresh x the RMS of the whole buffer (the DDP bucket) leaves
 * with its class's drop-eligible DSCP, so that a fabric drops it, and the box
 * leaves it out, before the others.
 */
#ifndef NR_MAGNITUDE_H
#define NR_MAGNITUDE_H

#include <stddef.h>
#include <stdint.h>

#include "host/netreduce.h"

/*
 * The magnitude under which an element is small: thresh x the RMS of the n
 * elements of dtype at buf.  0 (nothing is small) when thresh is 0 or the
 * RMS is not finite (an Inf or NaN in the buffer).
 */
float nr_de_level(const void *buf, size_t n, enum nr_dtype dtype, double thresh);

/*
 * The packets of a message of len bytes at buf (mtu bytes a packet, the last
 * one shorter) whose every element's magnitude is below level: bit k of
 * bits[] for packet k (bits has room for every packet; the others are
 * cleared).  A NaN is never small.  Returns the packets marked.
 */
uint32_t nr_de_mark(const void *buf, uint32_t len, uint32_t mtu, enum nr_dtype dtype,
		    float level, uint64_t *bits);

#endif
