/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nr-bench-switch: the box's full path on ring ports, and the limits it is
 * held against.
 *
 * aggregate: a job of N connections is registered; the hosts send message
 *   after message (WRITE FIRST/MIDDLE/LAST_IMM of one payload size), at most
 *   W messages outstanding (the job's credits), and ACK each completed
 *   message for every connection (coalesced ACK: one per message), as hosts
 *   would.  The box does rx, parse, ICRC check, aggregate, rewrite, ICRC, tx.
 * forward: the same traffic with no job: the box parses, checks the ICRC,
 *   asks the engine (unknown connection) and switches every frame by MAC.
 * cold touch: the physical limit (bench_touch.c), on the same frames in the
 *   same run: every line of every input read, one output frame per N inputs.
 * memcpy: one core copying the same volume over a working set of the same
 *   size, warm, for scale.
 *
 * The figures: the box's stages run on this core, fed by dp_burst() with
 * frames generated outside the timing, timed by this thread's CPU time (the
 * machine may be shared).  Then a threaded run: the generator on lcore 0, the
 * box's loop on lcore 1, for wall-clock figures.  gbps counts gradient
 * payload bytes entering the box (N contributions per packet position).
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "bench/bench_util.h"
#include "bench/switch/bench_frames.h"
#include "bench/switch/bench_touch.h"

static unsigned drain(struct bench *B)
{
	unsigned got = 0;

	for (unsigned i = 0; i < B->n; i++) {
		struct rte_mbuf *m[64];
		unsigned k = rte_ring_dequeue_burst(B->tx[i], (void **)m, 64, NULL);

		rte_pktmbuf_free_bulk(m, k);
		got += k;
	}
	return got;
}

static uint64_t drain_all(struct bench *B)
{
	uint64_t n = 0;
	unsigned k;

	while ((k = drain(B)) > 0)
		n += k;
	return n;
}

static void enqueue(struct bench *B, unsigned r, struct rte_mbuf *m)
{
	while (rte_ring_enqueue(B->rx[r], m) != 0)
		drain(B);
}

struct run_res {
	double wall_s, busy_s, gen_s, box_cpu_s, touch_s;
	uint64_t pkts, bytes;
};

static clockid_t box_clock(struct bench *B)
{
	clockid_t c;

	if (pthread_getcpuclockid(B->box->workers[0]->thread, &c) != 0)
		return CLOCK_MONOTONIC;
	return c;
}

/* Send messages for `seconds`; aggregate (ACKs, credits) or forward. */
static void run(struct bench *B, bool agg, double seconds, struct run_res *res)
{
	const uint64_t hz = rte_get_tsc_hz();
	const unsigned per_msg_out = B->n * PKTS_PER_MSG;   /* results or forwards */
	uint64_t start = rte_get_tsc_cycles(), end = start + (uint64_t)(seconds * (double)hz);
	uint64_t sent_msgs = 0, out = 0, acked = 0, gen_cyc = 0, acks_out = 0;
	struct dp_ctr c0, c1;
	clockid_t bc = box_clock(B);
	double bcpu0 = nr_bench_seconds(bc), gcpu0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID);

	dp_box_counters(B->box, &c0);
	while (rte_get_tsc_cycles() < end) {
		uint64_t done = (out - acks_out) / per_msg_out;

		if (sent_msgs - done < B->w) {
			uint64_t t0 = rte_get_tsc_cycles();
			uint64_t m = sent_msgs;

			for (unsigned k = 0; k < PKTS_PER_MSG; k++)
				for (unsigned r = 0; r < B->n; r++) {
					uint32_t g = (uint32_t)(B->ipsn_off + m * PKTS_PER_MSG + k);
					struct rte_mbuf *mb = bench_frame(B, &B->data[r][k], B->ipsn[r] + g,
									k + 1 == PKTS_PER_MSG,
									(uint32_t)((B->ipsn_off / PKTS_PER_MSG + m) & 0xFFFFFF));

					while (mb == NULL) {
						drain(B);
						mb = bench_frame(B, &B->data[r][k], B->ipsn[r] + g,
							       k + 1 == PKTS_PER_MSG,
							       (uint32_t)((B->ipsn_off / PKTS_PER_MSG + m) & 0xFFFFFF));
					}
					enqueue(B, r, mb);
				}
			sent_msgs++;
			gen_cyc += rte_get_tsc_cycles() - t0;
		}
		{
			unsigned got = drain(B);

			out += got;
		}
		if (agg) {
			uint64_t now_done = (out - acks_out) / per_msg_out;

			while (acked < now_done) {
				uint64_t t0 = rte_get_tsc_cycles();
				uint32_t g_last = (uint32_t)(B->ipsn_off + (acked + 1) * PKTS_PER_MSG - 1);

				for (unsigned r = 0; r < B->n; r++) {
					struct rte_mbuf *mb = bench_frame(B, &B->ack[r], B->ipsn[r] + g_last, false, 0);

					if (mb)
						enqueue(B, (r + 1) % B->n, mb);
				}
				acked++;
				acks_out += B->n;   /* each ACK is forwarded back out */
				gen_cyc += rte_get_tsc_cycles() - t0;
			}
		}
	}
	/* let the box finish what is in flight */
	for (uint64_t t = rte_get_tsc_cycles(); rte_get_tsc_cycles() - t < hz / 20;)
		out += drain(B);
	dp_box_counters(B->box, &c1);
	res->wall_s = (double)(rte_get_tsc_cycles() - start) / (double)hz;
	/*
	 * The machine may be shared: the box thread's CPU time, scaled by the
	 * share of its loop time that found work, is its busy CPU time.
	 */
	res->box_cpu_s = nr_bench_seconds(bc) - bcpu0;
	res->busy_s = res->box_cpu_s * ((double)(c1.c[DP_CTR_BUSY_CYCLES] - c0.c[DP_CTR_BUSY_CYCLES]) /
					(double)hz / res->wall_s);
	(void)gen_cyc;
	res->gen_s = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - gcpu0;
	res->pkts = sent_msgs * per_msg_out;
	res->bytes = res->pkts * B->payload;
	B->ipsn_off += (sent_msgs + 1) * PKTS_PER_MSG;
}

