/* SPDX-License-Identifier: BSD-3-Clause */
/* One box worker's stages fed its channels' frames, timed (bench_feed.c). */
#ifndef NR_BENCH_FEED_H
#define NR_BENCH_FEED_H

#include <stdbool.h>
#include <stdint.h>

#include "bench/switch/bench_frames.h"

/*
 * What one worker is fed and what it measured.  The caller fills the first
 * part; bench_feed() (an lcore function: it runs on the lcore it is launched
 * on, or inline) the second.
 */
struct feed {
	struct bench *B;
	unsigned worker;                 /* index into B->box->workers */
	unsigned chans[MAXCH], n_chans;  /* the channels this worker runs */
	bool agg;                        /* a job is registered (else: the forward path) */
	bool touch;                      /* the cold touch and the box's kernels alone over
					  * every window, each timed apart */
	uint64_t end_tsc;                /* run until then */
	bool serve_cmds;                 /* serve the worker's command ring and publish its
					  * snapshot when due after each burst, as its loop does
					  * (--scrape-ms: what the metrics read) */
	/* results */
	double box_cpu_s;                /* this thread's CPU time in the box's stages */
	double box_wall_s;               /* wall time of the same */
	double gen_s, touch_s;           /* CPU time preparing windows (untimed); in the timed touch */
	double check_s, kern_s;          /* in the ICRC checks alone, in the box's kernels alone
					  * (with touch; no check pass without the box's check) */
	uint64_t msgs[MAXCH];            /* messages sent per channel (of chans[]) */
	uint64_t pkts, bytes;            /* contributions into the box, their payload bytes */
	uint64_t cmds, cmd_cycles;       /* serve_cmds: commands served, TSC cycles serving them */
	uint64_t snaps, snap_cycles; /* serve_cmds: snapshots published (dp_snap.h), their cycles */
	uint64_t out, expect;            /* frames out of the box, frames it should have sent */
	int rc;                          /* 0, or -ENOBUFS / -ENOMEM */
};

/*
 * The box's stages on this thread, no generator in the timing: for each of
 * the worker's channels in turn, a window of W messages is generated
 * (untimed), then given the same history before whatever reads it timed: a
 * pass that reads every line (the cold touch, untimed), written again into
 * the same mbufs, every line of frames and mbuf headers flushed from every
 * cache.  With touch, the cold touch then runs over it (timed apart) and it
 * gets that history again, then the box's ICRC checks alone and its kernels
 * alone (bench_kernels.c, each timed apart and followed by that history).  So
 * the touch, the kernels and the box find frames in memory, not in cache,
 * after the same past.  The worker is fed the window with
 * dp_burst() port by port in bursts of FEED_BURST, as rx_burst would return
 * them (RSS or rte_flow steering would: every frame is the worker's own), TX
 * drained (timed), the outputs taken off its TX rings (untimed), then one
 * coalesced ACK per connection (timed).  Channels' PSN offsets advance.
 */
int bench_feed(void *feed);

#endif /* NR_BENCH_FEED_H */
