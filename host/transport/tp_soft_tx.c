// SPDX-License-Identifier: BSD-3-Clause
/*
 * Soft transport, the send batch: one QP's packets, out through its socket in
 * one sendmmsg.
 *
 * Each packet is one RoCEv2 packet on the wire with its own ICRC, as an RNIC
 * sends.  Consecutive packets of one size (the last may be shorter) and one
 * traffic class form a GSO send (UDP_SEGMENT: one sendmmsg entry the kernel,
 * or a NIC, cuts into datagrams of that size), at most tp->gso_segs of them
 * and SOFT_GSO_BYTES bytes.  tp->gso_segs is SOFT_GSO_SEGS, and 1 -- no
 * batching -- where the AckReq interval (a quarter window) is below 8
 * packets, a slow link: a qdisc that shapes takes a GSO send whole, waiting
 * for all its tokens before its first packet leaves, and a window-limited
 * ring through the testbed's htb lost 3.5% at 100 Mbit/s (window 8) with a
 * window a send, 2.5% with 2 packets a send, nothing with 1; at 1 Gbit/s (an
 * interval of 9) the batching doubled what 2 shared cores moved, and on
 * loopback sends of 64 rather than 32 datagrams (1 KiB) save 5-10%; the kernel numbers their IP IDs 0, 1, 2 ..., so a
 * packet's ICRC is computed, here in the batch loop, for its place in its
 * send (tp_soft_icrc.c).  Nothing is copied: a packet is two iovecs, its
 * header (with the pad and ICRC of the packet before it) in the batch and its
 * payload where the posted write has it (the kernel reads it during the
 * sendmmsg); the last of a send has a third, its own pad and ICRC.
 *
 * With a test filter (tp_soft.h) every packet is first built whole in
 * tp->fbuf and shown to the filter, which may change its bytes: it is sent as
 * the filter left it; a duplicate or a held-back packet goes in a send of its
 * own, its ICRC moved to the ID it gets there (ID 0).
 *
 * Without GSO (the kernel has no UDP_SEGMENT, or NR_TP_OFFLOAD_OFF) each
 * datagram is an entry of its own: IP ID 0, and UDP checksum 0 (SO_NO_CHECK;
 * the kernel refuses GSO on such a socket, so with GSO the kernel or the NIC
 * fills in the UDP checksum, which the ICRC masks).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <endian.h>
#include <netinet/in.h>
#include <netinet/udp.h>

#include "tp_soft_cq.h"
#include "tp_soft_icrc.h"
#include "tp_soft_net.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

static uint32_t pad_of(uint32_t len)
{
	return (4 - (len & 3)) & 3;
}

/* Whether a datagram of len bytes and traffic class tos joins send m. */
static bool joins(const struct soft_tp *tp, const struct soft_txmsg *m, uint32_t len, int tos)
{
	return tp->gso && !m->closed && m->tos == tos && m->n < tp->gso_segs && len <= m->seg &&
	       m->bytes + len <= SOFT_GSO_BYTES;
}

/*
 * The place (IP ID) the next datagram of len bytes and class tos will have,
 * and its source port (*port: qp->sport + *port): the send it joins, or a
 * new one from the next port in turn (a sprayed QP, nr_tp_qp_spray).
 */
static uint16_t tx_peek(const struct soft_tp *tp, uint32_t len, int tos, uint16_t *port)
{
	const struct soft_txmsg *m = tp->nmsg ? &tp->txm[tp->nmsg - 1] : NULL;
	const struct soft_qp *qp = tp->txqp;

	if (m && joins(tp, m, len, tos)) {
		*port = m->port;
		return m->n;
	}
	*port = qp->nspray > 1 ? qp->spray_next % qp->nspray : 0;
	return 0;
}

/*
 * Append packet tp->txp[tp->ntx] (its iovecs set) to the batch, at the place
 * and port tx_peek said (or, for a packet sent alone, port).
 */
