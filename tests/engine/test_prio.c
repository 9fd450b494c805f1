/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Priority classes (spec prio_classes; docs/short-slots.md, "Priority").
 * Class c of a job is marked with DSCP short_dscp + 8c, its drop-eligible
 * packets with + 2: all of them are the job's mark of a tolerant message,
 * any other DSCP (the class above them all, exact messages') is not.
 * Inside a burst the ready slots of jobs with classes leave at the burst's
 * end, the highest class first, across the engine's jobs (a job's channels);
 * a job without classes, and a single agg_engine_input, emit at once.
 * The box counts tolerant and drop-eligible contributions, and the short
 * slots whose every contribution was drop-eligible (short_de).
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
#define PKTS 4                 /* packets of a message */
#define DSCP 10                /* class 0: AF11; class 1 AF21 (18), class 2 AF31 (26) */
#define CLASSES 3

static uint8_t opcode_at(uint32_t g)
{
	if (g % PKTS == 0)
		return NR_OP_RC_WRITE_FIRST;
	return g % PKTS == PKTS - 1 ? NR_OP_RC_WRITE_LAST_IMM : NR_OP_RC_WRITE_MIDDLE;
}

/* A job of N ranks whose QPNs start at qpn (ids even: results through ops.emit). */
static struct nr_job_spec *spec_of(uint32_t qpn, uint8_t classes, uint32_t ppm)
{
	struct nr_job_spec *s = th_spec(N, MTU, PKTS * MTU, 4, NR_SUM_ORDERED, NULL);

	for (uint32_t i = 0; i < N; i++) {
		s->conns[i].src_qpn += qpn;
		s->conns[i].dst_qpn += qpn;
	}
	s->short_ppm = ppm;
	s->short_dscp = DSCP;
	s->prio_classes = classes;
	return s;
}

/* conn's packet g of job spec s with DSCP dscp. */
static struct th_pkt *pkt(const struct nr_job_spec *s, uint32_t conn, uint32_t g, uint8_t dscp)
{
	float pay[MTU / 4];
	struct nr_flow f;
	struct nr_build_args a = {
		.opcode = opcode_at(g), .psn = g, .imm = g / PKTS, .va = 0x10000 + g / PKTS * 0x1000,
		.rkey = 0x77, .dma_len = PKTS * MTU,
	};

	for (uint32_t i = 0; i < MTU / 4; i++)
		pay[i] = (float)(conn + 1);
	th_flow_data(s, conn, &f);
	f.tos = (uint8_t)(dscp << 2);
	return th_build(&f, &a, pay, MTU);
}

/* The packets k[0..n) in one burst (their states as th_input keeps them). */
static void burst(struct th *t, struct th_pkt **k, unsigned n, uint64_t now)
{
	struct nr_pkt *pk[64];
	uint8_t *fr[64];
	void *hd[64];
	enum agg_verdict v[64];

	assert_true(n <= 64);
	for (unsigned q = 0; q < n; q++) {
		pk[q] = &k[q]->p;
		fr[q] = k[q]->frame;
		hd[q] = k[q];
		k[q]->state = TH_HELD;
		t->held++;
	}
	agg_engine_input_burst(t->e, pk, fr, hd, n, now, v, NULL);
	for (unsigned q = 0; q < n; q++) {
		assert_int_equal(v[q], NR_V_HELD);
	}
}

/*
 * Slot 0 of job 10 (class 0), of job 14 (no classes) and of job 12 (class
 * 2) complete in one burst, in that order: job 14's results leave at once,
 * then, at the burst's end, job 12's (class 2) before job 10's (class 0).
 * One packet at a time (agg_engine_input) they leave as they complete.
 */
static void test_burst_class_order(void **state)
{
	static const uint32_t want_burst[3] = { 14, 12, 10 }, want_single[3] = { 10, 14, 12 };
	struct nr_job_spec *sb = spec_of(0x1000, CLASSES, 0), *sc = spec_of(0x2000, 1, 0);
	struct th_pkt *k[3 * N];
	uint32_t credits;
	char err[256];
	struct th t;

	(void)state;
	for (int round = 0; round < 2; round++) {
		const uint32_t *want = round ? want_single : want_burst;

		th_init(&t, spec_of(0, CLASSES, 0), 10);
		assert_int_equal(agg_engine_job_add(t.e, 12, sb, 0, &credits, err, sizeof(err)), 0);
		assert_int_equal(agg_engine_job_add(t.e, 14, sc, 0, &credits, err, sizeof(err)), 0);
		for (uint32_t i = 0; i < N; i++) {
			k[i] = pkt(t.spec, i, 0, DSCP);                  /* class 0 */
			k[N + i] = pkt(sc, i, 0, DSCP);                  /* no classes */
			k[2 * N + i] = pkt(sb, i, 0, DSCP + 16);         /* class 2 */
		}
		if (round == 0) {
			burst(&t, k, 3 * N, 1 * MS);
		} else {
			for (unsigned q = 0; q < 3 * N; q++)
				assert_int_equal(th_input(&t, k[q], 1 * MS, NULL), NR_V_HELD);
		}
		assert_int_equal(t.log_len, 3 * N);
		for (uint32_t q = 0; q < 3 * N; q++)
			assert_int_equal(t.log[q].job, want[q / N]);
		th_fini(&t);
	}
	free(sb);
	free(sc);
}

