/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The status monitor of the aggregation engine (docs/architecture.md, wire
 * protocol rule 11; the papers' status monitoring module).  Without it a
 * data packet lost between a sender and the box waits for the sender's ACK
 * timeout: the box emits results in order, so no receiver ever sees a gap to
 * NAK.  With it the box NAKs on the receiver's behalf, and the sender goes
 * back within about one round trip.
 *
 * Per connection i it keeps (struct agg_conn_mon):
 *   contig, hi   the sender's stream: every sequence below contig is in the
 *                box (or was released), hi is one past the highest in;
 *                contig < hi means a gap;
 *   tpl, msn     the receiver's last ACK (before it: the sender's first
 *                packet turned around): the box's NAKs are that frame with
 *                another PSN and syndrome (same MACs, IPs, UDP source port,
 *                DSCP, QPN, MSN), built by proto's nr_build_frame;
 *   hole         the gap it sent a NAK for, until the gap is filled;
 *   ack_ns,      since when the receiver's mark has not moved while results
 *   wait_ns      wait for it (or since the last result went out, if later),
 *                and since when a slot has waited for the sender's contig:
 *                how long each side has been stalled.
 *
 * The rule it never breaks: a NAK for PSN q tells the sender that q - 1 and
 * everything before arrived; the sender completes those work requests and
 * forgets them.  So q - 1 must already be acknowledged by the real receiver:
 * q <= acked[i] (the receiver's mark, the first sequence it has not
 * acknowledged).  mon_nak clamps every PSN it sends to the mark, whatever it
 * was asked: the box never acknowledges, explicitly or implicitly, what the
 * receiver did not.  The sender then goes back to q: what it resends below
 * the gap meets the duplicate paths (a stored result resent, or a duplicate
 * of a filling slot dropped).  (A selective NAK, below, acknowledges
 * nothing: it needs no clamp.)
 *
 * When:
 *   gap     a packet of sender i beyond contig: ONE NAK at min(contig,
 *           mark), then silence for that hole until it is filled (as an
 *           RNIC's responder after its NAK);
 *   re-arm  a hole not filled within the re-arm time (3 NAK round trips,
 *           measured): the NAK, or what it asked for, was lost; again;
 *   probe   a loss nobody can see as a gap: the last packet a sender sent
 *           before its window closed, the last result before the
 *           receiver's (an AckReq packet: no ACK follows), or a receiver's
 *           NAK lost on its way to the box (the receiver then stays silent
 *           until it gets what it asked for).  When results wait for the
 *           receiver's ACK, or a slot waits for the sender, with no movement
 *           for the probe time (4 round trips, at least 4 ms), a NAK at
 *           min(contig, mark): the sender goes back and what it resends
 *           fills the slot, or is answered with the stored results.  A
 *           sender with nothing outstanding at that PSN (a late rank)
 *           ignores it as a response to nothing.  At most one per probe
 *           time per connection.  (Sooner probes, after 2 round trips,
 *           were measured: standstills without loss that long are common
 *           behind slow links, and each spurious probe makes a sender go
 *           back; the solicit below costs one frame when spurious.)
 *   solicit results wait for the receiver's ACK and the job stood still for
 *           the solicit time: the box resends the receiver its last result,
 *           with AckReq (mon_solicit), once per standstill.  A receiver that
 *           had it ACKs the duplicate (what it got carried no AckReq: the
 *           sender's AckReq packet was lost before the box); one that lost
 *           it takes it, or NAKs its gap (repair).  Its mark moves, and the
 *           probe with it, sooner than the probe at the older mark, which
 *           still follows if the solicit is lost.
 *   hold    a late contributor (a rank that enters a collective late): the
 *           oldest slot not emitted has contributions and the job has not
 *           moved for 8 probe times (at least 100 ms: losses are repaired
 *           sooner, and an RNR wait would only slow that).  Each sender that contributed to it
 *           gets an RNR NAK at its receiver's mark with a 20.48 ms timer,
 *           again every 20 ms while the wait lasts: it waits, resends from
 *           the mark (duplicates, dropped), and its ACK timer, stopped during
 *           the wait, never runs out, so no retry_cnt is spent however late
 *           the rank is (rnr_retry 7: infinite).  The job's own progress
 *           timeout (timeout_ms) still bounds the wait.
 * The gap's NAK is a PSN sequence error NAK, what the receiver itself would
 * send had it seen the gap.  Re-arms and probes are RNR NAKs with the
 * shortest timer (10 us) instead: an RNIC ignores a second sequence NAK
 * while the go-back-N the first one started has made no progress (rxe_comp.c
 * comp.started_retry), and spends a retry_cnt on each one it does not ignore,
 * so repeated sequence NAKs would leave a second loss in a go-back-N to the
 * sender's ACK timeout, or run its retries out; an RNR NAK makes the sender
 * go back to its PSN once the timer expires whatever retry is under way, and
 * is counted against rnr_retry only, which hosts set to 7 (infinite; rxe_comp.c
 * COMPST_RNR_RETRY, mlx5 alike).  An RNR NAK for PSN q too acknowledges q - 1:
 * the same clamp applies.
 *   tail    the receiver's ACK of everything emitted (the end of a
 *           collective) lost on its way to the sender: no gap, no stall the
 *           box can see, and the sender waits for its ACK timeout.  When the
 *           sender sent nothing more for a probe time after such an ACK, the
 *           box sends it once more (a copy of it: it acknowledges nothing the
 *           receiver did not); a sender that had it ignores it as stale.
 *   repair  a result lost between the box and its receiver: the receiver
 *           NAKs (PSN sequence error) at its mark q.  The box holds every
 *           result from q to what it emitted (a slot is released only when
 *           all receivers ACKed it), so it resends them itself, rebuilt from
 *           the sender's data packets (addresses, QPN, PSN; the RETH of a
 *           first packet kept with its slot, ImmDt, ECN as at emission), the
 *           last with AckReq, and the NAK goes no further: the sender does
 *           not go back, and its link carries no duplicates.  Only while at
 *           most MON_REPAIR_MAX results are missing, and when the box can
 *           send (ops.send); otherwise the NAK is forwarded as any other.  A
 *           repair lost in turn is met like any stall: the next result shows
 *           the receiver a gap (another NAK), or the probe NAKs the sender.
 *           A second NAK at the same q within the re-arm time is the
 *           repair's echo, dropped.  The receiver's NAK is its own: it
 *           acknowledges q - 1 to a sender that learns it from the
 *           receiver's next ACK instead.
 * A selective job (spec selective: its requesters are selective repeat,
 * proto/nr_job.h) differs in the NAKs for its senders' holes:
 *   gap     a selective NAK (NR_AETH_NAK_SELECTIVE) at contig itself, its
 *           MSN field the run of sequences missing in a row from there
 *           (each evidently lost, agg_mon_lost; at most MON_SEL_RUN_MAX):
 *           it acknowledges nothing, so the mark does not clamp it, and the
 *           sender resends those packets alone.  The hole is the run's
 *           first sequence still missing until the whole run is in; when
 *           contig then stops at a next hole already lost, that one's NAK
 *           goes at once, since the sender resends only what it is told.
 *           Held back for a short slot as any gap's (agg_mon_gap_nak).
 *   re-arm  a selective NAK again: the RNR NAK is for a go-back-N
 *           requester, which ignores a second sequence NAK during a retry.
 * Probes, holds and tail ACKs are as above: a selective requester takes an
 * RNR NAK as go-back-N from its PSN, which is correct and rare.  A
 * receiver's selective NAK at q, run n (agg_mon_sel_repair) moves no mark:
 * when the box holds all n results from q, it resends them itself as a
 * repair (the last with AckReq; an echo within the re-arm time dropped) and
 * the NAK goes no further; otherwise the sender gets it and resends those
 * packets, which meet the stored results.
 * Each NAK is counted by why (nak_gap, nak_rearm: a selective job's are
 * selective NAKs; nak_probe, nak_hold; ack_repeat for the tail's ACKs;
 * nak_repaired and repair_sent for the receivers' NAKs answered by a repair
 * and the results it resent; ack_solicit for the results resent to solicit
 * an ACK).
 * Until the receiver's first ACK the template is the sender's own data
 * packet turned around (take_template).
 */
