/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soft transport's selective-repeat profile (NR_TP_PROFILE_SR,
 * host/transport/README.md, "Selective repeat"), packet by packet:
 *   - a lost middle packet is resent alone: the requester sends nothing else
 *     again, the responder kept what came after it and names it in one
 *     selective NAK;
 *   - a resend lost in turn: the responder names the PSN again after two
 *     NAK round trips, no ACK timeout;
 *   - a lost first packet (its RETH) and a lost last packet (ImmDt) alike;
 *   - reordering within SOFT_SR_REORDER is not loss: no NAK, no resend;
 *   - a selective NAK reaching a go-back-N requester moves its QP to error,
 *     naming the profile both ends must use;
 *   - under random loss both ways, every byte arrives and the requester
 *     resends a fraction of what the RNIC profile's go-back-N resends with
 *     the same losses.
 */
#include "soft_util.h"

#include "proto/roce_build.h"

#define MTU 1024

/* ---- a filter on A's sends: drops chosen data PSNs once, delays others once ---- */

struct plan {
	uint32_t ipsn;
	uint32_t drop[8], ndrop;   /* PSN offsets from ipsn, lost the first time */
	uint32_t drop_resend;      /* + 1: this offset's first resend lost too (0: none) */
	uint32_t delay[8], ndelay; /* ... sent after the rest of their batch, once */
	uint64_t seen[64];         /* offsets sent at least once (bitmap) */
	unsigned data, again;      /* data packets sent; of them, offsets sent before */
	uint32_t again_off[64];
	/* random loss (per mille) of data and of ACKs, both ways; seeded */
	unsigned loss;
	uint64_t rng;
};

static bool listed(const uint32_t *l, uint32_t n, uint32_t off)
{
	for (uint32_t i = 0; i < n; i++)
		if (l[i] == off)
			return true;
	return false;
}

static int plan_filter(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	struct plan *pl = arg;
	uint32_t off = nr_psn_sub(nr_bth_psn((const struct nr_bth *)pkt), pl->ipsn);
	bool first;

	(void)len;
	if (pl->loss)
		return tu_rand(&pl->rng) % 1000 < pl->loss ? NR_SOFT_DROP : NR_SOFT_PASS;
	if (dir != NR_SOFT_TX || pkt[0] == NR_OP_RC_ACK || off >= 64 * 64)
		return NR_SOFT_PASS;
	first = !(pl->seen[off / 64] >> (off % 64) & 1);
	pl->seen[off / 64] |= 1ull << (off % 64);
	pl->data++;
	if (!first && pl->again < 64)
		pl->again_off[pl->again++] = off;
	if (first && listed(pl->drop, pl->ndrop, off))
		return NR_SOFT_DROP;
	if (!first && pl->drop_resend == off + 1) {
		pl->drop_resend = 0;
		return NR_SOFT_DROP;
	}
	if (first && listed(pl->delay, pl->ndelay, off))
		return NR_SOFT_DELAY;
	return NR_SOFT_PASS;
}

static void sr_pair(struct pair *p, uint8_t profile_a, uint8_t profile_b, const char *ipa,
		    const char *ipb, size_t len)
{
	struct nr_tp_config ca = tu_cfg(ipa, MTU), cb = tu_cfg(ipb, MTU);

	ca.profile = profile_a;
	cb.profile = profile_b;
	ca.max_inflight = cb.max_inflight = 128;
	/* the adaptive wait starts at 33 ms: a test starved of CPU sees no
	 * timeout before B's NAK (2 ms before a round-trip sample) */
	ca.timeout = cb.timeout = 18;
	pair_open_cfg(p, &ca, &cb, len);
}

/* n writes of size bytes each, one after the other in A's send buffer. */
static uint64_t writes(struct pair *p, unsigned n, uint32_t size, unsigned window)
{
	uint32_t sizes[64];
	size_t offs[64];

	assert_true(n <= 64 && (size_t)n * size <= p->len);
	for (unsigned i = 0; i < n; i++) {
		sizes[i] = size;
		offs[i] = (size_t)i * size;
	}
	return pair_transfer(p, n, sizes, offs, window, 0x5100, 5000);
}

