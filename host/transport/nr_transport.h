/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The transport interface libnetreduce's collectives are written against.
 * Two implementations with the same semantics:
 *   soft   (tp_soft*.c)  a user-space RoCEv2 RC requester and responder over
 *                        one UDP socket on port 4791 per host address;
 *   verbs  (tp_verbs.c)  rdma-core RC QPs on a real RNIC or rdma_rxe.
 *
 * Model: reliable connected QPs carrying RDMA WRITE WITH IMMEDIATE only.  A
 * write of len bytes lands at (remote_va, rkey) in the responder's registered
 * memory and produces, at the responder, one receive completion carrying the
 * immediate and the byte count; at the requester, one send completion once the
 * responder acknowledged the whole message.  Messages on one QP complete in
 * order.  A QP whose peer stops answering (retry limit) goes to error and every
 * outstanding work request completes with an error status.
 *
 * Threading: one transport object is driven by one thread (nr_tp_poll makes
 * all progress for the soft transport: sends, ACKs, retransmission timers).
 */
#ifndef NR_TRANSPORT_H
#define NR_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nr_tp;
struct nr_tp_qp;

/*
 * How the soft transport behaves (host/transport/README.md, "The soft transport's RNIC
 * profile", says what each rule models and where it was checked):
 *   RNIC    as RC QPs on an RNIC do (rxe's rxe_req.c/rxe_comp.c/rxe_resp.c,
 *           mlx5, the IB spec): AckReq on a message's last packet, on every
 *           ackreq_every-th packet and on the first packet sent while no ACK
 *           timer runs; the responder ACKs those (coalesced per receive
 *           batch), not every packet; RNR NAKs count against rnr_retry (7:
 *           infinite).  The ACK timeout adapts as ConnectX's adaptive
 *           retransmission (on by default there): it starts at 1/32 of
 *           4.096 us * 2^timeout, doubles per timeout without progress up to
 *           that, and returns to the start on progress; the QP fails after
 *           (retry_cnt + 1) timeouts' time without progress, as long as a
 *           fixed timeout takes; a sequence NAK goes back without spending it.
 *   RXE     the RNIC rules with rxe's (and the IB spec's) fixed ACK timeout
 *           of 4.096 us * 2^timeout; retry_cnt counts timeouts and
 *           sequence-NAK retries without progress.
 *   LEGACY  the earlier, kinder model: an ACK for every receive batch, the ACK
 *           timeout doubled after each retry without progress.
 *   SR      the RNIC rules with selective repeat, as IRN (Mittal et al.,
 *           SIGCOMM 2018) and the selective-repeat modes of later RNICs:
 *           the responder keeps packets that arrive ahead of the expected
 *           PSN (up to twice the window) and places them in their turn, and
 *           names each gap in a selective NAK (NR_AETH_NAK_SELECTIVE: the
 *           missing PSNs, acknowledging nothing); the requester resends
 *           those alone, before new data.  A sequence NAK, an RNR NAK and a
 *           timeout still go back N.  Both ends of a QP must be SR: an RNIC
 *           takes a selective NAK for an error (host/transport/README.md,
 *           "Selective repeat").
 */
enum nr_tp_profile {
	NR_TP_PROFILE_RNIC = 0,
	NR_TP_PROFILE_LEGACY = 1,
	NR_TP_PROFILE_RXE = 2,
	NR_TP_PROFILE_SR = 3,
};

/* The transport a config without a kind gets (nr_tp_open). */
#define NR_TP_KIND_DEFAULT "soft"