#include <string.h>

#include "dataplane/engine/agg_nak.h"
#include "proto/roce_build.h"

/* Re-arm after this many smoothed NAK round trips, and never sooner than MIN. */
#define MON_REARM_RTTS   3
#define MON_REARM_MIN_NS 1000000ull     /* 1 ms */
/* Probe a stalled connection after this many round trips, never sooner than MIN. */
#define MON_PROBE_RTTS   4
#define MON_PROBE_MIN_NS 4000000ull     /* 4 ms */
#define MON_RTT0_NS      4000000ull     /* before any sample */
/* Solicit an ACK after this many round trips of standstill, never sooner than MIN */
#define MON_SOLICIT_RTTS   2
#define MON_SOLICIT_MIN_NS 1000000ull   /* 1 ms */
#define MON_FRAME_MAX    96             /* Ethernet + VLAN + IPv4 + UDP + BTH + AETH + ICRC */
/* Re-arms and probes: an RNR NAK with the shortest timer (code 1: 10 us) */
#define MON_RNR_NOW      (NR_AETH_RNR_NAK | 1)
/* Holds (a slot waits for a late contributor): 20.48 ms (code 22), every 20 ms:
 * a wait that outlasts the late rank is lost time, so it is kept short */
#define MON_RNR_HOLD     (NR_AETH_RNR_NAK | 22)
#define MON_HOLD_NS      20000000ull
/* ... once the job has not moved for 8 probe times and at least 100 ms: a
 * loss is repaired sooner (probes), and the RNR wait would only slow that */
