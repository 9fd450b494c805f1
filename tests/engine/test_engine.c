/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Targeted engine cases: one behaviour each (tag mismatch, length mismatch,
 * spoofing, unknown connections, duplicates, stale and occupied slots, ACKs
 * and NAKs, timeout, job deletion, ECN, result key, NaN/Inf, wrap, spec
 * validation).  Frames are built with nr_build_frame and parsed with nr_parse.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dataplane/engine/agg_sum.h"
#include "eng_harness.h"
#include "eng_rand.h"

static uint64_t seed;

#define MS 1000000ull

static void rand_payload(struct eng_rng *r, float *f, uint32_t nfl)
{
	for (uint32_t k = 0; k < nfl; k++)
		f[k] = (float)((int32_t)eng_rand(r) % 100000) / 64.0f;
}

/* Offer one single-packet message (WRITE_ONLY_IMM) of conn at sequence g. */
static enum agg_verdict send_one(struct th *t, uint32_t conn, uint32_t g, uint32_t imm,
				const float *pay, uint32_t len, uint64_t now,
				enum nr_engine_ctr *ctr, struct th_pkt **out)
{
	const struct nr_conn_spec *c = &t->spec->conns[conn];
	struct th_pkt *k = th_data(t->spec, conn, nr_psn_add(c->ipsn, g),
				   NR_OP_RC_WRITE_ONLY_IMM, imm, pay, len);
	enum agg_verdict v = th_input(t, k, now, ctr);

	if (out && v != NR_V_HELD)
		*out = k;
	else if (v != NR_V_HELD)
		th_pkt_free(k);
	return v;
}

static enum agg_verdict send_ack(struct th *t, uint32_t conn, uint32_t g, uint8_t syn,
				uint64_t now, enum nr_engine_ctr *ctr)
{
	const struct nr_conn_spec *c = &t->spec->conns[conn];
	struct th_pkt *k = th_ack(t->spec, conn, nr_psn_add(c->ipsn, g), syn);
	enum agg_verdict v = th_input(t, k, now, ctr);

	th_pkt_free(k);
	return v;
}

static void ref_sum(float *out, float pay[][256], uint32_t n, uint32_t nfl)
{
	for (uint32_t k = 0; k < nfl; k++) {
		float a = pay[0][k];
		for (uint32_t i = 1; i < n; i++)
			a = a + pay[i][k];
		out[k] = a;
	}
}

static void test_ordered_basic(void **state)
{
	uint32_t ipsn[3] = { 100, 0xFFFFFE, 7 };
	struct th t;
	struct eng_rng r;
	float pay[3][256], sum[256];
	enum nr_engine_ctr c;
	struct nr_job_stats st;

	(void)state;
	eng_rng_init(&r, seed);
	th_init(&t, th_spec(3, 1024, 1024, 4, NR_SUM_ORDERED, ipsn), 7);
	for (int i = 0; i < 3; i++)
		rand_payload(&r, pay[i], 256);
	ref_sum(sum, pay, 3, 256);
	/* arrival order 2, 0, 1: result is still the rank-ordered sum */
	assert_int_equal(send_one(&t, 2, 0, 0x01000000, pay[2], 1024, 0, &c, NULL), NR_V_HELD);
	assert_int_equal(c, NR_ECTR_AGGREGATED);
	assert_int_equal(send_one(&t, 0, 0, 0x01000000, pay[0], 1024, 0, NULL, NULL), NR_V_HELD);
	assert_int_equal(t.log_len, 0);
	assert_int_equal(send_one(&t, 1, 0, 0x01000000, pay[1], 1024, 0, NULL, NULL), NR_V_HELD);
	assert_int_equal(t.log_len, 3);
	for (uint32_t i = 0; i < 3; i++) {
		struct th_emit *em = &t.log[i];

		assert_int_equal(em->conn, i);                 /* rank order */
		assert_int_equal(em->g, 0);
		assert_int_equal(em->job, 7);
		assert_false(em->ecn_ce);
		assert_int_equal(em->pkt->p.psn, ipsn[i]);     /* own PSN, own QPN */
		assert_int_equal(em->pkt->p.qpn, t.spec->conns[i].dst_qpn);
		assert_memory_equal(th_payload(em->pkt), sum, 1024);
	}
	assert_int_equal(agg_engine_job_stats(t.e, 7, &st), 0);
	assert_int_equal(st.next_emit, 1);
	assert_int_equal(st.next_release, 0);
	/* two ACKs do not release; the third does */
	assert_int_equal(send_ack(&t, 0, 0, 0x1F, 0, &c), NR_V_FORWARD);
	assert_int_equal(c, NR_ECTR_ACKS_SNOOPED);
	send_ack(&t, 2, 0, 0x1F, 0, NULL);
	agg_engine_job_stats(t.e, 7, &st);
	assert_int_equal(st.next_release, 0);
	send_ack(&t, 1, 0, 0x00, 0, NULL);
	agg_engine_job_stats(t.e, 7, &st);
	assert_int_equal(st.next_release, 1);
	assert_int_equal(st.ctr[NR_ECTR_RELEASED], 1);
	assert_int_equal(st.ctr[NR_ECTR_EMITTED], 3);
	assert_int_equal(st.ctr[NR_ECTR_COMPLETED], 1);
	assert_int_equal(st.completed, 1);
	assert_string_equal(agg_engine_kernel_name(t.e), agg_sum_best()->name);
	th_fini(&t);
}

static void test_tag_mismatch_fails_job(void **state)
{
	struct th t;
	float pay[256] = { 1.0f };
	enum nr_engine_ctr c;
	struct nr_job_stats st;

	(void)state;
	th_init(&t, th_spec(4, 1024, 1024, 4, NR_SUM_ORDERED, NULL), 3);
	assert_int_equal(send_one(&t, 0, 1234 % 2, 0x01000004, pay, 1024, 0, NULL, NULL), NR_V_HELD);
	assert_int_equal(send_one(&t, 1, 1234 % 2, 0x01000004, pay, 1024, 0, NULL, NULL), NR_V_HELD);
	assert_int_equal(t.held, 2);
	assert_int_equal(send_one(&t, 2, 1234 % 2, 0x01000005, pay, 1024, 0, &c, NULL), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_TAG_MISMATCH);
	assert_int_equal(t.held, 0);           /* held packets went back through ops.free */
	assert_int_equal(t.freed, 2);
	agg_engine_job_stats(t.e, 3, &st);
	assert_int_equal(st.state, NR_JOB_FAILED);
	assert_string_equal(st.reason,
			    "job 3: connection 2 (10.0.0.3 -> 10.0.0.4 qpn 0x203): immediate 0x01000005 "
			    "at g=0, connection 0 sent 0x01000004 (hosts out of step)");
	/* anything later on the job's data QPNs is dropped, never forwarded raw */
	assert_int_equal(send_one(&t, 3, 0, 0x01000004, pay, 1024, 0, &c, NULL), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_JOB_FAILED_DROP);
	assert_int_equal(send_ack(&t, 0, 0, 0, 0, NULL), NR_V_FORWARD);
	assert_int_equal(agg_engine_poll(t.e, 1000000 * MS), 0);
	th_fini(&t);
}

