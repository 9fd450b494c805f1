/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft transport, responder side (rxe_resp.c): PSN checks against the
 * expected PSN, opcode-sequence and RETH checks, the write into registered
 * memory, receive completions, ACKs and NAKs.
 *
 *   PSN == epsn  validate, execute, advance epsn; an ACK is owed.
 *   PSN >  epsn  one NAK PSN sequence error (PSN = epsn) per epsn value, then
 *                silent drops until epsn arrives.
 *   PSN <  epsn  duplicate: never executed again; re-ACKed with epsn - 1.
 *
 * ACKs: a packet that owes an ACK puts its QP on the transport's ACK list;
 * the list is flushed (one ACK per QP, PSN epsn - 1, MSN = messages
 * completed, credits invalid 0x1F as ConnectX sends) after each receive
 * batch, so several owed ACKs of one batch coalesce into one.  Which packets
 * owe one:
 *   RNIC profile   an executed packet with AckReq, and any duplicate (as
 *                  rxe_resp.c: ACKs on AckReq only, duplicates re-ACKed);
 *                  besides, an ACK at the latest after SOFT_ACK_COALESCE
 *                  executed packets without one, so a requester that
 *                  never asks still hears from us.
 *   legacy         every packet.
 *
 * SR profile (selective repeat): a packet ahead of epsn, within twice the
 * window, is kept whole and executed when epsn reaches it; a duplicate of a
 * kept one is dropped.  Each PSN below the highest arrival - SOFT_SR_REORDER
 * that is missing is named once in a selective NAK (runs of missing PSNs, a
 * NAK each; NR_AETH_NAK_SELECTIVE); the run at epsn is named again by the
 * timer (soft_resp_sr_timer) two NAK round trips after its NAK (the NAK or
 * the resend was lost), or after the gap opened when no NAK named it (a gap
 * fewer than SOFT_SR_REORDER packets follow); a loss nothing follows is left
 * to the requester's ACK timeout.
 *
 * A write with immediate that completes while no receive is posted is kept
 * (imm, length) and completes the next receive posted: we never send an RNR
 * NAK.  An RNIC would answer RNR NAK and the requester would retry; the data
 * seen by the application is the same, and our requester handles RNR NAKs
 * from RNICs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tp_soft_cq.h"
#include "tp_soft_net.h"
#include "tp_soft_resp.h"

void soft_resp_ack_owed(struct soft_qp *qp)
{
	struct soft_tp *tp = qp->tp;

	if (qp->ack_due)
		return;
	qp->ack_due = true;
	qp->ack_next = tp->ack_list;
	tp->ack_list = qp;
}

/* ACK (syn 0x00-0x1F) or NAK for psn, with MSN field msn, into the send batch. */
static void send_aeth(struct soft_qp *qp, uint8_t syn, uint32_t psn, uint32_t msn)
{
	const struct nr_build_args a = {
		.opcode = NR_OP_RC_ACK,
		.psn = psn,
		.migreq = true,
		.syndrome = syn,
		.msn = msn,
	};

	soft_tx_build(qp->tp, qp, &a, NULL, 0, SOFT_TX_ACK, -1);
}

static void send_ack(struct soft_qp *qp, uint8_t syn, uint32_t psn)
{
	send_aeth(qp, syn, psn, qp->msn);
}

void soft_resp_flush_acks(struct soft_tp *tp)
{
	struct soft_qp *qp = tp->ack_list, *next;

	tp->ack_list = NULL;
	for (; qp; qp = next) {
		next = qp->ack_next;
		qp->ack_due = false;
		if (qp->state != SOFT_QP_RTS)
			continue;
		tp->st.tx_acks++;
		qp->unacked = 0;
		send_ack(qp, NR_AETH_CREDIT_INVALID, nr_psn_sub(qp->epsn, 1));
	}
}

static void recv_done(struct soft_qp *qp, uint32_t imm, uint32_t len)
{
	struct soft_tp *tp = qp->tp;

	if (qp->rq_head != qp->rq_tail) {
		uint64_t wr_id = qp->rq[qp->rq_head++ & (qp->rq_cap - 1)];

		soft_cq_push(tp, qp, wr_id, NR_WC_RECV, NR_WC_OK, imm, len);
		return;
	}
	if (qp->er_tail - qp->er_head == qp->er_cap &&
	    soft_ring_grow((void **)&qp->er, &qp->er_cap, qp->er_head, qp->er_tail,
			   sizeof(*qp->er))) {
		soft_qp_to_error(qp, NR_WC_FLUSHED, NR_WC_LOCAL_ERROR,
				 "out of memory keeping a completion from %s qpn 0x%x "
				 "(no receive posted)", qp->peer, qp->rqpn);
		return;
	}
	qp->er[qp->er_tail++ & (qp->er_cap - 1)] = (struct soft_early_recv){ imm, len };
}

