/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * netreduce-switch: the DPDK box around the aggregation engine.
 *
 *   dp_box.c       ports, mempool, worker lcores, start/stop (this API)
 *   dp_loop.c      the l3fwd-style burst loop: rx, parse, classify, act, tx
 *   dp_emit.c      where frames leave: result fix-up (ECN, ICRC), L2 switching,
 *                  one-armed re-addressing, buffered TX
 *   dp_l2.c        the MAC learning table
 *   dp_cmd.c       the command rings and the box's jobs
 *   dp_backend.c   the box as the control API's backend "sw"
 *   dp_stats.c     counters, JSON stats/info, DPDK telemetry commands
 *   dp_opts.c      command-line options
 *   dp_main.c      main(): EAL, options, box, control server, signals
 *
 * Threads.  Every worker lcore runs dp_worker_main() and owns one engine (its
 * jobs), one command ring (control -> lcore, single producer: the control
 * side serialises callers with a mutex that the loop never touches) and one
 * handoff ring (other lcores -> this lcore, packets of jobs owned here).
 * Ports are polled one RX queue each, ports spread round-robin over workers;
 * every worker has its own TX queue on every port (TX queue = worker index).
 */
#ifndef NR_DP_BOX_H
#define NR_DP_BOX_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "control/nr_control.h"
#include "dataplane/engine/agg_engine.h"
#include "proto/roce_icrc.h"
#include "dataplane/dpdk/dp_ctr.h"
#include "dataplane/dpdk/dp_l2.h"
#include "proto/roce_pkt.h"

#define DP_MAX_PORTS     32
#define DP_MAX_WORKERS   32
#define DP_MAX_BURST     256
#define DP_DEFAULT_BURST 32
#define DP_TX_DRAIN_US   100
#define DP_HOUSEKEEP_ITERS 64
#define DP_CMD_TIMEOUT_MS 2000
#define DP_HANDOFF_RING  4096
#define DP_MIN_RECORDS   16384  /* parse records per lcore, at least */
#define DP_CRC_SHIFTS    8      /* MTUs per lcore with a shared-payload ICRC */
#define DP_MBUF_DATAROOM (RTE_PKTMBUF_HEADROOM + 4352) /* a 4096-MTU RoCE frame */

enum dp_mode {
	DP_MODE_SWITCH = 0,    /* one port per host, L2 learning, flooding */
	DP_MODE_ONE_ARMED = 1, /* one port, frames go back out of it */
};

struct dp_cfg {
	enum dp_mode mode;
	unsigned burst;            /* rx burst, 1..DP_MAX_BURST */
	unsigned pool_mbufs;       /* mbufs in the box's pool */
	unsigned idle_sleep_us;    /* 0: pure busy polling */
	unsigned idle_polls;       /* empty polls before sleeping */
	unsigned stats_interval;   /* seconds, 0 off (dp_main) */
	uint16_t rx_desc, tx_desc;
	unsigned mtu;              /* 0: leave the ports' MTU alone */
	enum nr_sum_kernel kernel;
	bool promisc;              /* switch mode wants every frame */
	bool icrc_check;           /* drop RoCEv2 frames with a wrong ICRC */
	/* control plane (dp_main) */
	const char *ctl_socket;
	const char *ctl_listen;
	const char *token;
	const char *token_file;
	int log_level;             /* RTE_LOG_*; 0: leave */
};

void dp_cfg_defaults(struct dp_cfg *cfg);
/* Options after "--": 0 run, 1 help wanted, -EINVAL with err naming the option. */
int dp_opts_parse(int argc, char **argv, struct dp_cfg *cfg, char *err, size_t errlen);
void dp_opts_usage(FILE *f, const char *prog);

/* A TX buffer per (worker, port). */
struct dp_txbuf {
	uint16_t n;
	struct rte_mbuf *m[DP_MAX_BURST];
};

/* Endpoints of one job this worker owns (one-armed re-addressing). */
struct dp_job_ep {
	uint32_t id;
	uint32_t n_conns;
	struct {
		uint32_t ip;          /* network order */
		uint8_t mac[6];
	} *ep;                    /* 2 * n_conns entries: src, dst of each conn */
};

struct dp_box;

