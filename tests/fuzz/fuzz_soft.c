/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_soft: the soft transport's receive path (host/transport/tp_soft_*.c)
 * fed hostile RoCEv2 packets through its injection hook, against a shadow
 * model of the responder, the requester's ACK handling and the counters.
 *
 * Per input: one soft transport on 127.0.0.1 (a port of its own), one or two
 * RC QPs connected to a peer at 127.0.0.1 whose "socket" is a sink this
 * target reads (everything the transport sends: data, ACKs, NAKs), two
 * registered regions with guard bytes around them in one arena.
 *
 * Input: a 5-byte header (MTU 256/512/1024, profile RNIC/RXE/legacy/SR, one or
 * two QPs, QP 1 with the fixed ACK timeout, retry_cnt, rnr_retry, region
 * sizes, initial PSNs near the 2^24 wrap), then operations:
 *
 *   op % 8 in 0..2  an RDMA WRITE-class packet from the peer, 16 bytes:
 *                   opcode (FIRST, MIDDLE, LAST, LAST_IMM, ONLY, ONLY_IMM,
 *                   SEND_ONLY, UC WRITE_ONLY), QP, AckReq, PSN (next in
 *                   order, near it, a duplicate, raw), payload length (MTU,
 *                   what the message has left, short, over the MTU), RETH
 *                   (either region's rkey or a wrong one, VA around the
 *                   region, length), ImmDt, then mutations: wrong source
 *                   address, wrong QPN, corrupt ICRC, truncation, a flipped
 *                   byte (with the ICRC made good again or not)
 *   3               an ACK / NAK (sequence, RNR, invalid request, selective ...) for a
 *                   PSN around what the requester has outstanding
 *   4               post a write on a QP (the requester sends it to the sink)
 *   5               post receives
 *   6               poll
 *   7               raw bytes as a packet (ICRC made good or not)
 * A packet is injected and processed at the next poll (its op may ask for
 * one at once), so several packets may share one receive batch.
 *
 * The model applies what the transport documents (tp_soft_resp.c and
 * tp_soft_req.c, the IBTA rules they cite) to each injected packet in order,
 * then after every poll these must hold (a violation traps):
 *   - every injected packet is counted exactly once: rx_pkts and rx_bytes,
 *     and each drop reason and disposition counter (malformed, ICRC, unknown
 *     QPN, source, state, unsupported, data, duplicate, out of sequence,
 *     invalid request, access error, ACKs, stale ACKs, each NAK kind), the
 *     QP errors and the NAKs and ACKs sent equal the model's.  Why: the
 *     counters are what an operator reads to tell loss from attack from bug.
 *   - the arena (both regions and every guard byte) equals the model's copy:
 *     a write lands only inside a registered region, only through its rkey,
 *     only from an accepted in-order packet, byte for byte.  Why: a write
 *     outside the region is memory corruption of the host by any packet.
 *   - the expected PSN and the in-message state equal the model's: they
 *     advance only by packets accepted in order.  Why: a PSN advanced by a
 *     dropped packet loses it silently; the sender believes it delivered.
 *   - the completions are exactly the model's, in order: a receive completion
 *     (its imm and length) only for a message whose every packet was accepted
 *     in order; a send completion OK only once an ACK or NAK in range covered
 *     the message's last PSN; errors flush every outstanding request, first
 *     with the reason.  Why: a completion is the application's only signal;
 *     a send completed without an ACK is data that may never have arrived.
 *   - the oldest unacknowledged PSN equals the model's and the QP is in error
 *     exactly when the model says (NAKs, retry and RNR limits, bad requests).
 *   - what the transport sends is well-formed RoCEv2 with a good ICRC, and
 *     its ACKs and NAKs are exactly the model's, per QP and in order: a NAK
 *     sequence error once per expected PSN, a NAK for a rejected request,
 *     one coalesced ACK of epsn - 1 per batch where one was owed.  Why: an
 *     ACK for a PSN not accepted makes the sender forget data never written.
 *   - SR profile (selective repeat): a packet ahead of the expected PSN within
 *     the store is kept (the first copy; a second counted a duplicate, one
 *     too long a bad request, one past the store out of sequence) and
 *     executed by the same rules when its turn comes, in PSN order; the
 *     selective NAKs it makes name exactly the missing runs more than
 *     SOFT_SR_REORDER below it not named before, each once, in order among
 *     the ACKs.  The responder's NAK timer may name the run at the expected
 *     PSN again whenever it likes (wall-clock time): such a NAK is accepted
 *     only for a PSN the expected PSN held during the batch, and counted.
 *     A selective NAK in range makes the requester resend, never complete
 *     nor error.  Why: a kept packet executed out of turn, twice, or past
 *     its region is the same corruption as an in-order one.
 *   - nothing leaks, no sanitizer report.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/transport/nr_transport.h"
#include "host/transport/tp_soft.h"
#include "host/transport/tp_soft_types.h"
#include "proto/roce_build.h"
#include "proto/roce_pkt.h"

#include "nrz_fuzz.h"

#define NRZ_QPS      2
#define NRZ_GUARD    64
/*
 * The model's queues hold what NRZ_MAX_OPS operations can make between two
 * polls: a write posted per op, four receives per op, a flush of both.
 */
#define NRZ_MAX_OPS  256
#define NRZ_SQ_MAX   NRZ_MAX_OPS
#define NRZ_RQ_MAX   (4 * NRZ_MAX_OPS)
#define NRZ_WC_MAX   (2 * (NRZ_SQ_MAX + NRZ_RQ_MAX))
#define NRZ_WIRE_MAX (2 * NRZ_MAX_OPS)   /* ACKs/NAKs a QP owes: one a packet, one a poll */
#define NRZ_PEER_SPORT 0xC0DE    /* the UDP source port of the peer's packets */
#define NRZ_PEER_QPN 0x000101    /* QP i's peer is QPN NRZ_PEER_QPN + i */
#define NRZ_INFLIGHT 16          /* the requester's window: one poll's data fits the sink */

/* ---- the model of one QP ------------------------------------------------------ */

struct wire_ack {
	uint8_t syn;
	uint32_t psn, msn;
};

/* A packet the SR responder keeps for its turn (tp_soft_resp.c's soft_ooo). */
struct kept {
	bool used;
	uint32_t psn;
	struct nr_pkt p;
	uint8_t buf[SOFT_PKT_MAX];
};

