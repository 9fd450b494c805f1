/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Short slots (dataplane/engine/agg_short.c): a slot completed with one
 * sender's contribution missing, within the job's bound.  A slot completed
 * short is emitted exactly once per connection, in PSN order, the missing
 * connection's result built by the box; no NAK goes to its sender; its late
 * retransmission is answered with the stored result and not summed; the
 * bound per message is never exceeded; a message not marked with the job's
 * DSCP, a first packet and a slot with two missing contributions are never
 * shortened (their senders get NAKs); the counters account for every short
 * slot (emitted = completed * N + short_slots * (N - 1)); a selective job's
 * held-back NAK goes out selective.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "eng_harness.h"

#define MS 1000000ull
#define N 4
#define MTU 256
#define PKTS 8                  /* packets of a message */
#define DSCP 10

static const uint32_t ipsn[N] = { 100, 0xFFFFFC, 7, 5000 };

static uint8_t opcode_at(uint32_t g)
{
	if (g % PKTS == 0)
		return NR_OP_RC_WRITE_FIRST;
	return g % PKTS == PKTS - 1 ? NR_OP_RC_WRITE_LAST_IMM : NR_OP_RC_WRITE_MIDDLE;
}

/* Element value of conn's packet g: small integers, exact in FP32. */
static float val(uint32_t conn, uint32_t g)
{
	return (float)((conn + 1) * (g + 1));
}

/*
 * The RETH VA of conn's message holding g: its receive ring at 0x10000 +
 * conn * 0x100000, RING messages of PKTS * MTU bytes, message m in ring slot
 * m mod RING (the library's layout: every rank's ring alike), plus skew[conn]
 * (a host that breaks the layout).
 */
#define RING 2
static uint64_t skew[N];

static uint64_t va_of(uint32_t conn, uint32_t g)
{
	return 0x10000 + conn * 0x100000ull + (g / PKTS % RING) * PKTS * MTU + skew[conn];
}

/* conn's packet g, marked with DSCP dscp, from its UDP source port + spray; the verdict. */
static enum agg_verdict data_sp(struct th *t, uint32_t conn, uint32_t g, uint8_t dscp, uint16_t spray,
			       uint64_t now, enum nr_engine_ctr *ctr)
{
	float pay[MTU / 4];
	struct nr_flow f;
	struct nr_build_args a = {
		.opcode = opcode_at(g), .psn = nr_psn_add(ipsn[conn], g),
		.imm = 0x0A000000 | g / PKTS, .va = va_of(conn, g), .rkey = 0x1234 + conn,
		.dma_len = PKTS * MTU,
	};
	struct th_pkt *k;
	enum agg_verdict v;

	for (uint32_t i = 0; i < MTU / 4; i++)
		pay[i] = val(conn, g);
	th_flow_data(t->spec, conn, &f);
	f.tos = (uint8_t)(dscp << 2);
	f.sport = (uint16_t)(f.sport + spray);
	k = th_build(&f, &a, pay, MTU);
	k->origin = (uint16_t)(10 + conn);
	v = th_input(t, k, now, ctr);
	if (v != NR_V_HELD)
		th_pkt_free(k);
	return v;
}

static enum agg_verdict data(struct th *t, uint32_t conn, uint32_t g, uint8_t dscp, uint64_t now)
{
	return data_sp(t, conn, g, dscp, 0, now, NULL);
}

static void ack(struct th *t, uint32_t conn, uint32_t g, uint64_t now)
{
	struct th_pkt *k = th_ack(t->spec, conn, nr_psn_add(ipsn[conn], g), 0x1F);

	k->origin = (uint16_t)(20 + conn);
	assert_int_equal(th_input(t, k, now, NULL), NR_V_FORWARD);
	th_pkt_free(k);
}

static void init_first(struct th *t, uint32_t job, uint32_t ppm, uint8_t scale, uint8_t mode,
		       uint8_t first)
{
	struct nr_job_spec *s = th_spec(N, MTU, PKTS * MTU, 4, mode, ipsn);

	memset(skew, 0, sizeof(skew));
	s->short_first = first;
	s->short_ppm = ppm;
	s->short_dscp = DSCP;
	s->short_scale = scale;
	s->result_key = 0x5A5A0000;
	th_init(t, s, job);
}

static void init(struct th *t, uint32_t job, uint32_t ppm, uint8_t scale, uint8_t mode)
{
	init_first(t, job, ppm, scale, mode, 0);
}

/*
 * Slots from..to-1: every connection sends its packet (rank order), except
 * those in lost[] ({conn, g} pairs, n_lost), then every receiver ACKs what
 * was emitted.
 */
struct loss { uint32_t conn, g; };

static bool is_lost(const struct loss *lost, unsigned n_lost, uint32_t conn, uint32_t g)
{
	for (unsigned k = 0; k < n_lost; k++)
		if (lost[k].conn == conn && lost[k].g == g)
			return true;
	return false;
}

