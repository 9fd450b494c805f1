/* SPDX-License-Identifier: BSD-3-Clause */
/* The QPN owner map (see dp_qp_owner.h). */
/* rte_seqcount is experimental in DPDK 22.11 (stable from 23.11 on). */
#define ALLOW_EXPERIMENTAL_API 1

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <rte_jhash.h>

#include "dataplane/dpdk/dp_qp_owner.h"
#include "proto/roce_hdr.h"

static inline uint64_t own_key(uint32_t daddr, uint32_t qpn)
{
	return ((uint64_t)daddr << 24) | (qpn & NR_BTH_QPN_MASK);
}

static inline uint32_t own_home(const struct dp_owner_map *m, uint64_t key)
{
	return rte_jhash_2words((uint32_t)key, (uint32_t)(key >> 32), m->secret) & m->mask;
}

static inline uint64_t own_load(const struct dp_owner_map *m, uint32_t i)
{
	return __atomic_load_n(&m->e[i], __ATOMIC_RELAXED);
}

static inline void own_store(struct dp_owner_map *m, uint32_t i, uint64_t v)
{
	__atomic_store_n(&m->e[i], v, __ATOMIC_RELAXED);
}

size_t dp_owner_bytes(uint32_t keys)
{
	uint64_t words = 64;

	while (words < 2ull * keys)
		words <<= 1;
	return sizeof(struct dp_owner_map) + words * sizeof(uint64_t);
}

struct dp_owner_map *dp_owner_init(void *mem, uint32_t keys, uint32_t secret)
{
	struct dp_owner_map *m = mem;
	size_t words = (dp_owner_bytes(keys) - sizeof(*m)) / sizeof(uint64_t);

	memset(m, 0, dp_owner_bytes(keys));
	rte_seqcount_init(&m->sc);
	m->mask = (uint32_t)words - 1;
	m->cap = (uint32_t)(words / 2);
	m->secret = secret;
	return m;
}

/* The word holding key, or the free word that ends its run: *found says which. */
static uint32_t own_find(const struct dp_owner_map *m, uint64_t key, bool *found)
{
	uint32_t i = own_home(m, key);

	for (;;) {
		uint64_t v = own_load(m, i);

		if (v == 0 || (v >> 8) == key) {
			*found = v != 0;
			return i;
		}
		i = (i + 1) & m->mask;  /* never more than half full: a free word comes */
	}
}

int dp_owner_get(const struct dp_owner_map *m, uint32_t daddr, uint32_t qpn)
{
	uint64_t key = own_key(daddr, qpn);
	uint32_t sn, i;
	bool found;
	int w;

	do {
		sn = rte_seqcount_read_begin(&m->sc);
		i = own_find(m, key, &found);
		w = found ? (int)(own_load(m, i) & 0xFF) - 1 : -1;
	} while (rte_seqcount_read_retry(&m->sc, sn));
	return w;
}

int dp_owner_set(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn, unsigned worker)
{
	uint64_t key = own_key(daddr, qpn);
	bool found;
	uint32_t i = own_find(m, key, &found);

	if (!found && m->used >= m->cap)
		return -ENOSPC;
	/* One word written whole: a reader sees the old entry or the new one. */
	__atomic_store_n(&m->e[i], (key << 8) | (worker + 1), __ATOMIC_RELEASE);
	m->used += !found;
	return 0;
}

/* Whether home h lies cyclically in (i, j]: then the entry at j may not move to i. */
static inline bool own_between(uint32_t i, uint32_t h, uint32_t j)
{
	return i <= j ? (i < h && h <= j) : (i < h || h <= j);
}

void dp_owner_clear(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn)
{
	bool found;
	uint32_t i = own_find(m, own_key(daddr, qpn), &found), j = i;

	if (!found)
		return;
	rte_seqcount_write_begin(&m->sc);
	/* Algorithm R: fill the hole at i with the next entry of the run that may
	 * sit there (its home not in (i, j]), then make that one's word the hole. */
	for (;;) {
		uint64_t v;

		j = (j + 1) & m->mask;
		v = own_load(m, j);
		if (v == 0)
			break;
		if (own_between(i, own_home(m, v >> 8), j))
			continue;
		own_store(m, i, v);
		i = j;
	}
	own_store(m, i, 0);
	rte_seqcount_write_end(&m->sc);
	m->used--;
}