/* Message m of the job, rank i's packets with DSCP dscp[i], rank 2's middle packet lost. */
static void message_lost_middle(struct th *t, uint32_t m, const uint8_t dscp[N])
{
	for (uint32_t g = m * PKTS; g < (m + 1) * PKTS; g++) {
		for (uint32_t i = 0; i < N; i++) {
			struct th_pkt *k;

			if (i == 2 && g == m * PKTS + 1)
				continue;               /* a middle packet lost */
			k = pkt(t->spec, i, g, dscp[i]);
			if (th_input(t, k, 1 * MS, NULL) != NR_V_HELD)
				th_pkt_free(k);
		}
	}
}

/* Every receiver ACKs message m whole. */
static void ack_message(struct th *t, uint32_t m)
{
	for (uint32_t i = 0; i < N; i++) {
		struct th_pkt *a = th_ack(t->spec, i, (m + 1) * PKTS - 1, 0x1F);

		th_input(t, a, 2 * MS, NULL);
		th_pkt_free(a);
	}
}

/*
 * Every class's DSCP and its drop-eligible one mark a tolerant message: a
 * middle packet lost in each goes short, counted under its class; the class
 * above them (DSCP 34, an exact message of a job of 3 classes) never does,
 * its sender NAKed.
 */
static void test_class_dscps_tolerant(void **state)
{
	static const uint8_t dscps[] = { 10, 12, 18, 20, 26, 28, 34 };
	struct th t;

	(void)state;
	th_init(&t, spec_of(0, CLASSES, 250000), 16);
	for (uint32_t m = 0; m < sizeof(dscps); m++) {
		const uint8_t d[N] = { dscps[m], dscps[m], dscps[m], dscps[m] };

		message_lost_middle(&t, m, d);
		assert_int_equal(th_ctr(&t, NR_ECTR_SHORT_SLOTS), m < 6 ? m + 1 : 6);
		if (m == 6) {
			struct th_pkt *k;

			assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);     /* exact: at once */
			for (uint32_t g = m * PKTS + 1; g < (m + 1) * PKTS; g++) {
				k = pkt(t.spec, 2, g, dscps[m]);
				if (th_input(&t, k, 2 * MS, NULL) != NR_V_HELD)
					th_pkt_free(k);
			}
		}
		ack_message(&t, m);
	}
	{
		struct nr_job_stats st;

		assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
		assert_int_equal(st.next_emit, sizeof(dscps) * PKTS);
		assert_int_equal(st.short_why[NR_SHORT_WHY_EXACT], 1);
		/* by class: DSCPs 10, 12 class 0; 18, 20 class 1; 26, 28 class 2 */
		assert_int_equal(st.short_cls[0], 2);
		assert_int_equal(st.short_cls[1], 2);
		assert_int_equal(st.short_cls[2], 2);
		assert_int_equal(st.short_cls[3], 0);
		/* 6 tolerant messages of N x PKTS - 1 contributions, 3 of them drop-eligible
		 * (12, 20, 28), each with a short slot of drop-eligible contributions alone */
		assert_int_equal(st.tol_pkts, 6 * (N * PKTS - 1));
		assert_int_equal(st.de_pkts, 3 * (N * PKTS - 1));
		assert_int_equal(st.short_de, 3);
	}
	th_fini(&t);
}

/*
 * A short slot counts as drop-eligible (short_de) only when every
 * contribution in it was: message 0's lost middle packet's slot has rank 0's
 * contribution marked AF11 among AF12 ones, message 1's all AF12.
 */
static void test_short_de_mixed(void **state)
{
	struct nr_job_stats st;
	struct th t;

	(void)state;
	th_init(&t, spec_of(0, 1, 250000), 16);
	for (uint32_t m = 0; m < 2; m++) {
		const uint8_t d[N] = { m == 0 ? DSCP : DSCP + 2, DSCP + 2, DSCP + 2, DSCP + 2 };

		message_lost_middle(&t, m, d);
		ack_message(&t, m);
	}
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.ctr[NR_ECTR_SHORT_SLOTS], 2);
	assert_int_equal(st.short_de, 1);
	assert_int_equal(st.tol_pkts, 2 * (N * PKTS - 1));
	assert_int_equal(st.de_pkts, 2 * (N * PKTS - 1) - PKTS);
	th_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_class_order),
		cmocka_unit_test(test_class_dscps_tolerant),
		cmocka_unit_test(test_short_de_mixed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
