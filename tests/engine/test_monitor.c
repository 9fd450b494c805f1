/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The status monitor (dataplane/engine/agg_nak.c): the NAKs the box sends
 * a sender on its receiver's behalf, and the results it resends itself.
 * Losses before the box (a gap in a sender's stream), after it (the
 * receiver's NAK answered by a repair from the stored results; the last
 * result again with AckReq, then a probe, when the repair is lost and the
 * receiver stays silent), of ACKs (the mark lags: NAKs follow it), of NAKs
 * (re-armed, or probed) and at the tail of a window (solicited, probed); a
 * gap's first NAK is a
 * PSN sequence error, re-arms and probes are RNR NAKs (timer code 1); and the
 * rule it never breaks: a NAK for PSN q acknowledges q - 1, so q is never
 * beyond the receiver's mark.  Every NAK is checked byte for byte against the
 * receiver's ACK it was made from.
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
#define N 3

static const uint32_t ipsn[N] = { 100, 0xFFFFFE, 7 };
static float pay[256] = { 1.0f, 2.0f };

/* Sequence g (one packet) of conn at time now. */
static enum agg_verdict data(struct th *t, uint32_t conn, uint32_t g, uint64_t now)
{
	struct th_pkt *k = th_data(t->spec, conn, nr_psn_add(ipsn[conn], g),
				   NR_OP_RC_WRITE_ONLY_IMM, 0x01000000 | g, pay, 1024);
	enum agg_verdict v;

	k->origin = (uint16_t)(10 + conn);
	v = th_input(t, k, now, NULL);
	if (v != NR_V_HELD)
		th_pkt_free(k);
	return v;
}

/* The receiver of conn acknowledges g (syn 0x1F) or NAKs at g (0x60). */
static void ack(struct th *t, uint32_t conn, uint32_t g, uint8_t syn, uint64_t now)
{
	struct th_pkt *k = th_ack(t->spec, conn, nr_psn_add(ipsn[conn], g), syn);

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
		ack(t, i, g, 0x1F, now);
}

/*
 * The NAK t->sent[k]: to conn's sender, at sequence g with syndrome syn, and otherwise the
 * receiver's ACK (th_ack's frame) byte for byte: MACs, IPs, UDP source port,
 * QPN, MSN; ICRC checked by the harness.
 */
static void check_syn(struct th *t, uint32_t k, uint32_t conn, uint32_t g, uint8_t syn)
{
	const struct th_sent *x = &t->sent[k];
	struct th_pkt *want = th_ack(t->spec, conn, nr_psn_add(ipsn[conn], g), syn);

	assert_true(k < t->nsent);
	assert_int_equal(x->origin, 20 + conn);     /* where the receiver's ACKs came from */
	assert_int_equal(x->p.aeth_syn, syn);
	assert_int_equal(x->p.psn, nr_psn_add(ipsn[conn], g));
	assert_int_equal(x->p.qpn, t->spec->conns[conn].src_qpn);
	assert_int_equal(x->len, want->len);
	assert_memory_equal(x->frame, want->frame, want->len);
	th_pkt_free(want);
}

/* A gap's NAK: PSN sequence error, as the receiver would send it. */
static void check_nak(struct th *t, uint32_t k, uint32_t conn, uint32_t g)
{
	check_syn(t, k, conn, g, NR_AETH_NAK_PSN_SEQ_ERR);
}

/* A re-arm or probe: an RNR NAK with the shortest timer (code 1). */
static void check_rnr(struct th *t, uint32_t k, uint32_t conn, uint32_t g)
{
	check_syn(t, k, conn, g, NR_AETH_RNR_NAK | 1);
}

static void init(struct th *t)
{
	th_init(t, th_spec(N, 1024, 1024, 16, NR_SUM_ORDERED, ipsn), 3);
}