static void run(struct th *t, uint32_t from, uint32_t to, const struct loss *lost, unsigned n_lost,
		uint8_t dscp, uint64_t now)
{
	struct nr_job_stats st;

	for (uint32_t g = from; g < to; g++) {
		for (uint32_t i = 0; i < N; i++)
			if (!is_lost(lost, n_lost, i, g))
				data(t, i, g, dscp, now);
		assert_int_equal(agg_engine_job_stats(t->e, t->job, &st), 0);
		for (uint32_t i = 0; st.next_emit > 0 && i < N; i++)
			ack(t, i, st.next_emit - 1, now);
	}
}

static float sum_of(uint32_t g, uint32_t left_out)
{
	float s = 0;

	for (uint32_t i = 0; i < N; i++)
		if (i != left_out)
			s += val(i, g);
	return s;
}

/* Every connection's results: once per g, in g order, each the right sum. */
static void check_stream(const struct th *t, uint32_t conn, uint32_t upto,
			 const struct loss *lost, unsigned n_lost, bool scale)
{
	uint32_t next = 0;

	for (uint32_t k = 0; k < t->log_len; k++) {
		const struct th_emit *em = &t->log[k];
		uint32_t left = N;
		float want;

		if (em->conn != conn)
			continue;
		while (is_lost(lost, n_lost, conn, next))
			next++;         /* its result went through ops.send */
		assert_int_equal(em->g, next);
		for (unsigned q = 0; q < n_lost; q++)
			if (lost[q].g == next)
				left = lost[q].conn;
		want = sum_of(next, left);
		if (left != N && scale)
			want *= (float)N / (float)(N - 1);
		assert_true(th_pf(em->pkt, 0) == want && th_pf(em->pkt, MTU / 4 - 1) == want);
		next++;
	}
	while (is_lost(lost, n_lost, conn, next))
		next++;
	assert_int_equal(next, upto);
}

/* The result the box built for conn's lost packet g: t->sent[k]. */
static void check_built(const struct th *t, uint32_t k, uint32_t conn, uint32_t g, float want)
{
	const struct th_sent *x = &t->sent[k];

	assert_true(k < t->nsent);
	assert_int_equal(x->p.opcode, opcode_at(g));
	assert_int_equal(x->p.psn, nr_psn_add(ipsn[conn], g));
	assert_int_equal(x->p.qpn, t->spec->conns[conn].dst_qpn);
	assert_int_equal(x->p.saddr, t->spec->conns[conn].src_ip);
	assert_int_equal(x->p.daddr, t->spec->conns[conn].dst_ip);
	assert_int_equal(x->origin, 10 + conn);     /* as its sender's data came in */
	assert_int_equal(x->p.pay_len, MTU);
	if (opcode_at(g) == NR_OP_RC_WRITE_LAST_IMM)
		assert_int_equal(x->p.imm, (0x0A000000 | g / PKTS) ^ 0x5A5A0000);
	for (uint32_t i = 0; i < MTU / 4; i++) {
		float v;

		memcpy(&v, x->frame + x->p.pay_off + 4 * i, 4);
		assert_true(v == want);
	}
}

static void check_accounting(struct th *t, uint64_t shorts)
{
	struct nr_job_stats st;

	assert_int_equal(agg_engine_job_stats(t->e, t->job, &st), 0);
	assert_int_equal(st.ctr[NR_ECTR_SHORT_SLOTS], shorts);
	assert_int_equal(st.ctr[NR_ECTR_EMITTED],
			 st.ctr[NR_ECTR_COMPLETED] * N + shorts * (N - 1));
	assert_int_equal(st.ctr[NR_ECTR_AGGREGATED], st.ctr[NR_ECTR_EMITTED]);
}

/* One MIDDLE packet lost: the slot goes out short, no NAK, the late copy is answered. */
static void short_basic(uint32_t job, uint8_t mode, uint8_t scale)
{
	const struct loss lost[] = { { 2, 3 } };
	struct nr_job_stats st;
	struct th t;
	float want = sum_of(3, 2) * (scale ? (float)N / (float)(N - 1) : 1.0f);

	init(&t, job, 250000, scale, mode);
	run(&t, 0, PKTS, lost, 1, DSCP, 1 * MS);
	assert_int_equal(t.nsent, 1);              /* the built result, no NAK */
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 0);
	check_built(&t, 0, 2, 3, want);
	for (uint32_t i = 0; i < N; i++)
		check_stream(&t, i, PKTS, lost, 1, scale);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.left_out[2], 1);
	assert_int_equal(st.left_out[0] + st.left_out[1] + st.left_out[3], 0);
	assert_int_equal(st.next_release, PKTS);   /* every receiver ACKed all of it */
	check_accounting(&t, 1);
	/* the sender's late copy: answered with the stored result, not summed */
	{
		float pay[MTU / 4];
		struct nr_flow f;
		struct nr_build_args a = { .opcode = NR_OP_RC_WRITE_MIDDLE,
					   .psn = nr_psn_add(ipsn[2], 3) };
		struct th_pkt *k;
		uint64_t agg = th_ctr(&t, NR_ECTR_AGGREGATED);

		for (uint32_t i = 0; i < MTU / 4; i++)
			pay[i] = val(2, 3);
		th_flow_data(t.spec, 2, &f);
		f.tos = DSCP << 2;
		k = th_build(&f, &a, pay, MTU);
		assert_int_equal(th_input(&t, k, 2 * MS, NULL), NR_V_RESEND);
		assert_true(th_pf(k, 0) == want);
		assert_int_equal(th_ctr(&t, NR_ECTR_AGGREGATED), agg);
		assert_int_equal(th_ctr(&t, NR_ECTR_DUP_RESENT), 1);
		th_pkt_free(k);
	}
	th_fini(&t);
}