static void test_len_mismatch_flags(void **state)
{
	struct th t;
	float pay[256] = { 2.0f };
	enum nr_engine_ctr c;
	struct nr_job_stats st;

	(void)state;
	th_init(&t, th_spec(2, 1024, 1024, 4, NR_SUM_ORDERED, NULL), 1);
	assert_int_equal(send_one(&t, 0, 0, 0x01000000, pay, 1024, 0, NULL, NULL), NR_V_HELD);
	assert_int_equal(send_one(&t, 1, 0, 0x01000000, pay, 1020, 0, &c, NULL), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_LEN_MISMATCH);
	agg_engine_job_stats(t.e, 1, &st);
	assert_int_equal(st.state, NR_JOB_ACTIVE);
	assert_string_equal(st.reason, "job 1: connection 1 (10.0.0.2 -> 10.0.0.1 qpn 0x200): "
			    "payload 1020 bytes at g=0, others 1024");
	/* the right length still completes the slot */
	assert_int_equal(send_one(&t, 1, 0, 0x01000000, pay, 1024, 0, NULL, NULL), NR_V_HELD);
	assert_int_equal(t.log_len, 2);
	assert_true(th_pf(t.log[0].pkt, 0) == 4.0f);
	/* bad lengths: not a multiple of 4, over the MTU, empty */
	assert_int_equal(send_one(&t, 0, 1, 0x01000001, pay, 1022, 0, &c, NULL), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_BAD_LEN);
	/* opcode mismatch: WRITE_ONLY (no imm) against WRITE_ONLY_IMM */
	assert_int_equal(send_one(&t, 0, 1, 0x01000001, pay, 1024, 0, NULL, NULL), NR_V_HELD);
	{
		struct th_pkt *k = th_data(t.spec, 1, 1, NR_OP_RC_WRITE_ONLY, 0, pay, 1024);
		assert_int_equal(th_input(&t, k, 0, &c), NR_V_DROP);
		assert_int_equal(c, NR_ECTR_OPCODE_MISMATCH);
		th_pkt_free(k);
	}
	th_fini(&t);
}

static void test_spoofed_and_unknown(void **state)
{
	struct th t;
	float pay[256] = { 2.0f };
	struct nr_flow f;
	struct nr_build_args a = { .opcode = NR_OP_RC_WRITE_ONLY, .psn = 0, .dma_len = 1024 };
	enum nr_engine_ctr c;
	struct th_pkt *k;

	(void)state;
	th_init(&t, th_spec(2, 1024, 1024, 4, NR_SUM_ORDERED, NULL), 1);
	/* registered QPN, wrong source IP: dropped, never aggregated */
	th_flow_data(t.spec, 0, &f);
	f.saddr = htonl(0x0A0000FE);
	k = th_build(&f, &a, pay, 1024);
	assert_int_equal(th_input(&t, k, 0, &c), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_SPOOFED);
	th_pkt_free(k);
	assert_int_equal(th_ctr(&t, NR_ECTR_AGGREGATED), 0);
	/* unregistered QPN: forwarded untouched, counted as unknown, not a drop */
	th_flow_data(t.spec, 0, &f);
	f.dqpn = 0x777;
	k = th_build(&f, &a, pay, 1024);
	{
		uint8_t before[TH_FRAME_CAP];

		memcpy(before, k->frame, k->len);
		c = NR_ECTR_MAX;
		assert_int_equal(th_input(&t, k, 0, &c), NR_V_FORWARD);
		assert_int_equal(c, NR_ECTR_UNKNOWN_CONN);
		assert_memory_equal(before, k->frame, k->len);
	}
	th_pkt_free(k);
	assert_int_equal(th_ctr(&t, NR_ECTR_UNKNOWN_CONN), 1);
	/* a SEND to an unknown QPN is plain forwarding, no counter */
	a.opcode = NR_OP_RC_SEND_ONLY;
	k = th_build(&f, &a, pay, 64);
	c = NR_ECTR_MAX;
	assert_int_equal(th_input(&t, k, 0, &c), NR_V_FORWARD);
	assert_int_equal(c, NR_ECTR_MAX);
	th_pkt_free(k);
	assert_int_equal(th_ctr(&t, NR_ECTR_UNKNOWN_CONN), 1);
	/* a SEND or READ on a registered data QPN: NOT_WRITE, dropped */
	th_flow_data(t.spec, 1, &f);
	k = th_build(&f, &a, pay, 64);
	assert_int_equal(th_input(&t, k, 0, &c), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_NOT_WRITE);
	th_pkt_free(k);
	a.opcode = NR_OP_RC_READ_REQ;
	a.dma_len = 4096;
	k = th_build(&f, &a, NULL, 0);
	assert_int_equal(th_input(&t, k, 0, &c), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_NOT_WRITE);
	th_pkt_free(k);
	/*
	 * Responses addressed to a registered data QPN (the receiver's QP acting
	 * as a requester): from its peer, the sender, forwarded untouched and no
	 * counter moves (dropping one would stall the request it answers); from
	 * any other source, forged: dropped, counted spoofed.
	 */
	{
		static const uint8_t resp_ops[] = { NR_OP_RC_ACK, NR_OP_RC_ATOMIC_ACK,
						    NR_OP_RC_READ_RESP_ONLY };
		struct nr_flow fr;

		th_flow_data(t.spec, 1, &fr);
		for (unsigned w = 0; w < 2; w++) {
			if (w)  /* from a source other than the connection's peer */
				fr.saddr = htonl(0x0A0000FE);
			for (size_t o = 0; o < sizeof(resp_ops); o++) {
				struct nr_build_args ra = { .opcode = resp_ops[o], .psn = 7 };
				bool rd = resp_ops[o] == NR_OP_RC_READ_RESP_ONLY;
				uint8_t before[TH_FRAME_CAP];

				k = th_build(&fr, &ra, rd ? pay : NULL, rd ? 64 : 0);
				memcpy(before, k->frame, k->len);
				c = NR_ECTR_MAX;
				assert_int_equal(th_input(&t, k, 0, &c), w ? NR_V_DROP : NR_V_FORWARD);
				assert_int_equal(c, w ? NR_ECTR_SPOOFED : NR_ECTR_MAX);
				assert_memory_equal(before, k->frame, k->len);
				th_pkt_free(k);
			}
		}
		assert_int_equal(th_ctr(&t, NR_ECTR_NOT_WRITE), 2);
		/* the first case's, and the three forged responses */
		assert_int_equal(th_ctr(&t, NR_ECTR_SPOOFED), 1 + sizeof(resp_ops));
	}
	/* an ACK from the wrong source: counted, not snooped, dropped */
	{
		const struct nr_conn_spec *cs = &t.spec->conns[0];
		struct nr_flow fa = { .saddr = htonl(0x0A0000FE), .daddr = cs->src_ip,
				      .dqpn = cs->src_qpn, .sport = 1 };
		struct nr_build_args aa = { .opcode = NR_OP_RC_ACK, .psn = 0 };

		k = th_build(&fa, &aa, NULL, 0);
		assert_int_equal(th_input(&t, k, 0, &c), NR_V_DROP);
		assert_int_equal(c, NR_ECTR_SPOOFED);
		th_pkt_free(k);
	}
	/* a non-RoCE record is forwarded */
	{
		struct nr_pkt p = { .kind = NR_PKT_OTHER };
		assert_int_equal(agg_engine_input(t.e, &p, NULL, NULL, 0, NULL), NR_V_FORWARD);
	}
	th_fini(&t);
}

/* A forged frame, built like conn's genuine ones but with what it gets wrong. */
enum forge { FORGE_SPORT, FORGE_MAC, FORGE_PKEY };

static struct th_pkt *forged(const struct nr_job_spec *s, uint32_t conn, uint32_t psn,
			     enum forge how, const float *pay, uint8_t opcode, uint32_t imm)
{
	struct nr_flow f;
	struct nr_build_args a = { .opcode = opcode, .psn = psn, .imm = imm, .dma_len = 1024 };

	th_flow_data(s, conn, &f);
	f.sport = s->conns[conn].src_sport;
	if (how == FORGE_SPORT)
		f.sport ^= 0x0101;
	else if (how == FORGE_MAC)
		f.src_mac[0] ^= 0x02;
	else
		f.pkey = 0x8123;
	return th_build(&f, &a, pay, 1024);
}

/*
 * Connections bound at registration (docs/trust.md): frames with the right
 * source IP and QPN but another UDP source port, source MAC or P_Key are
 * dropped and counted, at every PSN of the window, before and after the
 * genuine frame, as data, LAST-with-immediate and ACK; the victim's sum stays
 * exact.  Then a second, different frame for a held PSN fails the job.
 */
