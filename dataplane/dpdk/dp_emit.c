/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where frames leave the box.
 *
 * Results, emitted by the engine or resent for a duplicate, leave through one
 * exit (result_send): trailer trimmed, ICRC stored, then the fields it masks:
 * ECN-CE set if any contribution carried it and the result's own frame is
 * ECN-capable (IPv4 header checksum fixed, nr_frame_set_ce; the policy:
 * docs/architecture.md, rule 10), UDP checksum 0 (RoCEv2 practice); then routed like any
 * frame, except that a result may leave on the port it came in on (sender
 * and receiver behind one port).
 *
 * Switch mode: destination MAC looked up in the learning table; unknown or
 * group destinations are flooded to every other port (one mbuf, its refcnt
 * raised once per extra port); a frame whose destination sits on its ingress
 * port is filtered (dropped, counted), as a learning bridge does.
 *
 * One-armed mode (one port): every frame goes back out of its port.  A frame
 * addressed to the box's own MAC (hosts route through the box) is re-addressed
 * to the MAC the jobs' endpoints give for its IPv4 destination (source MAC =
 * the port's); with no such endpoint it is dropped (no_route) rather than
 * bounced back to the box.  Every other frame (the ToR steers UDP 4791 to the
 * box with the original addresses; ARP; anything not RoCE) goes back
 * unchanged.  Endpoints are known to the worker owning the job: with several
 * workers, routed frames of unregistered traffic are re-addressed only by a
 * worker that owns a job naming that IP.
 */
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "dataplane/dpdk/dp_emit.h"
#include "dataplane/dpdk/dp_log.h"
#include "proto/roce_icrc.h"

void dp_tx_flush(struct dp_worker *w, uint16_t port)
{
	struct dp_txbuf *t = &w->tx[port];
	uint16_t sent;

	if (t->n == 0)
		return;
	sent = rte_eth_tx_burst(port, (uint16_t)w->idx, t->m, t->n);
	w->ctr.c[DP_CTR_TX] += sent;
	if (unlikely(sent < t->n)) {
		w->ctr.c[DP_CTR_TX_DROPPED] += t->n - sent;
		rte_pktmbuf_free_bulk(&t->m[sent], t->n - sent);
	}
	t->n = 0;
}

void dp_tx_drain(struct dp_worker *w)
{
	struct dp_box *b = w->box;

	for (unsigned i = 0; i < b->n_ports; i++)
		dp_tx_flush(w, b->ports[i].id);
}

void dp_tx_one(struct dp_worker *w, uint16_t port, struct rte_mbuf *m)
{
	struct dp_txbuf *t = &w->tx[port];

	t->m[t->n++] = m;
	if (t->n >= w->box->cfg.burst)
		dp_tx_flush(w, port);
}

