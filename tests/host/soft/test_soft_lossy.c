/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft transport under a lossy shim: the transport's test filter drops,
 * duplicates, delays (reorders) and corrupts packets on send and on receive,
 * seeded.  Every byte must arrive, in order, each data packet executed
 * exactly once (responder rx_data == packets of the messages); completions in
 * order.  Also: PSN wrap-around, the NAK sequence-error path, duplicates
 * re-ACKed without re-execution, retry exhaustion against a closed peer,
 * malformed and foreign packets.
 */
#include "soft_util.h"

#include <errno.h>

#include "proto/roce_build.h"

/* ---- the shim ----------------------------------------------------------- */

struct shim {
	uint64_t rng;
	/* per mille, for data packets / ACKs, per direction */
	unsigned drop_data[2], drop_ack[2], dup[2], delay[2], corrupt[2];
	uint64_t dropped, duped, delayed, corrupted;
};

static int shim_filter(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	struct shim *s = arg;
	bool ack = pkt[0] == 0x11;

	if (tu_rand(&s->rng) % 1000 < (ack ? s->drop_ack[dir] : s->drop_data[dir])) {
		s->dropped++;
		return NR_SOFT_DROP;
	}
	if (tu_rand(&s->rng) % 1000 < s->corrupt[dir]) {
		pkt[tu_rand(&s->rng) % len] ^= (uint8_t)(1 + tu_rand(&s->rng) % 255);
		s->corrupted++;
		return NR_SOFT_PASS;
	}
	if (tu_rand(&s->rng) % 1000 < s->dup[dir]) {
		s->duped++;
		return NR_SOFT_DUP;
	}
	if (tu_rand(&s->rng) % 1000 < s->delay[dir]) {
		s->delayed++;
		return NR_SOFT_DELAY;
	}
	return NR_SOFT_PASS;
}

/*
 * A pair with small ACK timeouts (exp 12: ~17 ms, 7 retries: ~134 ms without
 * progress before the QP fails) so losses recover fast, yet a test process
 * starved of CPU for a few tens of ms on a loaded machine does not spend its
 * retries.
 */
static void lossy_pair(struct pair *p, size_t len, uint32_t mtu, int64_t ipsn_a, int64_t ipsn_b)
{
	struct nr_tp_config ca = tu_cfg("127.0.0.21", mtu), cb = tu_cfg("127.0.0.22", mtu);

	ca.timeout = cb.timeout = 12;
	ca.max_inflight = cb.max_inflight = 128;
	memset(p, 0, sizeof(*p));
	if (ipsn_a < 0 && ipsn_b < 0) {
		pair_open_cfg(p, &ca, &cb, len);
		return;
	}
	/* Same as pair_open_cfg, with forced initial PSNs. */
	p->a = tu_open(&ca);
	p->b = tu_open(&cb);
	assert_int_equal(nr_tp_soft_set_ipsn(p->a, ipsn_a), 0);
	assert_int_equal(nr_tp_soft_set_ipsn(p->b, ipsn_b), 0);
	p->len = len;
	p->sbuf = malloc(len + 1);
	p->rbuf = malloc(len + 1);
	p->expect = malloc(len + 1);
	memset(p->rbuf, 0xEE, len + 1);
	memset(p->expect, 0xEE, len + 1);
	assert_int_equal(nr_tp_reg_mr(p->a, p->sbuf, len, &p->smr), 0);
	assert_int_equal(nr_tp_reg_mr(p->b, p->rbuf, len, &p->rmr), 0);
	assert_int_equal(nr_tp_qp_create(p->a, &p->qa, &p->ia), 0);
	assert_int_equal(nr_tp_qp_create(p->b, &p->qb, &p->ib), 0);
	if (ipsn_a >= 0)
		assert_int_equal(p->ia.psn, (uint32_t)ipsn_a);
	assert_int_equal(nr_tp_qp_connect(p->qa, &p->ib), 0);
	assert_int_equal(nr_tp_qp_connect(p->qb, &p->ia), 0);
}

