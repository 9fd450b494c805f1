/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The job contract: what a job is (struct nr_job_spec, as job_create of
 * control/PROTOCOL.md carries it), the limits and validation every backend
 * shares, and what every backend reports about a job (struct nr_job_stats:
 * state, progress and the per-job counters of the aggregation engine, which
 * the sw box, the FPGA and the RTL all count the same way).  The control API
 * speaks it to its backends; the engine runs it.  No DPDK, no engine.
 *
 * Addresses are IPv4 in network order, as the wire carries them.
 */
#ifndef NR_JOB_H
#define NR_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "proto/nr_ctr.h"
#include "proto/nr_elem.h"

#define NR_MAX_CONNS     256   /* ranks per job */
#define NR_MAX_CHANNELS  16    /* channels per job */
#define NR_MAX_JOBS      64    /* jobs per engine */
#define NR_MAX_MTU       4096
#define NR_SHORT_PPM_MAX 500000 /* short slots: at most half a message's packets */
#define NR_MAX_SPRAY     64     /* UDP source ports a connection may spray over */
#define NR_MAX_REORDER   1024   /* packets a sprayed stream may arrive out of order */
#define NR_MAX_CLASSES   4      /* tolerant priority classes (prio_classes) */

enum nr_sum_mode {
	NR_SUM_ORDERED = 0,    /* keep the N contributions, sum in rank order at completion */
	NR_SUM_STREAMING = 1,  /* accumulate on arrival (order-dependent rounding) */
};

/*
 * What a job's slots compute (docs/architecture.md, "A reduce op"): the
 * element-wise sum or max of the N contributions, or the bitwise OR of their
 * 32-bit words (bor: any bytes come back unchanged where the other ranks send
 * zeros, so an all-gather through the box is byte-exact, -0.0 and signalling
 * NaNs included), by the engine's kernels (dataplane/engine/agg_sum.h).  max
 * and bor take dtype fp32 only (bor: words of 4 bytes, whatever they hold).
 * The FPGA's register map has sum only.
 */
enum nr_reduce_op {
	NR_REDUCE_SUM = 0, /* element-wise sum (16-bit types widened to FP32) */
	NR_REDUCE_MAX = 1, /* element-wise FP32 max, dtype fp32 only */
	NR_REDUCE_BOR = 2, /* OR of 32-bit words, dtype fp32 only: byte-exact all-gather */
	NR_REDUCE_OPS
};

/* "sum", "max", "bor" (the job spec's JSON); NULL for an unknown op. */
const char *nr_reduce_name(unsigned op);

/* The element type of a job's payloads (enum nr_elem_type, proto/nr_elem.h):
 * FP32 summed as it comes, a 16-bit type widened to FP32, summed in FP32 (in
 * rank order in ordered mode, on arrival in streaming mode) and rounded once
 * when the slot is emitted (dataplane/engine/agg_sum.h). */

/* One connection of a job: rank i sends on it to rank (i+1) mod N. */
struct nr_conn_spec {
	uint32_t src_ip;       /* sender (rank i), IPv4 network order */
	uint32_t dst_ip;       /* receiver (rank i+1) */
	uint8_t src_mac[6];    /* optional (all zero: unknown) */
	uint8_t dst_mac[6];
	uint32_t src_qpn;      /* sender's QPN: DestQP of the ACKs it receives */
	uint32_t dst_qpn;      /* receiver's QPN: DestQP of the data packets */
	uint32_t ipsn;         /* sender's initial PSN */
	uint16_t src_sport;    /* UDP source port of the sender's packets (0: unknown) */
	uint16_t dst_sport;    /* UDP source port of the receiver's packets: its ACKs (0: unknown) */
	/* The aggregator's port + 1 the sender's frames (src_) and the receiver's
	 * ACKs (dst_) arrive on; 0: any.  Set by the box from where it learned
	 * the MACs (dataplane/dpdk/dp_jobs.c), never by a job's spec. */
	uint16_t src_ingress;
	uint16_t dst_ingress;
};

/*
 * A job is one or more channels.  A channel is the job's ranks on a set of
 * QPs of their own: its own N connections, initial PSNs, slots, credits and
 * emission order, so it runs as an independent job of the engine; the hosts
 * stripe their messages over the channels, and a box with several workers
 * places each channel on one (docs/architecture.md, "Channels").  Every
 * channel has the job's mtu, msg_size, pool_msgs (each its own pool: credits
 * W per channel), timeout and mode.
 */