static void test_short_basic(void **state)
{
	(void)state;
	short_basic(3, NR_SUM_ORDERED, 0);         /* ops.emit_slot */
	short_basic(4, NR_SUM_ORDERED, 0);         /* ops.emit */
	short_basic(5, NR_SUM_STREAMING, 0);
}

static void test_short_scaled(void **state)
{
	(void)state;
	short_basic(7, NR_SUM_ORDERED, 1);
	short_basic(8, NR_SUM_STREAMING, 1);
}

/* The bound: 1 packet of 8 (125000 ppm): the second loss of a message waits
 * (denied, its sender NAKed), the next message has its own. */
static void test_bound(void **state)
{
	const struct loss lost[] = { { 1, 2 }, { 3, 5 }, { 0, 10 } };
	struct nr_job_stats st;
	struct th t;

	(void)state;
	init(&t, 9, 125000, 0, NR_SUM_ORDERED);
	run(&t, 0, PKTS, lost, 3, DSCP, 1 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_DENIED), 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);      /* conn 3, at g=5 */
	assert_int_equal(t.nsent, 2);
	check_built(&t, 0, 1, 2, sum_of(2, 1));
	assert_int_equal(t.sent[1].p.opcode, NR_OP_RC_ACK);
	assert_int_equal(t.sent[1].p.aeth_syn, NR_AETH_NAK_PSN_SEQ_ERR);
	assert_int_equal(t.sent[1].p.qpn, t.spec->conns[3].src_qpn);
	assert_int_equal(t.sent[1].p.psn, nr_psn_add(ipsn[3], 5));
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, 5);
	/* conn 3 goes back to 5: the rest completes whole */
	for (uint32_t g = 5; g < PKTS; g++)
		assert_int_equal(data(&t, 3, g, DSCP, 2 * MS), g == 5 ? NR_V_HELD : NR_V_RESEND);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, PKTS);
	/* the next message has its own bound: conn 0's g=10 goes short */
	run(&t, PKTS, 2 * PKTS, lost, 3, DSCP, 3 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 2);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.left_out[0], 1);
	assert_int_equal(st.left_out[1], 1);
	assert_int_equal(st.left_out[3], 0);
	check_accounting(&t, 2);
	th_fini(&t);
}

/*
 * A selective job (its requesters selective repeat, agg_nak.c): a slot goes
 * short as in a go-back-N job; the NAK held back for a denied slot goes out
 * as a selective NAK naming the lost PSN alone, and the sender's resend of
 * that one packet completes the message (its later packets were in); a
 * resend of the packet a short slot left out (the sender's own timeout) is
 * answered with the stored result, counted, never summed.
 */
static void test_short_selective(void **state)
{
	const struct loss lost[] = { { 1, 2 }, { 3, 5 } };
	struct nr_job_spec *s = th_spec(N, MTU, PKTS * MTU, 4, NR_SUM_ORDERED, ipsn);
	struct nr_job_stats st;
	struct th t;

	(void)state;
	memset(skew, 0, sizeof(skew));
	s->short_ppm = 125000; /* 1 packet of 8 */
	s->short_dscp = DSCP;
	s->result_key = 0x5A5A0000;
	s->selective = 1;
	th_init(&t, s, 13);
	run(&t, 0, PKTS, lost, 2, DSCP, 1 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_DENIED), 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);
	assert_int_equal(t.nsent, 2);
	check_built(&t, 0, 1, 2, sum_of(2, 1));
	assert_int_equal(t.sent[1].p.opcode, NR_OP_RC_ACK);
	assert_int_equal(t.sent[1].p.aeth_syn, NR_AETH_NAK_SELECTIVE);
	assert_int_equal(t.sent[1].p.qpn, t.spec->conns[3].src_qpn);
	assert_int_equal(t.sent[1].p.psn, nr_psn_add(ipsn[3], 5));
	assert_int_equal(nr_sel_nak_run(t.sent[1].p.aeth_msn), 1);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, 5);
	assert_int_equal(data(&t, 3, 5, DSCP, 2 * MS), NR_V_HELD); /* that one alone */
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, PKTS);
	for (uint32_t i = 0; i < N; i++)
		check_stream(&t, i, PKTS, lost, 1, false);
	assert_int_equal(t.nsent, 2);
	check_accounting(&t, 1);
	/* conn 1 resends its g=2 all the same: the stored result, not summed */
	{
		float pay[MTU / 4];
		struct nr_flow f;
		struct nr_build_args a = { .opcode = NR_OP_RC_WRITE_MIDDLE,
					   .psn = nr_psn_add(ipsn[1], 2) };
		struct th_pkt *k;
		enum nr_engine_ctr c = NR_ECTR_MAX;
		uint64_t agg = th_ctr(&t, NR_ECTR_AGGREGATED);

		for (uint32_t i = 0; i < MTU / 4; i++)
			pay[i] = val(1, 2);
		th_flow_data(t.spec, 1, &f);
		f.tos = DSCP << 2;
		k = th_build(&f, &a, pay, MTU);
		assert_int_equal(th_input(&t, k, 3 * MS, &c), NR_V_RESEND);
		assert_int_equal(c, NR_ECTR_DUP_RESENT);
		assert_true(th_pf(k, 0) == sum_of(2, 1));
		assert_true(th_pf(k, MTU / 4 - 1) == sum_of(2, 1));
		assert_int_equal(th_ctr(&t, NR_ECTR_AGGREGATED), agg);
		assert_int_equal(th_ctr(&t, NR_ECTR_DUP_RESENT), 1);
		th_pkt_free(k);
	}
	assert_int_equal(t.nsent, 2);
	th_fini(&t);
}