/* n random-size messages (a few large) written to consecutive places. */
static uint64_t run_msgs(struct pair *p, unsigned n, uint32_t mtu, uint64_t *seed,
			 uint32_t maxsz, unsigned window)
{
	uint32_t *sizes = calloc(n, sizeof(*sizes));
	size_t *offs = calloc(n, sizeof(*offs)), total = 0;
	uint64_t pkts = 0;

	for (unsigned i = 0; i < n; i++) {
		sizes[i] = i % 7 == 3 ? maxsz : (uint32_t)(tu_rand(seed) % (3 * mtu + 2));
		offs[i] = total;
		total += sizes[i];
		pkts += tu_npkts(sizes[i], mtu);
	}
	assert_true(total <= p->len);
	tu_fill(p->sbuf, total, seed);
	pair_transfer(p, n, sizes, offs, window, 0x100, 60000);
	/* Exactly once: every packet of every message executed once, no more. */
	assert_int_equal(TU_STAT(p->b, rx_data), pkts);
	free(sizes);
	free(offs);
	return pkts;
}

static void shim_report(const char *what, const struct shim *s, const struct pair *p)
{
	printf("# %s: shim dropped %llu duplicated %llu delayed %llu corrupted %llu\n", what,
	       (unsigned long long)s->dropped, (unsigned long long)s->duped,
	       (unsigned long long)s->delayed, (unsigned long long)s->corrupted);
	tu_dump_stats("A", p->a);
	tu_dump_stats("B", p->b);
}

static void test_loss(void **state)
{
	struct shim s = { .rng = tu_seed("loss"), .drop_data = { 50, 20 } };
	uint64_t seed = s.rng ^ 0x5555;
	struct pair *const pp = &tu_pair;

	lossy_pair(pp, 8 << 20, 1024, -1, -1);
	nr_tp_soft_set_filter(pp->a, shim_filter, &s);
	nr_tp_soft_set_filter(pp->b, shim_filter, &s);
	run_msgs(pp, 40, 1024, &seed, 300000, 8);
	shim_report("loss", &s, pp);
	assert_true(s.dropped > 0);
	assert_true(TU_STAT(pp->a, tx_retrans) > 0);
	assert_true(TU_STAT(pp->b, tx_nak_seq) > 0);
	pair_close(pp);
}

static void test_duplication(void **state)
{
	struct shim s = { .rng = tu_seed("dup"), .dup = { 100, 100 } };
	uint64_t seed = s.rng ^ 0x5555;
	struct pair *const pp = &tu_pair;

	lossy_pair(pp, 8 << 20, 1024, -1, -1);
	nr_tp_soft_set_filter(pp->a, shim_filter, &s);
	nr_tp_soft_set_filter(pp->b, shim_filter, &s);
	run_msgs(pp, 40, 1024, &seed, 200000, 8);
	shim_report("dup", &s, pp);
	assert_true(TU_STAT(pp->b, rx_dup) > 0);
	pair_close(pp);
}

static void test_reordering(void **state)
{
	struct shim s = { .rng = tu_seed("reorder"), .delay = { 80, 80 } };
	uint64_t seed = s.rng ^ 0x5555;
	struct pair *const pp = &tu_pair;

	lossy_pair(pp, 8 << 20, 2048, -1, -1);
	nr_tp_soft_set_filter(pp->a, shim_filter, &s);
	nr_tp_soft_set_filter(pp->b, shim_filter, &s);
	run_msgs(pp, 40, 2048, &seed, 400000, 8);
	shim_report("reorder", &s, pp);
	assert_true(TU_STAT(pp->b, rx_out_of_seq) > 0);
	pair_close(pp);
}

static void test_lost_acks(void **state)
{
	/* A third of B's ACKs lost on send, a tenth of what reaches A lost on receive. */
	struct shim s = { .rng = tu_seed("lost-acks"), .drop_ack = { 100, 330 } };
	struct shim sa = { .rng = s.rng + 1, .drop_ack = { 0, 100 } };
	uint64_t seed = s.rng ^ 0x5555;
	struct pair *const pp = &tu_pair;

	lossy_pair(pp, 8 << 20, 1024, -1, -1);
	s.drop_ack[NR_SOFT_RX] = 0;
	s.drop_ack[NR_SOFT_TX] = 330;
	nr_tp_soft_set_filter(pp->a, shim_filter, &sa);
	nr_tp_soft_set_filter(pp->b, shim_filter, &s);
	run_msgs(pp, 60, 1024, &seed, 100000, 4);
	shim_report("lost-acks B", &s, pp);
	shim_report("lost-acks A", &sa, pp);
	assert_true(s.dropped + sa.dropped > 0);
	pair_close(pp);
}