struct nr_job_spec {
	uint32_t n_conns;      /* = ranks: connections of each channel, 1..NR_MAX_CONNS */
	uint32_t n_channels;   /* 1..NR_MAX_CHANNELS; 0 reads as 1 */
	uint32_t mtu;          /* path MTU: 256, 512, 1024, 2048 or 4096 */
	uint32_t msg_size;     /* bytes per message, a whole number of elements (dtype) */
	uint32_t pool_msgs;    /* messages of room the box reserves (= 2W), >= 2, even */
	uint32_t timeout_ms;   /* progress timeout */
	uint8_t mode;          /* enum nr_sum_mode */
	uint8_t reduce;        /* enum nr_reduce_op, of every channel */
	uint16_t pkey;         /* the P_Key of every packet of the job (BTH; the low 15
				* bits compared, membership aside); 0 = not checked */
	uint32_t result_key;   /* XORed into the ImmDt of every result; 0 = none */
	/*
	 * Short slots (docs/short-slots.md; DLCP's bounded loss inside RC): a
	 * slot of a message whose first packet carries DSCP short_dscp may be
	 * completed with one sender's contribution missing, at most short_ppm
	 * packets per million packets of that message (at least one packet
	 * for each full 10^6 / short_ppm).  0 = never: every sum is exact.
	 * Messages with any other DSCP are never shortened (must-be-exact).
	 */
	uint32_t short_ppm;    /* 0..NR_SHORT_PPM_MAX */
	uint8_t short_dscp;    /* 0..63 */
	uint8_t short_scale;   /* 1: a short slot's sum scaled by N/(N-1) (sum only); 0: as summed */
	/*
	 * Packet spraying (docs/short-slots.md, "Spraying"): a connection's
	 * packets may leave from spray_ports UDP source ports, src_sport
	 * (dst_sport for the receiver's) and the next ones, over as many ECMP
	 * paths, so they may arrive up to reorder_pkts packets out of order:
	 * a gap in a sender's stream counts as a loss (the monitor's NAK, a
	 * short slot) only when a packet more than reorder_pkts beyond it is in.
	 */
	uint8_t spray_ports;   /* 0 or 1: one port; up to NR_MAX_SPRAY */
	uint8_t dtype;         /* enum nr_elem_type of every payload; msg_size a whole
				* number of elements */
	uint16_t reorder_pkts; /* 0..NR_MAX_REORDER */
	/*
	 * 1: the hosts promise that every rank sends equal messages into a
	 * receive ring laid out alike (the same rkey from message to message,
	 * the same VA step between two messages on every rank), so the box may
	 * complete a slot short whose missing contribution is a message's first
	 * packet, building its RETH from that connection's previous message and
	 * the others' (docs/short-slots.md).  0: never (a box must not write a
	 * guessed address into a host that did not promise the layout).
	 */
	uint8_t short_first;
	/*
	 * Priority classes (docs/short-slots.md, "Priority"): tolerant messages
	 * in prio_classes classes, class c (0: the lowest) marked with DSCP
	 * short_dscp + 8c (AF11, AF21, AF31 ... from AF11), its drop-eligible
	 * packets with that + 2 (AF12, AF22 ...; up to 63); every one of them
	 * is the job's mark of a tolerant message.  A ready slot of a higher
	 * class leaves the box before a lower one's; exact messages (any other
	 * DSCP) above every class.  0 or 1: one class, short_dscp (and + 2).
	 */
	uint8_t prio_classes;
	/*
	 * Loss recovery of the job's requesters (docs/short-slots.md,
	 * "Selective repeat"): 0 go-back-N, as RNICs default to: the box NAKs a
	 * gap with a PSN sequence error NAK, clamped to the receiver's mark.
	 * 1 selective repeat (the soft transport's sr profile): the box NAKs a
	 * gap with a selective NAK naming the missing PSNs alone
	 * (NR_AETH_NAK_SELECTIVE, proto/roce_hdr.h), which acknowledges
	 * nothing, and answers a receiver's selective NAK by resending the
	 * results it names.  Every connection of a job has the job's.
	 */
	uint8_t selective;
	/*
	 * Who registered the job, filled by the control API and never read
	 * from a spec's JSON: 0 the admin, t + 1 tenant t.  A switch-mode box
	 * pins a job's MACs for its owner: another owner's job cannot pin them
	 * (dataplane/dpdk/dp_l2.h, docs/trust.md).
	 */
	uint16_t owner;
	/* nr_job_conns() entries: connection i of channel c at c * n_conns + i */
	struct nr_conn_spec conns[];
};

