/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-packet path of the aggregation engine (the wire protocol of
 * docs/architecture.md):
 * classify against the registered connections, admit a contribution to its
 * slot (bitmap, length, opcode and tag checks), sum (ordered or streaming),
 * emit completed slots in sequence order, snoop ACKs/NAKs and release slots;
 * each data packet and ACK of a registered connection is shown to the status
 * monitor (agg_nak.c), which NAKs a sender on its receiver's behalf.
 *
 * Verdicts for packets that reach a registered connection:
 *   data side (daddr, qpn) = (conns[i].dst_ip, conns[i].dst_qpn), any frame:
 *     source IP != conns[i].src_ip          -> DROP SPOOFED (never aggregated,
 *                                              never forwarded)
 *     UDP source port (or ports: spray_ports) or source MAC not the registered
 *     one (where registered), or another box port than the bound one
 *                                           -> DROP SPOOFED_SRC
 *     (a sprayed connection's packet is given its registered source port:
 *     its result leaves from that one, spray_home; the monitor keeps which
 *     port it came from, agg_mon_lost)
 *     P_Key not the job's (where the job has one) -> DROP SPOOFED_PKEY
 *     a response (ACK, NAK, atomic ACK, READ response) from the sender
 *                                           -> FORWARD, untouched: an RC QP is a
 *        requester as well as a responder, and a response its peer addresses
 *        to it answers a request it sent.  Dropping it would leave that
 *        request to the requester's retry timer and, when retries run out,
 *        move the QP to the error state.  A response carries nothing the box
 *        sums and writes no unrequested bytes into the receiver's memory.
 *     job failed                            -> DROP JOB_FAILED_DROP
 *     a request that is not an RC RDMA WRITE (SEND, READ, atomics ...)
 *                                           -> DROP NOT_WRITE: a registered QP
 *        carries aggregation traffic only (docs/architecture.md, "Topology
 *        and connections"), and forwarding
 *        it raw could let a receiver see unaggregated bytes.
 *     WRITE                                 -> HELD / DROP / RESEND (see below)
 *   ACK side (daddr, qpn) = (conns[i].src_ip, conns[i].src_qpn), any frame:
 *     one whose source is not conns[i].dst_ip (SPOOFED), or from another UDP
 *     source port, MAC or box port than the receiver's registered ones
 *     (SPOOFED_SRC), or with another P_Key (SPOOFED_PKEY), is forged: DROP,
 *     never snooped, never forwarded.  A forged NAK or RNR NAK that reached
 *     the sender would send its QP back or hold it, and one with an error
 *     syndrome would move it to the error state: the job's own receiver is
 *     the only peer of that QP (docs/trust.md).  The others: packets with an
 *     AETH are snooped (ACKS_SNOOPED or ACK_IGNORED), then FORWARD, except a
 *     receiver's sequence NAK, or a selective job's receiver's selective
 *     NAK, that the status monitor answered with the stored results itself
 *     (NAK_REPAIRED, DROP: agg_nak.c, repair); everything else FORWARD
 *     untouched.
 *   Ordered mode: a duplicate of a contribution the box still holds (slot
 *   filling or complete) that differs from it (payload, length, opcode or
 *   immediate): two frames claim one connection and PSN and the box cannot
 *   tell which is genuine -> DROP PSN_CONFLICT and the job fails, naming the
 *   connection: its sum is never delivered as a right one.  (Streaming mode
 *   has added the first on arrival: not compared, as in the RTL.)
 *   anything else -> FORWARD.  An RDMA WRITE to an unregistered (IP, QPN)
 *     bumps UNKNOWN_CONN (engine-wide): informational, the packet is
 *     forwarded, it is not a drop.
 */
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "dataplane/engine/agg_internal.h"
#include "dataplane/engine/agg_nak.h"
#include "dataplane/engine/agg_short.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

static inline bool op_is_rc_write(uint8_t op)
{
	return op >= NR_OP_RC_WRITE_FIRST && op <= NR_OP_RC_WRITE_ONLY_IMM;
}

static inline bool op_has_imm(uint8_t op)
{
	return op == NR_OP_RC_WRITE_LAST_IMM || op == NR_OP_RC_WRITE_ONLY_IMM;
}

static inline const struct agg_lkp *lkp_find(const struct agg_engine *e, uint32_t daddr,
					    uint32_t qpn)
{
	uint32_t h = agg_lkp_hash(daddr, qpn) & e->lkp_mask;

	for (;;) {
		const struct agg_lkp *l = &e->lkp[h];

		if (l->job == NR_LKP_EMPTY)
			return NULL;
		if (l->daddr == daddr && (l->qpn & NR_BTH_QPN_MASK) == qpn)
			return l;
		h = (h + 1) & e->lkp_mask;
	}
}

/* ImmDt is the last extension header before the payload (WRITE_LAST_IMM, ONLY_IMM). */
static inline void frame_set_imm(uint8_t *frame, const struct nr_pkt *p, uint32_t imm)
{
	nr_st_be32(frame + p->pay_off - 4, imm);
}

static inline enum agg_verdict count(struct agg_job *j, enum nr_engine_ctr c,
				    enum nr_engine_ctr *out, enum agg_verdict v)
{
	j->ctr[c]++;
	if (out)
		*out = c;
	return v;
}

static inline uint64_t mac48(const uint8_t *m)
{
	uint64_t v = 0;

	memcpy(&v, m, 6);
	return v;
}

/*
 * What the sender sets and the registration fixed beyond its IP: the UDP
 * source port and source MAC of connection c's data (ack: of its receiver's
 * ACKs), where registered (0: unknown), the port it arrives on where the box
 * bound one (ops.origin), and the job's P_Key.  NR_ECTR_MAX when the frame
 * agrees, else the counter naming what it got wrong.
 */
static inline enum nr_engine_ctr unbound(const struct agg_engine *e, const struct agg_job *j,
					 const struct nr_conn_spec *c, const struct nr_pkt *p,
					 const uint8_t *frame, void *handle, bool ack)
{
	uint16_t sport = ack ? c->dst_sport : c->src_sport;
	uint16_t in = ack ? c->dst_ingress : c->src_ingress;
	uint64_t mac = mac48(ack ? c->dst_mac : c->src_mac);

	/* a sprayed connection's ports: sport and the next j->spray - 1 */
	if ((sport && (uint16_t)(p->udp_sport - sport) >= j->spray) ||
	    (mac && mac48(frame + NR_ETH_ALEN) != mac))   /* Ethernet source */
		return NR_ECTR_SPOOFED_SRC;
	if (in && e->ops.origin && e->ops.origin(e->ops.ctx, handle) != in - 1)
		return NR_ECTR_SPOOFED_SRC;    /* the right MAC from another port */
	if (j->pkey && ((nr_ld_be16(frame + p->bth_off + 2) ^ j->pkey) & 0x7fff))
		return NR_ECTR_SPOOFED_PKEY;
	return NR_ECTR_MAX;
}

/*
 * A sprayed connection's data packet (spray_ports > 1) leaves the box from
 * its registered source port, whichever of its ports it came from: the
 * results to a receiver (this frame with the sum) then hash onto one path
 * and arrive in order, as an RC responder needs; the ICRC's kept head no
 * longer holds (the port is not masked).
 */
static inline void spray_home(const struct nr_conn_spec *c, struct nr_pkt *p, uint8_t *frame)
{
	if (!c->src_sport || p->udp_sport == c->src_sport)
		return;
	nr_st_be16(frame + p->l4_off, c->src_sport);
	p->udp_sport = c->src_sport;
	p->icrc_head_ok = 0;
}

/* ---- ACK snooping and release -------------------------------------------- */

static void job_release(struct agg_job *j)
{
	uint64_t low = j->next_emit;

	for (uint32_t i = 0; i < j->n; i++)
		if (j->acked[i] < low)
			low = j->acked[i];
	while (j->next_release < low) {
		j->slots[j->rel_slot].state = NR_SLOT_RELEASED;
		j->ctr[NR_ECTR_RELEASED]++;
		j->next_release++;
		if (++j->rel_slot == j->pool)
			j->rel_slot = 0;
	}
}

/*
 * A selective job's receiver i NAKed selectively at g (its MSN field: how
 * many in a row): those results were lost on their way to it.  It
 * acknowledges nothing, so no mark moves; the monitor resends them itself
 * when it holds them all (dropped as a repaired NAK), else the sender gets
 * it and resends those packets, answered with the stored results.
 */
static enum agg_verdict snoop_sel_nak(struct agg_engine *e, struct agg_job *j, uint32_t i,
				      uint32_t g, const struct nr_pkt *p, uint64_t now_ns,
				      enum nr_engine_ctr *ctr)
{
	uint64_t q = j->acked[i] + (int64_t)nr_psn_diff(g, (uint32_t)(j->acked[i] & NR_PSN_MASK));

	if (agg_mon_sel_repair(e, j, i, q, nr_sel_nak_run(p->aeth_msn), now_ns))
		return count(j, NR_ECTR_NAK_REPAIRED, ctr, NR_V_DROP);
	return count(j, NR_ECTR_ACKS_SNOOPED, ctr, NR_V_FORWARD);
}

static enum agg_verdict snoop_ack(struct agg_engine *e, struct agg_job *j, uint32_t i,
				 const struct nr_pkt *p, const uint8_t *frame, void *handle,
				 uint64_t now_ns, enum nr_engine_ctr *ctr)
{
	uint32_t g = nr_psn_sub(p->psn, j->conns[i].ipsn);
	uint64_t mark, old = j->acked[i];
	int32_t d;

	if (nr_syn_is_ack(p->aeth_syn))
		g = nr_psn_add(g, 1);           /* acknowledges g and everything before */
	else if (p->aeth_syn == NR_AETH_NAK_SELECTIVE && j->selective)
		return snoop_sel_nak(e, j, i, g, p, now_ns, ctr);
	else if (p->aeth_syn != NR_AETH_NAK_PSN_SEQ_ERR)
		return count(j, NR_ECTR_ACKS_SNOOPED, ctr, NR_V_FORWARD); /* RNR, errors */
	/* mark = first sequence not acknowledged; must lie in [acked_i, next_emit] */
	d = nr_psn_diff(g, (uint32_t)(old & NR_PSN_MASK));
	mark = old + (int64_t)d;
	if (d < 0 || mark > j->next_emit)
		return count(j, NR_ECTR_ACK_IGNORED, ctr, NR_V_FORWARD);
	if (mark > old) {
		j->acked[i] = mark;
		j->last_progress_ns = now_ns;
		if (old == j->next_release)
			job_release(j);
	}
	agg_mon_ack(e, j, i, frame, p, handle, mark > old, now_ns);
	/* a result lost on its way to the receiver: the box resends it itself */
	if (p->aeth_syn == NR_AETH_NAK_PSN_SEQ_ERR && agg_mon_repair(e, j, i, now_ns))
		return count(j, NR_ECTR_NAK_REPAIRED, ctr, NR_V_DROP);
	return count(j, NR_ECTR_ACKS_SNOOPED, ctr, NR_V_FORWARD);
}

/* ---- contributions --------------------------------------------------------------- */

__attribute__((noinline, cold))
static void flag_len(struct agg_job *j, uint32_t i, uint64_t x, uint32_t len, uint32_t want)
{
	char c[96];

	if (j->reason[0])
		return;
	agg_conn_describe(j, i, c, sizeof(c));
	snprintf(j->reason, sizeof(j->reason), "job %u: %s: payload %u bytes at g=%u, others %u",
		 j->id, c, len, (uint32_t)(x & NR_PSN_MASK), want);
	j->flagged = 1;
}

__attribute__((noinline, cold))
static void fail_tag(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t x,
		     uint32_t imm, const struct agg_slot *s)
{
	char c[96];

	agg_conn_describe(j, i, c, sizeof(c));
	agg_job_fail(e, j, "%s: immediate 0x%08x at g=%u, connection %u sent 0x%08x (hosts out of step)",
		    c, imm, (uint32_t)(x & NR_PSN_MASK), s->tag_conn, s->tag);
}

__attribute__((noinline, cold))
static enum agg_verdict conflict(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t x,
				const struct nr_pkt *p, enum nr_engine_ctr *ctr)
{
	char c[96];

	agg_conn_describe(j, i, c, sizeof(c));
	j->ctr[NR_ECTR_PSN_CONFLICT]++;
	if (ctr)
		*ctr = NR_ECTR_PSN_CONFLICT;
	agg_job_fail(e, j, "%s: two different frames for g=%u (PSN 0x%06x): a forged or corrupted "
		    "contribution, the slot's sum cannot be trusted", c, (uint32_t)(x & NR_PSN_MASK),
		    p->psn);
	return NR_V_DROP;
}

/* A duplicate of contribution i to a slot the box still holds (filling or
 * complete): the same frame again (a retransmission) or a different one.
 * Only ordered mode keeps each contribution as it came. */
static inline bool same_contribution(const struct agg_job *j, const struct agg_slot *s, uint32_t si,
				     uint32_t i, const struct nr_pkt *p, const uint8_t *frame)
{
	const struct agg_held *h = &j->held[(size_t)si * j->n + i];

	return j->mode != NR_SUM_ORDERED || (p->opcode == s->opcode && p->pay_len == s->len &&
	       (!s->has_tag || p->imm == s->tag) &&
	       !memcmp(frame + p->pay_off, h->pay, p->pay_len));
}

/*
 * A late first packet of connection i to emitted slot x (a job with
 * short_first): kept for the next message's lost first packet, and, when
 * its slot went out short without it, checked against the RETH the box
 * built for its receiver.  A different one means the hosts broke the
 * layout they promised and the box wrote a result where the receiver did
 * not expect it: the job fails (PSN_CONFLICT).  Whether it may go on.
 */
__attribute__((noinline, cold))
static bool late_first(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t x,
		       uint32_t si, const struct nr_pkt *p, enum nr_engine_ctr *ctr)
{
	const struct agg_slot_reth *r = &j->reth[(size_t)si * j->n + i];
	char c[96];

	if (r->va == p->reth_va && r->rkey == p->reth_rkey && r->len == p->reth_len) {
		agg_short_first_seen(j, i, x, p);
		return true;
	}
	agg_conn_describe(j, i, c, sizeof(c));
	count(j, NR_ECTR_PSN_CONFLICT, ctr, NR_V_DROP);
	agg_job_fail(e, j, "%s: late first packet at g=%u: RETH va 0x%llx rkey 0x%x len %u, the "
		    "box built va 0x%llx rkey 0x%x len %u (short_first: rings not laid out alike)",
		    c, (uint32_t)(x & NR_PSN_MASK), (unsigned long long)p->reth_va, p->reth_rkey,
		    p->reth_len, (unsigned long long)r->va, r->rkey, r->len);
	return false;
}

/* A duplicate of an emitted slot: answer with the stored result. */
static enum agg_verdict resend(struct agg_job *j, struct agg_slot *s, uint32_t si,
			      const struct nr_pkt *p, uint8_t *frame, enum nr_engine_ctr *ctr)
{
	if (p->opcode != s->opcode)
		return count(j, NR_ECTR_OPCODE_MISMATCH, ctr, NR_V_DROP);
	if (p->pay_len != s->len)
		return count(j, NR_ECTR_LEN_MISMATCH, ctr, NR_V_DROP);
	memcpy(frame + p->pay_off, j->results + (size_t)si * j->mtu, s->len);
	if (s->has_tag)
		frame_set_imm(frame, p, s->tag ^ j->result_key);
	if (s->ecn_ce)
		nr_frame_set_ce(frame, p);
	return count(j, NR_ECTR_DUP_RESENT, ctr, NR_V_RESEND);
}

/*
 * Priority classes (spec prio_classes): inside a burst, a job with classes
 * whose next slot is ready waits on the engine's ready list; at the burst's
 * end (emit_deferred) the ready jobs emit, the highest class of their next
 * slot first.  A job without classes emits at once.
 */
static inline void defer_ready(struct agg_engine *e, struct agg_job *j)
{
	if (!j->ready) {
		j->ready = 1;
		e->ready[e->nready++] = j;
	}
}

static uint8_t ready_cls(const struct agg_job *j)
{
	return j->slots[j->emit_slot].cls;
}

__attribute__((noinline))
static void emit_deferred(struct agg_engine *e, uint64_t now_ns)
{
	unsigned n = 0;

	/* a job a later frame of the burst failed has no slots left: out first */
	for (unsigned a = 0; a < e->nready; a++) {
		struct agg_job *j = e->ready[a];

		if (j->state == NR_JOB_ACTIVE)
			e->ready[n++] = j;
		else
			j->ready = 0;
	}
	/* insertion sort, highest class first; a stable order among equals */
	for (unsigned a = 1; a < n; a++) {
		struct agg_job *j = e->ready[a];
		unsigned b = a;

		for (; b > 0 && ready_cls(e->ready[b - 1]) < ready_cls(j); b--)
			e->ready[b] = e->ready[b - 1];
		e->ready[b] = j;
	}
	for (unsigned a = 0; a < n; a++) {
		struct agg_job *j = e->ready[a];

		j->ready = 0;
		if (j->state != NR_JOB_ACTIVE)
			continue;
		agg_job_emit_ready(e, j);
		j->emit_ns = now_ns;
		if (j->short_ppm)
			agg_short_input(e, j, now_ns);
	}
	e->nready = 0;
}

static enum agg_verdict contribute(struct agg_engine *e, struct agg_job *j, uint32_t i,
				  uint64_t x, uint32_t si, struct nr_pkt *p,
				  uint8_t *frame, void *handle, uint64_t now_ns,
				  enum nr_engine_ctr *ctr)
{
	struct agg_slot *s = &j->slots[si];
	uint64_t *bits = &j->bits[(size_t)si * j->words];
	struct agg_held *hk = &j->held[(size_t)si * j->n + i];
	uint8_t *pay = frame + p->pay_off;
	uint8_t *res = j->results + (size_t)si * j->mtu;

	if (s->state != NR_SLOT_FILLING || s->x != x) {
		/* take the slot for x */
		s->x = x;
		s->state = NR_SLOT_FILLING;
		s->opcode = p->opcode;
		s->has_tag = op_has_imm(p->opcode);
		s->tag = p->imm;
		s->tag_conn = i;
		s->len = p->pay_len;
		s->count = 0;
		s->ecn_ce = 0;
		s->tolerant = 1;
		s->de = 1;
		s->cls = j->dscp_cls[frame[p->l3_off + 1] >> 2];
		for (uint32_t w = 0; w < j->words; w++)
			bits[w] = 0;
		j->busy++;
	} else {
		if (unlikely(p->opcode != s->opcode))
			return count(j, NR_ECTR_OPCODE_MISMATCH, ctr, NR_V_DROP);
		if (unlikely(p->pay_len != s->len)) {
			flag_len(j, i, x, p->pay_len, s->len);
			return count(j, NR_ECTR_LEN_MISMATCH, ctr, NR_V_DROP);
		}
		if (unlikely(s->has_tag && p->imm != s->tag)) {
			j->ctr[NR_ECTR_TAG_MISMATCH]++;
			if (ctr)
				*ctr = NR_ECTR_TAG_MISMATCH;
			fail_tag(e, j, i, x, p->imm, s);
			return NR_V_DROP;
		}
	}
	bits[i / 64] |= 1ull << (i % 64);
	*hk = (struct agg_held){ .handle = handle, .frame = frame, .pay = pay, .pkt = p };
	if (p->mask & NR_OPF_RETH) {    /* a first packet: what a repair rebuilds it with */
		j->reth[(size_t)si * j->n + i] = (struct agg_slot_reth){
			.va = p->reth_va, .rkey = p->reth_rkey, .len = p->reth_len };
		if (j->short_first)
			agg_short_first_seen(j, i, x, p);
	}
	if (s->has_tag && j->result_key) {
		/* the result's ImmDt, written now rather than at emission: the
		 * ICRC that follows emission would wait for this store */
		p->imm = s->tag ^ j->result_key;
		frame_set_imm(frame, p, p->imm);
	}
	s->ecn_ce |= (p->ecn & NR_ECN_MASK) == NR_ECN_CE;
	{
		unsigned dscp = frame[p->l3_off + 1] >> 2;   /* IPv4 TOS: DSCP */
		unsigned tol = j->tol_mask >> dscp & 1, de = j->de_mask >> dscp & 1;

		s->tolerant &= tol;
		s->de &= de;
		j->tol_pkts += tol;
		j->de_pkts += de;
	}
	if (j->mode == NR_SUM_STREAMING && j->dtype != NR_ELEM_FP32) {
		const struct agg_half_ops *h = agg_sum_half(e->sum, j->dtype);

		if (s->count == 0)
			h->widen(agg_slot_acc(j, si), pay, s->len);
		else
			h->add(agg_slot_acc(j, si), pay, s->len);
	} else if (j->mode == NR_SUM_STREAMING) {
		if (s->count == 0)
			memcpy(res, pay, s->len);
		else if (j->reduce == NR_REDUCE_MAX)
			e->sum->max(res, pay, s->len);
		else if (j->reduce == NR_REDUCE_BOR)
			e->sum->bor(res, pay, s->len);
		else
			e->sum->add(res, pay, s->len);
	}
	j->last_progress_ns = now_ns;
	count(j, NR_ECTR_AGGREGATED, ctr, NR_V_HELD);
	if (++s->count == j->n) {
		s->state = NR_SLOT_COMPLETE;
		j->completed++;
		j->ctr[NR_ECTR_COMPLETED]++;
		if (x == j->next_emit && j->classes > 1 && e->deferring) {
			defer_ready(e, j);
		} else if (x == j->next_emit) {
			agg_job_emit_ready(e, j);
			j->emit_ns = now_ns;
		}
	}
	return NR_V_HELD;
}

/* Not inlined: one call a data packet, which tools/instr-count counts. */
__attribute__((noinline))
static enum agg_verdict data_input(struct agg_engine *e, struct agg_job *j, uint32_t i,
				  struct nr_pkt *p, uint8_t *frame, void *handle,
				  uint64_t now_ns, enum nr_engine_ctr *ctr)
{
	uint32_t g = nr_psn_sub(p->psn, j->conns[i].ipsn);
	int32_t d = nr_psn_diff(g, (uint32_t)(j->next_release & NR_PSN_MASK));
	uint64_t x = j->next_release + (int64_t)d;
	uint32_t si;
	struct agg_slot *s;
	const uint64_t *bits;
	enum agg_verdict v;

	if (unlikely(d >= (int32_t)j->pool))     /* beyond the window: the slot is held */
		return count(j, NR_ECTR_OCCUPIED_DROPPED, ctr, NR_V_DROP);
	si = agg_job_slot(j, x);
	s = &j->slots[si];
	if (s->state != NR_SLOT_FREE && s->x == x) {
		switch (s->state) {
		case NR_SLOT_FILLING:
			bits = &j->bits[(size_t)si * j->words];
			if (bits[i / 64] >> (i % 64) & 1) {
				if (unlikely(!same_contribution(j, s, si, i, p, frame)))
					return conflict(e, j, i, x, p, ctr);
				agg_mon_sender(e, j, i, p, frame, handle);
				agg_mon_data(e, j, i, x, now_ns);
				return count(j, NR_ECTR_DUP_DROPPED, ctr, NR_V_DROP);
			}
			break;
		case NR_SLOT_COMPLETE:
			if (unlikely(!same_contribution(j, s, si, i, p, frame)))
				return conflict(e, j, i, x, p, ctr);
			agg_mon_sender(e, j, i, p, frame, handle);
			agg_mon_data(e, j, i, x, now_ns);
			return count(j, NR_ECTR_DUP_DROPPED, ctr, NR_V_DROP);
		default: /* EMITTED, RELEASED */
			if (unlikely((p->mask & NR_OPF_RETH) && j->short_first) &&
			    p->opcode == s->opcode && !late_first(e, j, i, x, si, p, ctr))
				return NR_V_DROP;
			agg_mon_sender(e, j, i, p, frame, handle);
			agg_mon_data(e, j, i, x, now_ns);
			v = resend(j, s, si, p, frame, ctr);
			if (v == NR_V_RESEND)
				agg_mon_result(j, i, now_ns);
			return v;
		}
	} else if (d < 0) {
		/* released long ago and the slot reused, or before the job's start */
		return count(j, NR_ECTR_STALE_DROPPED, ctr, NR_V_DROP);
	} else if (s->state != NR_SLOT_FREE && s->state != NR_SLOT_RELEASED) {
		/* cannot happen while 0 <= d < pool (kept as a guard) */
		return count(j, NR_ECTR_OCCUPIED_DROPPED, ctr, NR_V_DROP);
	}
	/* here: a new contribution to x, slot FILLING with x, or FREE/RELEASED */
	if (unlikely(p->pay_len == 0 || p->pay_len % nr_elem_size(j->dtype) || p->pay_len > j->mtu))
		return count(j, NR_ECTR_BAD_LEN, ctr, NR_V_DROP);
	/* before contributing: the slot's emission may reuse or free this frame */
	agg_mon_sender(e, j, i, p, frame, handle);
	v = contribute(e, j, i, x, si, p, frame, handle, now_ns, ctr);
	if (v == NR_V_HELD)
		agg_mon_data(e, j, i, x, now_ns);
	return v;
}

/* What the lookup found for a packet: stage 1 of the input, pure reads. */
struct nr_route {
	struct agg_job *j;      /* NULL: not a registered connection */
	uint32_t conn;
	bool ack_side;
};

static inline void classify(const struct agg_engine *e, const struct nr_pkt *p, struct nr_route *r)
{
	const struct agg_lkp *l;

	r->j = NULL;
	if (unlikely(p->kind != NR_PKT_ROCE || p->ipver != 4))
		return;
	l = lkp_find(e, p->daddr, p->qpn);
	if (!l || l->job >= NR_MAX_JOBS)
		return;
	r->j = e->jobs[l->job];
	r->conn = l->conn;
	r->ack_side = (l->qpn & NR_LKP_ACK) != 0;
}

/* Stage 2: act on a classified packet (mutates the job). */
static inline enum agg_verdict input_routed(struct agg_engine *e, const struct nr_route *r,
					   struct nr_pkt *p, uint8_t *frame, void *handle,
					   uint64_t now_ns, enum nr_engine_ctr *ctr)
{
	struct agg_job *j = r->j;
	uint32_t i = r->conn;
	enum nr_engine_ctr b;
	enum agg_verdict v;

	if (!j) {
		if (p->kind == NR_PKT_ROCE && p->ipver == 4 && op_is_rc_write(p->opcode)) {
			e->ctr[NR_ECTR_UNKNOWN_CONN]++;
			if (ctr)
				*ctr = NR_ECTR_UNKNOWN_CONN;
		}
		return NR_V_FORWARD;
	}
	if (r->ack_side) {
		if (unlikely(p->saddr != j->conns[i].dst_ip))
			return count(j, NR_ECTR_SPOOFED, ctr, NR_V_DROP);
		if (unlikely((b = unbound(e, j, &j->conns[i], p, frame, handle, true)) != NR_ECTR_MAX))
			return count(j, b, ctr, NR_V_DROP);
		if (!(p->mask & NR_OPF_AETH) || j->state != NR_JOB_ACTIVE)
			return NR_V_FORWARD;
		return snoop_ack(e, j, i, p, frame, handle, now_ns, ctr);
	}
	if (unlikely(p->saddr != j->conns[i].src_ip))
		return count(j, NR_ECTR_SPOOFED, ctr, NR_V_DROP);
	if (unlikely((b = unbound(e, j, &j->conns[i], p, frame, handle, false)) != NR_ECTR_MAX))
		return count(j, b, ctr, NR_V_DROP);
	if (unlikely(p->mask & NR_OPF_RESP))
		return NR_V_FORWARD;
	if (unlikely(j->state != NR_JOB_ACTIVE))
		return count(j, NR_ECTR_JOB_FAILED_DROP, ctr, NR_V_DROP);
	if (unlikely(!op_is_rc_write(p->opcode)))
		return count(j, NR_ECTR_NOT_WRITE, ctr, NR_V_DROP);
	if (unlikely(j->spray > 1)) {
		/* which of its ports (an unregistered sport: all are port 0) */
		j->mon[i].port = j->conns[i].src_sport ?
				 (uint16_t)(p->udp_sport - j->conns[i].src_sport) : 0;
		spray_home(&j->conns[i], p, frame);
	}
	v = data_input(e, j, i, p, frame, handle, now_ns, ctr);
	if (j->short_ppm)
		agg_short_input(e, j, now_ns);
	return v;
}

enum agg_verdict agg_engine_input(struct agg_engine *e, struct nr_pkt *p, uint8_t *frame,
				void *handle, uint64_t now_ns, enum nr_engine_ctr *ctr)
{
	struct nr_route r;

	classify(e, p, &r);
	return input_routed(e, &r, p, frame, handle, now_ns, ctr);
}

void agg_engine_input_burst(struct agg_engine *e, struct nr_pkt *const pkts[],
			   uint8_t *const frames[], void *const handles[], unsigned n,
			   uint64_t now_ns, enum agg_verdict verdicts[], enum nr_engine_ctr ctrs[])
{
	struct nr_route r[NR_ENGINE_BURST];

	e->deferring = true;
	for (unsigned base = 0; base < n; base += NR_ENGINE_BURST) {
		unsigned m = n - base < NR_ENGINE_BURST ? n - base : NR_ENGINE_BURST;

		/* the lookups of the whole burst first: independent of each
		 * other, so their load chains overlap instead of queueing
		 * behind each packet's slot work */
		for (unsigned k = 0; k < m; k++)
			classify(e, pkts[base + k], &r[k]);
		for (unsigned k = 0; k < m; k++)
			verdicts[base + k] = input_routed(e, &r[k], pkts[base + k], frames[base + k],
							  handles[base + k], now_ns,
							  ctrs ? &ctrs[base + k] : NULL);
	}
	e->deferring = false;
	if (unlikely(e->nready))
		emit_deferred(e, now_ns);
}