/* PSNs start just below 2^24 on both sides and wrap during the run, under impairment. */
static void test_psn_wrap(void **state)
{
	struct shim s = { .rng = tu_seed("psn-wrap"), .drop_data = { 30, 10 },
			  .drop_ack = { 50, 50 }, .dup = { 30, 30 }, .delay = { 30, 30 } };
	uint64_t seed = s.rng ^ 0x5555, pkts;
	struct pair *const pp = &tu_pair;

	lossy_pair(pp, 8 << 20, 1024, 0xFFFFF0, 0xFFFFFE);
	nr_tp_soft_set_filter(pp->a, shim_filter, &s);
	nr_tp_soft_set_filter(pp->b, shim_filter, &s);
	pkts = run_msgs(pp, 30, 1024, &seed, 150000, 6);
	shim_report("psn-wrap", &s, pp);
	assert_true(pkts > 0x10);   /* the A -> B PSNs went through 0xFFFFFF -> 0 */
	pair_close(pp);
}

/* Everything at once, more messages, both MTU extremes. */
static void all_impairments(uint32_t mtu, const char *tag)
{
	struct shim s = { .rng = tu_seed(tag), .drop_data = { 30, 20 }, .drop_ack = { 80, 80 },
			  .dup = { 30, 30 }, .delay = { 40, 40 }, .corrupt = { 0, 10 } };
	uint64_t seed = s.rng ^ 0x5555;
	struct pair *const pp = &tu_pair;

	lossy_pair(pp, 16 << 20, mtu, -1, -1);
	nr_tp_soft_set_filter(pp->a, shim_filter, &s);
	nr_tp_soft_set_filter(pp->b, shim_filter, &s);
	run_msgs(pp, 150, mtu, &seed, 3 * mtu * 20 + 5, 16);
	shim_report(tag, &s, pp);
	assert_true(s.corrupted == 0 || TU_STAT(pp->a, rx_bad_icrc) + TU_STAT(pp->b, rx_bad_icrc) > 0);
	pair_close(pp);
}

static void test_all_impairments_mtu256(void **state) { all_impairments(256, "all-256"); }
static void test_all_impairments_mtu4096(void **state) { all_impairments(4096, "all-4096"); }

/* ---- NAK sequence error path ------------------------------------------------ */

struct drop_nth {
	unsigned n, seen;
	uint32_t dropped_psn;
};

static int drop_nth_data(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	struct drop_nth *d = arg;

	if (dir != NR_SOFT_TX || pkt[0] == 0x11)
		return NR_SOFT_PASS;
	if (++d->seen == d->n) {
		d->dropped_psn = nr_ld_be32(pkt + 8) & 0xFFFFFF;
		return NR_SOFT_DROP;
	}
	return NR_SOFT_PASS;
}

static void test_nak_sequence_error(void **state)
{
	struct nr_tp_config ca = tu_cfg("127.0.0.23", 1024), cb = tu_cfg("127.0.0.24", 1024);
	struct drop_nth d = { .n = 3 };
	const uint32_t sizes[] = { 20 * 1024 + 5 };
	const size_t offs[] = { 0 };
	uint64_t seed = 42, ms;
	struct pair *const pp = &tu_pair;

	/* A 1-second ACK timeout: recovery within it can only come from the NAK. */
	ca.timeout = cb.timeout = 18;
	pair_open_cfg(pp, &ca, &cb, sizes[0]);
	tu_fill(pp->sbuf, sizes[0], &seed);
	nr_tp_soft_set_filter(pp->a, drop_nth_data, &d);
	ms = pair_transfer(pp, 1, sizes, offs, 1, 9, 10000);
	tu_dump_stats("A", pp->a);
	tu_dump_stats("B", pp->b);
	printf("# dropped psn 0x%06x (initial 0x%06x), done in %llu ms\n", d.dropped_psn,
	       pp->ia.psn, (unsigned long long)ms);
	assert_int_equal(d.dropped_psn, (pp->ia.psn + 2) & 0xFFFFFF);
	assert_int_equal(TU_STAT(pp->b, tx_nak_seq), 1);          /* one NAK per gap */
	assert_int_equal(TU_STAT(pp->a, rx_nak_seq), 1);
	assert_true(TU_STAT(pp->b, rx_out_of_seq) >= 1);
	assert_int_equal(TU_STAT(pp->a, timeouts), 0);
	assert_true(TU_STAT(pp->a, tx_retrans) >= 1);
	assert_int_equal(TU_STAT(pp->b, rx_data), 21);
	assert_true(ms < 900);
	pair_close(pp);
}

