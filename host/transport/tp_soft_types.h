/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state of the soft transport (types only), split by role like rxe: frames
 * on the wire (tp_soft_net.c), completions (tp_soft_cq.c), requester
 * (tp_soft_req.c), responder (tp_soft_resp.c), objects and the poll loop
 * (tp_soft_qp.c), bottom up as host/transport/README.md lists them.
 *
 * Threading: a transport object and its QPs are driven by one thread (the
 * one calling nr_tp_poll and the posting functions); nothing here locks.
 */
#ifndef NR_TP_SOFT_TYPES_H
#define NR_TP_SOFT_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "proto/roce_build.h"
#include "proto/roce_hdr.h"
#include "proto/roce_icrc.h"
#include "proto/roce_pkt.h"
#include "proto/nr_text.h"
#include "tp_internal.h"
#include "tp_soft.h"

#define SOFT_MAX_MTU      4096
/* BTH + RETH + ImmDt + payload + ICRC, rounded up: the largest packet we make. */
#define SOFT_PKT_MAX      (SOFT_MAX_MTU + 64)
#define SOFT_HDR_MAX      32             /* BTH + RETH + ImmDt: the longest header we send */
#define SOFT_ACKREQ_EVERY 64             /* legacy: AckReq on every 64th packet of a message */
/* RNIC responder: an ACK at the latest after this many packets without AckReq */
#define SOFT_ACK_COALESCE 128
#define SOFT_DELAY_MAX    16             /* packets a filter may hold back per batch */

/*
 * The send batch: one QP's packets, at least a window (128) and an ACK, sent
 * by one sendmmsg whose entries are GSO sends (UDP_SEGMENT) of up to
 * SOFT_GSO_SEGS datagrams and SOFT_GSO_BYTES bytes (the kernel's limits:
 * UDP_MAX_SEGMENTS, 64 before Linux 6.10, and an IPv4 datagram).
 */
#define SOFT_TX_PKTS      256
#define SOFT_TX_SLOTS     (SOFT_TX_PKTS + SOFT_DELAY_MAX + 1)   /* + a duplicate */
#define SOFT_GSO_SEGS     64
#define SOFT_GSO_BYTES    65000
/*
 * The receive batch: recvmmsg entries of a GRO datagram each (UDP_GRO: up to
 * 64 KiB of one flow's datagrams, one after the other), SOFT_RX_ROUNDS of
 * them per progress call at most; owed ACKs leave after every SOFT_ACK_FLUSH
 * packets of a batch and at its end.
 */
#define SOFT_RX_MSGS      64
#define SOFT_RX_BUF       65536
/* entries SOFT_RX_BUF apart would share the cache's sets: a stride off the power of two */
#define SOFT_RX_STRIDE    (SOFT_RX_BUF + 4160)
#define SOFT_RX_ROUNDS    8
#define SOFT_ACK_FLUSH    64
/*
 * IP IDs: the kernel numbers the datagrams of a GSO send 0, 1, 2 ... (DF,
 * unconnected socket), and the ICRC covers the ID; a received packet's ID,
 * which a UDP socket does not show, is accepted in [0, SOFT_IPID_SPAN)
 * (tp_soft_icrc.c).
 */
#define SOFT_IPID_SPAN    SOFT_GSO_SEGS
#define SOFT_IPID_CACHE   8              /* packet lengths whose ID tables are kept */
/* pseudo-header CRCs kept (tp_soft_icrc.c): per QP by length, received by source and length */
#define SOFT_PFX_CACHE    8
/* UDP source ports a QP may spray its packets over (nr_tp_qp_spray; the box's NR_MAX_SPRAY) */
#define SOFT_SPRAY_MAX    64
#define SOFT_RXPFX_CACHE  8
/*
 * Selective repeat (SR profile, tp_soft_req.c and tp_soft_resp.c): a PSN the
 * responder has not got is named in a selective NAK once a packet more than
 * SOFT_SR_REORDER beyond it is in (reordering that short is not loss); the
 * expected PSN is named again when it is still missing two NAK round trips
 * (measured, SOFT_SR_RTT0_NS before a sample) and at least SOFT_SR_WAIT_NS
 * after; a PSN the requester resent is not resent again for a selective NAK
 * within SOFT_SR_DAMP_NS (one loss named twice at once: the box's NAK and
 * the receiver's).
 */
/* clang-format off */
#define SOFT_SR_REORDER   2
#define SOFT_SR_RTT0_NS   1000000ull
#define SOFT_SR_WAIT_NS   100000ull
#define SOFT_SR_DAMP_NS   50000ull
/* clang-format on */

