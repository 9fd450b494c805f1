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
 * workers: one job of K channels on a box of K workers (--workers 1,2,...),
 *   each worker on its own lcore fed its own channel's frames, as RSS or
 *   rte_flow steering would deliver them; the scaling factor, the median of
 *   the repetitions' ratios (each repetition runs every worker count).
 *
 * The figures: the box's stages run on the benchmark's lcores, fed by
 * dp_burst() with frames generated outside the timing (bench_feed.c), timed
 * by each thread's CPU time (the machine may be shared) and by wall time.
 * Then a threaded run: the generator on lcore 0, the box's loop on lcore 1,
 * for wall-clock figures of the whole path.  gbps counts gradient payload
 * bytes entering the box (N contributions per packet position).
 *
 * --payload 1024,4096 (the default): every run above for each payload (the
 * RoCE path MTU: 1 KiB on a 1500-byte fabric, 4 KiB on a jumbo one) in turn,
 * in one process, then the aggregate path and its cold touch side by side.
 * --dtype fp32,bf16 (the default): each payload's runs for a job of each
 * element type (a 16-bit job's payloads widened, summed in FP32, rounded once:
 * twice the elements a packet), side by side with the rest.
 *
 * --scrape-ms N instead: does scraping the box's metrics slow its data path?
 * The aggregate path fed on the next lcore (its worker serving its command
 * ring as its loop does), the job created through the control API as a host
 * would (so the metrics have its families), the box's --metrics-listen on
 * 127.0.0.1 and a scraper (bench_scrape.c) on the control cores GETting
 * /metrics every N ms, against the same unscraped, in turn (run_scrape).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
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
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "bench/bench_util.h"
#include "bench/switch/bench_feed.h"
#include "bench/switch/bench_scrape.h"
#include "dataplane/dpdk/dp_snap.h"
#include "control/api/ctl_spec.h"
#include "bench/switch/bench_frames.h"
#include "bench/switch/bench_kernels.h"
#include "bench/switch/bench_touch.h"

#define MAXREPS 16
#define MAXPAY 5                 /* --payload: 256, 512, 1024, 2048, 4096 */

/* ---- the threaded run: generator lcore 0, the box's loop on lcore 1 ---- */

static void enqueue(struct bench *B, unsigned r, struct rte_mbuf *m)
{
	while (rte_ring_enqueue(B->rx[r][0], m) != 0)
		bench_drain(B, 0);
}

struct run_res {
	double wall_s, busy_s, gen_s, box_cpu_s;
	uint64_t pkts, bytes;
};

static clockid_t box_clock(struct bench *B)
{
	clockid_t c;

	if (pthread_getcpuclockid(B->box->workers[0]->thread, &c) != 0)
		return CLOCK_MONOTONIC;
	return c;
}

/* Message m of channel 0, every rank, into the box's RX rings. */
static void send_msg(struct bench *B, uint64_t m)
{
	const struct bench_chan *ch = &B->ch[0];

	for (unsigned k = 0; k < PKTS_PER_MSG; k++)
		for (unsigned r = 0; r < B->n; r++) {
			uint32_t g = (uint32_t)(ch->ipsn_off + m * PKTS_PER_MSG + k);
			uint32_t tag = (uint32_t)((ch->ipsn_off / PKTS_PER_MSG + m) & 0xFFFFFF);
			struct rte_mbuf *mb;

			while ((mb = bench_frame(B, &ch->data[r][k], B->ipsn[r] + g, k + 1 == PKTS_PER_MSG,
						 tag)) == NULL)
				bench_drain(B, 0);
			enqueue(B, r, mb);
		}
}

/* Send messages for `seconds` on channel 0 of the job, ACK what completes. */
static void run_threaded(struct bench *B, double seconds, struct run_res *res)
{
	const uint64_t hz = rte_get_tsc_hz();
	const unsigned per_msg_out = B->n * PKTS_PER_MSG;   /* results */
	uint64_t start = rte_get_tsc_cycles(), end = start + (uint64_t)(seconds * (double)hz);
	uint64_t sent_msgs = 0, out = 0, acked = 0, acks_out = 0;
	struct dp_ctr c0, c1;
	clockid_t bc = box_clock(B);
	double bcpu0 = nr_bench_seconds(bc), gcpu0 = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID);
	struct bench_chan *ch = &B->ch[0];

	dp_box_counters(B->box, &c0);
	while (rte_get_tsc_cycles() < end) {
		if (sent_msgs - (out - acks_out) / per_msg_out < B->w)
			send_msg(B, sent_msgs++);
		out += bench_drain(B, 0);
		while (acked < (out - acks_out) / per_msg_out) {
			uint32_t g_last = (uint32_t)(ch->ipsn_off + (acked + 1) * PKTS_PER_MSG - 1);

			for (unsigned r = 0; r < B->n; r++) {
				struct rte_mbuf *mb = bench_frame(B, &ch->ack[r], B->ipsn[r] + g_last, false, 0);

				if (mb)
					enqueue(B, (r + 1) % B->n, mb);
			}
			acked++;
			acks_out += B->n;   /* each ACK is forwarded back out */
		}
	}
	/* let the box finish what is in flight */
	for (uint64_t t = rte_get_tsc_cycles(); rte_get_tsc_cycles() - t < hz / 20;)
		out += bench_drain(B, 0);
	dp_box_counters(B->box, &c1);
	res->wall_s = (double)(rte_get_tsc_cycles() - start) / (double)hz;
	/*
	 * The machine may be shared: the box thread's CPU time, scaled by the
	 * share of its loop time that found work, is its busy CPU time.
	 */
	res->box_cpu_s = nr_bench_seconds(bc) - bcpu0;
	res->busy_s = res->box_cpu_s * ((double)(c1.c[DP_CTR_BUSY_CYCLES] - c0.c[DP_CTR_BUSY_CYCLES]) /
					(double)hz / res->wall_s);
	res->gen_s = nr_bench_seconds(CLOCK_THREAD_CPUTIME_ID) - gcpu0;
	res->pkts = sent_msgs * per_msg_out;
	res->bytes = res->pkts * B->payload;
	ch->ipsn_off += (sent_msgs + 1) * PKTS_PER_MSG;
}

/* ---- the box and its job ------------------------------------------------ */

