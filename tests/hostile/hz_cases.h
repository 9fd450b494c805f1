/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hostile-traffic cases, written once against a small driver interface so
 * the same cases run on the engine behind a model of the box's loop (unit
 * suite, test_hostile_engine.c) and on the real box on ring ports (eal suite,
 * test_hostile_eal.c).
 *
 * Every case runs a checked workload (hz_traffic.h: 4 ranks, 3 packets a
 * message, PSNs that wrap) with hostile frames mixed in, then asserts:
 *   - every result of the workload arrived, each bit-identical to the
 *     rank-ordered sum, none wrong, and no raw contribution leaked out;
 *   - the frames add up: rx = forwarded + held + resent + dropped, and
 *     dropped = sum of the per-reason drop counters;
 *   - the reason the case is about moved by exactly the frames it sent.
 */
#ifndef NRZ_HZ_CASES_H
#define NRZ_HZ_CASES_H

#include <stdint.h>

#include "hz_traffic.h"

/* Counters of the box, as the driver reads them. */
struct hz_acct {
	uint64_t rx;             /* frames received */
	uint64_t forwarded;      /* left unchanged (switched, flooded or filtered) */
	uint64_t held;           /* taken by the engine */
	uint64_t resent;         /* answered with a stored result */
	uint64_t dropped;        /* every drop */
	uint64_t malformed[NR_BAD_MAX];  /* drops by parser reason */
	uint64_t edrop[NR_ECTR_MAX];     /* drops by engine reason */
	uint64_t other_drop;     /* drops for other reasons (runt, multiseg, l2_pinned ...) */
	uint64_t l2_pinned;      /* of which: source MAC pinned to another port (dp_l2.h) */
	uint64_t vlan_refused;   /* of which: a VLAN id other than 0 */
	uint64_t ectr[NR_ECTR_MAX];      /* the engine's own counters */
};

struct hz_drv {
	const char *name;
	/* a fresh box (counters at zero) / tear it down */
	int (*begin)(void *ctx);
	void (*end)(void *ctx);
	/* register the job; 0 or -errno */
	int (*job_add)(void *ctx, struct hz_job *j);
	/* hand one frame to the box on the port of rank port */
	void (*inject)(void *ctx, unsigned port, const uint8_t *f, uint32_t len);
	/* let the box finish; every frame that left goes through hz_result(j, ...) */
	void (*settle)(void *ctx, struct hz_job *j);
	void (*acct)(void *ctx, struct hz_acct *a);
	uint32_t max_frame;      /* longest frame the driver can inject */
	/*
	 * The box's L2 table in switch mode (dp_l2.h): job_add pins each rank's
	 * MAC to its port, and a frame claiming one from another port is dropped
	 * before it is parsed (l2_pinned), as is one with a VLAN id other than 0
	 * (vlan_refused).  Frames longer than seg arrive as mbuf chains, which
	 * reach that check only when their first segment is not RoCEv2.
	 */
	bool l2_pins;
	uint32_t seg;
	uint32_t (*ip_of)(unsigned r);
	void (*mac_of)(unsigned r, uint8_t mac[6]);
	void *ctx;
};

void hz_case_lengths(struct hz_drv *d);
void hz_case_bad_headers(struct hz_drv *d);
void hz_case_pad_and_reth(struct hz_drv *d);
void hz_case_unknown_opcodes(struct hz_drv *d);
void hz_case_nan_inf(struct hz_drv *d);
void hz_case_unknown_qpn_flood(struct hz_drv *d);
void hz_case_spoofed(struct hz_drv *d);
void hz_case_forged(struct hz_drv *d);
void hz_case_duplicates(struct hz_drv *d);
void hz_case_acks_never_sent(struct hz_drv *d);
void hz_case_bad_icrc(struct hz_drv *d);

#endif /* NRZ_HZ_CASES_H */