struct nr_tp_config {
	const char *kind;        /* "soft" or "verbs"; NULL: NR_TP_KIND_DEFAULT */
	uint32_t local_ip;       /* IPv4 network order: address to bind (soft) / GID to use (verbs) */
	const char *device;      /* verbs: RDMA device name (NULL: first); soft: unused */
	uint8_t ib_port;         /* verbs: port number (0 means 1) */
	int gid_index;           /* verbs: -1 means find the RoCEv2 IPv4 GID of local_ip */
	uint32_t mtu;            /* path MTU bytes: 256..4096, default 1024 */
	uint8_t tclass;          /* IP traffic class (DSCP << 2 | ECN): verbs the GRH traffic
				  * class, soft the sockets' IP_TOS (default 0) */
	uint32_t max_msg;        /* the largest write the caller will post: verbs refuses to
				  * open on a port whose max_msg_sz is smaller (0: unchecked) */
	uint8_t timeout;         /* local ACK timeout exponent: 4.096us * 2^timeout (default 14, ~67 ms) */
	uint8_t retry_cnt;       /* 1..7 retries after a timeout or a sequence NAK without
				  * progress (0: the default, 7); soft RNIC profile: the QP
				  * fails after retry_cnt + 1 timeouts' time without progress */
	uint8_t rnr_retry;       /* 1..7 retries after an RNR NAK without progress, 7 = infinite
				  * (0: the default, 7) */
	uint16_t udp_port;       /* soft: local UDP port, default 4791 (tests may change it) */
	uint32_t max_inflight;   /* max packets in flight per QP (soft), default 128 */
	uint8_t profile;         /* soft: enum nr_tp_profile, default RNIC */
	uint16_t ackreq_every;   /* soft, RNIC profile: AckReq at least every N packets
				  * (default 64, rxe's RXE_MAX_PKT_PER_ACK) */
	uint8_t offload;         /* soft: NR_TP_OFFLOAD_AUTO (0: UDP GSO and GRO where the
				  * kernel has them) or NR_TP_OFFLOAD_OFF (a datagram a send
				  * and a receive: IP ID 0 and UDP checksum 0 on every packet);
				  * the environment's NR_SOFT_GSO=0 turns them off too */
};

/*
 * What the library's user asked for, in the user's terms (NR_SOFT_PROFILE,
 * NR_SOFT_WINDOW, NR_SOFT_ACKREQ, NR_ACK_TIMEOUT, the collective's time
 * budget), for nr_tp_tune to turn into the settings of the transport a
 * config names: the caller need not know which transport that is.
 */
struct nr_tp_wish {
	const char *profile;     /* a profile's name: "rnic", "rxe", "legacy" or "sr" (enum
				  * nr_tp_profile); NULL: the default, "rnic" */
	double link_gbps;        /* the host link's speed, Gbit/s (0: unknown, sized as 10) */
	uint32_t window;         /* packets in flight per QP (0: sized for the link) */
	uint16_t ackreq;         /* AckReq at least every N packets (0: sized for the window) */
	uint32_t budget_ms;      /* how long a QP may go without progress before it fails */
	uint8_t ack_timeout;     /* the ACK timeout exponent (0: derived from budget_ms) */
	unsigned spray_ports;    /* UDP source ports a QP sprays over (0, 1: none) */
	bool msg_tclass;         /* a traffic class per message (priority classes) */
};

#define NR_TP_PROFILE_DEFAULT_NAME "rnic"

/*
 * Fill cfg->profile, max_inflight, ackreq_every and timeout from *wish as
 * cfg->kind's transport sizes them (host/transport/README.md, "Window and
 * loss"); the rest of *cfg is left as it is.  0; -ENOENT when cfg->kind names
 * no transport, -EINVAL when wish->profile names no profile (err says which
 * names exist), -ENOTSUP when the transport cannot spray (wish->spray_ports)
 * or mark a message's traffic class (wish->msg_tclass) (err says why).
 */
int nr_tp_tune(struct nr_tp_config *cfg, const struct nr_tp_wish *wish, char *err, size_t errlen);

enum nr_tp_offload {
	NR_TP_OFFLOAD_AUTO = 0,
	NR_TP_OFFLOAD_OFF = 1,
};