#define MON_HOLD_PROBES  8
#define MON_HOLD_MIN_NS  100000000ull
/* A repair resends at most this many results; a longer go-back is the sender's */
#define MON_REPAIR_MAX   64
/* A selective NAK names at most this many missing sequences; the rest follow
 * once they are filled */
#define MON_SEL_RUN_MAX 64
/* A repair's frame: Ethernet + VLAN + IPv4 + UDP + BTH + RETH + ImmDt, the payload, ICRC */
#define MON_DATA_HDR_MAX 96

void agg_mon_init(struct agg_job *j, uint64_t now_ns)
{
	for (uint32_t i = 0; i < j->n; i++)
		j->mon[i] = (struct agg_conn_mon){ .hole = NR_MON_NONE, .repair = NR_MON_NONE,
						  .ack_ns = now_ns, .wait_ns = now_ns };
	j->nak_rtt_ns = MON_RTT0_NS;
	j->emit_ns = now_ns;
}

static uint64_t rtts_ns(const struct agg_job *j, uint64_t rtts, uint64_t min_ns)
{
	uint64_t r = rtts * j->nak_rtt_ns;

	return r > min_ns ? r : min_ns;
}

/* One round-trip sample (NAK sent -> repaired): 7/8 old + 1/8 new. */
static void rtt_sample(struct agg_job *j, uint64_t ns)
{
	j->nak_rtt_ns = j->nak_rtt_ns - j->nak_rtt_ns / 8 + ns / 8;
}

/* Whether the box has (or had: released) sender i's packet of sequence x. */
static bool has(const struct agg_job *j, uint32_t i, uint64_t x)
{
	const struct agg_slot *s;
	uint32_t si;

	if (x < j->next_release)
		return true;
	if (x - j->next_release >= j->pool)
		return false;
	si = agg_job_slot(j, x);
	s = &j->slots[si];
	if (s->x != x || s->state == NR_SLOT_FREE)
		return false;
	if (s->state != NR_SLOT_FILLING)
		return true;
	return j->bits[(size_t)si * j->words + i / 64] >> (i % 64) & 1;
}

/*
 * Send sender i the receiver's last ACK with syndrome syn, the PSN of
 * sequence x and msn in its MSN field, counted under why.
 */
static void mon_send(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t x, uint8_t syn,
		     uint32_t msn, enum nr_engine_ctr why)
{
	const struct agg_conn_mon *m = &j->mon[i];
	struct nr_build_args a = {
		.opcode = NR_OP_RC_ACK,
		.psn = nr_psn_add(j->conns[i].ipsn, (uint32_t)x),
		.migreq = m->mig,
		.syndrome = syn,
		.msn = msn,
	};
	uint8_t buf[MON_FRAME_MAX];
	int n;

	if (!m->have_tpl)
		return;
	n = nr_build_frame(buf, sizeof(buf), &m->tpl, &a, NULL, 0);
	if (n < 0)
		return;      /* cannot happen: the template came from a parsed ACK */
	j->ctr[why]++;
	if (e->ops.send)
		e->ops.send(e->ops.ctx, buf, (uint32_t)n, m->origin);
}

/*
 * Send sender i a NAK (syndrome syn) at sequence x, clamped to the
 * receiver's mark (the rule above), built from the receiver's last ACK; an
 * ACK syndrome repeats that ACK (PSN mark - 1: what the receiver acknowledged).
 */
static void mon_nak(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t x, uint8_t syn,
		    enum nr_engine_ctr why)
{
	uint64_t q = x < j->acked[i] ? x : j->acked[i];

