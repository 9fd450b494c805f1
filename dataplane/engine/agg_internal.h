/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine internals shared by agg_jobs.c (jobs, lookup, housekeeping) and
 * agg_input.c (the per-packet path).  Not part of the API.
 *
 * Sequences.  On the wire a packet of connection i has g = (psn - ipsn_i) mod
 * 2^24.  Inside a job the engine extends g to a 64-bit sequence x that never
 * wraps: x = next_release + nr_psn_diff(g, next_release mod 2^24).  A valid
 * packet lies within pool_packets of next_release and pool_packets * 2 < 2^23,
 * so the extension is exact.  Slots are x mod pool_packets, which stays
 * contiguous across the 24-bit wrap (g mod pool_packets would not unless
 * pool_packets divides 2^24).  Reported g values are x mod 2^24.
 */
#ifndef NR_AGG_INTERNAL_H
#define NR_AGG_INTERNAL_H

#include <stdint.h>

#include "dataplane/engine/agg_engine.h"
#include "dataplane/engine/agg_sum.h"
#include "proto/roce_build.h"

enum agg_slot_state {
	NR_SLOT_FREE = 0,      /* never used */
	NR_SLOT_FILLING = 1,   /* some contributions in */
	NR_SLOT_COMPLETE = 2,  /* all N in, waiting for earlier slots */
	NR_SLOT_EMITTED = 3,   /* results handed out, waiting for ACKs */
	NR_SLOT_RELEASED = 4,  /* every connection ACKed; result readable until reuse */
};

struct agg_slot {
	uint64_t x;            /* occupant (extended sequence) */
	uint8_t state;         /* enum agg_slot_state */
	uint8_t opcode;        /* of the first contribution */
	uint8_t has_tag;       /* contributions carry ImmDt */
	uint8_t ecn_ce;        /* some contribution had ECN-CE */
	uint16_t len;          /* payload bytes of the first contribution */
	uint16_t count;        /* contributions in */
	uint32_t tag;          /* ImmDt of the first contribution */
	uint16_t tag_conn;     /* connection that brought tag (its RETH: msg_track) */
	uint8_t tolerant : 1;  /* every contribution carried a tolerant DSCP (short_dscp, a class's) */
	uint8_t de : 1;        /* every contribution carried a drop-eligible one (de_mask) */
	uint8_t cls;           /* priority class of the first contribution's DSCP (dscp_cls) */
};

/* The RETH of connection i's packet of a slot (first packets of a message):
 * what a repair (agg_nak.c) rebuilds that packet's result with. */
struct agg_slot_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t len;
};

/*
 * The RETHs of the last two first packets connection i sent (x[0] the
 * later; NR_MON_NONE: none): what a short slot builds a lost first packet's
 * RETH from (agg_short.c, a job with short_first).  Kept from the packets
 * the box received, never from one it built.
 */
struct agg_first_seen {
	uint64_t x[2];         /* sequences of those first packets */
	struct agg_slot_reth reth[2];
};

/* The job contract's memory model (proto/nr_job.h) counts these sizes. */
_Static_assert(sizeof(struct agg_slot) == NR_JOB_SLOT_BYTES, "NR_JOB_SLOT_BYTES is sizeof(struct agg_slot)");
_Static_assert(sizeof(struct agg_held) == NR_JOB_HELD_BYTES, "NR_JOB_HELD_BYTES is sizeof(struct agg_held)");
_Static_assert(sizeof(struct agg_slot_reth) == NR_JOB_RETH_BYTES, "NR_JOB_RETH_BYTES is sizeof(struct agg_slot_reth)");

struct agg_job {
	uint32_t id;
	uint32_t n;            /* connections */
	uint32_t words;        /* bitmap words per slot */
	uint32_t pool;         /* pool_packets */
	uint64_t pool_magic;   /* fastmod constant for pool */
	uint32_t slot_bias;    /* multiple of pool above 2^23 (see agg_job_slot) */
	uint32_t mtu;
	uint32_t result_key;
	uint32_t timeout_ms;
	uint8_t mode;
	uint8_t reduce;            /* enum nr_reduce_op */
	uint8_t dtype;             /* enum nr_elem_type */
	uint8_t state;         /* enum nr_job_state */
	uint8_t flagged;       /* reason holds a warning (job still active) */
	uint16_t pkey;         /* spec pkey: 0 = not checked */
	uint8_t short_dscp;    /* short slots (agg_short.c): the spec's */
	uint8_t short_scale;
	uint8_t short_first;   /* a lost first packet may go short (spec short_first) */
	uint8_t selective;     /* its requesters are selective repeat (spec selective):
				* the monitor's gap NAKs are selective ones (agg_nak.c) */
	uint32_t short_ppm;
	uint16_t spray;            /* UDP source ports of a connection's packets (>= 1) */
	uint8_t classes;           /* prio_classes (>= 1); > 1: ready slots wait for the
				    * burst's end, higher class first (agg_input.c) */
	uint8_t ready;             /* on the engine's ready list */
	uint64_t tol_mask;         /* bit d: DSCP d marks a tolerant message */
	uint64_t de_mask;          /* bit d: DSCP d a tolerant packet's drop-eligible mark (+ 2) */
	uint8_t dscp_cls[64];      /* DSCP -> class: tolerant ones 0..classes - 1, else classes */
	uint16_t reorder;          /* a gap is a loss past this many packets (spec reorder_pkts) */
	uint64_t *port_hi;         /* [n * spray] spray > 1: one past the highest sequence
				    * each of a sender's ports brought (agg_mon_lost) */
	uint32_t msg_short_left;   /* short slots the message being emitted may still have */
	uint8_t msg_tolerant;      /* it is marked (short_dscp) and its first packet was emitted */
	uint64_t denied_x;         /* the last slot counted in short_denied */

