/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft transport, the socket side: one receive socket bound to (local ip,
 * 4791) for every QP, one send socket per QP bound to (local ip, entropy
 * port), batched recvmmsg/sendmmsg (packets built by proto's nr_build_transport)
 * and the test filter.
 *
 * What goes on the wire is what an RNIC sends: UDP checksum 0 (SO_NO_CHECK),
 * DF set (IP_PMTUDISC_DO), the traffic class (IP_TOS: DSCP and ECN, which
 * the ICRC masks; the socket's, or a message's own as a control message on
 * each of its datagrams), and -- because the sockets are unconnected --
 * IP ID 0, which Linux puts on every DF datagram of an unconnected UDP
 * socket.  The ICRC covers the IP ID, so our ICRC is computed for ID 0.
 *
 * Receive-side limitation: a UDP socket does not show the IP header, so the
 * ICRC of a received packet is checked assuming what our senders and the box
 * produce: ID 0, DF, no IP options, the source address from recvmmsg and our
 * own address as destination (TOS and TTL are masked by the ICRC anyway).  A
 * packet from an RNIC that uses non-zero IP IDs fails that check and is dropped
 * and counted as rx_bad_icrc, exactly like a packet with a corrupt ICRC.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/ip.h>

#include "tp_soft_cq.h"
#include "tp_soft_net.h"

#define SOFT_SOCK_BUF (8 << 20)

static int sock_common(int fd, int bufsz, int tos)
{
	int one = 1, pmtu = IP_PMTUDISC_DO;

	if (setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)) ||
	    (tos && setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos))))
		return -errno;
	/* Best effort: the kernel caps these at net.core.[rw]mem_max (root may force). */
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bufsz, sizeof(bufsz)))
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	return 0;
}

static int sock_bind(int fd, uint32_t ip, uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = ip };

	return bind(fd, (struct sockaddr *)&a, sizeof(a)) ? -errno : 0;
}

/*
 * Without root, SO_RCVBUF is capped by net.core.rmem_max (often 208 KiB), less
 * than one QP's packet window: bursts then drop in the kernel and go-back-N
 * resends them.  Say so once, with the fix.
 */
static void warn_small_rcvbuf(const struct soft_tp *tp, const char *ip)
{
	uint64_t want = (uint64_t)tp->max_inflight * (tp->mtu + 64) * 2;
	int have = 0;
	socklen_t l = sizeof(have);

	if (getsockopt(tp->fd, SOL_SOCKET, SO_RCVBUF, &have, &l) || (uint64_t)have >= want)
		return;
	fprintf(stderr, "soft: %s:%u: UDP receive buffer %d bytes is below the %llu bytes a "
		"window of %u packets needs; expect drops and retransmissions (raise "
		"net.core.rmem_max to %llu or run as root)\n", ip, tp->port, have,
		(unsigned long long)want, tp->max_inflight, (unsigned long long)want * 4);
}

