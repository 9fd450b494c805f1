/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The status monitor for a selective job (spec selective: its requesters
 * are selective repeat; dataplane/engine/agg_nak.c).  A gap in a sender's
 * stream gets one selective NAK (syndrome 0x65) naming the missing PSNs
 * alone: the BTH PSN the first, the AETH's MSN field how many in a row.  It
 * acknowledges nothing, so it is never clamped to the receiver's mark; the
 * resends of its run are the same NAK's (no new one while they come in);
 * the next hole is NAKed as soon as the one before it is filled, since the
 * sender resends nothing it is not told to; a re-arm is a selective NAK
 * again, naming what is still missing.  Every NAK is checked byte for byte
 * against the receiver's ACK it was made from.  A receiver's selective NAK
 * moves no mark: the box resends exactly the results it names (a repair)
 * when it holds them all and drops it, or forwards it to the sender.  (A
 * go-back-N job's NAKs: test_monitor.c, unchanged; its receivers' selective
 * NAKs, which it does not expect, are forwarded.)
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
#define N  3

/* conn 1's PSNs wrap: its g=1 is PSN 0xFFFFFF, g=2 PSN 0 */
static const uint32_t ipsn[N] = { 100, 0xFFFFFE, 7 };

static void init(struct th *t, uint32_t job)
{
	struct nr_job_spec *s = th_spec(N, 1024, 1024, 16, NR_SUM_ORDERED, ipsn);

	s->selective = 1;
	th_init(t, s, job);
}

/* conn's packet g (one packet a message), every element (conn + 1) * (g + 1). */
static enum agg_verdict data(struct th *t, uint32_t conn, uint32_t g, uint64_t now)
{
	float v[256];
	struct th_pkt *k;
	enum agg_verdict r;

	for (uint32_t w = 0; w < 256; w++)
		v[w] = (float)((conn + 1) * (g + 1));
	k = th_data(t->spec, conn, nr_psn_add(ipsn[conn], g), NR_OP_RC_WRITE_ONLY_IMM,
		    0x01000000 | g, v, 1024);
	k->origin = (uint16_t)(10 + conn);
	r = th_input(t, k, now, NULL);
	if (r != NR_V_HELD)
		th_pkt_free(k);
	return r;
}

/* The receiver of conn acknowledges g. */
static void ack(struct th *t, uint32_t conn, uint32_t g, uint64_t now)
{
	struct th_pkt *k = th_ack(t->spec, conn, nr_psn_add(ipsn[conn], g), 0x1F);

	k->origin = (uint16_t)(20 + conn);
	assert_int_equal(th_input(t, k, now, NULL), NR_V_FORWARD);
	th_pkt_free(k);
}

/* g of every connection, then every receiver ACKs it. */
static void slot(struct th *t, uint32_t g, uint64_t now)
{
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(data(t, i, g, now), NR_V_HELD);
	for (uint32_t i = 0; i < N; i++)
		ack(t, i, g, now);
}

/*
 * t->sent[k]: a selective NAK to conn's sender naming run PSNs from g's,
 * otherwise the receiver's ACK byte for byte (MACs, IPs, UDP source port,
 * QPN), out of the port that ACK came in on; ICRC checked by the harness.
 */
static void check_sel(struct th *t, uint32_t k, uint32_t conn, uint32_t g, uint32_t run)
{
	const struct th_sent *x = &t->sent[k];
	struct th_pkt *want = th_aeth(t->spec, conn, nr_psn_add(ipsn[conn], g),
				      NR_AETH_NAK_SELECTIVE, run);

	assert_true(k < t->nsent);
	assert_int_equal(x->origin, 20 + conn);
	assert_int_equal(x->p.aeth_syn, NR_AETH_NAK_SELECTIVE);
	assert_int_equal(x->p.psn, nr_psn_add(ipsn[conn], g));
	assert_int_equal(nr_sel_nak_run(x->p.aeth_msn), run);
	assert_int_equal(x->len, want->len);
	assert_memory_equal(x->frame, want->frame, want->len);
	th_pkt_free(want);
}

/* The results: every connection's g = 0 .. upto - 1 once, in order, each the sum. */
static void check_results(const struct th *t, uint32_t upto)
{
	uint32_t next[N] = { 0 };

	for (uint32_t k = 0; k < t->log_len; k++) {
		const struct th_emit *em = &t->log[k];

		assert_int_equal(em->g, next[em->conn]);
		assert_true(th_pf(em->pkt, 0) == 6.0f * (float)(em->g + 1));
		next[em->conn]++;
	}
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(next[i], upto);
}