static void test_bound_connections(void **state)
{
	struct th t;
	struct nr_job_spec *spec;
	float pay[2][256], bad[256], sum[256];
	static const uint32_t want_ctr[] = { NR_ECTR_SPOOFED_SRC, NR_ECTR_SPOOFED_SRC, NR_ECTR_SPOOFED_PKEY };
	enum nr_engine_ctr c;
	struct eng_rng r;
	struct nr_job_stats st;
	uint64_t dropped = 0;

	(void)state;
	eng_rng_init(&r, seed + 41);
	rand_payload(&r, pay[0], 256);
	rand_payload(&r, pay[1], 256);
	rand_payload(&r, bad, 256);
	ref_sum(sum, pay, 2, 256);
	spec = th_spec(2, 1024, 1024, 4, NR_SUM_ORDERED, NULL);
	spec->pkey = 0xFFFF;
	for (uint32_t i = 0; i < 2; i++) {
		spec->conns[i].src_sport = (uint16_t)(49152 + i);   /* th_flow_data's */
		spec->conns[i].dst_sport = 49999;                   /* th_ack's */
	}
	th_init(&t, spec, 3);
	/* before the genuine frames: every PSN of the window (pool of 4), each
	 * way (th_spec registers a MAC for rank 1, none for rank 0: conn 1) */
	for (uint32_t g = 0; g < 4; g++)
		for (uint32_t how = FORGE_SPORT; how <= FORGE_PKEY; how++)
			for (uint32_t op = 0; op < 2; op++) {
				struct th_pkt *k = forged(spec, 1, g, how, bad,
							  op ? NR_OP_RC_WRITE_ONLY_IMM : NR_OP_RC_WRITE_ONLY,
							  0xBAD);
				assert_int_equal(th_input(&t, k, 0, &c), NR_V_DROP);
				assert_int_equal(c, want_ctr[how]);
				th_pkt_free(k);
				dropped++;
			}
	/* the genuine frames of g=0 and g=1; forgeries after them too */
	for (uint32_t g = 0; g < 2; g++) {
		assert_int_equal(send_one(&t, 1, g, 0x0100 + g, pay[1], 1024, 0, NULL, NULL), NR_V_HELD);
		for (uint32_t how = FORGE_SPORT; how <= FORGE_PKEY; how++) {
			struct th_pkt *k = forged(spec, 1, g, how, bad, NR_OP_RC_WRITE_ONLY_IMM, 0x0100 + g);

			assert_int_equal(th_input(&t, k, 0, &c), NR_V_DROP);
			assert_int_equal(c, want_ctr[how]);
			th_pkt_free(k);
			dropped++;
		}
		assert_int_equal(send_one(&t, 0, g, 0x0100 + g, pay[0], 1024, 0, NULL, NULL), NR_V_HELD);
	}
	assert_int_equal(th_ctr(&t, NR_ECTR_SPOOFED_SRC) + th_ctr(&t, NR_ECTR_SPOOFED_PKEY), dropped);
	assert_int_equal(th_ctr(&t, NR_ECTR_AGGREGATED), 4);
	assert_int_equal(t.log_len, 4);
	for (uint32_t e = 0; e < 4; e++)
		assert_memory_equal(th_payload(t.log[e].pkt), sum, 1024);
	/* the default partition with limited membership is the same P_Key */
	{
		struct nr_flow f;
		struct nr_build_args a = { .opcode = NR_OP_RC_WRITE_ONLY, .psn = 2, .dma_len = 1024 };
		struct th_pkt *k;

		th_flow_data(spec, 0, &f);
		f.pkey = 0x7FFF;
		k = th_build(&f, &a, pay[0], 1024);
		assert_int_equal(th_input(&t, k, 0, &c), NR_V_HELD);
	}
	/* forged ACKs (conn 0: its receiver, rank 1, has a MAC): counted,
	 * dropped, never release a slot */
	for (uint32_t how = 0; how < 3; how++) {
		const struct nr_conn_spec *cs = &spec->conns[0];
		struct nr_flow f = { .saddr = cs->dst_ip, .daddr = cs->src_ip, .sport = 49999,
				     .frag_off = NR_IPV4_DF, .dqpn = cs->src_qpn };
		struct nr_build_args a = { .opcode = NR_OP_RC_ACK, .psn = 1, .syndrome = 0, .msn = 1 };
		struct th_pkt *k;

		memcpy(f.src_mac, cs->dst_mac, 6);
		if (how == 0)
			f.sport = 50000;
		else if (how == 1)
			f.src_mac[0] ^= 0x02;
		else
			f.pkey = 0x8123;
		k = th_build(&f, &a, NULL, 0);
		assert_int_equal(th_input(&t, k, 0, &c), NR_V_DROP);
		assert_int_equal(c, want_ctr[how]);
		th_pkt_free(k);
	}
	assert_int_equal(th_ctr(&t, NR_ECTR_ACKS_SNOOPED), 0);
	assert_int_equal(agg_engine_job_stats(t.e, 3, &st), 0);
	assert_int_equal(st.next_release, 0);
	assert_int_equal(st.state, NR_JOB_ACTIVE);
	/* the genuine ACKs release */
	assert_int_equal(send_ack(&t, 0, 1, 0, 0, &c), NR_V_FORWARD);
	assert_int_equal(c, NR_ECTR_ACKS_SNOOPED);
	th_fini(&t);
}

/*
 * Two different frames for one connection and PSN, both bound right: while
 * the box holds the first (slot filling, or complete and waiting), it cannot
 * tell which is genuine, so the job fails naming the connection; the same
 * frame again stays a plain duplicate.
 */
static void test_psn_conflict_fails_job(void **state)
{
	float pay[2][256], other[256];
	enum nr_engine_ctr c;
	struct nr_job_stats st;
	struct eng_rng r;

	(void)state;
	eng_rng_init(&r, seed + 43);
	rand_payload(&r, pay[0], 256);
	rand_payload(&r, pay[1], 256);
	memcpy(other, pay[0], sizeof(other));
	other[77] += 1.0f;
	for (int complete = 0; complete < 2; complete++) {
		struct th t;
		char *why;

		th_init(&t, th_spec(2, 1024, 1024, 4, NR_SUM_ORDERED, NULL), 4);
		/* g=1 complete and waiting for g=0 (complete), or g=0 filling */
		uint32_t g = complete ? 1 : 0;

		assert_int_equal(send_one(&t, 0, g, 0x51, pay[0], 1024, 0, NULL, NULL), NR_V_HELD);
		if (complete)
			assert_int_equal(send_one(&t, 1, g, 0x51, pay[1], 1024, 0, NULL, NULL), NR_V_HELD);
		assert_int_equal(send_one(&t, 0, g, 0x51, pay[0], 1024, 0, &c, NULL), NR_V_DROP);
		assert_int_equal(c, NR_ECTR_DUP_DROPPED);
		/* another payload, then another immediate, each a conflict */
		assert_int_equal(send_one(&t, 0, g, 0x51, other, 1024, 0, &c, NULL), NR_V_DROP);
		assert_int_equal(c, NR_ECTR_PSN_CONFLICT);
		assert_int_equal(agg_engine_job_stats(t.e, 4, &st), 0);
		assert_int_equal(st.state, NR_JOB_FAILED);
		why = strstr(st.reason, "connection 0 (10.0.0.1 -> 10.0.0.2");
		assert_non_null(why);
		assert_non_null(strstr(st.reason, "two different frames"));
		assert_int_equal(t.log_len, 0);           /* nothing emitted */
		th_fini(&t);
	}
	{
		struct th t;

		th_init(&t, th_spec(2, 1024, 1024, 4, NR_SUM_ORDERED, NULL), 5);
		assert_int_equal(send_one(&t, 0, 0, 0x51, pay[0], 1024, 0, NULL, NULL), NR_V_HELD);
		assert_int_equal(send_one(&t, 0, 0, 0x52, pay[0], 1024, 0, &c, NULL), NR_V_DROP);
		assert_int_equal(c, NR_ECTR_PSN_CONFLICT);
		assert_int_equal(th_ctr(&t, NR_ECTR_PSN_CONFLICT), 1);
		th_fini(&t);
	}
}