/*
 * A box of n workers on lcores[]; launch: its loops run there (the threaded
 * run), else the benchmark's threads call its stages (bench_feed).
 */
static int make_box(struct bench *B, const unsigned *lcores, unsigned n, bool launch)
{
	struct dp_cfg cfg;
	char err[256];

	dp_cfg_defaults(&cfg);
	cfg.idle_sleep_us = 0;           /* busy polling: a dedicated core */
	cfg.icrc_check = !B->no_icrc_check;
	B->box = dp_box_create(&cfg, B->port, B->n, lcores, n, B->pool, err, sizeof(err));
	if (B->box == NULL) {
		fprintf(stderr, "box: %s\n", err);
		return -1;
	}
	B->kernel = B->box->kernel_name;
	return launch ? dp_box_launch(B->box) : 0;
}

/* The box learns host r's MAC on its port, as from its ARP. */
static void bench_learn(struct bench *B, unsigned r)
{
	uint8_t hdr[14] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, [12] = 0x08, [13] = 0x06 };

	bench_mac(r, hdr + 6);
	dp_l2_learn(&B->box->l2, hdr, sizeof(hdr), B->port[r],
		    dp_l2_tick(dp_now_ns(B->box, rte_get_tsc_cycles())));
}

static int add_job(struct bench *B, unsigned k)
{
	struct nr_job_spec *sp = bench_job_spec(B, k);
	uint32_t credits;
	char err[256] = "out of memory";
	int rc;

	/* the box knows each host's port, as from its ARP, so the bound job's
	 * connections are bound to their ports too (dp_jobs.c) */
	for (unsigned r = 0; r < B->n && !B->unbound; r++)
		bench_learn(B, r);
	rc = sp ? dp_job_add(B->box, BENCH_JOB, sp, &credits, err, sizeof(err)) : -ENOMEM;

	free(sp);
	if (rc)
		fprintf(stderr, "job: %s\n", err);
	return rc;
}

/* Frames, kernels and the cold touch's slots for payload (the MTU) p. */
static void use_payload(struct bench *B, unsigned p)
{
	B->payload = p;
	B->touch_bytes = 2 * (size_t)B->w * PKTS_PER_MSG * bench_slot_bytes(p);
	bench_kernels_init(B->kern, B->payload, !B->no_icrc_check, B->dtype);
	bench_templates(B);
}

/* Everything but the frames, sized for the largest payload, max_pay. */
static int setup(struct bench *B, unsigned max_workers, unsigned max_pay)
{
	size_t slots = 2 * (size_t)B->w * PKTS_PER_MSG;

	B->touch_out = rte_malloc("nrb_touch", slots * bench_slot_bytes(max_pay) * max_workers,
				  RTE_CACHE_LINE_SIZE);
	B->ch = rte_zmalloc("nrb_chans", MAXCH * sizeof(*B->ch), RTE_CACHE_LINE_SIZE);
	B->kern = rte_malloc("nrb_kernels", sizeof(*B->kern), RTE_CACHE_LINE_SIZE);
	if (B->touch_out == NULL || B->ch == NULL || B->kern == NULL) {
		fprintf(stderr, "out of memory for the channels' templates and the cold touch (EAL -m)\n");
		return -1;
	}
	B->pool = rte_pktmbuf_pool_create("nrb_bench_pool", 16383 * max_workers, 256, 0, DP_MBUF_DATAROOM,
					  rte_socket_id());
	if (B->pool == NULL) {
		fprintf(stderr, "pool: %s\n", rte_strerror(rte_errno));
		return -1;
	}
	for (unsigned i = 0; i < B->n; i++) {
		char name[32];
		int id;

		for (unsigned q = 0; q < max_workers; q++) {
			snprintf(name, sizeof(name), "nrbb_rx%u_%u", i, q);
			B->rx[i][q] = rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
			snprintf(name, sizeof(name), "nrbb_tx%u_%u", i, q);
			B->tx[i][q] = rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (!B->rx[i][q] || !B->tx[i][q])
				return -1;
		}
		/* a queue pair per worker: each worker's results on rings of its own */
		snprintf(name, sizeof(name), "nrbb_p%u", i);
		id = rte_eth_from_rings(name, B->rx[i], max_workers, B->tx[i], max_workers, SOCKET_ID_ANY);
		if (id < 0)
			return -1;
		B->port[i] = (uint16_t)id;
	}
	return 0;
}

/* ---- the runs ------------------------------------------------------------ */

struct figures {
	double agg_g[MAXREPS], agg_m[MAXREPS], fwd_g[MAXREPS], fwd_m[MAXREPS], ct_g[MAXREPS];
	double kn_g[MAXREPS], ck_g[MAXREPS];     /* the box's kernels alone, its ICRC checks alone */
	double ub_m[MAXREPS], bind_ns[MAXREPS];  /* the job unbound: Mpps; ns a packet binding costs */
	double ratio[MAXREPS], mc[MAXREPS];
	double thr_w[MAXREPS], thr_b[MAXREPS], genshare[MAXREPS], boxshare[MAXREPS];
	/* per --workers run: box Gbit/s by CPU time and by wall time, Mpps, ns a packet a worker */
	double wk_g[MAXW][MAXREPS], wk_wall[MAXW][MAXREPS], wk_m[MAXW][MAXREPS], wk_ns[MAXW][MAXREPS];
};

static void feed_init(struct feed *f, struct bench *B, unsigned worker, bool agg, bool touch)
{
	memset(f, 0, sizeof(*f));
	f->B = B;
	f->worker = worker;
	f->agg = agg;
	f->touch = touch;
	f->end_tsc = rte_get_tsc_cycles() + (uint64_t)(B->seconds * (double)rte_get_tsc_hz());
	f->chans[0] = 0;
	f->n_chans = 1;
}