	if (nr_syn_is_ack(syn)) { /* an ACK covers its own PSN: the mark's - 1 */
		if (q == 0)
			return;
		q--;
	}
	mon_send(e, j, i, q, syn, j->mon[i].msn, why);
}

/*
 * The addressing of frame f of connection i as it is (turn false: same MACs,
 * IPs, UDP source port, IP TTL, id and fragment field, QPN), or turned
 * around (turn true: MACs and IPs swapped, to the sender's QPN, DF).  A CE
 * mark was that frame's congestion, not ours: the flow is ECN-capable as
 * the frame was, unmarked.
 */
static struct nr_flow frame_flow(const struct agg_job *j, uint32_t i, const uint8_t *f,
				 const struct nr_pkt *p, bool turn)
{
	const struct nr_eth_hdr *eth = (const struct nr_eth_hdr *)f;
	const struct nr_ipv4_hdr *ip = (const struct nr_ipv4_hdr *)(f + p->l3_off);
	const struct nr_bth *bth = (const struct nr_bth *)(f + p->bth_off);
	uint8_t tos = ip->tos;
	struct nr_flow fl;

	if ((tos & NR_ECN_MASK) == NR_ECN_CE)
		tos = (uint8_t)((tos & ~NR_ECN_MASK) | NR_ECN_ECT0);
	fl = (struct nr_flow){
		.vlan = p->has_vlan, .vlan_tci = p->vlan_tci,
		.saddr = turn ? p->daddr : p->saddr, .daddr = turn ? p->saddr : p->daddr,
		.sport = p->udp_sport, .tos = tos, .pkey = nr_bth_pkey(bth),
		.dqpn = turn ? j->conns[i].src_qpn : p->qpn,
		.frag_off = turn ? NR_IPV4_DF : nr_ld_be16(&ip->frag_off),
	};
	if (!turn) {
		fl.ttl = ip->ttl;
		fl.ip_id = nr_ld_be16(&ip->id);
	}
	memcpy(fl.src_mac, turn ? eth->dst : eth->src, NR_ETH_ALEN);
	memcpy(fl.dst_mac, turn ? eth->src : eth->dst, NR_ETH_ALEN);
	return fl;
}

/*
 * The template of the box's NAKs to sender i, from frame f of connection i:
 * the receiver's ACK as it is (turn false; its MSN), or, before the
 * receiver's first ACK, the sender's own data packet turned around (turn
 * true: MSN 0, since the receiver has acknowledged nothing of the job; its
 * UDP source port is the sender's, and RNICs do not check the source port
 * of what they receive).
 */
static void take_template(struct agg_engine *e, struct agg_job *j, uint32_t i, const uint8_t *f,
			  const struct nr_pkt *p, void *handle, bool turn)
{
	struct agg_conn_mon *m = &j->mon[i];

	m->tpl = frame_flow(j, i, f, p, turn);
	m->mig = nr_bth_mig((const struct nr_bth *)(f + p->bth_off));
	m->msn = turn ? 0 : p->aeth_msn;
	m->have_tpl = 1;
	if (e->ops.origin)
		m->origin = e->ops.origin(e->ops.ctx, handle);
}

/*
 * The template of a repair's results to receiver i: sender i's data packet
 * as it came (frame_flow; and its MigReq).  The box routes a result as it
 * routes the sender's packet, so it leaves as a result would.
 */
static void take_data_template(struct agg_engine *e, struct agg_job *j, uint32_t i,
			       const uint8_t *f, const struct nr_pkt *p, void *handle)
{
	struct agg_conn_mon *m = &j->mon[i];

	m->dtpl = frame_flow(j, i, f, p, false);
	m->dmig = nr_bth_mig((const struct nr_bth *)(f + p->bth_off));
	m->have_dtpl = 1;
	if (e->ops.origin)
		m->dorigin = e->ops.origin(e->ops.ctx, handle);
}

void agg_mon_sender(struct agg_engine *e, struct agg_job *j, uint32_t i, const struct nr_pkt *p,
		   const uint8_t *frame, void *handle)
{
	if (!j->mon[i].have_tpl)
		take_template(e, j, i, frame, p, handle, true);
	if (!j->mon[i].have_dtpl)
		take_data_template(e, j, i, frame, p, handle);
}

static bool op_middle_or_last(uint8_t op)
{
	return op == NR_OP_RC_WRITE_MIDDLE || op == NR_OP_RC_WRITE_LAST ||
	       op == NR_OP_RC_WRITE_LAST_IMM;
}