/* Bytes of a spec of n_conns connections in all: the struct and its conns[]. */
static inline size_t nr_job_spec_size(uint32_t n_conns)
{
	return sizeof(struct nr_job_spec) + (size_t)n_conns * sizeof(struct nr_conn_spec);
}

static inline uint32_t nr_job_channels(const struct nr_job_spec *s)
{
	return s->n_channels ? s->n_channels : 1;
}

/* Connections of every channel. */
static inline uint32_t nr_job_conns(const struct nr_job_spec *s)
{
	return s->n_conns * nr_job_channels(s);
}

/* Bytes of spec s, conns[] included. */
static inline size_t nr_job_spec_bytes(const struct nr_job_spec *s)
{
	return nr_job_spec_size(nr_job_conns(s));
}

/* Connection k of conns[] by name: "conns[2]", or "channels[1].conns[2]" with channels. */
const char *nr_job_conn_name(const struct nr_job_spec *s, uint32_t k, char *buf, size_t len);

/*
 * Channel c of s as a job of one channel into out (nr_job_spec_size(s->n_conns)
 * bytes); NULL-free, never fails for c < nr_job_channels(s).
 */
void nr_job_channel_spec(const struct nr_job_spec *s, uint32_t c, struct nr_job_spec *out);

/* One counter per outcome of the engine, with its name (X-macro). */
/* clang-format off */
#define NR_FOREACH_ENGINE_CTR(_)                                                                \
	_(NR_ECTR_AGGREGATED, "aggregated", "contributions added to a slot")                    \
	_(NR_ECTR_COMPLETED, "completed", "slots whose N contributions are in")                 \
	_(NR_ECTR_EMITTED, "emitted", "result packets handed out")                              \
	_(NR_ECTR_RELEASED, "released", "slots freed after every ACK")                          \
	_(NR_ECTR_DUP_RESENT, "dup_resent", "duplicates answered with the stored result")       \
	_(NR_ECTR_DUP_DROPPED, "dup_dropped", "duplicates of an incomplete slot")               \
	_(NR_ECTR_STALE_DROPPED, "stale_dropped", "packets older than their slot's occupant")   \
	_(NR_ECTR_OCCUPIED_DROPPED, "occupied_dropped", "slot still held by an older sequence") \
	_(NR_ECTR_LEN_MISMATCH, "len_mismatch", "payload length differs from the slot's")       \
	_(NR_ECTR_BAD_LEN, "bad_len", "payload length not a whole number of elements or over the MTU") \
	_(NR_ECTR_OPCODE_MISMATCH, "opcode_mismatch", "opcode differs from the slot's")         \
	_(NR_ECTR_TAG_MISMATCH, "tag_mismatch", "immediate tags of one message disagree")       \
	_(NR_ECTR_UNKNOWN_CONN, "unknown_conn", "data for an unregistered QPN")                 \
	_(NR_ECTR_SPOOFED, "spoofed", "registered QPN from the wrong source IP")                \
	_(NR_ECTR_NOT_WRITE, "not_write", "non-WRITE request on a registered connection")       \
	_(NR_ECTR_JOB_FAILED_DROP, "job_failed_drop", "packets of a failed job")                \
	_(NR_ECTR_ACKS_SNOOPED, "acks_snooped", "ACK/NAK of registered connections")            \
	_(NR_ECTR_ACK_IGNORED, "ack_ignored", "ACKs for PSNs never emitted")                    \
	_(NR_ECTR_JOB_TIMEOUTS, "job_timeouts", "jobs failed for lack of progress")              \
	_(NR_ECTR_NAK_GAP, "nak_gap", "NAKs sent to a sender whose stream has a gap (a selective job's: selective NAKs)") \
	_(NR_ECTR_NAK_REARM, "nak_rearm", "NAKs sent again: a gap not repaired in time (a selective job's: selective NAKs)") \
	_(NR_ECTR_NAK_PROBE, "nak_probe", "sequence NAKs sent to a connection stalled with no gap seen") \
	_(NR_ECTR_NAK_HOLD, "nak_hold", "RNR NAKs holding senders while a slot waits for a late contributor") \
	_(NR_ECTR_ACK_REPEAT, "ack_repeat", "receivers' ACKs of everything emitted repeated to a quiet sender") \
	_(NR_ECTR_NAK_REPAIRED, "nak_repaired", "receivers' sequence NAKs (a selective job's: selective NAKs) the box answered with its stored results") \
	_(NR_ECTR_REPAIR_SENT, "repair_sent", "stored results the box resent for those NAKs")   \
	_(NR_ECTR_ACK_SOLICIT, "ack_solicit", "last results resent with AckReq to a receiver owing an ACK while the job stood still") \
	_(NR_ECTR_SPOOFED_SRC, "spoofed_src", "registered connection's frame from another UDP source port, MAC or box port than registered") \
	_(NR_ECTR_SPOOFED_PKEY, "spoofed_pkey", "registered connection's frame with another P_Key than the job's") \
	_(NR_ECTR_PSN_CONFLICT, "psn_conflict", "a second, different frame for a held contribution's PSN (ordered mode), or a late first packet whose RETH is not the one the box built for it (short_first): the job fails") \
	_(NR_ECTR_SHORT_SLOTS, "short_slots", "slots completed with one contribution missing (short_ppm)") \
	_(NR_ECTR_SHORT_DENIED, "short_denied", "slots that waited for a lost contribution: why in short_why (nr_short_why)")
