/* SPDX-License-Identifier: BSD-3-Clause */
/* The QPN owner map (see dp_owner.h). */
#include <errno.h>

#include "dataplane/dpdk/dp_owner.h"
#include "proto/roce_hdr.h"

static inline uint64_t own_key(uint32_t daddr, uint32_t qpn)
{
	return ((uint64_t)daddr << 24) | (qpn & NR_BTH_QPN_MASK);
}

static inline unsigned own_hash(uint64_t key)
{
	return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 48) & (DP_OWN_SIZE - 1);
}

int dp_owner_get(const struct dp_owner_map *m, uint32_t daddr, uint32_t qpn)
{
	uint64_t key = own_key(daddr, qpn);

	for (unsigned i = own_hash(key), k = 0; k < DP_OWN_SIZE; i = (i + 1) & (DP_OWN_SIZE - 1), k++) {
		uint64_t v = __atomic_load_n(&m->e[i], __ATOMIC_ACQUIRE);

		if (v == 0)
			return -1;
		if ((v >> 8) == key)
			return (v & 0xFF) ? (int)(v & 0xFF) - 1 : -1;
	}
	return -1;
}

int dp_owner_set(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn, unsigned worker)
{
	uint64_t key = own_key(daddr, qpn);

	for (unsigned i = own_hash(key), k = 0; k < DP_OWN_SIZE; i = (i + 1) & (DP_OWN_SIZE - 1), k++) {
		uint64_t v = m->e[i];

		if (v == 0 || (v >> 8) == key) {
			__atomic_store_n(&m->e[i], (key << 8) | (worker + 1), __ATOMIC_RELEASE);
			return 0;
		}
	}
	return -ENOSPC;
}

/* Removal leaves the key with worker 0 (a tombstone reused by the same key). */
void dp_owner_clear(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn)
{
	uint64_t key = own_key(daddr, qpn);

	for (unsigned i = own_hash(key), k = 0; k < DP_OWN_SIZE; i = (i + 1) & (DP_OWN_SIZE - 1), k++) {
		uint64_t v = m->e[i];

		if (v == 0)
			return;
		if ((v >> 8) == key) {
			__atomic_store_n(&m->e[i], key << 8, __ATOMIC_RELEASE);
			return;
		}
	}
}
