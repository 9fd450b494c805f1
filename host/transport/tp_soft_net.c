/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft transport, the socket side: one receive socket bound to (local ip,
 * 4791) for every QP (of every transport of the process on that address:
 * tp_soft_share.c), one send socket per QP bound to (local ip, entropy
 * port), the batched receive (recvmmsg of GRO datagrams, cut into the packets
 * they hold), and the test filter and injection; the send batch is
 * tp_soft_tx.c's.
 *
 * What goes on the wire is what an RNIC sends, one RoCEv2 packet a datagram
 * with its own ICRC: DF set (IP_PMTUDISC_DO), the traffic class (IP_TOS: DSCP
 * and ECN, which the ICRC masks; the socket's, or a message's own as a control
 * message on its sends), and -- because the sockets are unconnected -- IP ID
 * 0, which Linux puts on every DF datagram of an unconnected UDP socket, and
 * 1, 2 ... on the following datagrams of a GSO send (UDP_SEGMENT, Linux 4.18):
 * the ICRC covers the ID, so ours is computed for that (tp_soft_icrc.c;
 * ConnectX numbers its packets' IDs one by one too).  The UDP checksum: 0
 * (SO_NO_CHECK), as RNICs send it, without GSO; with GSO the kernel refuses
 * SO_NO_CHECK and it (or the NIC) fills the checksum in, which the ICRC masks
 * and receivers of RoCEv2 ignore (the box does; a kernel receiver checks it).
 * NR_TP_OFFLOAD_OFF (NR_SOFT_GSO=0) keeps ID 0 and checksum 0 on every packet.
 *
 * Receive: UDP_GRO (Linux 5.0) hands up a flow's consecutive datagrams as one
 * (a GSO send arriving on this host whole, or datagrams the device's GRO
 * joined), with their size in a control message; each is one packet.  A UDP
 * socket does not show the IP header, so the ICRC of a received packet is
 * checked assuming what our senders and the box produce: DF, no IP options,
 * the source address from recvmmsg and our own as destination, an IP ID in
 * 0..63 (tp_soft_icrc.c; TOS and TTL are masked by the ICRC anyway).  A packet
 * from an RNIC that numbers IDs beyond that fails the check and is dropped and
 * counted as rx_bad_icrc, exactly like a packet with a corrupt ICRC.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/ip.h>
#include <netinet/udp.h>

#include "tp_soft_cq.h"
#include "tp_soft_net.h"
#include "tp_soft_share.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif
#ifndef UDP_GRO
#define UDP_GRO 104
#endif

#define SOFT_SOCK_BUF (8 << 20)

/* no_check: UDP checksum 0 (SO_NO_CHECK), for a socket that sends without GSO */
static int sock_common(int fd, int bufsz, int tos, bool no_check)
{
	int one = 1, pmtu = IP_PMTUDISC_DO;

	if ((no_check && setsockopt(fd, SOL_SOCKET, SO_NO_CHECK, &one, sizeof(one))) ||
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

/*
 * What this kernel offers: UDP_SEGMENT (a probe socket, since the send sockets
 * come later) and UDP_GRO on the receive socket (rx_sock: this transport
 * bound it; a shared one keeps what its first transport set), unless offloads
 * are off.  A kernel without them is said once per process and counted.
 */
static void offloads(struct soft_tp *tp, bool want, bool rx_sock)
{
	static bool said_gso, said_gro;
	int one = 1, probe;

	tp->gso = false;
	if (rx_sock)
		tp->gro = false;
	if (!want)
		return;
	if (rx_sock)
		tp->gro = setsockopt(tp->fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) == 0;
	probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		int seg = 1024;

		tp->gso = setsockopt(probe, SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg)) == 0;
		close(probe);
	}
	if (!tp->gso) {
		tp->st.gso_fallback++;
		if (!said_gso)
			fprintf(stderr, "soft: this kernel has no UDP GSO (UDP_SEGMENT, Linux 4.18): "
				"one datagram a send, slower\n");
		said_gso = true;
	}
	if (rx_sock && !tp->gro) {
		tp->st.gro_fallback++;
		if (!said_gro)
			fprintf(stderr, "soft: this kernel has no UDP GRO (UDP_GRO, Linux 5.0): one "
				"datagram a receive, slower\n");
		said_gro = true;
	}
}

/* The receive socket bound to (tp->ip, tp->port), GRO if wanted: 0 or -errno. */
static int rx_sock_open(struct soft_tp *tp, bool offload, char *err, size_t errlen)
{
	int bufsz = SOFT_SOCK_BUF, r;
	char ip[INET_ADDRSTRLEN];

	nr_ip4_str(tp->ip, ip);
	tp->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (tp->fd < 0) {
		snprintf(err, errlen, "soft: socket: %s", strerror(errno));
		return -errno;
	}
	r = sock_common(tp->fd, bufsz, 0, true);
	if (!r && setsockopt(tp->fd, SOL_SOCKET, SO_RCVBUFFORCE, &bufsz, sizeof(bufsz)))
		(void)setsockopt(tp->fd, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	if (!r)
		r = sock_bind(tp->fd, tp->ip, tp->port);
	if (r) {
		snprintf(err, errlen,
			 "soft: cannot bind UDP %s:%u: %s (is another process or an "
			 "RDMA device using this address and port? use another local_ip or udp_port)",
			 ip, tp->port, strerror(-r));
		close(tp->fd);
		tp->fd = -1;
		return r;
	}
	warn_small_rcvbuf(tp, ip);
	offloads(tp, offload, true);
	return 0;
}

int soft_net_open(struct soft_tp *tp, bool offload, char *err, size_t errlen)
{
	int r = soft_share_join(tp);

	if (r < 0) {
		snprintf(err, errlen, "soft: eventfd: %s", strerror(-r));
		return r;
	}
	if (r) { /* another transport of this process has the socket, GRO its */
		offloads(tp, offload, false);
	} else { /* this one binds it, the registry locked until the add */
		r = rx_sock_open(tp, offload, err, errlen);
		if (soft_share_add(tp, r == 0) && !r) {
			snprintf(err, errlen, "soft: out of memory");
			r = -ENOMEM;
		}
		if (r)
			return r;
	}
	tp->rxbuf = malloc((size_t)SOFT_RX_MSGS * SOFT_RX_STRIDE);
	if (!tp->rxbuf) {
		snprintf(err, errlen, "soft: out of memory for the receive buffers (%zu bytes)",
			 (size_t)SOFT_RX_MSGS * SOFT_RX_STRIDE);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < SOFT_RX_MSGS; i++) {
		tp->rxiov[i].iov_base = tp->rxbuf + (size_t)i * SOFT_RX_STRIDE;
		tp->rxiov[i].iov_len = tp->gro ? SOFT_RX_BUF : SOFT_PKT_MAX;
	}
	tp->inj_tail = &tp->inj_head;
	return 0;
}

/* With a test filter, packets are built whole (tp_soft_tx.c): their buffers. */
int soft_net_filter_bufs(struct soft_tp *tp)
{
	if (tp->fbuf)
		return 0;
	tp->fbuf = malloc((size_t)SOFT_TX_SLOTS * SOFT_PKT_MAX);
	tp->dbuf = malloc((size_t)SOFT_DELAY_MAX * SOFT_PKT_MAX);
	if (tp->fbuf && tp->dbuf)
		return 0;
	free(tp->fbuf);
	free(tp->dbuf);
	tp->fbuf = tp->dbuf = NULL;
	return -ENOMEM;
}

void soft_net_close(struct soft_tp *tp)
{
	if (soft_share_leave(tp) && tp->fd >= 0)
		close(tp->fd);
	tp->fd = -1;
	free(tp->rxbuf);
	free(tp->fbuf);
	free(tp->dbuf);
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

/* A send socket of tp bound to (tp->ip, port) into *fd: 0 or -errno. */
static int sock_open_bound(struct soft_tp *tp, uint16_t port, int *fd)
{
	int r;

	*fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (*fd < 0)
		return -errno;
	/* GSO sockets keep their UDP checksum: the kernel refuses GSO with SO_NO_CHECK */
	r = sock_common(*fd, SOFT_SOCK_BUF, tp->tclass, !tp->gso);
	if (!r)
		r = sock_bind(*fd, tp->ip, port);
	if (r) {
		close(*fd);
		*fd = -1;
	}
	return r;
}

int soft_qp_spray_open(struct soft_tp *tp, struct soft_qp *qp, unsigned ports)
{
	char ip[INET_ADDRSTRLEN];
	int *fds = calloc(ports, sizeof(*fds));
	unsigned i, k = 0;
	uint16_t base = 0;
	int r = -EADDRINUSE;

	if (!fds)
		return -ENOMEM;
	for (i = 0; r == -EADDRINUSE && i < SOFT_SPORT_TRIES; i++) {
		base = soft_qp_sport(qp->qpn, i);
		if (base + ports - 1 > 0xFFFF)
			continue;
		for (k = 0, r = 0; !r && k < ports; k++)
			r = sock_open_bound(tp, (uint16_t)(base + k), &fds[k]);
		if (r)
			while (--k > 0)
				close(fds[k - 1]);
	}
	nr_ip4_str(tp->ip, ip);
	if (r == -EADDRINUSE)
		nr_tp_set_error(&tp->base, "soft: QP 0x%06x: no %u free UDP source ports in a row "
				"on %s from its %u candidates (free some, or spray over fewer "
				"ports)", qp->qpn, ports, ip, SOFT_SPORT_TRIES);
	else if (r)
		nr_tp_set_error(&tp->base, "soft: QP 0x%06x: cannot bind %u UDP source ports on "
				"%s: %s", qp->qpn, ports, ip, strerror(-r));
	if (r) {
		free(fds);
		return r;
	}
	if (qp->fd >= 0)
		close(qp->fd);
	free(qp->spray_fd);
	qp->fd = fds[0];
	qp->spray_fd = fds;
	qp->nspray = (uint16_t)ports;
	qp->sport = base;
	return soft_qp_rail_bind(tp, qp);
}

int soft_qp_rail_bind(struct soft_tp *tp, struct soft_qp *qp)
{
	unsigned n = qp->spray_fd ? qp->nspray : 1;

	if (!qp->rail[0])
		return 0;
	for (unsigned k = 0; k < n; k++) {
		int fd = qp->spray_fd ? qp->spray_fd[k] : qp->fd;

		if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, qp->rail,
			       (socklen_t)strlen(qp->rail) + 1)) {
			int r = -errno;

			nr_tp_set_error(&tp->base,
					"soft: QP 0x%06x: cannot send by interface %s "
					"(SO_BINDTODEVICE): %s%s",
					qp->qpn, qp->rail, strerror(-r),
					r == -ENODEV  ? " (no such interface here)"
					: r == -EPERM ? " (it takes CAP_NET_RAW)"
						      : "");
			return r;
		}
	}
	return 0;
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
	/* GSO sockets keep their UDP checksum: the kernel refuses GSO with SO_NO_CHECK */
	r = sock_common(qp->fd, SOFT_SOCK_BUF, tp->tclass, !tp->gso);
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

/* ---- receive ------------------------------------------------------------ */

/* One packet (a UDP payload) through the test filter; DELAY: after the batch. */
struct rx_held {
	uint8_t *buf;
	uint32_t len;
	unsigned from;
};

static void rx_filter(struct soft_tp *tp, soft_rx_fn *deliver, uint8_t *buf, uint32_t len,
		      unsigned from, struct rx_held *held, unsigned *nheld)
{
	int v = tp->filter ? tp->filter(tp->filter_arg, NR_SOFT_RX, buf, len) : NR_SOFT_PASS;

	switch (v) {
	case NR_SOFT_DROP:
		tp->st.rx_filtered++;
		return;
	case NR_SOFT_DELAY:
		if (*nheld < SOFT_DELAY_MAX) {
			held[(*nheld)++] = (struct rx_held){ buf, len, from };
			return;
		}
		break;
	case NR_SOFT_DUP:
		deliver(tp, buf, len, &tp->rxfrom[from]);
		break;
	}
	deliver(tp, buf, len, &tp->rxfrom[from]);
}

/* Each packet of a list (injected, or passed by another transport), freed. */
static void rx_list(struct soft_tp *tp, soft_rx_fn *deliver, struct soft_inject *in)
{
	for (struct soft_inject *next; in; in = next) {
		next = in->next;
		deliver(tp, in->data, in->len, &in->from);
		free(in);
	}
}

static void rx_injected(struct soft_tp *tp, soft_rx_fn *deliver)
{
	struct soft_inject *in = tp->inj_head;

	tp->inj_head = NULL;
	tp->inj_tail = &tp->inj_head;
	rx_list(tp, deliver, in);
}

/* The segment size of a GRO datagram (UDP_GRO control message), 0: a plain one. */
static uint32_t gro_size(struct msghdr *h)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(h); cm; cm = CMSG_NXTHDR(h, cm))
		if (cm->cmsg_level == SOL_UDP && cm->cmsg_type == UDP_GRO) {
			int v;

			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			return v > 0 ? (uint32_t)v : 0;
		}
	return 0;
}

