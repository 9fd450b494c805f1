/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_burst: the box's burst loop (dp_burst and dp_burst_handoff of
 * dp_loop.c, with dp_emit.c, dp_cmd.c, dp_jobs.c and the engine behind them)
 * on ring-backed ports, with the box's accounting checked after every burst.
 *
 * The EAL starts once per process (--no-huge --no-shconf --no-pci, one lcore,
 * a file prefix of its own); its four ring ports and one mbuf pool (no
 * per-lcore cache: the pool's count is exact) live as long as the process.
 * Each input builds a box on those ports and destroys it at the end.  Its
 * workers are never launched: the target is their loop, on the main lcore,
 * one step at a time, so every run of an input is the same run.  With the
 * workers not started the box's job calls (dp_job_add, dp_job_del,
 * dp_job_stats) run their command inline on the caller's thread
 * (dp_cmd_call), so jobs come and go through the box's own API.  The clock
 * is the script's.
 *
 * Input: a header, then operations.
 *   h0      box shape ((h0 & 15) % 6: switch mode on 2, 3 or 4 ports with one
 *           worker, on 3 ports with two workers, one-armed on one port, switch
 *           mode on one port),
 *           bit 4 the ICRC check off (--no-icrc-check), bit 5 a burst (TX
 *           flush threshold) of 4 instead of 32
 *   h1      jobs: 1 + (h1 & 1); bit 1: the jobs in priority classes
 *           (prio_classes 2, short_dscp 10: channel 0's data marked class 0,
 *           DSCP 10, channel 1's class 1, DSCP 18; the ready slots of a
 *           burst leave the highest class first, dp_loop.c act_burst);
 *           bit 2: the jobs selective (selective-repeat requesters: the
 *           monitor's gap NAKs are selective NAKs, and the receivers' NAKs
 *           of variant 1 are selective NAKs, which the box answers itself
 *           or forwards)
 *   3 bytes per job: b0 ranks 1..4 | MTU 256/512 bit 2 | pool 2/4 messages
 *           bit 3 | streaming bit 4 | two channels bit 5 | MACs, UDP source
 *           ports and P_Key registered bit 6 | result key bit 7; b1 packets
 *           per message 1..3 | last packet's length | hosts address the box's
 *           MAC (they route through it) bit 6 | reduce max bit 7 (bor with
 *           b2's bit 0); b2 initial PSNs (near the 24-bit wrap with bit 7)
 *   op & 7 == 5   clock step (100 us or 10 ms units), every engine polled
 *   op & 7 == 6   job control: delete / re-add, add the same id again, add
 *                 another id over the same connections, status
 *   otherwise     a burst: one byte (port, 1..32 frames), then 4 bytes per
 *                 frame: kind | flags, job/channel/connection, variant,
 *                 payload pattern (see frame())
 * Frame kinds: RDMA WRITE first/middle/last/only of a registered connection
 * in order, retransmitted, ahead or at a wild PSN, with a wrong length,
 * opcode or ImmDt, ECN-CE or Not-ECT, in a VLAN; ACKs and NAKs from the
 * receivers; spoofed source IP, MAC, UDP source port or P_Key; bytes
 * flipped; a wrong ICRC; multi-segment chains (some too long to linearize);
 * truncated or garbled headers; non-RoCE frames (ARP, IPv4 UDP and TCP,
 * group and unknown destinations); runts; raw bytes.  Any frame may come
 * twice in its burst.
 *
 * Invariants, after every burst, clock step and job operation, once the
 * hand-off rings and the TX buffers are drained and the TX rings emptied (a
 * violation traps):
 *   - every received frame is in exactly one bucket: rx + handoff_in =
 *     forwarded + flooded + filtered + handoff_out + held + resent + dropped,
 *     and handoff_in = handoff_out.  Why: it is the operator's account of
 *     what the box did with the traffic (stats, telemetry, the soak and
 *     hostile suites read it); a frame in no bucket was lost silently, one in
 *     two hides another.
 *   - dropped = runt + bad_icrc + multiseg + no_record + handoff_full +
 *     no_route + l2_pinned + vlan_refused + engine_drop + malformed; malformed = the sum of its reasons,
 *     none without one; engine_drop = the sum of its engine counters.  Why:
 *     a drop nobody can attribute is a drop nobody can fix.
 *   - rx grows by exactly the frames of the burst (the loop counts rx in
 *     dp_burst, called here as the loop calls it).
 *   - every frame the box sends is counted once: tx + tx_dropped +
 *     result_no_route = forwarded + flooded + flood_copies + results + resent
 *     + generated, and tx = the frames found on the ports' TX rings.  Why:
 *     results are counted as they are made; one that never leaves must say
 *     so, or a receiver waits for it while the counters say it was sent.
 *   - mbufs: the pool lacks exactly the frames the engines hold (held -
 *     results - freed_held), and that many parse records are taken; after
 *     the jobs are deleted nothing, after the box is destroyed the pool is
 *     full.  Why: one mbuf lost a burst empties the pool and stops rx; a
 *     record lost a burst does the same to the worker (no_record).
 *   - no frame leaves the box that its receiver must call corrupt: none
 *     parses as a malformed UDP/4791 frame, and with the ICRC check on every
 *     RoCEv2 frame out has a right ICRC.  Why: the receiver's RNIC drops it
 *     (a result lost, the sender's timer to wait for), and a corrupted frame
 *     passed on hides where it was corrupted.
 *   - a chain that leaves unlinearized is not RoCEv2.  Why: such a chain is
 *     switched unchecked; a registered WRITE among them reaches its receiver
 *     raw, one host's gradient written where the sum belongs.
 *   - the job API: a valid spec is added, the same id or a connection of a
 *     registered job is refused with a reason and changes nothing, status of
 *     an added job answers with its channels, delete succeeds and status then
 *     says -ENOENT.
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "dataplane/dpdk/dp_box.h"
#include "proto/roce_build.h"
#include "proto/roce_pkt.h"

#include "nrz_fuzz.h"

#define NRZ_PORTS     4
#define NRZ_HOSTS     6
#define NRZ_POOL      2047      /* a burst and every job's pool, many times over */
#define NRZ_JOBS      2
#define NRZ_CHANS     2
#define NRZ_MAXN      4
#define NRZ_BURST     32
#define NRZ_MAX_OPS   400
#define NRZ_SEGS      16        /* segments of a chain, at most, trailers aside */
#define NRZ_TRAILER   2300      /* bytes of one trailer segment: two exceed an mbuf */
#define NRZ_OUT_MAX   (NR_MAX_MTU + 3 * NRZ_TRAILER)

/* ---- the process: EAL, ring ports, pool -------------------------------------- */

static struct {
	bool up;
	struct rte_mempool *pool;
	uint16_t port[NRZ_PORTS];
	struct rte_ring *rx[NRZ_PORTS];   /* host -> box */
	struct rte_ring *tx[NRZ_PORTS];   /* box -> host (every worker's TX queue) */
} g;

/*
 * Once per process.  Where the EAL cannot start (no memory, no runtime
 * directory), the target cannot run at all: exit 77, which meson reads as a
 * skip.
 */
static void eal_up(void)
{
	static char prefix[64], lcores[32];
	char *argv[] = {
		"nrz-burst", "--lcores", lcores, "--no-huge", "-m", "512", "--no-pci",
		"--no-shconf", "--no-telemetry", "--file-prefix", prefix,
		"--log-level", getenv("NRZ_VERBOSE") ? "notice" : "critical", NULL,
	};
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;
	cpu_set_t set;
	int cpu = 0;

	if (g.up)
		return;
	/* the main lcore on the first CPU this process may use */
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		while (cpu < CPU_SETSIZE - 1 && !CPU_ISSET(cpu, &set))
			cpu++;
	snprintf(lcores, sizeof(lcores), "0@%d", cpu);
	snprintf(prefix, sizeof(prefix), "nrz-burst-%d", (int)getpid());
	if (rte_eal_init(argc, argv) < 0) {
		rmdir(rte_eal_get_runtime_dir());   /* made before it failed */
		fprintf(stderr, "fuzz_burst: the EAL cannot start (%s): it needs 512 MB of "
			"--no-huge memory and a runtime directory (/var/run/dpdk or "
			"$XDG_RUNTIME_DIR/dpdk); skipped\n", rte_strerror(rte_errno));
		exit(77);
	}
	/* With --no-shconf and --no-telemetry its runtime directory stays empty
	 * and nothing opens it after init (no multi-process channel): gone at
	 * once, an input that traps leaves nothing behind either. */
	rmdir(rte_eal_get_runtime_dir());
	g.pool = rte_pktmbuf_pool_create("nrz_burst_pool", NRZ_POOL, 0, 0, DP_MBUF_DATAROOM,
					 rte_socket_id());
	NRZ_CHECK(g.pool != NULL, "mbuf pool: %s", rte_strerror(rte_errno));
	for (unsigned i = 0; i < NRZ_PORTS; i++) {
		char name[32];
		struct rte_ring *txq[2];
		int id;

		snprintf(name, sizeof(name), "nrz_rx%u", i);
		g.rx[i] = rte_ring_create(name, 64, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "nrz_tx%u", i);
		g.tx[i] = rte_ring_create(name, 4096, SOCKET_ID_ANY, RING_F_SC_DEQ);
		NRZ_CHECK(g.rx[i] && g.tx[i], "rings: %s", rte_strerror(rte_errno));
		/* two TX queues (a box of two workers has one each), one ring */
		txq[0] = txq[1] = g.tx[i];
		snprintf(name, sizeof(name), "nrz_port%u", i);
		id = rte_eth_from_rings(name, &g.rx[i], 1, txq, 2, SOCKET_ID_ANY);
		NRZ_CHECK(id >= 0, "ring port %u: %s", i, rte_strerror(rte_errno));
		g.port[i] = (uint16_t)id;
	}
	g.up = true;
}

/* ---- one input's world --------------------------------------------------------- */

struct shape {
	enum dp_mode mode;
	unsigned ports, workers;
};

static const struct shape shapes[] = {
	{ DP_MODE_SWITCH, 2, 1 },
	{ DP_MODE_SWITCH, 3, 1 },
	{ DP_MODE_SWITCH, 4, 1 },
	{ DP_MODE_SWITCH, 3, 2 },     /* frames of the other worker's jobs handed over */
	{ DP_MODE_ONE_ARMED, 1, 1 },
	{ DP_MODE_SWITCH, 1, 1 },     /* nowhere to flood to */
};
#define NRZ_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

struct bjob {
	unsigned k;                /* index: its hosts and QPNs */
	uint32_t id;
	bool added;
	struct nr_job_spec *spec;  /* every channel's connections */
	uint32_t n, nch, ppm, last_len;
	bool strict;               /* MACs, UDP source ports and P_Key registered */
	bool via_box;              /* hosts send to the box's MAC */
	uint8_t dscp[NRZ_CHANS];   /* each channel's data DSCP (its class; 0: none) */
	uint32_t cursor[NRZ_CHANS][NRZ_MAXN];   /* next g each connection sends */
};

struct world {
	const struct shape *sh;
	struct dp_box *box;
	uint8_t box_mac[6];
	uint64_t now;
	struct bjob jobs[NRZ_JOBS];
	unsigned njobs;
	uint64_t rx_in;            /* frames handed to dp_burst */
	uint64_t tx_out;           /* frames taken from the TX rings */
};

static void host_mac(unsigned h, uint8_t mac[6])
{
	const uint8_t m[6] = { 0x02, 0x4e, 0x5a, 0x00, 0x00, (uint8_t)(h + 1) };

	memcpy(mac, m, 6);
}

static uint32_t host_ip(unsigned h)
{
	return htonl(0x0A5A0000u | (h + 1));   /* 10.90.0.h+1 */
}

/* Rank i of job k: a host (the jobs share some). */
static unsigned rank_host(unsigned k, unsigned i)
{
	return (2 * k + i) % NRZ_HOSTS;
}

static struct nr_conn_spec *conn_of(struct bjob *j, unsigned c, unsigned i)
{
	return &j->spec->conns[c * j->n + i];
}

static void job_shape(struct bjob *j, unsigned k, uint8_t b0, uint8_t b1, uint8_t b2, bool prio,
		      bool sel)
{
	uint32_t n = 1 + (b0 & 3), nch = 1 + ((b0 >> 5) & 1);
	uint32_t mtu = 256u << ((b0 >> 2) & 1);
	struct nr_job_spec *s = calloc(1, nr_job_spec_size(n * nch));

	NRZ_CHECK(s != NULL, "calloc");
	j->k = k;
	j->id = 7 + 1000 * k;
	j->n = n;
	j->nch = nch;
	j->ppm = 1 + (b1 & 3) % 3;
	j->last_len = 4 * (1 + ((b1 >> 2) & 15) % (mtu / 4));
	j->strict = (b0 >> 6) & 1;
	j->via_box = (b1 >> 6) & 1;
	s->n_conns = n;
	s->n_channels = nch;
	s->mtu = mtu;
	s->msg_size = mtu * (j->ppm - 1) + j->last_len;
	s->pool_msgs = 2 + 2 * ((b0 >> 3) & 1);
	s->timeout_ms = 50;
	s->mode = (b0 >> 4) & 1 ? NR_SUM_STREAMING : NR_SUM_ORDERED;
	s->reduce = !((b1 >> 7) & 1) ? NR_REDUCE_SUM : (b2 & 1) ? NR_REDUCE_BOR : NR_REDUCE_MAX;
	s->result_key = (b0 >> 7) & 1 ? 0x5A5A0000u | k : 0;
	s->pkey = j->strict ? (uint16_t)(0x8010 + k) : 0;
	if (prio) {
		s->prio_classes = 2;
		s->short_dscp = 10;
	}
	s->selective = sel;
	j->spec = s;
	for (uint32_t c = 0; c < nch; c++) {
		for (uint32_t i = 0; i < n; i++) {
			struct nr_conn_spec *cs = conn_of(j, c, i);
			unsigned src = rank_host(k, i), dst = rank_host(k, (i + 1) % n);
			uint32_t tag = k << 8 | c << 4 | i;

			j->dscp[c] = prio ? (uint8_t)(10 + 8 * c) : 0;
			cs->src_ip = host_ip(src);
			cs->dst_ip = host_ip(dst);
			cs->src_qpn = 0x3000 | tag;
			cs->dst_qpn = 0x2000 | tag;
			/* PSNs near the 24-bit wrap are the interesting ones */
			cs->ipsn = (b2 & 0x80) ? (NR_PSN_MASK - (b2 & 0x7F) * (i + 1 + c)) & NR_PSN_MASK
					      : (uint32_t)(b2 * 0x10101u * (i + 1 + 3 * c)) & NR_PSN_MASK;
			if (j->strict) {
				host_mac(src, cs->src_mac);
				host_mac(dst, cs->dst_mac);
				cs->src_sport = (uint16_t)(0xC000 | tag);
				cs->dst_sport = (uint16_t)(0xD000 | tag);
			}
		}
	}
}

/* ---- the box ----------------------------------------------------------------------- */

static struct dp_worker *port_worker(struct world *w, uint16_t port)
{
	for (unsigned k = 0; k < w->box->n_workers; k++) {
		struct dp_worker *wk = w->box->workers[k];

		for (unsigned q = 0; q < wk->n_rxq; q++)
			if (wk->rxq[q].port == port)
				return wk;
	}
	NRZ_CHECK(false, "port %u polled by no worker", port);
	return NULL;
}

static void set_clock(struct world *w)
{
	for (unsigned k = 0; k < w->box->n_workers; k++)
		w->box->workers[k]->now_ns = w->now;
}

static void job_add(struct world *w, struct bjob *j)
{
	char err[256] = "";
	uint32_t credits = 0;
	int rc;

	set_clock(w);
	rc = dp_job_add(w->box, j->id, j->spec, &credits, err, sizeof(err));
	NRZ_CHECK(rc == 0, "job %u: add of a valid spec: %d (%s)", j->id, rc, err);
	NRZ_CHECK(credits == j->spec->pool_msgs / 2, "job %u: credits %u", j->id, credits);
	j->added = true;
	memset(j->cursor, 0, sizeof(j->cursor));
}

static void job_del(struct world *w, struct bjob *j)
{
	struct nr_job_stats st;

	NRZ_CHECK(dp_job_del(w->box, j->id) == 0, "job %u: delete of an added job", j->id);
	NRZ_CHECK(dp_job_stats(w->box, j->id, &st) == -ENOENT, "job %u: status after delete",
		  j->id);
	j->added = false;
}

/* ---- checks ------------------------------------------------------------------------- */

/* A frame the box sent on port index pi. */
static void check_out(struct world *w, struct rte_mbuf *m, unsigned pi)
{
	static uint8_t buf[NRZ_OUT_MAX];
	uint32_t len = rte_pktmbuf_pkt_len(m);
	const uint8_t *d;
	struct nr_pkt p;
	int kind;

	NRZ_CHECK(pi < w->sh->ports, "a frame on port %u, which the box does not have", pi);
	NRZ_CHECK(len <= sizeof(buf), "a frame of %u bytes out", len);
	d = rte_pktmbuf_read(m, 0, len, buf);
	NRZ_CHECK(d != NULL, "an unreadable frame of %u bytes", len);
	kind = nr_parse(d, len, &p);
	NRZ_CHECK(kind != NR_PKT_MALFORMED, "a malformed UDP/4791 frame (%s) left on port %u",
		  nr_malformed_str(p.bad), pi);
	NRZ_CHECK(m->nb_segs == 1 || kind == NR_PKT_OTHER,
		  "a %u-segment RoCEv2 frame left unlinearized on port %u", m->nb_segs, pi);
	if (kind == NR_PKT_ROCE && w->box->cfg.icrc_check)
		NRZ_CHECK(nr_icrc_check(d, &p), "a RoCEv2 frame with a wrong ICRC left on port %u "
			  "(opcode 0x%02x qpn 0x%x psn %u)", pi, p.opcode, p.qpn, p.psn);
}

/*
 * After a step: hand-offs taken by their workers, TX buffers flushed, TX
 * rings emptied (every frame checked and freed), then the accounting.
 */
static void settle(struct world *w)
{
	struct dp_box *b = w->box;
	struct rte_mbuf *pkts[DP_MAX_BURST];
	unsigned moved;

	do {
		moved = 0;
		for (unsigned k = 0; k < b->n_workers; k++) {
			struct dp_worker *wk = b->workers[k];
			unsigned nh = rte_ring_sc_dequeue_burst(wk->handoff, (void **)pkts,
								b->cfg.burst, NULL);

			if (nh)
				dp_burst_handoff(wk, pkts, (uint16_t)nh);
			moved += nh;
		}
	} while (moved);
	for (unsigned k = 0; k < b->n_workers; k++) {
		dp_tx_drain(b->workers[k]);
		for (unsigned p = 0; p < DP_MAX_PORTS; p++)
			NRZ_CHECK(b->workers[k]->tx[p].n == 0, "worker %u: %u frames left in the TX "
				  "buffer of port %u after a drain", k, b->workers[k]->tx[p].n, p);
	}
	for (unsigned i = 0; i < NRZ_PORTS; i++) {
		void *objs[64];
		unsigned n;

		while ((n = rte_ring_sc_dequeue_burst(g.tx[i], objs, 64, NULL)) > 0) {
			for (unsigned k = 0; k < n; k++) {
				check_out(w, objs[k], i);
				rte_pktmbuf_free(objs[k]);
			}
			w->tx_out += n;
		}
		NRZ_CHECK(rte_ring_count(g.rx[i]) == 0, "port %u: frames left on its RX ring", i);
	}
}

static void check_accounting(struct world *w)
{
	struct dp_box *b = w->box;
	struct dp_ctr s;
	const uint64_t *c = s.c;
	uint64_t in, out, parts, sum, held, recs = 0;
	unsigned avail;

	dp_box_counters(b, &s);
	NRZ_CHECK(c[DP_CTR_RX] == w->rx_in, "rx %lu, frames received %lu", c[DP_CTR_RX], w->rx_in);
	in = c[DP_CTR_RX] + c[DP_CTR_HANDOFF_IN];
	out = c[DP_CTR_FORWARDED] + c[DP_CTR_FLOODED] + c[DP_CTR_FILTERED] +
	      c[DP_CTR_HANDOFF_OUT] + c[DP_CTR_HELD] + c[DP_CTR_RESENT] + c[DP_CTR_DROPPED];
	NRZ_CHECK(in == out, "rx %lu + handoff_in %lu != forwarded %lu + flooded %lu + filtered %lu + "
		  "handoff_out %lu + held %lu + resent %lu + dropped %lu", c[DP_CTR_RX],
		  c[DP_CTR_HANDOFF_IN], c[DP_CTR_FORWARDED], c[DP_CTR_FLOODED], c[DP_CTR_FILTERED],
		  c[DP_CTR_HANDOFF_OUT], c[DP_CTR_HELD], c[DP_CTR_RESENT], c[DP_CTR_DROPPED]);
	NRZ_CHECK(c[DP_CTR_HANDOFF_IN] == c[DP_CTR_HANDOFF_OUT], "handoff_in %lu, handoff_out %lu "
		  "with the hand-off rings empty", c[DP_CTR_HANDOFF_IN], c[DP_CTR_HANDOFF_OUT]);
	parts = c[DP_CTR_RUNT] + c[DP_CTR_BAD_ICRC] + c[DP_CTR_MULTISEG] + c[DP_CTR_NO_RECORD] +
		c[DP_CTR_HANDOFF_FULL] + c[DP_CTR_NO_ROUTE] + c[DP_CTR_L2_PINNED] +
		c[DP_CTR_VLAN_REFUSED] + c[DP_CTR_ENGINE_DROP] + c[DP_CTR_MALFORMED];
	NRZ_CHECK(c[DP_CTR_DROPPED] == parts, "dropped %lu, its reasons %lu (runt %lu bad_icrc %lu "
		  "multiseg %lu no_record %lu handoff_full %lu no_route %lu l2_pinned %lu "
		  "vlan_refused %lu engine_drop %lu malformed %lu)", c[DP_CTR_DROPPED], parts,
		  c[DP_CTR_RUNT], c[DP_CTR_BAD_ICRC], c[DP_CTR_MULTISEG], c[DP_CTR_NO_RECORD],
		  c[DP_CTR_HANDOFF_FULL], c[DP_CTR_NO_ROUTE], c[DP_CTR_L2_PINNED],
		  c[DP_CTR_VLAN_REFUSED], c[DP_CTR_ENGINE_DROP], c[DP_CTR_MALFORMED]);
	NRZ_CHECK(s.malformed[NR_BAD_NONE] == 0, "%lu malformed frames without a reason",
		  s.malformed[NR_BAD_NONE]);
	sum = 0;
	for (unsigned i = 0; i < NR_BAD_MAX; i++)
		sum += s.malformed[i];
	NRZ_CHECK(sum == c[DP_CTR_MALFORMED], "malformed %lu, by reason %lu", c[DP_CTR_MALFORMED],
		  sum);
	sum = 0;
	for (unsigned i = 0; i < NR_ECTR_MAX; i++)
		sum += s.engine_drop[i];
	NRZ_CHECK(sum == c[DP_CTR_ENGINE_DROP], "engine_drop %lu, by engine counter %lu",
		  c[DP_CTR_ENGINE_DROP], sum);

	NRZ_CHECK(c[DP_CTR_TX] == w->tx_out, "tx %lu, frames on the TX rings %lu", c[DP_CTR_TX],
		  w->tx_out);
	out = c[DP_CTR_FORWARDED] + c[DP_CTR_FLOODED] + c[DP_CTR_FLOOD_COPIES] + c[DP_CTR_RESULTS] +
	      c[DP_CTR_RESENT] + c[DP_CTR_GENERATED];
	NRZ_CHECK(c[DP_CTR_TX] + c[DP_CTR_TX_DROPPED] + c[DP_CTR_RESULT_NO_ROUTE] == out,
		  "tx %lu + tx_dropped %lu + result_no_route %lu != forwarded %lu + flooded %lu + "
		  "flood_copies %lu + results %lu + resent %lu + generated %lu", c[DP_CTR_TX],
		  c[DP_CTR_TX_DROPPED], c[DP_CTR_RESULT_NO_ROUTE], c[DP_CTR_FORWARDED],
		  c[DP_CTR_FLOODED], c[DP_CTR_FLOOD_COPIES], c[DP_CTR_RESULTS], c[DP_CTR_RESENT],
		  c[DP_CTR_GENERATED]);

	/* what the engines hold is all that is out of the pool */
	NRZ_CHECK(c[DP_CTR_HELD] >= c[DP_CTR_RESULTS] + c[DP_CTR_FREED_HELD],
		  "held %lu < results %lu + freed_held %lu", c[DP_CTR_HELD], c[DP_CTR_RESULTS],
		  c[DP_CTR_FREED_HELD]);
	held = c[DP_CTR_HELD] - c[DP_CTR_RESULTS] - c[DP_CTR_FREED_HELD];
	avail = rte_mempool_avail_count(g.pool);
	NRZ_CHECK(NRZ_POOL - avail == held, "%u mbufs out of the pool, the engines hold %lu",
		  NRZ_POOL - avail, held);
	for (unsigned k = 0; k < b->n_workers; k++)
		recs += b->workers[k]->rec_cap - b->workers[k]->rec_top;
	NRZ_CHECK(recs == held, "%lu parse records taken, the engines hold %lu frames", recs,
		  held);
}

/* ---- frames ------------------------------------------------------------------------- */

struct frame {
	uint8_t b[NR_MAX_MTU + 512];
	uint32_t len;
	uint32_t cut;              /* > 0: a chain of segments of cut bytes */
	uint32_t trailers;         /* segments of NRZ_TRAILER zero bytes after the frame */
};

/* Small integers (exact sums), raw bits, or NaN/Inf/denormals. */
static void fill_payload(uint8_t *p, uint32_t len, uint8_t pat)
{
	static const uint32_t specials[] = { 0x7FC00000, 0x7F800000, 0xFF800000, 0x80000000,
					     0x00000001, 0x7F7FFFFF };
	uint32_t s = pat * 2654435761u | 1;

	for (uint32_t k = 0; k + 4 <= len; k += 4) {
		uint32_t r = nrz_xs(&s), bits;
		float v;

		switch (pat & 3) {
		case 2:
			bits = r;
			break;
		case 3:
			bits = specials[r % 6];
			break;
		default:
			v = (float)((int)(r % 17) - 8);
			memcpy(&bits, &v, 4);
			break;
		}
		memcpy(p + k, &bits, 4);
	}
	for (uint32_t k = len & ~3u; k < len; k++)
		p[k] = (uint8_t)nrz_xs(&s);
}

/* The addressing of connection i of channel c: data (sender -> receiver) or its ACKs. */
static void flow_of(struct world *w, struct bjob *j, unsigned c, unsigned i, bool ack,
		    struct nr_flow *f)
{
	const struct nr_conn_spec *cs = conn_of(j, c, i);
	unsigned src = rank_host(j->k, i), dst = rank_host(j->k, (i + 1) % j->n);
	uint32_t tag = j->k << 8 | c << 4 | i;

	memset(f, 0, sizeof(*f));
	host_mac(ack ? dst : src, f->src_mac);
	if (j->via_box)
		memcpy(f->dst_mac, w->box_mac, 6);
	else
		host_mac(ack ? src : dst, f->dst_mac);
	f->saddr = ack ? cs->dst_ip : cs->src_ip;
	f->daddr = ack ? cs->src_ip : cs->dst_ip;
	f->sport = (uint16_t)((ack ? 0xD000 : 0xC000) | tag);
	f->frag_off = NR_IPV4_DF;
	f->tos = (uint8_t)((ack ? 0 : j->dscp[c]) << 2 | NR_ECN_ECT0);
	f->dqpn = ack ? cs->src_qpn : cs->dst_qpn;
	f->pkey = j->spec->pkey;
}

/* Frame descriptor bytes, as frame() reads them. */
struct fdesc {
	uint8_t kind, flags;       /* d0 & 15, d0 & 0xF0 */
	uint8_t who;               /* job bit 7, channel bit 6, connection */
	uint8_t var;
	uint8_t pat;
};

#define F_CE    0x10
#define F_DUP   0x20
#define F_OP    0x40
#define F_VLAN  0x80

/* Data packet g of connection (j, c, i): WRITE first/middle/last/only, as a host sends it. */
static void build_data(struct world *w, struct bjob *j, unsigned c, unsigned i, uint32_t g,
		       const struct fdesc *d, uint8_t lencls, struct frame *fr)
{
	static const uint8_t wrong_ops[] = {
		NR_OP_RC_SEND_ONLY, NR_OP_RC_READ_REQ, NR_OP_RC_SEND_ONLY_IMM, NR_OP_RC_FETCH_ADD,
		NR_OP_UC_WRITE_ONLY_IMM, NR_OP_RC_ACK, NR_OP_RC_READ_RESP_ONLY, NR_OP_RC_WRITE_FIRST,
	};
	const struct nr_conn_spec *cs = conn_of(j, c, i);
	uint32_t k = g % j->ppm, mtu = j->spec->mtu, len;
	struct nr_build_args a = {
		.psn = nr_psn_add(cs->ipsn, g),
		.va = 0x10000 + (uint64_t)k * mtu,
		.rkey = 0x77,
		.dma_len = j->spec->msg_size,
		.imm = (g / j->ppm) & 0xFFFFFF,
		.ackreq = k + 1 == j->ppm,
	};
	uint8_t pay[NR_MAX_MTU + 64];
	struct nr_flow f;
	int n;

	if (j->ppm == 1)
		a.opcode = NR_OP_RC_WRITE_ONLY_IMM;
	else if (k == 0)
		a.opcode = NR_OP_RC_WRITE_FIRST;
	else if (k + 1 == j->ppm)
		a.opcode = NR_OP_RC_WRITE_LAST_IMM;
	else
		a.opcode = NR_OP_RC_WRITE_MIDDLE;
	len = k + 1 == j->ppm ? j->last_len : mtu;
	switch (lencls & 7) {
	case 5: len = 4 * (1 + d->pat % (mtu / 4)); break;        /* another length */
	case 6: len = 1 + d->pat % mtu; break;                     /* not a multiple of 4 */
	case 7: len = d->pat & 1 ? 0 : mtu + 4 * (1 + d->pat % 16); break;
	default: break;
	}
	if (lencls & 8)
		a.imm ^= 1u << (d->pat % 24);                      /* hosts out of step */
	if (d->flags & F_OP) {
		a.opcode = wrong_ops[d->pat % sizeof(wrong_ops)];
		if (!(nr_opcode_info(a.opcode)->mask & NR_OPF_PAYLOAD))
			len = 0;
	}
	flow_of(w, j, c, i, false, &f);
	if (d->flags & F_CE)
		f.tos = (uint8_t)((f.tos & ~NR_ECN_MASK) | NR_ECN_CE);
	else if (lencls & 0x10)
		f.tos = (uint8_t)((f.tos & ~NR_ECN_MASK) | NR_ECN_NOT_ECT);
	f.vlan = d->flags & F_VLAN;
	f.vlan_tci = 100;
	fill_payload(pay, len, d->pat);
	n = nr_build_frame(fr->b, sizeof(fr->b), &f, &a, pay, len);
	NRZ_CHECK(n > 0 || len == 0 || len > mtu, "data build: %d", n);
	fr->len = n > 0 ? (uint32_t)n : 0;
}

/* An ACK or NAK from the receiver of (j, c, i) to its sender. */
static void build_ack(struct world *w, struct bjob *j, unsigned c, unsigned i,
		      const struct fdesc *d, bool nak, struct frame *fr)
{
	struct nr_build_args a = { .opcode = NR_OP_RC_ACK, .msn = d->pat };
	struct nr_job_stats st;
	uint32_t emit = j->cursor[c][i], gk;
	struct nr_flow f;
	int n;

	/* what the engine emitted so far, where the job is there to ask */
	if (j->added && dp_job_stats(w->box, j->id, &st) == 0 && c < st.n_channels)
		emit = st.ch[c].next_emit;
	switch (d->var & 3) {
	case 0: gk = nr_psn_sub(emit, 1); break;                         /* everything */
	case 1: gk = nr_psn_sub(emit, 1 + ((d->var >> 2) & 15)); break;  /* part of it */
	case 2: gk = nr_psn_add(emit, (d->var >> 2) & 15); break;        /* never sent */
	default: gk = (uint32_t)d->var << 16 | (uint32_t)d->pat << 8 | d->var; break;
	}
	if (!nak)
		a.syndrome = 0x1F & (d->var >> 3);
	else
		switch ((d->var >> 6) & 3) {
		case 0: a.syndrome = NR_AETH_NAK_PSN_SEQ_ERR; break;
		/* a selective job's receiver NAKs selectively: run d->pat (MSN) */
		case 1:
			a.syndrome = j->spec->selective ? NR_AETH_NAK_SELECTIVE
							: NR_AETH_NAK_PSN_SEQ_ERR;
			break;
		case 2: a.syndrome = NR_AETH_RNR_NAK | (d->pat & 0x1F); break;
		default: a.syndrome = (uint8_t)(NR_AETH_NAK + 1 + d->pat % 4); break;
		}
	a.psn = nr_psn_add(conn_of(j, c, i)->ipsn, gk);
	flow_of(w, j, c, i, true, &f);
	f.vlan = d->flags & F_VLAN;
	n = nr_build_frame(fr->b, sizeof(fr->b), &f, &a, NULL, 0);
	NRZ_CHECK(n > 0, "ACK build: %d", n);
	fr->len = (uint32_t)n;
}

/* Not RoCEv2: ARP, IPv4 UDP to another port, TCP, group and unknown destinations. */
static void build_other(struct world *w, const struct fdesc *d, struct frame *fr)
{
	unsigned src = d->who % NRZ_HOSTS, dst = d->pat % NRZ_HOSTS;
	uint8_t *b = fr->b;
	uint32_t len = 60 + d->pat % 64;

	memset(b, 0, len);
	host_mac(dst, b);
	host_mac(src, b + 6);
	switch (d->var % 6) {
	case 0:                             /* ARP request: broadcast */
		memset(b, 0xFF, 6);
		b[12] = 0x08, b[13] = 0x06;
		break;
	case 1:                             /* IPv4 multicast */
		b[0] = 0x01, b[1] = 0x00, b[2] = 0x5E;
		/* fall through */
	case 2:                             /* IPv4 UDP, not 4791 */
	case 3:                             /* IPv4 TCP to 4791 */
		b[12] = 0x08, b[13] = 0x00;
		b[14] = 0x45;
		b[16] = (uint8_t)((len - 14) >> 8), b[17] = (uint8_t)(len - 14);
		b[22] = 64;
		b[23] = d->var % 6 == 3 ? 6 : 17;
		memcpy(b + 26, &(uint32_t){ host_ip(src) }, 4);
		memcpy(b + 30, &(uint32_t){ host_ip(dst) }, 4);
		b[36] = d->var % 6 == 2 ? 0x00 : 0x12, b[37] = d->var % 6 == 2 ? 53 : 0xB7;
		b[38] = (uint8_t)((len - 34) >> 8), b[39] = (uint8_t)(len - 34);
		break;
	case 4:                             /* to a MAC nobody has */
		b[5] = 0xEE;
		b[12] = 0x88, b[13] = 0xB5;
		break;
	default:                            /* RoCEv1 ethertype: not ours */
		b[12] = 0x89, b[13] = 0x15;
		break;
	}
	(void)w;
	fr->len = len;
}

/*
 * One frame descriptor: 4 bytes (d0 kind | flags, d1 who, d2 variant, d3
 * pattern), and for some kinds more bytes of the input.  false when it makes
 * no frame (a job that is not there).
 */
static bool frame(struct world *w, struct nrz_in *in, struct frame *fr, uint8_t *flags)
{
	uint8_t d0 = nrz_u8(in);
	struct fdesc d = { .kind = d0 & 15, .flags = d0 & 0xF0, .who = nrz_u8(in),
			   .var = nrz_u8(in), .pat = nrz_u8(in) };
	struct bjob *j = &w->jobs[(d.who >> 7) % w->njobs];
	unsigned c = ((d.who >> 6) & 1) % j->nch, i = (d.who & 7) % j->n;
	uint32_t *cur = &j->cursor[c][i], gk;

	fr->len = fr->cut = fr->trailers = 0;
	*flags = d.flags;
	switch (d.kind) {
	case 0: case 1: case 2: case 3:      /* in order */
		gk = *cur;
		*cur = nr_psn_add(gk, 1);
		build_data(w, j, c, i, gk, &d, d.var, fr);
		break;
	case 4:                              /* a retransmission, maybe go-back-N */
		gk = nr_psn_sub(*cur, 1 + (d.var & 7));
		if (d.var & 0x80)
			*cur = nr_psn_add(gk, 1);
		build_data(w, j, c, i, gk, &d, 0, fr);
		break;
	case 5:                              /* ahead, or anywhere */
		gk = d.var == 0xFF ? nrz_u32(in) & NR_PSN_MASK : nr_psn_add(*cur, d.var & 15);
		build_data(w, j, c, i, gk, &d, 0, fr);
		break;
	case 6:
	case 7:
		build_ack(w, j, c, i, &d, d.kind == 7, fr);
		break;
	case 8: {                            /* bytes flipped */
		unsigned m = 1 + d.var % 4;

		build_data(w, j, c, i, *cur, &d, 0, fr);
		*cur = nr_psn_add(*cur, 1);
		for (unsigned k = 0; k < m && fr->len; k++) {
			uint16_t pos = nrz_u16(in);

			fr->b[pos % fr->len] ^= (uint8_t)(nrz_u8(in) | 1);
		}
		break;
	}
	case 9:                              /* a wrong ICRC: corrupted in flight */
		build_data(w, j, c, i, *cur, &d, 0, fr);
		*cur = nr_psn_add(*cur, 1);
		if (fr->len)
			fr->b[fr->len - 1 - d.var % 4] ^= (uint8_t)(d.pat | 1);
		break;
	case 10:                             /* a chain, maybe too long for one mbuf */
		build_data(w, j, c, i, *cur, &d, 0, fr);
		*cur = nr_psn_add(*cur, 1);
		fr->cut = 1 + (uint32_t)d.var * 3;
		fr->trailers = d.pat >> 6;
		break;
	case 11: {                           /* spoofed: IP, MAC, UDP source port, P_Key */
		struct bjob spoof = *j;
		struct nr_job_spec *s = malloc(nr_job_spec_size(j->n * j->nch));
		struct nr_conn_spec *cs;

		NRZ_CHECK(s != NULL, "malloc");
		memcpy(s, j->spec, nr_job_spec_size(j->n * j->nch));
		spoof.spec = s;
		cs = conn_of(&spoof, c, i);
		switch (d.var & 3) {
		case 0: cs->src_ip = host_ip(NRZ_HOSTS + (d.pat & 1)); break;
		case 1: s->pkey = (uint16_t)(s->pkey ^ 0x0101); break;
		default: break;                  /* MAC and port: below */
		}
		build_data(w, &spoof, c, i, *cur, &d, 0, fr);
		if ((d.var & 3) == 2 && fr->len)
			fr->b[11] ^= 0x40;           /* the source MAC */
		if ((d.var & 3) == 3 && fr->len) {
			struct nr_pkt p;

			/* the UDP source port, the ICRC left right (it does not cover it) */
			if (nr_parse(fr->b, fr->len, &p) == NR_PKT_ROCE)
				fr->b[p.l4_off] ^= 0x01;
		}
		free(s);
		break;
	}
	case 12:
		build_other(w, &d, fr);
		fr->cut = d.var & 0x80 ? 1 + d.pat % 40 : 0;
		fr->trailers = d.var & 0x40 ? 2 : 0;
		break;
	case 13:                             /* a runt */
		fr->len = d.var % 14;
		memset(fr->b, d.pat, fr->len);
		break;
	case 14: {                           /* headers garbled behind UDP/4791 */
		struct nr_pkt p;

		build_data(w, j, c, i, *cur, &d, 0, fr);
		if (!fr->len || nr_parse(fr->b, fr->len, &p) != NR_PKT_ROCE)
			break;
		switch (d.var & 7) {
		case 0: fr->len = p.l3_off + d.pat % (fr->len - p.l3_off); break;  /* truncated */
		case 1: fr->b[p.bth_off] = d.pat; break;                           /* opcode */
		case 2: fr->b[p.l3_off + 3] ^= (uint8_t)(d.pat | 1); break;        /* IP length */
		case 3: fr->b[p.l4_off + 5] ^= (uint8_t)(d.pat | 1); break;        /* UDP length */
		case 4: fr->b[p.bth_off + 1] ^= (uint8_t)(d.pat & 0x3F); break;    /* pad, TVer */
		case 5: fr->b[p.l3_off] = (uint8_t)(0x40 | (d.pat & 15)); break;   /* IHL */
		case 6: fr->b[p.l3_off + 6] |= 0x20; break;                        /* a fragment */
		default: fr->b[12] = 0x86, fr->b[13] = 0xDD; break;                /* IPv6 */
		}
		break;
	}
	default: {                           /* raw bytes of the input */
		uint32_t n = d.var;

		for (uint32_t k = 0; k < n; k++)
			fr->b[k] = nrz_u8(in);
		fr->len = n;
		break;
	}
	}
	return fr->len > 0 || d.kind == 13;
}

/*
 * The frame in mbufs of the pool: one, or a chain of at most NRZ_SEGS
 * segments and its trailers (a full burst of chains stays well inside the
 * pool, whatever the engines hold).
 */
static struct rte_mbuf *frame_mbuf(const struct frame *fr)
{
	struct rte_mbuf *head = NULL;
	uint32_t off = 0, cut = fr->cut;

	if (cut && cut < (fr->len + NRZ_SEGS - 1) / NRZ_SEGS)
		cut = (fr->len + NRZ_SEGS - 1) / NRZ_SEGS;
	do {
		uint32_t n = cut && fr->len - off > cut ? cut : fr->len - off;
		struct rte_mbuf *m = rte_pktmbuf_alloc(g.pool);
		char *p;

		NRZ_CHECK(m != NULL, "the pool is empty: %u mbufs free", rte_mempool_avail_count(g.pool));
		p = rte_pktmbuf_append(m, (uint16_t)n);
		NRZ_CHECK(p != NULL || n == 0, "append %u", n);
		memcpy(p, fr->b + off, n);
		off += n;
		if (head == NULL)
			head = m;
		else
			NRZ_CHECK(rte_pktmbuf_chain(head, m) == 0, "chain");
	} while (off < fr->len);
	for (uint32_t t = 0; t < fr->trailers; t++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(g.pool);
		char *p;

		NRZ_CHECK(m != NULL, "the pool is empty");
		p = rte_pktmbuf_append(m, NRZ_TRAILER);
		NRZ_CHECK(p != NULL, "append");
		memset(p, 0, NRZ_TRAILER);
		NRZ_CHECK(rte_pktmbuf_chain(head, m) == 0, "chain");
	}
	return head;
}

/* ---- operations ---------------------------------------------------------------------- */

/* A burst of 1..32 frames received on one port, through the loop's own step. */
static void op_burst(struct world *w, struct nrz_in *in)
{
	uint8_t b = nrz_u8(in);
	unsigned pi = (b & 7) % w->sh->ports, want = 1 + (b >> 3), n = 0;
	uint16_t port = g.port[pi];
	struct rte_mbuf *pkts[NRZ_BURST];
	static struct frame fr;
	uint16_t got;

	for (unsigned k = 0; k < want && n < NRZ_BURST; k++) {
		uint8_t flags;

		if (!frame(w, in, &fr, &flags))
			continue;
		pkts[n++] = frame_mbuf(&fr);
		if ((flags & F_DUP) && n < NRZ_BURST)
			pkts[n++] = frame_mbuf(&fr);      /* duplicated on the way */
	}
	if (n == 0)
		return;
	NRZ_CHECK(rte_ring_sp_enqueue_bulk(g.rx[pi], (void **)pkts, n, NULL) == n, "RX ring");
	got = rte_eth_rx_burst(port, 0, pkts, NRZ_BURST);
	NRZ_CHECK(got == n, "rx_burst %u of %u", got, n);
	w->now += 1000;
	set_clock(w);
	w->rx_in += got;
	dp_burst(port_worker(w, port), port, pkts, got);
	settle(w);
	check_accounting(w);
}

/* The clock moves; every engine's housekeeping (timeouts, the monitor's NAKs). */
static void op_time(struct world *w, struct nrz_in *in)
{
	uint8_t a = nrz_u8(in);

	w->now += (a & 0x80) ? (uint64_t)(a & 0x7F) * 10000000ull : (uint64_t)a * 100000ull;
	set_clock(w);
	for (unsigned k = 0; k < w->box->n_workers; k++)
		agg_engine_poll(w->box->workers[k]->eng, w->now);
	settle(w);
	check_accounting(w);
}

static void op_jobctl(struct world *w, struct nrz_in *in)
{
	uint8_t a = nrz_u8(in);
	struct bjob *j = &w->jobs[a % w->njobs];
	struct nr_job_stats st;
	unsigned chans = w->box->n_chans;
	char err[256];
	uint32_t cr;

	switch ((a >> 1) & 3) {
	case 0:
		if (j->added) {
			job_del(w, j);
		} else {
			if (a & 0x10)   /* back with other initial PSNs */
				for (uint32_t k = 0; k < j->n * j->nch; k++)
					j->spec->conns[k].ipsn = nr_psn_add(j->spec->conns[k].ipsn,
									    a * 977u);
			job_add(w, j);
		}
		break;
	case 1:
		if (!j->added)
			break;
		err[0] = 0;
		NRZ_CHECK(dp_job_add(w->box, j->id, j->spec, &cr, err, sizeof(err)) == -EEXIST &&
			  err[0], "job %u added twice", j->id);
		NRZ_CHECK(w->box->n_chans == chans, "a refused add left channels behind");
		break;
	case 2:
		if (!j->added)
			break;
		err[0] = 0;
		NRZ_CHECK(dp_job_add(w->box, j->id + 500, j->spec, &cr, err, sizeof(err)) == -EEXIST &&
			  err[0], "a second job over job %u's connections", j->id);
		NRZ_CHECK(w->box->n_chans == chans, "a refused add left channels behind");
		NRZ_CHECK(dp_job_stats(w->box, j->id + 500, &st) == -ENOENT, "the refused job is there");
		break;
	default:
		if (!j->added) {
			NRZ_CHECK(dp_job_stats(w->box, j->id, &st) == -ENOENT, "status of no job");
			break;
		}
		NRZ_CHECK(dp_job_stats(w->box, j->id, &st) == 0, "status of job %u", j->id);
		NRZ_CHECK(st.n_channels == j->nch, "job %u: %u channels, status says %u", j->id,
			  j->nch, st.n_channels);
		NRZ_CHECK(st.state == NR_JOB_ACTIVE || (st.state == NR_JOB_FAILED && st.reason[0]),
			  "job %u: state %u reason '%s'", j->id, st.state, st.reason);
		break;
	}
	settle(w);
	check_accounting(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nrz_in in = { .p = data, .n = size };
	static struct world w;
	struct dp_cfg cfg;
	unsigned lcores[2];
	char err[256];
	uint8_t h0, h1;
	unsigned nops = 0;

	eal_up();
	memset(&w, 0, sizeof(w));
	h0 = nrz_u8(&in);
	w.sh = &shapes[(h0 & 15) % NRZ_SHAPES];
	w.now = 1000000000ull;
	dp_cfg_defaults(&cfg);
	cfg.mode = w.sh->mode;
	cfg.icrc_check = !(h0 & 0x10);
	cfg.burst = h0 & 0x20 ? 4 : NRZ_BURST;
	cfg.pool_mbufs = NRZ_POOL;
	/* the main lcore: the workers' loops are run here, never launched */
	lcores[0] = lcores[1] = rte_lcore_id();
	w.box = dp_box_create(&cfg, g.port, w.sh->ports, lcores, w.sh->workers, g.pool, err,
			      sizeof(err));
	NRZ_CHECK(w.box != NULL, "box: %s", err);
	memcpy(w.box_mac, w.box->ports[0].mac.addr_bytes, 6);

	h1 = nrz_u8(&in);
	w.njobs = 1 + (h1 & 1);
	for (unsigned k = 0; k < w.njobs; k++) {
		uint8_t b0 = nrz_u8(&in), b1 = nrz_u8(&in), b2 = nrz_u8(&in);

		job_shape(&w.jobs[k], k, b0, b1, b2, h1 & 2, h1 & 4);
		job_add(&w, &w.jobs[k]);
	}
	check_accounting(&w);
	while (nrz_left(&in) && nops++ < NRZ_MAX_OPS) {
		uint8_t op = nrz_u8(&in);

		switch (op & 7) {
		case 5: op_time(&w, &in); break;
		case 6: op_jobctl(&w, &in); break;
		default: op_burst(&w, &in); break;
		}
	}

	if (getenv("NRZ_VERBOSE")) {
		struct dp_ctr s;

		dp_box_counters(w.box, &s);
		fprintf(stderr, "  shape %u, %u ops:", (unsigned)(w.sh - shapes), nops);
		for (unsigned k = 0; k < DP_CTR_MAX; k++)
			if (s.c[k] && k != DP_CTR_BUSY_CYCLES)
				fprintf(stderr, " %s=%lu", dp_ctr_names[k], s.c[k]);
		fputc('\n', stderr);
	}
	/* the jobs go, and everything they held with them */
	for (unsigned k = 0; k < w.njobs; k++) {
		if (w.jobs[k].added)
			job_del(&w, &w.jobs[k]);
		free(w.jobs[k].spec);
	}
	settle(&w);
	check_accounting(&w);
	NRZ_CHECK(rte_mempool_avail_count(g.pool) == NRZ_POOL, "%u mbufs not back with no job",
		  NRZ_POOL - rte_mempool_avail_count(g.pool));
	dp_box_destroy(w.box, false);
	NRZ_CHECK(rte_mempool_avail_count(g.pool) == NRZ_POOL, "%u mbufs not back after destroy",
		  NRZ_POOL - rte_mempool_avail_count(g.pool));
	return 0;
}