struct mqp {
	struct nr_tp_qp *qp;
	struct nr_qp_info info;          /* ours: QPN, initial send PSN, source port */
	uint32_t rqpn;                   /* the peer's QPN */
	bool err;
	bool adaptive;                   /* RNIC profile without the fixed timeout */
	/* responder */
	uint32_t epsn, msn, unacked;
	bool in_msg, nak_sent, ack_owed;
	size_t woff;                     /* arena offset of the message's next byte */
	uint32_t wrem, mlen;
	uint64_t rq[NRZ_RQ_MAX];
	unsigned rq_head, rq_tail;
	struct { uint32_t imm, len; } early[NRZ_RQ_MAX];
	unsigned er_head, er_tail;
	/* SR responder: the store (made at the first packet ahead), the PSN below
	 * which every missing one was named, the NAK of epsn outstanding */
	struct kept *ooo;
	uint32_t ooo_cap, kept, nak_hi, una_psn;
	bool una_set, una_again;
	uint32_t epsn0; /* epsn when the batch began: a timer NAK's floor */
	/* requester */
	struct { uint64_t wr_id; uint32_t psn, npkts; } sq[NRZ_SQ_MAX];
	unsigned sq_head, sq_tail;
	uint32_t next_psn, una, snd_hi;
	unsigned retries, rnr_retries;
	bool retrying;
	/* ACKs and NAKs it must send, in order */
	struct wire_ack want[NRZ_WIRE_MAX];
	unsigned nwant;
	/* the builder's cursors: next PSN in order, bytes the message has left */
	uint32_t bpsn, brem;
};

struct pending {
	uint8_t *pkt;
	uint32_t len;
	uint32_t saddr;
	struct pending *next;
};

struct world {
	struct nr_tp *tp;
	uint32_t ip;                     /* ours and the peer's: 127.0.0.1 */
	uint16_t port;                   /* our receive socket */
	uint32_t mtu;
	uint8_t profile, retry_cnt, rnr_retry;
	unsigned nqps;
	struct mqp q[NRZ_QPS];
	/* the arena: guard | region 0 | guard | region 1 | guard */
	uint8_t *mem, *shadow;
	size_t memlen;
	struct nr_tp_mr mr[2];
	size_t mroff[2];
	/* the model */
	struct nr_tp_soft_stats want;
	struct nr_wc wc[NRZ_WC_MAX];
	unsigned nwc;
	struct pending *pend, **pend_tail;
	uint64_t wr_seq;
	bool unsure;                     /* a send was refused or a timer fired: stop
					  * checking what is sent and the retry state */
	uint64_t timer_naks;             /* SR: selective NAKs of the responder's timer */
};

/* The sink: the peer's address, every packet the transport sends lands there. */
static int sink_fd = -1;
static uint16_t sink_port, tp_port;

static void sink_init(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int big = 4 << 20;

	if (sink_fd >= 0)
		return;
	sink_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	NRZ_CHECK(sink_fd >= 0, "sink socket: %s", strerror(errno));
	setsockopt(sink_fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	NRZ_CHECK(!bind(sink_fd, (struct sockaddr *)&a, sizeof(a)) &&
		  !getsockname(sink_fd, (struct sockaddr *)&a, &l), "sink bind: %s", strerror(errno));
	sink_port = ntohs(a.sin_port);
}

/* A UDP port on 127.0.0.1 nobody holds now, for the transport's receive socket. */
static uint16_t free_udp_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	NRZ_CHECK(fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
		  !getsockname(fd, (struct sockaddr *)&a, &l), "probe a UDP port: %s", strerror(errno));
	close(fd);
	return ntohs(a.sin_port);
}

/* ---- the model: completions and errors ------------------------------------------- */

static void want_wc(struct world *w, struct mqp *m, uint64_t wr_id, uint8_t op, uint8_t status,
		    uint32_t imm, uint32_t len)
{
	NRZ_CHECK(w->nwc < NRZ_WC_MAX, "model: too many completions pending");
	w->wc[w->nwc++] = (struct nr_wc){ .wr_id = wr_id, .qp = m->qp, .op = op, .status = status,
					  .imm = imm, .byte_len = len };
}

static void want_aeth(struct mqp *m, uint8_t syn, uint32_t psn, uint32_t msn)
{
	NRZ_CHECK(m->nwant < NRZ_WIRE_MAX, "model: too many ACKs pending");
	m->want[m->nwant++] = (struct wire_ack){ .syn = syn, .psn = psn, .msn = msn };
}

static void want_wire(struct mqp *m, uint8_t syn, uint32_t psn)
{
	want_aeth(m, syn, psn, m->msn);
}

/* soft_qp_to_error: the first send WR gets sq_status, the first receive rq_status, the rest flush. */
static void model_error(struct world *w, struct mqp *m, uint8_t sq_status, uint8_t rq_status)
{
	if (m->err)
		return;
	m->err = true;
	w->want.qp_errors++;
	for (; m->sq_head != m->sq_tail; m->sq_head++, sq_status = NR_WC_FLUSHED)
		want_wc(w, m, m->sq[m->sq_head % NRZ_SQ_MAX].wr_id, NR_WC_SEND, sq_status, 0, 0);
	for (; m->rq_head != m->rq_tail; m->rq_head++, rq_status = NR_WC_FLUSHED)
		want_wc(w, m, m->rq[m->rq_head % NRZ_RQ_MAX], NR_WC_RECV, rq_status, 0, 0);
	m->er_head = m->er_tail;
}

/* ---- the model: the responder (tp_soft_resp.c's rules) --------------------------- */

static int mr_of_rkey(const struct world *w, uint32_t rkey)
{
	for (int i = 0; i < 2; i++)
		if (w->mr[i].rkey == rkey)
			return i;
	return -1;
}

static void resp_fail(struct world *w, struct mqp *m, const struct nr_pkt *p, uint8_t syn)
{
	if (syn == NR_AETH_NAK_REM_ACC_ERR)
		w->want.rx_access_err++;
	else
		w->want.rx_bad_req++;
	w->want.tx_nak_other++;
	want_wire(m, syn, p->psn);
	model_error(w, m, NR_WC_FLUSHED, NR_WC_LOCAL_ERROR);
}

static void model_write(struct world *w, struct mqp *m, const uint8_t *pkt, const struct nr_pkt *p);

static bool sr_has(const struct mqp *m, uint32_t psn)
{
	const struct kept *o = &m->ooo[psn & (m->ooo_cap - 1)];

	return o->used && o->psn == psn;
}

/* A selective NAK of epsn + start, run PSNs (sr_nak_send). */
static void sr_nak(struct world *w, struct mqp *m, int32_t start, int32_t run)
{
	if (start == 0) {
		m->una_again = m->una_set && m->una_psn == m->epsn;
		w->want.tx_nak_sel_again += m->una_again;
		m->una_psn = m->epsn;
		m->una_set = true;
	}
	w->want.tx_nak_sel++;
	want_aeth(m, NR_AETH_NAK_SELECTIVE, nr_psn_add(m->epsn, (uint32_t)start), (uint32_t)run);
}