/* ---- duplicates are re-ACKed, never executed again ----------------------------- */

struct capture {
	uint8_t opcode;
	uint8_t pkt[8192];
	uint32_t len;
};

static int capture_tx(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	struct capture *c = arg;

	if (dir == NR_SOFT_TX && pkt[0] == c->opcode && !c->len) {
		memcpy(c->pkt, pkt, len);
		c->len = len;
	}
	return NR_SOFT_PASS;
}

static void dup_not_reexecuted(uint8_t opcode, uint32_t msglen)
{
	struct capture c = { .opcode = opcode };
	const uint32_t sizes[] = { msglen };
	const size_t offs[] = { 0 };
	uint64_t seed = 7, acks_b, acks_a;
	struct nr_wc wc[4];
	struct pair *const pp = &tu_pair;

	pair_open(pp, "127.0.0.25", "127.0.0.26", 1024, msglen);
	tu_fill(pp->sbuf, msglen, &seed);
	nr_tp_soft_set_filter(pp->a, capture_tx, &c);
	pair_transfer(pp, 1, sizes, offs, 1, 1, 5000);
	assert_true(c.len > 0);
	/* The application reuses its buffer ... */
	memset(pp->rbuf, 0x77, msglen);
	assert_int_equal(nr_tp_post_recv(pp->qb, 99), 0);
	acks_b = TU_STAT(pp->b, tx_acks);
	acks_a = TU_STAT(pp->a, rx_acks);
	/* ... and the old packet arrives again, from A's address and port. */
	assert_int_equal(nr_tp_soft_inject(pp->b, pp->ia.ip, (uint16_t)nr_tp_soft_qp_sport(pp->qa),
					   c.pkt, c.len), 0);
	assert_int_equal(nr_tp_poll(pp->b, wc, 4, 50), 0);     /* no receive completion */
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 50), 0);     /* nothing completes twice */
	for (uint32_t i = 0; i < msglen; i++)
		if (pp->rbuf[i] != 0x77)
			fail_msg("duplicate re-executed: byte %u changed", i);
	assert_int_equal(TU_STAT(pp->b, rx_dup), 1);
	assert_int_equal(TU_STAT(pp->b, tx_acks), acks_b + 1);  /* re-ACKed */
	assert_int_equal(TU_STAT(pp->a, rx_acks), acks_a + 1);
	assert_int_equal(TU_STAT(pp->b, rx_bad_icrc), 0);
	pair_close(pp);
}

static void test_dup_only_not_reexecuted(void **state) { dup_not_reexecuted(0x0B, 300); }
static void test_dup_middle_not_reexecuted(void **state) { dup_not_reexecuted(0x07, 5000); }

/* ---- retry exhaustion --------------------------------------------------- */

/*
 * The peer goes away: the first WR completes RETRY_EXCEEDED after min_ms to
 * max_ms, the second FLUSHED, after lo..hi retries (timeouts), as the
 * message says.
 */