static void fill(struct pair *p)
{
	uint64_t seed = 0x5e1ec7;

	tu_fill(p->sbuf, p->len, &seed);
}

/* ---- one loss, resent alone ------------------------------------------------ */

static void test_lost_middle_resent_alone(void **state)
{
	struct pair *pp = &tu_pair;
	struct plan pl = { .drop = { 7 }, .ndrop = 1 };

	(void)state;
	sr_pair(pp, NR_TP_PROFILE_SR, NR_TP_PROFILE_SR, "127.0.0.81", "127.0.0.82", 16 * MTU);
	fill(pp);
	pl.ipsn = pp->ia.psn;
	assert_int_equal(nr_tp_soft_set_filter(pp->a, plan_filter, &pl), 0);
	writes(pp, 1, 16 * MTU, 1);
	tu_dump_stats("A", pp->a);
	tu_dump_stats("B", pp->b);
	/* 16 packets, and packet 7 once more: nothing else was sent again */
	assert_int_equal(pl.data, 17);
	assert_int_equal(pl.again, 1);
	assert_int_equal(pl.again_off[0], 7);
	assert_int_equal(TU_STAT(pp->a, tx_sel_resent), 1);
	assert_int_equal(TU_STAT(pp->a, tx_retrans), 1);
	assert_int_equal(TU_STAT(pp->a, rx_nak_sel), 1);
	assert_int_equal(TU_STAT(pp->a, timeouts), 0);
	/* B kept 8..15 for their turn, named 7 once, executed each packet once */
	assert_int_equal(TU_STAT(pp->b, rx_ooo_kept), 8);
	assert_int_equal(TU_STAT(pp->b, tx_nak_sel), 1);
	assert_int_equal(TU_STAT(pp->b, tx_nak_seq), 0);
	assert_int_equal(TU_STAT(pp->b, rx_data), 16);
}

/* The resend is lost too: B names the PSN again after two round trips, no timeout. */
static void test_lost_resend_named_again(void **state)
{
	struct pair *pp = &tu_pair;
	struct plan pl = { .drop = { 7 }, .ndrop = 1, .drop_resend = 8 };

	(void)state;
	sr_pair(pp, NR_TP_PROFILE_SR, NR_TP_PROFILE_SR, "127.0.0.93", "127.0.0.94", 16 * MTU);
	fill(pp);
	pl.ipsn = pp->ia.psn;
	assert_int_equal(nr_tp_soft_set_filter(pp->a, plan_filter, &pl), 0);
	writes(pp, 1, 16 * MTU, 1);
	tu_dump_stats("A", pp->a);
	tu_dump_stats("B", pp->b);
	assert_int_equal(pl.data, 18);
	assert_int_equal(pl.again, 2);
	assert_int_equal(pl.again_off[0], 7);
	assert_int_equal(pl.again_off[1], 7);
	assert_int_equal(TU_STAT(pp->b, tx_nak_sel_again), 1);
	assert_int_equal(TU_STAT(pp->a, tx_sel_resent), 2);
	assert_int_equal(TU_STAT(pp->a, timeouts), 0);
}

/* The first packet of one message (its RETH) and the last of the next (its ImmDt). */
static void test_lost_first_and_last(void **state)
{
	struct pair *pp = &tu_pair;
	struct plan pl = { .drop = { 0, 15 }, .ndrop = 2 };

	(void)state;
	sr_pair(pp, NR_TP_PROFILE_SR, NR_TP_PROFILE_SR, "127.0.0.83", "127.0.0.84", 24 * MTU);
	fill(pp);
	pl.ipsn = pp->ia.psn;
	assert_int_equal(nr_tp_soft_set_filter(pp->a, plan_filter, &pl), 0);
	writes(pp, 3, 8 * MTU, 3); /* packets 0-7, 8-15, 16-23 */
	tu_dump_stats("A", pp->a);
	tu_dump_stats("B", pp->b);
	assert_int_equal(pl.data, 26);
	assert_int_equal(pl.again, 2);
	assert_true(listed(pl.again_off, 2, 0) && listed(pl.again_off, 2, 15));
	assert_int_equal(TU_STAT(pp->a, tx_sel_resent), 2);
	assert_int_equal(TU_STAT(pp->a, timeouts), 0);
	assert_int_equal(TU_STAT(pp->b, rx_data), 24);
}