static void test_dup_stale_occupied(void **state)
{
	struct th t;
	float pay[2][256], sum[256];
	enum nr_engine_ctr c;
	struct th_pkt *k = NULL;
	struct nr_job_stats st;
	struct eng_rng r;

	(void)state;
	eng_rng_init(&r, seed + 5);
	rand_payload(&r, pay[0], 256);
	rand_payload(&r, pay[1], 256);
	ref_sum(sum, pay, 2, 256);
	/* pool of 2 single-packet messages */
	th_init(&t, th_spec(2, 1024, 1024, 2, NR_SUM_ORDERED, NULL), 9);
	assert_int_equal(send_one(&t, 0, 0, 0x01000000, pay[0], 1024, 0, NULL, NULL), NR_V_HELD);
	/* duplicate of an incomplete slot: dropped, contribution already in */
	assert_int_equal(send_one(&t, 0, 0, 0x01000000, pay[0], 1024, 0, &c, NULL), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_DUP_DROPPED);
	/* beyond the window (slot 0 still held by g=0): occupied */
	assert_int_equal(send_one(&t, 1, 2, 0x01000002, pay[1], 1024, 0, &c, NULL), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_OCCUPIED_DROPPED);
	/* g=1 completes first: held (COMPLETE), not emitted before g=0 */
	send_one(&t, 0, 1, 0x01000001, pay[0], 1024, 0, NULL, NULL);
	send_one(&t, 1, 1, 0x01000001, pay[1], 1024, 0, NULL, NULL);
	assert_int_equal(t.log_len, 0);
	assert_int_equal(send_one(&t, 1, 1, 0x01000001, pay[1], 1024, 0, &c, NULL), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_DUP_DROPPED);           /* COMPLETE, result follows */
	assert_int_equal(send_one(&t, 1, 0, 0x01000000, pay[1], 1024, 0, NULL, NULL), NR_V_HELD);
	assert_int_equal(t.log_len, 4);                    /* g=0 then g=1 */
	assert_int_equal(t.log[0].g, 0);
	assert_int_equal(t.log[1].g, 0);
	assert_int_equal(t.log[2].g, 1);
	assert_int_equal(t.log[3].conn, 1);
	/* duplicate of an emitted slot: answered with the stored result */
	assert_int_equal(send_one(&t, 0, 0, 0x01000000, pay[0], 1024, 0, &c, &k), NR_V_RESEND);
	assert_int_equal(c, NR_ECTR_DUP_RESENT);
	assert_memory_equal(th_payload(k), sum, 1024);
	th_pkt_free(k);
	/* release g=0 (coalesced later for g=1) */
	send_ack(&t, 0, 0, 0, 0, NULL);
	send_ack(&t, 1, 0, 0, 0, NULL);
	agg_engine_job_stats(t.e, 9, &st);
	assert_int_equal(st.next_release, 1);
	/* released: still readable, resent */
	assert_int_equal(send_one(&t, 1, 0, 0x01000000, pay[1], 1024, 0, &c, &k), NR_V_RESEND);
	assert_memory_equal(th_payload(k), sum, 1024);
	th_pkt_free(k);
	/* g=2 takes slot 0 now; then g=0 is stale */
	assert_int_equal(send_one(&t, 0, 2, 0x01000002, pay[0], 1024, 0, NULL, NULL), NR_V_HELD);
	assert_int_equal(send_one(&t, 1, 0, 0x01000000, pay[1], 1024, 0, &c, NULL), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_STALE_DROPPED);
	/* an ACK for a PSN never emitted is ignored */
	assert_int_equal(send_ack(&t, 0, 5, 0, 0, &c), NR_V_FORWARD);
	assert_int_equal(c, NR_ECTR_ACK_IGNORED);
	/* a repeated ACK of the last acknowledged g changes nothing */
	send_ack(&t, 0, 0, 0, 0, &c);
	assert_int_equal(c, NR_ECTR_ACKS_SNOOPED);
	/* an ACK from before anything acknowledged is ignored */
	send_ack(&t, 0, 0xFFFFFF, 0, 0, &c);
	assert_int_equal(c, NR_ECTR_ACK_IGNORED);
	th_fini(&t);   /* destroy frees the held g=2 contribution */
	(void)st;
}

static void test_acks_naks_coalesced(void **state)
{
	struct th t;
	float pay[256] = { 1.0f };
	enum nr_engine_ctr c;
	struct nr_job_stats st;

	(void)state;
	th_init(&t, th_spec(2, 1024, 1024, 8, NR_SUM_ORDERED, NULL), 2);
	for (uint32_t g = 0; g < 4; g++)
		for (uint32_t i = 0; i < 2; i++)
			send_one(&t, i, g, 0x01000000 + g, pay, 1024, 0, NULL, NULL);
	assert_int_equal(t.log_len, 8);
	/* RNR NAK acknowledges nothing */
	assert_int_equal(send_ack(&t, 0, 2, 0x21, 0, &c), NR_V_FORWARD);
	assert_int_equal(c, NR_ECTR_ACKS_SNOOPED);
	/* coalesced ACK of g=2 on conn 0; NAK sequence error at 3 on conn 1
	 * (acks 0..2; the box resends result 3 itself: test_monitor) */
	send_ack(&t, 0, 2, 0, 0, NULL);
	agg_engine_job_stats(t.e, 2, &st);
	assert_int_equal(st.next_release, 0);
	assert_int_equal(send_ack(&t, 1, 3, NR_AETH_NAK_PSN_SEQ_ERR, 0, &c), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_NAK_REPAIRED);
	assert_int_equal(t.nsent, 1);
	agg_engine_job_stats(t.e, 2, &st);
	assert_int_equal(st.next_release, 3);
	assert_int_equal(st.ctr[NR_ECTR_RELEASED], 3);
	/* a NAK beyond what was emitted is ignored; other NAKs acknowledge nothing */
	send_ack(&t, 1, 5, NR_AETH_NAK_PSN_SEQ_ERR, 0, &c);
	assert_int_equal(c, NR_ECTR_ACK_IGNORED);
	send_ack(&t, 0, 3, NR_AETH_NAK_REM_ACC_ERR, 0, NULL);
	agg_engine_job_stats(t.e, 2, &st);
	assert_int_equal(st.next_release, 3);
	send_ack(&t, 0, 3, 0, 0, NULL);
	send_ack(&t, 1, 3, 0, 0, NULL);
	agg_engine_job_stats(t.e, 2, &st);
	assert_int_equal(st.next_release, 4);
	assert_int_equal(st.next_emit, 4);
	th_fini(&t);
}

static void test_timeout_fails_and_frees(void **state)
{
	struct th t;
	float pay[256] = { 1.0f };
	struct nr_job_stats st;
	struct nr_job_spec *s = th_spec(3, 1024, 1024, 4, NR_SUM_ORDERED, NULL);

	(void)state;
	s->timeout_ms = 5;
	th_init(&t, s, 4);
	/* idle: never times out */
	assert_int_equal(agg_engine_poll(t.e, 3600000 * MS), 0);
	send_one(&t, 0, 0, 1, pay, 1024, 3600000 * MS, NULL, NULL);
	send_one(&t, 2, 0, 1, pay, 1024, 3600000 * MS + 1 * MS, NULL, NULL);
	assert_int_equal(agg_engine_poll(t.e, 3600000 * MS + 5 * MS), 0);
	assert_int_equal(t.held, 2);
	assert_int_equal(agg_engine_poll(t.e, 3600000 * MS + 6 * MS), 1);
	assert_int_equal(t.held, 0);
	agg_engine_job_stats(t.e, 4, &st);
	assert_int_equal(st.state, NR_JOB_FAILED);
	assert_int_equal(st.ctr[NR_ECTR_JOB_TIMEOUTS], 1);
	assert_string_equal(st.reason, "job 4: no progress for 5 ms: slot g=0 has 2 of 3 contributions "
			    "(missing: connection 1 (10.0.0.2 -> 10.0.0.3 qpn 0x202))");
	assert_int_equal(agg_engine_poll(t.e, 3700000 * MS), 0);
	th_fini(&t);

	/* emitted but never ACKed also times out, naming the silent receiver */
	s = th_spec(2, 1024, 1024, 4, NR_SUM_ORDERED, NULL);
	s->timeout_ms = 10;
	th_init(&t, s, 5);
	send_one(&t, 0, 0, 1, pay, 1024, 0, NULL, NULL);
	send_one(&t, 1, 0, 1, pay, 1024, 0, NULL, NULL);
	send_ack(&t, 1, 0, 0, 5 * MS, NULL);
	assert_int_equal(agg_engine_poll(t.e, 14 * MS), 0);   /* the ACK was progress */
	assert_int_equal(agg_engine_poll(t.e, 16 * MS), 1);
	agg_engine_job_stats(t.e, 5, &st);
	assert_string_equal(st.reason, "job 5: no progress for 10 ms: slot g=0 emitted, waiting for "
			    "ACK from connection 0 (10.0.0.1 -> 10.0.0.2 qpn 0x201)");
	th_fini(&t);
}