/* Invalid request or remote access error: NAK it, then the QP is in error. */
static void resp_fail(struct soft_qp *qp, const struct nr_pkt *p, uint8_t syn, const char *why)
{
	struct soft_tp *tp = qp->tp;

	if (syn == NR_AETH_NAK_REM_ACC_ERR)
		tp->st.rx_access_err++;
	else
		tp->st.rx_bad_req++;
	tp->st.tx_nak_other++;
	send_ack(qp, syn, p->psn);
	soft_qp_to_error(qp, NR_WC_FLUSHED, NR_WC_LOCAL_ERROR,
			 "write from %s qpn 0x%x psn 0x%x (%s, rkey 0x%x va 0x%llx len %u "
			 "payload %u) rejected: %s", qp->peer, qp->rqpn, p->psn,
			 nr_opcode_name(p->opcode), p->reth_rkey, (unsigned long long)p->reth_va,
			 p->reth_len, p->pay_len, why);
}

/* Packet p, PSN epsn: validated, executed, epsn advanced. */
static void resp_exec(struct soft_qp *qp, const uint8_t *pkt, const struct nr_pkt *p)
{
	struct soft_tp *tp = qp->tp;
	bool first = p->mask & NR_OPF_FIRST, last = p->mask & NR_OPF_LAST;
	uint32_t plen = p->pay_len;

	if (first == qp->in_msg) {
		resp_fail(qp, p, NR_AETH_NAK_INVALID_REQ, first ?
			  "a new message starts before the previous one ended" :
			  "middle or last packet without a first one");
		return;
	}
	if (first) {
		const struct soft_mr *mr = NULL;

		/* A zero-length write touches no memory: no R_Key check (IBTA 9.7.4.1.5). */
		if (p->reth_len && !(mr = soft_mr_find(tp, p->reth_rkey, p->reth_va, p->reth_len))) {
			resp_fail(qp, p, NR_AETH_NAK_REM_ACC_ERR,
				  "rkey unknown or range outside its memory region");
			return;
		}
		qp->wptr = mr ? mr->addr + (p->reth_va - mr->va) : NULL;
		qp->wrem = qp->mlen = p->reth_len;
	}
	if ((!last && plen != tp->mtu) || plen > qp->wrem || (last && plen != qp->wrem)) {
		resp_fail(qp, p, NR_AETH_NAK_INVALID_REQ,
			  "payload length disagrees with the path MTU or the RETH length");
		return;
	}
	if (plen) {
		memcpy(qp->wptr, pkt + p->pay_off, plen);
		qp->wptr += plen;
		qp->wrem -= plen;
	}
	qp->epsn = nr_psn_add(qp->epsn, 1);
	qp->nak_sent = false;
	qp->in_msg = !last;
	tp->st.rx_data++;
	if (last) {
		qp->msn = (qp->msn + 1) & NR_AETH_MSN_MASK;
		if (p->mask & NR_OPF_IMMDT)
			recv_done(qp, p->imm, qp->mlen);
	}
	if (!soft_rnic(tp) || p->ackreq || ++qp->unacked >= SOFT_ACK_COALESCE)
		soft_resp_ack_owed(qp);
}

/* ---- selective repeat (SR profile) ---------------------------------------- */

static int ooo_alloc(struct soft_qp *qp)
{
	uint32_t cap = 16;

	while (cap < 2 * qp->tp->max_inflight && cap < (1u << 16))
		cap <<= 1;
	qp->ooo = calloc(cap, sizeof(*qp->ooo));
	qp->ooo_buf = malloc((size_t)cap * SOFT_PKT_MAX);
	if (!qp->ooo || !qp->ooo_buf) {
		free(qp->ooo);
		free(qp->ooo_buf);
		qp->ooo = NULL;
		qp->ooo_buf = NULL;
		return -1;
	}
	qp->ooo_cap = cap;
	return 0;
}

static struct soft_ooo *ooo_at(const struct soft_qp *qp, uint32_t psn)
{
	return &qp->ooo[psn & (qp->ooo_cap - 1)];
}

static bool ooo_has(const struct soft_qp *qp, uint32_t psn)
{
	const struct soft_ooo *o = ooo_at(qp, psn);

	return o->used && o->psn == psn;
}

/* Send a selective NAK for epsn + start .. epsn + start + run - 1. */
static void sr_nak_send(struct soft_qp *qp, int32_t start, int32_t run)
{
	struct soft_tp *tp = qp->tp;

	if (start == 0) {
		qp->sr_una_again = qp->sr_una_ns && qp->sr_una_psn == qp->epsn;
		tp->st.tx_nak_sel_again += qp->sr_una_again;
		qp->sr_una_psn = qp->epsn;
		qp->sr_una_ns = tp->now;
	}
	tp->st.tx_nak_sel++;
	send_aeth(qp, NR_AETH_NAK_SELECTIVE, nr_psn_add(qp->epsn, (uint32_t)start), (uint32_t)run);
}

/*
 * A packet ahead of epsn came at epsn + d: every PSN more than
 * SOFT_SR_REORDER below it not yet named and still missing is named now, a
 * selective NAK per run.
 */