/* 1: the stages on this core, timed by CPU time (the figures). */
static int run_stages(struct bench *B, struct figures *F)
{
	unsigned lcore = rte_lcore_id();

	if (make_box(B, &lcore, 1, false) != 0)
		return -1;
	for (unsigned i = 0; i < B->reps; i++) {
		struct feed a, f;

		B->unbound = B->job_kind == 'u';
		if (add_job(B, 1) != 0)
			return -1;
		feed_init(&a, B, 0, true, true);
		bench_feed(&a);
		dp_job_del(B->box, BENCH_JOB);
		B->unbound = false;
		if (a.rc)
			return -1;
		if (!B->only_agg) {
			feed_init(&f, B, 0, false, false);
			if (bench_feed(&f) != 0)
				return -1;
			F->fwd_g[i] = (double)f.bytes * 8 / f.box_cpu_s / 1e9;
			F->fwd_m[i] = (double)f.pkts / f.box_cpu_s / 1e6;
		}
		F->agg_g[i] = (double)a.bytes * 8 / a.box_cpu_s / 1e9;
		F->agg_m[i] = (double)a.pkts / a.box_cpu_s / 1e6;
		if (!B->job_kind) {
			/* the same job unbound (IP and QPN checked only), right after */
			B->unbound = true;
			if (add_job(B, 1) != 0)
				return -1;
			feed_init(&a, B, 0, true, true); /* the same cold frames as the bound run */
			bench_feed(&a);
			dp_job_del(B->box, BENCH_JOB);
			B->unbound = false;
			if (a.rc)
				return -1;
			F->ub_m[i] = (double)a.pkts / a.box_cpu_s / 1e6;
			F->bind_ns[i] = 1e3 / F->agg_m[i] - 1e3 / F->ub_m[i];
		}
		F->ct_g[i] = (double)a.bytes * 8 / a.touch_s / 1e9;
		F->kn_g[i] = (double)a.bytes * 8 / a.kern_s / 1e9;
		F->ck_g[i] = a.check_s > 0 ? (double)a.bytes * 8 / a.check_s / 1e9 : 0;
		F->ratio[i] = F->agg_g[i] / F->ct_g[i];
		F->mc[i] = bench_memcpy((size_t)B->n * B->w * 2 * PKTS_PER_MSG * B->payload, B->payload,
					a.bytes);
	}
	dp_box_destroy(B->box, false);
	return 0;
}

/* 2: the generator on this lcore, the box's loop on the next (wall-clock figures). */
static int run_generator(struct bench *B, struct figures *F)
{
	unsigned lcore = rte_get_next_lcore(rte_lcore_id(), 1, 0);

	if (make_box(B, &lcore, 1, true) != 0)
		return -1;
	for (unsigned i = 0; i < B->reps; i++) {
		struct run_res a;

		if (add_job(B, 1) != 0)
			return -1;
		run_threaded(B, B->seconds, &a);
		dp_job_del(B->box, BENCH_JOB);
		F->thr_w[i] = (double)a.bytes * 8 / a.wall_s / 1e9;
		F->thr_b[i] = (double)a.bytes * 8 / a.busy_s / 1e9;
		F->genshare[i] = a.gen_s / a.wall_s;
		F->boxshare[i] = a.box_cpu_s / a.wall_s;
	}
	dp_box_destroy(B->box, false);
	return 0;
}

/*
 * 3: one job of n channels on a box of n workers, worker k on the k-th lcore
 * (this one first), fed its own channel: the box's placement must put one
 * channel on each worker.  One repetition (run r, repetition i): main runs
 * the worker counts in turn within each repetition, so that the scaling
 * compares runs taken moments apart, not minutes (the machine's speed drifts).
 */
static int run_workers(struct bench *B, unsigned n, unsigned run, unsigned i, struct figures *F)
{
	unsigned lcores[MAXW], lc = rte_lcore_id();
	struct nr_job_stats *st = calloc(1, sizeof(*st));
	struct feed f[MAXW];
	double g = 0, wall = 0, m = 0, ns = 0;
	int rc;

	for (unsigned k = 0; k < n; k++, lc = rte_get_next_lcore(lc, 1, 0))
		lcores[k] = lc;
	if (st == NULL || make_box(B, lcores, n, false) != 0) {
		free(st);
		return -1;
	}
	rc = add_job(B, n);
	if (rc == 0)
		rc = dp_job_stats(B->box, BENCH_JOB, st);
	for (unsigned k = 0; rc == 0 && k < n; k++) {
		feed_init(&f[k], B, k, true, false);
		f[k].chans[0] = k;
		if (st->ch[k].worker != k) {
			fprintf(stderr, "channel %u runs on worker %u, not %u\n", k, st->ch[k].worker, k);
			rc = -1;
		}
	}
	for (unsigned k = 1; rc == 0 && k < n; k++)
		rc = rte_eal_remote_launch(bench_feed, &f[k], lcores[k]);
	if (rc == 0)
		bench_feed(&f[0]);
	for (unsigned k = 1; k < n; k++)
		rte_eal_wait_lcore(lcores[k]);
	dp_job_del(B->box, BENCH_JOB);
	for (unsigned k = 0; rc == 0 && k < n; k++)
		rc = f[k].rc;
	free(st);
	dp_box_destroy(B->box, false);
	if (rc != 0)
		return -1;
	for (unsigned k = 0; k < n; k++) {
		g += (double)f[k].bytes * 8 / f[k].box_cpu_s / 1e9;
		wall += (double)f[k].bytes * 8 / f[k].box_wall_s / 1e9;
		m += (double)f[k].pkts / f[k].box_cpu_s / 1e6;
		ns += f[k].box_cpu_s * 1e9 / (double)f[k].pkts / n;
	}
	F->wk_g[run][i] = g;
	F->wk_wall[run][i] = wall;
	F->wk_m[run][i] = m;
	F->wk_ns[run][i] = ns;
	return 0;
}

/* A job of one channel through the control API (admin), named: its id, or 0. */
static uint32_t ctl_add_job(struct bench *B, struct nr_ctl *ctl)
{
	struct nr_job_spec *sp = bench_job_spec(B, 1);
	json_t *req, *r;
	uint32_t id = 0;

	for (unsigned i = 0; i < B->n; i++)
		bench_learn(B, i);
	if (sp == NULL)
		return 0;
	req = json_pack("{s:s,s:o,s:s}", "op", "job_create", "spec", nr_ctl_spec_to_json(sp), "name",
			"bench");
	r = nr_ctl_handle_json(ctl, req, NR_CTL_ADMIN);
	if (json_is_true(json_object_get(r, "ok")))
		id = (uint32_t)json_integer_value(json_object_get(r, "job"));
	else
		fprintf(stderr, "job: %s\n", json_string_value(json_object_get(r, "error")));
	json_decref(r);
	json_decref(req);
	free(sp);
	return id;
}