/* A loss before the box: one NAK at the gap, silence, re-arm, repaired. */
static void test_gap_before_box(void **state)
{
	struct th t;

	init(&t);
	slot(&t, 0, 0);                         /* every receiver ACKed g=0: mark 1 */
	for (uint32_t i = 0; i < N; i++)
		if (i != 1)
			data(&t, i, 1, 1 * MS);
	/* conn 1's g=1 is lost; g=2 shows the gap */
	assert_int_equal(data(&t, 1, 2, 2 * MS), NR_V_HELD);
	assert_int_equal(t.nsent, 1);
	check_nak(&t, 0, 1, 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);
	/* silence for that gap: more packets beyond it, polls before the re-arm */
	data(&t, 1, 3, 2 * MS);
	data(&t, 1, 4, 3 * MS);
	agg_engine_poll(t.e, 3 * MS);
	assert_int_equal(t.nsent, 1);
	/* the NAK (or its resend) was lost: re-armed after 3 round trips (12 ms) */
	agg_engine_poll(t.e, 15 * MS);
	assert_int_equal(t.nsent, 2);
	check_rnr(&t, 1, 1, 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_REARM), 1);
	/* the sender goes back to g=1: repaired, slot 1 completes; its resends
	 * of 2..4 are duplicates and ask for nothing */
	assert_int_equal(data(&t, 1, 1, 16 * MS), NR_V_HELD);
	assert_int_equal(t.log_len, 2 * N);
	for (uint32_t g = 2; g <= 4; g++)
		assert_int_equal(data(&t, 1, g, 16 * MS), NR_V_DROP);
	/* the others send 2..4, every receiver catches up: nothing waits */
	for (uint32_t g = 2; g <= 4; g++)
		for (uint32_t i = 0; i < N; i += 2)
			data(&t, i, g, 17 * MS);
	assert_int_equal(t.log_len, 5 * N);
	for (uint32_t i = 0; i < N; i++)
		ack(&t, i, 4, 0x1F, 18 * MS);
	agg_engine_poll(t.e, 100 * MS);
	assert_int_equal(t.nsent, 2);
	th_fini(&t);
}

/*
 * The receiver's mark lags (its ACKs are coalesced, or lost): the NAK for a
 * gap at g=3 goes at the mark (1), never beyond it; ACKs lost on the way
 * move nothing; a later ACK moves the next NAK with it.
 */
static void test_nak_never_beyond_mark(void **state)
{
	struct th t;

	init(&t);
	slot(&t, 0, 0);                         /* mark 1 everywhere */
	for (uint32_t g = 1; g <= 2; g++)       /* emitted, not acknowledged */
		for (uint32_t i = 0; i < N; i++)
			data(&t, i, g, 1 * MS);
	assert_int_equal(t.log_len, 3 * N);
	data(&t, 2, 4, 2 * MS);                 /* conn 2: g=3 lost */
	assert_int_equal(t.nsent, 1);
	check_nak(&t, 0, 2, 1);                 /* at the mark 1, not at the gap 3 */
	/* the others: 3 and 4 sent, every result acknowledged (no probes) */
	for (uint32_t i = 0; i < 2; i++) {
		data(&t, i, 3, 2 * MS);
		data(&t, i, 4, 2 * MS);
		ack(&t, i, 2, 0x1F, 2 * MS);
	}
	/* the receiver acknowledges g=1 (its ACK of g=2 is lost): the re-armed
	 * NAK goes at 2 */
	ack(&t, 2, 1, 0x1F, 3 * MS);
	agg_engine_poll(t.e, 20 * MS);
	assert_int_equal(t.nsent, 2);
	check_rnr(&t, 1, 2, 2);
	/* an ACK of g=2 arrives: the next re-arm is at the gap itself */
	ack(&t, 2, 2, 0x1F, 21 * MS);
	agg_engine_poll(t.e, 40 * MS);
	assert_int_equal(t.nsent, 3);
	check_rnr(&t, 2, 2, 3);
	for (uint32_t k = 0; k < t.nsent; k++)
		assert_true(nr_psn_diff(t.sent[k].p.psn, ipsn[2]) <= 3);
	th_fini(&t);
}

/* The receiver of conn NAKs at g: the verdict, and the counter that moved. */
static enum agg_verdict nak(struct th *t, uint32_t conn, uint32_t g, uint64_t now,
			   enum nr_engine_ctr *c)
{
	struct th_pkt *k = th_ack(t->spec, conn, nr_psn_add(ipsn[conn], g),
				  NR_AETH_NAK_PSN_SEQ_ERR);
	enum agg_verdict v;

	k->origin = (uint16_t)(20 + conn);
	v = th_input(t, k, now, c);
	th_pkt_free(k);
	return v;
}

/*
 * A result lost after the box: the receiver NAKs at its mark, and the box,
 * which holds every result from the mark on (a slot is released only when
 * all receivers ACKed it), resends them itself (a repair) instead of sending
 * the NAK on: the sender does not go back.  A second NAK at the same mark
 * within the re-arm time is the repair's echo.  If the receiver's mark then
 * does not move within the probe time (the repair was lost: the receiver
 * stays silent until it gets what it asked for), the box NAKs the sender at
 * the mark; once the receiver catches up, the box is silent.
 */