/*
 * A packet lost before the box, before the receiver acknowledged anything
 * (mark 0): one selective NAK at the lost PSN itself, run 1, where a
 * go-back-N job's would be clamped to PSN ipsn (the mark).  The sender
 * resends that packet alone; the results come out in order.
 */
static void test_gap_unclamped(void **state)
{
	struct nr_job_stats st;
	struct th t;

	(void)state;
	init(&t, 3);
	for (uint32_t i = 0; i < N; i++)
		assert_int_equal(data(&t, i, 0, 0), NR_V_HELD); /* result 0 out, not ACKed */
	data(&t, 0, 1, 1 * MS);
	data(&t, 2, 1, 1 * MS);
	/* conn 1's g=1 (PSN 0xFFFFFF) is lost; its g=2 shows the gap */
	assert_int_equal(data(&t, 1, 2, 1 * MS), NR_V_HELD);
	assert_int_equal(t.nsent, 1);
	assert_int_equal(t.sent[0].p.opcode, NR_OP_RC_ACK);
	assert_int_equal(t.sent[0].p.aeth_syn, NR_AETH_NAK_SELECTIVE);
	assert_int_equal(t.sent[0].p.psn, 0xFFFFFF);
	assert_int_equal(t.sent[0].p.aeth_msn, 1);
	assert_int_equal(t.sent[0].p.qpn, t.spec->conns[1].src_qpn);
	assert_int_equal(t.sent[0].p.daddr, t.spec->conns[1].src_ip);
	assert_int_equal(t.sent[0].origin, 11); /* no ACK yet: the sender's packet turned around */
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);
	agg_engine_poll(t.e, 3 * MS);
	assert_int_equal(t.nsent, 1);
	/* the sender resends g=1 alone: slots 1 and 2 complete, in order */
	data(&t, 0, 2, 4 * MS);
	data(&t, 2, 2, 4 * MS);
	assert_int_equal(t.log_len, N);
	assert_int_equal(data(&t, 1, 1, 4 * MS), NR_V_HELD);
	check_results(&t, 3);
	/* the NAK acknowledged nothing: no receiver's mark moved */
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_release, 0);
	for (uint32_t i = 0; i < N; i++)
		ack(&t, i, 2, 5 * MS);
	agg_engine_poll(t.e, 100 * MS);
	assert_int_equal(t.nsent, 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_REARM) + th_ctr(&t, NR_ECTR_NAK_PROBE), 0);
	th_fini(&t);
}

/*
 * Three packets lost in a row: one selective NAK, run 3.  Its resends, in
 * any order, are that NAK's: none of them shows a new gap.
 */
static void test_run_of_three(void **state)
{
	struct th t;

	(void)state;
	init(&t, 4);
	slot(&t, 0, 0); /* every receiver ACKed g=0: mark 1 */
	for (uint32_t g = 1; g <= 4; g++)
		for (uint32_t i = 1; i < N; i++)
			data(&t, i, g, 1 * MS);
	assert_int_equal(data(&t, 0, 4, 1 * MS), NR_V_HELD); /* conn 0: 1..3 lost */
	assert_int_equal(t.nsent, 1);
	check_sel(&t, 0, 0, 1, 3);
	data(&t, 0, 1, 2 * MS);
	assert_int_equal(t.log_len, 2 * N);
	data(&t, 0, 3, 2 * MS); /* overtakes 2: still the same NAK's */
	assert_int_equal(t.nsent, 1);
	assert_int_equal(t.log_len, 2 * N);
	data(&t, 0, 2, 2 * MS);
	check_results(&t, 5);
	assert_int_equal(t.nsent, 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);
	th_fini(&t);
}

/*
 * Two holes of one sender: the NAK of the first at once, and the second's as
 * soon as the first is filled (its sender resends only what it is told),
 * not when its next packet comes.
 */