/* Must-be-exact (no DSCP mark), a first packet, two missing: never short. */
static void test_never_short(void **state)
{
	const struct loss exact[] = { { 1, 3 } };
	const struct loss first[] = { { 2, PKTS } };
	const struct loss two[] = { { 1, 2 * PKTS + 3 }, { 2, 2 * PKTS + 3 } };
	struct nr_job_stats st;
	struct th t;

	(void)state;
	init(&t, 11, 500000, 0, NR_SUM_ORDERED);
	run(&t, 0, PKTS, exact, 1, 0, 1 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 0);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);   /* at once, as without short slots */
	assert_int_equal(t.nsent, 1);
	assert_int_equal(t.sent[0].p.aeth_syn, NR_AETH_NAK_PSN_SEQ_ERR);
	for (uint32_t g = 3; g < PKTS; g++)
		data(&t, 1, g, 0, 2 * MS);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, PKTS);
	for (uint32_t i = 0; i < N; i++)
		ack(&t, i, PKTS - 1, 2 * MS);

	/* a first packet lost: its RETH is the receiver's, and this job does not
	 * promise the layout (short_first) the box would build it from */
	run(&t, PKTS, 2 * PKTS, first, 1, DSCP, 3 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 0);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 2);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.short_why[NR_SHORT_WHY_FIRST], 1);
	assert_int_equal(st.short_why[NR_SHORT_WHY_EXACT], 1);
	assert_int_equal(st.ctr[NR_ECTR_SHORT_DENIED], 2);
	for (uint32_t g = PKTS; g < 2 * PKTS; g++)
		data(&t, 2, g, DSCP, 4 * MS);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, 2 * PKTS);
	for (uint32_t i = 0; i < N; i++)
		ack(&t, i, 2 * PKTS - 1, 4 * MS);

	/* two contributions of one slot lost: the NAKs held back go out at the re-arm */
	run(&t, 2 * PKTS, 3 * PKTS, two, 2, DSCP, 5 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 0);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 2);
	agg_engine_poll(t.e, 30 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_REARM), 2);
	for (uint32_t g = 2 * PKTS + 3; g < 3 * PKTS; g++) {
		data(&t, 1, g, DSCP, 31 * MS);
		data(&t, 2, g, DSCP, 31 * MS);
	}
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, 3 * PKTS);
	check_accounting(&t, 0);
	th_fini(&t);
}

/*
 * The last packet of a message lost, nothing after it (a tail loss): never
 * short, however long the sender stands still, since it may not have sent
 * the packet at all, and its receiver's ACK of a PSN it never sent would be
 * stale to it; the monitor's probe NAKs it and it sends the tail again.
 */
static void test_tail_not_short(void **state)
{
	const struct loss lost[] = { { 1, PKTS - 1 } };
	struct nr_job_stats st;
	struct th t;

	(void)state;
	init(&t, 13, 250000, 0, NR_SUM_ORDERED);
	run(&t, 0, PKTS, lost, 1, DSCP, 1 * MS);
	assert_int_equal(t.nsent, 0);
	agg_engine_poll(t.e, 2 * MS);
	agg_engine_poll(t.e, 40 * MS);                   /* past the probe time */
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 0);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_PROBE), 1);
	assert_int_equal(t.nsent, 1);
	assert_int_equal(t.sent[0].p.opcode, NR_OP_RC_ACK);
	assert_int_equal(t.sent[0].p.qpn, t.spec->conns[1].src_qpn);
	assert_int_equal(data(&t, 1, PKTS - 1, DSCP, 41 * MS), NR_V_HELD);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, PKTS);
	for (uint32_t i = 0; i < N; i++)
		check_stream(&t, i, PKTS, NULL, 0, false);
	check_accounting(&t, 0);
	th_fini(&t);
}

/* A tolerant job (a 25% bound) whose connections spray over ports from th_flow_data's. */
static void init_spray(struct th *t, uint32_t job, uint8_t ports, uint16_t reorder)
{
	struct nr_job_spec *s = th_spec(N, MTU, PKTS * MTU, 4, NR_SUM_ORDERED, ipsn);

	s->short_ppm = 250000;
	s->short_dscp = DSCP;
	s->spray_ports = ports;
	s->reorder_pkts = reorder;
	for (uint32_t i = 0; i < N; i++)
		s->conns[i].src_sport = (uint16_t)(49152 + i);      /* th_flow_data's */
	th_init(t, s, job);
}

/*
 * Message 0, conn 1's packets in the order given, packet g from port g mod
 * ports, the others' in order: only reordered, so no NAK, nothing built, every
 * stream whole; then every receiver ACKs it.
 */