static void test_receiver_loss_repaired(void **state)
{
	struct th t;
	struct th_pkt *k;
	enum nr_engine_ctr c = NR_ECTR_MAX;

	init(&t);
	slot(&t, 0, 0);
	for (uint32_t g = 1; g <= 3; g++)
		for (uint32_t i = 0; i < N; i++)
			data(&t, i, g, 1 * MS);
	ack(&t, 0, 1, 0x1F, 2 * MS);
	for (uint32_t i = 1; i < N; i++)
		ack(&t, i, 3, 0x1F, 2 * MS);
	/* conn 0's receiver lost the result of g=2 and saw g=3: NAK at 2 */
	assert_int_equal(nak(&t, 0, 2, 2 * MS, &c), NR_V_DROP);
	assert_int_equal(c, NR_ECTR_NAK_REPAIRED);
	assert_int_equal(t.nsent, 2);           /* results 2 and 3, the last with AckReq */
	th_check_repair(&t, 0, 0, 2, false);
	th_check_repair(&t, 1, 0, 3, true);
	assert_int_equal(th_ctr(&t, NR_ECTR_REPAIR_SENT), 2);
	assert_int_equal(nak(&t, 0, 2, 3 * MS, &c), NR_V_DROP);   /* the echo */
	assert_int_equal(t.nsent, 2);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_REPAIRED), 2);
	agg_engine_poll(t.e, 9 * MS);
	assert_int_equal(t.nsent, 2);
	/* ... but the repair was lost too: the receiver stays silent; 2 round
	 * trips (8 ms) after the repair went out the box resends the last result
	 * with AckReq, to have it ACKed or NAKed */
	agg_engine_poll(t.e, 10 * MS);
	assert_int_equal(t.nsent, 3);
	th_check_repair(&t, 2, 0, 3, true);
	assert_int_equal(th_ctr(&t, NR_ECTR_ACK_SOLICIT), 1);
	/* lost as well: 4 round trips (16 ms) after the repair, the box NAKs
	 * the sender */
	agg_engine_poll(t.e, 17 * MS);
	assert_int_equal(t.nsent, 3);
	agg_engine_poll(t.e, 18 * MS);
	assert_int_equal(t.nsent, 4);
	check_rnr(&t, 3, 0, 2);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_PROBE), 1);
	agg_engine_poll(t.e, 30 * MS);           /* one of each per stall and probe time */
	assert_int_equal(t.nsent, 4);
	/* the sender's resend of g=2 is answered with the stored result */
	k = th_data(t.spec, 0, nr_psn_add(ipsn[0], 2), NR_OP_RC_WRITE_ONLY_IMM, 0x01000002,
		    pay, 1024);
	assert_int_equal(th_input(&t, k, 31 * MS, NULL), NR_V_RESEND);
	th_pkt_free(k);
	/* the receiver gets it and acknowledges up to 3: no more NAKs */
	ack(&t, 0, 3, 0x1F, 31 * MS);
	agg_engine_poll(t.e, 200 * MS);
	assert_int_equal(t.nsent, 4);
	/* a NAK at the mark with nothing emitted beyond it: for the sender */
	for (uint32_t i = 0; i < N; i++)
		data(&t, i, 4, 201 * MS);
	assert_int_equal(nak(&t, 0, 5, 202 * MS, &c), NR_V_FORWARD);
	assert_int_equal(c, NR_ECTR_ACKS_SNOOPED);
	assert_int_equal(t.nsent, 4);
	th_fini(&t);
}

/*
 * A repair's first packets carry the RETH their connection's sender wrote
 * (each receiver's own buffer), kept with the slot.
 */
static void test_repair_keeps_reth(void **state)
{
	struct th t;
	enum nr_engine_ctr c = NR_ECTR_MAX;

	init(&t);
	for (uint32_t i = 0; i < N; i++) {
		struct nr_flow f;
		struct nr_build_args a = {
			.opcode = NR_OP_RC_WRITE_ONLY, .psn = ipsn[i], .ackreq = true,
			.va = 0x7f0000001000ull + i * 0x100000, .rkey = 0xA000 + i, .dma_len = 1024,
		};
		struct th_pkt *k;

		th_flow_data(t.spec, i, &f);
		k = th_build(&f, &a, pay, 1024);
		k->origin = (uint16_t)(10 + i);
		assert_int_equal(th_input(&t, k, 0, NULL), NR_V_HELD);
	}
	assert_int_equal(t.log_len, N);
	for (uint32_t i = 0; i < N; i++) {
		assert_int_equal(nak(&t, i, 0, 1 * MS, &c), NR_V_DROP);
		assert_int_equal(c, NR_ECTR_NAK_REPAIRED);
		th_check_repair(&t, i, i, 0, true);
		assert_true(t.sent[i].p.mask & NR_OPF_RETH);
		assert_int_equal(t.sent[i].p.reth_va, 0x7f0000001000ull + i * 0x100000);
		assert_int_equal(t.sent[i].p.reth_rkey, 0xA000 + i);
		assert_int_equal(t.sent[i].p.reth_len, 1024);
	}
	th_fini(&t);
}

