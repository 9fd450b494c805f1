/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The soft transport's RNIC profile (nr_transport.h, host/README.md): each
 * rule it takes from rxe and the IB spec, checked packet by packet.
 *   - AckReq on the first packet sent while no ACK timer runs, at least every
 *     ackreq_every packets, and on every message's last packet;
 *   - the responder ACKs AckReq packets only (coalesced), re-ACKs duplicates,
 *     and sends one sequence NAK per gap; the legacy profile ACKs everything;
 *   - RXE: a fixed ACK timeout, retries spent by timeouts and sequence NAKs
 *     alike, reset by progress, the QP in error when they run out;
 *   - RNIC: the adaptive timeout (ConnectX): waits doubling from 1/32 of the
 *     timeout up to it, the QP in error after retry_cnt + 1 timeouts' time
 *     without progress, sequence NAKs spending nothing;
 *   - a second sequence NAK while a retry is under way costs no second
 *     go-back-N (rxe's started_retry);
 *   - RNR NAKs: counted against rnr_retry only, never against retry_cnt.
 */
#include "soft_util.h"

#include <errno.h>

#include "proto/roce_build.h"

/* ---- a record of what A sends ------------------------------------------- */

struct txlog {
	unsigned n;
	uint8_t op[4096];
	uint8_t ackreq[4096];
	uint32_t psn[4096];
	bool drop_data;          /* lose every data packet A sends */
};

static int txlog_filter(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	struct txlog *l = arg;
	const struct nr_bth *b = (const struct nr_bth *)pkt;

	if (dir != NR_SOFT_TX)
		return NR_SOFT_PASS;
	if (l->n < 4096) {
		l->op[l->n] = pkt[0];
		l->ackreq[l->n] = nr_bth_ackreq(b);
		l->psn[l->n] = nr_bth_psn(b);
		l->n++;
	}
	return l->drop_data && pkt[0] != NR_OP_RC_ACK ? NR_SOFT_DROP : NR_SOFT_PASS;
}

static void open_profile(struct pair *p, uint8_t profile, const char *ipa, const char *ipb,
			 uint16_t every, uint8_t timeout, uint8_t retry, size_t len)
{
	struct nr_tp_config ca = tu_cfg(ipa, 1024), cb = tu_cfg(ipb, 1024);

	ca.profile = cb.profile = profile;

	ca.ackreq_every = cb.ackreq_every = every;
	ca.timeout = cb.timeout = timeout;
	ca.retry_cnt = retry;
	pair_open_cfg(p, &ca, &cb, len);
}

static void open_rnic(struct pair *p, const char *ipa, const char *ipb, uint16_t every,
		      uint8_t timeout, uint8_t retry, size_t len)
{
	open_profile(p, NR_TP_PROFILE_RNIC, ipa, ipb, every, timeout, retry, len);
}

/* ---- AckReq placement ------------------------------------------------- */

static void test_ackreq_placement(void **state)
{
	struct pair *const pp = &tu_pair;
	struct txlog l = { 0 };
	const uint32_t sizes[] = { 20 * 1024, 3 * 1024 };
	const size_t offs[] = { 0, 20 * 1024 };
	uint64_t seed = 3;

	open_rnic(pp, "127.0.0.41", "127.0.0.42", 8, 18, 0, 23 * 1024);
	tu_fill(pp->sbuf, pp->len, &seed);
	nr_tp_soft_set_filter(pp->a, txlog_filter, &l);
	/* one message at a time: the second starts after the first's ACK */
	pair_transfer(pp, 2, sizes, offs, 1, 0, 5000);
	tu_dump_stats("A", pp->a);
	assert_int_equal(l.n, 23);
	for (unsigned i = 0; i < l.n; i++) {
		/* message 1: 0 (no timer ran), 8 and 16 (every 8th), 19 (last);
		 * message 2: 20 (idle again: the first was ACKed), 22 (last) */
		bool want = i == 0 || i == 8 || i == 16 || i == 19 || i == 20 || i == 22;

		if (l.ackreq[i] != want)
			fail_msg("packet %u (psn 0x%06x, opcode 0x%02x): AckReq %u, expected %u", i,
				 l.psn[i], l.op[i], l.ackreq[i], want);
	}
	assert_int_equal(TU_STAT(pp->a, tx_ackreq), 6);
	pair_close(pp);
}

/* ---- the responder: ACKs for AckReq packets only ------------------------------ */

/* Packet i of a 16-packet write from A to B, AckReq as asked, injected into B. */
static void inject_write(struct pair *p, uint32_t i, bool ackreq)
{
	uint16_t sport = (uint16_t)nr_tp_soft_qp_sport(p->qa);
	struct nr_icrc_ip4 ipx = { .saddr = p->ia.ip, .daddr = p->ib.ip, .sport = sport,
				   .dport = 4791, .frag_off = NR_IPV4_DF };
	struct nr_build_args a = {
		.opcode = i == 0 ? NR_OP_RC_WRITE_FIRST : i == 15 ? NR_OP_RC_WRITE_LAST_IMM :
			  NR_OP_RC_WRITE_MIDDLE,
		.psn = (p->ia.psn + i) & NR_PSN_MASK, .ackreq = ackreq, .migreq = true,
		.va = p->rmr.va, .rkey = p->rmr.rkey, .dma_len = 16 * 1024, .imm = 0x77,
	};
	uint8_t pkt[2048];
	int n = nr_build_transport(pkt, sizeof(pkt), &ipx, p->ib.qpn, &a, p->sbuf + i * 1024, 1024);

	assert_true(n > 0);
	assert_int_equal(nr_tp_soft_inject(p->b, p->ia.ip, sport, pkt, (uint32_t)n), 0);
}

static void responder_acks(uint8_t profile, const bool *ackreq, unsigned expect_acks)
{
	struct nr_tp_config ca = tu_cfg("127.0.0.43", 1024), cb = tu_cfg("127.0.0.44", 1024);
	struct pair *const pp = &tu_pair;
	struct nr_wc wc[4];
	int got = 0;

	ca.profile = cb.profile = profile;
	pair_open_cfg(pp, &ca, &cb, 16 * 1024);
	assert_int_equal(nr_tp_post_recv(pp->qb, 5), 0);
	for (uint32_t i = 0; i < 16; i++) {
		inject_write(pp, i, ackreq[i]);
		got += nr_tp_poll(pp->b, wc, 4, 0);      /* one packet per receive round */
	}
	tu_dump_stats("B", pp->b);
	assert_int_equal(got, 1);
	assert_int_equal(wc[0].imm, 0x77);
	assert_int_equal(TU_STAT(pp->b, rx_data), 16);
	assert_int_equal(TU_STAT(pp->b, tx_acks), expect_acks);
	pair_close(pp);
}

static const bool ackreq_3[16] = { [0] = true, [7] = true, [15] = true };

/* RNIC: three AckReq packets, each in its own receive round: three ACKs. */
static void test_responder_acks_ackreq_only(void **state) { responder_acks(NR_TP_PROFILE_RNIC, ackreq_3, 3); }
/* Legacy: an ACK for every receive round with data. */
static void test_responder_legacy_acks_all(void **state) { responder_acks(NR_TP_PROFILE_LEGACY, ackreq_3, 16); }

/* Several AckReq packets in one receive batch coalesce into one ACK. */
static void test_responder_coalesces(void **state)
{
	struct pair *const pp = &tu_pair;
	struct nr_wc wc[4];

	open_rnic(pp, "127.0.0.45", "127.0.0.46", 0, 0, 0, 16 * 1024);
	assert_int_equal(nr_tp_post_recv(pp->qb, 5), 0);
	for (uint32_t i = 0; i < 16; i++)
		inject_write(pp, i, i % 2 == 1);
	assert_int_equal(nr_tp_poll(pp->b, wc, 4, 0), 1);
	assert_int_equal(TU_STAT(pp->b, rx_data), 16);
	assert_int_equal(TU_STAT(pp->b, tx_acks), 1);
	pair_close(pp);
}

/* ---- retries: RXE a fixed timeout, NAKs spend them too, progress resets ------------- */

/* A NAK at psn for A's QP, as B (or a box on B's behalf) would send it. */
static void inject_nak(struct pair *p, uint8_t syn, uint32_t psn)
{
	struct nr_icrc_ip4 ipx = { .saddr = p->ib.ip, .daddr = p->ia.ip, .sport = 0xC321,
				   .dport = 4791, .frag_off = NR_IPV4_DF };
	struct nr_build_args a = { .opcode = NR_OP_RC_ACK, .psn = psn & NR_PSN_MASK,
				   .migreq = true, .syndrome = syn };
	uint8_t pkt[64];
	int n = nr_build_transport(pkt, sizeof(pkt), &ipx, p->ia.qpn, &a, NULL, 0);

	assert_true(n > 0);
	assert_int_equal(nr_tp_soft_inject(p->a, p->ib.ip, 0xC321, pkt, (uint32_t)n), 0);
}

/* Poll A until a completion arrives or ms pass; returns completions. */
static int poll_a(struct pair *p, struct nr_wc *wc, int max, uint64_t ms)
{
	uint64_t t0 = tu_now_ms();
	int n = 0;

	while (n == 0 && tu_now_ms() - t0 < ms) {
		n = nr_tp_poll(p->a, wc, max, 1);
		assert_true(n >= 0);
	}
	return n;
}

/*
 * A writes 100 bytes that B never sees (with nak, B's sequence NAK for them
 * comes at once); poll A until the write fails.  Returns the ms it took.
 */
static uint64_t write_until_error(struct pair *p, struct nr_wc *wc, bool nak)
{
	uint64_t t0 = tu_now_ms(), ms;

	assert_int_equal(nr_tp_post_write_imm(p->qa, 1, &p->smr, p->sbuf, 100, p->rmr.va,
					      p->rmr.rkey, 0), 0);
	if (nak) {
		assert_int_equal(nr_tp_poll(p->a, wc, 4, 0), 0);
		inject_nak(p, NR_AETH_NAK_PSN_SEQ_ERR, p->ia.psn);
	}
	assert_int_equal(poll_a(p, wc, 4, 3000), 1);
	ms = tu_now_ms() - t0;
	printf("# error after %llu ms: %s\n", (unsigned long long)ms, nr_tp_qp_error(p->qa));
	assert_int_equal(wc[0].status, NR_WC_RETRY_EXCEEDED);
	return ms;
}

/*
 * RXE, retry_cnt 2, nothing reaches B: one sequence NAK (no progress) spends the
 * first retry, one timeout the second, the next timeout moves the QP to error.
 */
static void test_nak_spends_retry(void **state)
{
	struct pair *const pp = &tu_pair;
	struct txlog l = { .drop_data = true };
	struct nr_wc wc[4];
	uint64_t t0;

	open_profile(pp, NR_TP_PROFILE_RXE, "127.0.0.47", "127.0.0.48", 0, 12, 2, 4096); /* 16.8 ms */
	nr_tp_soft_set_filter(pp->a, txlog_filter, &l);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 1, &pp->smr, pp->sbuf, 2048, pp->rmr.va,
					      pp->rmr.rkey, 0), 0);
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 0), 0);
	assert_int_equal(l.n, 2);
	t0 = tu_now_ms();
	inject_nak(pp, NR_AETH_NAK_PSN_SEQ_ERR, pp->ia.psn);
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 0), 0);
	assert_int_equal(l.n, 4);                          /* went back at once */
	assert_int_equal(poll_a(pp, wc, 4, 3000), 1);
	printf("# error after %llu ms: %s\n", (unsigned long long)(tu_now_ms() - t0),
	       nr_tp_qp_error(pp->qa));
	tu_dump_stats("A", pp->a);
	assert_int_equal(wc[0].status, NR_WC_RETRY_EXCEEDED);
	assert_int_equal(TU_STAT(pp->a, timeouts), 1);
	assert_int_equal(TU_STAT(pp->a, rx_nak_seq), 1);
	assert_int_equal(l.n, 6);                          /* sent, NAK resend, timeout resend */
	assert_non_null(strstr(nr_tp_qp_error(pp->qa), "after 2 retries"));
	pair_close(pp);
}