	uint64_t next_emit;    /* extended sequences */
	uint64_t next_release;
	uint32_t rel_slot;     /* next_release mod pool */
	uint32_t emit_slot;    /* next_emit mod pool */
	uint32_t busy;         /* slots FILLING or COMPLETE */
	uint64_t last_progress_ns;
	uint64_t completed;

	struct agg_slot *slots;     /* [pool] */
	uint64_t *bits;            /* [pool * words] contributor bitmaps */
	struct agg_held *held;      /* [pool * n]: received packets held (ordered and
				    * streaming modes); their parse records stay
				    * with the caller (NR_V_HELD in agg_engine.h) */
	uint8_t *results;          /* [pool * mtu], 64-byte aligned: each slot's result as
				    * emitted (in the job's element type) */
	float *acc;                /* 16-bit jobs: FP32 accumulators of mtu / 2 floats,
				    * [pool] in streaming mode, [1] (scratch) in ordered;
				    * NULL for FP32 (nr_job_acc_packets) */
	struct agg_slot_reth *reth;      /* [pool * n]: set for slots whose opcode carries one */
	uint64_t *acked;           /* [n] per connection: every x below is ACKed */
	struct agg_conn_mon *mon;  /* [n] the status monitor's view (agg_nak.c) */
	uint64_t nak_rtt_ns;       /* smoothed: NAK sent -> what it asked for arrived */
	uint64_t emit_ns;          /* results last went out (the monitor's probes wait) */
	const void **srcs;         /* [n] scratch for the sum */
	void **outs;               /* [n] scratch for the sum */
	struct agg_held *spare;     /* [n] scratch: a short slot's N-1 packets */
	uint64_t *left_out;        /* [n] per sender: contributions short slots left out */
	struct agg_first_seen *first;    /* [n] (agg_short.c) */
	uint64_t short_why[NR_SHORT_WHY_MAX];   /* short_denied by reason */
	uint64_t short_cls[NR_MAX_CLASSES];     /* short_slots by priority class */
	uint64_t tol_pkts, de_pkts;             /* contributions marked tolerant; of them
						   drop-eligible */
	uint64_t short_de;                      /* short_slots whose every contribution
						   was drop-eligible */

	uint64_t ctr[NR_ECTR_MAX];
	char reason[256];
	struct nr_conn_spec conns[]; /* [n] */
};

#define NR_MON_NONE UINT64_MAX

/*
 * What the status monitor (agg_nak.c) knows of one connection: the
 * sender's stream as the box received it, the receiver's last ACK (the
 * template of the box's NAKs), and the NAKs it sent.  Sequences are
 * extended (x), as the job's.
 */
struct agg_conn_mon {
	uint64_t contig;       /* every sequence below was received from the sender */
	uint64_t hi;           /* one past the highest sequence received from it */
	uint64_t hole;         /* the first missing sequence a NAK went out for, or NONE */
	uint64_t hole_end;     /* one past the last its NAK named: a selective NAK's run
				* (agg_nak.c); hole + 1 for a sequence NAK */
	uint64_t hole_ns;      /* when */
	uint64_t ack_ns;       /* the receiver's mark last moved, it had nothing to ACK,
				* or a stored result was resent to it */
	uint64_t wait_ns;      /* contig last moved, or no slot waited for this sender */
	uint64_t probe_ns;     /* the last probe NAK */
	uint64_t solicit_ns;   /* the last result resent to solicit the receiver's ACK */
	uint64_t tail_ns;      /* when the ACK tail_due refers to came */
	uint64_t hold_ns;      /* the last hold RNR NAK (a late contributor), 0: none */
	uint64_t repair;       /* the receiver's NAK the box last answered itself (a repair), or NONE */
	uint64_t repair_ns;    /* when */
	struct nr_flow tpl;    /* the receiver's last ACK: addresses, ports, DSCP of ours */
	struct nr_flow dtpl;   /* the sender's data packets: what a repair's results are built as */
	uint32_t msn;          /* its MSN */
	uint16_t origin;       /* ops.origin of it */
	uint16_t dorigin;      /* ops.origin of the sender's packet dtpl came from */
	uint8_t mig;           /* its BTH MigReq */
	uint8_t dmig;          /* the sender's */
	uint8_t have_tpl;
	uint8_t have_dtpl;
	uint8_t tail_due;      /* the receiver's ACK of all emitted: repeat it if the sender stays quiet */
	uint8_t held_back;     /* hole's NAK not sent: a short slot may fill it (agg_short.c) */
	uint16_t port;         /* spray > 1: the port (0..spray - 1) of its packet being input */
};