/* clang-format on */

enum nr_engine_ctr { NR_FOREACH_ENGINE_CTR(NR_CTR_ENUM) NR_ECTR_MAX };

extern const char *const nr_engine_ctr_names[NR_ECTR_MAX];
extern const char *const nr_engine_ctr_help[NR_ECTR_MAX];

/*
 * Why a slot that waited for one lost contribution was not completed short
 * (docs/short-slots.md): each short_denied counts once, under its first
 * reason.  A set of its own: the engine's counters fill the FPGA's job
 * counter block (control/fpga/fpga_regs.h), which has no short slots.
 */
#define NR_FOREACH_SHORT_WHY(_)                                                                 \
	_(NR_SHORT_WHY_EXACT, "exact", "the message is not marked tolerant (must-be-exact)")    \
	_(NR_SHORT_WHY_BOUND, "bound", "the message's bound is spent (a one-packet message has none)") \
	_(NR_SHORT_WHY_NAKED, "naked", "the missing sender was NAKed for the gap already: it goes back anyway") \
	_(NR_SHORT_WHY_NO_TEMPLATE, "no_template", "the box cannot send the missing result (no send, or no packet of that sender yet)") \
	_(NR_SHORT_WHY_FIRST, "first", "a first packet, and the job does not promise the hosts' ring layout (short_first off)") \
	_(NR_SHORT_WHY_FIRST_UNSEEN, "first_unseen", "a first packet whose sender's previous message, or the others' at it, the box did not see") \
	_(NR_SHORT_WHY_FIRST_LAYOUT, "first_layout", "a first packet whose other senders disagree on the length or on the VA step from the previous message") \
	_(NR_SHORT_WHY_FIRST_MARK, "first_mark", "a first packet whose sender's next packet is not in, marked: its mark unknown")

enum nr_short_why { NR_FOREACH_SHORT_WHY(NR_CTR_ENUM) NR_SHORT_WHY_MAX };

extern const char *const nr_short_why_names[NR_SHORT_WHY_MAX];
extern const char *const nr_short_why_help[NR_SHORT_WHY_MAX];

/* The results the status monitor sent again on its own (repairs, solicits):
 * with the box's resends of duplicates, every result a receiver sees twice. */
static inline uint64_t nr_ectr_mon_results(const uint64_t *ctr)
{
	return ctr[NR_ECTR_REPAIR_SENT] + ctr[NR_ECTR_ACK_SOLICIT];
}

enum nr_job_state {
	NR_JOB_ACTIVE = 1,
	NR_JOB_FAILED = 2,
};

