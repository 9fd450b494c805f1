/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The aggregation engine: the wire protocol of docs/architecture.md (rules
 * 1-7 and 9), the "sum" step of its data path.
 *
 * It works on packets the wire library has parsed (struct nr_pkt + the frame
 * bytes) and on opaque packet handles (an rte_mbuf in the box, anything in a
 * test).  It needs no port and no EAL.  One engine belongs to one lcore: no
 * function here is thread-safe, none takes a lock.
 *
 * Ownership of an input packet, by the verdict agg_engine_input() returns:
 *   NR_V_FORWARD   not ours (unregistered connection, ACK/NAK/CNP, READ, SEND,
 *                  ...): the caller forwards the frame unchanged.  ACKs of
 *                  registered connections have been snooped first.
 *   NR_V_DROP      the caller frees it; *reason says which counter moved.
 *   NR_V_HELD      the engine keeps the handle and the parse record: the
 *                  caller leaves the record where it is, unchanged, until the
 *                  handle comes back, either through ops.emit or
 *                  ops.emit_slot (a result to transmit, with that record)
 *                  or through ops.free (job
 *                  failed or destroyed).  The box takes records from a
 *                  per-lcore stack (dp_box.h); the engine stores only a
 *                  pointer (copying every record cost it about 6% in
 *                  nr-bench-agg).
 *   NR_V_RESEND    a duplicate of a packet whose result the engine still holds:
 *                  its payload has been overwritten with the stored result (and
 *                  ECN-CE set when due); the caller recomputes the ICRC and
 *                  transmits.
 *
 * Emission: when slot g completes and every earlier slot has been emitted, the
 * engine writes the sum into each connection's own packet g (same headers, same
 * QPN and PSN) and hands it to ops.emit, connections in rank order, slots in g
 * order; or, when the caller sets ops.emit_slot, hands the slot's N packets in
 * one call (the payloads are identical, so their CRC can be shared).  The
 * caller recomputes the ICRC (UDP checksum stays 0) and transmits.
 *
 * Data packets (WRITE on a registered data QPN) of connection i with sequence
 * g = (psn - ipsn_i) mod 2^24, against the occupant of slot(g):
 *   occupant is g:   FILLING  -> add (bit clear) or DUP_DROPPED (bit set)
 *                    COMPLETE -> DUP_DROPPED (its result follows in order)
 *                    EMITTED/RELEASED -> RESEND with the stored result
 *   g already released and slot reused (or before the job's start) -> STALE_DROPPED
 *   g at or past next_release + pool_packets -> OCCUPIED_DROPPED
 *   otherwise the slot is FREE or RELEASED: g takes it.
 * Checks on add: BAD_LEN (0, not a whole number of the job's elements, over the MTU), then against
 * the slot's first contribution OPCODE_MISMATCH, LEN_MISMATCH (job flagged:
 * reason set, still active), TAG_MISMATCH (ImmDt differs: the job fails).
 * ACKs (AETH on the sender's QPN) acknowledge g and everything before; a NAK
 * sequence error at PSN p acknowledges up to p - 1; RNR and other NAKs
 * acknowledge nothing (a selective job's receiver's selective NAK, which
 * names results it lost, neither: the monitor resends those or forwards
 * it); an ACK beyond what was emitted or before the connection's mark is
 * ACK_IGNORED.  The status monitor (agg_nak.h)
 * watches each sender's stream and the receivers' ACKs and NAKs, and sends a
 * sender a NAK on its receiver's behalf when its stream shows a gap
 * (ops.send).  A slot is released once every
 * connection's mark covers it.  Hosts must respect the credit window W:
 * then no occupied-slot drop happens and no sender ever finds the slot of a
 * packet it has not seen ACKed reused (a host that oversends can stall and
 * the job then fails by progress timeout).
 * Time (now_ns) matters for the progress timeout and the monitor's re-arms.
 */
#ifndef NR_AGG_ENGINE_H
#define NR_AGG_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/engine/agg_sum.h"
#include "proto/nr_job.h"
#include "proto/roce_pkt.h"

enum agg_verdict {
	NR_V_FORWARD = 0,
	NR_V_DROP = 1,
	NR_V_HELD = 2,
	NR_V_RESEND = 3,
};

/* What ops.emit gets with each result packet. */
struct agg_emit {
	void *handle;          /* the connection's own packet g, payload = sum */
	uint8_t *frame;        /* its bytes (as given to agg_engine_input) */
	const struct nr_pkt *pkt; /* its parse record, as given to agg_engine_input
				   * (imm = the result's ImmDt when the job has a
				   * result key) */
	uint32_t job;
	uint32_t conn;
	uint32_t g;
	bool ecn_ce;           /* some contribution carried ECN-CE: set it
				  * (nr_frame_set_ce of proto/roce_pkt.h) */
};

/* A packet the engine holds, as ops.emit_slot sees it. */
struct agg_held {
	void *handle;
	uint8_t *frame;
	uint8_t *pay;              /* frame + pkt->pay_off */
	const struct nr_pkt *pkt;  /* its parse record (imm as in struct agg_emit) */
};

/* What ops.emit_slot gets: every result packet of one slot. */
struct agg_emit_slot {
	const struct agg_held *held; /* [n]: connection i's own packet g, payload = sum */
	const uint8_t *sum;        /* the sum itself (len bytes, 64-byte aligned);
				    * valid during the call */
	uint32_t n;
	uint32_t len;              /* payload bytes */
	uint32_t job;
	uint32_t g;
	bool ecn_ce;               /* as in struct agg_emit */
};

struct agg_engine_ops {
	void (*emit)(void *ctx, const struct agg_emit *e);
	/* optional: when set, called once a slot instead of emit n times */
	void (*emit_slot)(void *ctx, const struct agg_emit_slot *s);
	void (*free)(void *ctx, void *handle);
	/*
	 * optional: a frame the engine made (a NAK to a sender on its receiver's
	 * behalf: the status monitor, agg_nak.c), whole and ICRC'd, in a
	 * buffer valid during the call; the caller copies and transmits it.
	 * origin: where the receiver's frames the NAK stands in for came from
	 * (ops.origin of its last ACK).  Without send the monitor only counts.
	 */
	void (*send)(void *ctx, const uint8_t *frame, uint32_t len, uint16_t origin);
	/* optional: where a packet came from (the box: its port), kept for send */
	uint16_t (*origin)(void *ctx, void *handle);
	void *ctx;
};

struct agg_engine;

/* Returns NULL on allocation failure. */
struct agg_engine *agg_engine_create(const struct agg_engine_ops *ops);
void agg_engine_destroy(struct agg_engine *e);   /* frees held handles via ops.free */

/*
 * Add a job of one channel under id (chosen by the caller, unique in this
 * engine).  Returns 0, -EEXIST (id or a connection already registered),
 * -EINVAL (spec invalid, err says which field; or several channels: the
 * caller adds each as a job, nr_job_channel_spec), -ENOMEM.  *credits gets
 * W = pool_msgs / 2.
 */
int agg_engine_job_add(struct agg_engine *e, uint32_t id, const struct nr_job_spec *spec,
		      uint64_t now_ns, uint32_t *credits, char *err, size_t errlen);
/* Remove a job; its held packets go back through ops.free. -ENOENT if unknown. */
int agg_engine_job_del(struct agg_engine *e, uint32_t id);
int agg_engine_job_stats(const struct agg_engine *e, uint32_t id, struct nr_job_stats *st);

/*
 * Offer one parsed NR_PKT_ROCE packet.  The box's loop offers bursts
 * (agg_engine_input_burst below); this one-packet entry is for what takes
 * frames one at a time: the RTL co-simulation (tests/rtl/rtl_pair.c, whose
 * RTL model sees one frame at a time), the control tests' stand-in box and
 * the engine's own tests and fuzzers.  frame is writable (the engine writes
 * results into payloads); so is p, which the engine keeps with a HELD packet
 * (see "Ownership" above) and whose imm it sets to the result's ImmDt.  now_ns is a monotonic clock.  May call ops.emit and
 * ops.free before returning.  *ctr (may be NULL) gets the counter that moved
 * (left untouched when none did).  Decide drop/forward from the verdict only:
 * UNKNOWN_CONN (an RDMA WRITE to an unregistered IP/QPN) and
 * ACKS_SNOOPED/ACK_IGNORED come with NR_V_FORWARD and are not drops; a frame
 * of a registered QP from anyone but its peer (SPOOFED, SPOOFED_SRC,
 * SPOOFED_PKEY), ACK, NAK and RNR NAK included, is dropped.
 * Non-WRITE requests (SEND, READ, atomics) on a registered data QPN are
 * dropped as NOT_WRITE: registered QPs carry aggregation traffic only.
 * RESEND packets already carry the stored result, the result ImmDt and, when
 * a contribution had it, ECN-CE (IP checksum fixed): recompute the ICRC.
 * IPv6 RoCE is forwarded (jobs are IPv4).
 */
enum agg_verdict agg_engine_input(struct agg_engine *e, struct nr_pkt *p, uint8_t *frame,
				void *handle, uint64_t now_ns, enum nr_engine_ctr *ctr);

/*
 * The box's entry (dp_loop.c act_burst: every rx burst and every burst
 * handed over by another lcore): n packets, with the same effect as n calls
 * of agg_engine_input() in order
 * (verdicts[k], and ctrs[k] when ctrs is not NULL, as *ctr there; ctrs[k] is
 * left untouched when no counter moved).  Faster: the lookups of up to
 * NR_ENGINE_BURST packets run before their slot work.  One difference: a
 * job with priority classes (spec prio_classes > 1) emits the slots that
 * became ready during the burst at its end, the jobs whose next slot has the
 * highest class first (a duplicate of such a slot within the burst is
 * dropped as one of a complete slot); jobs without classes emit at once.
 */
#define NR_ENGINE_BURST 32
void agg_engine_input_burst(struct agg_engine *e, struct nr_pkt *const pkts[],
			   uint8_t *const frames[], void *const handles[], unsigned n,
			   uint64_t now_ns, enum agg_verdict verdicts[], enum nr_engine_ctr ctrs[]);

/*
 * Housekeeping: fail jobs without progress for their timeout, send the
 * monitor's re-armed NAKs.  Returns jobs failed.  Call it often (the box:
 * every 64 loop iterations): re-arms are a few round trips.
 */
unsigned agg_engine_poll(struct agg_engine *e, uint64_t now_ns);

/* Engine-wide counters (sum over jobs plus unknown-connection drops). */
void agg_engine_counters(const struct agg_engine *e, uint64_t ctr[NR_ECTR_MAX]);

/* Sum kernels (enum agg_sum_kernel and the kernels' entry points: agg_sum.h). */
int agg_engine_set_kernel(struct agg_engine *e, enum agg_sum_kernel k); /* -ENOTSUP if absent */
const char *agg_engine_kernel_name(const struct agg_engine *e);

#endif /* NR_AGG_ENGINE_H */