/* SR: a packet d ahead of epsn kept, and the runs it shows missing named. */
static void sr_keep(struct world *w, struct mqp *m, const uint8_t *pkt, const struct nr_pkt *p,
		    int32_t d)
{
	struct kept *o;
	int32_t lim = d - SOFT_SR_REORDER, k;

	if (p->end > SOFT_PKT_MAX || p->pay_len > w->mtu) {
		w->want.rx_bad_req++;
		return;
	}
	if (!m->ooo) {
		/* the store: twice the window, a power of two, 16 at least (ooo_alloc) */
		for (m->ooo_cap = 16; m->ooo_cap < 2 * NRZ_INFLIGHT; m->ooo_cap <<= 1)
			;
		m->ooo = calloc(m->ooo_cap, sizeof(*m->ooo));
		NRZ_CHECK(m->ooo != NULL, "calloc");
	}
	if ((uint32_t)d >= m->ooo_cap) {
		w->want.rx_out_of_seq++;
		return;
	}
	o = &m->ooo[p->psn & (m->ooo_cap - 1)];
	if (o->used && o->psn == p->psn) {
		w->want.rx_dup++;
		return;
	}
	memcpy(o->buf, pkt, p->end);
	o->p = *p;
	o->psn = p->psn;
	o->used = true;
	m->kept++;
	w->want.rx_ooo_kept++;
	/* every PSN from the highest named (or epsn) to d - SOFT_SR_REORDER missing: named */
	k = nr_psn_diff(m->nak_hi, m->epsn);
	if (k < 0)
		k = 0;
	while (k < lim) {
		int32_t start;

		if (sr_has(m, nr_psn_add(m->epsn, (uint32_t)k))) {
			k++;
			continue;
		}
		for (start = k++; k < lim && !sr_has(m, nr_psn_add(m->epsn, (uint32_t)k)); k++)
			;
		sr_nak(w, m, start, k - start);
	}
	if (lim > 0 && nr_psn_diff(nr_psn_add(m->epsn, (uint32_t)lim), m->nak_hi) > 0)
		m->nak_hi = nr_psn_add(m->epsn, (uint32_t)lim);
}

/* SR: epsn came (psn): the NAK of it answered, the kept packets now in turn executed. */
static void sr_drain(struct world *w, struct mqp *m, uint32_t psn)
{
	if (m->una_set && m->una_psn == psn && !m->una_again)
		m->una_set = false;
	while (!m->err && sr_has(m, m->epsn)) {
		struct kept *o = &m->ooo[m->epsn & (m->ooo_cap - 1)];

		o->used = false;
		m->kept--;
		model_write(w, m, o->buf, &o->p);
	}
}

static void model_write(struct world *w, struct mqp *m, const uint8_t *pkt, const struct nr_pkt *p)
{
	int32_t d = nr_psn_diff(p->psn, m->epsn);
	bool first = p->mask & NR_OPF_FIRST, last = p->mask & NR_OPF_LAST;
	uint32_t plen = p->pay_len;

	if (d > 0 && w->profile == NR_TP_PROFILE_SR) {
		sr_keep(w, m, pkt, p, d);
		return;
	}
	if (d > 0) {
		w->want.rx_out_of_seq++;
		if (!m->nak_sent) {
			m->nak_sent = true;
			w->want.tx_nak_seq++;
			want_wire(m, NR_AETH_NAK_PSN_SEQ_ERR, m->epsn);
		}
		return;
	}
	if (d < 0) {
		w->want.rx_dup++;
		m->ack_owed = true;
		return;
	}
	if (first == m->in_msg) {
		resp_fail(w, m, p, NR_AETH_NAK_INVALID_REQ);
		return;
	}
	if (first) {
		int r = p->reth_len ? mr_of_rkey(w, p->reth_rkey) : -1;

		if (p->reth_len) {
			const struct nr_tp_mr *mr = r >= 0 ? &w->mr[r] : NULL;

			/* inside the region, computed without the transport's arithmetic */
			if (!mr || p->reth_va < mr->va ||
			    (unsigned __int128)p->reth_va + p->reth_len > (unsigned __int128)mr->va + mr->len) {
				resp_fail(w, m, p, NR_AETH_NAK_REM_ACC_ERR);
				return;
			}
			m->woff = w->mroff[r] + (size_t)(p->reth_va - mr->va);
		}
		m->wrem = m->mlen = p->reth_len;
	}
	if ((!last && plen != w->mtu) || plen > m->wrem || (last && plen != m->wrem)) {
		resp_fail(w, m, p, NR_AETH_NAK_INVALID_REQ);
		return;
	}
	if (plen) {
		memcpy(w->shadow + m->woff, pkt + p->pay_off, plen);
		m->woff += plen;
		m->wrem -= plen;
	}
	m->epsn = nr_psn_add(m->epsn, 1);
	m->nak_sent = false;
	m->in_msg = !last;
	w->want.rx_data++;
	if (last) {
		m->msn = (m->msn + 1) & NR_AETH_MSN_MASK;
		if (p->mask & NR_OPF_IMMDT) {
			if (m->rq_head != m->rq_tail) {
				want_wc(w, m, m->rq[m->rq_head++ % NRZ_RQ_MAX], NR_WC_RECV, NR_WC_OK,
					p->imm, m->mlen);
			} else {
				NRZ_CHECK(m->er_tail - m->er_head < NRZ_RQ_MAX, "model: early receives");
				m->early[m->er_tail % NRZ_RQ_MAX].imm = p->imm;
				m->early[m->er_tail++ % NRZ_RQ_MAX].len = m->mlen;
			}
		}
	}
	if (w->profile == NR_TP_PROFILE_LEGACY || p->ackreq || ++m->unacked >= SOFT_ACK_COALESCE)
		m->ack_owed = true;
}

/* ---- the model: the requester's ACK handling (tp_soft_req.c's rules) -------------- */

static void acked_upto(struct world *w, struct mqp *m, uint32_t una)
{
	if (!nr_psn_lt(m->una, una))
		return;
	m->una = una;
	m->retries = m->rnr_retries = 0;
	m->retrying = false;
	while (m->sq_head != m->sq_tail) {
		const uint32_t psn = m->sq[m->sq_head % NRZ_SQ_MAX].psn;
		const uint32_t n = m->sq[m->sq_head % NRZ_SQ_MAX].npkts;

		if (nr_psn_diff(una, psn) < (int32_t)n)
			break;
		want_wc(w, m, m->sq[m->sq_head % NRZ_SQ_MAX].wr_id, NR_WC_SEND, NR_WC_OK, 0, 0);
		m->sq_head++;
	}
}

