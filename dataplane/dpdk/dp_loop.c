/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The burst loop of a worker lcore, l3fwd lpm_main_loop style:
 *   drain TX on a TSC timer, rx_burst each (port, queue) this lcore polls,
 *   parse the burst (each frame into a record from the lcore's LIFO stack,
 *   which the engine may keep while it holds the frame), act on the burst,
 *   take the frames other lcores handed over, serve the command ring,
 *   housekeeping (the heartbeat dp_health.c reads, progress timeouts, the
 *   metrics' snapshot: dp_snap.h) every DP_HOUSEKEEP_ITERS iterations, back off to short sleeps after a stretch
 *   of empty polls if asked to.
 *
 * What happens to a frame:
 *   switch mode, its source MAC
 *   pinned to another port, or a
 *   VLAN id other than 0           dropped before anything else (l2_pinned,
 *                                  vlan_refused: dp_learn.c), never learned
 *   not RoCEv2 (NR_PKT_OTHER)      switched unchanged (dp_emit.c)
 *   RoCEv2 with a wrong ICRC       dropped (bad_icrc): corrupted in flight; the
 *                                  receiver would drop it, and aggregating it
 *                                  would hide the corruption under a fresh
 *                                  ICRC (--no-icrc-check skips the check when
 *                                  the NIC has validated it)
 *   malformed UDP/4791             dropped and counted by reason: such a frame
 *                                  can never be a valid packet for any RoCE
 *                                  receiver (its ICRC or headers are broken),
 *                                  so forwarding it would only waste the link
 *   RoCEv2 of a job another lcore
 *   owns (several workers)         handed to that lcore's handoff ring
 *   RoCEv2                         offered to the engine, the burst's RoCEv2
 *                                  frames in one agg_engine_input_burst call
 *                                  (DLCP's class order: act_burst); its verdict
 *                                  decides:
 *                                  forward unchanged, drop (counted by reason),
 *                                  held (comes back as a result or is freed),
 *                                  resend (a stored result, re-ICRC'd, sent)
 * With a device in the engines' place (--backend rtl) every frame goes to the
 * device instead, and what it sends leaves by the ports (dp_dev.c).
 */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include "dataplane/dpdk/dp_cmd.h"
#include "dataplane/dpdk/dp_snap.h"
#include "dataplane/dpdk/dp_dev.h"
#include "dataplane/dpdk/dp_emit.h"
#include "dataplane/dpdk/dp_learn.h"
#include "dataplane/dpdk/dp_log.h"
#include "dataplane/dpdk/dp_loop.h"
#include "proto/roce_icrc.h"
static inline void drop(struct dp_worker *w, struct rte_mbuf *m)
{
	w->ctr.c[DP_CTR_DROPPED]++;
	rte_pktmbuf_free(m);
}

static void act_malformed(struct dp_worker *w, struct rte_mbuf *m, const struct nr_pkt *p)
{
	unsigned bad = p->bad < NR_BAD_MAX ? p->bad : NR_BAD_NONE;

	w->ctr.c[DP_CTR_MALFORMED]++;
	w->ctr.malformed[bad]++;
	DP_LOG_RL(NOTICE, "lcore %u: malformed RoCEv2 frame on port %u (%u bytes): %s; dropped (counter malformed.%s)",
		  w->lcore, m->port, rte_pktmbuf_data_len(m), nr_malformed_str(bad),
		  dp_malformed_names[bad]);
	drop(w, m);
}

/* Prefetch distances (packets ahead) of the three passes of parse_burst. */
#define PF_MBUF   8      /* mbuf header (buf_addr, data_off, lengths) */
#define PF_HDR    4      /* first two lines of the frame (Eth .. RETH) */
#define PF_WHOLE  4      /* every line of a RoCE frame, for its ICRC */

/* Every line of [p, p + len), four to an iteration (a frame of 1 KiB is 17
 * lines: the loop's own instructions cost more than its prefetches). */
static inline void prefetch_lines(const uint8_t *p, uint32_t len)
{
	const uint8_t *e = p + len;

	for (; e - p >= 4 * RTE_CACHE_LINE_SIZE; p += 4 * RTE_CACHE_LINE_SIZE) {
		rte_prefetch0(p);
		rte_prefetch0(p + RTE_CACHE_LINE_SIZE);
		rte_prefetch0(p + 2 * RTE_CACHE_LINE_SIZE);
		rte_prefetch0(p + 3 * RTE_CACHE_LINE_SIZE);
	}
	for (; p < e; p += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(p);
}

/* Hand a frame of a job owned elsewhere to its lcore; true if it left. */
static bool handoff(struct dp_worker *w, struct rte_mbuf *m, const struct nr_pkt *p)
{
	struct dp_box *b = w->box;
	int owner;

	if (b->n_workers < 2 || p->ipver != 4)
		return false;
	owner = dp_owner_get(b->owners, p->daddr, p->qpn);
	if (owner < 0 || (unsigned)owner == w->idx)
		return false;
	if (rte_ring_mp_enqueue(b->workers[owner]->handoff, m) != 0) {
		w->ctr.c[DP_CTR_HANDOFF_FULL]++;
		DP_LOG_RL(WARNING, "lcore %u: handoff ring of worker %d full; frame dropped (counter handoff_full)",
			  w->lcore, owner);
		drop(w, m);
		return true;
	}
	w->ctr.c[DP_CTR_HANDOFF_OUT]++;
	return true;
}

/*
 * Act on the engine's verdict for frame m; true when its record is not to be
 * put back here: the engine holds the frame (the record goes back at emit
 * or free), or it left as a resent result.  A held frame may already be
 * gone (its slot emitted within the burst): only frame and p are read.
 */
static bool act_verdict(struct dp_worker *w, struct rte_mbuf *m, const uint8_t *frame,
			const struct nr_pkt *p, enum agg_verdict v, enum nr_engine_ctr ctr)
{
	switch (v) {
	case NR_V_FORWARD:
		dp_forward(w, m);
		break;
	case NR_V_HELD:
		w->ctr.c[DP_CTR_HELD]++;
		/* the slot's sum reads the payload when the slot completes;
		 * without the ICRC check nothing has brought it in yet */
		if (!w->box->cfg.icrc_check)
			prefetch_lines(frame + p->pay_off, p->pay_len);
		return true;
	case NR_V_RESEND:
		dp_result_resend(w, m, p);
		return true;
	case NR_V_DROP:
	default:
		w->ctr.c[DP_CTR_ENGINE_DROP]++;
		if (ctr < NR_ECTR_MAX)
			w->ctr.engine_drop[ctr]++;
		drop(w, m);
		break;
	}
	return false;
}

/*
 * Up to NR_ENGINE_BURST frames of a parsed burst, in two passes around one
 * agg_engine_input_burst call.
 * First: the RoCEv2 frames of jobs other lcores own leave by hand-off, the
 * rest are gathered for the engine.  The engine then takes them all (the
 * lookups of up to NR_ENGINE_BURST before their slot work; a job with
 * priority classes emits the slots that became ready in the burst at its
 * end, the highest class first).  Second: each frame's verdict acted on,
 * frames in arrival order, the frames the engine never saw (not RoCEv2,
 * malformed) among them.  Results the engine emitted are in the TX buffers
 * already, ahead of the burst's forwarded frames: those belong to other
 * flows (ACKs, responses, unregistered traffic), whose own order holds.
 */
static void act_chunk(struct dp_worker *w, struct rte_mbuf **pkts, unsigned n, bool handed_in)
{
	struct nr_pkt *rp[NR_ENGINE_BURST];
	uint8_t *fr[NR_ENGINE_BURST];
	void *hd[NR_ENGINE_BURST];
	enum agg_verdict v[NR_ENGINE_BURST];
	enum nr_engine_ctr ctr[NR_ENGINE_BURST];
	uint32_t ri[NR_ENGINE_BURST]; /* record index of engine frame k */
	uint8_t at[NR_ENGINE_BURST];  /* its place in pkts */
	unsigned k = 0, ne;

	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct nr_pkt *p;
		uint32_t r;

		if (m == NULL)
			continue;
		/* the record index first: a frame handed off is parsed again
		 * by its owner, into a record of its own */
		r = *dp_rec_idx(w, m);
		p = &w->recs[r];
		if (p->kind != NR_PKT_ROCE)
			continue;
		if (!handed_in && handoff(w, m, p)) {
			dp_rec_put_idx(w, r);
			pkts[i] = NULL;
			continue;
		}
		rp[k] = p;
		ri[k] = r;
		at[k] = (uint8_t)i;
		fr[k] = rte_pktmbuf_mtod(m, uint8_t *);
		hd[k] = m;
		ctr[k] = NR_ECTR_MAX;
		k++;
	}
	ne = k;
	if (ne)
		agg_engine_input_burst(w->eng, rp, fr, hd, ne, w->now_ns, v, ctr);
	k = 0;
	for (unsigned i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct nr_pkt *p;
		uint32_t r;

		if (m == NULL)
			continue;
		if (k < ne && at[k] == i) {
			/* an engine's frame: a held one may be gone already */
			if (!act_verdict(w, m, fr[k], rp[k], v[k], ctr[k]))
				dp_rec_put_idx(w, ri[k]);
			k++;
			continue;
		}
		r = *dp_rec_idx(w, m);
		p = &w->recs[r];
		if (p->kind == NR_PKT_MALFORMED)
			act_malformed(w, m, p);
		else
			dp_forward(w, m);
		dp_rec_put_idx(w, r);
	}
}

/*
 * A parsed burst, NR_ENGINE_BURST frames at a time (the rx burst's default
 * size: DLCP's class order holds within each such chunk of a larger one).
 */
static void act_burst(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n, bool handed_in)
{
	for (unsigned base = 0; base < n; base += NR_ENGINE_BURST)
		act_chunk(w, pkts + base, RTE_MIN((unsigned)NR_ENGINE_BURST, n - base), handed_in);
}

/* Every line of RoCE frame k from byte `from` on: its ICRC check reads them all. */
static inline void prefetch_roce(const struct dp_worker *w, struct rte_mbuf **pkts, uint16_t k,
				 uint32_t from)
{
	const struct nr_pkt *p;

	if (pkts[k] == NULL)
		return;
	p = dp_rec(w, pkts[k]);
	if (p->kind == NR_PKT_ROCE && p->end > from)
		prefetch_lines(rte_pktmbuf_mtod(pkts[k], uint8_t *) + from, p->end - from);
}

/* Every line of a frame after its first two, before it is parsed (by length). */
static inline void prefetch_body(const struct rte_mbuf *m)
{
	uint32_t len = rte_pktmbuf_data_len(m);

	if (len > 2 * RTE_CACHE_LINE_SIZE)
		prefetch_lines(rte_pktmbuf_mtod(m, const uint8_t *) + 2 * RTE_CACHE_LINE_SIZE,
			       len - 2 * RTE_CACHE_LINE_SIZE);
}

/* Bytes from a frame's start through the UDP destination port, at most: the
 * header stack nr_parse reads before it calls a frame RoCEv2 or not
 * (Ethernet, a VLAN tag, IPv4 with options, the UDP ports). */
#define DP_CLASSIFY_LEN (RTE_ETHER_HDR_LEN + 4 + 60 + 4)

/* Drop a frame that holds a record. */
static void drop_rec(struct dp_worker *w, struct rte_mbuf *m)
{
	dp_rec_put(w, m);
	drop(w, m);
}

/* Take a record for frame m and parse the frame into it; false when the frame
 * was consumed. */
static bool parse_one(struct dp_worker *w, struct rte_mbuf *m, bool learn)
{
	uint8_t *frame;

	if (unlikely(w->rec_top == 0)) {
		w->ctr.c[DP_CTR_NO_RECORD]++;
		DP_LOG_RL(WARNING, "lcore %u: all %u parse records taken by held frames; frame dropped (counter no_record)",
			  w->lcore, w->rec_cap);
		drop(w, m);
		return false;
	}
	*dp_rec_idx(w, m) = w->rec_free[--w->rec_top];

	if (unlikely(m->nb_segs > 1) && rte_pktmbuf_linearize(m) != 0) {
		/* too long for one buffer: a chain that is surely not
		 * RoCEv2 is switched as it is, anything else dropped.  Its
		 * first segment is all nr_parse sees, and the parser calls a
		 * frame cut before the UDP destination port "other": only a
		 * segment that reaches that far can prove it */
		if (rte_pktmbuf_data_len(m) >= DP_CLASSIFY_LEN &&
		    nr_parse(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m),
			     dp_rec(w, m)) == NR_PKT_OTHER) {
			if (learn && !dp_learn(w, rte_pktmbuf_mtod(m, uint8_t *),
					       rte_pktmbuf_data_len(m), m->port)) {
				drop_rec(w, m);
				return false;
			}
			return true;
		}
		w->ctr.c[DP_CTR_MULTISEG]++;
		DP_LOG_RL(WARNING, "lcore %u: %u-segment UDP/4791 frame on port %u could not be linearized; dropped (counter multiseg)",
			  w->lcore, m->nb_segs, m->port);
		drop_rec(w, m);
		return false;
	}
	if (unlikely(rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN)) {
		w->ctr.c[DP_CTR_RUNT]++;
		drop_rec(w, m);
		return false;
	}
	frame = rte_pktmbuf_mtod(m, uint8_t *);
	if (learn && !dp_learn(w, frame, rte_pktmbuf_data_len(m), m->port)) {
		drop_rec(w, m);
		return false;
	}
	nr_parse(frame, rte_pktmbuf_data_len(m), dp_rec(w, m));
	return true;
}

/*
 * Parse a burst into parse records (multi-segment frames are linearized),
 * then check the ICRC of its RoCEv2 frames.  Frames arrive cold (DMA, or
 * another core), so each pass prefetches ahead: mbuf headers, then frame
 * headers while parsing, then, for RoCEv2 frames only, every line of the
 * frame the ICRC check will read.
 */
static void parse_burst(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n, bool learn)
{
	for (uint16_t i = 0; i < n && i < PF_MBUF; i++)
		rte_prefetch0(pkts[i]);
	for (uint16_t i = 0; i < n && i < PF_HDR; i++)
		prefetch_lines(rte_pktmbuf_mtod(pkts[i], uint8_t *), 2 * RTE_CACHE_LINE_SIZE);
	/* the first frames' checks have no earlier frames to hide behind:
	 * their whole bodies go out now, ahead of the parse */
	if (w->box->cfg.icrc_check)
		for (uint16_t i = 0; i < n && i < PF_WHOLE; i++)
			prefetch_body(pkts[i]);
	for (uint16_t i = 0; i < n; i++) {
		if (i + PF_MBUF < n)
			rte_prefetch0(pkts[i + PF_MBUF]);
		if (i + PF_HDR < n)
			prefetch_lines(rte_pktmbuf_mtod(pkts[i + PF_HDR], uint8_t *),
				       2 * RTE_CACHE_LINE_SIZE);
		if (!parse_one(w, pkts[i], learn))
			pkts[i] = NULL;
	}
	if (!w->box->cfg.icrc_check)
		return;
	/* the first two lines of every frame are already on their way, and
	 * all of the first PF_WHOLE frames */
	for (uint16_t i = 0; i < n; i++) {
		uint8_t *frame;

		if (i + PF_WHOLE < n)
			prefetch_roce(w, pkts, i + PF_WHOLE, 2 * RTE_CACHE_LINE_SIZE);
		if (pkts[i] == NULL || dp_rec(w, pkts[i])->kind != NR_PKT_ROCE)
			continue;
		frame = rte_pktmbuf_mtod(pkts[i], uint8_t *);
		if (unlikely(!nr_icrc_check_keep(frame, dp_rec(w, pkts[i])))) {
			w->ctr.c[DP_CTR_BAD_ICRC]++;
			DP_LOG_RL(NOTICE, "lcore %u: RoCEv2 frame with a wrong ICRC on port %u (qpn 0x%x psn %u); dropped (counter bad_icrc)",
				  w->lcore, pkts[i]->port, dp_rec(w, pkts[i])->qpn, dp_rec(w, pkts[i])->psn);
			drop_rec(w, pkts[i]);
			pkts[i] = NULL;
		}
	}
}

void dp_burst(struct dp_worker *w, uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	w->ctr.c[DP_CTR_RX] += n;
	w->l2_memo_port = DP_L2_NONE; /* each burst looks at the L2 table afresh */
	for (uint16_t i = 0; i < n; i++)
		pkts[i]->port = port;   /* not every PMD sets it (net_ring does not) */
	if (w->box->dev) {      /* a device aggregates instead of the engine */
		dp_dev_burst(w, pkts, n);
		return;
	}
	parse_burst(w, pkts, n, w->box->cfg.mode == DP_MODE_SWITCH);
	act_burst(w, pkts, n, false);
}

void dp_burst_handoff(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	w->ctr.c[DP_CTR_HANDOFF_IN] += n;
	parse_burst(w, pkts, n, false);
	act_burst(w, pkts, n, true);
}

int dp_worker_main(void *arg)
{
	struct dp_worker *w = arg;
	struct dp_box *b = w->box;
	struct rte_mbuf *pkts[DP_MAX_BURST];
	const uint64_t drain_tsc = (b->tsc_hz + 1000000 - 1) / 1000000 * DP_TX_DRAIN_US;
	const unsigned burst = b->cfg.burst;
	uint64_t prev_tsc = rte_get_tsc_cycles(), iter = 0, iter_tsc = prev_tsc;
	bool was_busy = false;
	unsigned idle = 0;

	w->lcore = rte_lcore_id();
	w->thread = pthread_self();
	__atomic_store_n(&w->beat_tsc, prev_tsc, __ATOMIC_RELAXED);
	__atomic_store_n(&w->running, 1, __ATOMIC_RELEASE);
	DP_LOG(INFO, "worker %u on lcore %u: %u rx queues, engine kernel %s",
	       w->idx, w->lcore, w->n_rxq, agg_engine_kernel_name(w->eng));

	while (!__atomic_load_n(&b->quit, __ATOMIC_ACQUIRE)) {
		uint64_t cur_tsc = rte_get_tsc_cycles();
		unsigned got = 0, nh;

		w->now_ns = dp_now_ns(b, cur_tsc);
		if (was_busy)   /* the previous iteration found work: its time was busy */
			w->ctr.c[DP_CTR_BUSY_CYCLES] += cur_tsc - iter_tsc;
		iter_tsc = cur_tsc;
		if (unlikely(cur_tsc - prev_tsc > drain_tsc)) {
			dp_tx_drain(w);
			prev_tsc = cur_tsc;
		}
		for (unsigned q = 0; q < w->n_rxq; q++) {
			uint16_t nb = rte_eth_rx_burst(w->rxq[q].port, w->rxq[q].queue, pkts, burst);

			if (nb) {
				dp_burst(w, w->rxq[q].port, pkts, nb);
				got += nb;
			}
		}
		nh = rte_ring_sc_dequeue_burst(w->handoff, (void **)pkts, burst, NULL);
		if (nh) {
			dp_burst_handoff(w, pkts, nh);
			got += nh;
		}
		got += dp_cmd_service(w);
		if (unlikely(++iter % DP_HOUSEKEEP_ITERS == 0)) {
			__atomic_store_n(&w->beat_tsc, cur_tsc, __ATOMIC_RELAXED);
			agg_engine_poll(w->eng, w->now_ns);
			dp_dev_tick(w);
			dp_learn_sweep(w);
			dp_snap_tick(w);
		}
		was_busy = got != 0;
		if (got) {
			idle = 0;
		} else if (b->cfg.idle_sleep_us && ++idle >= b->cfg.idle_polls) {
			dp_tx_drain(w);
			w->ctr.c[DP_CTR_IDLE_SLEEPS]++;
			__atomic_store_n(&w->beat_tsc, cur_tsc, __ATOMIC_RELAXED);
			usleep(b->cfg.idle_sleep_us);
		}
	}
	dp_tx_drain(w);
	__atomic_store_n(&w->running, 0, __ATOMIC_RELEASE);
	return 0;
}