/*
 * The box's stages on this core, no generator in the timing: a window of W
 * messages is generated (untimed); on the aggregate path the cold touch runs
 * over it (timed apart), and the window is written again into the same mbufs
 * (untimed: the caches then hold the frames as they did for the touch); the
 * box is fed the window with dp_burst() port by port in bursts of
 * FEED_BURST, as rx_burst would return them, TX drained (timed), the outputs
 * taken off the rings (untimed), then one coalesced ACK per connection
 * (timed).
 */
static int run_inline(struct bench *B, bool agg, double seconds, struct run_res *res)
{
	struct dp_worker *w = B->box->workers[0];
	const unsigned per_port = bench_per_port(B), total = B->n * per_port;
	const uint64_t hz = rte_get_tsc_hz();
	uint64_t start = rte_get_tsc_cycles(), end = start + (uint64_t)(seconds * (double)hz);
	struct rte_mbuf **pk = calloc(total, sizeof(*pk)), **order = calloc(total, sizeof(*order));
	uint64_t msgs = 0, out = 0, expect = 0;
	double box = 0, gen = 0, touch = 0;

	if (pk == NULL || order == NULL) {
		free(pk);
		free(order);
		return -ENOMEM;
	}
	while (rte_get_tsc_cycles() < end) {
		double t0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID);

		if (bench_window(B, pk, msgs, false) != 0) {
			char line[512];

			dp_stats_line(B->box, line, sizeof(line));
			fprintf(stderr, "pool empty (in use %u, msgs %lu, out %lu): %s\n",
				rte_mempool_in_use_count(B->pool), msgs, out, line);
			free(pk);
			free(order);
			return -ENOBUFS;
		}
		bench_feed_order(B, pk, order);
		if (agg) {
			touch += bench_cold_touch(order, total, B->n, B->touch_out,
						  2 * B->w * PKTS_PER_MSG, B->payload);
			bench_window(B, pk, msgs, true);
		}
		gen += nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
		t0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID);
		for (unsigned off = 0; off < per_port; off += FEED_BURST)
			for (unsigned r = 0; r < B->n; r++)
				dp_burst(w, B->port[r], &pk[r * per_port + off],
					 (uint16_t)RTE_MIN((unsigned)FEED_BURST, per_port - off));
		dp_tx_drain(w);
		box += nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
		out += drain_all(B);
		expect += total;
		msgs += B->w;
		if (agg) {
			uint32_t g_last = (uint32_t)(B->ipsn_off + msgs * PKTS_PER_MSG - 1);
			struct rte_mbuf *a[MAXN];

			for (unsigned r = 0; r < B->n; r++)
				a[r] = bench_frame(B, &B->ack[r], B->ipsn[r] + g_last, false, 0);
			t0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID);
			for (unsigned r = 0; r < B->n; r++)
				if (a[r])
					dp_burst(w, B->port[(r + 1) % B->n], &a[r], 1);
			dp_tx_drain(w);
			box += nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
			out += drain_all(B);
			expect += B->n;
		}
	}
	out += drain_all(B);
	if (out != expect)
		fprintf(stderr, "warning: %lu frames left the box, %lu expected\n", out, expect);
	free(pk);
	free(order);
	res->wall_s = (double)(rte_get_tsc_cycles() - start) / (double)hz;
	res->busy_s = box;
	res->box_cpu_s = box;
	res->gen_s = gen;
	res->touch_s = touch;
	res->pkts = msgs * PKTS_PER_MSG * B->n;
	res->bytes = res->pkts * B->payload;
	B->ipsn_off += (msgs + 1) * PKTS_PER_MSG;
	return 0;
}