static void spray_message0(struct th *t, const uint32_t order[PKTS], uint16_t ports)
{
	for (uint32_t k = 0; k < PKTS; k++) {
		for (uint32_t i = 0; i < N; i++)
			if (i != 1)
				data(t, i, k, DSCP, 1 * MS);
		assert_int_equal(data_sp(t, 1, order[k], DSCP, (uint16_t)(order[k] % ports), 1 * MS,
					 NULL), NR_V_HELD);
	}
	assert_int_equal(t->nsent, 0);
	assert_int_equal(th_ctr(t, NR_ECTR_SHORT_SLOTS), 0);
	for (uint32_t i = 0; i < N; i++) {
		check_stream(t, i, PKTS, NULL, 0, false);
		ack(t, i, PKTS - 1, 1 * MS);
	}
}

/*
 * Spraying: conn 1's packets leave from 4 UDP source ports and arrive up to
 * 3 packets out of order.  Reordering within that is neither a gap (no NAK)
 * nor a loss (no short slot); a real loss is, once a packet more than 3
 * beyond it is in; a fifth port is not the connection's; every result, the
 * built one too, leaves from the connection's registered port.
 */
static void test_spray_reorder(void **state)
{
	static const uint32_t order[PKTS] = { 0, 1, 2, 4, 5, 3, 6, 7 };
	enum nr_engine_ctr c = NR_ECTR_MAX;
	struct nr_job_stats st;
	struct th t;

	(void)state;
	init_spray(&t, 15, 4, 3);
	spray_message0(&t, order, 4);
	/* every result leaves from its connection's registered port: one path back */
	for (uint32_t k = 0; k < t.log_len; k++) {
		const struct th_pkt *r = t.log[k].pkt;

		assert_int_equal(r->p.udp_sport, 49152 + t.log[k].conn);
		assert_int_equal(nr_ld_be16(r->frame + r->p.l4_off), 49152 + t.log[k].conn);
	}
	/* g=10 of conn 1 lost: 11..13 are within the reordering, 14 is past it */
	for (uint32_t g = PKTS; g < PKTS + 7; g++) {
		for (uint32_t i = 0; i < N; i++)
			if (i != 1)
				data(&t, i, g, DSCP, 2 * MS);
		if (g != PKTS + 2)
			data_sp(&t, 1, g, DSCP, (uint16_t)(g % 4), 2 * MS, NULL);
		assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), g == PKTS + 6);
	}
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 0);
	check_built(&t, 0, 1, PKTS + 2, sum_of(PKTS + 2, 1));
	assert_int_equal(t.sent[0].p.udp_sport, 49152 + 1);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, PKTS + 7);
	/* a fifth source port is not conn 1's */
	assert_int_equal(data_sp(&t, 1, PKTS + 7, DSCP, 4, 2 * MS, &c), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_SPOOFED_SRC);
	th_fini(&t);
}

/*
 * Spraying over paths of unequal delay, reorder_pkts 12 (below half the pool):
 * a gap is a loss once every one of the sender's ports brought a later
 * packet, each port's path delivering in order.  Conn 1 sprays over 2 ports
 * (even g port 0, odd port 1).  Message 0: its g=2 (port 0) comes after 3, 5
 * and 7 (port 1, the faster path): only port 1 moved past it, no gap.
 * Message 1: its g=10 (port 0) lost; 11 (port 1) is in, then 12 (port 0):
 * both ports past 10, it goes short, no NAK, long before 12 packets more.
 */
static void test_spray_paths(void **state)
{
	static const uint32_t order[PKTS] = { 0, 1, 3, 5, 7, 2, 4, 6 };
	struct nr_job_stats st;
	struct th t;

	(void)state;
	init_spray(&t, 16, 2, 12);
	spray_message0(&t, order, 2);
	for (uint32_t g = PKTS; g < 2 * PKTS; g++)
		for (uint32_t i = 0; i < N; i++)
			if (i != 1)
				data(&t, i, g, DSCP, 2 * MS);
	data_sp(&t, 1, PKTS, DSCP, 0, 2 * MS, NULL);
	data_sp(&t, 1, PKTS + 1, DSCP, 1, 2 * MS, NULL);
	data_sp(&t, 1, PKTS + 3, DSCP, 1, 2 * MS, NULL);         /* port 1 past 10 */
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 0);
	data_sp(&t, 1, PKTS + 4, DSCP, 0, 2 * MS, NULL);         /* and port 0 */
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 0);
	check_built(&t, 0, 1, PKTS + 2, sum_of(PKTS + 2, 1));
	for (uint32_t g = PKTS + 5; g < 2 * PKTS; g++)
		data_sp(&t, 1, g, DSCP, (uint16_t)(g % 2), 2 * MS, NULL);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, 2 * PKTS);
	assert_int_equal(st.left_out[1], 1);
	check_accounting(&t, 1);
	th_fini(&t);
}

/*
 * A gap in a later tolerant message, while emission waits in an exact one:
 * message 0 (unmarked) waits for conn 0's lost g=2 (NAKed at once, exact),
 * message 1 arrives with conn 1's g=10 lost.  Its slot has the others'
 * marked contributions: the NAK is held back, past the re-arm time too
 * (its slot is not up for emission yet; conn 0's NAK is re-armed), and once
 * conn 0 went back and message 0 went out, g=10 goes short; conn 1 never
 * goes back.
 */