/*
 * k idle jobs beside the fed one (--scrape-jobs), through the control API: its
 * spec with QPNs of their own, so the metrics read as many jobs as the box
 * holds.  0, or -1 said on stderr.
 */
static int ctl_add_idle_jobs(struct bench *B, struct nr_ctl *ctl, unsigned k)
{
	for (unsigned j = 1; j <= k; j++) {
		struct nr_job_spec *sp = bench_job_spec(B, 1);
		char name[32];
		json_t *req, *r;
		bool ok;

		if (sp == NULL)
			return -1;
		sp->pool_msgs = 2; /* the least room: the admission budget holds 63 of them */
		for (uint32_t i = 0; i < nr_job_conns(sp); i++) {
			sp->conns[i].src_qpn = (sp->conns[i].src_qpn + 0x1000 * j) & 0xffffff;
			sp->conns[i].dst_qpn = (sp->conns[i].dst_qpn + 0x1000 * j) & 0xffffff;
		}
		snprintf(name, sizeof(name), "idle-%u", j);
		req = json_pack("{s:s,s:o,s:s}", "op", "job_create", "spec",
				nr_ctl_spec_to_json(sp), "name", name);
		r = nr_ctl_handle_json(ctl, req, NR_CTL_ADMIN);
		ok = json_is_true(json_object_get(r, "ok"));
		if (!ok)
			fprintf(stderr, "idle job %u: %s\n", j,
				json_string_value(json_object_get(r, "error")));
		json_decref(r);
		json_decref(req);
		free(sp);
		if (!ok)
			return -1;
	}
	return 0;
}

/*
 * 4 (--scrape-ms ms): the box's worker on the next lcore fed as in 1
 * (bench_feed, timed by its thread's CPU time: what the worker spends a
 * packet, whatever else the machine runs), serving its command ring after
 * every burst as its loop does, while a scraper on the control cores (the
 * main lcore's CPU: never the worker's) GETs the metrics every ms.  The
 * metrics read the worker's counters, its engine's and the job's through
 * that ring.  Each repetition runs unscraped (A), scraped, and unscraped
 * again (B), the order rotating; B against A is the machine's noise floor.
 */
static int run_scrape(struct bench *B, unsigned ms, unsigned idle_jobs)
{
	unsigned lcore = rte_get_next_lcore(rte_lcore_id(), 1, 0), n, failed;
	double g[3][MAXREPS], ratio[MAXREPS], noise[MAXREPS], dev[MAXREPS], mean, worst;
	double sum_ms = 0, max_ms = 0;
	unsigned scrapes = 0, fails = 0;
	size_t bytes, all_bytes = 0;
	uint64_t cmds = 0, cmd_cycles = 0, snaps = 0, snap_cycles = 0;
	double scraped_cpu = 0;
	struct dp_metrics_server *srv;
	struct dp_worker *w;
	struct nr_ctl *ctl;
	char err[256];
	json_t *req, *r;

	if (make_box(B, &lcore, 1, false) != 0)
		return -1;
	w = B->box->workers[0];
	B->box->cfg.stall_ms = 3600000;     /* the fed worker has no loop to beat */
	ctl = nr_ctl_create(dp_backend_create(B->box));
	srv = ctl ? dp_metrics_start(B->box, ctl, "127.0.0.1:0", NULL, NULL, err, sizeof(err)) : NULL;
	if (srv == NULL) {
		fprintf(stderr, "metrics listener: %s\n", ctl ? err : "out of memory");
		return -1;
	}
	if (ctl_add_idle_jobs(B, ctl, idle_jobs) != 0)
		return -1;
	for (unsigned i = 0; i < B->reps; i++) {
		for (unsigned k = 0; k < 3; k++) {
			const unsigned kind = (i + k) % 3;       /* 0: A, 1: scraped, 2: B */
			struct bench_scraper *sc = NULL;
			struct feed f;
			uint32_t id = ctl_add_job(B, ctl);   /* fresh PSNs each run, as in 1 */
			int rc;

			if (id == 0)
				return -1;
			/* from here commands go through the ring, which the feed serves */
			w->beat_tsc = rte_get_tsc_cycles();
			__atomic_store_n(&w->running, 1, __ATOMIC_RELEASE);
			__atomic_store_n(&B->box->started, true, __ATOMIC_RELEASE);
			feed_init(&f, B, 0, true, false);
			f.serve_cmds = true;
			if (kind == 1 && (sc = bench_scraper_start(dp_metrics_port(srv), ms)) == NULL) {
				fprintf(stderr, "cannot start the scraper thread\n");
				return -1;
			}
			rc = rte_eal_remote_launch(bench_feed, &f, lcore);
			/* the scraper stops a little before the feed: no read left
			 * waiting on a ring nobody serves any more */
			while (rc == 0 && sc && rte_get_tsc_cycles() + rte_get_tsc_hz() / 5 < f.end_tsc)
				usleep(10000);
			if (sc) {
				bench_scraper_stop(sc, &n, &failed, &bytes, &mean, &worst);
				scrapes += n;
				fails += failed;
				all_bytes += bytes;
				sum_ms += mean * n;
				max_ms = worst > max_ms ? worst : max_ms;
			}
			if (rc == 0)
				rc = rte_eal_wait_lcore(lcore);
			__atomic_store_n(&B->box->started, false, __ATOMIC_RELEASE);
			__atomic_store_n(&w->running, 0, __ATOMIC_RELEASE);
			req = json_pack("{s:s,s:I}", "op", "job_destroy", "job", (json_int_t)id);
			r = nr_ctl_handle_json(ctl, req, NR_CTL_ADMIN);
			json_decref(r);
			json_decref(req);
			if (rc != 0 || f.rc != 0)
				return -1;
			g[kind][i] = (double)f.bytes * 8 / f.box_cpu_s / 1e9;
			if (kind == 1) {
				cmds += f.cmds;
				cmd_cycles += f.cmd_cycles;
				scraped_cpu += f.box_cpu_s;
			}
			snaps += f.snaps;
			snap_cycles += f.snap_cycles;
		}
		/* scraped against the mean of the two unscraped runs beside it; the
		 * unscraped ones against each other: how much runs differ anyway */
		ratio[i] = g[1][i] / ((g[0][i] + g[2][i]) / 2);
		noise[i] = g[2][i] / g[0][i];
		dev[i] = fabs(noise[i] - 1);
		printf("rep %u: the worker, Gbit/s by its CPU time: A %.2f, scraped %.2f, B %.2f "
		       "(scraped/mean(A,B) %.4f, B/A %.4f)\n", i, g[0][i], g[1][i], g[2][i], ratio[i],
		       noise[i]);
	}
	/* (a scrape waits while the fed worker makes its next window, untimed:
	 * its loop would answer within an iteration) */
	printf("scraped every %u ms: %u scrapes of %zu bytes, %.2f ms each (worst %.2f), %u failed\n",
	       ms, scrapes, scrapes ? all_bytes / scrapes : 0, scrapes ? sum_ms / scrapes : 0, max_ms,
	       fails);
	/* the worker's own share of a scrape: the commands it served for it */
	{
		double us = scrapes ? (double)cmd_cycles / scrapes / (double)rte_get_tsc_hz() * 1e6 : 0;

		printf("the worker served %lu commands for them, %.2f us a scrape: %.4f%% of its core at "
		       "a scrape every %u ms (%.4f%% of its timed work in the scraped runs)\n", cmds, us,
		       us / (ms * 1e3) * 100, ms,
		       scraped_cpu > 0 ? (double)cmd_cycles / (double)rte_get_tsc_hz() / scraped_cpu * 100 : 0);
	}
	/* what it costs whether anyone scrapes or not: the snapshots it publishes */
	{
		double us = snaps ? (double)snap_cycles / snaps / (double)rte_get_tsc_hz() * 1e6 : 0;

		printf("the box held %u jobs; the worker published %lu snapshots of them, %.2f us "
		       "each: %.4f%% of its core at one every %.0f ms\n",
		       idle_jobs + 1, snaps, us, us / ((double)DP_SNAP_NS / 1e3) * 100,
		       (double)DP_SNAP_NS / 1e6);
	}
	printf("payload %u, N=%u, %u reps of %.1f s: the worker %.2f Gbit/s unscraped, %.2f scraped "
	       "(medians); scraped/unscraped %.4f (median of scraped/mean(A,B)); two unscraped runs "
	       "differ by %.4f (median |B/A - 1|: the machine's noise)\n", B->payload, B->n, B->reps,
	       B->seconds, nr_bench_median(g[0], B->reps), nr_bench_median(g[1], B->reps),
	       nr_bench_median(ratio, B->reps), nr_bench_median(dev, B->reps));
	dp_metrics_stop(srv);
	nr_ctl_destroy(ctl);    /* the backend, not the box */
	dp_box_destroy(B->box, false);
	return 0;
}