/*
 * Losses nobody sees as a gap: the last packet a sender sent before its
 * window closed (conn 2's g=2: slot 2 waits for it, nothing of conn 2
 * follows), and the last result before a receiver's ACK (conn 1's receiver
 * got results 0..1 but not 2, an AckReq packet: it never ACKs).  The first
 * is probed at the mark after the probe time (4 round trips).  The second
 * gets its last result again, with AckReq, after 2 round trips of
 * standstill; when that is lost too, the probe at the mark follows after 4.
 * A connection that waits for nothing is never probed.
 */
static void test_tail_losses_probed(void **state)
{
	struct th t;

	init(&t);
	slot(&t, 0, 0);
	slot(&t, 1, 1 * MS);
	data(&t, 0, 2, 2 * MS);
	data(&t, 1, 2, 2 * MS);                 /* conn 2's g=2 lost: slot 2 waits */
	agg_engine_poll(t.e, 16 * MS);
	assert_int_equal(t.nsent, 0);
	agg_engine_poll(t.e, 17 * MS);           /* 16 ms since conn 2's stream last moved */
	assert_int_equal(t.nsent, 1);
	check_rnr(&t, 0, 2, 2);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_PROBE), 1);
	/* the sender resends g=2: slot 2 completes and its results go out */
	data(&t, 2, 2, 20 * MS);
	assert_int_equal(t.log_len, 3 * N);
	ack(&t, 0, 2, 0x1F, 21 * MS);
	ack(&t, 2, 2, 0x1F, 21 * MS);
	/* conn 1's receiver lost result 2 (AckReq) and stays silent: result 2
	 * again, with AckReq, 8 ms after it went out */
	agg_engine_poll(t.e, 27 * MS);
	assert_int_equal(t.nsent, 1);
	agg_engine_poll(t.e, 28 * MS);
	assert_int_equal(t.nsent, 2);
	th_check_repair(&t, 1, 1, 2, true);
	assert_int_equal(th_ctr(&t, NR_ECTR_ACK_SOLICIT), 1);
	/* lost too: probed at 2, 16 ms after the result */
	agg_engine_poll(t.e, 35 * MS);
	assert_int_equal(t.nsent, 2);
	agg_engine_poll(t.e, 36 * MS);
	assert_int_equal(t.nsent, 3);
	check_rnr(&t, 2, 1, 2);
	ack(&t, 1, 2, 0x1F, 38 * MS);
	agg_engine_poll(t.e, 500 * MS);          /* nothing waits: no probe */
	assert_int_equal(t.nsent, 3);
	th_fini(&t);
}

/*
 * Results still on their way are not a stall: the receivers' solicit and
 * probe times run from the last result that went out, not from their last
 * ACK.
 */
static void test_no_probe_while_results_flow(void **state)
{
	struct th t;

	init(&t);
	slot(&t, 0, 0);                         /* mark 1 everywhere at 0 ms */
	for (uint32_t g = 1; g <= 2; g++)       /* results 1, 2 leave at 15 ms */
		for (uint32_t i = 0; i < N; i++)
			data(&t, i, g, 15 * MS);
	assert_int_equal(t.log_len, 3 * N);
	agg_engine_poll(t.e, 20 * MS);           /* 20 ms since the ACKs, 5 since results */
	assert_int_equal(t.nsent, 0);
	agg_engine_poll(t.e, 23 * MS);           /* 8 ms of silence after them: result 2 again */
	assert_int_equal(t.nsent, N);
	for (uint32_t i = 0; i < N; i++)
		th_check_repair(&t, i, i, 2, true);
	agg_engine_poll(t.e, 30 * MS);
	assert_int_equal(t.nsent, N);
	agg_engine_poll(t.e, 31 * MS);           /* 16 ms: each probed */
	assert_int_equal(t.nsent, 2 * N);
	for (uint32_t i = 0; i < N; i++)
		check_rnr(&t, N + i, i, 1);
	th_fini(&t);
}