static void test_later_message_held(void **state)
{
	const struct loss lost[] = { { 0, 2 }, { 1, PKTS + 2 } };
	struct nr_job_stats st;
	struct th t;

	(void)state;
	init(&t, 17, 250000, 0, NR_SUM_ORDERED);
	for (uint32_t g = 0; g < 2 * PKTS; g++)
		for (uint32_t i = 0; i < N; i++)
			if (!is_lost(lost, 2, i, g))
				data(&t, i, g, g < PKTS ? 0 : DSCP, 1 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);         /* conn 0's, at once */
	assert_int_equal(t.nsent, 1);
	assert_int_equal(t.sent[0].p.qpn, t.spec->conns[0].src_qpn);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, 2);
	agg_engine_poll(t.e, 14 * MS);               /* past the re-arm (12 ms), not the probe */
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_REARM), 1);
	assert_int_equal(t.sent[1].p.qpn, t.spec->conns[0].src_qpn);
	for (uint32_t g = 2; g < 2 * PKTS; g++)     /* conn 0's go-back */
		data(&t, 0, g, g < PKTS ? 0 : DSCP, 15 * MS);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, 2 * PKTS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);         /* none to conn 1 */
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_REARM), 1);
	{
		uint32_t built = t.nsent;

		for (uint32_t k = 0; k < t.nsent; k++) {
			const struct nr_pkt *p = &t.sent[k].p;

			/* nothing to conn 1's sender; its result built once (besides
			 * the monitor's solicits of the receivers' ACKs, not sent here) */
			assert_false(p->opcode == NR_OP_RC_ACK && p->qpn == t.spec->conns[1].src_qpn);
			if (p->qpn == t.spec->conns[1].dst_qpn && p->psn == nr_psn_add(ipsn[1], PKTS + 2) &&
			    built == t.nsent)
				built = k;
		}
		check_built(&t, built, 1, PKTS + 2, sum_of(PKTS + 2, 1));
	}
	assert_int_equal(st.left_out[1], 1);
	check_accounting(&t, 1);
	th_fini(&t);
}

/*
 * Late ranks: conns 1-3 send nothing of message 1, conn 0 stops after its
 * first 3 packets; the job stands still until the monitor holds conn 0 (RNR
 * NAK, a 20.48 ms wait).  When the late ranks come, slot 11 waits for conn 0,
 * which stands still by the box's doing: never short (nothing of conn 0 past
 * 11 arrived), whatever the time; it goes on and the slots complete whole.
 */
static void test_held_not_short(void **state)
{
	struct nr_job_stats st;
	struct th t;

	(void)state;
	init(&t, 15, 250000, 0, NR_SUM_ORDERED);
	run(&t, 0, PKTS, NULL, 0, DSCP, 1 * MS);
	for (uint32_t g = PKTS; g < PKTS + 3; g++)
		data(&t, 0, g, DSCP, 2 * MS);
	agg_engine_poll(t.e, 100 * MS);
	agg_engine_poll(t.e, 200 * MS);           /* no progress for 128 ms: held */
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_HOLD), 1);
	for (uint32_t g = PKTS; g < 2 * PKTS; g++)
		for (uint32_t i = 1; i < N; i++)
			data(&t, i, g, DSCP, 200 * MS);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, PKTS + 3);
	agg_engine_poll(t.e, 201 * MS);
	agg_engine_poll(t.e, 237 * MS);
	agg_engine_poll(t.e, 400 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 0);
	/* conn 0 goes on: the rest whole */
	for (uint32_t g = PKTS + 3; g < 2 * PKTS; g++)
		assert_int_equal(data(&t, 0, g, DSCP, 401 * MS), NR_V_HELD);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, 2 * PKTS);
	assert_int_equal(st.left_out[0], 0);
	check_accounting(&t, 0);
	th_fini(&t);
}

/* The RETH of the result the box built: t->sent[k]'s, that of conn's first packet at g. */
static void check_built_reth(const struct th *t, uint32_t k, uint32_t conn, uint32_t g)
{
	const struct nr_pkt *p = &t->sent[k].p;

	assert_true(p->mask & NR_OPF_RETH);
	assert_true(p->reth_va == va_of(conn, g));
	assert_int_equal(p->reth_rkey, 0x1234 + conn);
	assert_int_equal(p->reth_len, PKTS * MTU);
}

static uint64_t why(struct th *t, enum nr_short_why w)
{
	struct nr_job_stats st;

	assert_int_equal(agg_engine_job_stats(t->e, t->job, &st), 0);
	return st.short_why[w];
}

/*
 * short_first: a lost first packet goes short, its RETH built from the
 * connection's previous message and the others' (the ring wraps between
 * messages 1 and 2: a negative step); the late copy with that RETH is
 * answered with the stored result and kept as seen.  A first packet whose
 * connection's previous first packet the box only built is not built on.
 */