static void tx_place(struct soft_tp *tp, uint32_t len, int tos, uint16_t port)
{
	struct soft_txmsg *m = tp->nmsg ? &tp->txm[tp->nmsg - 1] : NULL;
	struct soft_qp *qp = tp->txqp;

	if (!m || !joins(tp, m, len, tos) || m->port != port) {
		m = &tp->txm[tp->nmsg++];
		*m = (struct soft_txmsg){ .first = (uint16_t)tp->ntx, .seg = (uint16_t)len,
					  .tos = (int16_t)tos, .port = port };
		if (qp->nspray > 1 && port == qp->spray_next % qp->nspray)
			qp->spray_next++;       /* the next send from the next port */
	}
	m->closed = len < m->seg;
	m->n++;
	m->bytes += len;
	tp->ntx++;
}

static uint32_t icrc_load(const uint8_t *at)
{
	uint32_t v;

	memcpy(&v, at, sizeof(v));
	return le32toh(v);
}

/* A whole packet at buf (len bytes, ICRC for ID from), made for ID to. */
static void icrc_move(struct soft_tp *tp, uint8_t *buf, uint32_t len, uint16_t from, uint16_t to)
{
	if (from != to)
		nr_icrc_store(buf + len - NR_ICRC_LEN,
			      soft_icrc_move(tp, icrc_load(buf + len - NR_ICRC_LEN),
					     len - NR_ICRC_LEN, from, to));
}

/* See tp_soft_net.h. */
int soft_tx_hdr(uint8_t *h, uint32_t dqpn, const struct nr_build_args *a, uint32_t len)
{
	uint32_t pad = (4 - (len & 3)) & 3;
	int n = 12;

	switch (a->opcode) {
	case NR_OP_RC_WRITE_FIRST:
	case NR_OP_RC_WRITE_MIDDLE:
	case NR_OP_RC_WRITE_LAST_IMM:
	case NR_OP_RC_WRITE_ONLY_IMM:
	case NR_OP_RC_ACK:
		break;
	default:
		return nr_build_transport_hdr(h, SOFT_HDR_MAX, dqpn, a, len);
	}
	if (a->se || a->fecn || a->becn)
		return nr_build_transport_hdr(h, SOFT_HDR_MAX, dqpn, a, len);
	h[0] = a->opcode;
	h[1] = (uint8_t)((a->migreq ? 0x40 : 0) | pad << 4);    /* SE 0, MigReq, PadCnt, TVer 0 */
	h[2] = h[3] = 0xFF;                                     /* P_Key */
	nr_st_be32(h + 4, dqpn & NR_BTH_QPN_MASK);              /* FECN, BECN, resv 0 */
	nr_st_be32(h + 8, (a->ackreq ? 0x80000000u : 0) | (a->psn & NR_PSN_MASK));
	if (a->opcode == NR_OP_RC_WRITE_FIRST || a->opcode == NR_OP_RC_WRITE_ONLY_IMM) {
		nr_st_be64(h + n, a->va);
		nr_st_be32(h + n + 8, a->rkey);
		nr_st_be32(h + n + 12, a->dma_len);
		n += 16;
	}
	if (a->opcode == NR_OP_RC_WRITE_LAST_IMM || a->opcode == NR_OP_RC_WRITE_ONLY_IMM) {
		nr_st_be32(h + n, a->imm);
		n += 4;
	}
	if (a->opcode == NR_OP_RC_ACK) {
		nr_st_be32(h + n, (uint32_t)a->syndrome << 24 | (a->msn & NR_AETH_MSN_MASK));
		n += 4;
	}
	return n;
}