static void model_ack(struct world *w, struct mqp *m, const struct nr_pkt *p)
{
	uint8_t syn = p->aeth_syn;
	bool ack = nr_syn_is_ack(syn);
	/*
	 * An ACK covers its PSN, a NAK what is before it; only PSNs sent and not
	 * acknowledged count: an ACK of una - 1 .. snd_hi - 1, a NAK of una ..
	 * snd_hi - 1, counted from una (a PSN 2^23 away is on neither side).
	 */
	uint32_t off = nr_psn_sub(p->psn, m->una), sent = nr_psn_sub(m->snd_hi, m->una);
	bool in_range = ack ? off == NR_PSN_MASK || off < sent : off < sent;

	if (ack)
		w->want.rx_acks++;
	if (!in_range) {
		w->want.rx_stale_acks++;
		return;
	}
	if (ack) {
		acked_upto(w, m, nr_psn_add(p->psn, 1));
	} else if (syn == NR_AETH_NAK_PSN_SEQ_ERR) {
		w->want.rx_nak_seq++;
		acked_upto(w, m, p->psn);
		if (w->profile == NR_TP_PROFILE_LEGACY)
			return;
		if (m->retrying) {
			w->want.rx_nak_seq_retrying++;
			return;
		}
		if (!m->adaptive) {
			if (m->retries >= w->retry_cnt) {
				model_error(w, m, NR_WC_RETRY_EXCEEDED, NR_WC_FLUSHED);
				return;
			}
			m->retries++;
		}
		m->retrying = true;
	} else if (syn == NR_AETH_NAK_SELECTIVE && w->profile == NR_TP_PROFILE_SR) {
		w->want.rx_nak_sel++; /* resends what it names: no ACK, no error */
	} else if (nr_syn_is_rnr(syn)) {
		w->want.rx_nak_rnr++;
		acked_upto(w, m, p->psn);
		if (w->rnr_retry != 7 && m->rnr_retries++ >= w->rnr_retry)
			model_error(w, m, NR_WC_RETRY_EXCEEDED, NR_WC_FLUSHED);
	} else {
		w->want.rx_nak_other++;
		model_error(w, m, NR_WC_REMOTE_ERROR, NR_WC_FLUSHED);
	}
}

/* ---- the model: one received packet (the dispatch of tp_soft_qp.c's rx_one) ------- */

/*
 * Whether the ICRC of a packet (tlen bytes, BTH .. pad) holds for one of the IP
 * IDs a UDP socket's packet may carry unseen: 0 .. SOFT_IPID_SPAN - 1, what the
 * kernel numbers the datagrams of a GSO send (tp_soft_icrc.c).
 */
static bool icrc_any_id(struct nr_icrc_ip4 *ipx, const uint8_t *pkt, uint32_t tlen,
			uint32_t stored)
{
	for (unsigned id = 0; id < SOFT_IPID_SPAN; id++) {
		ipx->id = (uint16_t)id;
		if (nr_icrc_ip4(ipx, pkt, tlen) == stored)
			return true;
	}
	return false;
}

static struct mqp *qp_of(struct world *w, uint32_t qpn)
{
	for (unsigned i = 0; i < w->nqps; i++)
		if (w->q[i].info.qpn == qpn)
			return &w->q[i];
	return NULL;
}

static void model_rx(struct world *w, const uint8_t *pkt, uint32_t len, uint32_t saddr)
{
	struct nr_icrc_ip4 ipx = { .saddr = saddr, .daddr = w->ip, .sport = NRZ_PEER_SPORT,
				   .dport = w->port, .frag_off = NR_IPV4_DF };
	struct nr_pkt p;
	struct mqp *m;

	w->want.rx_pkts++;
	w->want.rx_bytes += len;
	if (nr_parse_transport(pkt, len, &p) != NR_PKT_ROCE) {
		w->want.rx_malformed++;
		return;
	}
	if (!icrc_any_id(&ipx, pkt, p.end - NR_ICRC_LEN, nr_icrc_stored(pkt, &p))) {
		w->want.rx_bad_icrc++;
		return;
	}
	if (!(p.mask & NR_OPF_RC) || (p.opcode != NR_OP_RC_ACK && !(p.mask & NR_OPF_WRITE))) {
		w->want.rx_unsupported++;
		return;
	}
	m = qp_of(w, p.qpn);
	if (!m) {
		w->want.rx_unknown_qpn++;
		return;
	}
	if (m->err) {
		w->want.rx_bad_state++;
		return;
	}
	if (saddr != w->ip) {
		w->want.rx_bad_src++;
		return;
	}
	if (p.opcode == NR_OP_RC_ACK) {
		model_ack(w, m, &p);
	} else {
		bool turn = p.psn == m->epsn;

		model_write(w, m, pkt, &p);
		if (turn && m->ooo)
			sr_drain(w, m, p.psn);
	}
}

/* After a receive batch: one ACK of epsn - 1 from each QP that owes one (soft_resp_flush_acks). */
static void model_flush_acks(struct world *w)
{
	for (unsigned i = 0; i < w->nqps; i++) {
		struct mqp *m = &w->q[i];

		if (!m->ack_owed)
			continue;
		m->ack_owed = false;
		if (m->err)
			continue;
		w->want.tx_acks++;
		m->unacked = 0;
		want_wire(m, NR_AETH_CREDIT_INVALID, nr_psn_sub(m->epsn, 1));
	}
}

/* ---- checks after a poll ------------------------------------------------------------ */

static void check_counters(struct world *w)
{
	struct nr_tp_soft_stats st;

	NRZ_CHECK(!nr_tp_soft_stats(w->tp, &st), "stats");
	if (st.timeouts || st.tx_again || st.tx_errors)
		w->unsure = true;    /* a timer fired or a send was refused: not modelled */
#define SAME(f) NRZ_CHECK(st.f == w->want.f, "counter " #f " is %llu, the model says %llu", \
			  (unsigned long long)st.f, (unsigned long long)w->want.f)
	SAME(rx_pkts);
	SAME(rx_bytes);
	SAME(rx_malformed);
	SAME(rx_bad_icrc);
	SAME(rx_unknown_qpn);
	SAME(rx_bad_src);
	SAME(rx_bad_state);
	SAME(rx_unsupported);
	SAME(rx_filtered);
	SAME(rx_data);
	SAME(rx_dup);
	SAME(rx_out_of_seq);
	SAME(rx_bad_req);
	SAME(rx_access_err);
	SAME(rx_acks);
	SAME(rx_stale_acks);
	SAME(rx_nak_seq);
	SAME(rx_nak_rnr);
	SAME(rx_nak_other);
	SAME(rx_nak_sel);
	SAME(rx_ooo_kept);
	if (!w->unsure) {
		SAME(rx_nak_seq_retrying);
		SAME(qp_errors);
		SAME(tx_nak_seq);
		SAME(tx_nak_other);
		SAME(tx_acks);
	}
#undef SAME
}

