/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The L2 learning table of switch mode: MAC -> port, shared by all worker
 * lcores without a lock.  Each entry is one 64-bit word (MAC 48 bits | port+1
 * 16 bits) read and written with atomic loads and stores, in 4-way buckets.
 * Learning is lossy by design: a full bucket overwrites one of its ways, and a
 * destination that is not found is flooded, which is always correct for a
 * learning switch.  No ageing: a host that moves is re-learned from its next
 * frame.
 */
#ifndef NR_DP_L2_H
#define NR_DP_L2_H

#include <stdbool.h>
#include <stdint.h>

#define DP_L2_BUCKETS 1024      /* power of two */
#define DP_L2_WAYS    4
#define DP_L2_NONE    0xFFFF

struct dp_l2 {
	uint64_t e[DP_L2_BUCKETS][DP_L2_WAYS];
};

void dp_l2_init(struct dp_l2 *t);
/* Remember that mac sits behind port (ignores group and zero addresses). */
void dp_l2_learn(struct dp_l2 *t, const uint8_t mac[6], uint16_t port);
/* The port behind mac, or DP_L2_NONE. */
uint16_t dp_l2_lookup(const struct dp_l2 *t, const uint8_t mac[6]);

static inline bool dp_mac_is_group(const uint8_t mac[6]) { return mac[0] & 1; }

#endif /* NR_DP_L2_H */