static void test_job_del_frees(void **state)
{
	struct th t;
	float pay[256] = { 1.0f };
	struct nr_job_spec *s2 = th_spec(2, 1024, 1024, 4, NR_SUM_ORDERED, NULL);
	char err[256];
	uint64_t ctr[NR_ECTR_MAX];

	(void)state;
	th_init(&t, th_spec(3, 1024, 1024, 4, NR_SUM_STREAMING, NULL), 11);
	send_one(&t, 0, 0, 1, pay, 1024, 0, NULL, NULL);
	send_one(&t, 1, 1, 2, pay, 1024, 0, NULL, NULL);
	send_one(&t, 2, 1, 2, pay, 1024, 0, NULL, NULL);
	assert_int_equal(t.held, 3);
	/* the same connections cannot be registered twice; the same id neither */
	assert_int_equal(agg_engine_job_add(t.e, 12, t.spec, 0, NULL, err, sizeof(err)), -EEXIST);
	assert_int_equal(agg_engine_job_add(t.e, 11, s2, 0, NULL, err, sizeof(err)), -EEXIST);
	assert_int_equal(agg_engine_job_del(t.e, 11), 0);
	assert_int_equal(t.held, 0);
	assert_int_equal(t.freed, 3);
	assert_int_equal(agg_engine_job_del(t.e, 11), -ENOENT);
	/* counters survive the job; its connections are unknown again */
	agg_engine_counters(t.e, ctr);
	assert_int_equal(ctr[NR_ECTR_AGGREGATED], 3);
	assert_int_equal(send_one(&t, 0, 0, 1, pay, 1024, 0, NULL, NULL), NR_V_FORWARD);
	/* and can be registered again */
	assert_int_equal(agg_engine_job_add(t.e, 12, t.spec, 0, NULL, err, sizeof(err)), 0);
	assert_int_equal(send_one(&t, 0, 0, 1, pay, 1024, 0, NULL, NULL), NR_V_HELD);
	free(s2);
	th_fini(&t);
}

static void test_ecn_and_result_key(void **state)
{
	struct nr_job_spec *s = th_spec(3, 1024, 1024, 4, NR_SUM_STREAMING, NULL);
	struct th t;
	float pay[256] = { 1.0f };
	struct nr_flow f;
	struct nr_build_args a = { .opcode = NR_OP_RC_WRITE_ONLY_IMM, .imm = 0x01000007,
				   .dma_len = 1024 };
	struct th_pkt *k;
	struct nr_pkt p2;
	enum nr_engine_ctr c;

	(void)state;
	s->result_key = 0xA5A5A5A5;
	th_init(&t, s, 6);
	send_one(&t, 0, 0, 0x01000007, pay, 1024, 0, NULL, NULL);
	th_flow_data(t.spec, 1, &f);
	f.tos = 0x02 << 2 | NR_ECN_CE;
	k = th_build(&f, &a, pay, 1024);
	assert_int_equal(k->p.ecn, NR_ECN_CE);
	assert_int_equal(th_input(&t, k, 0, NULL), NR_V_HELD);
	send_one(&t, 2, 0, 0x01000007, pay, 1024, 0, NULL, NULL);
	assert_int_equal(t.log_len, 3);
	for (int i = 0; i < 3; i++) {
		struct th_pkt *e = t.log[i].pkt;

		assert_true(t.log[i].ecn_ce);
		assert_int_equal(e->p.imm, 0x01000007 ^ 0xA5A5A5A5);
		/* the frame itself carries the new immediate */
		assert_int_equal(nr_parse(e->frame, e->len, &p2), NR_PKT_ROCE);
		assert_int_equal(p2.imm, 0x01000007 ^ 0xA5A5A5A5);
		assert_true(th_pf(e, 0) == 3.0f);
	}
	/* the box's helper: a Not-ECT frame (connection 0's) is never marked
	 * (RFC 3168); an ECN-capable one gets CE and a fixed IP checksum */
	{
		struct th_pkt *e = t.log[0].pkt;
		struct nr_ipv4_hdr *ip = (struct nr_ipv4_hdr *)(e->frame + e->p.l3_off);

		assert_int_equal(ip->tos & 3, NR_ECN_NOT_ECT);
		assert_false(nr_frame_set_ce(e->frame, &e->p));
		assert_int_equal(ip->tos & 3, NR_ECN_NOT_ECT);
		for (uint8_t ect = NR_ECN_ECT1; ect <= NR_ECN_ECT0; ect++) {
			ip->tos = (uint8_t)(ip->tos & ~3) | ect;
			assert_true(nr_frame_set_ce(e->frame, &e->p));
			assert_int_equal(ip->tos & 3, NR_ECN_CE);
			assert_int_equal(ip->check, nr_ipv4_cksum(ip));
			assert_false(nr_frame_set_ce(e->frame, &e->p));     /* CE stays CE */
		}
	}
	/* a duplicate gets the result, the keyed immediate and, when its frame is
	 * ECN-capable, CE; a Not-ECT duplicate gets no CE */
	a.opcode = NR_OP_RC_WRITE_ONLY_IMM;
	for (int ect = 1; ect >= 0; ect--) {
		th_flow_data(t.spec, 0, &f);
		f.tos = ect ? NR_ECN_ECT0 : NR_ECN_NOT_ECT;
		k = th_build(&f, &a, pay, 1024);
		assert_int_equal(th_input(&t, k, 0, &c), NR_V_RESEND);
		assert_int_equal(nr_parse(k->frame, k->len, &p2), NR_PKT_ROCE);
		assert_int_equal(p2.imm, 0x01000007 ^ 0xA5A5A5A5);
		assert_int_equal(p2.ecn, ect ? NR_ECN_CE : NR_ECN_NOT_ECT);
		{
			struct nr_ipv4_hdr *ip = (struct nr_ipv4_hdr *)(k->frame + p2.l3_off);
			assert_int_equal(ip->check, nr_ipv4_cksum(ip));
		}
		assert_true(th_pf(k, 0) == 3.0f);
		th_pkt_free(k);
	}
	th_fini(&t);
}

static void test_nan_inf(void **state)
{
	struct th t;
	float p0[4] = { INFINITY, NAN, 1.0f, -0.0f }, p1[4] = { -INFINITY, 1.0f, INFINITY, -0.0f };
	float p2[4] = { 1.0f, 2.0f, 3.0f, -0.0f };

	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		th_init(&t, th_spec(3, 256, 16, 2, (uint8_t)mode, NULL), 1);
		send_one(&t, 1, 0, 9, p1, 16, 0, NULL, NULL);
		send_one(&t, 0, 0, 9, p0, 16, 0, NULL, NULL);
		send_one(&t, 2, 0, 9, p2, 16, 0, NULL, NULL);
		assert_int_equal(t.log_len, 3);
		for (int i = 0; i < 3; i++) {
			float r[4];

			memcpy(r, th_payload(t.log[i].pkt), sizeof(r));

			assert_true(isnan(r[0]));         /* inf + -inf */
			assert_true(isnan(r[1]));         /* NaN propagates */
			assert_true(isinf(r[2]) && r[2] > 0);
			assert_true(r[3] == 0.0f && signbit(r[3]));
		}
		th_fini(&t);
	}
}