static void retry_exhausted_cfg(uint8_t timeout, uint8_t retry, uint8_t profile,
				unsigned lo, unsigned hi, uint64_t min_ms, uint64_t max_ms)
{
	struct nr_tp_config ca = tu_cfg("127.0.0.27", 1024), cb = tu_cfg("127.0.0.28", 1024);
	struct nr_wc wc[4];
	struct pair *const pp = &tu_pair;
	uint64_t t0, ms;
	unsigned retries;
	int n = 0;
	char want[96];

	ca.timeout = timeout;
	ca.retry_cnt = retry;
	ca.profile = profile;
	pair_open_cfg(pp, &ca, &cb, 4096);
	/* The peer goes away. */
	nr_tp_qp_destroy(pp->qb);
	nr_tp_dereg_mr(pp->b, &pp->rmr);
	nr_tp_close(pp->b);
	pp->qb = NULL;
	pp->b = NULL;
	t0 = tu_now_ms();
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 1, &pp->smr, pp->sbuf, 3000, pp->rmr.va, pp->rmr.rkey,
					      0), 0);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 2, &pp->smr, pp->sbuf, 10, pp->rmr.va, pp->rmr.rkey,
					      0), 0);
	while (n < 2 && tu_now_ms() - t0 < max_ms + 2000) {
		int k = nr_tp_poll(pp->a, wc + n, 4 - n, 100);

		assert_true(k >= 0);
		n += k;
	}
	ms = tu_now_ms() - t0;
	printf("# error after %llu ms: %s\n", (unsigned long long)ms, nr_tp_qp_error(pp->qa));
	assert_int_equal(n, 2);
	assert_int_equal(wc[0].wr_id, 1);
	assert_int_equal(wc[0].status, NR_WC_RETRY_EXCEEDED);
	assert_int_equal(wc[1].wr_id, 2);
	assert_int_equal(wc[1].status, NR_WC_FLUSHED);
	retries = TU_STAT(pp->a, timeouts);
	snprintf(want, sizeof(want), "no ACK from 127.0.0.28 qpn 0x%x psn 0x%x after %u retries",
		 pp->ib.qpn, pp->ia.psn, retries);
	assert_non_null(strstr(nr_tp_qp_error(pp->qa), want));
	assert_true(ms >= min_ms);
	assert_true(ms <= max_ms);
	assert_in_range(retries, lo, hi);
	pair_close(pp);
}

static void retry_exhausted(uint8_t timeout, uint8_t retry, unsigned expect_retries,
			    uint64_t min_ms, uint64_t max_ms)
{
	retry_exhausted_cfg(timeout, retry, NR_TP_PROFILE_RXE, expect_retries, expect_retries,
			    min_ms, max_ms);
}

/* RXE: 2^10 * 4.096 us = 4.2 ms, 3 retries: 4 timeouts, ~17 ms. */
static void test_retry_exhausted_short(void **state) { retry_exhausted(10, 3, 3, 16, 1000); }
/* Legacy profile: the waits double: 4.2 + 8.4 + 16.8 + 33.6 ms = ~63 ms (not ~17). */
static void test_retry_exhausted_backoff(void **state)
{
	retry_exhausted_cfg(10, 3, NR_TP_PROFILE_LEGACY, 3, 3, 62, 1000);
}
/* RXE defaults: 7 retries of ~67 ms: 8 timeouts, ~537 ms. */
static void test_retry_exhausted_default(void **state) { retry_exhausted(0, 0, 7, 530, 2500); }
/*
 * RNIC (adaptive): the same 537 ms budget as RXE's 8 timeouts of 67 ms, in
 * shorter waits first: 2.1, 4.2, 8.4, 16.8, 33.6 ms, then 67.1 ms until the
 * budget ends, the last wait cut to it: 12 retries when every timer fires on
 * time, one fewer when late timers push the schedule past the end.
 */
static void test_retry_exhausted_adaptive(void **state)
{
	retry_exhausted_cfg(0, 0, NR_TP_PROFILE_RNIC, 11, 12, 530, 2500);
}
/* RNIC, 4.2 ms timeout, 3 retries: waits of 1, 2, 4.2, 4.2, 4.2, then the rest of 16.8 ms. */
static void test_retry_exhausted_adaptive_short(void **state)
{
	retry_exhausted_cfg(10, 3, NR_TP_PROFILE_RNIC, 4, 6, 16, 1000);
}

/* ---- foreign and malformed packets ----------------------------------------------- */