/* The box on `lcore`: launched on a worker lcore, or run inline on this one. */
static int make_box(struct bench *B, unsigned lcore)
{
	struct dp_cfg cfg;
	char err[256];

	dp_cfg_defaults(&cfg);
	cfg.idle_sleep_us = 0;           /* busy polling: a dedicated core */
	cfg.icrc_check = !B->no_icrc_check;
	B->box = dp_box_create(&cfg, B->port, B->n, &lcore, 1, B->pool, err, sizeof(err));
	if (B->box == NULL) {
		fprintf(stderr, "box: %s\n", err);
		return -1;
	}
	return lcore == rte_lcore_id() ? 0 : dp_box_launch(B->box);
}

static int setup(struct bench *B)
{
	size_t slots = 2 * (size_t)B->w * PKTS_PER_MSG;

	B->touch_out = rte_malloc("nrb_touch", slots * RTE_ALIGN_CEIL(B->payload + 128, RTE_CACHE_LINE_SIZE),
				  RTE_CACHE_LINE_SIZE);
	if (B->touch_out == NULL) {
		fprintf(stderr, "out of memory for the cold touch's results (EAL -m)\n");
		return -1;
	}
	B->pool = rte_pktmbuf_pool_create("nrb_bench_pool", 16383, 256, 0, DP_MBUF_DATAROOM, rte_socket_id());
	if (B->pool == NULL) {
		fprintf(stderr, "pool: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	for (unsigned i = 0; i < B->n; i++) {
		char name[32];
		int id;

		snprintf(name, sizeof(name), "nrbb_rx%u", i);
		B->rx[i] = rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "nrbb_tx%u", i);
		B->tx[i] = rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "nrbb_p%u", i);
		id = rte_eth_from_rings(name, &B->rx[i], 1, &B->tx[i], 1, SOCKET_ID_ANY);
		if (!B->rx[i] || !B->tx[i] || id < 0)
			return -1;
		B->port[i] = (uint16_t)id;
	}
	return make_box(B, rte_lcore_id());
}

static int add_job(struct bench *B)
{
	struct nr_job_spec *sp = calloc(1, sizeof(*sp) + B->n * sizeof(sp->conns[0]));
	uint32_t credits;
	char err[256];
	int rc;

	sp->n_conns = B->n;
	sp->mtu = B->payload;
	sp->msg_size = B->payload * PKTS_PER_MSG;
	sp->pool_msgs = 2 * B->w;
	sp->timeout_ms = 60000;
	sp->mode = NR_SUM_ORDERED;
	sp->result_key = 0x6e720001;   /* as the control API sets one: results' ImmDt rewritten */
	for (unsigned r = 0; r < B->n; r++) {
		sp->conns[r].src_ip = bench_ip(r);
		sp->conns[r].dst_ip = bench_ip((r + 1) % B->n);
		sp->conns[r].src_qpn = 0x100 + r;
		sp->conns[r].dst_qpn = 0x200 + (r + 1) % B->n;
		sp->conns[r].ipsn = B->ipsn[r] + (uint32_t)B->ipsn_off;
	}
	rc = dp_job_add(B->box, 1, sp, &credits, err, sizeof(err));
	free(sp);
	if (rc)
		fprintf(stderr, "job: %s\n", err);
	return rc;
}

static void usage(const char *p)
{
	printf("Usage: %s [EAL options] -- [--conns N] [--payload B] [--window W] [--no-icrc-check] [--reps R] [--seconds S] [--quick] [--json]\n"
	       "  defaults: N=8, B=1024, W=32 messages of 16 packets in flight, 5 repetitions of 2 s\n"
	       "  (--quick: 3 of 0.5 s); EAL default\n"
	       "  -l 0,1 --no-huge -m 1024 --no-pci when no EAL options are given\n", p);
}