/*
 * A late contributor (a rank entering a collective late): slot 1 has conns
 * 0 and 1 and waits for conn 2.  Until the hold time (8 probe times: 128 ms
 * before any round-trip sample) only the probes of conn 2 go out (NAKs for
 * nothing it sent, once a probe time: a late sender ignores them); then each
 * waiting sender gets an RNR NAK with the 20.48 ms timer (code 22) at its
 * receiver's mark, again every 20 ms,
 * never one for conn 2 (it has nothing of slot 1 in flight to hold); once
 * conn 2 contributes, the holds stop.
 */
static void test_late_contributor_held(void **state)
{
	struct th t;
	uint32_t k, first, holds = 0, probes = 0;

	init(&t);
	slot(&t, 0, 0);
	data(&t, 0, 1, 1 * MS);
	data(&t, 1, 1, 1 * MS);
	agg_engine_poll(t.e, 90 * MS);
	agg_engine_poll(t.e, 120 * MS);
	for (k = 0; k < t.nsent; k++)
		assert_int_equal(t.sent[k].p.qpn, t.spec->conns[2].src_qpn);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_HOLD), 0);
	k = t.nsent;
	agg_engine_poll(t.e, 129 * MS);
	assert_int_equal(t.nsent, k + 2);
	check_syn(&t, k, 0, 1, NR_AETH_RNR_NAK | 22);
	check_syn(&t, k + 1, 1, 1, NR_AETH_RNR_NAK | 22);
	first = t.nsent;
	for (uint64_t now = 130; now < 2000; now += 10)
		agg_engine_poll(t.e, now * MS);
	for (k = 0; k < t.nsent; k++) {
		if (t.sent[k].p.aeth_syn == (NR_AETH_RNR_NAK | 22)) {
			assert_int_not_equal(t.sent[k].p.qpn, t.spec->conns[2].src_qpn);
			holds++;
		} else if (k >= first) {
			assert_int_equal(t.sent[k].p.qpn, t.spec->conns[2].src_qpn);
			probes++;
		}
	}
	/* conn 2's probes once a probe time (16 ms: every other 10 ms poll) */
	assert_int_equal(probes, (1980 - 140) / 20 + 1);
	assert_int_equal(holds, 2 * 94);   /* at 129, 150, 170, ... 1990 ms: 94 each */
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_HOLD), 2 * 94);
	/* the late rank arrives: slot 1 completes, the receivers ACK, no more holds */
	assert_int_equal(data(&t, 2, 1, 2000 * MS), NR_V_HELD);
	for (uint32_t i = 0; i < N; i++)
		ack(&t, i, 1, 0x1F, 2001 * MS);
	k = t.nsent;
	for (uint64_t now = 2010; now < 3000; now += 10)
		agg_engine_poll(t.e, now * MS);
	assert_int_equal(t.nsent, k);
	th_fini(&t);
}

/*
 * A gap before any ACK of the connection: the NAK is the sender's own packet
 * turned around (MACs and IPs swapped, the sender's QPN, MSN 0); once the
 * receiver's first ACK is in, the re-arm is built from that ACK.
 */
static void test_gap_before_first_ack(void **state)
{
	struct th t;
	struct th_pkt *want;
	const struct nr_eth_hdr *we, *ge;

	init(&t);
	for (uint32_t i = 0; i < N; i++)
		if (i != 0)
			data(&t, i, 0, 0);
	data(&t, 0, 1, 1 * MS);                 /* conn 0: g=0 lost */
	assert_int_equal(t.nsent, 1);
	assert_int_equal(th_ctr(&t, NR_ECTR_NAK_GAP), 1);
	assert_int_equal(t.sent[0].origin, 10);      /* the sender's port */
	want = th_ack(t.spec, 0, ipsn[0], NR_AETH_NAK_PSN_SEQ_ERR);
	assert_int_equal(t.sent[0].p.aeth_syn, NR_AETH_NAK_PSN_SEQ_ERR);
	assert_int_equal(t.sent[0].p.psn, ipsn[0]);  /* acknowledges nothing */
	assert_int_equal(t.sent[0].p.aeth_msn, 0);
	assert_int_equal(t.sent[0].p.qpn, want->p.qpn);
	assert_int_equal(t.sent[0].p.saddr, want->p.saddr);
	assert_int_equal(t.sent[0].p.daddr, want->p.daddr);
	we = (const struct nr_eth_hdr *)want->frame;
	ge = (const struct nr_eth_hdr *)t.sent[0].frame;
	assert_memory_equal(ge->src, we->src, NR_ETH_ALEN);
	assert_memory_equal(ge->dst, we->dst, NR_ETH_ALEN);
	th_pkt_free(want);
	/* a stale ACK of the job's start (PSN ipsn - 1: nothing acknowledged)
	 * gives the receiver's template; the re-arm is built from it */
	ack(&t, 0, 0xFFFFFF, 0x1F, 2 * MS);
	agg_engine_poll(t.e, 14 * MS);           /* re-arm: 3 round trips after the NAK */
	assert_int_equal(t.nsent, 2);
	check_rnr(&t, 1, 0, 0);
	th_fini(&t);
}

