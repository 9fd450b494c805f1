/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soft transport: a user-space RoCEv2 RC requester and responder over
 * UDP port 4791 (see tp_soft_types.h for the file split).  This file, on top,
 * owns the objects -- transport, memory regions, QPs -- the posting
 * functions, the dispatch of received packets to the requester (ACKs) or the
 * responder (writes), the poll loop and the extension API of tp_soft.h.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "tp_soft_cq.h"
#include "tp_soft_icrc.h"
#include "tp_soft_net.h"
#include "tp_soft_req.h"
#include "tp_soft_resp.h"
#include "tp_soft_share.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint32_t rand32(void)
{
	uint32_t v;

	if (getrandom(&v, sizeof(v), 0) != sizeof(v))
		v = (uint32_t)now_ns() * 2654435761u ^ (uint32_t)getpid();
	return v;
}

/* ---- memory regions ------------------------------------------------------ */

static int soft_reg_mr(struct nr_tp *t, void *addr, size_t len, struct nr_tp_mr *mr)
{
	struct soft_tp *tp = soft_tp(t);
	uint32_t rkey;

	if (!mr || (!addr && len))
		return -EINVAL;
	if (tp->nmrs == tp->mrs_cap) {
		unsigned ncap = tp->mrs_cap ? tp->mrs_cap * 2 : 8;
		struct soft_mr *n = realloc(tp->mrs, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		tp->mrs = n;
		tp->mrs_cap = ncap;
	}
	do {
		rkey = rand32();
		for (unsigned i = 0; rkey && i < tp->nmrs; i++)
			if (tp->mrs[i].rkey == rkey)
				rkey = 0;
	} while (!rkey);
	tp->mrs[tp->nmrs++] = (struct soft_mr){ .addr = addr, .len = len,
						.va = (uint64_t)(uintptr_t)addr, .rkey = rkey };
	*mr = (struct nr_tp_mr){ .addr = addr, .len = len, .va = (uint64_t)(uintptr_t)addr,
				 .rkey = rkey, .lkey = rkey, .priv = NULL };
	return 0;
}

static void soft_dereg_mr(struct nr_tp *t, struct nr_tp_mr *mr)
{
	struct soft_tp *tp = soft_tp(t);

	for (unsigned i = 0; mr && i < tp->nmrs; i++)
		if (tp->mrs[i].rkey == mr->rkey) {
			tp->mrs[i] = tp->mrs[--tp->nmrs];
			mr->rkey = mr->lkey = 0;
			return;
		}
}

/* ---- transport -------------------------------------------------------- */

static const uint32_t ib_mtus[] = { 256, 512, 1024, 2048, 4096 };

/* NR_SOFT_GSO=0|1: offloads off, or as cfg says; 0, or -EINVAL with err set. */
static int env_offload(uint8_t *offload, char *err, size_t errlen)
{
	const char *env = getenv("NR_SOFT_GSO");

	if (!env || !*env)
		return 0;
	if (strcmp(env, "0") && strcmp(env, "1")) {
		snprintf(err, errlen, "soft: NR_SOFT_GSO=\"%s\": use 1 (UDP GSO and GRO where the "
			 "kernel has them) or 0 (a datagram a send: IP ID 0, UDP checksum 0)", env);
		return -EINVAL;
	}
	if (!strcmp(env, "0"))
		*offload = NR_TP_OFFLOAD_OFF;
	return 0;
}

/*
 * The RNIC and RXE profiles' window and AckReq interval for a host link of
 * link_gbps (host/transport/README.md, "Window and loss"); a nonzero *window
 * or *ackreq is the user's (NR_SOFT_WINDOW, NR_SOFT_ACKREQ) and stays.
 * *window: about the packets the link sends in 1.3 ms.  An RNIC keeps about a
 * bandwidth-delay product in flight; a software sender allowed more only
 * fills the queue before a slow link, and every loss then costs a go-back-N
 * over that queue and a NAK stuck behind it.  The floor is in bytes, 16 KiB,
 * and at least 8 packets: 16 packets of 4 KiB held 64 KiB before a 100 Mbit/s
 * link, and at 1% loss 4 hosts kept 0.75 of their loss-free rate against 0.87
 * with 8.  Fast links (10 Gbit/s and up at 1 KiB, 4 Gbit/s at 4 KiB, a veth)
 * get the ceiling, 128 packets.  *ackreq: a quarter of *window (at least 1).
 */
static void soft_window(double link_gbps, uint32_t mtu, uint32_t *window, uint16_t *ackreq)
{
	uint32_t size = mtu ? mtu : 1024;
	double pkts = (link_gbps > 0 ? link_gbps : 10) * 1e9 / 8 * 1.3e-3 / size;
	/* the floor in bytes (16 KiB), at least 8 packets (an AckReq every 2) */
	uint32_t lo = 16384 / size < 8 ? 8 : 16384 / size;

	if (!*window)
		*window = pkts < lo ? lo : pkts > 128 ? 128 : (uint32_t)pkts;
	if (!*ackreq) {
		uint32_t q = *window / 4;

		*ackreq = (uint16_t)(q == 0 ? 1 : q > 65535 ? 65535 : q);
	}
}

/* nr_tp_tune: the legacy profile keeps the user's window and AckReq interval
 * (0: the transport's defaults) and backs off per retry (nr_tp_timeout_exp). */
static void soft_tune(struct nr_tp_config *cfg, const struct nr_tp_wish *wish)
{
	bool backoff = cfg->profile == NR_TP_PROFILE_LEGACY;

	cfg->max_inflight = wish->window;
	cfg->ackreq_every = wish->ackreq;
	if (!backoff)
		soft_window(wish->link_gbps, cfg->mtu, &cfg->max_inflight, &cfg->ackreq_every);
	cfg->timeout = nr_tp_wish_timeout(wish, backoff ? 255 : 8);
}

static int parse_cfg(struct soft_tp *tp, const struct nr_tp_config *cfg, uint8_t *offload,
		     char *err, size_t errlen)
{
	const char *env = getenv("NR_SOFT_IPSN");
	bool mtu_ok = false;

	if (!cfg->local_ip) {
		snprintf(err, errlen, "soft: local_ip is required (the IPv4 address to send "
			 "from; the ICRC covers it)");
		return -EINVAL;
	}
	tp->ip = cfg->local_ip;
	tp->port = cfg->udp_port ? cfg->udp_port : NR_ROCEV2_PORT;
	tp->mtu = cfg->mtu ? cfg->mtu : 1024;
	for (unsigned i = 0; i < sizeof(ib_mtus) / sizeof(ib_mtus[0]); i++)
		mtu_ok |= tp->mtu == ib_mtus[i];
	if (!mtu_ok) {
		snprintf(err, errlen, "soft: mtu %u is not an IB path MTU (use 256, 512, 1024, "
			 "2048 or 4096)", tp->mtu);
		return -EINVAL;
	}
	tp->timeout_exp = cfg->timeout ? cfg->timeout : 14;
	if (tp->timeout_exp > 31) {
		snprintf(err, errlen, "soft: timeout exponent %u out of range (1..31; 14 is ~67 ms)",
			 tp->timeout_exp);
		return -EINVAL;
	}
	tp->timeout_ns = 4096ull << tp->timeout_exp;
	tp->profile = cfg->profile;
	if (tp->profile != NR_TP_PROFILE_RNIC && tp->profile != NR_TP_PROFILE_RXE &&
	    tp->profile != NR_TP_PROFILE_LEGACY && tp->profile != NR_TP_PROFILE_SR) {
		snprintf(err, errlen,
			 "soft: profile %u unknown (NR_TP_PROFILE_RNIC, _RXE, _LEGACY or _SR)",
			 tp->profile);
		return -EINVAL;
	}
	tp->retry_cnt = cfg->retry_cnt ? cfg->retry_cnt : 7;
	tp->rnr_retry = cfg->rnr_retry ? cfg->rnr_retry : 7;
	if (tp->retry_cnt > 7 || tp->rnr_retry > 7) {
		snprintf(err, errlen, "soft: retry_cnt %u / rnr_retry %u out of range (1..7; 0 "
			 "means 7)", tp->retry_cnt, tp->rnr_retry);
		return -EINVAL;
	}
	tp->max_inflight = cfg->max_inflight ? cfg->max_inflight : 128;
	if (tp->max_inflight > (1u << 22)) {
		snprintf(err, errlen, "soft: max_inflight %u too large (at most %u packets)",
			 tp->max_inflight, 1u << 22);
		return -EINVAL;
	}
	tp->ackreq_every = cfg->ackreq_every ? cfg->ackreq_every : 64;
	/* no GSO sends of several datagrams on slow links (AckReq interval < 8): tp_soft_tx.c */
	tp->gso_segs = tp->ackreq_every < 8 ? 1 : SOFT_GSO_SEGS;
	tp->tclass = cfg->tclass;
	*offload = cfg->offload;
	if (*offload != NR_TP_OFFLOAD_AUTO && *offload != NR_TP_OFFLOAD_OFF) {
		snprintf(err, errlen, "soft: offload %u unknown (NR_TP_OFFLOAD_AUTO or _OFF)",
			 *offload);
		return -EINVAL;
	}
	if (env_offload(offload, err, errlen))
		return -EINVAL;
	tp->force_ipsn = -1;
	if (env && *env) {
		char *end;
		unsigned long v = strtoul(env, &end, 0);

		if (*end || v >= NR_PSN_MOD) {
			snprintf(err, errlen, "soft: NR_SOFT_IPSN=\"%s\" is not a PSN (0..0xffffff)",
				 env);
			return -EINVAL;
		}
		tp->force_ipsn = (int64_t)v;
	}
	return 0;
}

static void soft_close(struct nr_tp *t);
static void tx_unsent(struct soft_qp *qp, uint8_t kind, uint32_t psn);

static struct nr_tp *soft_open(const struct nr_tp_config *cfg, char *err, size_t errlen)
{
	struct soft_tp *tp = calloc(1, sizeof(*tp));
	uint8_t offload = NR_TP_OFFLOAD_AUTO;

	if (!tp) {
		snprintf(err, errlen, "soft: out of memory");
		return NULL;
	}
	tp->base.ops = &nr_tp_soft_ops;
	tp->tx_unsent = tx_unsent;
	tp->fd = tp->wake_fd = -1;
	tp->inj_tail = &tp->inj_head;
	soft_icrc_init(tp);
	if (parse_cfg(tp, cfg, &offload, err, errlen) ||
	    soft_net_open(tp, offload == NR_TP_OFFLOAD_AUTO, err, errlen)) {
		soft_close(&tp->base);
		return NULL;
	}
	return &tp->base;
}

static void qp_free(struct soft_qp *qp)
{
	if (qp->qpn)
		soft_share_release(qp->tp, qp->qpn);
	if (qp->fd >= 0)
		close(qp->fd);
	for (unsigned k = 1; qp->spray_fd && k < qp->nspray; k++)
		close(qp->spray_fd[k]);
	free(qp->spray_fd);
	free(qp->sq);
	free(qp->rq);
	free(qp->er);
	free(qp->ooo);
	free(qp->ooo_buf);
	free(qp->sr_q);
	free(qp->sr_mark);
	free(qp);
}

/* NR_SOFT_STATS set: the transport's nonzero counters on stderr at close. */
static void print_stats(const struct soft_tp *tp)
{
	const uint64_t *v = (const uint64_t *)&tp->st;
	char ip[INET_ADDRSTRLEN];

	if (!getenv("NR_SOFT_STATS"))
		return;
	fprintf(stderr, "soft %s:", nr_ip4_str(tp->ip, ip));
	for (unsigned i = 0; i < NR_SOFT_NSTATS; i++)
		if (v[i])
			fprintf(stderr, " %s=%llu", nr_tp_soft_stat_name(i), (unsigned long long)v[i]);
	fprintf(stderr, "\n");
}

static void soft_close(struct nr_tp *t)
{
	struct soft_tp *tp = soft_tp(t);

	print_stats(tp);
	for (unsigned i = 0; i < tp->nqps; i++)
		qp_free(tp->qps[i]);
	free(tp->qps);
	free(tp->mrs);
	free(tp->cq);
	soft_net_close(tp);
	free(tp);
}

/* ---- QPs ---------------------------------------------------------------- */

static struct soft_qp *soft_qp_lookup(struct soft_tp *tp, uint32_t qpn)
{
	if (tp->last_qp && tp->last_qp->qpn == qpn)
		return tp->last_qp;
	for (unsigned i = 0; i < tp->nqps; i++)
		if (tp->qps[i]->qpn == qpn)
			return tp->last_qp = tp->qps[i];
	return NULL;
}

static int soft_qp_create(struct nr_tp *t, struct nr_tp_qp **out, struct nr_qp_info *info)
{
	struct soft_tp *tp = soft_tp(t);
	struct soft_qp *qp;
	int r;

	if (tp->nqps == tp->qps_cap) {
		unsigned ncap = tp->qps_cap ? tp->qps_cap * 2 : 8;
		struct soft_qp **n = realloc(tp->qps, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		tp->qps = n;
		tp->qps_cap = ncap;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return -ENOMEM;
	qp->base.ops = &nr_tp_soft_ops;
	qp->base.tp = t;
	qp->tp = tp;
	qp->fd = -1;
	qp->nspray = 1;
	do { /* 0 is reserved, 1 is the GSI QP; unique over the receive socket */
		qp->qpn = rand32() & NR_BTH_QPN_MASK;
		r = qp->qpn < 2 || soft_qp_lookup(tp, qp->qpn) ? -EEXIST
							       : soft_share_claim(tp, qp->qpn);
	} while (r == -EEXIST);
	if (!r)
		r = soft_qp_sock_open(tp, qp);
	else
		qp->qpn = 0;
	if (r || soft_ring_grow((void **)&qp->sq, &qp->sq_cap, 0, 0, sizeof(*qp->sq)) ||
	    soft_ring_grow((void **)&qp->rq, &qp->rq_cap, 0, 0, sizeof(*qp->rq))) {
		qp_free(qp);
		return r ? r : -ENOMEM;
	}
	qp->ipsn = tp->force_ipsn >= 0 ? (uint32_t)tp->force_ipsn : rand32() & NR_PSN_MASK;
	qp->next_psn = qp->snd_una = qp->snd_nxt = qp->snd_hi = qp->ipsn;
	qp->state = SOFT_QP_INIT;
	tp->qps[tp->nqps++] = qp;
	*info = (struct nr_qp_info){ .ip = tp->ip, .qpn = qp->qpn, .psn = qp->ipsn,
				     .udp_port = tp->port, .sport = qp->sport };
	*out = &qp->base;
	return 0;
}

static int soft_qp_connect(struct nr_tp_qp *q, const struct nr_qp_info *remote)
{
	struct soft_qp *qp = soft_qp(q);
	struct soft_tp *tp = qp->tp;

	if (qp->state != SOFT_QP_INIT)
		return -EINVAL;
	if (!remote->ip || !remote->qpn || remote->qpn > NR_BTH_QPN_MASK ||
	    remote->psn > NR_PSN_MASK)
		return -EINVAL;
	qp->rip = remote->ip;
	qp->rport = remote->udp_port ? remote->udp_port : NR_ROCEV2_PORT;
	qp->rqpn = remote->qpn;
	qp->raddr = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(qp->rport),
					  .sin_addr.s_addr = qp->rip };
	qp->ipx = (struct nr_icrc_ip4){ .saddr = tp->ip, .daddr = qp->rip, .sport = qp->sport,
					.dport = qp->rport, .id = 0, .frag_off = NR_IPV4_DF };
	nr_ip4_str(qp->rip, qp->peer);
	qp->epsn = qp->sr_nak_hi = remote->psn;
	qp->progress_ns = now_ns();
	qp->state = SOFT_QP_RTS;
	return 0;
}

static void soft_qp_destroy(struct nr_tp_qp *q)
{
	struct soft_qp *qp = soft_qp(q), **pp;
	struct soft_tp *tp = qp->tp;
	uint32_t keep = tp->cq_head;

	if (tp->txqp == qp)
		soft_tx_flush(tp);
	for (pp = &tp->ack_list; *pp; pp = &(*pp)->ack_next)
		if (*pp == qp) {
			*pp = qp->ack_next;
			break;
		}
	/* Completions of this QP that nobody polled yet go with it. */
	for (uint32_t k = tp->cq_head; k != tp->cq_tail; k++) {
		struct nr_wc wc = tp->cq[k & (tp->cq_cap - 1)];

		if (wc.qp != q)
			tp->cq[keep++ & (tp->cq_cap - 1)] = wc;
	}
	tp->cq_tail = keep;
	for (unsigned i = 0; i < tp->nqps; i++)
		if (tp->qps[i] == qp) {
			tp->qps[i] = tp->qps[--tp->nqps];
			break;
		}
	if (tp->last_qp == qp)
		tp->last_qp = NULL;
	qp_free(qp);
}

/* ---- posting ------------------------------------------------------------ */

/* mark: every packet of the write, resent ones too, leaves with its IP_TOS (nr_tp_mark). */
static int soft_post_write_imm(struct nr_tp_qp *q, uint64_t wr_id, const struct nr_tp_mr *lmr,
			       const void *laddr, uint32_t len, uint64_t remote_va,
			       uint32_t rkey, uint32_t imm, const struct nr_tp_mark *mark)
{
	struct soft_qp *qp = soft_qp(q);
	struct soft_tp *tp = qp->tp;
	uint32_t n = soft_npkts(len, tp->mtu);
	struct soft_swr *w;

	if (qp->state == SOFT_QP_INIT)
		return -ENOTCONN;
	if (len && (!lmr || !laddr || (const uint8_t *)laddr < (const uint8_t *)lmr->addr ||
		    len > lmr->len ||
		    (size_t)((const uint8_t *)laddr - (const uint8_t *)lmr->addr) > lmr->len - len))
		return -EINVAL;
	if (n > (1u << 22))
		return -EMSGSIZE;   /* PSN arithmetic needs a message below 2^22 packets */
	if (qp->state == SOFT_QP_ERR) {
		soft_cq_push(tp, qp, wr_id, NR_WC_SEND, NR_WC_FLUSHED, 0, 0);
		return 0;
	}
	/* Outstanding PSNs must stay within half the PSN space. */
	if (nr_psn_sub(nr_psn_add(qp->next_psn, n), qp->snd_una) >= (1u << 23))
		return -EAGAIN;
	if (qp->sq_tail - qp->sq_head == qp->sq_cap &&
	    soft_ring_grow((void **)&qp->sq, &qp->sq_cap, qp->sq_head, qp->sq_tail, sizeof(*w)))
		return -ENOMEM;
	w = &qp->sq[qp->sq_tail & (qp->sq_cap - 1)];
	*w = (struct soft_swr){ .wr_id = wr_id, .laddr = laddr, .rva = remote_va, .len = len,
				.rkey = rkey, .imm = imm, .psn = qp->next_psn, .npkts = n,
				.tos = (int16_t)(mark ? mark->tclass : -1),
				.de_tos = (int16_t)(mark && mark->de ? mark->de_tclass : -1),
				.de = mark ? mark->de : NULL };
	qp->next_psn = nr_psn_add(qp->next_psn, n);
	qp->sq_tail++;
	return 0;
}

static int soft_post_recv(struct nr_tp_qp *q, uint64_t wr_id)
{
	struct soft_qp *qp = soft_qp(q);
	struct soft_tp *tp = qp->tp;

	if (qp->state == SOFT_QP_ERR) {
		soft_cq_push(tp, qp, wr_id, NR_WC_RECV, NR_WC_FLUSHED, 0, 0);
		return 0;
	}
	if (qp->er_head != qp->er_tail) {
		struct soft_early_recv e = qp->er[qp->er_head++ & (qp->er_cap - 1)];

		soft_cq_push(tp, qp, wr_id, NR_WC_RECV, NR_WC_OK, e.imm, e.byte_len);
		return 0;
	}
	if (qp->rq_tail - qp->rq_head == qp->rq_cap &&
	    soft_ring_grow((void **)&qp->rq, &qp->rq_cap, qp->rq_head, qp->rq_tail,
			   sizeof(*qp->rq)))
		return -ENOMEM;
	qp->rq[qp->rq_tail++ & (qp->rq_cap - 1)] = wr_id;
	return 0;
}

/*
 * One received packet (soft_rx_fn of the net layer): a well-formed RC packet
 * for a QP of another transport on the socket goes to it (tp_soft_share.c);
 * one with a good ICRC (for an IP ID in 0..63, tp_soft_icrc.c), for a
 * connected QP, from its peer, goes to the requester (ACK/NAK) or the
 * responder (WRITE); anything else is counted.  Owed ACKs leave every SOFT_ACK_FLUSH
 * packets, so a large receive batch does not hold a window's ACK to its end.
 */
static void rx_pkt(struct soft_tp *tp, uint8_t *buf, uint32_t len,
		   const struct sockaddr_in *from)
{
	struct nr_icrc_ip4 ipx = {
		.saddr = from->sin_addr.s_addr, .daddr = tp->ip,
		.sport = ntohs(from->sin_port), .dport = tp->port,
		.id = tp->rx_id_next, .frag_off = NR_IPV4_DF,
	};
	struct soft_qp *qp;
	struct nr_pkt p;

	if (nr_parse_transport(buf, len, &p) != NR_PKT_ROCE) {
		tp->st.rx_pkts++;
		tp->st.rx_bytes += len;
		tp->st.rx_malformed++;
		return;
	}
	qp = soft_qp_lookup(tp, p.qpn);
	switch (qp ? SOFT_PASS_NONE : soft_share_pass(tp, p.qpn, buf, len, from)) {
	case SOFT_PASS_DONE:
		tp->st.rx_passed++; /* another transport's QP: counted there */
		return;
	case SOFT_PASS_DROPPED: tp->st.rx_pass_drop++; return;
	case SOFT_PASS_NONE: break;
	}
	tp->st.rx_pkts++;
	tp->st.rx_bytes += len;
	if (!soft_icrc_rx(tp, &ipx, buf, p.end - NR_ICRC_LEN, nr_icrc_stored(buf, &p))) {
		tp->st.rx_bad_icrc++;
		return;
	}
	tp->st.rx_ipid += ipx.id != tp->rx_id_next;
	tp->rx_id_next = (uint16_t)((ipx.id + 1) % SOFT_IPID_SPAN);
	if (!(p.mask & NR_OPF_RC) || (p.opcode != NR_OP_RC_ACK && !(p.mask & NR_OPF_WRITE))) {
		tp->st.rx_unsupported++;
		return;
	}
	if (!qp) {
		tp->st.rx_unknown_qpn++;
		return;
	}
	if (qp->state != SOFT_QP_RTS) {
		tp->st.rx_bad_state++;
		return;
	}
	if (from->sin_addr.s_addr != qp->rip) {
		tp->st.rx_bad_src++;
		return;
	}
	qp->peer_rx_ns = tp->now;
	if (p.opcode == NR_OP_RC_ACK)
		soft_req_rx_ack(qp, &p);
	else
		soft_resp_rx(qp, buf, &p);
}

/* The owed ACKs out (one per QP), the count restarted. */
static void flush_acks(struct soft_tp *tp)
{
	tp->rx_since_flush = 0;
	soft_resp_flush_acks(tp);
}

static void rx_one(struct soft_tp *tp, uint8_t *buf, uint32_t len,
		   const struct sockaddr_in *from)
{
	rx_pkt(tp, buf, len, from);
	if (++tp->rx_since_flush >= SOFT_ACK_FLUSH)
		flush_acks(tp);
}

/* A packet the send socket refused: data is sent again from its PSN, an ACK is owed again. */
static void tx_unsent(struct soft_qp *qp, uint8_t kind, uint32_t psn)
{
	if (qp->state != SOFT_QP_RTS)
		return;
	if (kind == SOFT_TX_DATA) {
		if (nr_psn_lt(psn, qp->snd_nxt) && !nr_psn_lt(psn, qp->snd_una))
			soft_req_rewind(qp, psn);
	} else {
		soft_resp_ack_owed(qp);
	}
}

/* ---- progress ----------------------------------------------------------- */


/* Receive, fire timers, send.  Returns 0 or -errno (receive socket failure). */
static int progress(struct soft_tp *tp)
{
	int r;

	tp->now = now_ns();
	tp->tx_blocked = false;
	for (unsigned i = 0; i < SOFT_RX_ROUNDS; i++) {
		r = soft_rx_round(tp, rx_one);
		if (r < 0)
			return r;
		flush_acks(tp);
		if (r < SOFT_RX_MSGS)
			break;
	}
	for (unsigned i = 0; i < tp->nqps; i++) {
		if (tp->qps[i]->sr_kept)
			soft_resp_sr_timer(tp->qps[i]);
		soft_req_timer(tp->qps[i]);
	}
	for (unsigned i = 0; i < tp->nqps; i++)
		soft_req_tx(tp->qps[i]);
	soft_tx_flush(tp);
	return 0;
}

/* How long poll() may sleep: until the nearest timer, at most max_ns. */
static uint64_t idle_ns(struct soft_tp *tp, uint64_t max_ns)
{
	uint64_t w = max_ns, due;

	for (unsigned i = 0; i < tp->nqps; i++) {
		const struct soft_qp *qp = tp->qps[i];

		if (qp->state != SOFT_QP_RTS)
			continue;
		if (soft_req_can_send(qp) || soft_req_resend_due(qp))
			return 0;
		if (qp->ack_deadline)
			w = qp->ack_deadline <= tp->now ? 0 :
			    (qp->ack_deadline - tp->now < w ? qp->ack_deadline - tp->now : w);
		if (qp->rnr_until)
			w = qp->rnr_until <= tp->now ? 0 :
			    (qp->rnr_until - tp->now < w ? qp->rnr_until - tp->now : w);
		if (qp->sr_kept && (due = soft_resp_sr_due(qp)))
			w = due <= tp->now ? 0 : (due - tp->now < w ? due - tp->now : w);
	}
	if (tp->tx_blocked && w > 200000)
		w = 200000;
	if (tp->inj_head)
		w = 0;
	return w;
}

static int soft_poll(struct nr_tp *t, struct nr_wc *wc, int max, int timeout_ms)
{
	struct soft_tp *tp = soft_tp(t);
	uint64_t end = 0;

	for (;;) {
		int n = 0, r = progress(tp);
		uint64_t w;

		if (r < 0)
			return r;
		while (n < max && tp->cq_head != tp->cq_tail)
			wc[n++] = tp->cq[tp->cq_head++ & (tp->cq_cap - 1)];
		if (n || timeout_ms == 0)
			return n;
		if (!end)
			end = tp->now + (timeout_ms < 0 ? (uint64_t)INT64_MAX :
					 (uint64_t)timeout_ms * 1000000u);
		if (tp->now >= end)
			return 0;
		w = idle_ns(tp, end - tp->now);
		if (w) {
			/* the socket, and the packets other transports on it read for this one */
			struct pollfd pfd[2] = { { .fd = tp->fd, .events = POLLIN },
						 { .fd = tp->wake_fd, .events = POLLIN } };
			struct timespec ts = { .tv_sec = (time_t)(w / 1000000000u),
					       .tv_nsec = (long)(w % 1000000000u) };

			if (ppoll(pfd, 2, &ts, NULL) < 0 && errno != EINTR)
				return -errno;
		}
	}
}

static const char *soft_qp_error(const struct nr_tp_qp *q)
{
	const struct soft_qp *qp = (const struct soft_qp *)q;

	return qp->err[0] ? qp->err : "";
}

static void soft_qp_state(const struct nr_tp_qp *q, char *buf, size_t len)
{
	const struct soft_qp *qp = (const struct soft_qp *)q;
	uint64_t now = now_ns();
	char heard[40] = "never";
	int n;

	if (qp->peer_rx_ns)
		snprintf(heard, sizeof(heard), "%.3g s ago",
			 (double)(now - qp->peer_rx_ns) / 1e9);
	n = snprintf(buf, len, "%sexpects psn 0x%x%s, last packet from the peer %s",
		     qp->state == SOFT_QP_ERR ? "in error; " : "", qp->epsn,
		     qp->nak_sent ? " (NAKed: later ones arrived)" : "", heard);
	if (qp->snd_una != qp->snd_hi && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "; psn 0x%x..0x%x unacknowledged, no progress "
			 "for %.3g s", qp->snd_una, nr_psn_sub(qp->snd_hi, 1),
			 (double)(now - qp->progress_ns) / 1e9);
}

/* RNIC profile: this QP waits the fixed ACK timeout, not the adaptive one. */
static void soft_qp_acks_lag(struct nr_tp_qp *q)
{
	((struct soft_qp *)q)->fixed_timeout = true;
}

static int soft_qp_spray(struct nr_tp_qp *q, unsigned ports, struct nr_qp_info *info)
{
	struct soft_qp *qp = soft_qp(q);
	int r;

	if (qp->state != SOFT_QP_INIT || ports > SOFT_SPRAY_MAX)
		return -EINVAL;
	if (ports == qp->nspray || (ports == 1 && !qp->spray_fd))
		return 0;
	if (ports == 1)
		return -EINVAL;         /* a QP sprays once, before connect */
	r = soft_qp_spray_open(qp->tp, qp, ports);
	if (!r)
		info->sport = qp->sport;
	return r;
}

static int soft_qp_rail(struct nr_tp_qp *q, const char *ifname)
{
	struct soft_qp *qp = soft_qp(q);

	if (qp->state != SOFT_QP_INIT || strlen(ifname) >= sizeof(qp->rail))
		return -EINVAL;
	snprintf(qp->rail, sizeof(qp->rail), "%s", ifname);
	return soft_qp_rail_bind(qp->tp, qp);
}

/* polled: the CPU is the RNIC, nothing moves between polls; a traffic class
 * per message: each datagram may carry its own IP_TOS (tp_soft_net.c); every
 * packet carries the default partition's P_Key */
const struct nr_tp_ops nr_tp_soft_ops = NR_TP_OPS("soft", soft, true, true, true, NR_BTH_PKEY_DEFAULT);

/* ---- extensions (tp_soft.h) ------------------------------------------------ */

static const char *const stat_names[] = {
#define NR_SOFT_STAT_NAME(n, d) #n,
	NR_SOFT_FOREACH_STAT(NR_SOFT_STAT_NAME)
#undef NR_SOFT_STAT_NAME
};
static const char *const stat_descs[] = {
#define NR_SOFT_STAT_DESC(n, d) d,
	NR_SOFT_FOREACH_STAT(NR_SOFT_STAT_DESC)
#undef NR_SOFT_STAT_DESC
};

const char *nr_tp_soft_stat_name(unsigned i) { return i < NR_SOFT_NSTATS ? stat_names[i] : NULL; }
const char *nr_tp_soft_stat_desc(unsigned i) { return i < NR_SOFT_NSTATS ? stat_descs[i] : NULL; }

int nr_tp_soft_stats(const struct nr_tp *t, struct nr_tp_soft_stats *st)
{
	if (!t || t->ops != &nr_tp_soft_ops || !st)
		return -EINVAL;
	*st = ((const struct soft_tp *)t)->st;
	return 0;
}

int nr_tp_soft_set_ipsn(struct nr_tp *t, int64_t psn)
{
	if (!t || t->ops != &nr_tp_soft_ops || psn >= (int64_t)NR_PSN_MOD)
		return -EINVAL;
	soft_tp(t)->force_ipsn = psn < 0 ? -1 : psn;
	return 0;
}

int nr_tp_soft_set_filter(struct nr_tp *t, nr_tp_soft_filter_fn fn, void *arg)
{
	if (!t || t->ops != &nr_tp_soft_ops)
		return -EINVAL;
	if (fn && soft_net_filter_bufs(soft_tp(t)))
		return -ENOMEM;
	soft_tx_flush(soft_tp(t));     /* packets built before it go as they were */
	soft_tp(t)->filter = fn;
	soft_tp(t)->filter_arg = arg;
	return 0;
}

int nr_tp_soft_inject(struct nr_tp *t, uint32_t saddr, uint16_t sport, const uint8_t *pkt,
		      uint32_t len)
{
	if (!t || t->ops != &nr_tp_soft_ops || !pkt)
		return -EINVAL;
	return soft_inject_add(soft_tp(t), saddr, sport, pkt, len);
}

int nr_tp_soft_qp_sport(const struct nr_tp_qp *q)
{
	if (!q || q->ops != &nr_tp_soft_ops)
		return -EINVAL;
	return ((const struct soft_qp *)q)->sport;
}