/* Lookup entry: (daddr, qpn) -> job slot index and connection. */
struct agg_lkp {
	uint32_t daddr;
	uint32_t qpn;          /* 24-bit QPN | NR_LKP_ACK when the key is the ACK side */
	uint16_t job;          /* index into e->jobs, NR_LKP_EMPTY when unused */
	uint16_t conn;
};
#define NR_LKP_ACK   0x80000000u
#define NR_LKP_EMPTY 0xFFFF

struct agg_engine {
	struct agg_engine_ops ops;
	const struct agg_sum_ops *sum;
	struct agg_job *jobs[NR_MAX_JOBS];
	/* inside agg_engine_input_burst: jobs with classes whose next slot became
	 * ready, emitted at the burst's end by class (agg_input.c) */
	bool deferring;
	unsigned nready;
	struct agg_job *ready[NR_MAX_JOBS];
	struct agg_lkp *lkp;
	uint32_t lkp_mask;
	uint64_t ctr[NR_ECTR_MAX];   /* not attributable to a job, plus deleted jobs */
};

static inline uint32_t agg_lkp_hash(uint32_t daddr, uint32_t qpn)
{
	uint64_t h = ((uint64_t)daddr << 24 | qpn) * 0x9E3779B97F4A7C15ull;
	return (uint32_t)(h >> 32);
}

/* Lemire's fastmod: a mod d for 32-bit a, with magic = UINT64_MAX / d + 1. */
static inline uint32_t agg_fastmod(uint32_t a, uint64_t magic, uint32_t d)
{
	uint64_t low = magic * a;
	return (uint32_t)(((__uint128_t)low * d) >> 64);
}

/* Slot si's FP32 accumulator (a 16-bit job in streaming mode). */
static inline float *agg_slot_acc(const struct agg_job *j, uint32_t si)
{
	return j->acc + (size_t)si * (j->mtu / 2);
}

static inline uint32_t agg_job_slot(const struct agg_job *j, uint64_t x)
{
	/* the common case: 0 <= x - next_release < pool, no division at all */
	if (x - j->next_release < j->pool) {
		uint32_t s = j->rel_slot + (uint32_t)(x - j->next_release);
		return s >= j->pool ? s - j->pool : s;
	}
	/* x - next_release lies in (-2^23, 2^23]: shift into [0, 2^24 + pool) */
	int64_t d = (int64_t)(x - j->next_release);
	uint32_t u = (uint32_t)((int64_t)j->rel_slot + d + (int64_t)j->slot_bias);
	return agg_fastmod(u, j->pool_magic, j->pool);
}

/* Short slots a message of len bytes may have: short_ppm of its packets. */
static inline uint32_t agg_short_bound(const struct agg_job *j, uint32_t len)
{
	uint64_t pkts = ((uint64_t)len + j->mtu - 1) / j->mtu;

	return (uint32_t)(pkts * j->short_ppm / 1000000u);
}

/* No connection (agg_slot_emit: a slot with every contribution in). */
#define NR_CONN_NONE UINT32_MAX

/*
 * Emit slot si (agg_emit.c): its sum into each connection's packet, handed
 * to ops.emit_slot or ops.emit; missing: the connection a short slot lacks
 * (agg_short.c sends its result), or NR_CONN_NONE.  The caller then moves
 * next_emit (agg_job_emitted).
 */
void agg_slot_emit(struct agg_engine *e, struct agg_job *j, uint32_t si, uint32_t missing);
/* Emit every complete slot from next_emit on, in order. */
void agg_job_emit_ready(struct agg_engine *e, struct agg_job *j);

static inline void agg_job_emitted(struct agg_job *j)
{
	j->next_emit++;
	if (++j->emit_slot == j->pool)
		j->emit_slot = 0;
}

/* "connection 2 (10.0.0.3 -> 10.0.0.4 qpn 0x11)" */
void agg_conn_describe(const struct agg_job *j, uint32_t i, char *buf, size_t len);
/* Fail a job: free held handles, keep reason.  No-op when already failed. */
void agg_job_fail(struct agg_engine *e, struct agg_job *j, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* NR_AGG_INTERNAL_H */
