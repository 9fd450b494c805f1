/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-lcore counters of the box (VPP foreach_*_error style): one counter per
 * outcome and per drop reason, generated from X-macro lists that also yield
 * the names shown by telemetry, the control API and --stats-interval.
 *
 * Accounting (box-wide, summed over lcores), every received frame ends in
 * exactly one bucket:
 *
 *   rx + handoff_in = forwarded + flooded + filtered + handoff_out
 *                   + held + resent + dropped
 *   dropped         = runt + bad_icrc + multiseg + no_record + handoff_full
 *                   + no_route + engine_drop + malformed (= sum of malformed.<reason>)
 *
 * held frames later leave as results (results) or are freed when their job
 * fails or is destroyed (freed_held).  Results and flood copies are counted on
 * the TX side: tx + tx_dropped = frames handed to TX queues.
 *
 * Each lcore writes only its own block (plain stores, single writer);
 * readers load the 64-bit words relaxed: a reading is a recent value, never a
 * torn one.
 */
#ifndef NR_DP_CTR_H
#define NR_DP_CTR_H

#include <stdint.h>

#include <rte_common.h>

#include "proto/nr_job.h"
#include "proto/roce_pkt.h"

#define DP_FOREACH_CTR(_)                                                     \
	_(RX, "rx", "frames received from ports")                             \
	_(HANDOFF_IN, "handoff_in", "frames handed in by another lcore (job owned here)") \
	_(FORWARDED, "forwarded", "frames switched unchanged to one port")    \
	_(FLOODED, "flooded", "frames flooded to every other port (unknown or group destination)") \
	_(FILTERED, "filtered", "frames whose destination sits on their ingress port (dropped)") \
	_(HANDOFF_OUT, "handoff_out", "frames handed to the lcore owning their job") \
	_(HELD, "held", "contributions kept by the engine")                   \
	_(RESENT, "resent", "duplicates answered with the stored result")    \
	_(DROPPED, "dropped", "frames dropped, all reasons")                  \
	_(RUNT, "runt", "frames shorter than an Ethernet header (dropped)") \
	_(BAD_ICRC, "bad_icrc", "RoCEv2 frames whose ICRC is wrong (corrupted; dropped)") \
	_(MULTISEG, "multiseg", "multi-segment UDP/4791 frames that could not be linearized (dropped)") \
	_(NO_RECORD, "no_record", "frames received while every parse record was taken by held frames (dropped)") \
	_(HANDOFF_FULL, "handoff_full", "owner lcore's handoff ring full (dropped)") \
	_(NO_ROUTE, "no_route", "one-armed: frame for the box's MAC to an IP no job knows (dropped)") \
	_(ENGINE_DROP, "engine_drop", "frames the engine dropped (reason in the engine counters)") \
	_(MALFORMED, "malformed", "malformed UDP/4791 frames, all reasons (dropped)") \
	_(RESULTS, "results", "result frames emitted by the engine")           \
	_(FREED_HELD, "freed_held", "held frames freed (job failed or destroyed)") \
	_(ECN_MARKED, "ecn_marked", "results given ECN-CE from a contribution") \
	_(FLOOD_COPIES, "flood_copies", "extra references made to flood a frame") \
	_(TX, "tx", "frames transmitted")                                     \
	_(TX_DROPPED, "tx_dropped", "frames the TX queue refused (freed)")     \
	_(CMDS, "cmds", "control commands served")                            \
	_(IDLE_SLEEPS, "idle_sleeps", "short sleeps after a stretch of empty polls") \
	_(BUSY_CYCLES, "busy_cycles", "TSC cycles spent in loop iterations that found work")

enum dp_ctr_id {
#define DP_CTR_ENUM(e, n, d) DP_CTR_##e,
	DP_FOREACH_CTR(DP_CTR_ENUM)
#undef DP_CTR_ENUM
	DP_CTR_MAX
};

extern const char *const dp_ctr_names[DP_CTR_MAX];
extern const char *const dp_ctr_help[DP_CTR_MAX];

/* One lcore's counters, alone on its cache lines. */
struct dp_ctr {
	uint64_t c[DP_CTR_MAX];
	uint64_t malformed[NR_BAD_MAX];      /* by enum nr_malformed */
	uint64_t engine_drop[NR_ECTR_MAX];   /* NR_V_DROP verdicts by engine counter */
} __rte_cache_aligned;

/* Relaxed snapshot of another lcore's block. */
static inline void dp_ctr_read(const struct dp_ctr *src, struct dp_ctr *dst)
{
	for (unsigned i = 0; i < DP_CTR_MAX; i++)
		dst->c[i] = __atomic_load_n(&src->c[i], __ATOMIC_RELAXED);
	for (unsigned i = 0; i < NR_BAD_MAX; i++)
		dst->malformed[i] = __atomic_load_n(&src->malformed[i], __ATOMIC_RELAXED);
	for (unsigned i = 0; i < NR_ECTR_MAX; i++)
		dst->engine_drop[i] = __atomic_load_n(&src->engine_drop[i], __ATOMIC_RELAXED);
}

static inline void dp_ctr_add(struct dp_ctr *sum, const struct dp_ctr *x)
{
	for (unsigned i = 0; i < DP_CTR_MAX; i++)
		sum->c[i] += x->c[i];
	for (unsigned i = 0; i < NR_BAD_MAX; i++)
		sum->malformed[i] += x->malformed[i];
	for (unsigned i = 0; i < NR_ECTR_MAX; i++)
		sum->engine_drop[i] += x->engine_drop[i];
}

/* Short names for the malformed reasons ("trunc_l3"), for counter names. */
extern const char *const dp_malformed_names[NR_BAD_MAX];

#endif /* NR_DP_CTR_H */