static int rx_batch(struct soft_tp *tp, soft_rx_fn *deliver);

int soft_rx_round(struct soft_tp *tp, soft_rx_fn *deliver)
{
	bool reads;
	int n;

	if (tp->inj_head)
		rx_injected(tp, deliver);
	/* what another transport on the socket read for this one, then the socket
	 * (unless that one reads it now): in the order the socket received */
	reads = soft_share_rx_enter(tp);
	rx_list(tp, deliver, soft_share_take(tp));
	if (!reads)
		return 0;
	n = rx_batch(tp, deliver);
	soft_share_rx_leave(tp);
	return n;
}

/*
 * How many datagrams to read: a batch, or on a socket shared with other
 * transports one when the first waiting is another's (an idle transport's
 * progress tick then passes one datagram, not a batch of another's
 * stream to copy; the datagram still leaves the queue: what waits behind it
 * may be this transport's).  A GRO datagram is one flow's: its first BTH
 * names its QP.
 */
static unsigned rx_take(struct soft_tp *tp)
{
	struct nr_bth bth;

	if (soft_share_alone(tp) ||
	    recv(tp->fd, &bth, sizeof(bth), MSG_PEEK | MSG_DONTWAIT) != (ssize_t)sizeof(bth))
		return SOFT_RX_MSGS;
	return soft_share_foreign(tp, nr_bth_qpn(&bth)) ? 1 : SOFT_RX_MSGS;
}