static void test_foreign_packets(void **state)
{
	struct pair *const pp = &tu_pair;
	struct capture c = { .opcode = 0x0B };
	const uint32_t sizes[] = { 100 };
	const size_t offs[] = { 0 };
	uint16_t sport;
	uint8_t bad[64];
	uint32_t other;
	struct nr_wc wc[4];

	pair_open(pp, "127.0.0.29", "127.0.0.30", 1024, 4096);
	nr_tp_soft_set_filter(pp->a, capture_tx, &c);
	pair_transfer(pp, 1, sizes, offs, 1, 1, 5000);
	sport = (uint16_t)nr_tp_soft_qp_sport(pp->qa);
	inet_pton(AF_INET, "127.0.0.99", &other);

	/* Too short, garbage, bad ICRC, unknown QPN, wrong source, unsupported opcode. */
	memset(bad, 0xAB, sizeof(bad));
	assert_int_equal(nr_tp_soft_inject(pp->b, pp->ia.ip, sport, bad, 3), 0);
	assert_int_equal(nr_tp_soft_inject(pp->b, pp->ia.ip, sport, bad, sizeof(bad)), 0);
	c.pkt[c.len - 1] ^= 1;
	assert_int_equal(nr_tp_soft_inject(pp->b, pp->ia.ip, sport, c.pkt, c.len), 0);
	c.pkt[c.len - 1] ^= 1;
	/* The same packet from another address: its ICRC no longer matches either. */
	assert_int_equal(nr_tp_soft_inject(pp->b, other, sport, c.pkt, c.len), 0);
	/* Well-formed with a good ICRC: to a QPN nobody has, from a stranger, UD. */
	{
		struct nr_icrc_ip4 ipx = { .saddr = pp->ia.ip, .daddr = pp->ib.ip, .sport = sport,
					   .dport = 4791, .frag_off = NR_IPV4_DF };
		struct nr_build_args ack = { .opcode = 0x11, .psn = 5, .syndrome = 0x1F };
		struct nr_build_args ud = { .opcode = 0x64, .psn = 5, .qkey = 1, .sqp = 3 };
		uint8_t pkt[128];
		int n;

		n = nr_build_transport(pkt, sizeof(pkt), &ipx, pp->ib.qpn ^ 0x800000, &ack, NULL, 0);
		assert_true(n > 0);
		assert_int_equal(nr_tp_soft_inject(pp->b, pp->ia.ip, sport, pkt, (uint32_t)n), 0);
		n = nr_build_transport(pkt, sizeof(pkt), &ipx, pp->ib.qpn, &ud, "hello", 5);
		assert_true(n > 0);
		assert_int_equal(nr_tp_soft_inject(pp->b, pp->ia.ip, sport, pkt, (uint32_t)n), 0);
		ipx.saddr = other;
		n = nr_build_transport(pkt, sizeof(pkt), &ipx, pp->ib.qpn, &ack, NULL, 0);
		assert_true(n > 0);
		assert_int_equal(nr_tp_soft_inject(pp->b, other, sport, pkt, (uint32_t)n), 0);
	}
	assert_int_equal(nr_tp_poll(pp->b, wc, 4, 20), 0);
	assert_int_equal(TU_STAT(pp->b, rx_unknown_qpn), 1);
	assert_int_equal(TU_STAT(pp->b, rx_unsupported), 1);
	assert_int_equal(TU_STAT(pp->b, rx_bad_src), 1);
	assert_int_equal(TU_STAT(pp->b, rx_malformed), 2);
	assert_int_equal(TU_STAT(pp->b, rx_bad_icrc), 2);
	assert_int_equal(TU_STAT(pp->b, rx_data), 1);
	pair_close(pp);
}

/* ---- RNR NAK and the packet window ------------------------------------------ */

static int drop_acks_rx(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	return dir == NR_SOFT_RX && pkt[0] == 0x11 ? NR_SOFT_DROP : NR_SOFT_PASS;
}