/*
 * Whether sender i's gap at x has its NAK held back: the message being
 * emitted may still have a slot completed short (agg_short.c), which fills
 * the gap without the sender going back; or x lies in a later tolerant
 * message, whose bound is only known once its first packet is emitted: x's
 * slot has the others' contributions in, all marked (a middle or last
 * packet; a first one in a job with short_first), or, before any of them,
 * the sender's own next packet is in, marked, a middle or last one (so x is
 * of the same message: a first or middle packet; a job with short_first).
 * If the slot is denied, agg_short.c sends the NAK then (agg_mon_gap_nak);
 * if it never qualifies (a second contribution missing, or none comes), the
 * re-arm sends one.
 */
static bool may_short(const struct agg_engine *e, const struct agg_job *j, uint32_t i, uint64_t x)
{
	const struct agg_slot *s;
	uint32_t si;

	if (!j->short_ppm || !e->ops.send)
		return false;
	if (j->msg_tolerant && j->msg_short_left > 0)
		return true;
	if (x + 1 - j->next_release >= j->pool)
		return false;
	s = &j->slots[agg_job_slot(j, x)];
	if (s->x == x && s->state == NR_SLOT_FILLING)
		return s->tolerant && (op_middle_or_last(s->opcode) ||
				       (s->opcode == NR_OP_RC_WRITE_FIRST && j->short_first));
	si = agg_job_slot(j, x + 1);
	s = &j->slots[si];
	return j->short_first && s->x == x + 1 &&
	       (s->state == NR_SLOT_FILLING || s->state == NR_SLOT_COMPLETE) &&
	       (j->bits[(size_t)si * j->words + i / 64] >> (i % 64) & 1) && s->tolerant &&
	       op_middle_or_last(s->opcode);
}

/*
 * Whether the NAK of sender i's hole is due again (a re-arm): one went out
 * and the re-arm time passed; or it was held back for a short slot and
 * either the slot went up for emission lacking two or more contributions
 * (it cannot go short) and the re-arm time passed, or the probe time
 * passed: a slot waits for the others behind it that long before its turn
 * comes (re-armed at the re-arm time, such holes were NAKed and then found
 * shortable: short_why naked, most of short_denied at 1% loss).
 */
static bool hole_due(const struct agg_job *j, const struct agg_conn_mon *m, uint64_t now_ns)
{
	uint64_t since = now_ns - m->hole_ns;
	const struct agg_slot *s;

	if (since < rtts_ns(j, MON_REARM_RTTS, MON_REARM_MIN_NS))
		return false;
	if (!m->held_back || since >= rtts_ns(j, MON_PROBE_RTTS, MON_PROBE_MIN_NS))
		return true;
	s = &j->slots[j->emit_slot];
	return m->hole == j->next_emit && s->x == m->hole && s->state == NR_SLOT_FILLING &&
	       s->count + 2u <= j->n;
}

bool agg_mon_lost(const struct agg_job *j, uint32_t i, uint64_t c)
{
	const uint64_t *h;

	if (j->mon[i].hi > c + j->reorder + 1)
		return true;
	if (!j->port_hi)
		return false;
	h = &j->port_hi[(size_t)i * j->spray];
	for (uint32_t k = 0; k < j->spray; k++)
		if (h[k] <= c + 1)
			return false;
	return true;
}

/*
 * How many of sender i's sequences from x on are missing in a row, x
 * included, each evidently lost (agg_mon_lost: not merely overtaken on
 * another path): a selective NAK's run, at most MON_SEL_RUN_MAX.
 */
static uint32_t lost_run(const struct agg_job *j, uint32_t i, uint64_t x)
{
	uint32_t n = 1;

	while (n < MON_SEL_RUN_MAX && x + n < j->mon[i].hi && !has(j, i, x + n) &&
	       agg_mon_lost(j, i, x + n))
		n++;
	return n;
}

/*
 * The NAK for sender i's hole, counted under why: a go-back-N job's is
 * syndrome syn (a gap's sequence NAK, a re-arm's RNR NAK) clamped to the
 * mark; a selective job's a selective NAK at the hole itself naming the run
 * lost from it (hole_end), whatever the mark, since it acknowledges nothing.
 */
static void hole_nak(struct agg_engine *e, struct agg_job *j, uint32_t i, uint8_t syn,
		     enum nr_engine_ctr why)
{
	struct agg_conn_mon *m = &j->mon[i];
	uint32_t run;