static void check_state(struct world *w)
{
	for (unsigned i = 0; i < w->nqps; i++) {
		struct mqp *m = &w->q[i];
		const struct soft_qp *s = (const struct soft_qp *)m->qp;
		bool err = nr_tp_qp_error(m->qp)[0] != '\0';

		NRZ_CHECK(err == m->err, "QP %u: in error %d, the model says %d (%s)", i, err, m->err,
			  nr_tp_qp_error(m->qp));
		if (m->err)
			continue;
		NRZ_CHECK(s->epsn == m->epsn, "QP %u: expected PSN 0x%06x, the model says 0x%06x", i,
			  s->epsn, m->epsn);
		NRZ_CHECK(s->in_msg == m->in_msg, "QP %u: inside a message %d, the model says %d", i,
			  s->in_msg, m->in_msg);
		NRZ_CHECK(s->snd_una == m->una, "QP %u: oldest unacknowledged PSN 0x%06x, the model "
			  "says 0x%06x", i, s->snd_una, m->una);
		/* what was sent bounds what an ACK may cover: keep the transport's horizon */
		NRZ_CHECK(!nr_psn_lt(s->snd_hi, m->snd_hi) && !nr_psn_lt(m->next_psn, s->snd_hi),
			  "QP %u: sent up to 0x%06x, before 0x%06x or past the posted 0x%06x", i,
			  s->snd_hi, m->snd_hi, m->next_psn);
		m->snd_hi = s->snd_hi;
	}
}

static void check_memory(const struct world *w)
{
	if (!memcmp(w->mem, w->shadow, w->memlen))
		return;
	for (size_t k = 0; k < w->memlen; k++) {
		const char *where = k < w->mroff[0] ? "the guard before region 0" :
				    k < w->mroff[0] + w->mr[0].len ? "region 0" :
				    k < w->mroff[1] ? "the guard between the regions" :
				    k < w->mroff[1] + w->mr[1].len ? "region 1" : "the guard after region 1";

		NRZ_CHECK(w->mem[k] == w->shadow[k], "arena byte %zu (%s) is 0x%02x, the model "
			  "says 0x%02x", k, where, w->mem[k], w->shadow[k]);
	}
}

/*
 * SR: whether p, the k-th ACK/NAK of QP m this poll, is one of the
 * responder's timer (soft_resp_sr_timer: the run at epsn named again, when
 * the wall clock says so): a selective NAK the model did not predict next,
 * for a PSN epsn held in the batch, while packets were kept.
 */
static bool sr_timer_nak(struct world *w, const struct mqp *m, const struct nr_pkt *p, unsigned k)
{
	if (w->profile != NR_TP_PROFILE_SR || p->aeth_syn != NR_AETH_NAK_SELECTIVE || !m->ooo)
		return false;
	if (k < m->nwant && m->want[k].syn == p->aeth_syn && m->want[k].psn == p->psn &&
	    m->want[k].msn == p->aeth_msn)
		return false; /* the one the model predicted */
	if (nr_psn_diff(p->psn, m->epsn0) < 0 || nr_psn_diff(p->psn, m->epsn) > 0 ||
	    p->aeth_msn == 0 || p->aeth_msn > m->ooo_cap)
		return false;
	w->timer_naks++;
	return true;
}

/* SR: selective NAKs sent = the model's and the timer's; of them sent again,
 * the model's while no timer NAK moved the one outstanding. */
static void check_sel_naks(struct world *w)
{
	struct nr_tp_soft_stats st;

	if (w->unsure)
		return;
	NRZ_CHECK(!nr_tp_soft_stats(w->tp, &st), "stats");
	NRZ_CHECK(st.tx_nak_sel == w->want.tx_nak_sel + w->timer_naks,
		  "counter tx_nak_sel is %llu, "
		  "the model says %llu and %llu of the timer",
		  (unsigned long long)st.tx_nak_sel, (unsigned long long)w->want.tx_nak_sel,
		  (unsigned long long)w->timer_naks);
	NRZ_CHECK(w->timer_naks || st.tx_nak_sel_again == w->want.tx_nak_sel_again,
		  "counter tx_nak_sel_again is %llu, the model says %llu",
		  (unsigned long long)st.tx_nak_sel_again,
		  (unsigned long long)w->want.tx_nak_sel_again);
}

/* Everything the transport sent since the last poll: well-formed, and its ACKs the model's. */
static void check_wire(struct world *w)
{
	uint8_t buf[SOFT_PKT_MAX + 64];
	unsigned seen[NRZ_QPS] = { 0 };

	for (;;) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(sink_fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		struct nr_icrc_ip4 ipx;
		struct nr_pkt p;
		struct mqp *m = NULL;

		if (n < 0)
			break;
		for (unsigned i = 0; i < w->nqps; i++)
			if (ntohs(from.sin_port) == w->q[i].info.sport)
				m = &w->q[i];
		if (!m)
			continue;   /* a QP of an earlier input */
		ipx = (struct nr_icrc_ip4){ .saddr = w->ip, .daddr = w->ip, .sport = m->info.sport,
					    .dport = sink_port, .frag_off = NR_IPV4_DF };
		NRZ_CHECK(nr_parse_transport(buf, (uint32_t)n, &p) == NR_PKT_ROCE,
			  "sent a malformed packet (%s)", nr_malformed_str(p.bad));
		NRZ_CHECK(icrc_any_id(&ipx, buf, p.end - NR_ICRC_LEN, nr_icrc_stored(buf, &p)),
			  "sent a packet with a bad ICRC (opcode 0x%02x psn 0x%06x)", p.opcode, p.psn);
		NRZ_CHECK(p.qpn == m->rqpn, "QP 0x%06x sent to QPN 0x%06x, its peer is 0x%06x",
			  m->info.qpn, p.qpn, m->rqpn);
		if (p.opcode != NR_OP_RC_ACK) {
			NRZ_CHECK(p.mask & NR_OPF_WRITE, "sent opcode 0x%02x", p.opcode);
			continue;
		}
		if (w->unsure)
			continue;
		unsigned k = seen[m - w->q];

		if (sr_timer_nak(w, m, &p, k))
			continue;
		seen[m - w->q]++;
		NRZ_CHECK(k < m->nwant, "QP %u sent an ACK the model does not expect: syndrome "
			  "0x%02x psn 0x%06x msn %u", (unsigned)(m - w->q), p.aeth_syn, p.psn,
			  p.aeth_msn);
		NRZ_CHECK(p.aeth_syn == m->want[k].syn && p.psn == m->want[k].psn &&
			  p.aeth_msn == m->want[k].msn, "QP %u ACK %u: syndrome 0x%02x psn 0x%06x "
			  "msn %u, the model says 0x%02x 0x%06x %u", (unsigned)(m - w->q), k,
			  p.aeth_syn, p.psn, p.aeth_msn, m->want[k].syn, m->want[k].psn,
			  m->want[k].msn);
	}
	for (unsigned i = 0; i < w->nqps; i++) {
		NRZ_CHECK(w->unsure || seen[i] == w->q[i].nwant, "QP %u sent %u ACKs/NAKs, the "
			  "model says %u", i, seen[i], w->q[i].nwant);
		w->q[i].nwant = 0;
	}
}