/* One recvmmsg, each packet delivered: entries received, or -errno. */
static int rx_batch(struct soft_tp *tp, soft_rx_fn *deliver)
{
	struct rx_held held[SOFT_DELAY_MAX];
	unsigned nheld = 0;
	int n;

	for (unsigned i = 0; i < SOFT_RX_MSGS; i++) {
		struct msghdr *h = &tp->rxmsg[i].msg_hdr;

		*h = (struct msghdr){ .msg_name = &tp->rxfrom[i], .msg_namelen = sizeof(tp->rxfrom[i]),
				      .msg_iov = &tp->rxiov[i], .msg_iovlen = 1 };
		if (tp->gro) {
			h->msg_control = tp->rxcmsg[i].buf;
			h->msg_controllen = sizeof(tp->rxcmsg[i].buf);
		}
	}
	n = recvmmsg(tp->fd, tp->rxmsg, rx_take(tp), MSG_DONTWAIT, NULL);
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		return -errno;
	}
	tp->st.rx_calls++;
	for (int i = 0; i < n; i++) {
		struct msghdr *h = &tp->rxmsg[i].msg_hdr;
		uint8_t *buf = tp->rxiov[i].iov_base;
		uint32_t len = tp->rxmsg[i].msg_len, seg = tp->gro ? gro_size(h) : 0;

		if ((h->msg_flags & MSG_TRUNC) || h->msg_namelen != sizeof(struct sockaddr_in)) {
			tp->st.rx_pkts++;
			tp->st.rx_malformed++;
			continue;
		}
		if (!seg || seg >= len) {
			rx_filter(tp, deliver, buf, len, (unsigned)i, held, &nheld);
			continue;
		}
		/* a GRO datagram: the packets of one send of one flow, IP IDs from 0 most likely */
		tp->st.rx_gro++;
		tp->rx_id_next = 0;
		for (uint32_t off = 0; off < len; off += seg)
			rx_filter(tp, deliver, buf + off, len - off < seg ? len - off : seg,
				  (unsigned)i, held, &nheld);
	}
	for (unsigned j = 0; j < nheld; j++)
		deliver(tp, held[j].buf, held[j].len, &tp->rxfrom[held[j].from]);
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
	soft_inject_drop(&tp->inj_head, &tp->inj_tail);
}
