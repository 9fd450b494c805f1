/* SPDX-License-Identifier: BSD-3-Clause */
/* The L2 learning table (see dp_l2.h). */
#include <errno.h>
#include <string.h>

#include <rte_jhash.h>

#include "dataplane/dpdk/dp_l2.h"

#define E_PIN     0x8000u          /* entry pinned by a job */
#define E_PORT    0x00FFu          /* port + 1 */

/* The MAC as a 48-bit number, first byte most significant: two loads. */
static inline uint64_t mac_key(const uint8_t mac[6])
{
	uint32_t hi;
	uint16_t lo;

	memcpy(&hi, mac, sizeof(hi));
	memcpy(&lo, mac + 4, sizeof(lo));
	return (uint64_t)__builtin_bswap32(hi) << 16 | __builtin_bswap16(lo);
}

static inline unsigned bucket_idx(const struct dp_l2 *t, uint64_t key)
{
	return rte_jhash_2words((uint32_t)key, (uint32_t)(key >> 32), t->secret) & (DP_L2_BUCKETS - 1);
}

static inline uint64_t e_key(uint64_t v) { return v >> 16; }
static inline bool e_pinned(uint64_t v) { return (v & E_PIN) != 0; }
static inline uint16_t e_port(uint64_t v) { return (uint16_t)((v & E_PORT) - 1); }
static inline uint64_t e_make(uint64_t key, uint16_t port, bool pin)
{
	return key << 16 | (pin ? E_PIN : 0) | (uint16_t)(port + 1);
}

static inline bool aged(const struct dp_l2 *t, uint32_t seen, uint32_t now)
{
	return now - seen > t->age_ticks;
}

void dp_l2_init(struct dp_l2 *t, uint32_t secret, uint32_t port_cap, uint32_t age_s, uint32_t pin_cap)
{
	memset(t, 0, sizeof(*t));
	t->secret = secret;
	t->port_cap = port_cap ? port_cap : DP_L2_PORT_CAP;
	t->pin_cap = pin_cap ? pin_cap : t->port_cap;
	/* seconds to ticks of 2^30 ns, rounded up */
	t->age_ticks = (uint32_t)((((uint64_t)(age_s ? age_s : DP_L2_AGE_S)) * 1000000000ull +
				   (1ull << 30) - 1) >> 30);
}

static inline void count_port(struct dp_l2 *t, uint64_t v, int d)
{
	if (v != 0 && !e_pinned(v) && e_port(v) < DP_L2_PORTS)
		__atomic_fetch_add(&t->learned[e_port(v)], (uint32_t)d, __ATOMIC_RELAXED);
}