/* Packet 1 of each 4-packet write comes after 3: two late, not lost. */
static void test_reorder_not_loss(void **state)
{
	struct pair *pp = &tu_pair;
	struct plan pl = { .ndelay = 0 };

	(void)state;
	sr_pair(pp, NR_TP_PROFILE_SR, NR_TP_PROFILE_SR, "127.0.0.85", "127.0.0.86", 4 * MTU);
	fill(pp);
	pl.ipsn = pp->ia.psn;
	assert_int_equal(nr_tp_soft_set_filter(pp->a, plan_filter, &pl), 0);
	for (unsigned m = 0; m < 8; m++) {
		pl.delay[0] = 4 * m + 1;
		pl.ndelay = 1;
		writes(pp, 1, 4 * MTU, 1);
	}
	tu_dump_stats("A", pp->a);
	tu_dump_stats("B", pp->b);
	assert_int_equal(TU_STAT(pp->b, rx_ooo_kept), 16); /* 2 and 3 of each */
	assert_int_equal(TU_STAT(pp->b, tx_nak_sel), 0);
	assert_int_equal(TU_STAT(pp->a, tx_retrans), 0);
	assert_int_equal(pl.data, 32);
	assert_int_equal(TU_STAT(pp->b, rx_data), 32);
}

/* ---- a go-back-N requester never takes a selective NAK for one ------------ */

static void test_gbn_requester_refuses(void **state)
{
	struct pair *pp = &tu_pair;
	struct nr_icrc_ip4 ipx;
	struct nr_build_args a = {
		.opcode = NR_OP_RC_ACK, .migreq = true, .syndrome = NR_AETH_NAK_SELECTIVE, .msn = 1
	};
	struct nr_wc wc[4];
	uint8_t pkt[64];
	uint64_t t0;
	int n = 0;

	(void)state;
	sr_pair(pp, NR_TP_PROFILE_RNIC, NR_TP_PROFILE_RNIC, "127.0.0.87", "127.0.0.88", 4 * MTU);
	ipx = (struct nr_icrc_ip4){ .saddr = pp->ib.ip,
				    .daddr = pp->ia.ip,
				    .sport = 0xC321,
				    .dport = 4791,
				    .frag_off = NR_IPV4_DF };
	/* nothing reaches B, so the write stays outstanding for the NAK */
	assert_int_equal(nr_tp_soft_set_filter(pp->b, plan_filter,
					       &(struct plan){ .loss = 1000, .rng = 1 }),
			 0);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 1, &pp->smr, pp->sbuf, 4 * MTU, pp->rmr.va,
					      pp->rmr.rkey, 0),
			 0);
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 0), 0);
	a.psn = nr_psn_add(pp->ia.psn, 1);
	n = nr_build_transport(pkt, sizeof(pkt), &ipx, pp->ia.qpn, &a, NULL, 0);
	assert_true(n > 0);
	assert_int_equal(nr_tp_soft_inject(pp->a, pp->ib.ip, 0xC321, pkt, (uint32_t)n), 0);
	for (t0 = tu_now_ms(), n = 0; n == 0 && tu_now_ms() - t0 < 2000;)
		n = nr_tp_poll(pp->a, wc, 4, 1);
	assert_int_equal(n, 1);
	printf("# %s\n", nr_tp_qp_error(pp->qa));
	assert_int_equal(wc[0].status, NR_WC_REMOTE_ERROR);
	assert_non_null(strstr(nr_tp_qp_error(pp->qa), "sr profile"));
	assert_int_equal(TU_STAT(pp->a, rx_nak_other), 1);
}

/* ---- a packet ahead of its turn with more payload than the MTU: counted, never kept ---- */