static void flood(struct dp_worker *w, struct rte_mbuf *m, bool count)
{
	struct dp_box *b = w->box;
	unsigned others = 0;

	for (unsigned i = 0; i < b->n_ports; i++)
		others += b->ports[i].id != m->port;
	if (others == 0) {
		/* a received frame is filtered; a result (already counted as
		 * held or resent, or never received) has nowhere to go */
		w->ctr.c[count ? DP_CTR_FILTERED : DP_CTR_RESULT_NO_ROUTE]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (count)
		w->ctr.c[DP_CTR_FLOODED]++;
	if (others > 1) {
		rte_pktmbuf_refcnt_update(m, (int16_t)(others - 1));
		w->ctr.c[DP_CTR_FLOOD_COPIES] += others - 1;
	}
	for (unsigned i = 0; i < b->n_ports; i++)
		if (b->ports[i].id != m->port)
			dp_tx_one(w, b->ports[i].id, m);
}

static bool ep_lookup(const struct dp_worker *w, uint32_t ip, uint8_t mac[6])
{
	static const uint8_t zero[6];

	for (unsigned j = 0; j < w->n_jobs; j++) {
		const struct dp_job_ep *job = &w->jobs[j];

		for (unsigned i = 0; i < 2 * job->n_conns; i++)
			if (job->ep[i].ip == ip && memcmp(job->ep[i].mac, zero, 6) != 0) {
				memcpy(mac, job->ep[i].mac, 6);
				return true;
			}
	}
	return false;
}

/* One-armed: back out of the ingress port, re-addressed if sent to us. */
static void one_armed_out(struct dp_worker *w, struct rte_mbuf *m, bool count)
{
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	const struct dp_port *port = NULL;
	uint8_t mac[6];

	for (unsigned i = 0; i < w->box->n_ports; i++)
		if (w->box->ports[i].id == m->port)
			port = &w->box->ports[i];
	if (port && rte_pktmbuf_data_len(m) >= RTE_ETHER_HDR_LEN &&
	    rte_is_same_ether_addr(&eh->dst_addr, &port->mac)) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eh + 1);

		if (eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
		    rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN + sizeof(*ip) ||
		    !ep_lookup(w, ip->dst_addr, mac)) {
			/* a received frame is dropped here; a result was counted
			 * when it was held or resent (or never received: a frame
			 * the engine made), so it must not count as a drop too */
			if (count) {
				w->ctr.c[DP_CTR_NO_ROUTE]++;
				w->ctr.c[DP_CTR_DROPPED]++;
			} else {
				w->ctr.c[DP_CTR_RESULT_NO_ROUTE]++;
			}
			DP_LOG_RL(NOTICE, "lcore %u: %s for the box's MAC on port %u has no known next hop; dropped (counter %s)",
				  w->lcore, count ? "frame" : "result", m->port,
				  count ? "no_route" : "result_no_route");
			rte_pktmbuf_free(m);
			return;
		}
		memcpy(&eh->src_addr, &port->mac, 6);
		memcpy(&eh->dst_addr, mac, 6);
	}
	if (count)
		w->ctr.c[DP_CTR_FORWARDED]++;
	dp_tx_one(w, m->port, m);
}

static void route(struct dp_worker *w, struct rte_mbuf *m, bool is_result)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	uint16_t out;

	if (w->box->cfg.mode == DP_MODE_ONE_ARMED) {
		one_armed_out(w, m, !is_result);
		return;
	}
	if (rte_pktmbuf_data_len(m) < RTE_ETHER_HDR_LEN || dp_mac_is_group(eh->dst_addr.addr_bytes)) {
		flood(w, m, !is_result);
		return;
	}
	out = dp_l2_lookup(&w->box->l2, eh->dst_addr.addr_bytes, dp_l2_tick(w->now_ns));
	if (out == DP_L2_NONE) {
		flood(w, m, !is_result);
		return;
	}
	if (out == m->port && !is_result) {
		w->ctr.c[DP_CTR_FILTERED]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (!is_result)
		w->ctr.c[DP_CTR_FORWARDED]++;
	dp_tx_one(w, out, m);
}

void dp_forward(struct dp_worker *w, struct rte_mbuf *m)
{
	route(w, m, false);
}

void dp_result_route(struct dp_worker *w, struct rte_mbuf *m)
{
	route(w, m, true);
}

/*
 * The one exit of a result frame m (p its parse record, icrc its ICRC): a
 * result ends at its ICRC, so Ethernet trailer bytes the sender's frame had
 * go; the ICRC is stored, then the fields it masks are written (ECN-CE with
 * the IP checksum, UDP checksum 0): their values do not change it, and
 * written before it was computed their small stores would have stalled the
 * CRC's 16-byte loads of the same bytes until they commit.  The record goes
 * back to the lcore's stack; the frame is routed.
 */
static inline void result_send(struct dp_worker *w, struct rte_mbuf *m, uint8_t *frame,
			       const struct nr_pkt *p, uint32_t icrc, bool ecn_ce)
{
	if (rte_pktmbuf_pkt_len(m) > p->end)
		rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - p->end));
	nr_icrc_store(frame + p->end - NR_ICRC_LEN, icrc);
	if (ecn_ce && nr_frame_set_ce(frame, p))
		w->ctr.c[DP_CTR_ECN_MARKED]++;
	memset(frame + p->l4_off + 6, 0, 2);     /* UDP checksum */
	dp_rec_put(w, m);
	route(w, m, true);
}