/*
 * Run r's scaling: the median over the repetitions of its Gbit/s against the
 * 1-worker run's in the same repetition; 0 without a 1-worker run.
 */
static double scaling(const struct bench *B, const struct figures *F, unsigned r)
{
	double v[MAXREPS];

	for (unsigned b = 0; b < B->n_runs; b++)
		if (B->workers[b] == 1) {
			for (unsigned i = 0; i < B->reps; i++)
				v[i] = F->wk_g[b][i] > 0 ? F->wk_g[r][i] / F->wk_g[b][i] : 0;
			return nr_bench_median(v, B->reps);
		}
	return 0;
}

/* ---- report -------------------------------------------------------------- */

static double med(double *v, unsigned n)
{
	return nr_bench_median(v, n);
}

static void report_json(struct bench *B, struct figures *F)
{
	double am = med(F->agg_m, B->reps), fm = med(F->fwd_m, B->reps), ct = med(F->ct_g, B->reps);
	double ctm = ct * 1e9 / 8 / B->payload / 1e6, kn = med(F->kn_g, B->reps);
	double knm = kn * 1e9 / 8 / B->payload / 1e6;
	double ck = med(F->ck_g, B->reps), ckm = ck * 1e9 / 8 / B->payload / 1e6;

	printf("{\"bench\":\"switch\",\"path\":\"aggregate\",\"dtype\":\"%s\",\"workers\":1,"
	       "\"conns\":%u,\"payload\":%u,\"gbps\":%.2f,\"mpps\":%.3f,\"ns_per_pkt\":%.1f",
	       nr_elem_name(B->dtype), B->n, B->payload, med(F->agg_g, B->reps), am, 1e3 / am);
	if (B->job_kind) /* one kind of job alone: no binding cost to tell */
		printf(",\"job\":\"%s\"", B->job_kind == 'b' ? "bound" : "unbound");
	else
		printf(",\"unbound_mpps\":%.3f,\"bind_ns\":%.1f", med(F->ub_m, B->reps),
		       med(F->bind_ns, B->reps));
	if (!B->only_agg)   /* the threaded run's wall figure */
		printf(",\"wall_gbps\":%.2f", med(F->thr_w, B->reps));
	printf("}\n");
	if (!B->only_agg)
		printf("{\"bench\":\"switch\",\"path\":\"forward\",\"workers\":1,\"conns\":%u,\"payload\":%u,"
		       "\"gbps\":%.2f,\"mpps\":%.3f,\"ns_per_pkt\":%.1f}\n",
		       B->n, B->payload, med(F->fwd_g, B->reps), fm, 1e3 / fm);
	printf("{\"bench\":\"cold_touch\",\"dtype\":\"%s\",\"conns\":%u,\"payload\":%u,"
	       "\"gbps\":%.2f,\"mpps\":%.3f,\"ns_per_pkt\":%.1f,\"box_ratio\":%.3f}\n",
	       nr_elem_name(B->dtype), B->n, B->payload, ct, ctm, 1e3 / ctm, med(F->ratio, B->reps));
	if (ck > 0)
		printf("{\"bench\":\"icrc_check\",\"conns\":%u,\"payload\":%u,\"gbps\":%.2f,"
		       "\"mpps\":%.3f,\"ns_per_pkt\":%.1f,\"touch_ratio\":%.3f}\n", B->n, B->payload, ck,
		       ckm, 1e3 / ckm, ck / ct);
	printf("{\"bench\":\"kernels\",\"dtype\":\"%s\",\"conns\":%u,\"payload\":%u,"
	       "\"gbps\":%.2f,\"mpps\":%.3f,\"ns_per_pkt\":%.1f,\"touch_ratio\":%.3f}\n",
	       nr_elem_name(B->dtype), B->n, B->payload, kn, knm, 1e3 / knm, kn / ct);
	printf("{\"bench\":\"memcpy\",\"gbps\":%.2f}\n", med(F->mc, B->reps));
	for (unsigned r = 0; r < B->n_runs; r++) {
		double g = med(F->wk_g[r], B->reps);

		printf("{\"bench\":\"switch\",\"path\":\"aggregate\",\"job\":\"channels\",\"dtype\":\"%s\","
		       "\"workers\":%u,\"channels\":%u,\"conns\":%u,\"payload\":%u,\"gbps\":%.2f,"
		       "\"mpps\":%.3f,\"ns_per_pkt_worker\":%.1f,\"wall_gbps\":%.2f,\"scaling\":%.2f}\n",
		       nr_elem_name(B->dtype), B->workers[r], B->workers[r], B->n, B->payload, g,
		       med(F->wk_m[r], B->reps),
		       med(F->wk_ns[r], B->reps), med(F->wk_wall[r], B->reps), scaling(B, F, r));
	}
}