int soft_net_open(struct soft_tp *tp, char *err, size_t errlen)
{
	int bufsz = SOFT_SOCK_BUF, r;
	char ip[INET_ADDRSTRLEN];

	nr_ip4_str(tp->ip, ip);
	tp->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (tp->fd < 0) {
		snprintf(err, errlen, "soft: socket: %s", strerror(errno));
		return -errno;
	}
	r = sock_common(tp->fd, bufsz, 0);
	if (!r && setsockopt(tp->fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsz, sizeof(bufsz)))
		(void)setsockopt(tp->fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	if (!r)
		r = sock_bind(tp->fd, tp->ip, tp->port);
	if (r) {
		snprintf(err, errlen, "soft: cannot bind UDP %s:%u: %s (is another transport or an "
			 "RDMA device using this address and port? use another local_ip or udp_port)",
			 ip, tp->port, strerror(-r));
		close(tp->fd);
		tp->fd = -1;
		return r;
	}
	warn_small_rcvbuf(tp, ip);
	tp->rxbuf = malloc((size_t)SOFT_BATCH * SOFT_PKT_MAX);
	tp->txbuf = malloc((size_t)(SOFT_BATCH + SOFT_DELAY_MAX) * SOFT_PKT_MAX);
	if (!tp->rxbuf || !tp->txbuf) {
		snprintf(err, errlen, "soft: out of memory for packet buffers");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < SOFT_BATCH; i++) {
		tp->rxiov[i].iov_base = tp->rxbuf + (size_t)i * SOFT_PKT_MAX;
		tp->rxiov[i].iov_len = SOFT_PKT_MAX;
	}
	tp->inj_tail = &tp->inj_head;
	return 0;
}

void soft_net_close(struct soft_tp *tp)
{
	if (tp->fd >= 0)
		close(tp->fd);
	tp->fd = -1;
	free(tp->rxbuf);
	free(tp->txbuf);
	soft_inject_free(tp);
}

/*
 * The send socket of a QP: bound to the entropy source port RNICs derive from
 * the QPN (0xC000 | hash); when another socket of this address holds it (a
 * QP of this or another process), the next of SOFT_SPORT_TRIES candidates
 * (stride 97, coprime with the 0x4000 ports of the range, so all distinct).
 */
#define SOFT_SPORT_TRIES 256

uint16_t soft_qp_sport(uint32_t qpn, unsigned attempt)
{
	uint32_t h = qpn * 2654435761u;

	return (uint16_t)(0xC000 | (((h >> 16) + attempt * 97) % 0x4000));
}

int soft_qp_sock_open(struct soft_tp *tp, struct soft_qp *qp)
{
	char ip[INET_ADDRSTRLEN];
	uint16_t port = 0;
	unsigned i;
	int r;

	nr_ip4_str(tp->ip, ip);
	qp->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (qp->fd < 0) {
		r = -errno;
		nr_tp_set_error(&tp->base, "soft: QP 0x%06x: socket: %s", qp->qpn, strerror(-r));
		return r;
	}
	r = sock_common(qp->fd, SOFT_SOCK_BUF, tp->tclass);
	if (r)
		nr_tp_set_error(&tp->base, "soft: QP 0x%06x: socket options: %s", qp->qpn,
				strerror(-r));
	for (i = 0; !r && i < SOFT_SPORT_TRIES; i++) {
		port = soft_qp_sport(qp->qpn, i);
		r = sock_bind(qp->fd, tp->ip, port);
		if (r != -EADDRINUSE)
			break;
		r = 0;
	}
	if (!r && i == SOFT_SPORT_TRIES) {
		r = -EADDRINUSE;
		nr_tp_set_error(&tp->base, "soft: QP 0x%06x: no free UDP source port: %s:%u "
				"(the QPN's) and the %u next candidates on that address are all "
				"bound by other sockets (free some, or use another local address)",
				qp->qpn, ip, soft_qp_sport(qp->qpn, 0), SOFT_SPORT_TRIES - 1);
	} else if (r && r != -EADDRINUSE && port) {
		nr_tp_set_error(&tp->base, "soft: QP 0x%06x: cannot bind UDP %s:%u: %s",
				qp->qpn, ip, port, strerror(-r));
	}
	if (r) {
		close(qp->fd);
		qp->fd = -1;
		return r;
	}
	qp->sport = port;
	return 0;
}

/* ---- send batch ------------------------------------------------------- */

static uint8_t *txpkt(struct soft_tp *tp, unsigned i)
{
	return tp->txbuf + (size_t)i * SOFT_PKT_MAX;
}

/* A buffer for qp's next packet; the batch holds one socket's packets at a time. */
static uint8_t *tx_slot(struct soft_tp *tp, struct soft_qp *qp)
{
	if (tp->txqp != qp && (tp->ntx || tp->ndelay))
		soft_tx_flush(tp);
	tp->txqp = qp;
	return txpkt(tp, tp->ntx);
}

static void tx_add(struct soft_tp *tp, unsigned at, uint32_t len, uint8_t kind, uint32_t psn,
		   int tos)
{
	tp->txiov[at].iov_len = len;
	tp->txent[at] = (struct soft_txent){ .qp = tp->txqp, .psn = psn, .kind = kind,
					     .tos = (int16_t)tos };
}

/* The packet of len bytes in the current slot is complete: filter it, queue it. */
static void tx_commit(struct soft_tp *tp, uint32_t len, uint8_t kind, uint32_t psn, int tos)
{
	uint8_t *pkt = txpkt(tp, tp->ntx);
	int v = tp->filter ? tp->filter(tp->filter_arg, NR_SOFT_TX, pkt, len) : NR_SOFT_PASS;

	if (v == NR_SOFT_DROP) {
		tp->st.tx_filtered++;
		return;
	}
	if (v == NR_SOFT_DELAY && tp->ndelay < SOFT_DELAY_MAX) {
		unsigned d = SOFT_BATCH + tp->ndelay++;

		memcpy(txpkt(tp, d), pkt, len);
		tp->delay_len[d - SOFT_BATCH] = len;
		tp->delay_ent[d - SOFT_BATCH] = (struct soft_txent){
			.qp = tp->txqp, .psn = psn, .kind = kind, .tos = (int16_t)tos };
		return;
	}
	tx_add(tp, tp->ntx++, len, kind, psn, tos);
	if (v == NR_SOFT_DUP && tp->ntx < SOFT_BATCH) {
		memcpy(txpkt(tp, tp->ntx), pkt, len);
		tx_add(tp, tp->ntx++, len, kind, psn, tos);
	}
	if (tp->ntx == SOFT_BATCH)
		soft_tx_flush(tp);
}

void soft_tx_build(struct soft_tp *tp, struct soft_qp *qp, const struct nr_build_args *a,
		   const void *payload, uint32_t len, uint8_t kind, int tos)
{
	int n = nr_build_transport(tx_slot(tp, qp), SOFT_PKT_MAX, &qp->ipx, qp->rqpn, a,
				   payload, len);

	if (n < 0) {     /* cannot happen: opcodes and lengths are ours */
		tp->st.tx_errors++;
		return;
	}
	tx_commit(tp, (uint32_t)n, kind, a->psn, tos);
}

/*
 * A datagram of its own traffic class: an IP_TOS control message for this
 * one sendmmsg entry, so a socket per traffic class is not needed and the
 * packets of one QP stay in one socket's order.  Linux takes IP_TOS as
 * ancillary data on UDP since 3.13 and keeps its ECN bits (only TCP masks
 * them).
 */
static void tx_tos(struct soft_tp *tp, unsigned i, struct msghdr *h)
{
	struct cmsghdr *cm;
	int tos = tp->txent[i].tos;

	if (tos < 0)
		return;
	h->msg_control = tp->txcmsg[i].buf;
	h->msg_controllen = sizeof(tp->txcmsg[i].buf);
	cm = CMSG_FIRSTHDR(h);
	cm->cmsg_level = IPPROTO_IP;
	cm->cmsg_type = IP_TOS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &tos, sizeof(tos));
}