/*
 * RXE, a fixed timeout: with retry_cnt 3 and nothing reaching B, A resends every
 * 16.8 ms (not 16.8, 33.6, 67 ...), then gives up after the 4th timeout.
 */
static void test_fixed_timeout(void **state)
{
	struct pair *const pp = &tu_pair;
	struct txlog l = { .drop_data = true };
	struct nr_wc wc[4];
	uint64_t ms;

	open_profile(pp, NR_TP_PROFILE_RXE, "127.0.0.49", "127.0.0.50", 0, 12, 3, 4096);
	nr_tp_soft_set_filter(pp->a, txlog_filter, &l);
	ms = write_until_error(pp, wc, false);
	assert_int_equal(l.n, 4);
	assert_int_equal(TU_STAT(pp->a, timeouts), 3);
	assert_true(ms >= 4 * 16);
	assert_true(ms < 4 * 16 + 500);    /* doubling would take 252 ms at least */
	pair_close(pp);
}

/*
 * RNIC, a QP told its ACKs wait on others (a box's ring): the fixed timeout
 * all the same, as in test_fixed_timeout.
 */
static void test_fixed_timeout_qp(void **state)
{
	struct pair *const pp = &tu_pair;
	struct txlog l = { .drop_data = true };
	struct nr_wc wc[4];
	uint64_t ms;

	open_rnic(pp, "127.0.0.61", "127.0.0.62", 0, 12, 3, 4096);
	nr_tp_qp_acks_lag(pp->qa);
	nr_tp_soft_set_filter(pp->a, txlog_filter, &l);
	ms = write_until_error(pp, wc, false);
	assert_int_equal(l.n, 4);
	assert_int_equal(TU_STAT(pp->a, timeouts), 3);
	assert_true(ms >= 4 * 16);
	assert_non_null(strstr(nr_tp_qp_error(pp->qa), "after 3 retries (16.8 ms timeout;"));
	pair_close(pp);
}

