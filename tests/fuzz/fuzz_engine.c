/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_engine: the aggregation engine driven by a script of operations on a
 * few registered jobs, against a shadow model.
 *
 * Input: a header that shapes the jobs (byte 0: jobs 1..2 in bit 0, results
 * through ops.emit_slot instead of ops.emit in bit 1; then 3 bytes per job:
 * ranks 1..5, mode, MTU 256/512, packets per message 1..3, last packet
 * length, pool 2/4 messages, initial PSNs, and in b0's bit 7 short slots: a
 * fourth byte follows with short_ppm (one of 500000, 333334, 0, 250000,
 * 499999, 1, 125000: one short slot in a message of 2 or 3 packets, none,
 * one only when a first packet's RETH claims more), short_dscp,
 * short_scale and a progress timeout of 50 ms or 1 s), then operations of 5
 * bytes each:
 *
 *   op & 7 in 0..3  data packet: connection, PSN choice (in order, resend,
 *                   jump ahead, wild), length class, duplicate, spoofed
 *                   source, ECN-CE, wrong tag, wrong opcode, payload pattern
 *                   (small integers, fractions, raw bits, NaN/Inf/-0/denormals);
 *                   for a job with short slots, op bit 3: lost on its way (the
 *                   sender moves on, the box never sees it), bit 4: another
 *                   DSCP than short_dscp (must-be-exact), bits 5-6: a first
 *                   packet's RETH claims 4, 9 or 2^32 - 1 bytes' more packets
 *   4               ACK/NAK from the receiver (PSN acked, ahead, behind)
 *   5               time advance, then agg_engine_poll()
 *   6               job delete / re-add / duplicate add / invalid add
 *   7               a data packet with bytes flipped, reparsed
 *
 * Inputs without bit 1 of byte 0 and bit 7 of each b0 read as before short
 * slots existed (tests/fuzz/regress/engine/ among them).
 * Every frame is built with nr_build_frame() and parsed with nr_parse().
 * Invariants (a violation traps), each with why it must hold on a real
 * network, where RNICs keep their own reliability and trust what arrives:
 *   - every held handle comes back exactly once (emit or free), no handle that
 *     was not held comes back, nothing is held after destroy.  Why: a handle
 *     is an mbuf in the box; one that never comes back leaks the pool until rx
 *     stops, one that comes back twice is transmitted twice or freed while
 *     another lcore sends it.
 *   - a handle is freed only by job delete, job failure or destroy.  Why: a
 *     contribution freed while its job is healthy is lost: the sender already
 *     counts it as sent, its slot can never complete, and the job stalls until
 *     the sender's timer resends it (or forever, once its ACK was snooped).
 *   - no result before all N contributions (but a short slot's, below);
 *     results leave in g order, ranks in order.  Why: a receiver's RNIC
 *     accepts PSNs only in order; a result out of g order is a sequence error
 *     (NAK, go-back-N), and a partial sum would be accepted as final.
 *   - each result equals the rank-ordered sum (ordered mode) or the
 *     arrival-order sum (streaming) of the contributions, bit for bit (any NaN
 *     equals any NaN).  Why: the result lands in the receiver's memory as the
 *     gradient; nothing downstream can tell a wrong sum, and ordered mode
 *     promises sums every rank and every rerun can reproduce.
 *   - a NAK the engine sends a sender (status monitor) never acknowledges
 *     more than the receiver did: PSN - 1 below that receiver's own ACKs.
 *     Why: the sender completes and forgets everything the NAK acknowledges;
 *     a result the receiver then lacks could never be sent again.
 *   - ECN-CE on a result iff a contribution had it, and never on a frame
 *     that was Not-ECT.  Why: CE is the only congestion signal the senders'
 *     DCQCN gets back (through the receivers' CNPs); dropping it hides
 *     congestion, inventing it throttles for nothing, and CE on a Not-ECT
 *     frame is what RFC 3168 forbids.
 *   - ImmDt = tag ^ key.  Why: the receiving host tells an aggregated message
 *     from a raw one by the key; a raw tag would be taken for a box bypass.
 *   - headers of a result are the packet's own (payload and ImmDt aside).
 *     Why: the receiver's RNIC checks QPN, PSN, opcode, RETH and addresses
 *     against its QP state; any other header drops or misplaces the data.
 *   - a connection never adds twice to one sequence.  Why: retransmissions and
 *     link duplicates are normal on RoCE; counting one twice corrupts the sum
 *     silently.
 *   - no aggregation of a spoofed, unregistered, failed-job or bad-length
 *     packet; tags agree.  Why: any host on the fabric can send to the box; a
 *     packet the job did not send must not enter a sum that receivers trust.
 *   - a resent duplicate carries its own sequence's stored result.  Why: a
 *     sender retransmits when a result or its ACK was lost after the box; the
 *     receiver must get the same result again, not the retransmitted raw
 *     contribution, which would be written into its memory as the sum.
 *   - an RDMA WRITE of a registered active connection is never forwarded raw.
 *     Why: the receiver's RNIC would write one host's gradient where the sum
 *     belongs and acknowledge it; nothing would ever notice.
 *   - every response (ACK, NAK, atomic ACK, READ response) that a registered
 *     QP's peer sends it, on whichever side of a connection, is forwarded.
 *     Why: an RC QP is a requester as well as a responder; a dropped
 *     response leaves its request to the requester's retry timer, and after
 *     retry_cnt timeouts the QP moves to the error state and the job dies.
 *     ACKs on the ACK side are snooped first (they free the box's slots) and
 *     still forwarded.
 *   - a frame of a registered QP from anyone but its peer (source IP, UDP
 *     source port, MAC, P_Key: as registered) is dropped, counted spoofed,
 *     never forwarded, ACKs, NAKs and RNR NAKs included.  Why: a forged NAK
 *     sends a requester back, an RNR NAK holds it, an error NAK kills its
 *     QP (docs/trust.md).
 *   - held handles of a job stay within N * pool packets.  Why: the box's pool
 *     is sized from the jobs' specs at admission; a job that holds more
 *     starves the others and the rx rings.
 * Short slots (docs/short-slots.md; the model in fuzz_engine_short.c):
 *   - a slot goes out with N - 1 contributions only in a job with short_ppm,
 *     as the slot next in emission order, of WRITE MIDDLE/LAST/LAST_IMM
 *     packets, every present contribution and every contribution of the
 *     message's first packet marked with short_dscp, while the message's
 *     bound floor(P x short_ppm / 10^6) (P from the first packet's RETH) is
 *     not spent, after no gap NAK (nor its re-arm) for that sequence went to
 *     the missing sender, never after the slot was counted short_denied,
 *     and only once the missing sender's later packets are in or, in
 *     agg_engine_poll(), its stream and the slot stood still for the probe
 *     time (at least 4 ms).  Why: a hole in a gradient is acceptable only
 *     where the job and the hosts asked for it (the DSCP marks what a host
 *     may lose) and within what they bounded; a first packet carries the
 *     receiver's RETH, which the box cannot invent; a sender already NAKed
 *     goes back and would be thrown away; and a sender that is merely late
 *     must not lose its contribution to a box that guessed too soon.
 *   - its result is the N - 1 contributions' sum (rank order skipping the
 *     missing rank, or arrival order), times N/(N-1) in FP32 with
 *     short_scale, every present connection's packet emitted once, in rank
 *     order; the missing connection's result is the very next thing the
 *     engine hands out (ops.send), before any later slot's result: a WRITE
 *     of the slot's opcode on that connection's QPN, PSN and addresses, ImmDt
 *     = tag ^ result_key, payload the stored result, CE only when a
 *     contribution had it.  Why: that receiver's RNIC takes PSNs only in
 *     order, and its ACK is all that stops the sender going back; a wrong
 *     header drops the result there and the job stalls.
 *   - a late copy of the left-out contribution is never aggregated and, if
 *     resent, carries the stored result.  Why: every other receiver already
 *     wrote the slot's sum; summing it now would give receivers different
 *     gradients.
 *   - short_slots, left_out per rank, emitted and completed equal the
 *     model's; emitted = whole slots x N + short slots x (N - 1) and
 *     aggregated = emitted + held, after every operation, and the engine's
 *     next_emit is the model's after every call.  Why: operators and the
 *     training report read loss from these counters; a short slot counted
 *     wrong hides lost gradient or invents it.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "dataplane/engine/agg_engine.h"
#include "proto/roce_build.h"
#include "proto/roce_pkt.h"

#include "nrz_fuzz.h"
#include "fuzz_engine.h"

/* ---- callbacks --------------------------------------------------------------- */

static void after_held(struct world *w, struct handle *h);

/*
 * The packet being offered completed a slot (emit) or was taken and then freed
 * (job failed) before agg_engine_input() returned: record it as held now.
 */
static void pending_held(struct world *w, struct handle *h)
{
	if (h == w->pending && !w->pending_recorded) {
		w->pending_recorded = true;
		after_held(w, h);
	}
}

static struct sjob *job_by_id(struct world *w, uint32_t id)
{
	for (unsigned k = 0; k < w->njobs; k++)
		if (w->jobs[k].id == id)
			return &w->jobs[k];
	return NULL;
}

static void handle_back(struct world *w, struct handle *h, const char *how)
{
	bool known = false;

	for (size_t k = 0; k < w->nhs && !known; k++)
		known = w->hs[k] == h;
	NRZ_CHECK(known, "%s of a handle the engine was never given (%p)", how, (void *)h);
	NRZ_CHECK(h->state == H_IN_ENGINE, "%s of a handle already returned (job %d g=%u)",
		  how, h->job, h->g);
	h->state = H_RETURNED;
	if (h->counted) {
		w->jobs[h->job].held--;
		h->counted = false;
	}
}

static void cb_free(void *ctx, void *handle)
{
	struct world *w = ctx;
	struct handle *h = handle;

	pending_held(w, h);
	handle_back(w, h, "free");
	NRZ_CHECK(!w->due.on, "a handle freed before conn %u's result of g=%u, which went out "
		  "short without it", w->due.conn, w->due.g);
	NRZ_CHECK(h->job >= 0, "free of a handle that was never aggregated");
	if (!w->deleting && !w->destroying)
		w->jobs[h->job].freed_now = true;   /* must be a job failure: checked after */
}

/* A connection not given: the result's handle says which (ops.emit_slot). */
#define NRZ_CONN_OF_HANDLE UINT32_MAX

/*
 * One result handed out: ops.emit's, or one of the packets of ops.emit_slot.
 * Slots in g order, each slot's connections in rank order (a short slot's
 * missing one skipped: its result follows through ops.send).
 */
static void result_out(struct world *w, struct handle *h, uint32_t job, uint32_t conn,
		       uint32_t g, bool ecn_ce, const uint8_t *frame, const struct nr_pkt *pkt)
{
	struct sjob *j = job_by_id(w, job);
	struct rec *r;
	uint32_t n;

	if (w->pending && !w->pending_recorded)
		pending_held(w, w->pending);   /* the slot completed by the packet being offered */
	handle_back(w, h, "emit");
	NRZ_CHECK(j && j->registered && !j->failed, "emit for job %u that is not live", job);
	NRZ_CHECK(!w->due.on, "job %u: a result of g=%u before conn %u's result of g=%u, which "
		  "went out short without it", job, g, w->due.conn, w->due.g);
	n = j->spec->n_conns;
	if (conn == NRZ_CONN_OF_HANDLE)
		conn = h->conn;
	NRZ_CHECK(frame == h->frame, "emit frame is not the handle's frame");
	NRZ_CHECK(h->job == j - w->jobs && h->conn == conn && h->g == g,
		  "emit job %u conn %u g=%u for a packet of job %d conn %u g=%u",
		  job, conn, g, h->job, h->conn, h->g);
	NRZ_CHECK(g == j->emit_g, "emit out of order: g=%u conn %u, expected g=%u conn %u",
		  g, conn, j->emit_g, j->emit_conn);
	r = nrz_rec_find(j, g, false);
	NRZ_CHECK(r && (r->count == n || (r->count && r->count + 1u == n)),
		  "result for g=%u with %u of %u contributions", g, r ? r->count : 0, n);
	if (r->count < n && r->nemitted == 0)
		nrz_short_begin(w, j, r);      /* traps unless the slot may go out short */
	if (r->shorted && j->emit_conn == r->missing)
		j->emit_conn++;
	NRZ_CHECK(conn == j->emit_conn, "emit out of order: g=%u conn %u, expected g=%u conn %u",
		  g, conn, j->emit_g, j->emit_conn);
	NRZ_CHECK(!r->c[conn].emitted, "g=%u conn %u emitted twice", g, conn);
	for (uint32_t i = 0; i < n; i++)
		NRZ_CHECK(!r->c[i].have || (r->c[i].has_tag == r->has_tag &&
					    (!r->has_tag || r->c[i].tag == r->tag)),
			  "g=%u emitted although tags disagree", g);
	if (!r->want)
		nrz_rec_compute(j, r);
	NRZ_CHECK(pkt->pay_len == r->len, "result length %u, contributions %u",
		  pkt->pay_len, r->len);
	nrz_check_payload(r, frame + pkt->pay_off, "result", conn);
	NRZ_CHECK(ecn_ce == r->ce, "ecn_ce %d, contributions CE %d", ecn_ce, r->ce);
	/* headers untouched but the ImmDt */
	uint32_t immoff = (h->pkt.mask & NR_OPF_IMMDT) ? h->pkt.pay_off - 4u : h->pkt.pay_off;

	NRZ_CHECK(!memcmp(frame, h->orig, immoff) &&
		  !memcmp(frame + h->pkt.pay_off + r->len, h->orig + h->pkt.pay_off + r->len,
			  h->len - h->pkt.pay_off - r->len),
		  "result g=%u conn %u: headers or trailer changed", g, conn);
	if (h->pkt.mask & NR_OPF_IMMDT) {
		uint32_t want = r->tag ^ j->spec->result_key;

		NRZ_CHECK(nr_ld_be32(frame + immoff) == want, "result ImmDt 0x%08x, want 0x%08x",
			  nr_ld_be32(frame + immoff), want);
	}
	r->c[conn].emitted = 1;
	r->nemitted++;
	j->emits++;
	if (++j->emit_conn == r->missing && r->shorted)
		j->emit_conn++;
	if (j->emit_conn < n)
		return;
	if (!r->shorted) {
		nrz_slot_done(j, r);
		return;
	}
	w->due.on = true;       /* the missing connection's result comes next */
	w->due.job = (int)(j - w->jobs);
	w->due.conn = r->missing;
	w->due.g = g;
}

static void cb_emit(void *ctx, const struct agg_emit *e)
{
	result_out(ctx, e->handle, e->job, e->conn, e->g, e->ecn_ce, e->frame, e->pkt);
}

static void cb_emit_slot(void *ctx, const struct agg_emit_slot *s)
{
	struct world *w = ctx;
	struct sjob *j;
	struct rec *r;

	NRZ_CHECK(s->n > 0, "emit_slot of job %u g=%u with no packet", s->job, s->g);
	for (uint32_t k = 0; k < s->n; k++) {
		const struct agg_held *h = &s->held[k];

		NRZ_CHECK(h->pay == h->frame + h->pkt->pay_off, "emit_slot g=%u: pay is not the "
			  "frame's payload", s->g);
		result_out(w, h->handle, s->job, NRZ_CONN_OF_HANDLE, s->g, s->ecn_ce, h->frame,
			   h->pkt);
	}
	j = job_by_id(w, s->job);
	r = nrz_rec_find(j, s->g, false);
	NRZ_CHECK(s->len == r->len, "emit_slot g=%u: len %u, contributions %u", s->g, s->len,
		  r->len);
	nrz_check_payload(r, s->sum, "emit_slot sum", 0);
	NRZ_CHECK(r->done || (w->due.on && w->due.g == s->g),
		  "emit_slot g=%u: %u packets, not every present connection's", s->g, s->n);
}

/* ---- packets ------------------------------------------------------------------ */

static void fill_payload(uint8_t *p, uint32_t len, uint8_t pattern, uint32_t seed)
{
	static const uint32_t specials[] = {
		0x7FC00000, 0xFFC00001, 0x7F800000, 0xFF800000, 0x80000000, 0x00000000,
		0x7F7FFFFF, 0xFF7FFFFF, 0x00000001, 0x80000001, 0x3F800000, 0x7FA00000,
	};
	uint32_t s = seed | 1;

	for (uint32_t k = 0; k + 4 <= len; k += 4) {
		uint32_t r = nrz_xs(&s), bits;
		float v;

		switch (pattern & 3) {
		case 0:
			v = (float)((int)(r % 17) - 8);
			memcpy(&bits, &v, 4);
			break;
		case 1:
			v = (float)((int)(r % 200001) - 100000) / 1024.0f * 1.0009765f;
			memcpy(&bits, &v, 4);
			break;
		case 2:
			bits = r;
			break;
		default:
			bits = (r & 3) ? specials[(r >> 2) % 12] : r;
			break;
		}
		memcpy(p + k, &bits, 4);
	}
	for (uint32_t k = len & ~3u; k < len; k++)
		p[k] = (uint8_t)nrz_xs(&s);
}

/* The registered connection whose sender p is addressed to (an ACK's way), from its receiver. */
static bool ack_owner(struct world *w, const struct nr_pkt *p, int *job, uint32_t *conn)
{
	for (unsigned k = 0; k < w->njobs; k++) {
		const struct sjob *j = &w->jobs[k];

		if (!j->registered)
			continue;
		for (uint32_t i = 0; i < j->spec->n_conns; i++) {
			if (j->spec->conns[i].src_qpn == p->qpn &&
			    j->spec->conns[i].src_ip == p->daddr &&
			    j->spec->conns[i].dst_ip == p->saddr) {
				*job = (int)k;
				*conn = i;
				return true;
			}
		}
	}
	return false;
}

/* The 64-bit sequence of PSN psn on connection i, near the receiver's mark. */
static uint64_t seq_near_mark(const struct sjob *j, uint32_t i, uint32_t psn)
{
	uint32_t g = nr_psn_sub(psn, j->spec->conns[i].ipsn);

	return j->mark[i] + (int64_t)nr_psn_diff(g, (uint32_t)(j->mark[i] & NR_PSN_MASK));
}

bool nrz_data_owner(struct world *w, const struct nr_pkt *p, int *job, uint32_t *conn);
static bool is_write(uint8_t op);

/*
 * Whether p (in frame) is addressed to a registered QP, and then whether it
 * comes from that QP's peer as registered: the receiver for the sender's QP
 * (ack side), the sender for the receiver's.
 */
static bool to_registered(struct world *w, const struct nr_pkt *p, const uint8_t *frame,
			  bool *from_peer)
{
	static const uint8_t zero[6];

	for (unsigned k = 0; k < w->njobs; k++) {
		const struct sjob *j = &w->jobs[k];

		if (!j->registered)
			continue;
		for (uint32_t i = 0; i < j->spec->n_conns; i++) {
			const struct nr_conn_spec *c = &j->spec->conns[i];
			bool ack = c->src_qpn == p->qpn && c->src_ip == p->daddr;
			uint32_t spray = j->spec->spray_ports ? j->spec->spray_ports : 1;
			uint16_t sport;
			const uint8_t *mac;

			if (!ack && !(c->dst_qpn == p->qpn && c->dst_ip == p->daddr))
				continue;
			sport = ack ? c->dst_sport : c->src_sport;
			mac = ack ? c->dst_mac : c->src_mac;
			*from_peer = p->saddr == (ack ? c->dst_ip : c->src_ip) &&
				     (!sport || (uint16_t)(p->udp_sport - sport) < spray) &&
				     (!memcmp(mac, zero, 6) || !memcmp(frame + 6, mac, 6)) &&
				     (!j->spec->pkey ||
				      !((nr_ld_be16(frame + p->bth_off + 2) ^ j->spec->pkey) & 0x7fff));
			return true;
		}
	}
	return false;
}

/*
 * A result the engine resent itself for a receiver's NAK (a repair): to a
 * registered connection's receiver, from its sender, for a sequence already
 * emitted to it, with that result's payload, length and ImmDt, and CE only
 * when a contribution had it.
 */
static void check_repair(struct world *w, const uint8_t *frame, const struct nr_pkt *p)
{
	struct sjob *j;
	struct rec *r;
	uint32_t conn, g;
	int jk;

	NRZ_CHECK(is_write(p->opcode), "a made frame is neither an ACK/NAK nor an RDMA WRITE "
		  "(opcode 0x%02x)", p->opcode);
	NRZ_CHECK(nrz_data_owner(w, p, &jk, &conn), "a repair for no registered connection");
	j = &w->jobs[jk];
	NRZ_CHECK(p->saddr == j->spec->conns[conn].src_ip, "job %u conn %u: a repair from "
		  "another source", j->id, conn);
	g = nr_psn_sub(p->psn, j->spec->conns[conn].ipsn);
	r = nrz_rec_find(j, g, false);
	NRZ_CHECK(r && r->c[conn].emitted, "job %u conn %u: a repair of g=%u, never emitted",
		  j->id, conn, g);
	NRZ_CHECK(p->pay_len == r->len, "repair g=%u: length %u, result %u", g, p->pay_len,
		  r->len);
	nrz_check_payload(r, frame + p->pay_off, "repair", conn);
	if (p->mask & NR_OPF_IMMDT)
		NRZ_CHECK(r->has_tag && p->imm == (r->tag ^ j->spec->result_key),
			  "repair g=%u: ImmDt 0x%08x", g, p->imm);
	NRZ_CHECK(r->ce || p->ecn != NR_ECN_CE, "repair g=%u: CE without a CE contribution", g);
}

/*
 * A frame the engine made (ops.send): a NAK (sequence or RNR) to a sender on
 * its receiver's behalf, a repeat of the receiver's last ACK, or a repair's
 * result.  It must be well formed, ICRC'd, for a registered connection, and
 * a NAK or ACK must acknowledge (PSN - 1) nothing that receiver has not
 * acknowledged.
 */
static void cb_send(void *ctx, const uint8_t *frame, uint32_t len, uint16_t origin)
{
	struct world *w = ctx;
	struct nr_pkt p;
	uint32_t conn;
	int jk;

	NRZ_CHECK(nr_parse(frame, len, &p) == NR_PKT_ROCE, "a made frame does not parse");
	NRZ_CHECK(nr_icrc_check(frame, &p), "a made frame's ICRC is wrong");
	if (p.opcode != NR_OP_RC_ACK) {
		if (w->due.on) {
			nrz_short_result(w, frame, &p);
			return;
		}
		/* a repair answers a receiver's NAK, a solicit (AckReq) is housekeeping's */
		NRZ_CHECK((w->offer_aeth && !w->polling) || (w->polling && p.ackreq),
			  "a result made outside a repair, a solicit or a short slot (psn 0x%06x)",
			  p.psn);
		check_repair(w, frame, &p);
		return;
	}
	NRZ_CHECK(!w->due.on, "a NAK or ACK made before conn %u's result of g=%u, which went "
		  "out short without it", w->due.conn, w->due.g);
	NRZ_CHECK(p.opcode == NR_OP_RC_ACK && (p.aeth_syn == NR_AETH_NAK_PSN_SEQ_ERR ||
					       nr_syn_is_rnr(p.aeth_syn) || nr_syn_is_ack(p.aeth_syn)),
		  "a made frame is not an ACK, a sequence or an RNR NAK (opcode 0x%02x syndrome 0x%02x)",
		  p.opcode, p.aeth_syn);
	NRZ_CHECK(ack_owner(w, &p, &jk, &conn), "a NAK for no registered connection");
	/* a NAK at q acknowledges q - 1, an ACK at q acknowledges q */
	NRZ_CHECK(seq_near_mark(&w->jobs[jk], conn, p.psn) + nr_syn_is_ack(p.aeth_syn) <=
		  w->jobs[jk].mark[conn],
		  "job %u conn %u: NAK at psn 0x%06x acknowledges more than the receiver did "
		  "(mark %llu)", w->jobs[jk].id, conn, p.psn,
		  (unsigned long long)w->jobs[jk].mark[conn]);
	if (p.aeth_syn == NR_AETH_NAK_PSN_SEQ_ERR || nr_syn_is_rnr(p.aeth_syn))
		nrz_short_nak(w, &w->jobs[jk], conn);
}

static void flow_of(const struct sjob *j, uint32_t i, bool ack, struct nr_flow *f)
{
	const struct nr_conn_spec *c = &j->spec->conns[i];

	memset(f, 0, sizeof(*f));
	memcpy(f->src_mac, ack ? c->dst_mac : c->src_mac, 6);
	memcpy(f->dst_mac, ack ? c->src_mac : c->dst_mac, 6);
	f->saddr = ack ? c->dst_ip : c->src_ip;
	f->daddr = ack ? c->src_ip : c->dst_ip;
	f->sport = (uint16_t)(0xC000 + i);
	f->frag_off = NR_IPV4_DF;
	f->dqpn = ack ? c->src_qpn : c->dst_qpn;
}

/* Which shadow job and connection a data packet belongs to (by its daddr and QPN). */
bool nrz_data_owner(struct world *w, const struct nr_pkt *p, int *job, uint32_t *conn)
{
	for (unsigned k = 0; k < w->njobs; k++) {
		const struct sjob *j = &w->jobs[k];

		if (!j->registered)
			continue;
		for (uint32_t i = 0; i < j->spec->n_conns; i++) {
			if (j->spec->conns[i].dst_qpn == p->qpn &&
			    j->spec->conns[i].dst_ip == p->daddr) {
				*job = (int)k;
				*conn = i;
				return true;
			}
		}
	}
	return false;
}

static bool is_write(uint8_t op)
{
	return op >= NR_OP_RC_WRITE_FIRST && op <= NR_OP_RC_WRITE_ONLY_IMM;
}

static void after_held(struct world *w, struct handle *h)
{
	const struct nr_pkt *p = &h->pkt;
	struct sjob *j;
	struct rec *r;
	uint32_t conn;
	int jk;

	NRZ_CHECK(nrz_data_owner(w, p, &jk, &conn), "held a packet of no registered connection");
	j = &w->jobs[jk];
	NRZ_CHECK(!j->failed, "held a packet of failed job %u", j->id);
	NRZ_CHECK(p->saddr == j->spec->conns[conn].src_ip, "held a spoofed packet");
	NRZ_CHECK(is_write(p->opcode), "held a non-WRITE (opcode 0x%02x)", p->opcode);
	NRZ_CHECK(p->pay_len && p->pay_len % 4 == 0 && p->pay_len <= j->spec->mtu,
		  "held a packet of bad length %u", p->pay_len);
	h->job = (int8_t)jk;
	h->conn = (uint8_t)conn;
	h->g = nr_psn_sub(p->psn, j->spec->conns[conn].ipsn);
	r = nrz_rec_find(j, h->g, true);
	NRZ_CHECK(!r->shorted || r->missing != conn, "conn %u's late copy of g=%u aggregated "
		  "after the slot went out short without it", conn, h->g);
	NRZ_CHECK(!r->done, "g=%u aggregated again after its result went out", h->g);
	NRZ_CHECK(!r->c[conn].have, "conn %u added twice to g=%u", conn, h->g);
	if (r->count) {
		NRZ_CHECK(p->pay_len == r->len, "g=%u: lengths %u and %u in one slot", h->g,
			  p->pay_len, r->len);
		NRZ_CHECK(p->opcode == r->opcode, "g=%u: opcodes 0x%02x and 0x%02x in one slot",
			  h->g, p->opcode, r->opcode);
	}
	r->len = p->pay_len;
	r->c[conn].have = 1;
	r->c[conn].has_tag = p->mask & NR_OPF_IMMDT;
	/* from the bytes sent: the engine rewrote p->imm to the result's ImmDt */
	r->c[conn].tag = r->c[conn].has_tag ? nr_ld_be32(h->orig + p->pay_off - 4) : 0;
	r->c[conn].marked = h->orig[p->l3_off + 1] >> 2 == j->spec->short_dscp;
	r->c[conn].reth_len = (p->mask & NR_OPF_RETH) ? p->reth_len : 0;
	if (r->count == 0) {    /* the slot is the first contribution's */
		r->opcode = p->opcode;
		r->has_tag = r->c[conn].has_tag;
		r->tag = r->c[conn].tag;
		r->t_first = w->now;
	}
	j->last_new[conn] = w->now;
	nrz_short_held(w, j, conn, h->g);
	r->c[conn].pay = malloc(p->pay_len);
	NRZ_CHECK(r->c[conn].pay != NULL, "malloc");
	memcpy(r->c[conn].pay, h->orig + p->pay_off, p->pay_len);
	r->ce |= (p->ecn & NR_ECN_MASK) == NR_ECN_CE;
	r->order[r->count++] = (uint8_t)conn;
	if (h->state == H_IN_ENGINE) {
		h->counted = true;
		j->held++;
	}
}

static void after_resend(struct world *w, struct handle *h)
{
	struct sjob *j;
	struct rec *r;
	uint32_t conn, g;
	int jk;

	NRZ_CHECK(nrz_data_owner(w, &h->pkt, &jk, &conn), "resend for no registered connection");
	j = &w->jobs[jk];
	g = nr_psn_sub(h->pkt.psn, j->spec->conns[conn].ipsn);
	r = nrz_rec_find(j, g, false);
	NRZ_CHECK(r && r->done && (r->count == j->spec->n_conns || r->shorted),
		  "resend of g=%u whose result never went out", g);
	NRZ_CHECK(h->pkt.pay_len == r->len, "resend length %u, result %u", h->pkt.pay_len, r->len);
	nrz_check_payload(r, h->frame + h->pkt.pay_off, "resend", conn);
	if (h->pkt.mask & NR_OPF_IMMDT)
		NRZ_CHECK(nr_ld_be32(h->frame + h->pkt.pay_off - 4) ==
			  (r->tag ^ j->spec->result_key), "resend ImmDt");
	if ((h->orig[h->pkt.l3_off + 1] & NR_ECN_MASK) == NR_ECN_NOT_ECT)
		NRZ_CHECK((h->frame[h->pkt.l3_off + 1] & NR_ECN_MASK) == NR_ECN_NOT_ECT,
			  "resend of a Not-ECT frame marked (RFC 3168)");
	else if (r->ce)
		NRZ_CHECK((h->frame[h->pkt.l3_off + 1] & NR_ECN_MASK) == NR_ECN_CE,
			  "resend of a CE result without CE");
}

/* Offer one frame; the handle is returned to us unless held. */
static void offer(struct world *w, const uint8_t *frame, uint32_t len)
{
	struct handle *h = calloc(1, sizeof(*h));
	enum nr_engine_ctr ctr = NR_ECTR_MAX;
	enum agg_verdict v;
	uint32_t conn;
	int jk;

	NRZ_CHECK(h != NULL, "calloc");
	h->frame = malloc(len);
	h->orig = malloc(len);
	NRZ_CHECK(h->frame && h->orig, "malloc");
	memcpy(h->frame, frame, len);
	memcpy(h->orig, frame, len);
	h->len = len;
	h->job = -1;
	if (nr_parse(h->frame, len, &h->pkt) != NR_PKT_ROCE) {
		free(h->frame);
		free(h->orig);
		free(h);
		return;
	}
	if (w->nhs == w->caphs) {
		w->caphs = w->caphs ? 2 * w->caphs : 64;
		w->hs = realloc(w->hs, w->caphs * sizeof(*w->hs));
		NRZ_CHECK(w->hs != NULL, "realloc");
	}
	w->hs[w->nhs++] = h;
	h->state = H_IN_ENGINE;
	w->pending = h;
	w->pending_recorded = false;
	w->offer_aeth = h->pkt.mask & NR_OPF_AETH;
	v = agg_engine_input(w->eng, &h->pkt, h->frame, h, w->now, &ctr);
	w->offer_aeth = false;
	w->pending = NULL;
	nrz_short_after_call(w);
	NRZ_CHECK(v <= NR_V_RESEND, "verdict %d", v);
	NRZ_CHECK(!w->pending_recorded || v == NR_V_HELD,
		  "packet used in a result (or freed) but verdict %d", v);

	bool owned = nrz_data_owner(w, &h->pkt, &jk, &conn);

	if (owned && is_write(h->pkt.opcode) && !w->jobs[jk].failed &&
	    h->pkt.saddr == w->jobs[jk].spec->conns[conn].src_ip) {
		NRZ_CHECK(v != NR_V_FORWARD,
			  "RDMA WRITE of registered job %u conn %u forwarded raw (ctr %d)",
			  w->jobs[jk].id, conn, ctr);
	}
	/* a registered QP's frames from anyone but its peer are dropped as forged;
	 * its peer's responses go on, but a receiver's sequence NAK a repair answered */
	bool from_peer = true, reg = to_registered(w, &h->pkt, h->frame, &from_peer);

	if (reg && !from_peer)
		NRZ_CHECK(v == NR_V_DROP && (ctr == NR_ECTR_SPOOFED || ctr == NR_ECTR_SPOOFED_SRC ||
					     ctr == NR_ECTR_SPOOFED_PKEY),
			  "forged %s to a registered QP not dropped as spoofed: verdict %d ctr %d",
			  nr_opcode_name(h->pkt.opcode), v, ctr);
	else if (h->pkt.mask & NR_OPF_RESP)
		NRZ_CHECK(v == NR_V_FORWARD || (ctr == NR_ECTR_NAK_REPAIRED &&
						h->pkt.aeth_syn == NR_AETH_NAK_PSN_SEQ_ERR),
			  "response %s (owned %d) not forwarded: verdict %d ctr %d",
			  nr_opcode_name(h->pkt.opcode), owned, v, ctr);

	/* what the receiver acknowledged, as the engine took it */
	if (h->pkt.opcode == NR_OP_RC_ACK &&
	    (ctr == NR_ECTR_ACKS_SNOOPED || ctr == NR_ECTR_NAK_REPAIRED) &&
	    (nr_syn_is_ack(h->pkt.aeth_syn) || h->pkt.aeth_syn == NR_AETH_NAK_PSN_SEQ_ERR) &&
	    ack_owner(w, &h->pkt, &jk, &conn)) {
		struct sjob *j = &w->jobs[jk];
		uint64_t x = seq_near_mark(j, conn, h->pkt.psn) + nr_syn_is_ack(h->pkt.aeth_syn);

		if (x > j->mark[conn])
			j->mark[conn] = x;
	}
	switch (v) {
	case NR_V_HELD:
		NRZ_CHECK(ctr == NR_ECTR_AGGREGATED, "held with counter %d", ctr);
		if (!w->pending_recorded)
			after_held(w, h);
		return;
	case NR_V_RESEND:
		NRZ_CHECK(ctr == NR_ECTR_DUP_RESENT, "resend with counter %d", ctr);
		after_resend(w, h);
		break;
	case NR_V_DROP:
		NRZ_CHECK(ctr < NR_ECTR_MAX, "drop without a counter");
		break;
	default:
		break;
	}
	NRZ_CHECK(h->state == H_IN_ENGINE, "verdict %d but the handle came back", v);
	h->state = H_RETURNED;
}

/*
 * Connection conn's packet g.  op: the operation's byte, whose bits 4-6 a job
 * with short slots reads (DSCP, RETH length: see the top of this file).
 */
static int build_data(uint8_t op, struct sjob *j, uint32_t conn, uint32_t g,
		      uint8_t cls, uint8_t flags, uint8_t pat, uint32_t seed,
		      uint8_t *buf, size_t cap)
{
	const struct nr_conn_spec *c = &j->spec->conns[conn];
	uint32_t k = g % j->ppm, mtu = j->spec->mtu, len;
	struct nr_build_args a = {
		.psn = nr_psn_add(c->ipsn, g),
		.va = 0x10000,
		.rkey = 0x77,
		.dma_len = j->spec->msg_size,
		.imm = ((uint32_t)(g / j->ppm) & 0xFFFFFF),
	};
	static const uint8_t wrong_ops[] = {
		NR_OP_RC_SEND_ONLY, NR_OP_RC_WRITE_ONLY, NR_OP_RC_WRITE_MIDDLE,
		NR_OP_RC_WRITE_LAST, NR_OP_RC_READ_REQ, NR_OP_RC_SEND_ONLY_IMM,
		NR_OP_UC_WRITE_ONLY_IMM, NR_OP_RC_WRITE_FIRST,
		/* responses to the data QP: the receiver's QP as a requester */
		NR_OP_RC_ACK, NR_OP_RC_ATOMIC_ACK, NR_OP_RC_READ_RESP_ONLY,
	};
	uint8_t pay[NR_MAX_MTU + 64];
	struct nr_flow f;

	if (j->ppm == 1)
		a.opcode = NR_OP_RC_WRITE_ONLY_IMM;
	else if (k == 0)
		a.opcode = NR_OP_RC_WRITE_FIRST;
	else if (k + 1 == j->ppm)
		a.opcode = NR_OP_RC_WRITE_LAST_IMM;
	else
		a.opcode = NR_OP_RC_WRITE_MIDDLE;
	a.ackreq = k + 1 == j->ppm;
	len = k + 1 == j->ppm ? j->last_len : mtu;
	switch (cls & 7) {
	case 5: len = 4 * (1 + seed % (mtu / 4)); break;
	case 6: len = 1 + seed % mtu; break;
	case 7: len = (seed & 1) ? 0 : mtu + 4 * (1 + seed % 16); break;
	default: break;
	}
	if ((flags & 0x40) && (pat & 0x10))
		a.imm ^= 1u << (seed % 32);             /* hosts out of step */
	if ((flags & 0x80) && (pat & 0x20)) {
		a.opcode = wrong_ops[seed % sizeof(wrong_ops)];
		if (!(nr_opcode_info(a.opcode)->mask & NR_OPF_PAYLOAD))
			len = 0;
	}
	flow_of(j, conn, false, &f);
	if ((flags & 0x10) && (pat & 0x40))             /* spoofed source */
		f.saddr = (seed & 1) ? nrz_ip4(10, 99, 0, 1) : j->spec->conns[(conn + 1) % j->spec->n_conns].src_ip;
	/* ECN-capable (as DCQCN senders), CE-marked on the way, or Not-ECT */
	f.tos = (flags & 0x20) ? NR_ECN_CE : (pat & 0x80) ? NR_ECN_NOT_ECT : NR_ECN_ECT0;
	if (j->short_ops) {
		uint8_t dscp = j->spec->short_dscp;
		static const uint32_t more[4] = { 0, 4, 9, 0 };

		if (op & 0x10)
			dscp = (dscp + 1) & 63;         /* must-be-exact */
		f.tos |= (uint8_t)(dscp << 2);
		if ((op >> 5) & 3)
			a.dma_len = ((op >> 5) & 3) == 3 ? UINT32_MAX
							: a.dma_len + more[(op >> 5) & 3] * mtu;
	}
	fill_payload(pay, len, pat, seed);
	return nr_build_frame(buf, cap, &f, &a, pay, len);
}

static void op_data(struct world *w, struct nrz_in *in, uint8_t op, bool mutate)
{
	uint8_t a = nrz_u8(in), b = nrz_u8(in), flags = nrz_u8(in), pat = nrz_u8(in);
	struct sjob *j = &w->jobs[(a >> 7) % w->njobs];
	uint8_t buf[NR_MAX_MTU + 256];
	uint32_t conn, g, seed;
	int len;

	if (!j->registered)
		return;
	conn = a % j->spec->n_conns;
	switch (b & 3) {
	case 0:
	case 1:
		g = j->cursor[conn];
		j->cursor[conn] = nr_psn_add(g, 1);
		break;
	case 2:   /* retransmission, maybe go-back-N */
		g = nr_psn_sub(j->cursor[conn], 1 + ((b >> 2) & 7));
		if (b & 0x80)
			j->cursor[conn] = nr_psn_add(g, 1);
		break;
	default:
		g = b == 0xFF ? (nrz_u32(in) & NR_PSN_MASK)
			      : nr_psn_add(j->cursor[conn], (b >> 2) & 15);
		break;
	}
	seed = (uint32_t)a << 24 ^ (uint32_t)pat << 16 ^ g * 2654435761u ^ conn;
	len = build_data(op, j, conn, g, flags, flags, pat, seed, buf, sizeof(buf));
	if (len < 0)
		return;
	if (mutate) {
		unsigned m = 1 + nrz_u8(in) % 4;

		for (unsigned k = 0; k < m; k++) {
			uint16_t pos = nrz_u16(in);

			buf[pos % (unsigned)len] ^= (uint8_t)(nrz_u8(in) | 1);
		}
	}
	if (j->short_ops && (op & 8))
		return;                         /* lost on the way: the sender moved on */
	offer(w, buf, (uint32_t)len);
	if (flags & 8)
		offer(w, buf, (uint32_t)len);   /* duplicated on the wire */
}

static void op_ack(struct world *w, struct nrz_in *in)
{
	uint8_t a = nrz_u8(in), b = nrz_u8(in), c = nrz_u8(in), d = nrz_u8(in);
	struct sjob *j = &w->jobs[(a >> 7) % w->njobs];
	struct nr_build_args args = { .opcode = NR_OP_RC_ACK, .msn = d };
	uint8_t buf[256];
	struct nr_flow f;
	uint32_t conn, g;
	int len;

	if (!j->registered)
		return;
	conn = a % j->spec->n_conns;
	switch (b & 3) {
	case 0:   /* everything emitted so far */
		g = nr_psn_sub(j->emit_g, 1);
		break;
	case 1:   /* somewhere in what was emitted, or just past it */
		g = nr_psn_sub(j->emit_g, (b >> 2) & 15);
		break;
	case 2:   /* a PSN never sent */
		g = nr_psn_add(j->emit_g, 1 + (b >> 2));
		break;
	default:
		g = (uint32_t)b << 16 | (uint32_t)c << 8 | d;
		break;
	}
	switch (c & 3) {
	case 0: args.syndrome = 0x1F & (c >> 2); break;
	case 1: args.syndrome = NR_AETH_NAK_PSN_SEQ_ERR; break;
	case 2: args.syndrome = NR_AETH_RNR_NAK | (c >> 3); break;
	default: args.syndrome = c; break;
	}
	args.psn = nr_psn_add(j->spec->conns[conn].ipsn, g);
	flow_of(j, conn, true, &f);
	if ((c & 0xC0) == 0xC0)
		f.saddr = nrz_ip4(10, 99, 0, 2);      /* spoofed ACK */
	len = nr_build_frame(buf, sizeof(buf), &f, &args, NULL, 0);
	NRZ_CHECK(len > 0, "ACK build: %d", len);
	offer(w, buf, (uint32_t)len);
}

static void op_time(struct world *w, struct nrz_in *in)
{
	uint8_t a = nrz_u8(in);

	w->now += (a & 0x80) ? (uint64_t)(a & 0x7F) * 10000000ull : (uint64_t)a * 100000ull;
	w->polling = true;
	agg_engine_poll(w->eng, w->now);
	w->polling = false;
	nrz_short_after_call(w);
}

/* After every operation: failures seen, handles bounded, counters the model's. */
static void check_world(struct world *w)
{
	for (unsigned k = 0; k < w->njobs; k++) {
		struct sjob *j = &w->jobs[k];
		struct nr_job_stats st;

		if (!j->registered) {
			NRZ_CHECK(agg_engine_job_stats(w->eng, j->id, &st) == -ENOENT,
				  "deleted job %u still has stats", j->id);
			continue;
		}
		NRZ_CHECK(agg_engine_job_stats(w->eng, j->id, &st) == 0, "stats of job %u", j->id);
		NRZ_CHECK(st.state == NR_JOB_ACTIVE || st.state == NR_JOB_FAILED, "state %u",
			  st.state);
		if (st.state == NR_JOB_FAILED) {
			NRZ_CHECK(st.reason[0], "job %u failed without a reason", j->id);
			NRZ_CHECK(j->held == 0, "failed job %u still holds %u handles", j->id,
				  j->held);
			if (!j->failed)
				nrz_recs_clear(j);
			j->failed = true;
		}
		NRZ_CHECK(!j->freed_now || j->failed,
			  "job %u handles freed while the job is active", j->id);
		j->freed_now = false;
		NRZ_CHECK(j->held <= j->spec->n_conns * j->pool_pkts,
			  "job %u holds %u handles, bound %u", j->id, j->held,
			  j->spec->n_conns * j->pool_pkts);
		NRZ_CHECK(!j->failed || st.state == NR_JOB_FAILED, "failed job came back");
		if (!j->failed)
			nrz_short_counters(w, j, &st);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nrz_in in = { .p = data, .n = size };
	struct world w;
	struct agg_engine_ops ops = { .emit = cb_emit, .free = cb_free, .send = cb_send,
				     .ctx = &w };
	unsigned nops = 0;
	uint8_t h0;

	memset(&w, 0, sizeof(w));
	w.now = 1000000000ull;
	h0 = nrz_u8(&in);
	w.njobs = 1 + h0 % NRZ_JOBS;
	w.emit_slot = h0 & 2;
	if (w.emit_slot) {
		ops.emit = NULL;
		ops.emit_slot = cb_emit_slot;
	}
	w.eng = agg_engine_create(&ops);
	NRZ_CHECK(w.eng != NULL, "engine create");
	for (unsigned k = 0; k < w.njobs; k++) {
		uint8_t b0 = nrz_u8(&in), b1 = nrz_u8(&in), b2 = nrz_u8(&in);
		uint8_t sb = (b0 & 0x80) ? nrz_u8(&in) : 0;

		nrz_job_shape(&w.jobs[k], k, b0, b1, b2, sb);
		nrz_job_add(&w, &w.jobs[k]);
	}
	while (nrz_left(&in) && nops++ < NRZ_MAX_OPS) {
		uint8_t op = nrz_u8(&in);

		switch (op & 7) {
		case 4: op_ack(&w, &in); break;
		case 5: op_time(&w, &in); break;
		case 6: nrz_op_jobctl(&w, &in); break;
		case 7: op_data(&w, &in, op, true); break;
		default: op_data(&w, &in, op, false); break;
		}
		check_world(&w);
	}

	if (getenv("NRZ_VERBOSE")) {
		uint64_t ctr[NR_ECTR_MAX];

		agg_engine_counters(w.eng, ctr);
		fprintf(stderr, "  %u ops, %zu packets:", nops, w.nhs);
		for (unsigned k = 0; k < NR_ECTR_MAX; k++)
			if (ctr[k])
				fprintf(stderr, " %s=%llu", nr_engine_ctr_names[k],
					(unsigned long long)ctr[k]);
		fputc('\n', stderr);
	}
	w.destroying = true;
	agg_engine_destroy(w.eng);
	for (size_t k = 0; k < w.nhs; k++) {
		NRZ_CHECK(w.hs[k]->state == H_RETURNED, "handle %zu (job %d g=%u) leaked at destroy",
			  k, w.hs[k]->job, w.hs[k]->g);
		free(w.hs[k]->frame);
		free(w.hs[k]->orig);
		free(w.hs[k]);
	}
	free(w.hs);
	for (unsigned k = 0; k < w.njobs; k++) {
		nrz_recs_clear(&w.jobs[k]);
		free(w.jobs[k].spec);
	}
	return 0;
}
