/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test harness around the engine: a job of N ranks in a ring (conn i: rank i
 * -> rank i+1), frames built with nr_build_frame and parsed with nr_parse,
 * and handle tracking that proves every held packet comes back exactly once
 * (through ops.emit or ops.free).
 */
#ifndef NR_ENG_HARNESS_H
#define NR_ENG_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "dataplane/engine/agg_engine.h"
#include "proto/roce_build.h"
#include "proto/roce_pkt.h"

#define TH_FRAME_CAP 4400

enum th_state {
	TH_TEST = 0,     /* owned by the test */
	TH_HELD = 1,     /* the engine holds it */
	TH_EMITTED = 2,  /* came back through ops.emit (test owns it again) */
	TH_FREED = 3,    /* came back through ops.free (gone) */
};

struct th_pkt {
	uint32_t magic;
	uint8_t state;
	uint16_t origin;         /* what ops.origin says of it (a port) */
	uint32_t len;
	struct nr_pkt p;
	uint8_t frame[TH_FRAME_CAP];
};

struct th_emit {
	struct th_pkt *pkt;
	uint32_t job, conn, g;
	bool ecn_ce;
};

/* A frame the engine made (ops.send): a NAK on a receiver's behalf, or a
 * repair's result to a receiver. */
struct th_sent {
	uint8_t frame[TH_FRAME_CAP];
	uint32_t len;
	uint16_t origin;
	struct nr_pkt p;         /* parsed */
};

struct th {
	struct agg_engine *e;
	struct nr_job_spec *spec;
	uint32_t job;
	uint64_t held;           /* packets in TH_HELD */
	uint64_t held_max;
	uint64_t emitted, freed;
	/* emission log (ring of the last emissions; the model drains it) */
	struct th_emit *log;
	uint32_t log_len, log_cap;
	bool strict;             /* fail on an emit/free of a packet not held */
	struct th_sent *sent;    /* NAKs and repairs the engine made, in order */
	uint32_t nsent, sent_cap;
	struct th_sent rep;      /* the last ACK it repeated (a tail ACK), nrep of them */
	uint32_t nrep;
};

/* IPs 10.0.0.(rank+1); conn i: src rank i QPN 0x100+i, dst rank i+1 QPN 0x200+(i+1)%n. */
struct nr_job_spec *th_spec(uint32_t n, uint32_t mtu, uint32_t msg_size, uint32_t pool_msgs,
			    uint8_t mode, const uint32_t *ipsn);
void th_init(struct th *t, struct nr_job_spec *spec, uint32_t job);
void th_fini(struct th *t);   /* destroys the engine; checks nothing leaked */

/* Build a data packet of conn with PSN psn; payload len bytes.  Parsed. */
struct th_pkt *th_data(const struct nr_job_spec *s, uint32_t conn, uint32_t psn, uint8_t opcode,
		       uint32_t imm, const void *payload, uint32_t len);
/* ACK/NAK from the receiver of conn back to its sender (MSN 1). */
struct th_pkt *th_ack(const struct nr_job_spec *s, uint32_t conn, uint32_t psn, uint8_t syn);
/* The same with msn in the AETH's MSN field (a selective NAK's run). */
struct th_pkt *th_aeth(const struct nr_job_spec *s, uint32_t conn, uint32_t psn, uint8_t syn,
		       uint32_t msn);
/* A copy of a frame (one the engine made), parsed. */
struct th_pkt *th_copy(const uint8_t *frame, uint32_t len);
/* Any frame from a flow, parsed. */
struct th_pkt *th_build(const struct nr_flow *f, const struct nr_build_args *a,
			const void *payload, uint32_t len);
void th_flow_data(const struct nr_job_spec *s, uint32_t conn, struct nr_flow *f);

/* Offer to the engine; packets it does not keep stay with the test (caller frees). */
enum agg_verdict th_input(struct th *t, struct th_pkt *k, uint64_t now, enum nr_engine_ctr *ctr);
void th_pkt_free(struct th_pkt *k);

uint64_t th_ctr(struct th *t, enum nr_engine_ctr c);
const uint8_t *th_payload(const struct th_pkt *k);
/* float idx of the payload (unaligned-safe) */
float th_pf(const struct th_pkt *k, uint32_t idx);

/*
 * The repair t->sent[k]: conn's result of g as the box first emitted it
 * (t->log), byte for byte but for the BTH AckReq bit (set when last), from
 * the port conn's sender's packets came in on.
 */
void th_check_repair(struct th *t, uint32_t k, uint32_t conn, uint32_t g, bool last);

#endif /* NR_ENG_HARNESS_H */