static void test_oversized_ahead_refused(void **state)
{
	struct pair *pp = &tu_pair;
	static uint8_t pay[3 * MTU], pkt[4 * MTU];
	struct nr_icrc_ip4 ipx;
	struct nr_build_args a = { .opcode = NR_OP_RC_WRITE_MIDDLE, .migreq = true };
	int n;

	(void)state;
	sr_pair(pp, NR_TP_PROFILE_SR, NR_TP_PROFILE_SR, "127.0.0.95", "127.0.0.96", 16 * MTU);
	fill(pp);
	ipx = (struct nr_icrc_ip4){ .saddr = pp->ia.ip,
				    .daddr = pp->ib.ip,
				    .sport = 0xC321,
				    .dport = 4791,
				    .frag_off = NR_IPV4_DF };
	a.psn = nr_psn_add(pp->ia.psn, 5);
	n = nr_build_transport(pkt, sizeof(pkt), &ipx, pp->ib.qpn, &a, pay, sizeof(pay));
	assert_true(n > 3 * MTU); /* three MTUs of payload in one packet */
	assert_int_equal(nr_tp_soft_inject(pp->b, pp->ia.ip, 0xC321, pkt, (uint32_t)n), 0);
	writes(pp, 1, 16 * MTU, 1); /* B goes on: nothing of it was kept */
	assert_int_equal(TU_STAT(pp->b, rx_bad_req), 1);
	assert_int_equal(TU_STAT(pp->b, rx_ooo_kept), 0);
	assert_int_equal(TU_STAT(pp->b, rx_data), 16);
}

/* ---- random loss both ways: exact, and far fewer resends than go-back-N ---- */

static uint64_t lossy_resends(uint8_t profile, uint64_t seed, const char *ipa, const char *ipb)
{
	struct pair *pp = &tu_pair;
	struct plan la = { .loss = 20, .rng = seed }, lb = { .loss = 20, .rng = seed ^ 0x9e37 };
	uint64_t r, ms;

	sr_pair(pp, profile, profile, ipa, ipb, 64 * 64 * MTU);
	fill(pp);
	assert_int_equal(nr_tp_soft_set_filter(pp->a, plan_filter, &la), 0);
	assert_int_equal(nr_tp_soft_set_filter(pp->b, plan_filter, &lb), 0);
	ms = writes(pp, 64, 64 * MTU, 4);
	r = TU_STAT(pp->a, tx_retrans);
	tu_dump_stats("A", pp->a);
	tu_dump_stats("B", pp->b);
	printf("# %s: 4096 packets, 2%% loss both ways: %llu resent, %llu timeouts, %llu ms\n",
	       profile == NR_TP_PROFILE_SR ? "sr" : "rnic", (unsigned long long)r,
	       (unsigned long long)TU_STAT(pp->a, timeouts), (unsigned long long)ms);
	assert_int_equal(TU_STAT(pp->b, rx_data), 4096);
	pair_close(pp);
	return r;
}

static void test_lossy_fewer_resends(void **state)
{
	uint64_t seed = tu_seed("sr lossy"), sr, gbn;

	(void)state;
	sr = lossy_resends(NR_TP_PROFILE_SR, seed, "127.0.0.89", "127.0.0.90");
	gbn = lossy_resends(NR_TP_PROFILE_RNIC, seed, "127.0.0.91", "127.0.0.92");
	/* about 80 packets lost: go-back-N resends a window's worth for many of them */
	assert_true(sr * 3 < gbn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_lost_middle_resent_alone, tu_teardown),
		cmocka_unit_test_teardown(test_lost_resend_named_again, tu_teardown),
		cmocka_unit_test_teardown(test_lost_first_and_last, tu_teardown),
		cmocka_unit_test_teardown(test_reorder_not_loss, tu_teardown),
		cmocka_unit_test_teardown(test_gbn_requester_refuses, tu_teardown),
		cmocka_unit_test_teardown(test_oversized_ahead_refused, tu_teardown),
		cmocka_unit_test_teardown(test_lossy_fewer_resends, tu_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