	if (!j->selective) {
		mon_nak(e, j, i, m->hole, syn, why);
		return;
	}
	run = lost_run(j, i, m->hole);
	m->hole_end = m->hole + run;
	mon_send(e, j, i, m->hole, NR_AETH_NAK_SELECTIVE, run, why);
}

/*
 * Sender i's contig moved: the hole behind it is repaired (with a
 * round-trip sample when sample and its NAK went out), or, a selective
 * NAK's run being only partly in, the hole is what of the run is still
 * missing: the same NAK, no new one, its re-arm time running on.
 */
static void hole_passed(struct agg_job *j, struct agg_conn_mon *m, uint64_t now_ns, bool sample)
{
	if (m->hole == NR_MON_NONE || m->contig <= m->hole)
		return;
	if (m->contig < m->hole_end) {
		m->hole = m->contig;
		return;
	}
	if (sample && !m->held_back)
		rtt_sample(j, now_ns - m->hole_ns);
	m->hole = NR_MON_NONE;
	m->held_back = 0;
}

/* A gap at sender i's contig: one NAK (hole_nak), or held back (may_short). */
static void open_gap(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t now_ns)
{
	struct agg_conn_mon *m = &j->mon[i];

	m->hole = m->contig;
	m->hole_end = m->contig + 1;
	m->hole_ns = now_ns;
	m->held_back = may_short(e, j, i, m->contig);
	if (!m->held_back)
		hole_nak(e, j, i, NR_AETH_NAK_PSN_SEQ_ERR, NR_ECTR_NAK_GAP);
}

void agg_mon_data(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t x, uint64_t now_ns)
{
	struct agg_conn_mon *m = &j->mon[i];
	uint64_t before = m->contig;
	if (x >= j->acked[i])
		m->tail_due = 0;                /* the sender is sending again */

	if (x >= m->hi)
		m->hi = x + 1;
	if (j->port_hi && j->port_hi[(size_t)i * j->spray + m->port] <= x)
		j->port_hi[(size_t)i * j->spray + m->port] = x + 1;
	if (m->contig < j->next_release)
		m->contig = j->next_release;
	while (m->contig < m->hi && has(j, i, m->contig))
		m->contig++;
	if (m->contig != before)
		m->wait_ns = now_ns;            /* the sender's stream moved */
	hole_passed(j, m, now_ns, true);
	/* nothing missing below x, or not yet a loss (spraying); a selective
	 * job's next hole is NAKed as soon as the one before it is filled (its
	 * sender resends what it is told and nothing else) */
	if (x <= m->contig + j->reorder &&
	    !((j->port_hi || j->selective) && agg_mon_lost(j, i, m->contig)))
		return;
	if (m->hole != m->contig) {
		open_gap(e, j, i, now_ns);
	} else if (hole_due(j, m, now_ns)) {
		m->hole_ns = now_ns;
		m->held_back = 0;
		hole_nak(e, j, i, MON_RNR_NOW, NR_ECTR_NAK_REARM);
	}
}

void agg_mon_ack(struct agg_engine *e, struct agg_job *j, uint32_t i, const uint8_t *frame,
		const struct nr_pkt *p, void *handle, bool moved, uint64_t now_ns)
{
	struct agg_conn_mon *m = &j->mon[i];

	take_template(e, j, i, frame, p, handle, false);
	if (moved)
		m->ack_ns = now_ns;
	/* everything emitted is acknowledged: if this ACK is lost on its way,
	 * the sender, with nothing more to send, would wait for its timeout */
	m->tail_due = moved && j->acked[i] == j->next_emit && nr_syn_is_ack(p->aeth_syn);
	m->tail_ns = now_ns;
}

/*
 * Receiver i's result of emitted sequence x, rebuilt into buf: its length, or
 * < 0.  The slot's RETH record is passed whatever the opcode: the builder
 * writes a RETH only for the opcodes that carry one, which are those whose
 * contributions set the record.
 */
static int build_result(const struct agg_job *j, uint32_t i, uint64_t x, bool ackreq,
			uint8_t *buf, size_t cap)
{
	const struct agg_conn_mon *m = &j->mon[i];
	uint32_t si = agg_job_slot(j, x);
	const struct agg_slot *s = &j->slots[si];
	const struct agg_slot_reth *r = &j->reth[(size_t)si * j->n + i];
	struct nr_flow f = m->dtpl;
	struct nr_build_args a = {
		.opcode = s->opcode, .psn = nr_psn_add(j->conns[i].ipsn, (uint32_t)x),
		.ackreq = ackreq, .migreq = m->dmig,
		.va = r->va, .rkey = r->rkey, .dma_len = r->len,
		.imm = s->has_tag ? s->tag ^ j->result_key : 0,
	};

	if (s->ecn_ce && (f.tos & NR_ECN_MASK) != NR_ECN_NOT_ECT)     /* rule 10 */
		f.tos |= NR_ECN_CE;
	return nr_build_frame(buf, cap, &f, &a, j->results + (size_t)si * j->mtu, s->len);
}