struct dp_worker {
	struct dp_box *box;
	unsigned idx;              /* worker index = TX queue id */
	unsigned lcore;
	struct nr_engine *eng;
	struct rte_ring *cmd;      /* control -> lcore, SP/SC */
	struct rte_ring *handoff;  /* other lcores -> lcore, MP/SC */
	unsigned n_rxq;
	struct { uint16_t port, queue; } rxq[DP_MAX_PORTS];
	uint64_t now_ns;           /* of the current burst */
	unsigned n_jobs;
	struct dp_job_ep jobs[NR_MAX_JOBS];
	volatile int running;      /* set by the lcore itself */
	bool launched;             /* remote-launched by dp_box_launch */
	pthread_t thread;          /* of the loop (CPU-time clocks for benchmarks) */
	struct dp_ctr ctr;
	struct dp_txbuf tx[DP_MAX_PORTS];
	/*
	 * Parse records.  The engine keeps a pointer to the record of a frame
	 * it holds (NR_V_HELD), so a record is taken from this stack for each
	 * received frame (its index in mbuf->hash.usr) and goes back when the
	 * frame leaves the lcore: forwarded, dropped, handed off, emitted or
	 * freed by the engine.  LIFO: the few records of a burst stay in L1.
	 */
	struct nr_pkt *recs;       /* [rec_cap] */
	uint32_t *rec_free;        /* [rec_cap] free indices into recs */
	uint32_t rec_top, rec_cap;
	/*
	 * CRC shift tables for the MTUs of this lcore's jobs: the N results of
	 * a slot carry one payload, whose CRC is computed once and joined to
	 * each result's own headers (dp_engine_emit_slot).  Other lengths (a
	 * message's short last packet) get a whole ICRC per result.
	 */
	struct nr_crc_shift *crc_shift[DP_CRC_SHIFTS];
	unsigned n_crc_shift;
} __rte_cache_aligned;

/* The parse record of a frame this lcore received. */
static inline struct nr_pkt *dp_rec(const struct dp_worker *w, const struct rte_mbuf *m)
{
	return &w->recs[m->hash.usr];
}

/* Record r is free again. */
static inline void dp_rec_put_idx(struct dp_worker *w, uint32_t r)
{
	w->rec_free[w->rec_top++] = r;
}

/* The frame left the lcore (or the engine gave it back): its record is free. */
static inline void dp_rec_put(struct dp_worker *w, const struct rte_mbuf *m)
{
	dp_rec_put_idx(w, m->hash.usr);
}

struct dp_port {
	uint16_t id;
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[64];
	struct rte_ether_addr mac;
};

/*
 * (daddr, QPN) -> owning worker, for boxes with more than one worker: the
 * data packets of connection i (daddr = dst_ip, DestQP = dst_qpn) and the
 * ACKs its receiver returns (daddr = src_ip, DestQP = src_qpn) both map to the
 * lcore whose engine holds the job.  Open addressing of 64-bit words, one
 * writer (the control side, under its mutex), lock-free readers.
 * Entry: key (daddr 32 | qpn 24) << 8 | worker + 1; worker byte 0 = removed.
 */
#define DP_OWN_SIZE (1u << 16)
struct dp_owner_map {
	uint64_t e[DP_OWN_SIZE];
};

struct dp_box {
	struct dp_cfg cfg;
	struct rte_mempool *pool;
	bool own_pool;
	unsigned n_ports;
	struct dp_port ports[DP_MAX_PORTS];
	unsigned n_workers;
	struct dp_worker *workers[DP_MAX_WORKERS];
	struct dp_owner_map *owners;
	struct dp_l2 l2;
	int quit;                  /* atomic: lcores leave their loops */
	uint64_t tsc_hz;
	uint64_t ns_mult;          /* ns = tsc * ns_mult >> 32 */
	const char *kernel_name;
	bool started;
	/* control side only (never taken in the loop) */
	pthread_mutex_t ctl_lock;
	uint32_t job_id[NR_MAX_JOBS * DP_MAX_WORKERS];
	uint8_t job_worker[NR_MAX_JOBS * DP_MAX_WORKERS];
	struct nr_job_spec *job_spec[NR_MAX_JOBS * DP_MAX_WORKERS]; /* copies */
	unsigned n_jobs;
};

/*
 * Create the box on already probed ports (port ids) with the given worker
 * lcores (must be enabled EAL lcores other than the main one, or the main
 * lcore itself for dp_worker_main() called directly).  pool may be NULL (the
 * box makes one of cfg->pool_mbufs).  Configures and starts the ports.
 * Returns NULL with err filled on failure.
 */
struct dp_box *dp_box_create(const struct dp_cfg *cfg, const uint16_t *ports, unsigned n_ports,
			     const unsigned *lcores, unsigned n_lcores, struct rte_mempool *pool,
			     char *err, size_t errlen);
/* Launch every worker's loop on its lcore. */
int dp_box_launch(struct dp_box *b);
/* Ask the loops to stop and wait for them. */
void dp_box_stop(struct dp_box *b);
/* Stop, destroy engines (held mbufs freed), stop and close ports. */
void dp_box_destroy(struct dp_box *b, bool close_ports);