static void report_text(struct bench *B, struct figures *F)
{
	double ag = med(F->agg_g, B->reps), am = med(F->agg_m, B->reps), fg = med(F->fwd_g, B->reps);
	double fm = med(F->fwd_m, B->reps), ct = med(F->ct_g, B->reps), m = med(F->mc, B->reps);
	double ctm = ct * 1e9 / 8 / B->payload / 1e6, bs = med(F->boxshare, B->reps);
	double kn = med(F->kn_g, B->reps), knm = kn * 1e9 / 8 / B->payload / 1e6;
	double ck = med(F->ck_g, B->reps), ckm = ck * 1e9 / 8 / B->payload / 1e6;

	printf("nr-bench-switch: %u connections, %u-byte payload of %s, %u packets a message, W=%u "
	       "messages, kernel %s%s, ring ports, %u x %.1f s, medians\n", B->n, B->payload,
	       nr_elem_name(B->dtype), PKTS_PER_MSG, B->w, B->kernel,
	       B->no_icrc_check ? ", no ICRC check on input" : "", B->reps, B->seconds);
	printf("%-12s %10s %10s %10s\n", "path", "Gbit/s", "Mpps", "ns/pkt");
	printf("%-12s %10.2f %10.3f %10.1f\n", "aggregate", ag, am, 1e3 / am);
	if (!B->job_kind) /* --job: one kind alone, no unbound run beside it */
		printf("%-12s %10.2f %10.3f %10.1f\n", "  unbound",
		       med(F->ub_m, B->reps) * 8 * B->payload / 1e3, med(F->ub_m, B->reps),
		       1e3 / med(F->ub_m, B->reps));
	if (!B->only_agg)
		printf("%-12s %10.2f %10.3f %10.1f\n", "forward", fg, fm, 1e3 / fm);
	printf("%-12s %10.2f %10.3f %10.1f\n", "cold touch", ct, ctm, 1e3 / ctm);
	if (ck > 0)
		printf("%-12s %10.2f %10.3f %10.1f\n", "ICRC check", ck, ckm, 1e3 / ckm);
	printf("%-12s %10.2f %10.3f %10.1f\n", "kernels", kn, knm, 1e3 / knm);
	printf("%-12s %10.2f\n", "memcpy warm", m);
	printf("aggregate / cold touch = %.2f (goal >= 0.6), median of the runs' ratios; "
	       "aggregate / warm memcpy = %.2f\n", med(F->ratio, B->reps), ag / m);
	printf("kernels / cold touch = %.2f", kn / ct);
	if (ck > 0)
		printf(" (the ICRC checks alone %.2f)", ck / ct);
	printf(": the most this box reaches with its kernels;\n");
	if (B->job_kind)
		printf("the job %s alone (--job): no binding cost measured\n",
		       B->job_kind == 'b' ? "bound" : "unbound");
	else
		printf("binding (source port, MAC, box port and P_Key checked, docs/trust.md) costs %+.1f ns "
		       "a packet: median of each run's aggregate minus the unbound job's right after it\n",
		       med(F->bind_ns, B->reps));
	printf(
	       "aggregate - kernels = %.1f ns a packet: the box's parse, lookup, slots, monitor, rx/tx\n",
	       1e3 / am - 1e3 / knm);
	printf("Gbit/s: gradient payload bytes into the box per second of CPU time of the core running\n"
	       "its stages (rx-side parse, ICRC check, aggregate, rewrite, ICRC, tx; frames generated\n"
	       "outside the timing).  cold touch: the same frames in the same run, every cache line read\n"
	       "once as the box finds them (flushed from every cache, for both) and one output frame\n"
	       "written per %u inputs: the physical limit.  ICRC check: the box's ICRC checks alone on\n"
	       "the same frames, as cold.  kernels: the box's own kernels alone, as cold (%sthe\n"
	       "ordered sum written into the frames, result ICRCs).  memcpy warm: the same volume over\n"
	       "a working set of the same size.\n", B->n, B->no_icrc_check ? "" : "ICRC check, ");
	if (B->only_agg)
		return;
	printf("threaded (generator lcore 0, box loop lcore 1, ring ports): %.2f Gbit/s wall, "
	       "%.2f Gbit/s per busy box time;\nCPU share of wall time: generator %.0f%%, box %.0f%%%s\n",
	       med(F->thr_w, B->reps), med(F->thr_b, B->reps), med(F->genshare, B->reps) * 100, bs * 100,
	       bs < 0.9 ? " (a shared machine: the wall figure says little)" : "");
	if (B->n_runs == 0)
		return;
	printf("\none job of K channels on K workers, each worker on its own lcore fed its channel:\n");
	printf("%-8s %12s %10s %16s %12s %8s\n", "workers", "Gbit/s", "Mpps", "ns/pkt/worker",
	       "wall Gbit/s", "scaling");
	for (unsigned r = 0; r < B->n_runs; r++) {
		printf("%-8u %12.2f %10.3f %16.1f %12.2f %8.2f\n", B->workers[r], med(F->wk_g[r], B->reps),
		       med(F->wk_m[r], B->reps), med(F->wk_ns[r], B->reps), med(F->wk_wall[r], B->reps),
		       scaling(B, F, r));
	}
	printf("Gbit/s, Mpps: summed over the workers, each by its thread's CPU time in the box's stages\n"
	       "(what the box does with a core each); wall: the same by wall time (on a shared machine\n"
	       "the workers' threads also wait for CPUs); scaling: against 1 worker, the median of the\n"
	       "repetitions' ratios (each repetition runs every worker count in turn).\n");
}

