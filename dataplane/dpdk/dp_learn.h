/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Switch mode's learning step (dp_learn.c): the source of each received frame
 * into the L2 table (dp_l2.h), its verdict counted per lcore; a frame that
 * claims a MAC pinned to another port, or a VLAN the box does not switch, is
 * dropped here, before it is parsed, learned or forwarded.  And the table's
 * ageing, a slice at a time from one lcore's housekeeping.
 */
#ifndef NR_DP_LEARN_H
#define NR_DP_LEARN_H

#include <stdbool.h>
#include <stdint.h>

#include "dataplane/dpdk/dp_state.h"

/* Learn frame's source (len bytes, at least an Ethernet header, from port):
 * false when the frame must be dropped (its reason counted; the caller drops it
 * and counts dropped). */
bool dp_learn(struct dp_worker *w, const uint8_t *frame, uint32_t len, uint16_t port);
/* Worker 0's housekeeping: free the aged entries of the next buckets. */
void dp_learn_sweep(struct dp_worker *w);

#endif /* NR_DP_LEARN_H */
