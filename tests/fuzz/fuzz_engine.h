/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shadow model of fuzz_engine (fuzz_engine.c: the script, the callbacks,
 * the packets; fuzz_engine_model.c: every slot's record and reference sum,
 * the jobs; fuzz_engine_short.c: short slots, the message
 * being emitted and its bound, the left-out connection's built result, the
 * counters).  Sequences are g (PSN - initial PSN, 24 bits), as on the wire.
 */
#ifndef NRZ_FUZZ_ENGINE_H
#define NRZ_FUZZ_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/engine/agg_engine.h"
#include "proto/roce_pkt.h"

#define NRZ_JOBS      2
#define NRZ_MAXN      5
#define NRZ_MAX_OPS   1500
#define NRZ_KEY       0x5A5A0000u

enum hstate { H_IN_ENGINE = 1, H_RETURNED = 2 };

struct handle {
	uint8_t *frame;
	uint8_t *orig;           /* the frame as offered */
	uint32_t len;
	uint8_t state;           /* enum hstate */
	int8_t job;              /* shadow job index, -1 for none */
	uint8_t conn;
	uint32_t g;
	bool counted;            /* in the job's held count */
	struct nr_pkt pkt;
};

struct contrib {
	uint8_t have, emitted;
	uint8_t marked;          /* its IP DSCP was the job's short_dscp */
	uint32_t tag;
	bool has_tag;
	uint32_t reth_len;       /* its RETH's DMA length (first and only packets) */
	uint8_t *pay;
};

struct rec {
	uint32_t g;
	uint16_t len;
	uint8_t count, nemitted;
	uint8_t opcode;          /* of the first contribution (the slot's) */
	bool has_tag;            /* the first contribution's ImmDt (the slot's tag) */
	uint32_t tag;
	bool ce;
	bool done;               /* every connection's result went out */
	bool shorted;            /* completed short: missing's result built by the engine */
	uint8_t missing;         /* (shorted) the connection left out */
	uint64_t t_first;        /* when its first contribution came */
	uint8_t order[NRZ_MAXN]; /* arrival order of connections */
	struct contrib c[NRZ_MAXN];
	float *want;             /* expected result, computed at first emit */
};

struct sjob {
	uint32_t id;
	bool registered, failed;
	struct nr_job_spec *spec;
	uint32_t ppm;            /* packets per message */
	uint32_t last_len;
	uint32_t pool_pkts;
	bool short_ops;          /* data ops' spare bits: loss, DSCP, RETH length */
	uint32_t cursor[NRZ_MAXN];   /* next g each connection sends */
	uint32_t emit_g, emit_conn;
	uint64_t mark[NRZ_MAXN];     /* each receiver acknowledged every sequence below */
	uint32_t held;
	bool freed_now;          /* handles came back through free during this op */
	struct rec *recs;
	size_t nrecs, caprecs;

	/* emission and short slots, as the engine must have them */
	uint64_t emits;          /* result packets handed out (ops.emit, ops.emit_slot) */
	uint64_t whole, shorts;  /* slots emitted with N contributions, with N - 1 */
	uint64_t left_out[NRZ_MAXN];
	bool msg_tolerant;       /* the message being emitted: its first packet marked */
	uint32_t msg_left;       /* short slots it may still have */
	uint64_t t_add;          /* the job (re)added */
	uint64_t last_new[NRZ_MAXN];   /* each sender's last contribution held */
	uint64_t last_short[NRZ_MAXN]; /* its last contribution left out */
	bool nak_set[NRZ_MAXN];  /* a gap NAK (or its re-arm) went out for nak_hole */
	uint32_t nak_hole[NRZ_MAXN];
	uint64_t seen_gap, seen_rearm, seen_denied;   /* counters as last read */
	bool denied_set;         /* slot denied_g counted in short_denied */
	uint32_t denied_g;
};

struct world {
	struct agg_engine *eng;
	struct sjob jobs[NRZ_JOBS];
	unsigned njobs;
	struct handle **hs;
	size_t nhs, caphs;
	uint64_t now;
	bool deleting, destroying;
	struct handle *pending;  /* being offered: may come back before the verdict */
	bool pending_recorded;   /* its contribution is in the shadow already */
	bool emit_slot;          /* results through ops.emit_slot (header bit) */
	bool polling;            /* inside agg_engine_poll() */
	bool offer_aeth;         /* offering a packet with an AETH: a repair may answer it */
	struct {                 /* a slot went out short: the left-out connection's
				  * result must be the next thing the engine hands out */
		bool on;
		int job;
		uint32_t conn, g;
	} due;
};

/* fuzz_engine_model.c: records and jobs */
struct rec *nrz_rec_find(struct sjob *j, uint32_t g, bool create);
void nrz_recs_clear(struct sjob *j);
void nrz_rec_compute(struct sjob *j, struct rec *r);
void nrz_check_payload(const struct rec *r, const uint8_t *pay, const char *what, uint32_t conn);
uint32_t nrz_ip4(unsigned a, unsigned b, unsigned c, unsigned d);
void nrz_job_shape(struct sjob *j, unsigned idx, uint8_t b0, uint8_t b1, uint8_t b2, uint8_t sb);
void nrz_job_add(struct world *w, struct sjob *j);
struct nrz_in;
void nrz_op_jobctl(struct world *w, struct nrz_in *in);

/* fuzz_engine.c */
bool nrz_data_owner(struct world *w, const struct nr_pkt *p, int *job, uint32_t *conn);

/* fuzz_engine_short.c */
/* Slot r of job j goes out with N - 1 contributions: whether the engine may. */
void nrz_short_begin(struct world *w, struct sjob *j, struct rec *r);
/* ops.send gave a WRITE while w->due is on: the left-out connection's result. */
void nrz_short_result(struct world *w, const uint8_t *frame, const struct nr_pkt *p);
/* Every connection's result of slot r is out: the message being emitted moves on. */
void nrz_slot_done(struct sjob *j, struct rec *r);
/* Contribution of conn to g held: its gap NAK, if for g, is answered. */
void nrz_short_held(struct world *w, struct sjob *j, uint32_t conn, uint32_t g);
/* ops.send gave a NAK to sender conn: a gap NAK or a re-arm marks its hole. */
void nrz_short_nak(struct world *w, struct sjob *j, uint32_t conn);
/* After each agg_engine_input() and agg_engine_poll(). */
void nrz_short_after_call(struct world *w);
/* After each operation, a live job's counters against the model. */
void nrz_short_counters(struct world *w, struct sjob *j, const struct nr_job_stats *st);

#endif /* NRZ_FUZZ_ENGINE_H */