/* Payloads and element types side by side: the aggregate path against its cold touch. */
static void report_payloads(struct bench *B, struct figures *F, const unsigned *pay, unsigned np,
			    const uint8_t *dt, unsigned nd)
{
	printf("\npayloads and element types side by side (%u connections, one core, medians of %u "
	       "runs):\n", B->n, B->reps);
	printf("%-8s %-5s %10s %10s %10s %14s %12s %10s %10s\n", "payload", "dtype", "Gbit/s", "Mpps",
	       "ns/pkt", "cold touch G", "touch Mpps", "agg/touch", "Gelem/s");
	for (unsigned k = 0; k < np * nd; k++) {
		unsigned p = pay[k / nd];
		double ag = med(F[k].agg_g, B->reps), am = med(F[k].agg_m, B->reps);
		double ct = med(F[k].ct_g, B->reps);

		printf("%-8u %-5s %10.2f %10.3f %10.1f %14.2f %12.3f %10.2f %10.2f\n", p,
		       nr_elem_name(dt[k % nd]), ag, am, 1e3 / am, ct, ct * 1e9 / 8 / p / 1e6,
		       med(F[k].ratio, B->reps), ag / 8 / nr_elem_size(dt[k % nd]));
	}
	printf("(Gbit/s of gradient payload into the box per CPU-second; a larger MTU carries the same\n"
	       "bytes in fewer packets, so the per-packet costs (parse, lookup, rx/tx) weigh less;\n"
	       "Gelem/s: elements summed a second, a 16-bit packet carries twice FP32's)\n");
}

/* "fp32,bf16" into dt[], *nd of them; 0 or -1. */
static int parse_dtypes(const char *s, uint8_t *dt, unsigned *nd)
{
	*nd = 0;
	while (*s) {
		unsigned t;
		size_t len = strcspn(s, ",");

		for (t = 0; t < NR_ELEM_TYPES; t++)
			if (strlen(nr_elem_name(t)) == len && !strncmp(s, nr_elem_name(t), len))
				break;
		if (t == NR_ELEM_TYPES || *nd == NR_ELEM_TYPES)
			return -1;
		dt[(*nd)++] = (uint8_t)t;
		s += len + (s[len] == ',');
	}
	return *nd ? 0 : -1;
}

/* ---- main ---------------------------------------------------------------- */

static void usage(const char *p)
{
	printf("Usage: %s [EAL options] -- [--conns N] [--payload LIST] [--dtype LIST] [--window W]\n"
	       "          [--workers LIST] [--no-icrc-check] [--only-aggregate] [--job bound|unbound]\n"
	       "          [--reps R] [--seconds S]\n"
	       "          [--quick] [--json] [--scrape-ms N [--scrape-jobs K]]\n"
	       "  defaults: N=8, payloads 1024,4096 (each a RoCE path MTU: 256..4096, a power of two;\n"
	       "  every run for each in turn, then side by side), element types fp32,bf16 (fp16 too:\n"
	       "  each payload's runs for a job of each), W=32 messages of 16 packets in\n"
	       "  flight, 5 repetitions of 2 s\n"
	       "  (--quick: 3 of 0.5 s); --workers 1,2 (as many as the EAL has lcores, at most %d; 0: no\n"
	       "  workers runs); EAL default -l 0,1 --no-huge -m 1024 --no-pci when no EAL options are given\n"
	       "  --job bound|unbound: the aggregate path's job bound alone or unbound alone (default: each\n"
	       "  in turn, the binding's cost their difference); with tools/instr-count, the binding's\n"
	       "  instructions\n"
	       "  --only-aggregate: the aggregate path on one core alone, with its cold touch (no forward,\n"
	       "  threaded or --workers runs): what a profiler should see (perf, valgrind --tool=callgrind)\n"
	       "  --scrape-ms N: only the aggregate path on the next lcore, its metrics (--metrics-listen)\n"
	       "  scraped every N ms from the control cores, against the same unscraped, in turn (first\n"
	       "  payload); --scrape-jobs K: K idle jobs beside it (63: the most one worker holds)\n",
	       p, MAXW);
}