/* The fast path: header in the batch, the payload read in place, the ICRC here. */
static void build_gather(struct soft_tp *tp, struct soft_qp *qp, const struct nr_build_args *a,
			 const void *payload, uint32_t len, uint8_t kind, int tos)
{
	struct soft_txpkt *p = &tp->txp[tp->ntx];
	int hl = soft_tx_hdr(p->edge + 8, qp->rqpn, a, len);
	uint32_t pad = pad_of(len), dlen;
	uint16_t pos, port;

	if (hl < 0) {     /* cannot happen: opcodes and lengths are ours */
		tp->st.tx_errors++;
		return;
	}
	dlen = (uint32_t)hl + len + pad + NR_ICRC_LEN;
	pos = tx_peek(tp, dlen, tos, &port);
	memset(p->trl, 0, pad);
	nr_icrc_store(p->trl + pad, soft_icrc_tx(qp, (uint16_t)(qp->sport + port), pos, p->edge + 8,
						 (uint32_t)hl, payload, len));
	p->psn = a->psn;
	p->len = (uint16_t)dlen;
	p->pos = pos;
	p->kind = kind;
	p->hl = (uint8_t)hl;
	p->tl = (uint8_t)(pad + NR_ICRC_LEN);
	p->tos = (int16_t)tos;
	p->plen = len;
	p->pay = payload;
	p->buf = NULL;
	p->port = (uint8_t)port;
	/* the next packet, if it joins this send, carries this trailer before its header */
	if (tp->ntx + 1 < SOFT_TX_SLOTS)
		memcpy(tp->txp[tp->ntx + 1].edge + 8 - p->tl, p->trl, p->tl);
	tx_place(tp, dlen, tos, port);
}

/* A whole packet already in buf (len bytes, ICRC for its place) into the batch. */
static void place_whole(struct soft_tp *tp, uint8_t *buf, uint32_t len, uint32_t psn,
			uint8_t kind, int tos, uint16_t pos, uint16_t port)
{
	struct soft_txpkt *p = &tp->txp[tp->ntx];

	p->psn = psn;
	p->len = (uint16_t)len;
	p->pos = pos;
	p->kind = kind;
	p->tos = (int16_t)tos;
	p->buf = buf;
	p->port = (uint8_t)port;
	tx_place(tp, len, tos, port);
}

/* With a test filter: built whole, shown to the filter, sent as it says. */
static void build_filtered(struct soft_tp *tp, struct soft_qp *qp, const struct nr_build_args *a,
			   const void *payload, uint32_t len, uint8_t kind, int tos)
{
	uint8_t *buf = tp->fbuf + (size_t)tp->ntx * SOFT_PKT_MAX;
	const struct nr_opcode_info *oi = nr_opcode_info(a->opcode);
	struct nr_icrc_ip4 ipx = qp->ipx;
	uint16_t port;
	uint32_t dlen;
	int n, v;

	if (!oi) {
		tp->st.tx_errors++;
		return;
	}
	dlen = oi->length + len + pad_of(len) + NR_ICRC_LEN;
	ipx.id = tx_peek(tp, dlen, tos, &port);
	ipx.sport = (uint16_t)(qp->sport + port);
	n = nr_build_transport(buf, SOFT_PKT_MAX, &ipx, qp->rqpn, a, payload, len);
	if (n < 0 || (uint32_t)n != dlen) {
		tp->st.tx_errors++;
		return;
	}
	v = tp->filter(tp->filter_arg, NR_SOFT_TX, buf, dlen);
	if (v == NR_SOFT_DROP) {
		tp->st.tx_filtered++;
		return;
	}
	if (v == NR_SOFT_DELAY && tp->ndelay < SOFT_DELAY_MAX) {
		uint8_t *d = tp->dbuf + (size_t)tp->ndelay * SOFT_PKT_MAX;

		memcpy(d, buf, dlen);
		icrc_move(tp, d, dlen, ipx.id, 0);     /* sent alone, after the batch */
		tp->delay[tp->ndelay++] = (struct soft_txpkt){ .psn = a->psn, .len = (uint16_t)dlen,
							       .kind = kind, .tos = (int16_t)tos,
							       .port = (uint8_t)port };
		return;
	}
	place_whole(tp, buf, dlen, a->psn, kind, tos, ipx.id, port);
	if (v == NR_SOFT_DUP && tp->ntx < SOFT_TX_SLOTS) {
		uint8_t *d = tp->fbuf + (size_t)tp->ntx * SOFT_PKT_MAX;

		memcpy(d, buf, dlen);
		icrc_move(tp, d, dlen, ipx.id, 0);     /* a send of its own */
		tp->txm[tp->nmsg - 1].closed = 1;
		place_whole(tp, d, dlen, a->psn, kind, tos, 0, port);
	}
}