/* Replace way i of b from old to v (seen now); false when another lcore got there first. */
static bool put(struct dp_l2 *t, struct dp_l2_bucket *b, unsigned i, uint64_t old, uint64_t v,
		uint32_t now)
{
	if (!__atomic_compare_exchange_n(&b->e[i], &old, v, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return false;
	__atomic_store_n(&b->seen[i], now, __ATOMIC_RELAXED);
	count_port(t, old, -1);
	count_port(t, v, 1);
	return true;
}

/* The way to put a new learned entry in: empty, else aged, else the oldest
 * learned one; -1 when every way is pinned. */
static int victim(const struct dp_l2_bucket *b, const uint64_t *v, uint32_t now)
{
	int best = -1;
	uint32_t best_age = 0;

	for (unsigned i = 0; i < DP_L2_WAYS; i++) {
		uint32_t age;

		if (v[i] == 0)
			return (int)i;
		if (e_pinned(v[i]))
			continue;
		age = now - __atomic_load_n(&b->seen[i], __ATOMIC_RELAXED);
		if (best < 0 || age > best_age) {
			best = (int)i;
			best_age = age;
		}
	}
	return best;
}

enum dp_l2_verdict dp_l2_learn(struct dp_l2 *t, const uint8_t *frame, uint32_t len,
			       uint16_t port, uint32_t now)
{
	const uint8_t *mac = frame + 6;
	uint64_t key, want, v[DP_L2_WAYS];
	struct dp_l2_bucket *b;

	if (dp_l2_vlan_other(frame, len))
		return DP_L2_VLAN;
	key = mac_key(mac);
	if (key == 0 || dp_mac_is_group(mac) || port >= DP_L2_PORTS)
		return DP_L2_OK;
	want = e_make(key, port, false);
	b = &t->b[bucket_idx(t, key)];
	for (unsigned tries = 0; tries < 4; tries++) {
		int w = -1;

		for (unsigned i = 0; i < DP_L2_WAYS; i++) {
			v[i] = __atomic_load_n(&b->e[i], __ATOMIC_ACQUIRE);
			if (v[i] != 0 && e_key(v[i]) == key && (w < 0 || e_pinned(v[i])))
				w = (int)i;
		}
		if (w >= 0 && e_pinned(v[w]))
			return e_port(v[w]) == port ? DP_L2_OK : DP_L2_PINNED;
		if (w >= 0 && t->sticky && e_port(v[w]) != port &&
		    !aged(t, __atomic_load_n(&b->seen[w], __ATOMIC_RELAXED), now))
			return DP_L2_PINNED; /* sticky: it stays where it was learned */
		if (w >= 0 && v[w] == want) {
			/* seen again: one store a tick, not one a frame */
			if (__atomic_load_n(&b->seen[w], __ATOMIC_RELAXED) != now)
				__atomic_store_n(&b->seen[w], now, __ATOMIC_RELAXED);
			return DP_L2_OK;
		}
		/* a new entry here, or one that moves here: within the port's cap */
		if (__atomic_load_n(&t->learned[port], __ATOMIC_RELAXED) >= t->port_cap)
			return DP_L2_CAPPED;
		if (w < 0 && (w = victim(b, v, now)) < 0)
			return DP_L2_FULL;
		if (put(t, b, (unsigned)w, v[w], want, now))
			return v[w] != 0 && e_key(v[w]) == key ? DP_L2_MOVED : DP_L2_OK;
	}
	return DP_L2_OK;    /* lost every race: the others learned something */
}

uint16_t dp_l2_lookup(const struct dp_l2 *t, const uint8_t mac[6], uint32_t now)
{
	uint64_t key = mac_key(mac);
	const struct dp_l2_bucket *b = &t->b[bucket_idx(t, key)];
	uint16_t out = DP_L2_NONE;

	/* a pinned entry wins over a learned twin a race may have left */
	for (unsigned i = 0; i < DP_L2_WAYS; i++) {
		uint64_t v = __atomic_load_n(&b->e[i], __ATOMIC_ACQUIRE);

		if (v == 0 || e_key(v) != key)
			continue;
		if (e_pinned(v))
			return e_port(v);
		if (out == DP_L2_NONE && !aged(t, __atomic_load_n(&b->seen[i], __ATOMIC_RELAXED), now))
			out = e_port(v);
	}
	return out;
}

/* The way of b holding key pinned, or -1. */
static int pinned_way(const struct dp_l2_bucket *b, uint64_t key)
{
	for (unsigned i = 0; i < DP_L2_WAYS; i++) {
		uint64_t v = __atomic_load_n(&b->e[i], __ATOMIC_ACQUIRE);

		if (v != 0 && e_key(v) == key && e_pinned(v))
			return (int)i;
	}
	return -1;
}

/* Whether every way of b is pinned (by a job or the operator). */
static bool all_pinned(const struct dp_l2_bucket *b)
{
	for (unsigned i = 0; i < DP_L2_WAYS; i++)
		if (!e_pinned(__atomic_load_n(&b->e[i], __ATOMIC_ACQUIRE)))
			return false;
	return true;
}

/* Way w of b from old to pinned (key's entry); the learned twins of key a race
 * left are gone.  False when a learner changed the way meanwhile: look again. */
static bool pin_way(struct dp_l2 *t, struct dp_l2_bucket *b, int w, uint64_t key, uint64_t old,
		    uint64_t pinned, uint32_t now)
{
	if (!put(t, b, (unsigned)w, old, pinned, now))
		return false;
	for (unsigned i = 0; i < DP_L2_WAYS; i++) {
		uint64_t o = __atomic_load_n(&b->e[i], __ATOMIC_ACQUIRE);

		if ((int)i != w && o != 0 && e_key(o) == key && !e_pinned(o))
			put(t, b, i, o, 0, now);
	}
	return true;
}

int dp_l2_pin(struct dp_l2 *t, const uint8_t mac[6], uint32_t now, uint16_t owner, uint16_t *port)
{
	uint64_t key = mac_key(mac);
	unsigned bi = bucket_idx(t, key);
	struct dp_l2_bucket *b = &t->b[bi];
	int w;

	if (key == 0 || dp_mac_is_group(mac))
		return -ENOENT;
	if ((w = pinned_way(b, key)) >= 0) {
		uint16_t o = t->owner[bi][w];

		if (o != DP_L2_STATIC && o != owner) {
			t->refused_owner++;
			return -EACCES;
		}
		t->pins[bi][w]++;
		*port = e_port(__atomic_load_n(&b->e[w], __ATOMIC_ACQUIRE));
		return 0;
	}
	for (unsigned tries = 0; tries < 16; tries++) {
		uint64_t v = 0;

		w = -1;
		for (unsigned i = 0; i < DP_L2_WAYS && w < 0; i++) {
			v = __atomic_load_n(&b->e[i], __ATOMIC_ACQUIRE);
			if (v != 0 && e_key(v) == key && !e_pinned(v) &&
			    !aged(t, __atomic_load_n(&b->seen[i], __ATOMIC_RELAXED), now))
				w = (int)i;
		}
		if (w < 0) {
			/* not learned: in a bucket all pinned it never will be, and the
			 * job's results would be flooded; refused, not left unbound */
			if (all_pinned(b)) {
				t->refused_full++;
				return -ENOSPC;
			}
			return -ENOENT;
		}
		if (e_port(v) < DP_L2_PORTS && t->pinned_on[e_port(v)] >= t->pin_cap) {
			t->refused_cap++;
			return -EDQUOT;
		}
		if (!pin_way(t, b, w, key, v, v | E_PIN, now))
			continue;
		t->pins[bi][w] = 1;
		t->owner[bi][w] = owner;
		t->pinned_on[e_port(v)]++;
		*port = e_port(v);
		return 0;
	}
	t->refused_full++;
	return -ENOSPC;
}

/*
 * Way i of bucket bi pinned no more (its last pin, or the operator's static
 * entry taken back): a learned entry again, seen now.  A job's pin counted
 * on its port (pin_cap); a static entry never was.
 */
static void unpin_way(struct dp_l2 *t, unsigned bi, unsigned i, uint32_t now)
{
	struct dp_l2_bucket *b = &t->b[bi];
	uint64_t v = __atomic_load_n(&b->e[i], __ATOMIC_ACQUIRE);

	if (t->owner[bi][i] != DP_L2_STATIC && e_port(v) < DP_L2_PORTS)
		t->pinned_on[e_port(v)]--;
	t->pins[bi][i] = 0;
	t->owner[bi][i] = 0;
	/* learners never change a pinned entry: this exchange cannot fail */
	put(t, b, i, v, v & ~(uint64_t)E_PIN, now);
}

int dp_l2_static(struct dp_l2 *t, const uint8_t mac[6], uint16_t port, uint32_t now)
{
	uint64_t key = mac_key(mac), want = e_make(key, port, true);
	unsigned bi = bucket_idx(t, key);
	struct dp_l2_bucket *b = &t->b[bi];
	int w;

	if (key == 0 || dp_mac_is_group(mac) || port >= DP_L2_PORTS)
		return -EINVAL;
	if ((w = pinned_way(b, key)) >= 0)
		return e_port(__atomic_load_n(&b->e[w], __ATOMIC_ACQUIRE)) == port &&
				       t->owner[bi][w] == DP_L2_STATIC
			       ? 0
			       : -EEXIST;
	for (unsigned tries = 0; tries < 16; tries++) {
		uint64_t v[DP_L2_WAYS];

		w = -1;
		for (unsigned i = 0; i < DP_L2_WAYS; i++) {
			v[i] = __atomic_load_n(&b->e[i], __ATOMIC_ACQUIRE);
			if (v[i] != 0 && e_key(v[i]) == key && w < 0)
				w = (int)i;
		}
		if (w < 0 && (w = victim(b, v, now)) < 0)
			return -ENOSPC;
		if (!pin_way(t, b, w, key, v[w], want, now))
			continue;
		t->pins[bi][w] = 1;
		t->owner[bi][w] = DP_L2_STATIC;
		return 0;
	}
	return -ENOSPC;
}

int dp_l2_unstatic(struct dp_l2 *t, const uint8_t mac[6], uint32_t now, unsigned *job_pins)
{
	uint64_t key = mac_key(mac);
	unsigned bi = bucket_idx(t, key);
	struct dp_l2_bucket *b = &t->b[bi];
	int i = pinned_way(b, key);

	if (job_pins)
		*job_pins = 0;
	if (i < 0 || t->owner[bi][i] != DP_L2_STATIC)
		return -ENOENT;
	if (t->pins[bi][i] > 1) {
		if (job_pins)
			*job_pins = t->pins[bi][i] - 1u;
		return -EBUSY;
	}
	unpin_way(t, bi, (unsigned)i, now);
	return 0;
}

void dp_l2_static_each(const struct dp_l2 *t,
		       void (*fn)(void *arg, const uint8_t mac[6], uint16_t port, unsigned job_pins),
		       void *arg)
{
	for (unsigned bi = 0; bi < DP_L2_BUCKETS; bi++)
		for (unsigned i = 0; i < DP_L2_WAYS; i++) {
			uint64_t v = __atomic_load_n(&t->b[bi].e[i], __ATOMIC_ACQUIRE), k;
			uint8_t mac[6];

			if (v == 0 || !e_pinned(v) || t->owner[bi][i] != DP_L2_STATIC)
				continue;
			k = e_key(v);
			for (unsigned j = 0; j < 6; j++)
				mac[j] = (uint8_t)(k >> (40 - 8 * j));
			fn(arg, mac, e_port(v), t->pins[bi][i] - 1u);
		}
}

void dp_l2_unpin(struct dp_l2 *t, const uint8_t mac[6], uint32_t now)
{
	uint64_t key = mac_key(mac);
	unsigned bi = bucket_idx(t, key);
	struct dp_l2_bucket *b = &t->b[bi];
	int i = pinned_way(b, key);

	if (i < 0)
		return;
	if (t->pins[bi][i] > 1 || t->owner[bi][i] == DP_L2_STATIC) {
		/* a static entry keeps its own pin for good */
		if (t->pins[bi][i] > 1)
			t->pins[bi][i]--;
		return;
	}
	unpin_way(t, bi, (unsigned)i, now);
}

unsigned dp_l2_sweep(struct dp_l2 *t, uint32_t now, unsigned n)
{
	unsigned freed = 0;

	for (unsigned k = 0; k < n; k++) {
		struct dp_l2_bucket *b = &t->b[t->sweep_next];

		t->sweep_next = (t->sweep_next + 1) & (DP_L2_BUCKETS - 1);
		for (unsigned i = 0; i < DP_L2_WAYS; i++) {
			uint64_t v = __atomic_load_n(&b->e[i], __ATOMIC_ACQUIRE);

			if (v != 0 && !e_pinned(v) &&
			    aged(t, __atomic_load_n(&b->seen[i], __ATOMIC_RELAXED), now))
				freed += put(t, b, i, v, 0, now);
		}
	}
	return freed;
}

uint32_t dp_l2_learned(const struct dp_l2 *t, uint16_t port)
{
	return port < DP_L2_PORTS ? __atomic_load_n(&t->learned[port], __ATOMIC_RELAXED) : 0;
}

uint32_t dp_l2_pinned(const struct dp_l2 *t)
{
	uint32_t n = 0;

	for (unsigned b = 0; b < DP_L2_BUCKETS; b++)
		for (unsigned i = 0; i < DP_L2_WAYS; i++)
			n += e_pinned(__atomic_load_n(&t->b[b].e[i], __ATOMIC_RELAXED));
	return n;
}