int main(int argc, char **argv)
{
	struct bench *B = calloc(1, sizeof(*B));
	char prefix[64], *def[] = { argv[0], "-l", "0,1", "--no-huge", "-m", "1024", "--no-pci",
				    "--file-prefix", prefix, "--log-level", "lib.eal:error", NULL };
	static const struct option lo[] = {
		{ "conns", 1, NULL, 'n' }, { "payload", 1, NULL, 'b' }, { "reps", 1, NULL, 'r' },
		{ "seconds", 1, NULL, 's' }, { "quick", 0, NULL, 'q' }, { "json", 0, NULL, 'j' },
		{ "window", 1, NULL, 'w' }, { "no-icrc-check", 0, NULL, 'i' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	double agg_g[16], agg_m[16], agg_w[16], fwd_g[16], fwd_m[16], genshare[16], boxshare[16], mc[16], agg_lb[16];
	double ct_g[16], ratio[16];
	int rc, c;

	snprintf(prefix, sizeof(prefix), "nrb-bench-%d", (int)getpid());
	B->n = 8;
	B->payload = 1024;
	B->w = 32;
	B->reps = 5;
	B->seconds = 2.0;
	if (argc > 1 && strcmp(argv[1], "--") != 0 && argv[1][0] == '-' && argv[1][1] == '-' &&
	    strcmp(argv[1], "--vdev") != 0 && strcmp(argv[1], "--no-huge") != 0) {
		/* our options only: default EAL arguments */
		rc = rte_eal_init((int)(sizeof(def) / sizeof(def[0])) - 1, def);
		if (rc < 0)
			return 1;
	} else {
		rc = rte_eal_init(argc > 1 ? argc : (int)(sizeof(def) / sizeof(def[0])) - 1, argc > 1 ? argv : def);
		if (rc < 0)
			return 1;
		argc -= rc;
		argv += rc;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'n': B->n = (unsigned)atoi(optarg); break;
		case 'b': B->payload = (unsigned)atoi(optarg); break;
		case 'r': B->reps = (unsigned)atoi(optarg); break;
		case 'w': B->w = (unsigned)atoi(optarg); break;
		case 'i': B->no_icrc_check = true; break;
		case 's': B->seconds = atof(optarg); break;
		case 'q': B->quick = true; break;
		case 'j': B->json = true; break;
		default: usage(argv[0]); return c == 'h' ? 0 : 2;
		}
	}
	if (B->quick) {
		B->reps = 3;
		B->seconds = 0.5;
	}
	if (B->n < 2 || B->n > MAXN || B->payload < 64 || B->payload > 4096 || B->payload % 4 ||
	    (B->payload & (B->payload - 1)) || B->reps < 1 || B->reps > 16 || B->w < 1 || B->w > 64) {
		fprintf(stderr, "bad options: --conns 2..%d, --payload 256..4096 (a power of two: it is the MTU), --reps 1..16, --window 1..64\n", MAXN);
		return 2;
	}
	if (rte_lcore_count() < 2) {
		fprintf(stderr, "need 2 lcores (EAL -l 0,1): generator and box\n");
		return 2;
	}
	bench_templates(B);
	if (setup(B) != 0)
		return 1;
	if (!B->json)
		printf("nr-bench-switch: %u connections, %u-byte payload, %u packets a message, W=%u messages, "
		       "1 box core (kernel %s%s), ring ports, %u x %.1f s, medians\n", B->n, B->payload, PKTS_PER_MSG, B->w, B->box->kernel_name, B->no_icrc_check ? ", no ICRC check on input" : "",
		       B->reps, B->seconds);
	/* 1: the stages on this core, timed by CPU time (the figures) */
	for (unsigned i = 0; i < B->reps; i++) {
		struct run_res a, f;
	
		if (add_job(B) != 0)
			return 1;
		rc = run_inline(B, true, B->seconds, &a);
		dp_job_del(B->box, 1);
		if (rc == 0)
			rc = run_inline(B, false, B->seconds, &f);
		if (rc != 0)
			return 1;
		agg_g[i] = (double)a.bytes * 8 / a.busy_s / 1e9;
		ct_g[i] = (double)a.bytes * 8 / a.touch_s / 1e9;
		ratio[i] = agg_g[i] / ct_g[i];
		agg_m[i] = (double)a.pkts / a.busy_s / 1e6;
		fwd_g[i] = (double)f.bytes * 8 / f.busy_s / 1e9;
		fwd_m[i] = (double)f.pkts / f.busy_s / 1e6;
		mc[i] = bench_memcpy((size_t)B->n * B->w * 2 * PKTS_PER_MSG * B->payload, B->payload, a.bytes);
	}
	/* 2: generator on lcore 0, the box's loop on lcore 1 (wall-clock figures) */
	dp_box_destroy(B->box, false);
	if (make_box(B, 1) != 0)
		return 1;
	for (unsigned i = 0; i < B->reps; i++) {
		struct run_res a;
	
		if (add_job(B) != 0)
			return 1;
		run(B, true, B->seconds, &a);
		dp_job_del(B->box, 1);
		agg_w[i] = (double)a.bytes * 8 / a.wall_s / 1e9;
		agg_lb[i] = (double)a.bytes * 8 / a.busy_s / 1e9;
		genshare[i] = a.gen_s / a.wall_s;
		boxshare[i] = a.box_cpu_s / a.wall_s;
	}
	{
		double ag = nr_bench_median(agg_g, B->reps), am = nr_bench_median(agg_m, B->reps), aw = nr_bench_median(agg_w, B->reps);
		double fg = nr_bench_median(fwd_g, B->reps), fm = nr_bench_median(fwd_m, B->reps), m = nr_bench_median(mc, B->reps);
		double ct = nr_bench_median(ct_g, B->reps), rt = nr_bench_median(ratio, B->reps);
		double gs = nr_bench_median(genshare, B->reps);
		double ctm = ct * 1e9 / 8 / B->payload / 1e6;

		if (B->json) {
			printf("{\"bench\":\"switch\",\"path\":\"aggregate\",\"workers\":1,\"conns\":%u,\"payload\":%u,\"gbps\":%.2f,\"mpps\":%.3f,\"ns_per_pkt\":%.1f,\"wall_gbps\":%.2f}\n",
			       B->n, B->payload, ag, am, 1e3 / am, aw);
			printf("{\"bench\":\"switch\",\"path\":\"forward\",\"workers\":1,\"conns\":%u,\"payload\":%u,\"gbps\":%.2f,\"mpps\":%.3f,\"ns_per_pkt\":%.1f}\n",
			       B->n, B->payload, fg, fm, 1e3 / fm);
			printf("{\"bench\":\"cold_touch\",\"conns\":%u,\"payload\":%u,\"gbps\":%.2f,\"mpps\":%.3f,\"ns_per_pkt\":%.1f,\"box_ratio\":%.3f}\n",
			       B->n, B->payload, ct, ctm, 1e3 / ctm, rt);
			printf("{\"bench\":\"memcpy\",\"gbps\":%.2f}\n", m);
		} else {
			printf("%-12s %10s %10s %10s\n", "path", "Gbit/s", "Mpps", "ns/pkt");
			printf("%-12s %10.2f %10.3f %10.1f\n", "aggregate", ag, am, 1e3 / am);
			printf("%-12s %10.2f %10.3f %10.1f\n", "forward", fg, fm, 1e3 / fm);
			printf("%-12s %10.2f %10.3f %10.1f\n", "cold touch", ct, ctm, 1e3 / ctm);
			printf("%-12s %10.2f\n", "memcpy warm", m);
			printf("aggregate / cold touch = %.2f (goal >= 0.6), median of the runs' ratios; "
			       "aggregate / warm memcpy = %.2f\n", rt, ag / m);
			printf("Gbit/s: gradient payload bytes into the box per second of CPU time of the core running\n"
			       "its stages (rx-side parse, ICRC check, aggregate, rewrite, ICRC, tx; frames generated\n"
			       "outside the timing).  cold touch: the same frames in the same run, every cache line read\n"
			       "once as the box finds them and one output frame written per %u inputs: the physical\n"
			       "limit.  memcpy warm: the same volume over a working set of the same size.\n", B->n);
			printf("threaded (generator lcore 0, box loop lcore 1, ring ports): %.2f Gbit/s wall, "
			       "%.2f Gbit/s per busy box time;\nCPU share of wall time: generator %.0f%%, box %.0f%%%s\n",
			       aw, nr_bench_median(agg_lb, B->reps), gs * 100, nr_bench_median(boxshare, B->reps) * 100,
			       nr_bench_median(boxshare, B->reps) < 0.9 ? " (a shared machine: the wall figure says little)" : "");
		}
	}
	dp_box_destroy(B->box, true);
	rte_mempool_free(B->pool);
	rte_free(B->touch_out);
	{
		char dir[PATH_MAX], cmd[PATH_MAX + 16];

		snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
		rte_eal_cleanup();
		if (strncmp(dir, "/var/run/dpdk/nrb-bench-", 24) == 0) {  /* our own default prefix */
			snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
			if (system(cmd) != 0)
				fprintf(stderr, "could not remove %s\n", dir);
		}
	}
	free(B);
	return 0;
}