/*
 * Receiver i's result of emitted sequence x sent again (with AckReq if
 * ackreq), from the port its sender's data comes in on: whether it went.
 * The caller checked ops.send and the template (m->have_dtpl).
 */
static bool send_result(struct agg_engine *e, const struct agg_job *j, uint32_t i, uint64_t x,
			bool ackreq)
{
	uint8_t buf[MON_DATA_HDR_MAX + NR_MAX_MTU];
	int n = build_result(j, i, x, ackreq, buf, sizeof(buf));

	if (n < 0)
		return false;   /* cannot happen: the slot took a parsed packet */
	e->ops.send(e->ops.ctx, buf, (uint32_t)n, j->mon[i].dorigin);
	return true;
}

/*
 * A repair: receiver i's results [q, end) resent, the last with AckReq,
 * when the box holds them all (emitted, not released) and can send them.
 * Whether the NAK at q is answered: by this repair, or by one under way
 * (its echo, within the re-arm time).
 */
static bool repair(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t q, uint64_t end,
		   uint64_t now_ns)
{
	struct agg_conn_mon *m = &j->mon[i];
	uint32_t sent = 0;

	if (!e->ops.send || !m->have_dtpl || q < j->next_release || q >= end ||
	    end > j->next_emit || end - q > MON_REPAIR_MAX)
		return false;
	if (m->repair == q && now_ns - m->repair_ns < rtts_ns(j, MON_REARM_RTTS, MON_REARM_MIN_NS))
		return true;            /* the echo of a repair under way */
	for (uint64_t x = q; x < end; x++) {
		const struct agg_slot *s = &j->slots[agg_job_slot(j, x)];

		if (s->x != x || s->state != NR_SLOT_EMITTED)
			return false;   /* cannot happen: unreleased slots keep their results */
	}
	for (uint64_t x = q; x < end && send_result(e, j, i, x, x + 1 == end); x++)
		sent++;
	if (sent == 0)
		return false;
	m->repair = q;
	m->repair_ns = now_ns;
	j->ctr[NR_ECTR_REPAIR_SENT] += sent;
	agg_mon_result(j, i, now_ns);
	return true;
}

bool agg_mon_repair(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t now_ns)
{
	return repair(e, j, i, j->acked[i], j->next_emit, now_ns);
}

bool agg_mon_sel_repair(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t q,
			uint32_t run, uint64_t now_ns)
{
	if (q >= j->next_emit || run > j->next_emit - q)
		return false; /* not all emitted: the sender's to resend */
	return repair(e, j, i, q, q + run, now_ns);
}

/*
 * Solicit receiver i's ACK: its last emitted result again, with AckReq.  It
 * ACKs the duplicate, takes the result it lost, or NAKs its gap (a repair).
 */
static void mon_solicit(struct agg_engine *e, struct agg_job *j, uint32_t i)
{
	uint64_t x = j->next_emit - 1;
	const struct agg_slot *s = &j->slots[agg_job_slot(j, x)];

	if (e->ops.send && j->mon[i].have_dtpl && s->x == x && s->state == NR_SLOT_EMITTED &&
	    send_result(e, j, i, x, true))
		j->ctr[NR_ECTR_ACK_SOLICIT]++;
}

void agg_mon_gap_nak(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t now_ns)
{
	struct agg_conn_mon *m = &j->mon[i];

	if (m->hole == NR_MON_NONE || !m->held_back)
		return;         /* its NAK went out when the gap showed */
	m->held_back = 0;
	m->hole_ns = now_ns;
	hole_nak(e, j, i, NR_AETH_NAK_PSN_SEQ_ERR, NR_ECTR_NAK_GAP);
}