void soft_tx_build(struct soft_tp *tp, struct soft_qp *qp, const struct nr_build_args *a,
		   const void *payload, uint32_t len, uint8_t kind, int tos)
{
	if (tp->txqp != qp && (tp->ntx || tp->ndelay))
		soft_tx_flush(tp);
	tp->txqp = qp;
	if (tp->filter && tp->fbuf)
		build_filtered(tp, qp, a, payload, len, kind, tos);
	else
		build_gather(tp, qp, a, payload, len, kind, tos);
	if (tp->ntx >= SOFT_TX_PKTS)
		soft_tx_flush(tp);
}

/* The ancillary data of send m: UDP_SEGMENT when it carries several datagrams, IP_TOS. */
static void msg_cmsg(struct soft_tp *tp, unsigned i, const struct soft_txmsg *m, struct msghdr *h)
{
	struct cmsghdr *cm;
	size_t len = 0;

	if (m->n < 2 && m->tos < 0)
		return;
	h->msg_control = tp->txcmsg[i].buf;
	h->msg_controllen = sizeof(tp->txcmsg[i].buf);
	cm = CMSG_FIRSTHDR(h);
	if (m->n > 1) {
		uint16_t seg = m->seg;

		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(seg));
		memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
		len += CMSG_SPACE(sizeof(seg));
		cm = CMSG_NXTHDR(h, cm);
	}
	if (m->tos >= 0) {
		int tos = m->tos;

		/* Linux takes IP_TOS as ancillary data on UDP since 3.13, ECN bits kept */
		cm->cmsg_level = IPPROTO_IP;
		cm->cmsg_type = IP_TOS;
		cm->cmsg_len = CMSG_LEN(sizeof(tos));
		memcpy(CMSG_DATA(cm), &tos, sizeof(tos));
		len += CMSG_SPACE(sizeof(tos));
	}
	h->msg_controllen = len;
}

/*
 * The iovecs of send m at v: a whole packet one; a gathered one its header
 * (after the trailer of the packet before it, when that one was gathered
 * too) and its payload; the send's last gathered packet its own trailer.
 */
static unsigned msg_iovs(struct soft_tp *tp, const struct soft_txmsg *m, struct iovec *v)
{
	unsigned n = 0;

	for (unsigned k = m->first; k < (unsigned)m->first + m->n; k++) {
		struct soft_txpkt *p = &tp->txp[k];
		const struct soft_txpkt *prev = k > m->first ? p - 1 : NULL;
		unsigned tl = prev && !prev->buf ? prev->tl : 0;

		if (p->buf) {
			if (tl)     /* the gathered packet before it ends here */
				v[n++] = (struct iovec){ .iov_base = (void *)prev->trl, .iov_len = tl };
			v[n++] = (struct iovec){ .iov_base = p->buf, .iov_len = p->len };
			continue;
		}
		v[n++] = (struct iovec){ .iov_base = p->edge + 8 - tl, .iov_len = tl + p->hl };
		if (p->plen)
			v[n++] = (struct iovec){ .iov_base = (void *)(uintptr_t)p->pay,
						 .iov_len = p->plen };
		if (k + 1 == (unsigned)m->first + m->n)
			v[n++] = (struct iovec){ .iov_base = p->trl, .iov_len = p->tl };
	}
	return n;
}

/* The held-back packets, each in a send of its own after the rest. */
static void add_delayed(struct soft_tp *tp)
{
	for (unsigned i = 0; i < tp->ndelay && tp->ntx < SOFT_TX_SLOTS; i++) {
		const struct soft_txpkt *d = &tp->delay[i];

		if (tp->nmsg)
			tp->txm[tp->nmsg - 1].closed = 1;
		place_whole(tp, tp->dbuf + (size_t)i * SOFT_PKT_MAX, d->len, d->psn, d->kind,
			    d->tos, 0, d->port);
	}
	tp->ndelay = 0;
}