/* "1024,4096" into pay[], *np of them; 0 or -1. */
static int parse_payloads(const char *s, unsigned *pay, unsigned *np)
{
	char *end;

	*np = 0;
	for (;;) {
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || v < 256 || v > 4096 || (v & (v - 1)) || *np == MAXPAY)
			return -1;
		pay[(*np)++] = (unsigned)v;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

/* "1,2,4" into B->workers; 0 or -1. */
static int parse_workers(struct bench *B, const char *s)
{
	char *end;

	B->n_runs = 0;
	if (strcmp(s, "0") == 0)
		return 0;
	for (;;) {
		unsigned long v = strtoul(s, &end, 10);

		if (end == s || v < 1 || v > MAXW || B->n_runs == MAXW)
			return -1;
		B->workers[B->n_runs++] = (unsigned)v;
		if (*end == '\0')
			return 0;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

static int eal_init(int *argc, char ***argv)
{
	static char prefix[64];
	static char *def[] = { NULL, "-l", "0,1", "--no-huge", "-m", "1024", "--no-pci",
			       "--file-prefix", prefix, "--log-level", "lib.eal:error", NULL };
	int rc;

	snprintf(prefix, sizeof(prefix), "nrb-bench-%d", (int)getpid());
	def[0] = (*argv)[0];
	if (*argc > 1 && strcmp((*argv)[1], "--") != 0 && (*argv)[1][0] == '-' && (*argv)[1][1] == '-' &&
	    strcmp((*argv)[1], "--vdev") != 0 && strcmp((*argv)[1], "--no-huge") != 0 &&
	    strcmp((*argv)[1], "--lcores") != 0)
		/* our options only: default EAL arguments */
		return rte_eal_init((int)(sizeof(def) / sizeof(def[0])) - 1, def) < 0 ? -1 : 0;
	rc = rte_eal_init(*argc > 1 ? *argc : (int)(sizeof(def) / sizeof(def[0])) - 1,
			  *argc > 1 ? *argv : def);
	if (rc < 0)
		return -1;
	*argc -= rc;
	*argv += rc;
	return 0;
}

int main(int argc, char **argv)
{
	struct bench *B = calloc(1, sizeof(*B));
	struct figures *F = calloc(MAXPAY * NR_ELEM_TYPES, sizeof(*F));
	unsigned pay[MAXPAY] = { 1024, 4096 }, np = 2, max_pay = 0, nd = 2;
	uint8_t dt[NR_ELEM_TYPES] = { NR_ELEM_FP32, NR_ELEM_BF16 };
	const char *payloads = NULL, *dtypes = NULL;
	/* clang-format off */
	static const struct option lo[] = {
		{ "conns", 1, NULL, 'n' }, { "payload", 1, NULL, 'b' }, { "reps", 1, NULL, 'r' },
		{ "seconds", 1, NULL, 's' }, { "quick", 0, NULL, 'q' }, { "json", 0, NULL, 'j' },
		{ "window", 1, NULL, 'w' }, { "no-icrc-check", 0, NULL, 'i' },
		{ "workers", 1, NULL, 'W' }, { "only-aggregate", 0, NULL, 'A' },
		{ "job", 1, NULL, 'J' },
		{ "dtype", 1, NULL, 'd' }, { "scrape-ms", 1, NULL, 'S' },
		{ "scrape-jobs", 1, NULL, 'K' },
		{ "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	/* clang-format on */
	const char *workers = NULL;
	unsigned max_workers = 2, scrape_ms = 0, scrape_jobs = 0;
	int c;

	B->n = 8;
	B->w = 32;
	B->reps = 5;
	B->seconds = 2.0;
	if (eal_init(&argc, &argv) != 0)
		return 1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'n': B->n = (unsigned)atoi(optarg); break;
		case 'b': payloads = optarg; break;
		case 'd': dtypes = optarg; break;
		case 'r': B->reps = (unsigned)atoi(optarg); break;
		case 'w': B->w = (unsigned)atoi(optarg); break;
		case 'i': B->no_icrc_check = true; break;
		case 's': B->seconds = atof(optarg); break;
		case 'q': B->quick = true; break;
		case 'j': B->json = true; break;
		case 'W': workers = optarg; break;
		case 'A': B->only_agg = true; break;
		case 'J':
			if (strcmp(optarg, "bound") && strcmp(optarg, "unbound")) {
				fprintf(stderr, "--job %s: bound or unbound\n", optarg);
				return 2;
			}
			B->job_kind = optarg[0];
			break;
		case 'S': scrape_ms = (unsigned)atoi(optarg); if (scrape_ms < 1) scrape_ms = 1; break;
		case 'K': scrape_jobs = (unsigned)atoi(optarg); break;
		default: usage(argv[0]); return c == 'h' ? 0 : 2;
		}
	}
	if (B->quick) {
		B->reps = 3;
		B->seconds = 0.5;
	}
	if (B == NULL || F == NULL)
		return 1;
	if (dtypes && parse_dtypes(dtypes, dt, &nd) != 0) {
		fprintf(stderr, "bad --dtype '%s': a list of fp32, bf16, fp16\n", dtypes);
		return 2;
	}
	if (B->n < 2 || B->n > MAXN || (payloads && parse_payloads(payloads, pay, &np) != 0) ||
	    B->reps < 1 || B->reps > MAXREPS || B->w < 1 || B->w > 64) {
		fprintf(stderr, "bad options: --conns 2..%d, --payload 256..4096 or a list of up to %d "
			"(each a power of two: it is the MTU), --reps 1..%d, --window 1..64\n",
			MAXN, MAXPAY, MAXREPS);
		return 2;
	}
	for (unsigned k = 0; k < np; k++)
		max_pay = pay[k] > max_pay ? pay[k] : max_pay;
	if (rte_lcore_count() < 2) {
		fprintf(stderr, "need 2 lcores (EAL -l 0,1): generator and box\n");
		return 2;
	}
	if (workers == NULL) {   /* 1, 2, 4 ... as far as the lcores go */
		B->n_runs = 0;
		for (unsigned k = 1; k <= rte_lcore_count() && k <= MAXW; k *= 2)
			B->workers[B->n_runs++] = k;
	} else if (parse_workers(B, workers) != 0) {
		fprintf(stderr, "bad --workers '%s': a list of 1..%d, or 0\n", workers, MAXW);
		return 2;
	}
	for (unsigned r = 0; r < B->n_runs; r++) {
		if (B->workers[r] > rte_lcore_count()) {
			fprintf(stderr, "--workers %u needs %u lcores, the EAL has %u (-l / --lcores)\n",
				B->workers[r], B->workers[r], rte_lcore_count());
			return 2;
		}
		if (B->workers[r] > max_workers)
			max_workers = B->workers[r];
	}
	if (setup(B, max_workers, max_pay) != 0)
		return 1;
	if (B->only_agg)
		B->n_runs = 0;
	if (scrape_jobs >= NR_MAX_JOBS) {
		fprintf(stderr,
			"--scrape-jobs %u: at most %d (one worker's jobs, the fed one beside them)\n",
			scrape_jobs, NR_MAX_JOBS - 1);
		return 2;
	}
	if (scrape_ms) {
		B->dtype = dt[0];
		use_payload(B, pay[0]);
		return run_scrape(B, scrape_ms, scrape_jobs) == 0 ? 0 : 1;
	}
	for (unsigned k = 0; k < np * nd; k++) {
		B->dtype = dt[k % nd];
		use_payload(B, pay[k / nd]);
		if (run_stages(B, &F[k]) != 0 || (!B->only_agg && run_generator(B, &F[k]) != 0))
			return 1;
		for (unsigned i = 0; i < B->reps; i++)
			for (unsigned r = 0; r < B->n_runs; r++)
				if (run_workers(B, B->workers[r], r, i, &F[k]) != 0)
					return 1;
		if (B->json) {
			report_json(B, &F[k]);
		} else {
			if (k > 0)
				printf("\n");
			report_text(B, &F[k]);
		}
		fflush(stdout);
	}
	if (!B->json && np * nd > 1)
		report_payloads(B, F, pay, np, dt, nd);
	for (unsigned i = 0; i < B->n; i++)
		rte_eth_dev_close(B->port[i]);
	rte_mempool_free(B->pool);
	rte_free(B->touch_out);
	rte_free(B->kern);
	rte_free(B->ch);
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
	free(F);
	free(B);
	return 0;
}
