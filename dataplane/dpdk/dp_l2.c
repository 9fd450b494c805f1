/* SPDX-License-Identifier: BSD-3-Clause */
/* The L2 learning table (see dp_l2.h). */
#include <string.h>

#include "dataplane/dpdk/dp_l2.h"

/* The MAC as a 48-bit number, first byte most significant: two loads. */
static inline uint64_t mac_key(const uint8_t mac[6])
{
	uint32_t hi;
	uint16_t lo;

	memcpy(&hi, mac, sizeof(hi));
	memcpy(&lo, mac + 4, sizeof(lo));
	return (uint64_t)__builtin_bswap32(hi) << 16 | __builtin_bswap16(lo);
}

static inline unsigned bucket_of(uint64_t key)
{
	uint64_t h = key * 0x9E3779B97F4A7C15ull;

	return (unsigned)(h >> 40) & (DP_L2_BUCKETS - 1);
}

void dp_l2_init(struct dp_l2 *t)
{
	memset(t, 0, sizeof(*t));
}

void dp_l2_learn(struct dp_l2 *t, const uint8_t mac[6], uint16_t port)
{
	uint64_t key = mac_key(mac);
	uint64_t want = (key << 16) | (uint16_t)(port + 1);
	uint64_t *b;
	int empty = -1;

	if (key == 0 || dp_mac_is_group(mac))
		return;
	b = t->e[bucket_of(key)];
	for (int i = 0; i < DP_L2_WAYS; i++) {
		uint64_t v = __atomic_load_n(&b[i], __ATOMIC_RELAXED);

		if (v == 0) {
			if (empty < 0)
				empty = i;
			continue;
		}
		if ((v >> 16) == key) {
			if (v != want)
				__atomic_store_n(&b[i], want, __ATOMIC_RELAXED);
			return;
		}
	}
	if (empty < 0)
		empty = (int)(key % DP_L2_WAYS);
	__atomic_store_n(&b[empty], want, __ATOMIC_RELAXED);
}

uint16_t dp_l2_lookup(const struct dp_l2 *t, const uint8_t mac[6])
{
	uint64_t key = mac_key(mac);
	const uint64_t *b = t->e[bucket_of(key)];

	for (int i = 0; i < DP_L2_WAYS; i++) {
		uint64_t v = __atomic_load_n(&b[i], __ATOMIC_RELAXED);

		if (v != 0 && (v >> 16) == key)
			return (uint16_t)((v & 0xFFFF) - 1);
	}
	return DP_L2_NONE;
}