/* What a peer needs to connect to one of our QPs. */
struct nr_qp_info {
	uint32_t ip;             /* IPv4 network order */
	uint8_t mac[6];          /* all zero when unknown */
	uint32_t qpn;
	uint32_t psn;            /* the PSN this QP sends first (its initial send PSN) */
	uint16_t udp_port;       /* soft only: where the peer's socket listens (4791) */
	uint16_t sport;          /* UDP source port of this QP's packets, 0 when unknown (verbs:
				  * the RNIC picks it); a box steers a channel's traffic by it */
};

struct nr_tp_mr {
	void *addr;
	size_t len;
	uint64_t va;             /* what a remote puts in RETH VA for addr */
	uint32_t rkey;
	uint32_t lkey;
	void *priv;
};

enum nr_wc_op {
	NR_WC_SEND = 1,          /* a posted write completed (acknowledged) */
	NR_WC_RECV = 2,          /* a write with immediate landed */
};

enum nr_wc_status {
	NR_WC_OK = 0,
	NR_WC_RETRY_EXCEEDED = 1, /* peer did not answer within the retry limit */
	NR_WC_REMOTE_ERROR = 2,   /* NAK invalid request / access / operational */
	NR_WC_FLUSHED = 3,        /* QP in error, work request never executed */
	NR_WC_LOCAL_ERROR = 4,
};

struct nr_wc {
	uint64_t wr_id;
	struct nr_tp_qp *qp;
	uint8_t op;              /* enum nr_wc_op */
	uint8_t status;          /* enum nr_wc_status */
	uint32_t imm;            /* NR_WC_RECV */
	uint32_t byte_len;       /* NR_WC_RECV */
};

/* Returns NULL and fills err on failure (e.g. "verbs: no RDMA device found"). */
struct nr_tp *nr_tp_open(const struct nr_tp_config *cfg, char *err, size_t errlen);
void nr_tp_close(struct nr_tp *tp);
const char *nr_tp_kind(const struct nr_tp *tp);

/* The BTH P_Key the transport's packets carry (the box drops a job's frames
 * with another); 0 when the transport cannot say (verbs: the port's table). */
uint16_t nr_tp_pkey(const struct nr_tp *tp);

int nr_tp_reg_mr(struct nr_tp *tp, void *addr, size_t len, struct nr_tp_mr *mr);
void nr_tp_dereg_mr(struct nr_tp *tp, struct nr_tp_mr *mr);

/*
 * Create an RC QP; *info is what to tell the peer.  0 or -errno;
 * nr_tp_error(tp) then says what failed, naming the address and port or the
 * device.
 */
int nr_tp_qp_create(struct nr_tp *tp, struct nr_tp_qp **qp, struct nr_qp_info *info);
/* Why the last failed call on tp failed ("" when the transport said nothing). */
const char *nr_tp_error(const struct nr_tp *tp);
/* Connect to the peer's QP (INIT -> RTR -> RTS). */
int nr_tp_qp_connect(struct nr_tp_qp *qp, const struct nr_qp_info *remote);
void nr_tp_qp_destroy(struct nr_tp_qp *qp);

/* Post an RDMA WRITE WITH IMMEDIATE of len bytes (len may be 0). 0 or -errno. */
int nr_tp_post_write_imm(struct nr_tp_qp *qp, uint64_t wr_id, const struct nr_tp_mr *lmr,
			 const void *laddr, uint32_t len, uint64_t remote_va, uint32_t rkey,
			 uint32_t imm);
/*
 * The traffic classes a message's packets leave with (nr_tp_post_write_imm_tc):
 * tclass (DSCP << 2 | ECN, 0..255; -1: the transport's) for every packet but
 * those whose bit is set in de (packet k: de[k / 64] >> k % 64 & 1), which
 * leave with de_tclass: drop-eligible packets, a class the fabric drops first
 * (docs/short-slots.md, "Magnitude").  de NULL: none.  de is the caller's and
 * is read until the send completes, as the payload is.
 */
struct nr_tp_mark {
	int tclass;
	int de_tclass;
	const uint64_t *de;
};

