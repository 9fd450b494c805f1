/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_owner: the box's QPN owner map (dataplane/dpdk/dp_qp_owner.c) against a
 * shadow model.  Input: byte 0 the map's size (keys 1..64 it is made for),
 * then operations of 3 bytes [op][key][worker]: op % 3 = 0 set, 1 clear,
 * 2 get; the key one of 256 (two daddrs x 128 QPNs, so runs collide and
 * wrap); the worker 0..31.
 *
 * Invariants (a violation traps):
 *   - get answers the shadow's worker for a key set and not cleared since,
 *     -1 for any other.  Why: a frame steered to the wrong worker is summed
 *     by no one ("arrived unaggregated").
 *   - set fails only with -ENOSPC, and only when the shadow holds cap keys
 *     and this is not one of them; the map's count equals the shadow's.
 *     Why: a full map must be an error job_create returns, never a silent
 *     miss, and a deleted key's word must be free again (no tombstones).
 *   - after the last operation every key is cleared and every word is 0.
 */
#include <errno.h>
#include <stdlib.h>

#include "dataplane/dpdk/dp_qp_owner.h"
#include "nrz_fuzz.h"

#define KEYS 256

static uint32_t key_daddr(unsigned k) { return k & 0x80 ? 0x0a000002u : 0x0a000001u; }
static uint32_t key_qpn(unsigned k) { return 1 + (k & 0x7F); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nrz_in in = { data, size, 0 };
	uint32_t keys = 1 + nrz_u8(&in) % 64, n = 0;
	int shadow[KEYS];
	struct dp_owner_map *m;
	void *mem = malloc(dp_owner_bytes(keys));

	NRZ_CHECK(mem != NULL, "out of memory");
	m = dp_owner_init(mem, keys, 0x1234567u);
	for (unsigned k = 0; k < KEYS; k++)
		shadow[k] = -1;
	while (nrz_left(&in) >= 3) {
		uint8_t op = nrz_u8(&in), k = nrz_u8(&in), w = nrz_u8(&in) % 32;
		int r;

		switch (op % 3) {
		case 0:
			r = dp_owner_set(m, key_daddr(k), key_qpn(k), w);
			if (r == 0) {
				n += shadow[k] < 0;
				shadow[k] = w;
			} else {
				NRZ_CHECK(r == -ENOSPC && shadow[k] < 0 && n == m->cap,
					  "set key %u: %d with %u of %u held (key %s)", k, r, n, m->cap,
					  shadow[k] < 0 ? "absent" : "present");
			}
			break;
		case 1:
			dp_owner_clear(m, key_daddr(k), key_qpn(k));
			n -= shadow[k] >= 0;
			shadow[k] = -1;
			break;
		default:
			break;
		}
		NRZ_CHECK(m->used == n, "the map counts %u keys, the shadow %u", m->used, n);
		for (unsigned j = 0; j < KEYS; j++) {
			r = dp_owner_get(m, key_daddr(j), key_qpn(j));
			NRZ_CHECK(r == shadow[j], "key %u (op %u on key %u): get %d, shadow %d", j,
				  op % 3, k, r, shadow[j]);
		}
	}
	for (unsigned k = 0; k < KEYS; k++)
		dp_owner_clear(m, key_daddr(k), key_qpn(k));
	NRZ_CHECK(m->used == 0, "%u keys left after clearing all", m->used);
	for (uint32_t i = 0; i <= m->mask; i++)
		NRZ_CHECK(m->e[i] == 0, "word %u is 0x%llx after clearing all", i,
			  (unsigned long long)m->e[i]);
	free(mem);
	return 0;
}
