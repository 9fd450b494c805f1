/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The box's ports around a device (dp_dev.h).  What the box still does is
 * what a NIC and a switch do around an aggregator FPGA: frames in, L2
 * learning (switch mode), and for each frame the device sends, a fresh mbuf
 * routed by the one exit of dp_emit.c: forwarded frames are switched (or go
 * back out, one-armed), results and resent results are routed as results.
 * Parsing, the ICRC, the jobs, the sums and the rewrite are the device's.
 */
#include <limits.h>

#include <rte_mbuf.h>

#include "dataplane/dpdk/dp_dev.h"
#include "dataplane/dpdk/dp_emit.h"
#include "dataplane/dpdk/dp_learn.h"
#include "dataplane/dpdk/dp_log.h"

static bool is_port(const struct dp_box *b, uint16_t port)
{
	for (unsigned i = 0; i < b->n_ports; i++)
		if (b->ports[i].id == port)
			return true;
	return false;
}

/* One frame the device sent, into m, then out. */
static void dev_send(struct dp_worker *w, struct rte_mbuf *m, uint32_t len, uint16_t port,
		     enum dp_dev_kind kind)
{
	if (len > rte_pktmbuf_tailroom(m) || !is_port(w->box, port)) {
		w->ctr.c[DP_CTR_DEV_ERROR]++;
		DP_LOG_RL(WARNING, "lcore %u: the device sent a frame of %u bytes to port %u: "
			  "longer than an mbuf or no such port; dropped (counter device_error)",
			  w->lcore, len, port);
		rte_pktmbuf_free(m);
		return;
	}
	rte_pktmbuf_append(m, (uint16_t)len);
	m->port = port;
	switch (kind) {
	case DP_DEV_RESULT:
		w->ctr.c[DP_CTR_RESULTS]++;
		dp_result_route(w, m);
		break;
	case DP_DEV_RESEND:
		w->ctr.c[DP_CTR_RESENT]++;
		dp_result_route(w, m);
		break;
	case DP_DEV_FORWARD:
	default:
		dp_forward(w, m);
		break;
	}
}

/* Everything the device has sent. */
static void dev_drain(struct dp_worker *w)
{
	const struct dp_box *b = w->box;

	for (;;) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(b->pool);
		uint8_t scratch[DP_MBUF_DATAROOM];
		enum dp_dev_kind kind = DP_DEV_FORWARD;
		uint16_t port = 0;
		uint32_t len = 0;
		int got;

		if (m != NULL)
			got = b->dev->frame_out(b->dev_ctx, rte_pktmbuf_mtod(m, uint8_t *),
						rte_pktmbuf_tailroom(m), &len, &port, &kind);
		else   /* take it off the device all the same */
			got = b->dev->frame_out(b->dev_ctx, scratch, sizeof(scratch), &len, &port,
						&kind);
		if (!got) {
			rte_pktmbuf_free(m);
			return;
		}
		w->ctr.c[DP_CTR_DEV_OUT]++;
		if (m == NULL) {
			w->ctr.c[DP_CTR_DEV_NO_MBUF]++;
			DP_LOG_RL(WARNING, "lcore %u: no mbuf for a frame the device sent; dropped "
				  "(counter device_no_mbuf; raise --pool-mbufs)", w->lcore);
			continue;
		}
		dev_send(w, m, len, port, kind);
	}
}

void dp_dev_burst(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n)
{
	struct dp_box *b = w->box;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *frame;
		uint32_t len;
		int rc;

		if (unlikely(m->nb_segs > 1) && rte_pktmbuf_linearize(m) != 0) {
			w->ctr.c[DP_CTR_MULTISEG]++;
			w->ctr.c[DP_CTR_DROPPED]++;
			DP_LOG_RL(WARNING, "lcore %u: %u-segment frame on port %u could not be linearized for the device; dropped (counter multiseg)",
				  w->lcore, m->nb_segs, m->port);
			rte_pktmbuf_free(m);
			continue;
		}
		frame = rte_pktmbuf_mtod(m, const uint8_t *);
		len = rte_pktmbuf_data_len(m);
		if (b->cfg.mode == DP_MODE_SWITCH && len >= RTE_ETHER_HDR_LEN &&
		    !dp_learn(w, frame, len, m->port)) {
			w->ctr.c[DP_CTR_DROPPED]++;
			rte_pktmbuf_free(m);
			continue;
		}
		rc = b->dev->frame_in(b->dev_ctx, m->port, frame, len);
		if (likely(rc == 0)) {
			w->ctr.c[DP_CTR_DEV_IN]++;
		} else {
			w->ctr.c[DP_CTR_DEV_ERROR]++;
			w->ctr.c[DP_CTR_DROPPED]++;
			DP_LOG_RL(ERR, "lcore %u: the device did not take a frame of %u bytes from port %u: %s (counter device_error)",
				  w->lcore, len, m->port, b->dev->error(b->dev_ctx));
		}
		rte_pktmbuf_free(m);
		/* its output now: results may be many frames */
		dev_drain(w);
	}
}

void dp_dev_tick(struct dp_worker *w)
{
	struct dp_box *b = w->box;
	uint64_t ms;

	if (b->dev == NULL)
		return;
	if (w->dev_tick_ns == 0 || w->now_ns < w->dev_tick_ns)
		w->dev_tick_ns = w->now_ns;
	ms = (w->now_ns - w->dev_tick_ns) / 1000000u;
	if (ms == 0)
		return;
	w->dev_tick_ns += ms * 1000000u;
	b->dev->tick_ms(b->dev_ctx, (unsigned)(ms < UINT_MAX ? ms : UINT_MAX));
	dev_drain(w);
}