/* ---- RNIC: the adaptive timeout ---------------------------------------------- */

struct txtimes {
	unsigned n;
	uint64_t ns[64];
};

static int txtimes_filter(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	struct txtimes *t = arg;
	struct timespec ts;

	if (dir != NR_SOFT_TX || pkt[0] == NR_OP_RC_ACK)
		return NR_SOFT_PASS;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (t->n < 64)
		t->ns[t->n++] = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return NR_SOFT_DROP;
}

/*
 * Timeout 2^14 * 4.096 us = 67.1 ms, retry_cnt 3, nothing reaches B: A resends
 * after 2.1, 4.2, 8.4, 16.8, 33.6 ms (each wait twice the last), then every
 * 67.1 ms, and gives up when 4 x 67.1 ms passed without progress, as a fixed
 * timeout would with these settings.
 */
static void test_adaptive_timeout(void **state)
{
	struct pair *const pp = &tu_pair;
	struct txtimes t = { 0 };
	struct nr_wc wc[4];
	uint64_t ms;

	open_rnic(pp, "127.0.0.57", "127.0.0.58", 0, 14, 3, 4096);
	nr_tp_soft_set_filter(pp->a, txtimes_filter, &t);
	ms = write_until_error(pp, wc, false);
	for (unsigned i = 1; i < t.n; i++)
		printf("# resend %u after %.2f ms\n", i, (double)(t.ns[i] - t.ns[i - 1]) / 1e6);
	assert_true(t.n >= 8);
	/* the first waits double: 2.1, 4.2, 8.4 ms (late timers only lengthen a wait).
	 * The first one is timed from the original's stamp, which a loaded
	 * machine may take after the timer started (seen: 1.14 ms in make test):
	 * it is held to its upper bound only; the resends' own stamps to both. */
	for (unsigned i = 1; i <= 3; i++) {
		uint64_t want = (4096ull << 14 >> 5) << (i - 1);

		if (i > 1)
			assert_true(t.ns[i] - t.ns[i - 1] >= want);
		assert_true(t.ns[i] - t.ns[i - 1] < want + 20000000);
	}
	/* none longer than the timeout, the budget that of 4 fixed timeouts */
	for (unsigned i = 1; i < t.n; i++)
		assert_true(t.ns[i] - t.ns[i - 1] < (4096ull << 14) + 20000000);
	assert_true(ms >= 4 * 67);
	assert_true(ms < 4 * 67 + 500);
	pair_close(pp);
}