/* Process the injected packets (model first, then the transport) and check. */
static void poll_check(struct world *w)
{
	struct nr_wc wc[64];
	unsigned got = 0;
	int n;

	unsigned since_flush = 0;

	for (unsigned i = 0; i < w->nqps; i++)
		w->q[i].epsn0 = w->q[i].epsn;
	for (struct pending *pd = w->pend, *next; pd; pd = next) {
		next = pd->next;
		model_rx(w, pd->pkt, pd->len, pd->saddr);
		free(pd->pkt);
		free(pd);
		/* owed ACKs leave every SOFT_ACK_FLUSH packets of a batch (tp_soft_qp.c) */
		if (++since_flush == SOFT_ACK_FLUSH) {
			model_flush_acks(w);
			since_flush = 0;
		}
	}
	w->pend = NULL;
	w->pend_tail = &w->pend;
	model_flush_acks(w);

	do {
		n = nr_tp_poll(w->tp, wc, 64, 0);
		NRZ_CHECK(n >= 0, "nr_tp_poll: %d", n);
		for (int i = 0; i < n; i++, got++) {
			const struct nr_wc *x = &wc[i], *e = &w->wc[got];

			NRZ_CHECK(got < w->nwc, "completion wr_id %llu op %u status %s the model does "
				  "not expect", (unsigned long long)x->wr_id, x->op,
				  nr_wc_status_str(x->status));
			NRZ_CHECK(x->wr_id == e->wr_id && x->qp == e->qp && x->op == e->op &&
				  x->status == e->status && x->imm == e->imm && x->byte_len == e->byte_len,
				  "completion %u: wr_id %llu op %u status %s imm 0x%x len %u; the model "
				  "says wr_id %llu op %u status %s imm 0x%x len %u", got,
				  (unsigned long long)x->wr_id, x->op, nr_wc_status_str(x->status), x->imm,
				  x->byte_len, (unsigned long long)e->wr_id, e->op,
				  nr_wc_status_str(e->status), e->imm, e->byte_len);
		}
	} while (n == 64);
	NRZ_CHECK(got == w->nwc, "%u completions, the model says %u (next: wr_id %llu status %s)",
		  got, w->nwc, (unsigned long long)w->wc[got].wr_id,
		  nr_wc_status_str(w->wc[got].status));
	w->nwc = 0;
	check_counters(w);
	check_state(w);
	check_memory(w);
	check_wire(w);
	check_sel_naks(w);
	for (unsigned i = 0; i < w->nqps; i++) {
		w->q[i].bpsn = w->q[i].epsn;
		w->q[i].brem = w->q[i].in_msg ? w->q[i].wrem : 0;
	}
}

/* ---- the builder: packets from the peer -------------------------------------------- */

static const uint8_t write_ops[8] = {
	NR_OP_RC_WRITE_FIRST, NR_OP_RC_WRITE_MIDDLE, NR_OP_RC_WRITE_LAST, NR_OP_RC_WRITE_LAST_IMM,
	NR_OP_RC_WRITE_ONLY, NR_OP_RC_WRITE_ONLY_IMM, NR_OP_RC_SEND_ONLY, NR_OP_UC_WRITE_ONLY,
};

/* Queue one packet for the next poll (the transport's and the model's). */
static void inject(struct world *w, const uint8_t *pkt, uint32_t len, uint32_t saddr)
{
	struct pending *pd = calloc(1, sizeof(*pd));

	NRZ_CHECK(pd && (pd->pkt = malloc(len ? len : 1)), "malloc");
	memcpy(pd->pkt, pkt, len);
	pd->len = len;
	pd->saddr = saddr;
	*w->pend_tail = pd;
	w->pend_tail = &pd->next;
	NRZ_CHECK(!nr_tp_soft_inject(w->tp, saddr, NRZ_PEER_SPORT, pkt, len), "inject %u bytes", len);
}

/* A good ICRC for what the packet now holds, when it still parses. */
static void fix_icrc(const struct world *w, uint8_t *pkt, uint32_t len, uint32_t saddr)
{
	struct nr_icrc_ip4 ipx = { .saddr = saddr, .daddr = w->ip, .sport = NRZ_PEER_SPORT,
				   .dport = w->port, .frag_off = NR_IPV4_DF };
	struct nr_pkt p;

	if (nr_parse_transport(pkt, len, &p) == NR_PKT_ROCE)
		nr_icrc_store(pkt + p.end - NR_ICRC_LEN, nr_icrc_ip4(&ipx, pkt, p.end - NR_ICRC_LEN));
}

/*
 * Mutations of a built packet (flags byte f, position byte at): truncate,
 * flip a byte, make the ICRC good again, corrupt it; then inject it from the
 * peer or from another address.
 */
static void mutate_inject(struct world *w, uint8_t *pkt, uint32_t len, uint8_t f, uint8_t at)
{
	uint32_t saddr = f & 1 ? htonl(0x7F000002) : w->ip;

	if (f & 8)
		len = len > (at & 31u) + 1 ? len - ((at & 31u) + 1) : 0;
	if ((f & 16) && len)
		pkt[at % len] ^= (uint8_t)(at | 1);
	if (f & 32)
		fix_icrc(w, pkt, len, saddr);
	if ((f & 4) && len)
		pkt[len - 1] ^= 0x5A;
	inject(w, pkt, len, saddr);
}