/*
 * A job of reduce max: every result is the rank-order max (agg_sum.h's rule:
 * rank 0's NaN wins, a later NaN is passed over, of -0 and +0 the first stays),
 * in both modes, whatever the arrival order.
 */
static void test_reduce_max(void **state)
{
	struct th t;
	float p0[4] = { 1.0f, NAN, -0.0f, -5.0f }, p1[4] = { 3.0f, 7.0f, 0.0f, NAN };
	float p2[4] = { 2.0f, 9.0f, 0.0f, -4.0f };

	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		struct nr_job_spec *s = th_spec(3, 256, 16, 2, (uint8_t)mode, NULL);

		s->reduce = NR_REDUCE_MAX;
		th_init(&t, s, 1);
		send_one(&t, 0, 0, 9, p0, 16, 0, NULL, NULL);
		send_one(&t, 2, 0, 9, p2, 16, 0, NULL, NULL);
		send_one(&t, 1, 0, 9, p1, 16, 0, NULL, NULL);
		assert_int_equal(t.log_len, 3);
		for (int i = 0; i < 3; i++) {
			float r[4];

			memcpy(r, th_payload(t.log[i].pkt), sizeof(r));
			/* (rank 0 arrives first: streaming starts from it as ordered does) */
			assert_true(r[0] == 3.0f);
			assert_true(isnan(r[1]));                     /* rank 0's NaN is the start */
			assert_true(r[2] == 0.0f && signbit(r[2]));   /* rank 0's -0 stays */
			assert_true(r[3] == -4.0f);                   /* rank 1's NaN passed over */
		}
		th_fini(&t);
	}
}

/*
 * A job of reduce bor as an all-gather: 3 ranks, each sending random words in
 * its own third of the message and zeros elsewhere (its third holds -0.0,
 * signalling and quiet NaNs, Inf); every rank gets the concatenation back byte
 * for byte, in both modes and two arrival orders.
 */
static void test_reduce_bor(void **state)
{
	enum { N = 3, WORDS = 48, SHARD = WORDS / N };
	static const uint32_t special[] = { 0x80000000u, 0x7F800001u, 0xFF800001u, 0x7FC00000u,
					    0xFFC00000u, 0x7F800000u, 0x00000001u };
	static const uint32_t order[2][N] = { { 2, 0, 1 }, { 0, 1, 2 } };
	uint32_t pay[N][WORDS], want[WORDS];
	struct eng_rng r;

	(void)state;
	eng_rng_init(&r, seed + 11);
	for (int mode = 0; mode < 2; mode++)
		for (int o = 0; o < 2; o++) {
			struct nr_job_spec *s = th_spec(N, 256, WORDS * 4, 2, (uint8_t)mode, NULL);
			struct th t;

			memset(pay, 0, sizeof(pay));
			for (uint32_t i = 0; i < N; i++)
				for (uint32_t w = 0; w < SHARD; w++)
					pay[i][i * SHARD + w] = w < sizeof(special) / 4
									? special[(w + i) % 7]
									: eng_rand(&r);
			for (uint32_t i = 0; i < N; i++)
				memcpy(&want[i * SHARD], &pay[i][i * SHARD], SHARD * 4);
			s->reduce = NR_REDUCE_BOR;
			th_init(&t, s, 1);
			for (uint32_t k = 0; k < N; k++)
				assert_int_equal(send_one(&t, order[o][k], 0, 9,
							  (const float *)pay[order[o][k]],
							  WORDS * 4, 0, NULL, NULL),
						 NR_V_HELD);
			assert_int_equal(t.log_len, N);
			for (uint32_t i = 0; i < N; i++) {
				assert_int_equal(t.log[i].conn, i);
				assert_memory_equal(th_payload(t.log[i].pkt), want, WORDS * 4);
			}
			th_fini(&t);
		}
}

/* A multi-packet message (FIRST, MIDDLE, LAST_IMM with a short last packet)
 * across the 24-bit PSN wrap with a pool that does not divide 2^24. */
static void test_multi_packet_wrap(void **state)
{
	uint32_t ipsn[2] = { 0xFFFFFD, 0xFFFFF0 };
	struct th t;
	float pay[2][256];
	struct eng_rng r;
	uint32_t emitted = 0;

	(void)state;
	eng_rng_init(&r, seed + 7);
	/* msg 600 B over MTU 256: 256 + 256 + 88; pool 2 msgs = 6 packets */
	th_init(&t, th_spec(2, 256, 600, 2, NR_SUM_ORDERED, ipsn), 1);
	for (uint32_t m = 0; m < 12; m++) {
		for (uint32_t q = 0; q < 3; q++) {
			uint32_t g = m * 3 + q, len = q < 2 ? 256 : 88;
			uint8_t op = q == 0 ? NR_OP_RC_WRITE_FIRST :
				     q == 1 ? NR_OP_RC_WRITE_MIDDLE : NR_OP_RC_WRITE_LAST_IMM;
			float sum[256];

			rand_payload(&r, pay[0], 64);
			rand_payload(&r, pay[1], 64);
			ref_sum(sum, pay, 2, 64);
			for (uint32_t i = 0; i < 2; i++) {
				struct th_pkt *k = th_data(t.spec, i, nr_psn_add(ipsn[i], g), op,
							   m, pay[i], len);
				assert_int_equal(th_input(&t, k, 0, NULL), NR_V_HELD);
			}
			assert_int_equal(t.log_len, emitted + 2);
			for (uint32_t i = 0; i < 2; i++) {
				assert_int_equal(t.log[emitted + i].g, g);
				assert_int_equal(t.log[emitted + i].pkt->p.psn, nr_psn_add(ipsn[i], g));
				assert_memory_equal(th_payload(t.log[emitted + i].pkt), sum, len);
			}
			emitted += 2;
			send_ack(&t, 0, g, 0, 0, NULL);
			send_ack(&t, 1, g, 0, 0, NULL);
		}
	}
	assert_int_equal(th_ctr(&t, NR_ECTR_RELEASED), 36);
	assert_int_equal(th_ctr(&t, NR_ECTR_OCCUPIED_DROPPED), 0);
	th_fini(&t);
}

/* Contributor bitmaps of more than one word: N = 65, 100 and 256. */
static void test_wide_bitmap(void **state)
{
	static const uint32_t ns[] = { 65, 100, NR_MAX_CONNS };
	struct eng_rng r;

	(void)state;
	eng_rng_init(&r, seed + 11);
	for (unsigned c = 0; c < 3; c++) {
		uint32_t n = ns[c], *perm = malloc(n * sizeof(*perm));
		float (*pay)[256] = malloc(n * sizeof(*pay)), sum[64];
		enum nr_engine_ctr ctr;
		struct th t;

		th_init(&t, th_spec(n, 256, 256, 2, NR_SUM_ORDERED, NULL), 1);
		for (uint32_t i = 0; i < n; i++) {
			perm[i] = i;
			rand_payload(&r, pay[i], 64);
		}
		for (uint32_t i = n - 1; i > 0; i--) {       /* random arrival order */
			uint32_t k = eng_rand(&r) % (i + 1), x = perm[i];
			perm[i] = perm[k];
			perm[k] = x;
		}
		for (uint32_t k = 0; k < 64; k++) {
			float a = pay[0][k];
			for (uint32_t i = 1; i < n; i++)
				a = a + pay[i][k];
			sum[k] = a;
		}
		for (uint32_t q = 0; q + 1 < n; q++) {
			assert_int_equal(send_one(&t, perm[q], 0, 5, pay[perm[q]], 256, 0, NULL, NULL),
					 NR_V_HELD);
			/* a duplicate of any connection so far is caught by its own bit */
			uint32_t d = perm[eng_rand(&r) % (q + 1)];
			assert_int_equal(send_one(&t, d, 0, 5, pay[d], 256, 0, &ctr, NULL), NR_V_DROP);
			assert_int_equal(ctr, NR_ECTR_DUP_DROPPED);
		}
		assert_int_equal(t.log_len, 0);
		send_one(&t, perm[n - 1], 0, 5, pay[perm[n - 1]], 256, 0, NULL, NULL);
		assert_int_equal(t.log_len, n);
		for (uint32_t i = 0; i < n; i++) {
			assert_int_equal(t.log[i].conn, i);
			assert_memory_equal(th_payload(t.log[i].pkt), sum, 256);
		}
		th_fini(&t);
		free(perm);
		free(pay);
	}
}