/*
 * RNIC: sequence NAKs spend nothing (the budget is time). retry_cnt 1 and a
 * 16.8 ms timeout: the QP fails 33.6 ms after its last progress, whatever NAKs
 * without progress came (RXE would fail after the NAK and one timeout).
 */
static void test_adaptive_nak_spends_nothing(void **state)
{
	struct pair *const pp = &tu_pair;
	struct txlog l = { .drop_data = true };
	struct nr_wc wc[4];
	uint64_t ms;
	char st[160], want[96];

	open_rnic(pp, "127.0.0.59", "127.0.0.60", 0, 12, 1, 4096);
	nr_tp_soft_set_filter(pp->a, txlog_filter, &l);
	ms = write_until_error(pp, wc, true);
	assert_int_equal(TU_STAT(pp->a, rx_nak_seq), 1);
	assert_true(TU_STAT(pp->a, timeouts) >= 3);       /* 1, 2, 4 ms, ... */
	assert_true(ms >= 33);
	assert_non_null(strstr(nr_tp_qp_error(pp->qa), "(1 sequence NAKs, its last packet"));
	/* what a stall's message would say of each side */
	snprintf(want, sizeof(want), "expects psn 0x%x, last packet from the peer never", pp->ia.psn);
	assert_string_equal(nr_tp_qp_state(pp->qb, st, sizeof(st)), want);
	assert_non_null(strstr(nr_tp_qp_state(pp->qa, st, sizeof(st)), "in error; expects psn"));
	pair_close(pp);
}

