/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The L2 learning table of switch mode: MAC -> port, shared by all worker
 * lcores without a lock (docs/trust.md, "L2").  Modelled on Open vSwitch's
 * lib/mac-learning.c: a MAC's bucket is a hash keyed with a secret of the box
 * (rte_jhash with a random seed), so no host can aim frames at one bucket; a
 * port holds at most port_cap learned entries, so no port can fill the
 * table; a learned entry not refreshed for age_ticks is gone (lookups miss
 * it, a sweep frees it).
 *
 * Pins.  When a job registers, the box pins the MACs of its connections to
 * the ports they were learned on (dp_l2_pin, the control side, under
 * box->ctl_lock): a pinned entry is never moved, evicted or aged while a job
 * holds it, and a frame that claims a pinned MAC as its source from another
 * port is refused (DP_L2_PINNED: the caller drops and counts it, nothing is
 * learned).  Results go to the pinned port whatever frames others send.
 * A pin has an owner (the job spec's owner: its tenant): a MAC pinned by one
 * owner's jobs is refused to every other owner's (-EACCES), so no tenant
 * takes over, or lends its port to, another's host; a port holds at most
 * pin_cap pinned entries (-EDQUOT), so no port's jobs pin the table full.
 *
 * Sticky learning (--l2-sticky, port security's sticky MACs): a learned MAC
 * does not move to another port until it ages out where it was learned; a
 * frame claiming it from another port meanwhile is refused as a pinned one's
 * (DP_L2_PINNED), so a flood of a host's MAC after the host spoke, before its
 * job registers, moves nothing.  A host that really moved waits --l2-age.
 *
 * Static entries (port security, as a switch's static MAC table): the
 * operator's MAC -> port map (--l2-static FILE, dp_l2_static), pinned for
 * the box's life before any frame: no frame moves them, any job binds to
 * them (the port is the operator's word), and a flood of a host's MAC
 * before its job registers teaches the box nothing.
 *
 * VLANs: the table is one VLAN.  Untagged and priority-tagged frames (VLAN
 * id 0: 802.1p, as PFC uses) are learned; a frame with another VLAN id is
 * refused (DP_L2_VLAN: dropped and counted, never learned or switched), so
 * no VLAN can teach the box where a host of another is.
 *
 * An entry is one 64-bit word (MAC 48 bits | pinned 1 bit | port + 1) read
 * and written with atomic loads and compare-exchanges by every lcore; its
 * stamp (the last tick it was seen) beside it in the bucket's cache line.
 * The per-port counts of learned entries move only with a successful
 * compare-exchange, so they stay exact.
 */
#ifndef NR_DP_L2_H
#define NR_DP_L2_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#define DP_L2_BUCKETS   2048      /* power of two */
#define DP_L2_WAYS      4
#define DP_L2_ENTRIES   (DP_L2_BUCKETS * DP_L2_WAYS)
#define DP_L2_PORTS     32        /* port ids below this (DP_MAX_PORTS) */
#define DP_L2_NONE      0xFFFF
/* defaults: a port holds an eighth of the table; entries live 300 s (as OVS's) */
#define DP_L2_PORT_CAP  (DP_L2_ENTRIES / 8)
#define DP_L2_AGE_S     300u
/* the owner of a static entry (pins' owners are job spec owners, below it) */
#define DP_L2_STATIC 0xFFFF

/* A tick of the table's clock: 2^30 ns, about a second. */
static inline uint32_t dp_l2_tick(uint64_t now_ns) { return (uint32_t)(now_ns >> 30); }

struct dp_l2_bucket {
	uint64_t e[DP_L2_WAYS];       /* 0: empty */
	uint32_t seen[DP_L2_WAYS];    /* tick of the entry's last frame */
} __rte_cache_aligned;

struct dp_l2 {
	struct dp_l2_bucket b[DP_L2_BUCKETS];
	uint32_t secret;              /* the hash's seed, random per box */
	uint32_t port_cap;            /* learned entries a port may hold */
	uint32_t age_ticks;           /* a learned entry unseen this long is gone */
	uint32_t sweep_next;          /* next bucket dp_l2_sweep looks at (one lcore) */
	uint32_t learned[DP_L2_PORTS];/* learned (not pinned) entries of each port */
	uint32_t pin_cap;             /* pinned entries a port may hold (statics aside) */
	bool sticky;                  /* a learned MAC moves only once aged (--l2-sticky) */
	/* control side only (box->ctl_lock): the jobs' pins of each entry, their owner */
	uint16_t pins[DP_L2_BUCKETS][DP_L2_WAYS];
	uint16_t owner[DP_L2_BUCKETS][DP_L2_WAYS];
	uint32_t pinned_on[DP_L2_PORTS];                   /* entries jobs pinned on each port */
	uint64_t refused_owner, refused_cap, refused_full; /* pins refused, by why */
};

/* What dp_l2_learn made of a frame's source. */
/* clang-format off */
enum dp_l2_verdict {
	DP_L2_OK = 0,       /* learned, refreshed, or nothing to learn */
	DP_L2_MOVED,        /* a learned MAC moved to this port (counted, not a drop) */
	DP_L2_CAPPED,       /* not learned: the port holds port_cap entries (not a drop) */
	DP_L2_FULL,         /* not learned: its bucket is all pinned (not a drop) */
	DP_L2_PINNED,       /* the source MAC is pinned (or sticky) to another port: drop */
	DP_L2_VLAN,         /* tagged with a VLAN id other than 0: drop */
};
/* clang-format on */

/* A fresh table; secret seeds the hash (the box draws it at random); cap and
 * age 0 take the defaults; pin_cap, pinned entries a port may hold, 0: port_cap. */
void dp_l2_init(struct dp_l2 *t, uint32_t secret, uint32_t port_cap, uint32_t age_s,
		uint32_t pin_cap);
/* Whether frame (len bytes) is tagged with a VLAN id other than 0: the box
 * switches one VLAN, and dp_l2_learn refuses such a frame (DP_L2_VLAN). */
static inline bool dp_l2_vlan_other(const uint8_t *frame, uint32_t len)
{
	return len >= 16 && (frame[12] << 8 | frame[13]) == 0x8100 &&
	       ((frame[14] << 8 | frame[15]) & 0x0FFF) != 0;
}

/*
 * Learn the source of frame (len bytes, at least an Ethernet header) that
 * arrived on port at tick now.  Group and zero source addresses are not
 * learned.  Any lcore.
 */
enum dp_l2_verdict dp_l2_learn(struct dp_l2 *t, const uint8_t *frame, uint32_t len,
			       uint16_t port, uint32_t now);
/* The port behind mac at tick now (pinned, or learned and not aged), or DP_L2_NONE. */
uint16_t dp_l2_lookup(const struct dp_l2 *t, const uint8_t mac[6], uint32_t now);
/*
 * Pin mac where it was learned, for owner (control side, one caller at a
 * time): 0 with *port; -ENOENT when it is not learned (or aged) and could
 * be; -ENOSPC when its bucket holds DP_L2_WAYS other pinned MACs (learned or
 * not: it could never be pinned, nor learned); -EACCES when another owner's
 * jobs pin it; -EDQUOT when its port holds pin_cap pinned entries.  A static
 * entry takes every owner's pin.  Pins are counted: each needs its unpin.
 */
int dp_l2_pin(struct dp_l2 *t, const uint8_t mac[6], uint32_t now, uint16_t owner, uint16_t *port);
/*
 * The operator's entry: mac on port for good (control side, before the
 * workers run or under the control lock): 0, -EINVAL for a group or zero
 * MAC or a port out of range, -EEXIST when mac is static on another port,
 * -ENOSPC when its bucket holds DP_L2_WAYS static or pinned MACs.
 */
int dp_l2_static(struct dp_l2 *t, const uint8_t mac[6], uint16_t port, uint32_t now);
/*
 * The operator takes back a static entry (control side, under the control
 * lock): a learned entry again, seen now.  0, -ENOENT when mac is not
 * static, -EBUSY when jobs pin it too (*jobs_pins of them, when not NULL).
 */
int dp_l2_unstatic(struct dp_l2 *t, const uint8_t mac[6], uint32_t now, unsigned *job_pins);
/* fn(arg, mac, port, the jobs' pins on it) for every static entry. */
void dp_l2_static_each(const struct dp_l2 *t,
		       void (*fn)(void *arg, const uint8_t mac[6], uint16_t port, unsigned job_pins),
		       void *arg);
/* Drop one pin of mac; the last makes it a learned entry again, seen now. */
void dp_l2_unpin(struct dp_l2 *t, const uint8_t mac[6], uint32_t now);
/* Free the aged entries of the next n buckets (one lcore calls it); how many. */
unsigned dp_l2_sweep(struct dp_l2 *t, uint32_t now, unsigned n);
/* Learned (not pinned) entries of port, pinned entries of the table (tests, stats). */
uint32_t dp_l2_learned(const struct dp_l2 *t, uint16_t port);
uint32_t dp_l2_pinned(const struct dp_l2 *t);

static inline bool dp_mac_is_group(const uint8_t mac[6]) { return mac[0] & 1; }

#endif /* NR_DP_L2_H */