static void test_next_hole_at_once(void **state)
{
	struct th t;

	(void)state;
	init(&t, 5);
	slot(&t, 0, 0);
	for (uint32_t g = 1; g <= 4; g++)
		for (uint32_t i = 0; i < 2; i++)
			data(&t, i, g, 1 * MS);
	data(&t, 2, 2, 1 * MS); /* conn 2: g=1 lost */
	assert_int_equal(t.nsent, 1);
	check_sel(&t, 0, 2, 1, 1);
	data(&t, 2, 4, 1 * MS); /* g=3 lost too: the first hole's NAK is out */
	assert_int_equal(t.nsent, 1);
	data(&t, 2, 1, 2 * MS); /* filled: the hole at 3 is NAKed now */
	assert_int_equal(t.nsent, 2);
	check_sel(&t, 1, 2, 3, 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 2);
	assert_int_equal(t.log_len, 3 * N);
	data(&t, 2, 3, 3 * MS);
	check_results(&t, 5);
	assert_int_equal(t.nsent, 2);
	th_fini(&t);
}

/*
 * A re-arm (the NAK, or some of what it asked for, lost): a selective NAK
 * again, not an RNR NAK, naming what of the run is still missing.
 */
static void test_rearm_selective(void **state)
{
	struct th t;

	(void)state;
	init(&t, 7);
	slot(&t, 0, 0);
	for (uint32_t g = 1; g <= 4; g++)
		for (uint32_t i = 0; i < N; i += 2)
			data(&t, i, g, 1 * MS);
	data(&t, 1, 4, 1 * MS); /* conn 1: 1..3 lost */
	assert_int_equal(t.nsent, 1);
	check_sel(&t, 0, 1, 1, 3);
	data(&t, 1, 1, 2 * MS); /* only g=1's resend arrives */
	for (uint32_t i = 0; i < N; i++)
		ack(&t, i, 1, 2 * MS); /* (no result waits: nothing solicited) */
	agg_engine_poll(t.e, 12 * MS);
	assert_int_equal(t.nsent, 1);
	agg_engine_poll(t.e, 14 * MS); /* 3 round trips (12 ms) after the NAK */
	assert_int_equal(t.nsent, 2);
	check_sel(&t, 1, 1, 2, 2);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_REARM), 1);
	data(&t, 1, 2, 15 * MS);
	data(&t, 1, 3, 15 * MS);
	check_results(&t, 5);
	for (uint32_t i = 0; i < N; i++)
		ack(&t, i, 4, 16 * MS);
	agg_engine_poll(t.e, 100 * MS);
	assert_int_equal(t.nsent, 2);
	th_fini(&t);
}

/* The receiver of conn NAKs selectively at g, run in the MSN field: the verdict and counter. */
static enum agg_verdict sel_nak(struct th *t, uint32_t conn, uint32_t g, uint32_t run, uint64_t now,
				enum nr_engine_ctr *c)
{
	struct th_pkt *k = th_aeth(t->spec, conn, nr_psn_add(ipsn[conn], g), NR_AETH_NAK_SELECTIVE,
				   run);
	enum agg_verdict v;

	k->origin = (uint16_t)(20 + conn);
	*c = NR_ECTR_MAX;
	v = th_input(t, k, now, c);
	th_pkt_free(k);
	return v;
}

/*
 * Results lost after the box: a receiver's selective NAK names them, and
 * the box, which holds them (emitted, not every receiver has ACKed them),
 * resends exactly those, the last with AckReq, and drops the NAK: the
 * sender never sees it.  The NAK acknowledges nothing: the receiver's mark
 * stays where its last ACK put it.  The same NAK again within the re-arm
 * time is the repair's echo, dropped.
 */