/* One channel of a job (state, progress, where it runs). */
struct nr_chan_stats {
	uint8_t state;             /* enum nr_job_state */
	uint16_t worker;           /* the box's worker running it (sw) */
	uint32_t next_emit;
	uint32_t next_release;
	uint64_t completed;
};

/*
 * A job's state and counters, its channels summed: failed when one channel
 * failed (reason: the first one's), next_emit/next_release of channel 0,
 * completed and the counters summed; per channel in ch[] when n_channels > 0
 * (a backend that knows no channels leaves it 0).
 */
struct nr_job_stats {
	uint8_t state;             /* enum nr_job_state */
	char reason[256];          /* why it failed */
	uint32_t next_emit;        /* g of the next slot to emit */
	uint32_t next_release;     /* g of the next slot to release */
	uint64_t completed;        /* slots completed */
	uint32_t slots;            /* slots of its pools (pool packets of every channel) */
	uint32_t slots_busy;       /* of which taken: filling, complete, or emitted and not
				    * yet ACKed by every receiver */
	uint64_t ctr[NR_ECTR_MAX]; /* this job's counters */
	/* short slots: contributions left out, by sender (rank), channels summed */
	uint64_t left_out[NR_MAX_CONNS];
	/* short_denied by reason (enum nr_short_why), channels summed */
	uint64_t short_why[NR_SHORT_WHY_MAX];
	/* short_slots by priority class (prio_classes; 0 the lowest), channels summed */
	uint64_t short_cls[NR_MAX_CLASSES];
	/* contributions whose DSCP marks them tolerant; of them drop-eligible (a
	 * class's + 2: the host library's NR_DE_THRESH); short_slots whose every
	 * contribution was drop-eligible.  Channels summed; the DPDK box's */
	uint64_t tol_pkts, de_pkts, short_de;
	uint32_t n_channels;
	struct nr_chan_stats ch[NR_MAX_CHANNELS];
};

/*
 * Engine memory a job's pool takes per packet of room, besides the result
 * (mtu bytes) and the contributor bitmap (8 bytes per 64 connections): the
 * slot's state, and per connection one held-packet record and the RETH of
 * its packet (what the status monitor's repairs rebuild a first packet
 * with).  A 16-bit job also holds FP32 accumulators (2 x mtu bytes): one
 * per packet of room in streaming mode, one for the job in ordered mode
 * (nr_job_acc_packets).  The engine asserts that its structures have these
 * sizes (agg_internal.h).
 */
#define NR_JOB_SLOT_BYTES 24
#define NR_JOB_HELD_BYTES 32
#define NR_JOB_RETH_BYTES 16

/*
 * Validate a spec without adding it: 0 or -EINVAL with err naming the field
 * ("conns[2].dst_qpn: 0x1000000 is not a 24-bit QPN"; with channels
 * "channels[1].conns[2].dst_qpn: ...").  The pool limit holds per channel;
 * no (IP, QPN) appears twice in the job, whatever its channel and role.
 */
int nr_job_spec_validate(const struct nr_job_spec *spec, char *err, size_t errlen);

/* Packets of pool room a spec asks for, per channel: pool_msgs * ceil(msg_size / mtu). */
uint32_t nr_job_pool_packets(const struct nr_job_spec *spec);
/* FP32 accumulators of 2 x mtu bytes a channel of a 16-bit job holds (0 for FP32). */
uint32_t nr_job_acc_packets(const struct nr_job_spec *spec);
/* Bytes of engine memory a channel's pool takes (validation caps it at 256 MiB). */
uint64_t nr_job_mem_bytes(const struct nr_job_spec *spec);
/*
 * Frames a job can make its aggregator hold at once: every connection's
 * contribution to every slot of its pool (nr_job_conns x pool packets).  The
 * box admits jobs against its mbuf pool by it (a sender that ignores its
 * credits can fill the whole pool, not just the window).
 */
uint64_t nr_job_held_frames(const struct nr_job_spec *spec);
/* Those frames' bytes at the job's MTU: the pool bytes of tenant quotas and
 * of an FPGA's pool (FPGA.md). */
uint64_t nr_job_pool_bytes(const struct nr_job_spec *spec);

#endif /* NR_JOB_H */
