/* SPDX-License-Identifier: BSD-3-Clause */
/* Switch mode's learning step (see dp_learn.h). */
#include <string.h>

#include "dataplane/dpdk/dp_learn.h"
#include "dataplane/dpdk/dp_log.h"

/* Buckets dp_learn_sweep looks at a housekeeping: the table in about a second
 * of busy polling, far less than an ageing time. */
#define SWEEP_BUCKETS 32

static void log_refused(const struct dp_worker *w, const uint8_t *frame, uint16_t port,
			const char *why, const char *ctr)
{
	const uint8_t *s = frame + 6;

	DP_LOG_RL(NOTICE, "lcore %u: frame from %02x:%02x:%02x:%02x:%02x:%02x on port %u: %s; "
		  "dropped (counter %s)", w->lcore, s[0], s[1], s[2], s[3], s[4], s[5], port, why, ctr);
}

/* The frame's source MAC, its 6 bytes in a word. */
static inline uint64_t src_mac(const uint8_t *frame)
{
	uint64_t v = 0;

	memcpy(&v, frame + 6, 6);
	return v;
}

bool dp_learn(struct dp_worker *w, const uint8_t *frame, uint32_t len, uint16_t port)
{
	uint64_t mac = src_mac(frame);

	/* a port's burst is mostly one host's frames: the table looked at once
	 * a burst for a source it said OK to (its verdict, a tick's refresh,
	 * cannot differ within the burst but for a control-side pin racing
	 * it, which a frame a moment earlier would have raced as well) */
	if (mac == w->l2_memo_mac && port == w->l2_memo_port && !dp_l2_vlan_other(frame, len))
		return true;
	switch (dp_l2_learn(&w->box->l2, frame, len, port, dp_l2_tick(w->now_ns))) {
	case DP_L2_OK:
		w->l2_memo_mac = mac;
		w->l2_memo_port = port;
		return true;
	case DP_L2_MOVED:
		w->ctr.c[DP_CTR_L2_MOVED]++;
		return true;
	case DP_L2_CAPPED:
		w->ctr.c[DP_CTR_L2_CAPPED]++;
		return true;
	case DP_L2_FULL:
		w->ctr.c[DP_CTR_L2_FULL]++;
		return true;
	case DP_L2_PINNED:
		w->ctr.c[DP_CTR_L2_PINNED]++;
		log_refused(w, frame, port, "its source MAC is pinned to another port by a job",
			    "l2_pinned");
		return false;
	case DP_L2_VLAN:
	default:
		w->ctr.c[DP_CTR_VLAN_REFUSED]++;
		log_refused(w, frame, port, "tagged with a VLAN id other than 0 (the box switches "
			    "one VLAN)", "vlan_refused");
		return false;
	}
}

void dp_learn_sweep(struct dp_worker *w)
{
	if (w->idx != 0 || w->box->cfg.mode != DP_MODE_SWITCH)
		return;
	w->ctr.c[DP_CTR_L2_AGED] += dp_l2_sweep(&w->box->l2, dp_l2_tick(w->now_ns), SWEEP_BUCKETS);
}