struct bad_case {
	const char *want;
	void (*mutate)(struct nr_job_spec *s);
};

static void m_n0(struct nr_job_spec *s) { s->n_conns = 0; }
static void m_n(struct nr_job_spec *s) { s->n_conns = NR_MAX_CONNS + 1; }
static void m_mtu(struct nr_job_spec *s) { s->mtu = 1500; }
static void m_msg(struct nr_job_spec *s) { s->msg_size = 1022; }
static void m_msg0(struct nr_job_spec *s) { s->msg_size = 0; }
static void m_pool_odd(struct nr_job_spec *s) { s->pool_msgs = 3; }
static void m_pool_big(struct nr_job_spec *s) { s->pool_msgs = 1u << 22; }
static void m_pool_mem(struct nr_job_spec *s) { s->msg_size = 1u << 26; s->pool_msgs = 4; }
static void m_to(struct nr_job_spec *s) { s->timeout_ms = 0; }
static void m_mode(struct nr_job_spec *s) { s->mode = 2; }
static void m_qpn(struct nr_job_spec *s) { s->conns[2].dst_qpn = 0x1000000; }
static void m_sqpn(struct nr_job_spec *s) { s->conns[1].src_qpn = 0; }
static void m_ip(struct nr_job_spec *s) { s->conns[0].src_ip = 0; }
static void m_psn(struct nr_job_spec *s) { s->conns[3].ipsn = 1u << 24; }
static void m_dup_dst(struct nr_job_spec *s) { s->conns[3].dst_ip = s->conns[1].dst_ip;
					      s->conns[3].dst_qpn = s->conns[1].dst_qpn; }
static void m_dup_src(struct nr_job_spec *s) { s->conns[2].src_ip = s->conns[0].src_ip;
					      s->conns[2].src_qpn = s->conns[0].src_qpn; }
static void m_cross(struct nr_job_spec *s) { s->conns[1].src_qpn = s->conns[0].dst_qpn; }
static void m_sel(struct nr_job_spec *s)
{
	s->selective = 2;
}

static void test_validate(void **state)
{
	static const struct bad_case cases[] = {
		{ "n_conns: 0 is out of range (1..256)", m_n0 },
		{ "n_conns: 257 is out of range", m_n },
		{ "mtu: 1500 is not a RoCE path MTU", m_mtu },
		{ "msg_size: 1022 must be a multiple of 4", m_msg },
		{ "msg_size: 0 must be", m_msg0 },
		{ "pool_msgs: 3 must be even", m_pool_odd },
		{ "exceed the PSN window", m_pool_big },
		{ "MiB of pool, the limit is 256 MiB", m_pool_mem },
		{ "timeout_ms: 0 is out of range", m_to },
		{ "mode: 2 is not a sum mode", m_mode },
		{ "conns[2].dst_qpn: 0x1000000 is not a 24-bit QPN", m_qpn },
		{ "conns[1].src_qpn: 0x0 is not a 24-bit QPN", m_sqpn },
		{ "conns[0].src_ip: 0.0.0.0", m_ip },
		{ "conns[3].ipsn: 0x1000000 is not a 24-bit PSN", m_psn },
		{ "conns[3]: receiver 10.0.0.3 qpn 0x202 already used by conns[1]", m_dup_dst },
		{ "conns[2]: sender 10.0.0.1 qpn 0x100 already used by conns[0]", m_dup_src },
		{ "is the receiving QP of conns[0]", m_cross },
		{ "selective: 2: 0 (go-back-N) or 1 (selective repeat)", m_sel },
	};
	char err[256];

	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct nr_job_spec *s = th_spec(4, 1024, 4096, 8, NR_SUM_ORDERED, NULL);
		struct agg_engine *e = agg_engine_create(NULL);

		assert_int_equal(nr_job_spec_validate(s, err, sizeof(err)), 0);
		cases[c].mutate(s);
		err[0] = 0;
		assert_int_equal(nr_job_spec_validate(s, err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[c].want)) {
			print_error("case %zu: got \"%s\", want \"%s\"\n", c, err, cases[c].want);
			fail();
		}
		assert_int_equal(agg_engine_job_add(e, 1, s, 0, NULL, err, sizeof(err)), -EINVAL);
		agg_engine_destroy(e);
		free(s);
	}
	/* channels: the spec names each connection by channel; valid, the
	 * engine still takes one channel a job, and channel c extracted is one */
	{
		struct nr_job_spec *two = th_spec(4, 1024, 4096, 8, NR_SUM_ORDERED, NULL);
		struct nr_job_spec *s = calloc(1, nr_job_spec_size(8)), *one = calloc(1, nr_job_spec_size(4));
		struct agg_engine *e = agg_engine_create(NULL);

		memcpy(s, two, nr_job_spec_size(4));
		s->n_channels = 2;
		for (unsigned i = 0; i < 4; i++) {
			s->conns[4 + i] = two->conns[i];
			s->conns[4 + i].src_qpn += 0x1000;
			s->conns[4 + i].dst_qpn += 0x1000;
		}
		assert_int_equal(nr_job_spec_validate(s, err, sizeof(err)), 0);
		assert_int_equal(agg_engine_job_add(e, 1, s, 0, NULL, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "job 1: 2 channels; an engine runs one channel as a job"));
		nr_job_channel_spec(s, 1, one);
		assert_int_equal(nr_job_channels(one), 1);
		assert_memory_equal(one->conns, &s->conns[4], 4 * sizeof(s->conns[0]));
		assert_int_equal(agg_engine_job_add(e, 1, one, 0, NULL, err, sizeof(err)), 0);
		s->conns[5].dst_qpn = s->conns[1].dst_qpn;
		assert_int_equal(nr_job_spec_validate(s, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "channels[1].conns[1]: receiver 10.0.0.3 qpn 0x202 already used by channels[0].conns[1]"));
		s->conns[5].dst_qpn += 0x1000;
		s->conns[6].dst_qpn = 0;
		assert_int_equal(nr_job_spec_validate(s, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "channels[1].conns[2].dst_qpn: 0x0 is not a 24-bit QPN"));
		s->n_channels = NR_MAX_CHANNELS + 1;
		assert_int_equal(nr_job_spec_validate(s, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "n_channels: 17 is out of range (1..16)"));
		agg_engine_destroy(e);
		free(one);
		free(s);
		free(two);
	}
	/* N = 1 (a ring of one) and the largest N are fine */
	{
		struct nr_job_spec *s = th_spec(1, 4096, 4, 2, NR_SUM_ORDERED, NULL);
		assert_int_equal(nr_job_spec_validate(s, err, sizeof(err)), 0);
		free(s);
		s = th_spec(NR_MAX_CONNS, 4096, 1u << 20, 4, NR_SUM_STREAMING, NULL);
		assert_int_equal(nr_job_spec_validate(s, err, sizeof(err)), 0);
		free(s);
	}
}

static void test_kernel_override(void **state)
{
	struct agg_engine *e = agg_engine_create(NULL);

	(void)state;
	assert_int_equal(agg_engine_set_kernel(e, NR_KERNEL_SCALAR), 0);
	assert_string_equal(agg_engine_kernel_name(e), "scalar");
	if (agg_sum_avx512_supported()) {
		assert_int_equal(agg_engine_set_kernel(e, NR_KERNEL_AVX512), 0);
		assert_string_equal(agg_engine_kernel_name(e), "avx512");
	} else {
		printf("avx512: not supported on this CPU, scalar only\n");
		assert_int_equal(agg_engine_set_kernel(e, NR_KERNEL_AVX512), -ENOTSUP);
	}
	for (int i = 0; i < NR_ECTR_MAX; i++) {
		assert_non_null(nr_engine_ctr_names[i]);
		assert_non_null(nr_engine_ctr_help[i]);
	}
	assert_string_equal(nr_engine_ctr_names[NR_ECTR_TAG_MISMATCH], "tag_mismatch");
	agg_engine_destroy(e);
}