static void test_rnr_nak_retry(void **state)
{
	struct pair *const pp = &tu_pair;
	struct nr_icrc_ip4 ipx;
	struct nr_build_args nak = { .opcode = 0x11, .syndrome = 0x20 | 14 };  /* 1.28 ms */
	uint8_t pkt[64];
	struct nr_wc wc[4];
	uint64_t t0, t1;
	struct nr_tp_config ca = tu_cfg("127.0.0.31", 1024), cb = tu_cfg("127.0.0.32", 1024);
	int n, k = 0;

	/* a fixed 1 s ACK timeout: only the RNR NAK can make A resend in time */
	ca.profile = NR_TP_PROFILE_RXE;
	ca.timeout = 18;
	pair_open_cfg(pp, &ca, &cb, 4096);
	assert_int_equal(nr_tp_post_recv(pp->qb, 1), 0);
	nr_tp_soft_set_filter(pp->a, drop_acks_rx, NULL);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 7, &pp->smr, pp->sbuf, 100, pp->rmr.va,
					      pp->rmr.rkey, 5), 0);
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 0), 0);      /* sent */
	assert_int_equal(nr_tp_poll(pp->b, wc, 4, 50), 1);     /* executed ... */
	assert_int_equal(nr_tp_poll(pp->a, wc, 4, 20), 0);     /* ... its ACK lost at A */
	assert_int_equal(TU_STAT(pp->a, rx_acks), 0);
	/* B (as an RNIC would) says "receiver not ready" for that PSN. */
	ipx = (struct nr_icrc_ip4){ .saddr = pp->ib.ip, .daddr = pp->ia.ip, .sport = 0xC123,
				    .dport = 4791, .frag_off = NR_IPV4_DF };
	nak.psn = pp->ia.psn;
	n = nr_build_transport(pkt, sizeof(pkt), &ipx, pp->ia.qpn, &nak, NULL, 0);
	assert_true(n > 0);
	nr_tp_soft_set_filter(pp->a, NULL, NULL);
	assert_int_equal(nr_tp_soft_inject(pp->a, pp->ib.ip, 0xC123, pkt, (uint32_t)n), 0);
	t0 = tu_now_ms();
	while (k == 0 && tu_now_ms() - t0 < 3000) {
		k = nr_tp_poll(pp->a, wc, 4, 0);
		assert_true(nr_tp_poll(pp->b, wc + 1, 3, 0) == 0);
	}
	t1 = tu_now_ms();
	assert_int_equal(k, 1);
	assert_int_equal(wc[0].wr_id, 7);
	assert_int_equal(wc[0].status, NR_WC_OK);
	assert_int_equal(TU_STAT(pp->a, rx_nak_rnr), 1);
	assert_int_equal(TU_STAT(pp->a, timeouts), 0);
	assert_true(TU_STAT(pp->b, rx_dup) >= 1);              /* the retry was a duplicate */
	assert_true(t1 - t0 >= 1);
	pair_close(pp);
}

static int drop_all_rx(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	return dir == NR_SOFT_RX ? NR_SOFT_DROP : NR_SOFT_PASS;
}

/* No more than max_inflight packets leave before an ACK. */
static void test_window_limit(void **state)
{
	struct nr_tp_config ca = tu_cfg("127.0.0.33", 1024), cb = tu_cfg("127.0.0.34", 1024);
	struct pair *const pp = &tu_pair;
	struct nr_wc wc[4];

	ca.max_inflight = 16;
	ca.timeout = 18;     /* ~1 s, adaptive from 33.5 ms: at most a resend during the check */
	pair_open_cfg(pp, &ca, &cb, 1 << 20);
	nr_tp_soft_set_filter(pp->b, drop_all_rx, NULL);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 1, &pp->smr, pp->sbuf, 1 << 20, pp->rmr.va,
					      pp->rmr.rkey, 0), 0);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(nr_tp_poll(pp->a, wc, 4, 2), 0);
		assert_int_equal(nr_tp_poll(pp->b, wc, 4, 0), 0);
	}
	assert_int_equal(TU_STAT(pp->a, tx_data) - TU_STAT(pp->a, tx_retrans), 16);
	/* Open the path: everything arrives. */
	nr_tp_soft_set_filter(pp->b, NULL, NULL);
	pair_close(pp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_loss, tu_teardown),
		cmocka_unit_test_teardown(test_duplication, tu_teardown),
		cmocka_unit_test_teardown(test_reordering, tu_teardown),
		cmocka_unit_test_teardown(test_lost_acks, tu_teardown),
		cmocka_unit_test_teardown(test_psn_wrap, tu_teardown),
		cmocka_unit_test_teardown(test_all_impairments_mtu256, tu_teardown),
		cmocka_unit_test_teardown(test_all_impairments_mtu4096, tu_teardown),
		cmocka_unit_test_teardown(test_nak_sequence_error, tu_teardown),
		cmocka_unit_test_teardown(test_dup_only_not_reexecuted, tu_teardown),
		cmocka_unit_test_teardown(test_dup_middle_not_reexecuted, tu_teardown),
		cmocka_unit_test_teardown(test_retry_exhausted_short, tu_teardown),
		cmocka_unit_test_teardown(test_retry_exhausted_backoff, tu_teardown),
		cmocka_unit_test_teardown(test_retry_exhausted_default, tu_teardown),
		cmocka_unit_test_teardown(test_retry_exhausted_adaptive, tu_teardown),
		cmocka_unit_test_teardown(test_retry_exhausted_adaptive_short, tu_teardown),
		cmocka_unit_test_teardown(test_foreign_packets, tu_teardown),
		cmocka_unit_test_teardown(test_rnr_nak_retry, tu_teardown),
		cmocka_unit_test_teardown(test_window_limit, tu_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