/* The loop of one worker lcore (rte_lcore_function_t). */
int dp_worker_main(void *arg);

/* ---- stages, each over (pkts, n, worker); no globals ---- */

/* Parse and act on a burst received on port (stored in mbuf->port). */
void dp_burst(struct dp_worker *w, uint16_t port, struct rte_mbuf **pkts, uint16_t n);
/* Handed-in frames keep the mbuf->port of their ingress. */
/* Same for frames handed in by another lcore (already counted in rx there). */
void dp_burst_handoff(struct dp_worker *w, struct rte_mbuf **pkts, uint16_t n);
/* Switch one frame unchanged (L2 learning/flooding or one-armed). */
void dp_l2_out(struct dp_worker *w, struct rte_mbuf *m);
/* Queue one frame on (port) of this worker; flushes at burst size. */
void dp_tx_one(struct dp_worker *w, uint16_t port, struct rte_mbuf *m);
void dp_tx_flush(struct dp_worker *w, uint16_t port);
void dp_tx_drain(struct dp_worker *w);
/* Engine callbacks: a slot's results to fix up and send, a held frame to free. */
void dp_engine_emit_slot(void *ctx, const struct nr_emit_slot *s);
void dp_engine_free(void *ctx, void *handle);
/* Shared-payload ICRCs for results of len bytes (at job add; up to DP_CRC_SHIFTS). */
void dp_crc_shift_add(struct dp_worker *w, uint32_t len);
/* Service the command ring (once per loop iteration). */
unsigned dp_cmd_service(struct dp_worker *w);

/* ---- owner map ---- */
int dp_owner_set(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn, unsigned worker);
void dp_owner_clear(struct dp_owner_map *m, uint32_t daddr, uint32_t qpn);
/* Worker index or -1 when no job claims it. */
int dp_owner_get(const struct dp_owner_map *m, uint32_t daddr, uint32_t qpn);

/* ---- jobs (dp_cmd.c), the control backend (dp_backend.c), stats (dp_stats.c) ---- */
/*
 * Add a job on the least loaded worker: 0, or -EEXIST / -ENOSPC / -ENOMEM /
 * -EINVAL / -ETIMEDOUT with err saying why; *credits gets W.
 */
int dp_job_add(struct dp_box *b, uint32_t id, const struct nr_job_spec *spec,
	       uint32_t *credits, char *err, size_t errlen);
/* Remove a job (held frames freed): 0 or -ENOENT. */
int dp_job_del(struct dp_box *b, uint32_t id);
/* A job's state and counters: 0 or -ENOENT. */
int dp_job_stats(struct dp_box *b, uint32_t id, struct nr_job_stats *st);
/* The box as the control API's backend "sw" (the box outlives it). */
struct nr_backend *dp_backend_create(struct dp_box *b);
/* Sum of every worker's counters. */
void dp_box_counters(const struct dp_box *b, struct dp_ctr *sum);
/* Engine counters summed over workers (through the command rings). */
int dp_box_engine_counters(struct dp_box *b, uint64_t ctr[NR_ECTR_MAX]);
/* Snapshot of the job ids (and owning workers); returns how many. */
unsigned dp_box_jobs(struct dp_box *b, uint32_t *ids, unsigned *workers, unsigned max);
json_t *dp_stats_json(struct dp_box *b);
json_t *dp_info_json(struct dp_box *b);
/* One-line summary for --stats-interval. */
void dp_stats_line(struct dp_box *b, char *buf, size_t len);
/* Register /netreduce/... telemetry commands for this box (one box a process). */
int dp_telemetry_register(struct dp_box *b);
/* Called by dp_box_destroy: telemetry stops reading b (waits for a running callback). */
void dp_telemetry_forget(struct dp_box *b);

static inline uint64_t dp_now_ns(const struct dp_box *b, uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * b->ns_mult) >> 32);
}

/* Log type "netreduce.dp" and a rate limiter: at most one line a second per site. */
extern int dp_logtype;
#define DP_LOG(level, fmt, ...) \
	rte_log(RTE_LOG_##level, dp_logtype, "netreduce.dp: " fmt "\n", ##__VA_ARGS__)
#define DP_LOG_RL(level, fmt, ...)                                             \
	do {                                                                  \
		static uint64_t _dp_last;                                     \
		uint64_t _dp_now = rte_get_tsc_cycles();                      \
		if (_dp_now - __atomic_load_n(&_dp_last, __ATOMIC_RELAXED) >= rte_get_tsc_hz()) { \
			__atomic_store_n(&_dp_last, _dp_now, __ATOMIC_RELAXED); \
			DP_LOG(level, fmt, ##__VA_ARGS__);                     \
		}                                                             \
	} while (0)

#endif /* NR_DP_BOX_H */
