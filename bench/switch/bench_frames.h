/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-bench-switch, its parts, each using only the ones above it:
 *   bench_frames.c  the benchmark's state and the hosts' frames: templates,
 *                   a window of messages in fresh or reused mbufs, the order
 *                   a worker receives them
 *   bench_touch.c   the physical limit (cold touch) and the warm memcpy
 *   bench_switch.c  the box's runs, options, the report
 */
#ifndef NR_BENCH_FRAMES_H
#define NR_BENCH_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dataplane/dpdk/dp_box.h"
#include "proto/roce_pkt.h"

#define MAXN 16               /* ranks (connections of a job) */
#define PKTS_PER_MSG 16
#define FEED_BURST 32         /* frames of one port per dp_burst(), as rx_burst returns them */

struct tmpl {
	uint8_t f[NR_MAX_MTU + 128];
	uint16_t len;
	struct nr_pkt p;
};

struct bench {
	unsigned n, payload, w, reps;
	double seconds;
	bool json, quick, no_icrc_check;
	struct rte_mempool *pool;
	uint16_t port[MAXN];
	struct rte_ring *rx[MAXN], *tx[MAXN];
	struct dp_box *box;
	struct tmpl data[MAXN][PKTS_PER_MSG];
	struct tmpl ack[MAXN];
	uint32_t ipsn[MAXN];
	uint64_t ipsn_off;        /* PSNs keep growing across repetitions */
	uint8_t *touch_out;       /* the cold touch's results: 2W messages of slots */
};

static inline uint32_t bench_ip(unsigned r) { return htonl(0x0A4E0100u | (r + 1)); }

/* Frames of one connection in a window of W messages. */
static inline unsigned bench_per_port(const struct bench *B) { return B->w * PKTS_PER_MSG; }

void bench_templates(struct bench *B);
/* A fresh frame from a template: copy, patch PSN (and immediate), new ICRC; NULL when the pool is empty. */
struct rte_mbuf *bench_frame(struct bench *B, const struct tmpl *t, uint32_t psn, bool imm, uint32_t immv);
/*
 * The window of W messages starting at message msgs, every rank's frames:
 * pk[r * per_port + i].  refill: write them again into the mbufs pk already
 * holds (the same bytes, in the same order, so the caches end up as after
 * the first writing).  0, or -ENOBUFS when the pool ran dry.
 */
int bench_window(struct bench *B, struct rte_mbuf **pk, uint64_t msgs, bool refill);
/* The order the box's worker meets the window's frames: port by port in bursts of FEED_BURST. */
void bench_feed_order(const struct bench *B, struct rte_mbuf **pk, struct rte_mbuf **order);

#endif /* NR_BENCH_FRAMES_H */