/* ---- one go-back-N for one loss seen by two NAKs ------------------------------ */

static void test_second_nak_during_retry(void **state)
{
	struct pair *const pp = &tu_pair;
	struct txlog l = { .drop_data = true };
	struct nr_wc wc[4];

	open_rnic(pp, "127.0.0.51", "127.0.0.52", 0, 18, 0, 8192);
	nr_tp_soft_set_filter(pp->a, txlog_filter, &l);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 1, &pp->smr, pp->sbuf, 8192, pp->rmr.va,
					      pp->rmr.rkey, 0), 0);
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 0), 0);
	assert_int_equal(l.n, 8);
	/* the box's NAK and the receiver's NAK for the same hole at packet 3 */
	inject_nak(pp, NR_AETH_NAK_PSN_SEQ_ERR, pp->ia.psn + 3);
	inject_nak(pp, NR_AETH_NAK_PSN_SEQ_ERR, pp->ia.psn + 3);
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 0), 0);
	assert_int_equal(l.n, 8 + 5);                      /* packets 3..7 once */
	assert_int_equal(TU_STAT(pp->a, rx_nak_seq), 2);
	assert_int_equal(TU_STAT(pp->a, rx_nak_seq_retrying), 1);
	/* progress (an ACK for packet 4) ends the retry: the next NAK goes back again */
	inject_nak(pp, NR_AETH_CREDIT_INVALID, pp->ia.psn + 4);
	inject_nak(pp, NR_AETH_NAK_PSN_SEQ_ERR, pp->ia.psn + 6);
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 0), 0);
	assert_int_equal(l.n, 8 + 5 + 2);                  /* packets 6 and 7 */
	assert_int_equal(TU_STAT(pp->a, rx_nak_seq_retrying), 1);
	assert_int_equal(TU_STAT(pp->a, timeouts), 0);
	pair_close(pp);
}

/* ---- RNR NAKs -------------------------------------------------------------- */

/*
 * rnr_retry 2: two RNR NAKs are waited out and retried; the third moves the
 * QP to error.  retry_cnt 1 is never touched by them.
 */