static void sr_name_missing(struct soft_qp *qp, int32_t d)
{
	int32_t lim = d - SOFT_SR_REORDER, k = nr_psn_diff(qp->sr_nak_hi, qp->epsn);

	if (k < 0)
		k = 0;
	while (k < lim) {
		int32_t start;

		if (ooo_has(qp, nr_psn_add(qp->epsn, (uint32_t)k))) {
			k++;
			continue;
		}
		for (start = k++; k < lim && !ooo_has(qp, nr_psn_add(qp->epsn, (uint32_t)k)); k++)
			;
		sr_nak_send(qp, start, k - start);
	}
	if (lim > 0 && nr_psn_diff(nr_psn_add(qp->epsn, (uint32_t)lim), qp->sr_nak_hi) > 0)
		qp->sr_nak_hi = nr_psn_add(qp->epsn, (uint32_t)lim);
}

/* Packet p, ahead of epsn by d: kept for its turn (or dropped beyond the store). */
static void sr_keep(struct soft_qp *qp, const uint8_t *pkt, const struct nr_pkt *p, int32_t d)
{
	struct soft_tp *tp = qp->tp;
	struct soft_ooo *o;

	if (p->end > SOFT_PKT_MAX || p->pay_len > tp->mtu) {
		tp->st.rx_bad_req++; /* no packet of ours: not kept (nor checked: not its turn) */
		return;
	}
	if ((!qp->ooo && ooo_alloc(qp)) || (uint32_t)d >= qp->ooo_cap) {
		tp->st.rx_out_of_seq++; /* the requester's timeout resends it */
		return;
	}
	o = ooo_at(qp, p->psn);
	if (o->used && o->psn == p->psn) {
		tp->st.rx_dup++;
		return;
	}
	memcpy(qp->ooo_buf + (size_t)(o - qp->ooo) * SOFT_PKT_MAX, pkt, p->end);
	o->p = *p;
	o->psn = p->psn;
	o->used = true;
	if (qp->sr_kept++ == 0)
		qp->sr_gap_ns = tp->now;
	tp->st.rx_ooo_kept++;
	sr_name_missing(qp, d);
}

/* epsn came: a round-trip sample if a NAK named it once, then the kept
 * packets now in turn executed. */
static void sr_drain(struct soft_qp *qp, uint32_t psn)
{
	struct soft_tp *tp = qp->tp;

	if (qp->sr_una_ns && qp->sr_una_psn == psn && !qp->sr_una_again) {
		uint64_t s = tp->now - qp->sr_una_ns;

		qp->sr_rtt_ns = qp->sr_rtt_ns ? qp->sr_rtt_ns - qp->sr_rtt_ns / 8 + s / 8 : s;
		qp->sr_una_ns = 0;
	}
	while (qp->state == SOFT_QP_RTS && ooo_has(qp, qp->epsn)) {
		struct soft_ooo *o = ooo_at(qp, qp->epsn);

		o->used = false;
		qp->sr_kept--;
		resp_exec(qp, qp->ooo_buf + (size_t)(o - qp->ooo) * SOFT_PKT_MAX, &o->p);
	}
	if (qp->sr_kept)
		qp->sr_gap_ns = tp->now; /* the next gap */
}

uint64_t soft_resp_sr_due(const struct soft_qp *qp)
{
	uint64_t w = 2 * (qp->sr_rtt_ns ? qp->sr_rtt_ns : SOFT_SR_RTT0_NS);

	if (!qp->sr_kept || qp->state != SOFT_QP_RTS)
		return 0;
	if (w < SOFT_SR_WAIT_NS)
		w = SOFT_SR_WAIT_NS;
	return (qp->sr_una_ns && qp->sr_una_psn == qp->epsn ? qp->sr_una_ns : qp->sr_gap_ns) + w;
}

void soft_resp_sr_timer(struct soft_qp *qp)
{
	uint64_t due = soft_resp_sr_due(qp);
	int32_t k = 1;

	if (!due || qp->tp->now < due)
		return;
	while ((uint32_t)k < qp->ooo_cap && !ooo_has(qp, nr_psn_add(qp->epsn, (uint32_t)k)))
		k++;
	sr_nak_send(qp, 0, k);
}

void soft_resp_rx(struct soft_qp *qp, const uint8_t *pkt, const struct nr_pkt *p)
{
	struct soft_tp *tp = qp->tp;
	int32_t d = nr_psn_diff(p->psn, qp->epsn);

	if (d > 0 && soft_sr(tp)) {
		sr_keep(qp, pkt, p, d);
		return;
	}
	if (d > 0) {
		tp->st.rx_out_of_seq++;
		if (!qp->nak_sent) {
			qp->nak_sent = true;
			tp->st.tx_nak_seq++;
			send_ack(qp, NR_AETH_NAK_PSN_SEQ_ERR, qp->epsn);
		}
		return;
	}
	if (d < 0) {
		tp->st.rx_dup++;
		soft_resp_ack_owed(qp);
		return;
	}
	resp_exec(qp, pkt, p);
	if (qp->ooo)
		sr_drain(qp, p->psn);
}
