/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The state of the box (netreduce-switch), which every one of its files
 * works on: ports, worker lcores (each with its engine, rings, parse
 * records, counters and TX buffers) and the control side's job table.
 * Types and inline accessors only.
 *
 * Threads.  Every worker lcore runs dp_worker_main() and owns one engine (its
 * jobs), one command ring (control -> lcore, single producer: the control
 * side serialises callers with a mutex that the loop never touches) and one
 * handoff ring (other lcores -> this lcore, packets of jobs owned here).
 * Ports are polled one RX queue each, ports spread round-robin over workers;
 * every worker has its own TX queue on every port (TX queue = worker index).
 */
#ifndef NR_DP_STATE_H
#define NR_DP_STATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_ring.h>

#include "dataplane/dpdk/dp_ctr.h"
#include "dataplane/dpdk/dp_l2.h"
#include "dataplane/dpdk/dp_opts.h"
#include "dataplane/dpdk/dp_qp_owner.h"
#include "dataplane/engine/agg_engine.h"
#include "proto/roce_icrc.h"
#include "proto/roce_pkt.h"

#define DP_MAX_PORTS     32
#define DP_MAX_WORKERS   32
#define DP_TX_DRAIN_US   100
#define DP_HOUSEKEEP_ITERS 64
#define DP_CMD_TIMEOUT_MS 2000
#define DP_HANDOFF_RING  4096
#define DP_MIN_RECORDS   16384  /* parse records per lcore, at least */
#define DP_CRC_SHIFTS    8      /* MTUs per lcore with a shared-payload ICRC */

struct dp_snap;

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

/*
 * A device in the place of the workers' engines (netreduce-switch --backend
 * rtl: the aggregator's RTL model).  Every frame the ports receive is handed
 * to it, and the frames it sends leave by the box's ports like the box's own
 * (dp_dev.c).  Calls are made on the worker lcore; frame_in returns when the
 * device has dealt with the frame.
 */
enum dp_dev_kind {
	DP_DEV_FORWARD = 0,        /* a received frame, unchanged: switched */
	DP_DEV_RESULT = 1,         /* a result: routed like the engine's */
	DP_DEV_RESEND = 2,         /* a duplicate answered with its stored result */
};

struct dp_dev_ops {
	/* One received frame: 0, or -errno when the device did not take it. */
	int (*frame_in)(void *ctx, uint16_t port, const uint8_t *frame, uint32_t len);
	/* The next frame the device sent: 1 with up to cap bytes copied and
	 * *len its whole length, 0 when none is waiting. */
	int (*frame_out)(void *ctx, uint8_t *buf, uint32_t cap, uint32_t *len, uint16_t *port,
			 enum dp_dev_kind *kind);
	/* ms milliseconds have passed (the device's progress timeouts). */
	void (*tick_ms)(void *ctx, unsigned ms);
	/* Why the last call failed. */
	const char *(*error)(void *ctx);
};

struct dp_box;

struct dp_worker {
	struct dp_box *box;
	unsigned idx;              /* worker index = TX queue id */
	unsigned lcore;
	struct agg_engine *eng;
	struct rte_ring *cmd;      /* control -> lcore, SP/SC */
	struct rte_ring *handoff;  /* other lcores -> lcore, MP/SC */
	unsigned n_rxq;
	struct { uint16_t port, queue; } rxq[DP_MAX_PORTS];
	uint64_t now_ns;           /* of the current burst */
	/* the source MAC (as 6 bytes in a word) and port the current burst's last
	 * frame was learned from, when the table said OK: the burst's next
	 * frames of that source skip the table (dp_learn.c); l2_memo_port
	 * DP_L2_NONE at each burst's start (dp_burst) */
	uint64_t l2_memo_mac;
	uint16_t l2_memo_port;
	/*
	 * The loop's heartbeat: its TSC, stored every DP_HOUSEKEEP_ITERS
	 * iterations and before each idle sleep (relaxed, single writer).  A
	 * worker whose heartbeat stops moving is stuck (dp_health.c).
	 */
	uint64_t beat_tsc;
	struct dp_snap *snap; /* what it publishes for the metrics (dp_snap.c), or NULL */
	uint64_t snap_ns;     /* its clock at its last copy */
	bool snap_due;        /* a job came or went: copy at the next turn */
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
	 * received frame (its index in the mbuf's dynamic field DP_REC_DYNFIELD,
	 * at rec_off: a field of the mbuf no PMD writes) and goes back when the
	 * frame leaves the lcore: forwarded, dropped, handed off, emitted or
	 * freed by the engine.  LIFO: the few records of a burst stay in L1.
	 */
	int rec_off;               /* the dynamic field's offset in an mbuf */
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
	uint64_t dev_tick_ns;      /* the device's clock: time of its last tick */
} __rte_cache_aligned;

