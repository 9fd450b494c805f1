/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-lcore counters of the box (VPP foreach_*_error style): one counter per
 * outcome and per drop reason, generated from X-macro lists of
 * _(ENUM, "name", "unit", "help") that also yield the names shown by
 * telemetry, the control API and --stats-interval, and the metrics' names
 * and help (dp_metrics.c).
 *
 * Accounting (box-wide, summed over lcores), every received frame ends in
 * exactly one bucket:
 *
 *   rx + handoff_in = forwarded + flooded + filtered + handoff_out
 *                   + held + resent + dropped
 *   dropped         = runt + bad_icrc + multiseg + no_record + handoff_full
 *                   + no_route + l2_pinned + vlan_refused + engine_drop
 *                   + malformed (= sum of malformed.<reason>)
 *
 * With a device in the engines' place (--backend rtl) every received frame
 * goes to it, and what it sends is switched or routed as results:
 *
 *   rx              = device_in + dropped (multiseg, device_error, l2_pinned,
 *                     vlan_refused)
 *   device_out      = forwarded + flooded + filtered + results + resent
 *                   + no_route + device_no_mbuf
 *
 * (the device's own counters say what became of each frame it took).
 *
 * held frames later leave as results (results) or are freed when their job
 * fails or is destroyed (freed_held).  Results and flood copies are counted on
 * the TX side: tx + tx_dropped = frames handed to TX queues, and
 *
 *   tx + tx_dropped + result_no_route = forwarded + flooded + flood_copies
 *                                     + results + resent + generated
 *
 * (result_no_route: a result, resend or generated frame that found no port,
 * one-armed without a next hop for the box's MAC, or a box of one port.)
 *
 * Each lcore writes only its own block (plain stores, single writer);
 * readers load the 64-bit words relaxed: a reading is a recent value, never a
 * torn one.
 */
#ifndef NR_DP_CTR_H
#define NR_DP_CTR_H

#include <stdint.h>

#include <rte_common.h>

#include "proto/nr_ctr.h"
#include "proto/nr_job.h"
#include "proto/roce_pkt.h"

/* clang-format off */
#define DP_FOREACH_CTR(_)                                                                           \
	_(DP_CTR_RX, "rx", "frames", "frames received from ports")                                  \
	_(DP_CTR_HANDOFF_IN, "handoff_in", "frames",                                                \
	  "frames handed in by another lcore (job owned here)")                                     \
	_(DP_CTR_FORWARDED, "forwarded", "frames", "frames switched unchanged to one port")         \
	_(DP_CTR_FLOODED, "flooded", "frames",                                                      \
	  "frames flooded to every other port (unknown or group destination)")                      \
	_(DP_CTR_FILTERED, "filtered", "frames",                                                    \
	  "frames whose destination sits on their ingress port (dropped)")                          \
	_(DP_CTR_HANDOFF_OUT, "handoff_out", "frames",                                              \
	  "frames handed to the lcore owning their job")                                            \
	_(DP_CTR_HELD, "held", "frames", "contributions kept by the engine")                        \
	_(DP_CTR_RESENT, "resent", "frames", "duplicates answered with the stored result")          \
	_(DP_CTR_DROPPED, "dropped", "frames", "frames dropped, all reasons")                       \
	_(DP_CTR_RUNT, "runt", "frames", "frames shorter than an Ethernet header (dropped)")        \
	_(DP_CTR_BAD_ICRC, "bad_icrc", "frames",                                                    \
	  "RoCEv2 frames whose ICRC is wrong (corrupted; dropped)")                                 \
	_(DP_CTR_MULTISEG, "multiseg", "frames",                                                    \
	  "multi-segment UDP/4791 frames that could not be linearized (dropped)")                   \
	_(DP_CTR_NO_RECORD, "no_record", "frames",                                                  \
	  "frames received while every parse record was taken by held frames (dropped)")            \
	_(DP_CTR_HANDOFF_FULL, "handoff_full", "frames",                                            \
	  "owner lcore's handoff ring full (dropped)")                                              \
	_(DP_CTR_NO_ROUTE, "no_route", "frames",                                                    \
	  "one-armed: frame for the box's MAC to an IP no job knows (dropped)")                     \
	_(DP_CTR_L2_PINNED, "l2_pinned", "frames",                                                  \
	  "switch mode: frames whose source MAC is pinned (or sticky) to another port (dropped)")   \
	_(DP_CTR_VLAN_REFUSED, "vlan_refused", "frames",                                            \
	  "switch mode: frames tagged with a VLAN id other than 0 (dropped)")                       \
	_(DP_CTR_ENGINE_DROP, "engine_drop", "frames",                                              \
	  "frames the engine dropped (reason in the engine counters)")                              \
	_(DP_CTR_MALFORMED, "malformed", "frames",                                                  \
	  "malformed UDP/4791 frames, all reasons (dropped)")                                       \
	_(DP_CTR_RESULTS, "results", "frames",                                                      \
	  "result frames emitted by the engine (or the device)")                                    \
	_(DP_CTR_FREED_HELD, "freed_held", "frames",                                                \
	  "held frames freed (job failed or destroyed)")                                            \
	_(DP_CTR_ECN_MARKED, "ecn_marked", "frames", "results given ECN-CE from a contribution")    \
	_(DP_CTR_GENERATED, "generated", "frames",                                                  \
	  "frames the engine made (NAKs to senders on their receivers' behalf), to TX")             \
	_(DP_CTR_GENERATED_NOMBUF, "generated_nombuf", "frames",                                    \
	  "frames the engine made that found no free mbuf (lost)")                                  \
	_(DP_CTR_RESULT_NO_ROUTE, "result_no_route", "frames",                                      \
	  "results, resends and generated frames with no port to leave by (lost)")                  \
	_(DP_CTR_FLOOD_COPIES, "flood_copies", "frames", "extra references made to flood a frame")  \
	_(DP_CTR_TX, "tx", "frames", "frames transmitted")                                          \
	_(DP_CTR_TX_DROPPED, "tx_dropped", "frames", "frames the TX queue refused (freed)")         \
	_(DP_CTR_L2_MOVED, "l2_moved", "", "learned MACs that moved to another port")              \
	_(DP_CTR_L2_CAPPED, "l2_capped", "",                                                        \
	  "source MACs not learned: their port holds its cap of learned entries")                  \
	_(DP_CTR_L2_FULL, "l2_full", "", "source MACs not learned: their bucket is all pinned")   \
	_(DP_CTR_L2_AGED, "l2_aged", "", "learned entries freed after their ageing time")          \
	_(DP_CTR_CMDS, "cmds", "", "control commands served")                                       \
	_(DP_CTR_IDLE_SLEEPS, "idle_sleeps", "", "short sleeps after a stretch of empty polls")     \
	_(DP_CTR_BUSY_CYCLES, "busy_cycles", "cycles",                                              \
	  "TSC cycles spent in loop iterations that found work")                                    \
	_(DP_CTR_DEV_IN, "device_in", "frames", "--backend rtl: frames handed to the device")       \
	_(DP_CTR_DEV_ERROR, "device_error", "frames",                                               \
	  "--backend rtl: frames the device did not take (dropped)")                                \
	_(DP_CTR_DEV_OUT, "device_out", "frames", "--backend rtl: frames the device sent")          \
	_(DP_CTR_DEV_NO_MBUF, "device_no_mbuf", "frames",                                           \
	  "--backend rtl: frames of the device lost for want of an mbuf")
/* clang-format on */

/* Short names for the malformed reasons ("trunc_l3"), for counter names. */
extern const char *const dp_malformed_names[NR_BAD_MAX];

enum dp_ctr_id { DP_FOREACH_CTR(NR_CTR_ENUM) DP_CTR_MAX };

/* Each counter's name, what it counts ("frames", "cycles"; "" events) and meaning. */
extern const char *const dp_ctr_names[DP_CTR_MAX];
extern const char *const dp_ctr_units[DP_CTR_MAX];
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

#endif /* NR_DP_CTR_H */