static void first_short(uint32_t job, uint8_t mode)
{
	const struct loss lost[] = { { 2, PKTS }, { 2, 2 * PKTS }, { 3, 3 * PKTS } };
	struct nr_job_stats st;
	struct th t;

	init_first(&t, job, 250000, 0, mode, 1);
	run(&t, 0, PKTS, NULL, 0, DSCP, 1 * MS);
	/* message 1: conn 2's first packet lost */
	run(&t, PKTS, 2 * PKTS, lost, 1, DSCP, 2 * MS);
	assert_int_equal(t.nsent, 1);                          /* no NAK: the built result */
	check_built(&t, 0, 2, PKTS, sum_of(PKTS, 2));
	check_built_reth(&t, 0, 2, PKTS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 0);
	for (uint32_t i = 0; i < N; i++)
		check_stream(&t, i, 2 * PKTS, lost, 1, false);
	/* its late copy, with the RETH the box built: the stored result */
	assert_int_equal(data(&t, 2, PKTS, DSCP, 3 * MS), NR_V_RESEND);
	/* message 2 (ring slot 0 again): conn 2's first lost again, built
	 * across the wrap from its late copy of message 1 */
	run(&t, 2 * PKTS, 3 * PKTS, &lost[1], 1, DSCP, 4 * MS);
	assert_int_equal(t.nsent, 2);
	check_built(&t, 1, 2, 2 * PKTS, sum_of(2 * PKTS, 2));
	check_built_reth(&t, 1, 2, 2 * PKTS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 2);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, 3 * PKTS);
	assert_int_equal(st.left_out[2], 2);
	check_accounting(&t, 2);
	/* message 3: conn 3's first lost, and message 4's: its previous first
	 * packet is one the box built, never built on (first_unseen) */
	run(&t, 3 * PKTS, 4 * PKTS, &lost[2], 1, DSCP, 5 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 3);
	check_built_reth(&t, 2, 3, 3 * PKTS);
	{
		const struct loss again[] = { { 3, 4 * PKTS } };

		run(&t, 4 * PKTS, 4 * PKTS + 2, again, 1, DSCP, 6 * MS);
		assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 3);
		assert_int_equal(why(&t, NR_SHORT_WHY_FIRST_UNSEEN), 1);
		assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);       /* conn 3 goes back */
		assert_int_equal(t.sent[t.nsent - 1].p.qpn, t.spec->conns[3].src_qpn);
		assert_int_equal(t.sent[t.nsent - 1].p.psn, nr_psn_add(ipsn[3], 4 * PKTS));
		for (uint32_t g = 4 * PKTS; g < 4 * PKTS + 2; g++)
			data(&t, 3, g, DSCP, 7 * MS);
		run(&t, 4 * PKTS + 2, 5 * PKTS, NULL, 0, DSCP, 7 * MS);
	}
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_emit, 5 * PKTS);
	assert_int_equal(st.state, NR_JOB_ACTIVE);
	check_accounting(&t, 3);
	th_fini(&t);
}

static void test_first_short(void **state)
{
	(void)state;
	first_short(21, NR_SUM_ORDERED);
	first_short(22, NR_SUM_STREAMING);
}

/*
 * A first packet is refused, its reason counted and its sender NAKed: the
 * job's first message (no previous one), a message not marked, one whose
 * bound is 0, a sender whose next packet is lost too (its mark unknown),
 * others whose VA steps disagree, a gap that showed before anything said
 * it may go short (its NAK went out at once); and a gap that showed before
 * any other contribution but after the sender's own marked next packet:
 * held back, completed short.
 */