/*
 * The receivers' ACKs of everything emitted (the end of a collective), one
 * of them lost on its way to its sender: the box repeats each such ACK once
 * when its sender stays quiet for the probe time, byte for byte the
 * receiver's ACK; a sender that sends again cancels it, and nothing is
 * repeated while results are unacknowledged.
 */
static void test_tail_ack_repeated(void **state)
{
	struct th t;
	struct th_pkt *want;

	init(&t);
	slot(&t, 0, 0);                         /* every receiver ACKs g=0: all emitted */
	agg_engine_poll(t.e, 10 * MS);
	assert_int_equal(t.nrep, 0);
	agg_engine_poll(t.e, 17 * MS);           /* a probe time (16 ms) of quiet: once each */
	assert_int_equal(t.nrep, N);
	assert_int_equal(th_ctr(&t, NR_ECTR_ACK_REPEAT), N);
	want = th_ack(t.spec, N - 1, ipsn[N - 1], 0x1F);
	assert_int_equal(t.rep.origin, 20 + N - 1);
	assert_int_equal(t.rep.len, want->len);
	assert_memory_equal(t.rep.frame, want->frame, want->len);
	th_pkt_free(want);
	agg_engine_poll(t.e, 100 * MS);          /* once only */
	assert_int_equal(t.nrep, N);
	/* the next collective: conn 0 sends again at once (cancelled); the
	 * others' results wait for their ACKs: nothing repeated */
	slot(&t, 1, 101 * MS);
	for (uint32_t i = 0; i < N; i++)
		data(&t, i, 2, 101 * MS);
	agg_engine_poll(t.e, 200 * MS);
	assert_int_equal(t.nrep, N);
	assert_int_equal(t.nsent, 2 * N);       /* the receivers' result 2 again, then probes */
	th_fini(&t);
}

/* No ops.send (a caller that cannot transmit): gaps are only counted. */
static void test_without_send(void **state)
{
	struct agg_engine *e = agg_engine_create(NULL);
	struct nr_job_spec *s = th_spec(2, 1024, 1024, 4, NR_SUM_ORDERED, NULL);
	char err[128];
	struct th_pkt *k;
	uint64_t ctr[NR_ECTR_MAX];

	assert_int_equal(agg_engine_job_add(e, 1, s, 0, NULL, err, sizeof(err)), 0);
	k = th_ack(s, 0, 0xFFFFFF, 0x1F);
	assert_int_equal(agg_engine_input(e, &k->p, k->frame, k, 0, NULL), NR_V_FORWARD);
	th_pkt_free(k);
	k = th_data(s, 0, 1, NR_OP_RC_WRITE_ONLY_IMM, 0x01000001, pay, 1024);
	assert_int_equal(agg_engine_input(e, &k->p, k->frame, k, 0, NULL), NR_V_HELD);
	agg_engine_counters(e, ctr);
	assert_int_equal(ctr[NR_ECTR_NAK_GAP], 1);
	agg_engine_destroy(e);     /* frees k through no ops.free: the test keeps it */
	th_pkt_free(k);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gap_before_box),
		cmocka_unit_test(test_nak_never_beyond_mark),
		cmocka_unit_test(test_receiver_loss_repaired),
		cmocka_unit_test(test_repair_keeps_reth),
		cmocka_unit_test(test_tail_losses_probed),
		cmocka_unit_test(test_no_probe_while_results_flow),
		cmocka_unit_test(test_late_contributor_held),
		cmocka_unit_test(test_gap_before_first_ack),
		cmocka_unit_test(test_tail_ack_repeated),
		cmocka_unit_test(test_without_send),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