enum soft_qp_state {
	SOFT_QP_INIT = 0,                /* created, not connected */
	SOFT_QP_RTS = 1,                 /* connected */
	SOFT_QP_ERR = 2,
};

/* One posted RDMA WRITE WITH IMMEDIATE.  Its PSNs are fixed at post time. */
struct soft_swr {
	uint64_t wr_id;
	const uint8_t *laddr;
	uint64_t rva;
	uint32_t len;
	uint32_t rkey;
	uint32_t imm;
	uint32_t psn;                    /* first PSN */
	uint32_t npkts;                  /* >= 1 */
	int16_t tos;                     /* IP_TOS of its packets, -1: the socket's (tp->tclass) */
	int16_t de_tos;                  /* IP_TOS of its drop-eligible packets (de) */
	const uint64_t *de;              /* bit k: packet k is drop-eligible (nr_tp_mark); NULL */
};

/* clang-format off */
/* SR responder: a packet that came ahead of the expected PSN, kept whole for its turn. */
struct soft_ooo {
	struct nr_pkt p;                 /* parsed, its offsets into the kept bytes */
	uint32_t psn;
	bool used;
};

/* SR requester: when PSN psn was last queued for a selective resend. */
struct soft_sr_mark {
	uint32_t psn;
	uint64_t ns;                     /* 0: never */
};
/* clang-format on */

/* A write with immediate that arrived before a receive was posted. */
struct soft_early_recv {
	uint32_t imm;
	uint32_t byte_len;
};

struct soft_mr {
	uint8_t *addr;
	size_t len;
	uint64_t va;
	uint32_t rkey;
};

struct soft_tp;

/*
 * The CRC of the pseudo headers the ICRC covers (IP ID 0) of a packet of tlen
 * bytes, and through a WRITE MIDDLE's BTH whose first 8 bytes are bth0 (with
 * its last 4, AckReq and PSN, zero).
 */
struct soft_pfx {
	uint32_t tlen;                   /* BTH .. pad; 0: unused */
	uint16_t sport;                  /* the UDP source port it was made for */
	uint32_t crc;
	uint64_t bth0;
	uint32_t crc_bth;
	bool bth_ok;
};

/* The same for received packets, by their source. */
struct soft_rx_pfx {
	uint32_t saddr;                  /* network order */
	uint16_t sport;                  /* host order */
	uint32_t tlen;
	uint32_t crc;
};

struct soft_qp {
	struct nr_tp_qp base;
	struct soft_tp *tp;
	int state;                       /* enum soft_qp_state */
	uint32_t qpn;
	int fd;                          /* send socket bound to (local ip, sport) */
	uint16_t sport;                  /* UDP source port: per-QP entropy */
	/* spraying (nr_tp_qp_spray): the sockets of sport, sport + 1, ... sport +
	 * nspray - 1 (spray_fd[0] is fd), one taken per send in turn */
	int *spray_fd;
	uint16_t nspray;                 /* 1: no spraying (spray_fd NULL) */
	char rail[16];                   /* its sockets' device (nr_tp_qp_rail); "": none */
	uint16_t spray_next;
	uint32_t rip;                    /* peer, network order */
	uint16_t rport;                  /* peer's UDP port, host order */
	uint32_t rqpn;
	struct sockaddr_in raddr;
	struct nr_icrc_ip4 ipx;          /* what the kernel puts in our packets' IP/UDP headers */
	struct soft_pfx pfx[SOFT_PFX_CACHE];   /* their pseudo headers' CRCs (tp_soft_icrc.c) */
	unsigned pfx_next;
	char peer[INET_ADDRSTRLEN];
	char err[320];