static void build_write(struct world *w, const uint8_t *b)
{
	struct mqp *m = &w->q[(b[1] >> 3 & 1) % w->nqps];
	uint8_t op = write_ops[b[1] & 7], pkt[SOFT_PKT_MAX], pay[SOFT_MAX_MTU + 64];
	const struct nr_opcode_info *oi = nr_opcode_info(op);
	int8_t delta = (int8_t)b[2];
	uint32_t psn, plen, dma = 0;
	uint64_t va = 0;
	uint32_t rkey = 0;
	int len;

	switch (b[1] >> 6) {
	case 0:
		psn = m->bpsn;
		m->bpsn = nr_psn_add(m->bpsn, 1);
		break;
	case 1:
		psn = nr_psn_add(m->bpsn, (uint32_t)(int32_t)delta);
		break;
	case 2:
		psn = nr_psn_sub(m->bpsn, 1 + (b[2] & 15));
		break;
	default:
		psn = nr_psn_add(m->bpsn, 0x800000u + (uint32_t)(int32_t)delta);
		break;
	}
	switch (b[3] & 3) {
	case 0:
		plen = w->mtu;
		break;
	case 1:
		plen = m->brem < w->mtu ? m->brem : w->mtu;
		break;
	case 2:
		plen = b[4];
		break;
	default:
		plen = w->mtu + 1 + (b[4] & 7);
		break;
	}
	if (oi->mask & NR_OPF_RETH) {
		unsigned r = b[5] & 1;
		uint16_t off = (uint16_t)(b[6] | b[7] << 8);

		rkey = (b[5] & 3) < 2 ? w->mr[r].rkey : (b[5] & 3) == 2 ? w->mr[0].rkey ^ 1 : 0;
		switch (b[5] >> 2 & 3) {
		case 0:
			dma = (uint32_t)(b[8] | b[9] << 8);
			break;
		case 1:
			dma = plen;
			break;
		case 2:
			dma = (b[8] % 6u) * w->mtu + plen;
			break;
		default:
			dma = UINT32_MAX - b[8];
			break;
		}
		if (b[5] & 16)
			va = UINT64_MAX - off;                          /* wraps past the top */
		else if (b[5] & 32)
			va = w->mr[r].va + w->mr[r].len - off;          /* near the end */
		else
			va = w->mr[r].va + (uint64_t)(int64_t)(int16_t)off;
		m->brem = dma;
	}
	m->brem = m->brem > plen ? m->brem - plen : 0;
	for (uint32_t k = 0; k < plen; k++)
		pay[k] = (uint8_t)(k * 31 + b[14]);
	const struct nr_build_args a = {
		.opcode = op, .psn = psn, .ackreq = b[1] >> 4 & 1, .migreq = true,
		.va = va, .rkey = rkey, .dma_len = dma, .imm = 0xC0DE0000u | b[12] | b[13] << 8,
	};
	struct nr_icrc_ip4 ipx = { .saddr = b[10] & 1 ? htonl(0x7F000002) : w->ip, .daddr = w->ip,
				   .sport = NRZ_PEER_SPORT, .dport = w->port, .frag_off = NR_IPV4_DF };
	uint32_t dqpn = b[10] & 2 ? 0xAB0000u | b[15] : m->info.qpn;

	len = nr_build_transport(pkt, sizeof(pkt), &ipx, dqpn, &a, pay, plen);
	if (len < 0)
		return;   /* no such packet: nothing to send */
	mutate_inject(w, pkt, (uint32_t)len, b[10], b[11]);
}

static void build_ack(struct world *w, const uint8_t *b)
{
	struct mqp *m = &w->q[(b[1] >> 3 & 1) % w->nqps];
	int32_t delta = (int8_t)b[2];
	uint8_t pkt[64], syn;
	uint32_t psn;
	int len;

	switch (b[1] >> 6) {
	case 0:
		psn = nr_psn_add(m->una, (uint32_t)delta);
		break;
	case 1:
		psn = nr_psn_add(m->snd_hi, (uint32_t)(delta - 1));
		break;
	case 2:   /* the last PSN of the oldest outstanding write */
		psn = m->sq_head != m->sq_tail ?
		      nr_psn_add(m->sq[m->sq_head % NRZ_SQ_MAX].psn,
				 m->sq[m->sq_head % NRZ_SQ_MAX].npkts - 1 + (uint32_t)delta) :
		      nr_psn_add(m->una, (uint32_t)delta);
		break;
	default:
		psn = nr_psn_add(m->una, 0x800000u + (uint32_t)delta);
		break;
	}
	switch (b[3] & 7) {
	case 0:
		syn = NR_AETH_CREDIT_INVALID;
		break;
	case 1:
		syn = NR_AETH_NAK_PSN_SEQ_ERR;
		break;
	case 2:
		syn = NR_AETH_RNR_NAK | (b[4] & 31);
		break;
	case 3:
		syn = NR_AETH_NAK_INVALID_REQ + b[4] % 3;
		break;
	case 4: /* a run of b[12..13] PSNs (SR profile: resent; others: an error) */
		syn = NR_AETH_NAK_SELECTIVE;
		break;
	default:
		syn = b[4];
		break;
	}
	const struct nr_build_args a = { .opcode = NR_OP_RC_ACK, .psn = psn, .ackreq = b[1] >> 4 & 1,
					 .syndrome = syn, .msn = (uint32_t)(b[12] | b[13] << 8) };
	struct nr_icrc_ip4 ipx = { .saddr = b[10] & 1 ? htonl(0x7F000002) : w->ip, .daddr = w->ip,
				   .sport = NRZ_PEER_SPORT, .dport = w->port, .frag_off = NR_IPV4_DF };

	len = nr_build_transport(pkt, sizeof(pkt), &ipx, b[10] & 2 ? 0xAB0000u | b[15] : m->info.qpn,
				 &a, NULL, 0);
	NRZ_CHECK(len > 0, "build ACK");
	mutate_inject(w, pkt, (uint32_t)len, b[10], b[11]);
}

/* ---- posting -------------------------------------------------------------------- */

static uint32_t npkts(uint32_t len, uint32_t mtu)
{
	return len ? (len - 1) / mtu + 1 : 1;
}

static void post_write(struct world *w, struct mqp *m, uint32_t len, uint32_t imm)
{
	uint64_t id = ++w->wr_seq;
	int rc = nr_tp_post_write_imm(m->qp, id, &w->mr[0], w->mr[0].addr, len, 0x10000, 0x77, imm);

	NRZ_CHECK(rc == 0, "post write of %u bytes: %d", len, rc);
	if (m->err) {
		want_wc(w, m, id, NR_WC_SEND, NR_WC_FLUSHED, 0, 0);
		return;
	}
	NRZ_CHECK(m->sq_tail - m->sq_head < NRZ_SQ_MAX, "model: send queue");
	m->sq[m->sq_tail % NRZ_SQ_MAX].wr_id = id;
	m->sq[m->sq_tail % NRZ_SQ_MAX].psn = m->next_psn;
	m->sq[m->sq_tail++ % NRZ_SQ_MAX].npkts = npkts(len, w->mtu);
	m->next_psn = nr_psn_add(m->next_psn, npkts(len, w->mtu));
}

static void post_recv(struct world *w, struct mqp *m)
{
	uint64_t id = 1000000 + ++w->wr_seq;

	NRZ_CHECK(!nr_tp_post_recv(m->qp, id), "post recv");
	if (m->err) {
		want_wc(w, m, id, NR_WC_RECV, NR_WC_FLUSHED, 0, 0);
	} else if (m->er_head != m->er_tail) {
		want_wc(w, m, id, NR_WC_RECV, NR_WC_OK, m->early[m->er_head % NRZ_RQ_MAX].imm,
			m->early[m->er_head % NRZ_RQ_MAX].len);
		m->er_head++;
	} else {
		NRZ_CHECK(m->rq_tail - m->rq_head < NRZ_RQ_MAX, "model: receive queue");
		m->rq[m->rq_tail++ % NRZ_RQ_MAX] = id;
	}
}

/* ---- setup ------------------------------------------------------------------------ */

static const uint32_t mtus[4] = { 256, 512, 1024, 256 };
static const uint8_t profiles[4] = { NR_TP_PROFILE_RNIC, NR_TP_PROFILE_RXE, NR_TP_PROFILE_LEGACY,
				     NR_TP_PROFILE_SR };