void dp_result_resend(struct dp_worker *w, struct rte_mbuf *m, const struct nr_pkt *p)
{
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);

	w->ctr.c[DP_CTR_RESENT]++;
	/* the engine already set ECN-CE when a contribution had it */
	result_send(w, m, frame, p, nr_icrc_compute(frame, p), false);
}

static const struct nr_crc_shift *crc_shift_find(const struct dp_worker *w, uint32_t len)
{
	for (unsigned i = 0; i < w->n_crc_shift; i++)
		if (w->crc_shift[i]->len == len)
			return w->crc_shift[i];
	return NULL;
}

/*
 * A slot's N results: each connection's own frame with the sum as payload.
 * The payloads are the same bytes, so with a shift table for their length
 * the payload's CRC is computed once, from the engine's aligned copy, and
 * each frame's ICRC reads only its headers (nr_icrc_compute_tail).
 */
void dp_engine_emit_slot(void *ctx, const struct agg_emit_slot *s)
{
	struct dp_worker *w = ctx;
	const struct nr_crc_shift *k = crc_shift_find(w, s->len);
	uint32_t tail = k ? nr_crc32(0, s->sum, s->len) : 0;

	w->ctr.c[DP_CTR_RESULTS] += s->n;
	for (uint32_t i = 0; i < s->n; i++) {
		struct rte_mbuf *m = s->held[i].handle;
		const struct nr_pkt *p = s->held[i].pkt;
		uint8_t *frame = s->held[i].frame;
		uint32_t icrc = k && p->pay_off + s->len + NR_ICRC_LEN == p->end   /* no pad */
				? nr_icrc_compute_tail(frame, p, tail, k) : nr_icrc_compute(frame, p);

		result_send(w, m, frame, p, icrc, s->ecn_ce);
	}
}

/* A shift table for payloads of len bytes on this lcore (jobs' MTU). */
void dp_crc_shift_add(struct dp_worker *w, uint32_t len)
{
	struct nr_crc_shift *k;

	if (crc_shift_find(w, len) || w->n_crc_shift == DP_CRC_SHIFTS)
		return;      /* results of further MTUs get a whole ICRC each */
	k = rte_malloc("nr_crc_shift", sizeof(*k), RTE_CACHE_LINE_SIZE);
	if (k == NULL)
		return;
	nr_crc_shift_init(k, len);
	w->crc_shift[w->n_crc_shift++] = k;
}

/*
 * A frame the engine made (a NAK to a sender on its receiver's behalf),
 * whole and ICRC'd: copied into an mbuf and routed as a result, from the
 * port the receiver's frames came in on (origin).
 */
void dp_engine_send(void *ctx, const uint8_t *frame, uint32_t len, uint16_t origin)
{
	struct dp_worker *w = ctx;
	struct rte_mbuf *m = rte_pktmbuf_alloc(w->box->pool);
	char *d;

	if (unlikely(m == NULL || (d = rte_pktmbuf_append(m, (uint16_t)len)) == NULL)) {
		w->ctr.c[DP_CTR_GENERATED_NOMBUF]++;
		rte_pktmbuf_free(m);
		return;
	}
	rte_memcpy(d, frame, len);
	m->port = origin;
	w->ctr.c[DP_CTR_GENERATED]++;
	route(w, m, true);
}

uint16_t dp_engine_origin(void *ctx, void *handle)
{
	return ((const struct rte_mbuf *)handle)->port;
}

void dp_engine_free(void *ctx, void *handle)
{
	struct dp_worker *w = ctx;

	w->ctr.c[DP_CTR_FREED_HELD]++;
	dp_rec_put(w, handle);
	rte_pktmbuf_free(handle);
}