	/* ---- requester --------------------------------------------------- */
	struct soft_swr *sq;             /* ring, sq_cap a power of two */
	uint32_t sq_cap, sq_head, sq_cur, sq_tail; /* free-running indices */
	uint32_t ipsn;                   /* our initial send PSN */
	uint32_t next_psn;               /* first PSN of the next posted WR */
	uint32_t snd_una;                /* oldest unacknowledged PSN */
	uint32_t snd_nxt;                /* next PSN to transmit (sq_cur holds it) */
	uint32_t snd_hi;                 /* one past the highest PSN ever sent */
	uint64_t ack_deadline;           /* ns, 0: timer off */
	uint64_t rnr_until;              /* ns, 0: no RNR wait */
	unsigned retries;                /* retries without progress (RXE: timeouts and
					  * sequence NAKs; RNIC and legacy: timeouts) */
	unsigned rnr_retries;            /* RNR NAKs without progress */
	bool retrying;                   /* RNIC, RXE: a sequence NAK or a timeout started a go-back-N;
					  * further NAKs only acknowledge until progress
					  * (rxe's comp.started_retry) */
	uint32_t noack;                  /* RNIC: packets sent since the last AckReq */
	/* since the last progress: the RNIC profile's budget runs from it, and the
	 * retry-exceeded message and nr_tp_qp_state say what happened since */
	uint64_t progress_ns;            /* snd_una last moved, an RNR NAK came, or a packet
					  * left with nothing outstanding (or the QP connected) */
	uint64_t peer_rx_ns;             /* the last packet from the peer on this QP, 0: none */
	uint32_t naks_idle;              /* sequence NAKs received since then */
	bool fixed_timeout;              /* RNIC: the fixed timeout all the same (its ACKs
					  * wait on others: nr_tp_qp_acks_lag) */
	/* SR: PSNs selective NAKs named, resent before new data (ring, sr_qcap
	 * a power of two), and when each PSN was last queued (sr_cap entries,
	 * by psn & (sr_cap - 1)); NULL until the first selective NAK */
	uint32_t *sr_q;
	uint32_t sr_qcap, sr_head, sr_tail;
	struct soft_sr_mark *sr_mark;
	uint32_t sr_cap;

	/* ---- responder --------------------------------------------------- */
	uint32_t epsn;                   /* expected PSN */
	uint32_t msn;                    /* messages completed */
	bool nak_sent;                   /* sequence NAK sent for this epsn */
	bool in_msg;                     /* inside a FIRST .. LAST message */
	bool ack_due;                    /* on the transport's ACK list */
	uint32_t unacked;                /* RNIC: packets executed since our last ACK */
	uint8_t *wptr;                   /* where the next payload byte lands */
	uint32_t wrem;                   /* bytes the current message still carries */
	uint32_t mlen;                   /* its total length */
	uint64_t *rq;                    /* posted receives: ring of wr_ids */
	uint32_t rq_cap, rq_head, rq_tail;
	struct soft_early_recv *er;      /* arrived before a receive was posted */
	uint32_t er_cap, er_head, er_tail;
	/* SR: packets ahead of epsn (ooo_cap entries by psn & (ooo_cap - 1), their
	 * bytes SOFT_PKT_MAX apart in ooo_buf; NULL until the first); every PSN
	 * below sr_nak_hi that was missing has been named in a selective NAK */
	struct soft_ooo *ooo;
	uint8_t *ooo_buf;
	uint32_t ooo_cap;
	uint32_t sr_nak_hi;
	/* clang-format off */
	uint32_t sr_kept;                /* packets in ooo: epsn is missing while nonzero */
	uint64_t sr_gap_ns;              /* since when epsn is missing with packets kept */
	uint32_t sr_una_psn;             /* the epsn a selective NAK last named, at sr_una_ns */
	uint64_t sr_una_ns;              /* (0: none) */
	bool sr_una_again;               /* ... named again: no round-trip sample from it */
	uint64_t sr_rtt_ns;              /* smoothed NAK -> resend round trip (0: no sample) */
	/* clang-format on */
	struct soft_qp *ack_next;
};

/*
 * One packet of the send batch.  Gathered (no test filter): its header at
 * edge + 8, the pad and ICRC of the packet before it (in the same send) right
 * before that, so one iovec carries both, and its payload read where the
 * posted write has it; nothing copied.  With a filter: whole, copied into
 * tp->fbuf or tp->dbuf (buf).
 */
struct soft_txpkt {
	uint32_t psn;
	uint16_t len;                    /* datagram (UDP payload) bytes */
	uint16_t pos;                    /* its place in its GSO send: the IP ID the kernel gives it */
	uint8_t kind;                    /* SOFT_TX_DATA / SOFT_TX_ACK */
	uint8_t port;                    /* its source port: qp->sport + port (spraying) */
	uint8_t hl, tl;                  /* header bytes; pad and ICRC bytes */
	int16_t tos;                     /* IP_TOS of this datagram, -1: the socket's */
	uint32_t plen;
	const void *pay;
	uint8_t *buf;                    /* a whole packet (filter), NULL: gathered */
	uint8_t edge[8 + SOFT_HDR_MAX];  /* the previous packet's trailer, this one's header */
	uint8_t trl[8];                  /* pad and ICRC */
};

