/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-bench-switch, its parts, each using only the ones above it:
 *   bench_frames.c  the benchmark's state and the hosts' frames: a job of
 *                   channels, templates, a window of messages in fresh or
 *                   reused mbufs, the order a worker receives them, the job
 *                   spec, the TX rings of a worker
 *   bench_touch.c   the physical limit (cold touch) and the warm memcpy
 *   bench_feed.c    one worker's stages fed its channels' windows, timed
 *   bench_switch.c  the runs, options, the report
 */
#ifndef NR_BENCH_FRAMES_H
#define NR_BENCH_FRAMES_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "dataplane/dpdk/dp_box.h"
#include "proto/roce_pkt.h"

struct bench_kernels;

#define MAXN 16               /* ranks (connections of a channel) */
#define MAXW 8                /* box workers */
#define MAXCH MAXW            /* channels of the job: one a worker */
#define PKTS_PER_MSG 16
#define FEED_BURST 32         /* frames of one port per dp_burst(), as rx_burst returns them */
#define BENCH_JOB 1           /* the job's id */

struct tmpl {
	uint8_t f[NR_MAX_MTU + 128];
	uint16_t len;
	struct nr_pkt p;
};

/* One channel of the job: its own QPs (and source ports), so its own frames. */
struct bench_chan {
	struct tmpl data[MAXN][PKTS_PER_MSG];   /* rank r's message, packet k */
	struct tmpl ack[MAXN];                  /* rank r+1's ACK to rank r */
	uint64_t ipsn_off;                      /* PSNs keep growing across repetitions */
};

struct bench {
	unsigned n, payload, w, reps;
	uint8_t dtype;            /* the job's element type (--dtype): enum nr_elem_type */
	double seconds;
	bool json, quick, no_icrc_check;
	bool only_agg;         /* --only-aggregate: stage 1's aggregate path alone */
	bool unbound;          /* the job without source MACs and P_Key (and, on one
				* channel, source ports): the box's path before binding */
	char job_kind;         /* --job: 'b' the bound job alone, 'u' the unbound alone,
				* 0 both, in turn (the binding's cost) */
	unsigned workers[MAXW], n_runs;          /* --workers: box workers of each run */
	struct rte_mempool *pool;
	uint16_t port[MAXN];                     /* rank r's port: a queue pair per worker */
	struct rte_ring *rx[MAXN][MAXW], *tx[MAXN][MAXW];
	struct dp_box *box;
	struct bench_chan *ch;                   /* [MAXCH] */
	uint32_t ipsn[MAXN];
	uint8_t *touch_out;       /* the cold touch's results: per worker, 2W messages of slots */
	size_t touch_bytes;       /* of one worker's */
	const char *kernel;       /* the box's sum kernel */
	struct bench_kernels *kern;   /* the box's kernels alone (bench_kernels.c) */
};

static inline uint32_t bench_ip(unsigned r) { return htonl(0x0A4E0100u | (r + 1)); }

/* Frames of one connection in a window of W messages. */
static inline unsigned bench_per_port(const struct bench *B) { return B->w * PKTS_PER_MSG; }

/* QPs of channel c: rank r sends on bench_sqpn(c, r) to rank r+1's bench_rqpn(c, r+1). */
static inline uint32_t bench_sqpn(unsigned c, unsigned r) { return 0x100 + 0x1000 * c + r; }
static inline uint32_t bench_rqpn(unsigned c, unsigned r) { return 0x200 + 0x1000 * c + r; }

/* Templates of every channel (B->ch allocated). */
void bench_templates(struct bench *B);
/* A fresh frame from a template: copy, patch PSN (and immediate), new ICRC; NULL when the pool is empty. */
struct rte_mbuf *bench_frame(struct bench *B, const struct tmpl *t, uint32_t psn, bool imm, uint32_t immv);
/*
 * The window of W messages of channel c starting at its message msgs, every
 * rank's frames: pk[r * per_port + i].  refill: write them again into the
 * mbufs pk already holds (the same bytes, in the same order, so the caches
 * end up as after the first writing).  0, or -ENOBUFS when the pool ran dry.
 */
int bench_window(struct bench *B, unsigned c, struct rte_mbuf **pk, uint64_t msgs, bool refill);
/* The order the box's worker meets the window's frames: port by port in bursts of FEED_BURST. */
void bench_feed_order(const struct bench *B, struct rte_mbuf **pk, struct rte_mbuf **order);
/* The job of k channels as the control API registers it (with a result key); free() it. */
struct nr_job_spec *bench_job_spec(const struct bench *B, unsigned k);
/* Rank r's MAC address. */
void bench_mac(unsigned r, uint8_t m[6]);
/* Take what worker w sent off its TX rings (freed): how many frames. */
unsigned bench_drain(struct bench *B, unsigned w);

#endif /* NR_BENCH_FRAMES_H */