static void test_first_refused(void **state)
{
	struct th t;
	uint64_t naks = 0;

	(void)state;
	init_first(&t, 23, 250000, 0, NR_SUM_ORDERED, 1);
	/* message 0: nothing before it */
	{
		const struct loss l[] = { { 1, 0 } };

		run(&t, 0, 2, l, 1, DSCP, 1 * MS);
		assert_int_equal(why(&t, NR_SHORT_WHY_FIRST_UNSEEN), 1);
		assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), ++naks);
		data(&t, 1, 0, DSCP, 1 * MS);
		data(&t, 1, 1, DSCP, 1 * MS);
		run(&t, 2, PKTS, NULL, 0, DSCP, 1 * MS);
	}
	/* message 1, exact (unmarked) */
	{
		const struct loss l[] = { { 2, PKTS } };

		run(&t, PKTS, PKTS + 2, l, 1, 0, 2 * MS);
		assert_int_equal(why(&t, NR_SHORT_WHY_EXACT), 1);
		assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), ++naks);
		data(&t, 2, PKTS, 0, 2 * MS);
		data(&t, 2, PKTS + 1, 0, 2 * MS);
		run(&t, PKTS + 2, 2 * PKTS, NULL, 0, 0, 2 * MS);
	}
	/* message 2: conn 0's first and second packets lost (its mark unknown) */
	{
		const struct loss l[] = { { 0, 2 * PKTS }, { 0, 2 * PKTS + 1 } };

		run(&t, 2 * PKTS, 2 * PKTS + 3, l, 2, DSCP, 3 * MS);
		assert_int_equal(why(&t, NR_SHORT_WHY_FIRST_MARK), 1);
		assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), ++naks);
		/* its go-back: once the first packet is in, the second goes short
		 * (a middle packet, its sender's later ones in) */
		data(&t, 0, 2 * PKTS, DSCP, 3 * MS);
		assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 1);
		for (uint32_t g = 2 * PKTS + 1; g < 2 * PKTS + 3; g++)
			data(&t, 0, g, DSCP, 3 * MS);
		run(&t, 2 * PKTS + 3, 3 * PKTS, NULL, 0, DSCP, 3 * MS);
	}
	/* message 3: conn 3 moved its ring (a host that broke the layout; the
	 * steps agree again from message 4 on) */
	{
		const struct loss l[] = { { 1, 3 * PKTS } };

		skew[3] = 0x40;
		run(&t, 3 * PKTS, 3 * PKTS + 2, l, 1, DSCP, 4 * MS);
		assert_int_equal(why(&t, NR_SHORT_WHY_FIRST_LAYOUT), 1);
		assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), ++naks);
		data(&t, 1, 3 * PKTS, DSCP, 4 * MS);
		data(&t, 1, 3 * PKTS + 1, DSCP, 4 * MS);
		run(&t, 3 * PKTS + 2, 4 * PKTS, NULL, 0, DSCP, 4 * MS);
	}
	/* message 4: conn 2 ahead of the others, its middle packets 1 and 2 lost
	 * and its packet 3 in before anything else of the message but its own
	 * first: nothing says the gap may go short, so it is NAKed at once; the
	 * slot then qualifies, but its sender goes back anyway */
	{
		const struct loss l[] = { { 2, 4 * PKTS + 1 }, { 2, 4 * PKTS + 2 } };

		data(&t, 2, 4 * PKTS, DSCP, 5 * MS);
		data(&t, 2, 4 * PKTS + 3, DSCP, 5 * MS);
		assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), ++naks);
		run(&t, 4 * PKTS, 4 * PKTS + 3, l, 2, DSCP, 5 * MS);
		assert_int_equal(why(&t, NR_SHORT_WHY_NAKED), 1);
		assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), naks);    /* one NAK */
		data(&t, 2, 4 * PKTS + 1, DSCP, 5 * MS);
		assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 2);  /* its go-back's 2 */
		data(&t, 2, 4 * PKTS + 2, DSCP, 5 * MS);
		run(&t, 4 * PKTS + 3, 5 * PKTS, NULL, 0, DSCP, 5 * MS);
	}
	/* message 5: conn 1 ahead of the others, its middle packet 2 lost, its
	 * packet 3 in before anything else of the message but its own: marked,
	 * of the same message: held back, completed short */
	{
		const struct loss l[] = { { 1, 5 * PKTS + 2 } };

		data(&t, 1, 5 * PKTS, DSCP, 6 * MS);
		data(&t, 1, 5 * PKTS + 1, DSCP, 6 * MS);
		data(&t, 1, 5 * PKTS + 3, DSCP, 6 * MS);
		assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), naks);    /* held back */
		run(&t, 5 * PKTS, 6 * PKTS, l, 1, DSCP, 6 * MS);
		assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), naks);
		assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 3);
	}
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_DENIED), naks);
	check_accounting(&t, 3);
	th_fini(&t);

	/* a bound of 0 for a message of 8 packets (100000 ppm) */
	init_first(&t, 24, 100000, 0, NR_SUM_ORDERED, 1);
	run(&t, 0, PKTS, NULL, 0, DSCP, 1 * MS);
	{
		const struct loss l[] = { { 3, PKTS } };

		run(&t, PKTS, PKTS + 2, l, 1, DSCP, 2 * MS);
		assert_int_equal(why(&t, NR_SHORT_WHY_BOUND), 1);
		assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);
	}
	th_fini(&t);
}

/*
 * A late first packet whose RETH is not the one the box built for it: the
 * hosts broke the layout short_first promises, and the box wrote a result
 * where its receiver did not expect it.  The job fails, saying so.
 */
static void test_first_broken_promise(void **state)
{
	const struct loss l[] = { { 2, PKTS } };
	enum nr_engine_ctr c = NR_ECTR_MAX;
	struct nr_job_stats st;
	struct th t;

	(void)state;
	init_first(&t, 25, 250000, 0, NR_SUM_ORDERED, 1);
	run(&t, 0, PKTS, NULL, 0, DSCP, 1 * MS);
	run(&t, PKTS, PKTS + 3, l, 1, DSCP, 2 * MS);
	assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), 1);
	skew[2] = 0x1000;           /* conn 2's first packet was elsewhere */
	assert_int_equal(data_sp(&t, 2, PKTS, DSCP, 0, 3 * MS, &c), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_PSN_CONFLICT);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.state, NR_JOB_FAILED);
	assert_non_null(strstr(st.reason, "short_first"));
	th_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_basic),
		cmocka_unit_test(test_short_scaled),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_short_selective),
		cmocka_unit_test(test_never_short),
		cmocka_unit_test(test_tail_not_short),
		cmocka_unit_test(test_spray_reorder),
		cmocka_unit_test(test_held_not_short),
		cmocka_unit_test(test_spray_paths),
		cmocka_unit_test(test_later_message_held),
		cmocka_unit_test(test_first_short),
		cmocka_unit_test(test_first_refused),
		cmocka_unit_test(test_first_broken_promise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