void agg_mon_short_result(struct agg_engine *e, struct agg_job *j, uint32_t i, uint64_t x,
			 uint64_t now_ns)
{
	struct agg_conn_mon *m = &j->mon[i];

	send_result(e, j, i, x, false);
	/* sender i's stream: x is in now, as far as the box is concerned */
	while (m->contig < m->hi && has(j, i, m->contig))
		m->contig++;
	if (m->contig <= x)
		m->contig = x + 1;
	if (m->hi < m->contig)
		m->hi = m->contig;
	m->wait_ns = now_ns;
	hole_passed(j, m, now_ns, false); /* no NAK went out for x: no round-trip sample */
	if (m->hole == NR_MON_NONE && agg_mon_lost(j, i, m->contig))      /* the next gap */
		open_gap(e, j, i, now_ns);
}

void agg_mon_result(struct agg_job *j, uint32_t i, uint64_t now_ns)
{
	j->mon[i].ack_ns = now_ns;
}

/* Whether slot x has contributions and waits for sender i's. */
static bool waits_for(const struct agg_job *j, uint32_t i, uint64_t x)
{
	const struct agg_slot *s;
	uint32_t si;

	if (x < j->next_release || x - j->next_release >= j->pool)
		return false;
	si = agg_job_slot(j, x);
	s = &j->slots[si];
	return s->x == x && s->state == NR_SLOT_FILLING && !has(j, i, x);
}

/*
 * Whether the job waits for a late contributor: the oldest slot not emitted
 * has contributions and nothing moved for the hold time.
 */
static bool job_held(const struct agg_job *j, uint64_t now_ns)
{
	const struct agg_slot *s;

	if (j->next_emit - j->next_release >= j->pool ||
	    now_ns - j->last_progress_ns < rtts_ns(j, MON_HOLD_PROBES * MON_PROBE_RTTS,
						   MON_HOLD_MIN_NS))
		return false;
	s = &j->slots[agg_job_slot(j, j->next_emit)];
	return s->x == j->next_emit && s->state == NR_SLOT_FILLING;
}

void agg_mon_poll(struct agg_engine *e, struct agg_job *j, uint64_t now_ns)
{
	uint64_t probe = rtts_ns(j, MON_PROBE_RTTS, MON_PROBE_MIN_NS);
	uint64_t solicit = rtts_ns(j, MON_SOLICIT_RTTS, MON_SOLICIT_MIN_NS);
	bool held = job_held(j, now_ns);

	for (uint32_t i = 0; i < j->n; i++) {
		struct agg_conn_mon *m = &j->mon[i];
		uint64_t since;

		/* a sender that contributed to the slot a late one holds up:
		 * RNR NAKs keep it from spending its retries on ACK timeouts */
		if (held && has(j, i, j->next_emit)) {
			if (m->hold_ns == 0 || now_ns - m->hold_ns >= MON_HOLD_NS) {
				m->hold_ns = now_ns;
				mon_nak(e, j, i, m->contig, MON_RNR_HOLD, NR_ECTR_NAK_HOLD);
			}
			continue;
		}
		if (m->tail_due && now_ns - m->tail_ns >= probe) {
			m->tail_due = 0;
			if (j->acked[i] == j->next_emit)
				mon_nak(e, j, i, j->acked[i], NR_AETH_CREDIT_INVALID,
					NR_ECTR_ACK_REPEAT);
		}
		if (m->hole != NR_MON_NONE) {
			if (hole_due(j, m, now_ns)) {
				m->hole_ns = now_ns;
				m->held_back = 0;
				hole_nak(e, j, i, MON_RNR_NOW, NR_ECTR_NAK_REARM);
			}
			continue;
		}
		/* results wait for this receiver, or a slot for this sender */
		if (j->next_emit == j->acked[i])
			m->ack_ns = now_ns;
		if (m->contig < j->next_release)
			m->contig = j->next_release;
		if (!waits_for(j, i, m->contig))
			m->wait_ns = now_ns;
		/* the receiver side stalls from its last ACK or the last result,
		 * whichever came later: results still on their way will be ACKed */
		since = m->ack_ns > j->emit_ns ? m->ack_ns : j->emit_ns;
		/* solicit: once a standstill */
		if (j->acked[i] < j->next_emit && m->solicit_ns < since && now_ns - since >= solicit) {
			m->solicit_ns = now_ns;
			mon_solicit(e, j, i);
		}
		if (m->wait_ns < since)
			since = m->wait_ns;
		if (m->probe_ns > since)
			since = m->probe_ns;
		if (now_ns - since >= probe) {
			m->probe_ns = now_ns;
			mon_nak(e, j, i, m->contig, MON_RNR_NOW, NR_ECTR_NAK_PROBE);
		}
	}
}