/*
 * The same, the message's packets (retransmissions included) sent with the
 * traffic classes of *mark instead of the transport's: a box tells messages
 * apart by their DSCP (short slots, docs/short-slots.md).  mark NULL: the
 * transport's.  Only where nr_tp_wr_tclass() says so: verbs takes the traffic
 * class from the QP's address vector (the GRH), one for every message, and
 * sends every message with the transport's.  -EINVAL: a class outside -1..255.
 */
int nr_tp_post_write_imm_tc(struct nr_tp_qp *qp, uint64_t wr_id, const struct nr_tp_mr *lmr,
			    const void *laddr, uint32_t len, uint64_t remote_va, uint32_t rkey,
			    uint32_t imm, const struct nr_tp_mark *mark);
/* Whether tp sends a message with the traffic class nr_tp_post_write_imm_tc gives it. */
bool nr_tp_wr_tclass(const struct nr_tp *tp);
/* Post a receive for one incoming write with immediate. 0 or -errno. */
int nr_tp_post_recv(struct nr_tp_qp *qp, uint64_t wr_id);

/*
 * Make progress and return up to max completions (0 if none within
 * timeout_ms; timeout 0 = do not wait).  -errno on a transport failure.
 */
int nr_tp_poll(struct nr_tp *tp, struct nr_wc *wc, int max, int timeout_ms);

/* Human-readable last error of a QP ("no ACK from 10.0.0.2 qpn 0x12 after 7 retries"). */
const char *nr_tp_qp_error(const struct nr_tp_qp *qp);
/*
 * Where a QP stands, one line for a stall's message ("expects psn 0x1234, last
 * packet from the peer 9.98 s ago; psn 0x77..0x7f unacknowledged"); buf, ""
 * when the transport cannot say.
 */
const char *nr_tp_qp_state(const struct nr_tp_qp *qp, char *buf, size_t len);

/*
 * The peer acknowledges this QP's messages late by design: an aggregation box
 * acknowledges a message once every rank contributed it, so its ACK latency is
 * rank skew, not loss (the box NAKs losses itself).  A transport that adapts its
 * ACK timeout keeps the fixed one on such a QP (soft, RNIC profile: adaptive
 * waits of 33.5 ms would only resend windows the box drops; 8 hosts under 1%
 * loss, duplication and reordering took 2x the resends and 2x the time); where
 * the timeout is the RNIC's (verbs), nothing changes.
 */
void nr_tp_qp_acks_lag(struct nr_tp_qp *qp);

/*
 * Spray the QP's packets over ports UDP source ports (1..64): its own and the
 * next ports - 1, one after the other (a send each: a packet, or a GSO send
 * of several), so ECMP spreads them over as many paths (docs/short-slots.md,
 * "Spraying"; the box's job takes them with spray_ports).  Before connect;
 * *info gets the QP's new source port (the first of the range, which the
 * range's sockets need free together).  0, -ENOTSUP (verbs: the RNIC picks
 * the port), -EADDRINUSE (no free range; nr_tp_error says where), -EINVAL.
 */
int nr_tp_qp_spray(struct nr_tp_qp *qp, unsigned ports, struct nr_qp_info *info);

/*
 * The QP's packets (its data and its ACKs) leave by interface ifname, the
 * routing table's choice within it: a rail, one of a host's links, each to
 * another box (host/README.md, "Several boxes").  Before connect.  0,
 * -ENOTSUP (verbs: a rail is a device of its own, NR_DEVICE), -ENODEV (no
 * such interface; nr_tp_error says), -EINVAL.
 */
int nr_tp_qp_rail(struct nr_tp_qp *qp, const char *ifname);

/*
 * The transport makes progress only inside nr_tp_poll (soft: the CPU is the
 * RNIC, so ACKs and retransmissions wait for a poll): its user keeps polling
 * between operations (libnetreduce's progress thread).  false: the device
 * answers on its own (verbs).
 */
bool nr_tp_polled(const struct nr_tp *tp);

const char *nr_wc_status_str(enum nr_wc_status s);

#endif /* NR_TRANSPORT_H */
