/* SPDX-License-Identifier: BSD-3-Clause */
/* One box worker's stages fed its channels' frames, timed (see bench_feed.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>

#include "bench/bench_util.h"
#include "bench/switch/bench_feed.h"
#include "dataplane/dpdk/dp_cmd.h"
#include "dataplane/dpdk/dp_snap.h"
#include "bench/switch/bench_kernels.h"
#include "bench/switch/bench_touch.h"

/* The worker's command ring and its metrics' snapshot, as its loop serves
 * them (f->serve_cmds): counted and timed. */
static inline void feed_cmds(struct feed *f, struct dp_worker *w)
{
	uint64_t t = rte_get_tsc_cycles(), t1, snap_ns = w->snap_ns;
	unsigned n = dp_cmd_service(w);

	t1 = rte_get_tsc_cycles();
	if (n) {
		f->cmd_cycles += t1 - t;
		f->cmds += n;
	}
	dp_snap_tick(w);
	if (w->snap_ns != snap_ns) {
		f->snap_cycles += rte_get_tsc_cycles() - t1;
		f->snaps++;
	}
}

/* The timed part of a window: the frames into the worker, its TX drained. */
static void feed_window(struct feed *f, struct dp_worker *w, struct rte_mbuf **pk)
{
	struct bench *B = f->B;
	const unsigned per_port = bench_per_port(B);
	double c0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID), w0 = nr_bench_seconds(CLOCK_MONOTONIC);

	for (unsigned off = 0; off < per_port; off += FEED_BURST)
		for (unsigned r = 0; r < B->n; r++) {
			/* the burst's clock, as the loop sets it (its L2 table's
			 * ageing reads it: left at 0, every entry learned by the
			 * clock looked aged and its host's frames were flooded) */
			w->now_ns = dp_now_ns(B->box, rte_get_tsc_cycles());
			dp_burst(w, B->port[r], &pk[r * per_port + off],
				 (uint16_t)RTE_MIN((unsigned)FEED_BURST, per_port - off));
			if (f->serve_cmds)
				feed_cmds(f, w);
		}
	dp_tx_drain(w);
	f->box_cpu_s += nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
	f->box_wall_s += nr_bench_seconds(CLOCK_MONOTONIC) - w0;
}

/* One coalesced ACK per connection of channel c for everything up to message msgs. */
static void feed_acks(struct feed *f, struct dp_worker *w, unsigned c, uint64_t msgs)
{
	struct bench *B = f->B;
	const struct bench_chan *ch = &B->ch[c];
	uint32_t g_last = (uint32_t)(ch->ipsn_off + msgs * PKTS_PER_MSG - 1);
	struct rte_mbuf *a[MAXN];
	double c0, w0;

	for (unsigned r = 0; r < B->n; r++)
		a[r] = bench_frame(B, &ch->ack[r], B->ipsn[r] + g_last, false, 0);
	c0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID);
	w0 = nr_bench_seconds(CLOCK_MONOTONIC);
	w->now_ns = dp_now_ns(B->box, rte_get_tsc_cycles());
	for (unsigned r = 0; r < B->n; r++)
		if (a[r]) {
			dp_burst(w, B->port[(r + 1) % B->n], &a[r], 1);
			f->expect++;
		}
	if (f->serve_cmds)
		feed_cmds(f, w);
	dp_tx_drain(w);
	f->box_cpu_s += nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
	f->box_wall_s += nr_bench_seconds(CLOCK_MONOTONIC) - w0;
}

int bench_feed(void *arg)
{
	struct feed *f = arg;
	struct bench *B = f->B;
	struct dp_worker *w = B->box->workers[f->worker];
	const unsigned total = B->n * bench_per_port(B);
	struct rte_mbuf **pk = calloc(total, sizeof(*pk)), **order = calloc(total, sizeof(*order));
	struct nr_pkt *recs = f->touch ? calloc(total, sizeof(*recs)) : NULL;
	uint8_t *touch_out = B->touch_out + f->worker * B->touch_bytes;   /* the worker's own */
	const unsigned slots = 2 * B->w * PKTS_PER_MSG;

	f->rc = pk && order && (recs || !f->touch) ? 0 : -ENOMEM;
	for (unsigned k = 0; f->rc == 0 && f->n_chans && rte_get_tsc_cycles() < f->end_tsc; k++) {
		unsigned i = k % f->n_chans, c = f->chans[i];
		double t0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID);

		if (bench_window(B, c, pk, f->msgs[i], false) != 0) {
			fprintf(stderr, "worker %u: pool empty (%u mbufs in use)\n", f->worker,
				rte_mempool_in_use_count(B->pool));
			f->rc = -ENOBUFS;
			break;
		}
		/* the same past before the timed touch, the timed kernels and
		 * the box: a pass that reads the window (the first, untimed),
		 * then it is written again and flushed from every cache */
		bench_feed_order(B, pk, order);
		for (unsigned q = 0; recs && q < total; q++)   /* the kernels' records */
			nr_parse(rte_pktmbuf_mtod(order[q], uint8_t *), rte_pktmbuf_data_len(order[q]),
				 &recs[q]);
		bench_flush_frames(pk, total);
		/* passes: the untimed touch, then with touch the timed touch,
		 * the ICRC checks alone (when the box checks) and the kernels */
		for (unsigned pass = 0; pass < (f->touch ? 4u : 1u); pass++) {
			double s = 0;

			if (pass <= 1)
				s = bench_cold_touch(order, total, B->n, touch_out, slots, B->payload);
			else if (pass == 3 || B->kern->icrc_check)
				s = bench_kernels_run(B->kern, pass == 3, order, recs, B->n,
						      bench_per_port(B), FEED_BURST, touch_out, slots,
						      B->payload);
			else
				continue;
			if (s < 0) {
				fprintf(stderr, "worker %u: a frame of the window failed its ICRC check\n",
					f->worker);
				f->rc = -EINVAL;
			}
			if (pass == 1)
				f->touch_s += s;
			else if (pass == 2)
				f->check_s += s;
			else if (pass == 3)
				f->kern_s += s;
			bench_window(B, c, pk, f->msgs[i], true);
			bench_flush_frames(pk, total);
		}
		if (f->rc) {
			rte_pktmbuf_free_bulk(pk, total);
			break;
		}
		f->gen_s += nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
		feed_window(f, w, pk);
		f->out += bench_drain(B, f->worker);
		f->expect += total;
		f->msgs[i] += B->w;
		f->pkts += total;
		if (f->agg) {
			feed_acks(f, w, c, f->msgs[i]);
			f->out += bench_drain(B, f->worker);
		}
	}
	f->out += bench_drain(B, f->worker);
	if (f->rc == 0 && f->out != f->expect)
		fprintf(stderr, "warning: worker %u: %lu frames left the box, %lu expected\n", f->worker,
			f->out, f->expect);
	for (unsigned i = 0; i < f->n_chans; i++)
		B->ch[f->chans[i]].ipsn_off += (f->msgs[i] + 1) * PKTS_PER_MSG;
	f->bytes = f->pkts * B->payload;
	free(pk);
	free(order);
	free(recs);
	return f->rc;
}