/*
 * A send the socket refused for a reason other than a full buffer: true when
 * it and the rest are to go again (GSO turned off), false when its packets
 * are lost (go-back-N recovers them).
 */
static bool send_failed(struct soft_tp *tp, struct soft_qp *qp, const struct soft_txmsg *m, int err)
{
	static bool said;

	tp->st.tx_errors++;
	if ((err == EIO || err == EINVAL) && m->n > 1 && tp->gso) {
		/* a route or device that cannot segment: one datagram an entry from now on */
		tp->gso = false;
		tp->st.gso_fallback++;
		if (!said)
			fprintf(stderr, "soft: a GSO send (UDP_SEGMENT) toward %s failed (%s): "
				"one datagram a send from now on (slower; NR_SOFT_GSO=0 says so "
				"from the start)\n", qp->peer, strerror(err));
		said = true;
		return true;
	}
	if (err == EMSGSIZE && qp->state == SOFT_QP_RTS)
		soft_qp_to_error(qp, NR_WC_LOCAL_ERROR, NR_WC_FLUSHED,
				 "path MTU %u does not fit the IP MTU toward %s (%u-byte datagram "
				 "refused): lower the transport's mtu (NR_MTU), or raise the "
				 "interface's MTU to %u", tp->mtu, qp->peer, m->seg,
				 m->seg + 28);
	return false;
}

int soft_tx_flush(struct soft_tp *tp)
{
	struct soft_qp *qp = tp->txqp;
	unsigned sent = 0;

	if (tp->ndelay)
		add_delayed(tp);
	if (!tp->nmsg)
		goto out;
	for (unsigned i = 0, v = 0; i < tp->nmsg; i++) {
		const struct soft_txmsg *m = &tp->txm[i];
		struct msghdr *h = &tp->txmsg[i].msg_hdr;

		*h = (struct msghdr){ .msg_name = &qp->raddr, .msg_namelen = sizeof(qp->raddr),
				      .msg_iov = &tp->txiov[v] };
		v += msg_iovs(tp, m, &tp->txiov[v]);
		h->msg_iovlen = (size_t)(&tp->txiov[v] - h->msg_iov);
		msg_cmsg(tp, i, m, h);
	}
	tp->st.tx_calls++;
	while (sent < tp->nmsg) {
		/* the sends from one port in a row: one sendmmsg (a sprayed QP's
		 * change ports from send to send, a call each) */
		uint16_t port = tp->txm[sent].port;
		unsigned end = sent + 1;
		int r;

		while (end < tp->nmsg && tp->txm[end].port == port)
			end++;
		r = sendmmsg(port ? qp->spray_fd[port] : qp->fd, tp->txmsg + sent, end - sent,
			     MSG_DONTWAIT);
		if (r > 0) {
			for (unsigned i = sent; i < sent + (unsigned)r; i++) {
				tp->st.tx_pkts += tp->txm[i].n;
				tp->st.tx_bytes += tp->txm[i].bytes;
				tp->st.tx_gso += tp->txm[i].n > 1;
			}
			sent += (unsigned)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) {
			tp->st.tx_again++;
			tp->tx_blocked = true;
			break;
		}
		if (send_failed(tp, qp, &tp->txm[sent], errno))
			break;       /* it and the rest go again, a datagram each */
		sent++;
	}
	/* The state change of a sent packet is done; only unsent ones rewind. */
	for (unsigned i = sent; i < tp->nmsg; i++)
		for (unsigned k = tp->txm[i].first; k < tp->txm[i].first + tp->txm[i].n; k++)
			tp->tx_unsent(qp, tp->txp[k].kind, tp->txp[k].psn);
out:
	tp->ntx = tp->nmsg = 0;
	tp->txqp = NULL;
	return 0;
}
