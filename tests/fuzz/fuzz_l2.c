/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_l2: the box's L2 table (dataplane/dpdk/dp_l2.c), one lcore, against a
 * shadow of its pins.  Input: byte 0 the per-port cap (1..16), byte 1 the
 * ageing time (1..4 s), byte 2 the per-port pin cap (1..8), then operations
 * of 3 bytes [op][mac][arg]:
 *   op % 6: 0 learn a frame from mac on port arg % 34 (ports 32, 33 out of
 *   range), untagged, priority-tagged or in VLAN 7 by (op >> 3) % 3;
 *   1 the operator's static entry of mac on port arg % 34; 2 pin for owner
 *   1 + (op >> 3) % 2; 3 unpin; 4 time passes arg % 8 ticks; 5 sweep arg
 *   buckets.
 *   mac % 32: 0..11 MACs of one bucket (the table's ways overflow), 12..29
 *   others, 30 a group MAC, 31 the zero MAC.
 *
 * Invariants (a violation traps):
 *   - a pinned or static MAC looks up to its port whatever is learned, aged
 *     or swept; learned from another port it is DP_L2_PINNED, from its own OK.
 *     Why: results go where a lookup says; a host that could move a pinned
 *     MAC would receive another's sums.
 *   - a MAC one owner pinned is refused to another (-EACCES); a static one
 *     takes every owner's pin, on its own port; a port holds at most its
 *     pin cap of job-pinned MACs (-EDQUOT past it).  Why: a tenant must not
 *     pin another's host, nor pin the table full.
 *   - a static entry is refused for a group or zero MAC or a port out of
 *     range, and for a MAC pinned or static elsewhere (-EEXIST).
 *   - a frame tagged with VLAN id != 0 is DP_L2_VLAN and changes nothing.
 *   - a learn that says OK or MOVED makes the MAC look up to that port.
 *   - each port's learned count equals the table's learned entries of that
 *     port; a learn never takes a port past its cap; dp_l2_pinned equals the
 *     shadow's pinned and static MACs.  Why: the cap is what stops one port
 *     from filling the table, and it holds only while the counts are exact.
 *   - pin succeeds on a MAC learned and not aged, with the port a lookup
 *     gave, unless refused as above or its bucket is all pinned (-ENOSPC);
 *     on one not learned -ENOENT, or -ENOSPC when it could never be.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_jhash.h>

#include "dataplane/dpdk/dp_l2.h"
#include "nrz_fuzz.h"

#define SECRET 0x5eedbeefu
#define NMACS  32
#define SAME   12       /* MACs of one bucket */

static uint8_t macs[NMACS][6];

static uint64_t key48(const uint8_t m[6])
{
	uint64_t k = 0;

	for (unsigned i = 0; i < 6; i++)
		k = k << 8 | m[i];
	return k;
}

static unsigned bucket_of(const uint8_t m[6])
{
	uint64_t k = key48(m);

	return rte_jhash_2words((uint32_t)k, (uint32_t)(k >> 32), SECRET) & (DP_L2_BUCKETS - 1);
}

/* The MAC pool: SAME of one bucket (dp_l2.c hashes the 48-bit MAC, first
 * byte most significant, with rte_jhash_2words and the table's secret). */
static void make_macs(void)
{
	unsigned same = 0, other = SAME, want = 0;

	for (uint32_t i = 1; same < SAME || other < 30; i++) {
		uint8_t m[6] = { 0x02, 0x4e, 0x00, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i };

		if (i == 1)
			want = bucket_of(m);
		if (bucket_of(m) == want && same < SAME)
			memcpy(macs[same++], m, 6);
		else if (bucket_of(m) != want && other < 30)
			memcpy(macs[other++], m, 6);
	}
	memcpy(macs[30], (uint8_t[6]){ 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 }, 6);
	memset(macs[31], 0, 6);
}

static struct dp_l2 table;

/* What the table counts against what it holds. */
static void check_counts(const struct dp_l2 *t, unsigned pinned)
{
	uint32_t per[DP_L2_PORTS] = { 0 };

	for (unsigned b = 0; b < DP_L2_BUCKETS; b++)
		for (unsigned i = 0; i < DP_L2_WAYS; i++) {
			uint64_t v = t->b[b].e[i];

			if (v != 0 && !(v & 0x8000u) && (v & 0xFF) - 1 < DP_L2_PORTS)
				per[(v & 0xFF) - 1]++;
		}
	for (unsigned p = 0; p < DP_L2_PORTS; p++)
		NRZ_CHECK(per[p] == dp_l2_learned(t, (uint16_t)p), "port %u: counted %u, holds %u", p,
			  dp_l2_learned(t, (uint16_t)p), per[p]);
	NRZ_CHECK(dp_l2_pinned(t) == pinned, "%u pinned, the shadow %u", dp_l2_pinned(t), pinned);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool made;
	struct nrz_in in = { data, size, 0 };
	uint32_t cap = 1 + nrz_u8(&in) % 16, age = 1 + nrz_u8(&in) % 4, pcap = 1 + nrz_u8(&in) % 8;
	uint32_t now = 1000, on_port[DP_L2_PORTS] = { 0 };
	unsigned pins[NMACS] = { 0 }, n_pinned = 0;
	uint16_t pin_port[NMACS] = { 0 }, owner[NMACS] = { 0 };
	bool fixed[NMACS] = { false }; /* static */

	if (!made) {
		make_macs();
		made = true;
	}
	dp_l2_init(&table, SECRET, cap, age, pcap);
	while (nrz_left(&in) >= 3) {
		uint8_t op = nrz_u8(&in), mi = nrz_u8(&in) % NMACS, arg = nrz_u8(&in);
		const uint8_t *mac = macs[mi];
		bool held = pins[mi] || fixed[mi];
		uint16_t port, got, who = (uint16_t)(1 + (op >> 3) % 2);
		int r;

		switch (op % 6) {
		case 0: {
			uint8_t f[64] = { 0 };
			unsigned tag = (op >> 3) % 3;
			uint16_t p = arg % 34;
			uint32_t before = p < DP_L2_PORTS ? dp_l2_learned(&table, p) : 0;
			enum dp_l2_verdict v;

			memset(f, 0xff, 6);
			memcpy(f + 6, mac, 6);
			if (tag) {
				f[12] = 0x81;
				f[14] = tag == 1 ? 0xE0 : 0x60;
				f[15] = tag == 1 ? 0 : 7;
			}
			v = dp_l2_learn(&table, f, sizeof(f), p, now);
			if (tag == 2) {
				NRZ_CHECK(v == DP_L2_VLAN, "VLAN 7 frame: verdict %d", v);
				break;
			}
			if (held && p < DP_L2_PORTS)
				NRZ_CHECK(v == (p == pin_port[mi] ? DP_L2_OK : DP_L2_PINNED),
					  "pinned MAC %u (port %u) from port %u: verdict %d", mi,
					  pin_port[mi], p, v);
			if (!held && mi < 30 && p < DP_L2_PORTS && (v == DP_L2_OK || v == DP_L2_MOVED))
				NRZ_CHECK(dp_l2_lookup(&table, mac, now) == p,
					  "MAC %u learned on port %u looks up to %u", mi, p,
					  dp_l2_lookup(&table, mac, now));
			if (p < DP_L2_PORTS && before <= cap)
				NRZ_CHECK(dp_l2_learned(&table, p) <= cap, "port %u holds %u, cap %u", p,
					  dp_l2_learned(&table, p), cap);
			break;
		}
		case 1: {
			uint16_t p = arg % 34;

			r = dp_l2_static(&table, mac, p, now);
			if (mi >= 30 || p >= DP_L2_PORTS) {
				NRZ_CHECK(r == -EINVAL, "static MAC %u on port %u: %d", mi, p, r);
			} else if (held) {
				NRZ_CHECK(r == (fixed[mi] && pin_port[mi] == p ? 0 : -EEXIST),
					  "static MAC %u on port %u, held on %u (static %d): %d",
					  mi, p, pin_port[mi], fixed[mi], r);
			} else if (r == 0) {
				fixed[mi] = true;
				pin_port[mi] = p;
				n_pinned++;
			} else {
				NRZ_CHECK(r == -ENOSPC, "static MAC %u on port %u: %d", mi, p, r);
			}
			break;
		}
		case 2:
			got = dp_l2_lookup(&table, mac, now);
			r = dp_l2_pin(&table, mac, now, who, &port);
			if (fixed[mi] || (pins[mi] && owner[mi] == who)) {
				NRZ_CHECK(r == 0 && port == pin_port[mi],
					  "pin of held MAC %u (port %u) "
					  "by owner %u: %d, port %u",
					  mi, pin_port[mi], who, r, port);
				pins[mi]++;
			} else if (pins[mi]) {
				NRZ_CHECK(r == -EACCES, "MAC %u of owner %u pinned by owner %u: %d",
					  mi, owner[mi], who, r);
			} else if (got == DP_L2_NONE) {
				NRZ_CHECK(r == -ENOENT || r == -ENOSPC,
					  "pin of MAC %u not learned: %d", mi, r);
			} else if (on_port[got] >= pcap) {
				NRZ_CHECK(r == -EDQUOT,
					  "pin of MAC %u on port %u holding %u of %u: %d", mi, got,
					  on_port[got], pcap, r);
			} else if (r == 0) {
				NRZ_CHECK(port == got, "MAC %u pinned to %u, looked up to %u", mi, port, got);
				n_pinned++;
				pins[mi] = 1;
				owner[mi] = who;
				pin_port[mi] = port;
				on_port[port]++;
			} else {
				NRZ_CHECK(r == -ENOSPC, "pin of MAC %u on %u: %d", mi, got, r);
			}
			break;
		case 3:
			dp_l2_unpin(&table, mac, now);
			if (pins[mi] && --pins[mi] == 0 && !fixed[mi]) {
				n_pinned--;
				on_port[pin_port[mi]]--;
			}
			break;
		case 4:
			now += arg % 8;
			break;
		default:
			dp_l2_sweep(&table, now, arg);
			break;
		}
		for (unsigned k = 0; k < NMACS; k++)
			if (pins[k] || fixed[k])
				NRZ_CHECK(dp_l2_lookup(&table, macs[k], now) == pin_port[k],
					  "pinned MAC %u looks up to %u, pinned on %u", k,
					  dp_l2_lookup(&table, macs[k], now), pin_port[k]);
		check_counts(&table, n_pinned);
	}
	return 0;
}