/*
 * agg_engine_input_burst has the effect of one agg_engine_input per packet in
 * order: one random schedule (N=5, shuffled arrival, duplicates, packets of
 * an unknown QPN, a length mismatch, ACKs, PSNs wrapping) through two engines,
 * one packet at a time and in bursts of 1..40; verdicts, counters moved,
 * emissions (connection, g, payload bytes) and counters all equal.
 */
static void test_burst_equals_single(void **state)
{
	enum { N = 5, ROUNDS = 60, MAXP = ROUNDS * (2 * N + N + 3) };
	uint32_t ipsn[N];
	struct th a, b;
	struct th_pkt **ka = calloc(MAXP, sizeof(*ka)), **kb = calloc(MAXP, sizeof(*kb));
	enum agg_verdict *va = calloc(MAXP, sizeof(*va)), *vb = calloc(MAXP, sizeof(*vb));
	enum nr_engine_ctr *ca = calloc(MAXP, sizeof(*ca)), *cb = calloc(MAXP, sizeof(*cb));
	uint32_t np = 0;
	struct eng_rng rng;
	uint64_t cta[NR_ECTR_MAX], ctb[NR_ECTR_MAX];

	(void)state;
	eng_rng_init(&rng, 7);
	for (uint32_t i = 0; i < N; i++)
		ipsn[i] = NR_PSN_MASK - 20 + i * 3;           /* wraps within the run */
	th_init(&a, th_spec(N, 256, 256, 8, NR_SUM_ORDERED, ipsn), 1);
	th_init(&b, th_spec(N, 256, 256, 8, NR_SUM_ORDERED, ipsn), 1);
	for (uint32_t g = 0; g < ROUNDS; g++) {
		uint32_t order[N];

		for (uint32_t i = 0; i < N; i++)
			order[i] = i;
		for (uint32_t i = N - 1; i > 0; i--) {
			uint32_t j = eng_rand(&rng) % (i + 1), x = order[i];

			order[i] = order[j];
			order[j] = x;
		}
		for (uint32_t r = 0; r < N; r++) {
			uint32_t i = order[r], len = 256;
			float pay[64];

			for (uint32_t f = 0; f < 64; f++)
				pay[f] = (float)(eng_rand(&rng) % 1000) / 8.0f;
			for (int copies = eng_rand(&rng) % 8 == 0 ? 2 : 1; copies > 0; copies--) {
				uint32_t psn = nr_psn_add(ipsn[i], g);

				ka[np] = th_data(a.spec, i, psn, NR_OP_RC_WRITE_ONLY_IMM, g, pay, len);
				kb[np++] = th_data(b.spec, i, psn, NR_OP_RC_WRITE_ONLY_IMM, g, pay, len);
			}
		}
		if (g == 17) {                                   /* a length that differs */
			float pay[32] = { 0 };

			ka[np] = th_data(a.spec, 2, nr_psn_add(ipsn[2], g), NR_OP_RC_WRITE_ONLY_IMM, g, pay, 128);
			kb[np++] = th_data(b.spec, 2, nr_psn_add(ipsn[2], g), NR_OP_RC_WRITE_ONLY_IMM, g, pay, 128);
		}
		if (g % 5 == 0) {                                /* unknown QPN */
			struct nr_flow f;
			struct nr_build_args ar = { .opcode = NR_OP_RC_WRITE_ONLY, .psn = g,
						    .dma_len = 64 };
			float pay[16] = { 1 };

			th_flow_data(a.spec, 0, &f);
			f.dqpn = 0x777;
			ka[np] = th_build(&f, &ar, pay, 64);
			kb[np++] = th_build(&f, &ar, pay, 64);
		}
		for (uint32_t i = 0; i < N; i++) {               /* ACKs, some lost */
			if (eng_rand(&rng) % 4 == 0 && g + 1 < ROUNDS)
				continue;
			ka[np] = th_ack(a.spec, i, nr_psn_add(ipsn[i], g), 0);
			kb[np++] = th_ack(b.spec, i, nr_psn_add(ipsn[i], g), 0);
		}
	}
	assert_true(np <= MAXP);
	for (uint32_t k = 0; k < np; k++) {
		ca[k] = cb[k] = NR_ECTR_MAX;
		va[k] = th_input(&a, ka[k], k, &ca[k]);
	}
	for (uint32_t k = 0; k < np;) {
		uint32_t m = 1 + eng_rand(&rng) % 40;
		struct nr_pkt *pk[40];
		uint8_t *fr[40];
		void *hd[40];

		if (m > np - k)
			m = np - k;
		for (uint32_t q = 0; q < m; q++) {
			pk[q] = &kb[k + q]->p;
			fr[q] = kb[k + q]->frame;
			hd[q] = kb[k + q];
			kb[k + q]->state = TH_HELD;   /* as th_input: it may come back at once */
			b.held++;
		}
		agg_engine_input_burst(b.e, pk, fr, hd, m, k, &vb[k], &cb[k]);
		for (uint32_t q = 0; q < m; q++)
			if (vb[k + q] != NR_V_HELD) {
				kb[k + q]->state = TH_TEST;
				b.held--;
			}
		k += m;
	}
	for (uint32_t k = 0; k < np; k++) {
		assert_int_equal(va[k], vb[k]);
		assert_int_equal(ca[k], cb[k]);
	}
	assert_int_equal(a.log_len, b.log_len);
	assert_true(a.log_len >= (ROUNDS - 2) * N);
	for (uint32_t k = 0; k < a.log_len; k++) {
		assert_int_equal(a.log[k].conn, b.log[k].conn);
		assert_int_equal(a.log[k].g, b.log[k].g);
		assert_int_equal(a.log[k].pkt->p.pay_len, b.log[k].pkt->p.pay_len);
		assert_memory_equal(th_payload(a.log[k].pkt), th_payload(b.log[k].pkt),
				    a.log[k].pkt->p.pay_len);
	}
	agg_engine_counters(a.e, cta);
	agg_engine_counters(b.e, ctb);
	assert_memory_equal(cta, ctb, sizeof(cta));
	assert_true(cta[NR_ECTR_DUP_DROPPED] + cta[NR_ECTR_DUP_RESENT] > 0);
	assert_true(cta[NR_ECTR_UNKNOWN_CONN] > 0);
	assert_true(cta[NR_ECTR_LEN_MISMATCH] > 0);
	for (uint32_t k = 0; k < np; k++) {
		if (ka[k]->state == TH_TEST)
			th_pkt_free(ka[k]);
		if (kb[k]->state == TH_TEST)
			th_pkt_free(kb[k]);
	}
	th_fini(&a);
	th_fini(&b);
	free(ka);
	free(kb);
	free(va);
	free(vb);
	free(ca);
	free(cb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ordered_basic),
		cmocka_unit_test(test_tag_mismatch_fails_job),
		cmocka_unit_test(test_len_mismatch_flags),
		cmocka_unit_test(test_spoofed_and_unknown),
		cmocka_unit_test(test_bound_connections),
		cmocka_unit_test(test_psn_conflict_fails_job),
		cmocka_unit_test(test_dup_stale_occupied),
		cmocka_unit_test(test_acks_naks_coalesced),
		cmocka_unit_test(test_timeout_fails_and_frees),
		cmocka_unit_test(test_job_del_frees),
		cmocka_unit_test(test_ecn_and_result_key),
		cmocka_unit_test(test_nan_inf),
		cmocka_unit_test(test_reduce_max),
		cmocka_unit_test(test_reduce_bor),
		cmocka_unit_test(test_multi_packet_wrap),
		cmocka_unit_test(test_wide_bitmap),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_kernel_override),
		cmocka_unit_test(test_burst_equals_single),
	};

	seed = eng_seed("test_engine");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