static void test_receiver_sel_nak_repaired(void **state)
{
	enum nr_engine_ctr c;
	struct nr_job_stats st;
	struct th t;

	(void)state;
	init(&t, 9);
	slot(&t, 0, 0);
	for (uint32_t g = 1; g <= 4; g++)
		for (uint32_t i = 0; i < N; i++)
			data(&t, i, g, 1 * MS);
	assert_int_equal(t.log_len, 5 * N);
	ack(&t, 0, 1, 2 * MS); /* receiver 0: mark 2 */
	ack(&t, 2, 4, 2 * MS);
	/* receiver 0 got 2 and 4, lost 3: one result again, with AckReq */
	assert_int_equal(sel_nak(&t, 0, 3, 1, 2 * MS, &c), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_NAK_REPAIRED);
	assert_int_equal(t.nsent, 1);
	th_check_repair(&t, 0, 0, 3, true);
	assert_int_equal(th_ctr(&t, NR_ECTR_REPAIR_SENT), 1);
	assert_int_equal(sel_nak(&t, 0, 3, 1, 3 * MS, &c), NR_V_DROP); /* the echo */
	assert_int_equal(c, NR_ECTR_NAK_REPAIRED);
	assert_int_equal(t.nsent, 1);
	/* receiver 1 lost 2 and 3 (MSN 2; and 0 reads as 1): two results, the last
	 * with AckReq */
	assert_int_equal(sel_nak(&t, 1, 2, 2, 3 * MS, &c), NR_V_DROP);
	assert_int_equal(t.nsent, 3);
	th_check_repair(&t, 1, 1, 2, false);
	th_check_repair(&t, 2, 1, 3, true);
	assert_int_equal(sel_nak(&t, 1, 4, 0, 3 * MS, &c), NR_V_DROP);
	assert_int_equal(t.nsent, 4);
	th_check_repair(&t, 3, 1, 4, true);
	assert_int_equal(th_ctr(&t, NR_ECTR_REPAIR_SENT), 4);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_REPAIRED), 4);
	/* no mark moved: receiver 1 acknowledged only g=0, so slot 1 waits */
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_release, 1);
	ack(&t, 1, 4, 4 * MS);
	ack(&t, 0, 4, 4 * MS);
	assert_int_equal(agg_engine_job_stats(t.e, t.job, &st), 0);
	assert_int_equal(st.next_release, 5);
	th_fini(&t);
}

/*
 * A receiver's selective NAK the box cannot answer goes on to the sender
 * (counted acks_snooped), which resends those packets: a result not
 * emitted yet, a run past what was emitted, one already released.  A go-back-N job's receiver is not expected to NAK
 * selectively: its selective NAK is forwarded as any other NAK code.
 */
static void test_receiver_sel_nak_forwarded(void **state)
{
	enum nr_engine_ctr c;
	struct th t;

	(void)state;
	init(&t, 11);
	slot(&t, 0, 0);
	for (uint32_t g = 1; g <= 2; g++)
		for (uint32_t i = 0; i < N; i++)
			data(&t, i, g, 1 * MS);
	data(&t, 0, 3, 1 * MS); /* slot 3 waits: next_emit 3 */
	assert_int_equal(sel_nak(&t, 0, 3, 1, 2 * MS, &c), NR_V_FORWARD);
	assert_int_equal(c, NR_ECTR_ACKS_SNOOPED);
	assert_int_equal(sel_nak(&t, 0, 2, 2, 2 * MS, &c), NR_V_FORWARD);
	assert_int_equal(sel_nak(&t, 0, 1, 65, 2 * MS, &c), NR_V_FORWARD);
	assert_int_equal(sel_nak(&t, 0, 0, 1, 2 * MS, &c), NR_V_FORWARD); /* released */
	assert_int_equal(c, NR_ECTR_ACKS_SNOOPED);
	assert_int_equal(t.nsent, 0);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_REPAIRED), 0);
	/* the sender resends 2, as told: the stored result answers it */
	{
		float v[256];
		struct th_pkt *k;

		for (uint32_t w = 0; w < 256; w++)
			v[w] = 3.0f;
		k = th_data(t.spec, 0, nr_psn_add(ipsn[0], 2), NR_OP_RC_WRITE_ONLY_IMM, 0x01000002,
			    v, 1024);
		assert_int_equal(th_input(&t, k, 3 * MS, &c), NR_V_RESEND);
		assert_int_equal(c, NR_ECTR_DUP_RESENT);
		assert_true(th_pf(k, 0) == 18.0f);
		th_pkt_free(k);
	}
	th_fini(&t);

	/* a go-back-N job: forwarded, whatever it names */
	th_init(&t, th_spec(N, 1024, 1024, 16, NR_SUM_ORDERED, ipsn), 12);
	slot(&t, 0, 0);
	for (uint32_t i = 0; i < N; i++)
		data(&t, i, 1, 1 * MS);
	assert_int_equal(sel_nak(&t, 0, 1, 1, 2 * MS, &c), NR_V_FORWARD);
	assert_int_equal(c, NR_ECTR_ACKS_SNOOPED);
	assert_int_equal(t.nsent, 0);
	th_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gap_unclamped),
		cmocka_unit_test(test_run_of_three),
		cmocka_unit_test(test_next_hole_at_once),
		cmocka_unit_test(test_rearm_selective),
		cmocka_unit_test(test_receiver_sel_nak_repaired),
		cmocka_unit_test(test_receiver_sel_nak_forwarded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
