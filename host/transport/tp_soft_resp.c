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
 * A write with immediate that completes while no receive is posted is kept
 * (imm, length) and completes the next receive posted: we never send an RNR
 * NAK.  An RNIC would answer RNR NAK and the requester would retry; the data
 * seen by the application is the same, and our requester handles RNR NAKs
 * from RNICs.
 */
#include <stdio.h>

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

/* ACK (syn 0x00-0x1F) or NAK for psn, into the send batch. */
static void send_ack(struct soft_qp *qp, uint8_t syn, uint32_t psn)
{
	const struct nr_build_args a = {
		.opcode = NR_OP_RC_ACK, .psn = psn, .migreq = true, .syndrome = syn, .msn = qp->msn,
	};

	soft_tx_build(qp->tp, qp, &a, NULL, 0, SOFT_TX_ACK, -1);
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

void soft_resp_rx(struct soft_qp *qp, const uint8_t *pkt, const struct nr_pkt *p)
{
	struct soft_tp *tp = qp->tp;
	int32_t d = nr_psn_diff(p->psn, qp->epsn);
	bool first = p->mask & NR_OPF_FIRST, last = p->mask & NR_OPF_LAST;
	uint32_t plen = p->pay_len;

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
