/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft transport, requester side (rxe_req.c + rxe_comp.c): segmentation of
 * posted writes to the path MTU, the packet window, AckReq placement, ACK and
 * NAK processing, the local ACK timeout with go-back-N and the retry limits.
 *
 * RNIC and RXE profiles (nr_transport.h; rxe, ConnectX and the IB spec):
 *   AckReq     on a message's last packet, on the first packet sent while no
 *              ACK timer runs (ConnectX captures; rxe since 6.2), and at least
 *              every ackreq_every packets (rxe: RXE_MAX_PKT_PER_ACK).
 *   timeout    RXE: fixed, 4.096 us * 2^timeout; it restarts on progress.
 *              RNIC: adaptive, as ConnectX's adaptive retransmission: the
 *              first wait is 1/32 of that (at least 1 ms), each timeout
 *              without progress doubles it up to the fixed value, progress
 *              brings it back to the first.
 *   retry_cnt  RXE: one retry is spent per timeout and per sequence NAK that
 *              starts a go-back-N without progress since the last one; any
 *              progress (an ACK or NAK covering the oldest unacknowledged
 *              PSN) restores the budget; when it is spent the QP moves to
 *              error (RETRY_EXCEEDED, the rest FLUSHED).  7 means 7 retries,
 *              as the spec and mlx5 have it (rxe treats 7 as infinite).
 *              RNIC: the budget is the time retry_cnt + 1 fixed timeouts take
 *              (ConnectX: the QP's ack timeout times its retries) without
 *              progress; sequence NAKs spend nothing.
 *   seq NAK    at PSN p acknowledges p - 1 and goes back to p; while that
 *              retry is under way (no progress yet) further sequence NAKs only
 *              acknowledge (rxe: comp.started_retry), so one loss seen by two
 *              NAKs (the box's and the receiver's) costs one go-back-N.
 *   RNR NAK    at PSN p acknowledges p - 1, waits the AETH timer, then goes
 *              back to p; counted against rnr_retry only (7: infinite, never
 *              against retry_cnt, as rxe_comp.c COMPST_RNR_RETRY); the ACK
 *              timer is stopped during the wait and restarts with the resend.
 * SR profile: the RNIC rules, and a selective NAK (PSN q, run n) queues
 *              q .. q + n - 1 for a resend, each alone, with AckReq, before
 *              any new data; it acknowledges nothing.  A PSN queued within
 *              SOFT_SR_DAMP_NS is not queued again, one at or past snd_nxt
 *              not at all (a go-back-N under way sends it).  A timeout, a
 *              sequence NAK and an RNR NAK go back N as in the RNIC profile.
 *              A profile other than SR takes a selective NAK for an error.
 * Legacy profile: AckReq on a message's last packet, every 64th packet and
 * when the window fills; the timeout doubles per retry without progress;
 * sequence NAKs always go back; only timeouts spend retries.
 *
 * PSNs: a WR gets its PSN range when it is posted (psn .. psn + npkts - 1).
 *   snd_una  oldest PSN not acknowledged
 *   snd_nxt  next PSN to transmit; sq_cur is the WR that holds it
 *   snd_hi   one past the highest PSN ever handed to the socket
 * Go-back-N moves snd_nxt back (to the NAK'd PSN or to snd_una); packets
 * between snd_nxt and snd_hi then go out again.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tp_soft_cq.h"
#include "tp_soft_net.h"
#include "tp_soft_req.h"

static inline struct soft_swr *swr(const struct soft_qp *qp, uint32_t idx)
{
	return &qp->sq[idx & (qp->sq_cap - 1)];
}

uint32_t soft_npkts(uint32_t len, uint32_t mtu)
{
	return len ? (len - 1) / mtu + 1 : 1;
}

/* Transmit again from psn, which lies in [snd_una, snd_hi]. */
void soft_req_rewind(struct soft_qp *qp, uint32_t psn)
{
	uint32_t c = qp->sq_head;

	while (c != qp->sq_tail && nr_psn_diff(psn, swr(qp, c)->psn) >= (int32_t)swr(qp, c)->npkts)
		c++;
	qp->snd_nxt = psn;
	qp->sq_cur = c;
}

bool soft_req_can_send(const struct soft_qp *qp)
{
	return qp->state == SOFT_QP_RTS && qp->sq_cur != qp->sq_tail && !qp->rnr_until &&
	       (uint32_t)nr_psn_diff(qp->snd_nxt, qp->snd_una) < qp->tp->max_inflight;
}

/* Packet i of w, PSN psn, into the send batch. */
static void send_data(struct soft_qp *qp, const struct soft_swr *w, uint32_t i, uint32_t psn,
		      bool ackreq)
{
	struct soft_tp *tp = qp->tp;
	uint32_t off = i * tp->mtu, plen = w->len - off < tp->mtu ? w->len - off : tp->mtu;
	bool last = i + 1 == w->npkts;
	const struct nr_build_args a = {
		.opcode = w->npkts == 1 ? NR_OP_RC_WRITE_ONLY_IMM :
			  i == 0 ? NR_OP_RC_WRITE_FIRST :
			  last ? NR_OP_RC_WRITE_LAST_IMM : NR_OP_RC_WRITE_MIDDLE,
		.psn = psn, .ackreq = ackreq || last, .migreq = true,
		.va = w->rva, .rkey = w->rkey, .dma_len = w->len, .imm = w->imm,
	};
	bool de = w->de && (w->de[i / 64] >> (i % 64) & 1);
	int tos = de ? w->de_tos : w->tos;

	tp->st.tx_data++;
	tp->st.tx_ackreq += a.ackreq;
	tp->st.tx_tclass += tos >= 0;
	tp->st.tx_de += de;
	soft_tx_build(tp, qp, &a, w->laddr + off, plen, SOFT_TX_DATA, tos);
}

/* ---- selective repeat (SR profile) ---------------------------------------- */

static int sr_alloc(struct soft_qp *qp)
{
	uint32_t cap = 16;

	while (cap < qp->tp->max_inflight && cap < (1u << 16))
		cap <<= 1;
	qp->sr_mark = calloc(cap, sizeof(*qp->sr_mark));
	qp->sr_q = malloc(2 * (size_t)cap * sizeof(*qp->sr_q));
	if (!qp->sr_mark || !qp->sr_q) {
		free(qp->sr_mark);
		free(qp->sr_q);
		qp->sr_mark = NULL;
		qp->sr_q = NULL;
		return -1;
	}
	qp->sr_cap = cap;
	qp->sr_qcap = 2 * cap;
	return 0;
}

/* A selective NAK for psn .. psn + run - 1: what was sent of it, queued for a resend. */
static void sr_nak_resend(struct soft_qp *qp, uint32_t psn, uint32_t run)
{
	struct soft_tp *tp = qp->tp;
	uint32_t sent = nr_psn_sub(qp->snd_hi, qp->snd_una), off = nr_psn_sub(psn, qp->snd_una);

	if (!qp->sr_q && sr_alloc(qp))
		return; /* no memory: the ACK timeout goes back instead */
	for (uint32_t k = 0; k < run && off + k < sent; k++) {
		uint32_t y = nr_psn_add(psn, k);
		struct soft_sr_mark *m = &qp->sr_mark[y & (qp->sr_cap - 1)];

		if (nr_psn_diff(y, qp->snd_nxt) >= 0)
			continue; /* a go-back-N under way sends it anyway */
		if (m->psn == y && m->ns && tp->now - m->ns < SOFT_SR_DAMP_NS) {
			tp->st.rx_nak_sel_damped++;
			continue;
		}
		if (qp->sr_tail - qp->sr_head == qp->sr_qcap)
			break;
		*m = (struct soft_sr_mark){ .psn = y, .ns = tp->now };
		qp->sr_q[qp->sr_tail++ & (qp->sr_qcap - 1)] = y;
	}
}

bool soft_req_resend_due(const struct soft_qp *qp)
{
	return qp->sr_head != qp->sr_tail && qp->state == SOFT_QP_RTS && !qp->rnr_until;
}

/* The queued selective resends out, each alone and with AckReq. */
static void sr_resend(struct soft_qp *qp)
{
	struct soft_tp *tp = qp->tp;

	while (soft_req_resend_due(qp) && !tp->tx_blocked) {
		uint32_t y = qp->sr_q[qp->sr_head++ & (qp->sr_qcap - 1)], c = qp->sq_head;

		/* acknowledged since, or to be sent again by a go-back-N */
		if (nr_psn_diff(y, qp->snd_una) < 0 || nr_psn_diff(y, qp->snd_nxt) >= 0)
			continue;
		while (nr_psn_diff(y, swr(qp, c)->psn) >= (int32_t)swr(qp, c)->npkts)
			c++; /* y < snd_nxt: its WR is at or before sq_cur */
		tp->st.tx_retrans++;
		tp->st.tx_sel_resent++;
		if (!qp->ack_deadline)
			qp->ack_deadline = tp->now + soft_ack_wait(qp);
		send_data(qp, swr(qp, c), nr_psn_sub(y, swr(qp, c)->psn), y, true);
	}
}

/* Send the selective resends, then what the window allows. */
void soft_req_tx(struct soft_qp *qp)
{
	struct soft_tp *tp = qp->tp;

	if (qp->rnr_until) {
		if (tp->now < qp->rnr_until)
			return;
		qp->rnr_until = 0;     /* the resend below restarts the ACK timer */
	}
	if (qp->sr_head != qp->sr_tail)
		sr_resend(qp);
	while (soft_req_can_send(qp) && !tp->tx_blocked) {
		const struct soft_swr *w = swr(qp, qp->sq_cur);
		uint32_t psn = qp->snd_nxt, i = nr_psn_sub(psn, w->psn);
		bool ackreq;

		if (soft_rnic(tp)) {
			ackreq = !qp->ack_deadline || ++qp->noack >= tp->ackreq_every;
		} else {
			bool fills = (uint32_t)nr_psn_diff(psn, qp->snd_una) + 1 >= tp->max_inflight;

			ackreq = fills || i % SOFT_ACKREQ_EVERY == SOFT_ACKREQ_EVERY - 1;
		}
		if (ackreq || i + 1 == w->npkts)
			qp->noack = 0;
		/* State first: a flush inside send_data may rewind snd_nxt. */
		if (nr_psn_lt(psn, qp->snd_hi)) {
			tp->st.tx_retrans++;
		} else {
			if (qp->snd_una == qp->snd_hi)     /* nothing was outstanding */
				qp->progress_ns = tp->now;
			qp->snd_hi = nr_psn_add(psn, 1);
		}
		qp->snd_nxt = nr_psn_add(psn, 1);
		if (i + 1 == w->npkts)
			qp->sq_cur++;
		if (!qp->ack_deadline)
			qp->ack_deadline = tp->now + soft_ack_wait(qp);
		send_data(qp, w, i, psn, ackreq);
	}
}

/* Everything before una is acknowledged: complete the WRs it covers. */
static void acked_upto(struct soft_qp *qp, uint32_t una)
{
	struct soft_tp *tp = qp->tp;

	if (!nr_psn_lt(qp->snd_una, una))
		return;
	qp->snd_una = una;
	qp->progress_ns = tp->now;
	qp->naks_idle = 0;
	qp->retries = 0;
	qp->rnr_retries = 0;
	qp->retrying = false;
	while (qp->sq_head != qp->sq_tail) {
		const struct soft_swr *w = swr(qp, qp->sq_head);

		if (nr_psn_diff(una, w->psn) < (int32_t)w->npkts)
			break;
		soft_cq_push(tp, qp, w->wr_id, NR_WC_SEND, NR_WC_OK, 0, 0);
		qp->sq_head++;
	}
	if (nr_psn_lt(qp->snd_nxt, una))
		soft_req_rewind(qp, una);
	if ((int32_t)(qp->sq_cur - qp->sq_head) < 0)
		qp->sq_cur = qp->sq_head;
	qp->ack_deadline = nr_psn_lt(una, qp->snd_hi) ? tp->now + soft_ack_wait(qp) : 0;
}

/* IBTA RNR NAK timer codes, in microseconds (code 0 is the longest). */
static uint64_t rnr_us(uint8_t code)
{
	static const uint32_t t[32] = {
		655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280,
		1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440,
		81920, 122880, 163840, 245760, 327680, 491520,
	};
	return t[code & 31];
}

static const char *nak_str(uint8_t syn)
{
	switch (syn) {
	case NR_AETH_NAK_INVALID_REQ: return "invalid request";
	case NR_AETH_NAK_REM_ACC_ERR: return "remote access error";
	case NR_AETH_NAK_REM_OP_ERR: return "remote operational error";
	case NR_AETH_NAK_INV_RD_REQ: return "invalid RD request";
	case NR_AETH_NAK_SELECTIVE:
		return "selective (a selective-repeat peer: both ends must use the sr profile)";
	}
	return "reserved NAK code";
}

/* The retries are spent (why: what ran into the limit): the QP moves to error. */
static void retry_exceeded(struct soft_qp *qp, const char *why)
{
	struct soft_tp *tp = qp->tp;
	char heard[48] = "nothing from it since", timeout[64];

	if (qp->peer_rx_ns && qp->peer_rx_ns >= qp->progress_ns)
		snprintf(heard, sizeof(heard), "its last packet %.3g ms ago",
			 (double)(tp->now - qp->peer_rx_ns) / 1e6);
	if (soft_adaptive(qp))
		snprintf(timeout, sizeof(timeout), "adaptive timeout %.3g ms doubling to %.3g ms",
			 (double)soft_adaptive_base(tp) / 1e6, (double)tp->timeout_ns / 1e6);
	else
		snprintf(timeout, sizeof(timeout), "%.3g ms timeout%s", (double)tp->timeout_ns / 1e6,
			 soft_rnic(tp) ? "" : ", doubled per retry");
	soft_qp_to_error(qp, NR_WC_RETRY_EXCEEDED, NR_WC_FLUSHED,
			 "no ACK from %s qpn 0x%x psn 0x%x after %u retries (%s; last: %s); no "
			 "progress for %.3g ms (%u sequence NAKs, %s), psn 0x%x..0x%x in flight",
			 qp->peer, qp->rqpn, qp->snd_una, qp->retries, timeout, why,
			 (double)(tp->now - qp->progress_ns) / 1e6, qp->naks_idle, heard,
			 qp->snd_una, nr_psn_sub(qp->snd_hi, 1));
}

/*
 * One retry (why: what triggered it); false when none is left: the QP is then
 * in error.  RNIC (adaptive): the budget is time, retry_cnt + 1 timeouts
 * without progress; RXE and legacy: retry_cnt retries.
 */
static bool spend_retry(struct soft_qp *qp, const char *why)
{
	struct soft_tp *tp = qp->tp;
	bool spent = soft_adaptive(qp) ?
		     tp->now - qp->progress_ns >= (tp->retry_cnt + 1ull) * tp->timeout_ns :
		     qp->retries >= tp->retry_cnt;

	if (spent) {
		retry_exceeded(qp, why);
		return false;
	}
	qp->retries++;
	return true;
}

void soft_req_rx_ack(struct soft_qp *qp, const struct nr_pkt *p)
{
	struct soft_tp *tp = qp->tp;
	uint8_t syn = p->aeth_syn;
	uint32_t psn = p->psn;
	/*
	 * An ACK covers psn itself; a NAK covers what is before psn.  Either
	 * counts only for PSNs sent and not acknowledged, [snd_una, snd_hi):
	 * measured as distances from snd_una (fewer than 2^23 are outstanding),
	 * not with signed PSN comparisons, which put a PSN 2^23 away on both
	 * sides -- a NAK there would move snd_una half the PSN space and send
	 * "packet" 2^23 of a posted write, from far outside its buffer.
	 */
	bool ack = nr_syn_is_ack(syn);
	uint32_t sent = nr_psn_sub(qp->snd_hi, qp->snd_una);
	uint32_t upto = nr_psn_sub(ack ? nr_psn_add(psn, 1) : psn, qp->snd_una);
	bool in_range = ack ? upto <= sent : upto < sent;

	if (ack) {
		tp->st.rx_acks++;
		if (!in_range) {
			tp->st.rx_stale_acks++;
			return;
		}
		acked_upto(qp, nr_psn_add(psn, 1));
		return;
	}
	if (!in_range) {
		tp->st.rx_stale_acks++;
		return;
	}
	if (syn == NR_AETH_NAK_SELECTIVE && soft_sr(tp)) {
		tp->st.rx_nak_sel++;
		sr_nak_resend(qp, psn, nr_sel_nak_run(p->aeth_msn));
	} else if (syn == NR_AETH_NAK_PSN_SEQ_ERR) {
		tp->st.rx_nak_seq++;
		acked_upto(qp, psn);
		qp->naks_idle++;
		if (soft_rnic(tp)) {
			if (qp->retrying) {
				tp->st.rx_nak_seq_retrying++;
				return;
			}
			if (!soft_adaptive(qp) && !spend_retry(qp, "NAK sequence error"))
				return;
			qp->retrying = true;
		}
		soft_req_rewind(qp, psn);
	} else if (nr_syn_is_rnr(syn)) {
		tp->st.rx_nak_rnr++;
		acked_upto(qp, psn);
		qp->progress_ns = tp->now;     /* alive, not ready: no ACK timeout runs out */
		if (tp->rnr_retry != 7 && qp->rnr_retries++ >= tp->rnr_retry) {
			soft_qp_to_error(qp, NR_WC_RETRY_EXCEEDED, NR_WC_FLUSHED,
					 "RNR NAK from %s qpn 0x%x for psn 0x%x after %u RNR retries "
					 "(rnr_retry %u): the responder stays not ready", qp->peer,
					 qp->rqpn, psn, tp->rnr_retry, tp->rnr_retry);
			return;
		}
		soft_req_rewind(qp, psn);
		qp->rnr_until = tp->now + rnr_us(syn) * 1000;
		qp->ack_deadline = 0;
	} else {
		tp->st.rx_nak_other++;
		soft_qp_to_error(qp, NR_WC_REMOTE_ERROR, NR_WC_FLUSHED,
				 "NAK %s (syndrome 0x%02x) from %s qpn 0x%x for psn 0x%x: the "
				 "responder rejected the write (check remote address, rkey, length)",
				 nak_str(syn), syn, qp->peer, qp->rqpn, psn);
	}
}

/* Local ACK timeout: go back to the oldest unacknowledged PSN, or give up. */
void soft_req_timer(struct soft_qp *qp)
{
	struct soft_tp *tp = qp->tp;

	if (!qp->ack_deadline || tp->now < qp->ack_deadline || qp->state != SOFT_QP_RTS)
		return;
	if (!nr_psn_lt(qp->snd_una, qp->snd_hi)) {
		qp->ack_deadline = 0;
		return;
	}
	if (!spend_retry(qp, "ACK timeout"))
		return;
	tp->st.timeouts++;
	qp->retrying = soft_rnic(tp);
	qp->sr_head = qp->sr_tail; /* the go-back-N resends them all */
	soft_req_rewind(qp, qp->snd_una);
	qp->ack_deadline = tp->now + soft_ack_wait(qp);
}