static struct nr_tp *open_tp(struct world *w, const uint8_t *h)
{
	struct nr_tp_config cfg = {
		.kind = "soft", .local_ip = w->ip, .mtu = w->mtu,
		/* 4.096 us * 2^24 = 69 s (adaptive: 2.1 s first): no timer fires in an input */
		.timeout = 24, .retry_cnt = h[1] & 7, .rnr_retry = h[1] >> 3 & 7,
		.max_inflight = NRZ_INFLIGHT, .profile = w->profile,
	};
	char err[256];
	struct nr_tp *tp;

	for (int tries = 0; tries < 3; tries++) {
		if (!tp_port)
			tp_port = free_udp_port();
		cfg.udp_port = tp_port;
		tp = nr_tp_open(&cfg, err, sizeof(err));
		if (tp)
			return tp;
		tp_port = 0;     /* someone took the port: another one */
	}
	NRZ_CHECK(0, "nr_tp_open: %s", err);
	return NULL;
}

static void world_open(struct world *w, const uint8_t *h)
{
	size_t len0 = ((h[2] & 15u) + 1) * 128, len1 = ((h[2] >> 4) + 1u) * 64;

	w->ip = htonl(INADDR_LOOPBACK);
	w->mtu = mtus[h[0] & 3];
	w->profile = profiles[h[0] >> 2 & 3];
	w->nqps = h[0] & 16 ? 2 : 1;
	w->retry_cnt = h[1] & 7 ? h[1] & 7 : 7;
	w->rnr_retry = h[1] >> 3 & 7 ? h[1] >> 3 & 7 : 7;
	w->pend_tail = &w->pend;
	w->tp = open_tp(w, h);
	w->port = tp_port;
	/* initial PSNs just below the 2^24 wrap, so that messages cross it */
	NRZ_CHECK(!nr_tp_soft_set_ipsn(w->tp, nr_psn_sub(0, h[3])), "set ipsn");

	w->memlen = 3 * NRZ_GUARD + len0 + len1;
	w->mem = malloc(w->memlen);
	w->shadow = malloc(w->memlen);
	NRZ_CHECK(w->mem && w->shadow, "malloc");
	for (size_t k = 0; k < w->memlen; k++)
		w->mem[k] = (uint8_t)(0xA5 ^ k ^ (k >> 8));
	memcpy(w->shadow, w->mem, w->memlen);
	w->mroff[0] = NRZ_GUARD;
	w->mroff[1] = 2 * NRZ_GUARD + len0;
	NRZ_CHECK(!nr_tp_reg_mr(w->tp, w->mem + w->mroff[0], len0, &w->mr[0]) &&
		  !nr_tp_reg_mr(w->tp, w->mem + w->mroff[1], len1, &w->mr[1]), "reg mr");

	for (unsigned i = 0; i < w->nqps; i++) {
		struct mqp *m = &w->q[i];
		struct nr_qp_info peer = { .ip = w->ip, .qpn = NRZ_PEER_QPN + i,
					   .psn = nr_psn_sub(i * 0x1000, h[4]), .udp_port = sink_port };

		NRZ_CHECK(!nr_tp_qp_create(w->tp, &m->qp, &m->info), "qp create: %s",
			  nr_tp_error(w->tp));
		NRZ_CHECK(!nr_tp_qp_connect(m->qp, &peer), "qp connect");
		m->rqpn = peer.qpn;
		m->epsn = m->bpsn = m->nak_hi = peer.psn;
		m->una = m->next_psn = m->snd_hi = m->info.psn;
		m->adaptive = w->profile == NR_TP_PROFILE_RNIC || w->profile == NR_TP_PROFILE_SR;
		if (i == 1 && (h[0] & 32)) {
			nr_tp_qp_acks_lag(m->qp);
			m->adaptive = false;
		}
	}
}

static void world_close(struct world *w)
{
	for (struct pending *pd = w->pend, *next; pd; pd = next) {
		next = pd->next;
		free(pd->pkt);
		free(pd);
	}
	for (unsigned i = 0; i < w->nqps; i++) {
		nr_tp_qp_destroy(w->q[i].qp);
		free(w->q[i].ooo);
	}
	nr_tp_dereg_mr(w->tp, &w->mr[0]);
	nr_tp_dereg_mr(w->tp, &w->mr[1]);
	nr_tp_close(w->tp);
	free(w->mem);
	free(w->shadow);
}

static void sink_drain(void)
{
	uint8_t buf[SOFT_PKT_MAX + 64];

	while (recv(sink_fd, buf, sizeof(buf), 0) >= 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nrz_in in = { .p = data, .n = size };
	struct world *w;
	uint8_t h[5], b[16];

	if (size < sizeof(h))
		return 0;
	sink_init();
	sink_drain();
	w = calloc(1, sizeof(*w));
	NRZ_CHECK(w != NULL, "calloc");
	for (unsigned k = 0; k < sizeof(h); k++)
		h[k] = nrz_u8(&in);
	world_open(w, h);

	for (unsigned ops = 0; ops < NRZ_MAX_OPS && nrz_left(&in); ops++) {
		uint8_t op = nrz_u8(&in);
		struct mqp *m;

		switch (op & 7) {
		case 0: case 1: case 2: case 3:
			b[0] = op;
			for (unsigned k = 1; k < sizeof(b); k++)
				b[k] = nrz_u8(&in);
			if ((op & 7) == 3)
				build_ack(w, b);
			else
				build_write(w, b);
			if (b[1] & 32)
				poll_check(w);
			break;
		case 4: {
			uint8_t sel = nrz_u8(&in);
			uint16_t len = nrz_u16(&in);

			m = &w->q[(sel & 1) % w->nqps];
			post_write(w, m, len % (uint32_t)(w->mr[0].len + 1), 0x1000u + nrz_u8(&in));
			break;
		}
		case 5: {
			uint8_t sel = nrz_u8(&in);

			m = &w->q[(sel & 1) % w->nqps];
			for (unsigned k = 0; k <= (sel >> 1 & 3u); k++)
				post_recv(w, m);
			break;
		}
		case 6:
			poll_check(w);
			break;
		default: {
			uint8_t f = nrz_u8(&in), len = nrz_u8(&in), pkt[UINT8_MAX + 1];
			uint32_t saddr = f & 4 ? htonl(0x7F000002) : w->ip;

			for (uint8_t k = 0; k < len; k++)
				pkt[k] = nrz_u8(&in);
			if (f & 1)
				fix_icrc(w, pkt, len, saddr);
			inject(w, pkt, len, saddr);
			if (f & 2)
				poll_check(w);
			break;
		}
		}
	}
	poll_check(w);
	world_close(w);
	free(w);
	return 0;
}