/* The mbuf dynamic field that holds a frame's parse record index (dp_box.c
 * registers it; rte_mbuf_dynfield_register gives every box the same one). */
#define DP_REC_DYNFIELD "netreduce_dp_rec_idx"

/* Where frame m's record index lives. */
static inline uint32_t *dp_rec_idx(const struct dp_worker *w, struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, w->rec_off, uint32_t *);
}

/* The parse record of a frame this lcore received. */
static inline struct nr_pkt *dp_rec(const struct dp_worker *w, struct rte_mbuf *m)
{
	return &w->recs[*dp_rec_idx(w, m)];
}

/* Record r is free again. */
static inline void dp_rec_put_idx(struct dp_worker *w, uint32_t r)
{
	w->rec_free[w->rec_top++] = r;
}

/* The frame left the lcore (or the engine gave it back): its record is free. */
static inline void dp_rec_put(struct dp_worker *w, struct rte_mbuf *m)
{
	dp_rec_put_idx(w, *dp_rec_idx(w, m));
}

/* An rte_flow rule of a channel on one port (dp_steer.c). */
struct dp_flow {
	uint16_t port;
	struct rte_flow *flow;
};

/*
 * A channel of a job, on the control side (dp_jobs.c): the worker whose
 * engine runs it under the engine id dp_chan_eid(), the copy of its spec
 * (one channel) that says which connections the owner map sends there, and
 * the steering rules that bring its frames to that worker's RX queues.
 */
struct dp_chan {
	uint32_t id;               /* the job's id, at most DP_JOB_ID_MAX */
	uint8_t ch;                /* channel index in the job */
	uint8_t worker;
	bool bound;                /* its MACs pinned in the L2 table (dp_jobs.c) */
	struct nr_job_spec *spec;  /* malloc'd */
	struct dp_flow *flows;     /* malloc'd, n_flows of them */
	unsigned n_flows;
};

#define DP_JOB_ID_MAX 0xFFFFFFu
#define DP_MAX_CHANS  (NR_MAX_JOBS * DP_MAX_WORKERS)

/* The engine's id of channel ch of job id: channel 0 keeps the job's id. */
static inline uint32_t dp_chan_eid(uint32_t id, uint32_t ch)
{
	return id | ch << 24;
}

/* How a port's frames reach the worker of their channel (dp_steer.h). */
enum dp_steer {
	DP_STEER_NONE = 0,         /* one worker: nothing to steer */
	DP_STEER_FLOW = 1,         /* rte_flow rules by UDP source port */
	DP_STEER_SOFT = 2,         /* the owner map's hand-off through the owner's ring */
};

struct dp_port {
	uint16_t id;
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[64];
	struct rte_ether_addr mac;
	uint16_t n_rxq;            /* RX queues: one per worker, or 1 (round robin over workers) */
	uint8_t steer;             /* enum dp_steer */
	char steer_why[160];       /* why not rte_flow, for the banner */
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
	uint32_t cmd_timeout_ms;       /* dp_cmd_call's wait (DP_CMD_TIMEOUT_MS; tests lower it) */
	uint64_t ns_mult;          /* ns = tsc * ns_mult >> 32 */
	const char *kernel_name;
	const struct dp_dev_ops *dev;  /* NULL: the engines aggregate */
	void *dev_ctx;
	bool started;
	bool snap_on; /* atomic: the workers publish snapshots (dp_snap.h) */
	/* control side only (never taken in the loop) */
	pthread_mutex_t ctl_lock;
	struct dp_chan chans[DP_MAX_CHANS];   /* every channel of every job */
	unsigned n_chans;
	uint64_t mbuf_budget;      /* frames the jobs may hold together (dp_box_create) */
	uint64_t mbufs_refused;    /* jobs refused for want of it */
};

static inline uint64_t dp_now_ns(const struct dp_box *b, uint64_t tsc)
{
	return (uint64_t)(((unsigned __int128)tsc * b->ns_mult) >> 32);
}

#endif /* NR_DP_STATE_H */