static void test_rnr_retry_limit(void **state)
{
	struct nr_tp_config ca = tu_cfg("127.0.0.53", 1024), cb = tu_cfg("127.0.0.54", 1024);
	struct pair *const pp = &tu_pair;
	struct txlog l = { .drop_data = true };
	struct nr_wc wc[4];

	ca.timeout = 18;
	ca.retry_cnt = 1;
	ca.rnr_retry = 2;
	pair_open_cfg(pp, &ca, &cb, 4096);
	nr_tp_soft_set_filter(pp->a, txlog_filter, &l);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 1, &pp->smr, pp->sbuf, 100, pp->rmr.va,
					      pp->rmr.rkey, 0), 0);
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 0), 0);
	for (unsigned k = 1; k <= 2; k++) {
		inject_nak(pp, NR_AETH_RNR_NAK | 2, pp->ia.psn);  /* 0.02 ms */
		assert_int_equal(poll_a(pp, wc, 4, 20), 0);
		assert_int_equal(l.n, 1 + k);                   /* retried after the wait */
	}
	inject_nak(pp, NR_AETH_RNR_NAK | 2, pp->ia.psn);
	assert_int_equal(poll_a(pp, wc, 4, 1000), 1);
	printf("# %s\n", nr_tp_qp_error(pp->qa));
	assert_int_equal(wc[0].status, NR_WC_RETRY_EXCEEDED);
	assert_non_null(strstr(nr_tp_qp_error(pp->qa), "RNR"));
	assert_int_equal(TU_STAT(pp->a, rx_nak_rnr), 3);
	assert_int_equal(TU_STAT(pp->a, timeouts), 0);
	pair_close(pp);
}

/*
 * rnr_retry 7 (infinite), retry_cnt 2, a 16.8 ms ACK timeout: 80 RNR NAKs
 * (2.56 ms waits) over more than ten timeouts' time keep the QP alive (the
 * ACK timer does not run during an RNR wait, and the NAKs spend no retries);
 * an ACK then completes the write.
 */
static void test_rnr_infinite_spares_retries(void **state)
{
	struct nr_tp_config ca = tu_cfg("127.0.0.55", 1024), cb = tu_cfg("127.0.0.56", 1024);
	struct pair *const pp = &tu_pair;
	struct txlog l = { .drop_data = true };
	struct nr_wc wc[4];

	ca.timeout = 12;
	ca.retry_cnt = 2;
	pair_open_cfg(pp, &ca, &cb, 4096);
	nr_tp_soft_set_filter(pp->a, txlog_filter, &l);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 1, &pp->smr, pp->sbuf, 100, pp->rmr.va,
					      pp->rmr.rkey, 0), 0);
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 0), 0);
	for (unsigned k = 0; k < 80; k++) {
		/* answer each (re)transmission at once, as the box does */
		inject_nak(pp, NR_AETH_RNR_NAK | 16, pp->ia.psn);
		assert_int_equal(poll_a(pp, wc, 4, 2), 0);
		while (l.n < k + 2) {
			assert_int_equal(nr_tp_poll(pp->a, wc, 4, 1), 0);
		}
	}
	inject_nak(pp, NR_AETH_CREDIT_INVALID, pp->ia.psn);     /* the ACK */
	assert_int_equal(poll_a(pp, wc, 4, 1000), 1);
	assert_int_equal(wc[0].status, NR_WC_OK);
	tu_dump_stats("A", pp->a);
	assert_int_equal(TU_STAT(pp->a, rx_nak_rnr), 80);
	assert_int_equal(TU_STAT(pp->a, qp_errors), 0);
	pair_close(pp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_ackreq_placement, tu_teardown),
		cmocka_unit_test_teardown(test_responder_acks_ackreq_only, tu_teardown),
		cmocka_unit_test_teardown(test_responder_legacy_acks_all, tu_teardown),
		cmocka_unit_test_teardown(test_responder_coalesces, tu_teardown),
		cmocka_unit_test_teardown(test_nak_spends_retry, tu_teardown),
		cmocka_unit_test_teardown(test_fixed_timeout, tu_teardown),
		cmocka_unit_test_teardown(test_fixed_timeout_qp, tu_teardown),
		cmocka_unit_test_teardown(test_adaptive_timeout, tu_teardown),
		cmocka_unit_test_teardown(test_adaptive_nak_spends_nothing, tu_teardown),
		cmocka_unit_test_teardown(test_second_nak_during_retry, tu_teardown),
		cmocka_unit_test_teardown(test_rnr_retry_limit, tu_teardown),
		cmocka_unit_test_teardown(test_rnr_infinite_spares_retries, tu_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
