/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * (daddr, QPN) -> owning worker, for boxes with more than one worker: the
 * data packets of connection i (daddr = dst_ip, DestQP = dst_qpn) and the
 * ACKs its receiver returns (daddr = src_ip, DestQP = src_qpn) both map to the
 * lcore whose engine holds the job.  Open addressing of 64-bit words, one
 * writer (the control side, under its mutex), lock-free readers.
 * Entry: key (daddr 32 | qpn 24) << 8 | worker + 1; worker byte 0 = removed.
 */
#ifndef NR_DP_OWNER_H
#define NR_DP_OWNER_H

#include <stdint.h>

#define DP_OWN_SIZE (1u << 16)

struct dp_owner_map {
	uint64_t e[DP_OWN_SIZE];
};

/* 0, or -ENOSPC when the map is full. */
int dp_owner_set(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn, unsigned worker);
void dp_owner_clear(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn);
/* Worker index or -1 when no job claims it. */
int dp_owner_get(const struct dp_owner_map *m, uint32_t daddr, uint32_t qpn);

#endif /* NR_DP_OWNER_H */