int soft_tx_flush(struct soft_tp *tp)
{
	struct soft_qp *qp = tp->txqp;
	unsigned total = tp->ntx + tp->ndelay, sent = 0;

	if (!total)
		return 0;
	for (unsigned i = 0; i < tp->ndelay; i++) {
		tp->txiov[tp->ntx + i].iov_len = tp->delay_len[i];
		tp->txent[tp->ntx + i] = tp->delay_ent[i];
	}
	for (unsigned i = 0; i < total; i++) {
		struct msghdr *h = &tp->txmsg[i].msg_hdr;

		tp->txiov[i].iov_base = txpkt(tp, i < tp->ntx ? i : SOFT_BATCH + i - tp->ntx);
		memset(h, 0, sizeof(*h));
		h->msg_name = &qp->raddr;
		h->msg_namelen = sizeof(qp->raddr);
		h->msg_iov = &tp->txiov[i];
		h->msg_iovlen = 1;
		tx_tos(tp, i, h);
	}
	while (sent < total) {
		int r = sendmmsg(qp->fd, tp->txmsg + sent, total - sent, MSG_DONTWAIT);

		if (r > 0) {
			for (int i = 0; i < r; i++)
				tp->st.tx_bytes += tp->txiov[sent + i].iov_len;
			tp->st.tx_pkts += (unsigned)r;
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
		tp->st.tx_errors++;
		if (errno == EMSGSIZE && qp->state == SOFT_QP_RTS)
			soft_qp_to_error(qp, NR_WC_LOCAL_ERROR, NR_WC_FLUSHED,
					 "path MTU %u does not fit the IP MTU toward %s "
					 "(%zu-byte datagram refused): lower the transport's mtu",
					 tp->mtu, qp->peer, tp->txiov[sent].iov_len);
		sent++;     /* that packet is lost; go-back-N recovers it */
	}
	/* The state change of a sent packet is done; only unsent ones rewind. */
	for (unsigned i = sent; i < total; i++)
		tp->tx_unsent(tp->txent[i].qp, tp->txent[i].kind, tp->txent[i].psn);
	tp->ntx = tp->ndelay = 0;
	tp->txqp = NULL;
	return 0;
}

/* ---- receive ------------------------------------------------------------ */

static void rx_filter(struct soft_tp *tp, soft_rx_fn *deliver, uint8_t *buf, uint32_t len,
		      const struct sockaddr_in *from, unsigned *delayed, unsigned *ndelayed,
		      unsigned idx)
{
	int v = tp->filter ? tp->filter(tp->filter_arg, NR_SOFT_RX, buf, len) : NR_SOFT_PASS;

	switch (v) {
	case NR_SOFT_DROP:
		tp->st.rx_filtered++;
		return;
	case NR_SOFT_DELAY:
		if (delayed && *ndelayed < SOFT_BATCH) {
			delayed[(*ndelayed)++] = idx;
			return;
		}
		break;
	case NR_SOFT_DUP:
		deliver(tp, buf, len, from);
		break;
	}
	deliver(tp, buf, len, from);
}

static void rx_injected(struct soft_tp *tp, soft_rx_fn *deliver)
{
	struct soft_inject *in = tp->inj_head, *next;

	tp->inj_head = NULL;
	tp->inj_tail = &tp->inj_head;
	for (; in; in = next) {
		next = in->next;
		deliver(tp, in->data, in->len, &in->from);
		free(in);
	}
}

int soft_rx_round(struct soft_tp *tp, soft_rx_fn *deliver)
{
	unsigned delayed[SOFT_BATCH], ndelayed = 0;
	int n;

	if (tp->inj_head)
		rx_injected(tp, deliver);
	for (unsigned i = 0; i < SOFT_BATCH; i++) {
		struct msghdr *h = &tp->rxmsg[i].msg_hdr;

		memset(h, 0, sizeof(*h));
		h->msg_name = &tp->rxfrom[i];
		h->msg_namelen = sizeof(tp->rxfrom[i]);
		h->msg_iov = &tp->rxiov[i];
		h->msg_iovlen = 1;
	}
	n = recvmmsg(tp->fd, tp->rxmsg, SOFT_BATCH, MSG_DONTWAIT, NULL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		return -errno;
	}
	for (int i = 0; i < n; i++) {
		struct msghdr *h = &tp->rxmsg[i].msg_hdr;

		if ((h->msg_flags & MSG_TRUNC) || h->msg_namelen != sizeof(struct sockaddr_in)) {
			tp->st.rx_pkts++;
			tp->st.rx_malformed++;
			continue;
		}
		rx_filter(tp, deliver, tp->rxiov[i].iov_base, tp->rxmsg[i].msg_len, &tp->rxfrom[i],
			  delayed, &ndelayed, (unsigned)i);
	}
	for (unsigned j = 0; j < ndelayed; j++)
		deliver(tp, tp->rxiov[delayed[j]].iov_base, tp->rxmsg[delayed[j]].msg_len,
			&tp->rxfrom[delayed[j]]);
	return n;
}

/* ---- injection (tests) ---------------------------------------------------- */

int soft_inject_add(struct soft_tp *tp, uint32_t saddr, uint16_t sport,
		    const uint8_t *pkt, uint32_t len)
{
	struct soft_inject *in;

	if (len > SOFT_PKT_MAX)
		return -EINVAL;
	in = malloc(sizeof(*in) + len);
	if (!in)
		return -ENOMEM;
	in->next = NULL;
	in->from = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(sport),
					 .sin_addr.s_addr = saddr };
	in->len = len;
	memcpy(in->data, pkt, len);
	*tp->inj_tail = in;
	tp->inj_tail = &in->next;
	return 0;
}

void soft_inject_free(struct soft_tp *tp)
{
	struct soft_inject *in = tp->inj_head, *next;

	for (; in; in = next) {
		next = in->next;
		free(in);
	}
	tp->inj_head = NULL;
	tp->inj_tail = &tp->inj_head;
}