/* One sendmmsg entry: packets [first, first + n) of the batch, one GSO send when n > 1. */
struct soft_txmsg {
	uint16_t first, n;
	uint16_t seg;                    /* bytes of each datagram but the last (gso_size) */
	uint16_t closed;                 /* a shorter datagram ended it */
	uint32_t bytes;
	int16_t tos;
	uint16_t port;                   /* the socket it leaves from: qp->sport + port */
};

/* Ancillary data of one sendmmsg entry: UDP_SEGMENT and its own IP_TOS. */
union soft_tx_cmsg {
	char buf[CMSG_SPACE(sizeof(uint16_t)) + CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

/* Ancillary data of one received entry: UDP_GRO's segment size. */
union soft_rx_cmsg {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

/* The ICRC change that moving a packet of n ICRC-covered bytes from IP ID 0 to x makes. */
struct soft_ipid_tab {
	uint32_t n;                      /* 0: unused */
	uint32_t d[SOFT_IPID_SPAN];
};

enum { SOFT_TX_DATA = 0, SOFT_TX_ACK = 1 };

struct soft_inject {
	struct soft_inject *next;
	struct sockaddr_in from;
	uint32_t len;
	uint8_t data[];
};

/* Free a list of them, left empty (*tail back at head). */
static inline void soft_inject_drop(struct soft_inject **head, struct soft_inject ***tail)
{
	for (struct soft_inject *in = *head, *next; in; in = next) {
		next = in->next;
		free(in);
	}
	*head = NULL;
	*tail = head;
}

struct soft_share;

struct soft_tp {
	struct nr_tp base;
	int fd;                          /* receive socket (local ip, udp_port) */
	uint32_t ip;                     /* network order */
	uint16_t port;                   /* host order */
	uint32_t mtu;
	uint8_t timeout_exp;
	uint8_t retry_cnt;
	uint8_t rnr_retry;               /* 7: infinite */
	uint8_t profile;                 /* enum nr_tp_profile */
	uint8_t tclass;                  /* IP_TOS of the send sockets */
	uint32_t max_inflight;
	uint32_t ackreq_every;
	uint64_t timeout_ns;
	int64_t force_ipsn;              /* < 0: random */

	struct soft_qp **qps;
	unsigned nqps, qps_cap;
	struct soft_qp *last_qp;

	struct soft_mr *mrs;
	unsigned nmrs, mrs_cap;

	struct nr_wc *cq;                /* ring, cq_cap a power of two */
	uint32_t cq_cap, cq_head, cq_tail;

	struct soft_qp *ack_list;        /* QPs owing an ACK */
	bool tx_blocked;                 /* a send socket was full */
	/* a packet the send socket refused (tp_soft_qp.c sets it: data is sent
	 * again from its PSN, an ACK is owed again) */
	void (*tx_unsent)(struct soft_qp *qp, uint8_t kind, uint32_t psn);
	uint64_t now;                    /* ns, CLOCK_MONOTONIC, refreshed per round */

	struct nr_tp_soft_stats st;

	nr_tp_soft_filter_fn filter;
	void *filter_arg;
	struct soft_inject *inj_head, **inj_tail;

	/* the receive socket's other transports of this process (tp_soft_share.c):
	 * the share, the packets they read for this one (under the share's lock),
	 * the eventfd that says some are there */
	struct soft_share *share;
	struct soft_inject *in_head, **in_tail;
	uint32_t in_bytes; /* the inbox's packets' bytes */
	int wake_fd;

	/* what the kernel offers (soft_net_open; NR_TP_OFFLOAD_OFF: neither) */
	bool gso;                        /* UDP_SEGMENT on the send sockets */
	uint32_t gso_segs;               /* datagrams a GSO send at most: the AckReq interval,
					  * at most SOFT_GSO_SEGS (tp_soft_tx.c) */
	bool gro;                        /* UDP_GRO on the receive socket */

	/* receive batch */
	uint8_t *rxbuf;                  /* SOFT_RX_MSGS entries SOFT_RX_STRIDE apart */
	struct mmsghdr rxmsg[SOFT_RX_MSGS];
	struct iovec rxiov[SOFT_RX_MSGS];
	struct sockaddr_in rxfrom[SOFT_RX_MSGS];
	union soft_rx_cmsg rxcmsg[SOFT_RX_MSGS];
	unsigned rx_since_flush;         /* packets since the ACK list was last flushed */
	uint16_t rx_id_next;             /* the IP ID the next packet likely has */

	/* send batch (one QP's socket at a time) */
	struct soft_qp *txqp;
	unsigned ntx, nmsg, ndelay;
	uint8_t *fbuf;                   /* with a test filter: SOFT_TX_SLOTS whole packets */
	struct soft_txpkt txp[SOFT_TX_SLOTS];
	struct soft_txmsg txm[SOFT_TX_SLOTS];
	struct iovec txiov[SOFT_TX_SLOTS * 3];      /* made at the flush */
	struct mmsghdr txmsg[SOFT_TX_SLOTS];
	union soft_tx_cmsg txcmsg[SOFT_TX_SLOTS];
	struct soft_txpkt delay[SOFT_DELAY_MAX];    /* held back by the filter, whole in dbuf */
	uint8_t *dbuf;                   /* SOFT_DELAY_MAX * SOFT_PKT_MAX, with fbuf */

	/* tp_soft_icrc.c: the IP ID's share after the pseudo headers, its tables over
	 * whole packets of the last lengths seen, received pseudo headers' CRCs */
	uint32_t id_pfx[SOFT_IPID_SPAN];
	uint32_t id_bth[SOFT_IPID_SPAN];         /* ... and after a BTH */
	struct soft_ipid_tab ipid[SOFT_IPID_CACHE];
	unsigned ipid_next;
	struct soft_rx_pfx rxpfx[SOFT_RXPFX_CACHE];
	unsigned rxpfx_next, rxpfx_last;
};

static inline struct soft_tp *soft_tp(struct nr_tp *t) { return (struct soft_tp *)t; }
static inline struct soft_qp *soft_qp(struct nr_tp_qp *q) { return (struct soft_qp *)q; }

/*
 * The RNIC rules (RNIC and RXE profiles), and whether a QP's ACK timeout
 * adapts: RNIC, unless the QP was told its ACKs wait on others
 * (nr_tp_qp_acks_lag).
 */
static inline bool soft_rnic(const struct soft_tp *tp) { return tp->profile != NR_TP_PROFILE_LEGACY; }
static inline bool soft_adaptive(const struct soft_qp *qp)
{
	return (qp->tp->profile == NR_TP_PROFILE_RNIC || qp->tp->profile == NR_TP_PROFILE_SR) &&
	       !qp->fixed_timeout;
}

/* Selective repeat (SR profile): the responder keeps what comes early, the
 * requester resends what a selective NAK names. */
static inline bool soft_sr(const struct soft_tp *tp)
{
	return tp->profile == NR_TP_PROFILE_SR;
}

/* RNIC (adaptive): the first wait, 1/32 of the timeout but at least 1 ms (at most the timeout). */
static inline uint64_t soft_adaptive_base(const struct soft_tp *tp)
{
	uint64_t b = tp->timeout_ns >> 5;

	return b >= 1000000 ? b : tp->timeout_ns < 1000000 ? tp->timeout_ns : 1000000;
}

/*
 * How long to wait for an ACK now: RXE the fixed timeout; RNIC the adaptive
 * one (doubled per timeout without progress, up to the timeout, and never past
 * the end of the budget: retry_cnt + 1 timeouts after the last progress);
 * legacy doubled per retry.
 */
static inline uint64_t soft_ack_wait(const struct soft_qp *qp)
{
	const struct soft_tp *tp = qp->tp;

	if (soft_adaptive(qp)) {
		uint64_t w = soft_adaptive_base(tp) << (qp->retries < 31 ? qp->retries : 31);
		uint64_t end = qp->progress_ns + (tp->retry_cnt + 1ull) * tp->timeout_ns;

		if (w > tp->timeout_ns || w < soft_adaptive_base(tp))
			w = tp->timeout_ns;
		if (end > tp->now && end - tp->now < w)
			w = end - tp->now;
		return w;
	}
	return tp->timeout_ns << (soft_rnic(tp) ? 0 : (qp->retries < 7 ? qp->retries : 7));
}

/* The MR of rkey when [va, va + len) lies inside it, else NULL. */
static inline const struct soft_mr *soft_mr_find(const struct soft_tp *tp, uint32_t rkey,
						 uint64_t va, uint32_t len)
{
	for (unsigned i = 0; i < tp->nmrs; i++) {
		const struct soft_mr *m = &tp->mrs[i];

		if (m->rkey == rkey)
			return va >= m->va && len <= m->len && va - m->va <= m->len - len ? m : NULL;
	}
	return NULL;
}

#endif /* NR_TP_SOFT_TYPES_H */
