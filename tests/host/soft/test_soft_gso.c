// SPDX-License-Identifier: BSD-3-Clause
/*
 * The soft transport's batching (tp_soft_tx.c, tp_soft_net.c, tp_soft_icrc.c):
 *   - the gather builder (header, payload in place, pad and ICRC) writes the
 *     bytes nr_build_transport writes, for every opcode we send and any pad;
 *   - GSO sends and GRO receives happen on lo (several packets a sendmmsg
 *     entry and a received entry) at each MTU, the data intact, no ICRC
 *     refused; with the offloads off (NR_TP_OFFLOAD_OFF, NR_SOFT_GSO=0) none;
 *   - a received packet's ICRC holds for IP IDs 0..63 (what GSO sends carry)
 *     and for no other;
 *   - a test filter's duplicates and held-back packets go in sends of their own,
 *     their ICRCs moved to their new IP ID: none refused;
 *   - owed ACKs leave every SOFT_ACK_FLUSH packets of a receive batch.
 */
#include "soft_util.h"

#include "host/transport/tp_soft_icrc.h"
#include "host/transport/tp_soft_net.h"
#include "host/transport/tp_soft_types.h"
#include "proto/roce_build.h"
#include "proto/roce_opcode.h"

/* ---- the gather builder ---------------------------------------------------- */

static void test_gather_matches_builder(void **state)
{
	static const uint8_t ops[] = { NR_OP_RC_WRITE_FIRST, NR_OP_RC_WRITE_MIDDLE,
				       NR_OP_RC_WRITE_LAST_IMM, NR_OP_RC_WRITE_ONLY_IMM,
				       NR_OP_RC_WRITE_ONLY, NR_OP_RC_ACK };
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 7, 1023, 1024, 4093, 4096 };
	struct nr_icrc_ip4 ip = { .saddr = 0x0100000a, .daddr = 0x0200000a, .sport = 0xC123,
				  .dport = 4791, .frag_off = NR_IPV4_DF };
	uint8_t pay[4096], whole[4200], hdr[64];
	uint64_t seed = 5;

	tu_fill(pay, sizeof(pay), &seed);
	for (unsigned o = 0; o < sizeof(ops); o++)
		for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++) {
			uint32_t len = ops[o] == NR_OP_RC_ACK ? 0 : lens[l];
			const struct nr_build_args a = {
				.opcode = ops[o], .psn = 0x123456, .ackreq = l & 1, .migreq = true,
				.va = 0x1122334455667788ull, .rkey = 0xabcdef01, .dma_len = 77777,
				.imm = 0x5555aaaa, .syndrome = 0x1f, .msn = 99,
			};
			int n, h;
			uint32_t pad = (4 - (len & 3)) & 3;

			ip.id = (uint16_t)(l * 5);
			n = nr_build_transport(whole, sizeof(whole), &ip, 0x4321, &a, pay, len);
			h = nr_build_transport_hdr(hdr, sizeof(hdr), 0x4321, &a, len);
			assert_true(n > 0 && h > 0);
			assert_int_equal((uint32_t)n, (uint32_t)h + len + pad + NR_ICRC_LEN);
			assert_memory_equal(whole, hdr, (size_t)h);
			assert_memory_equal(whole + h, pay, len);
			uint32_t want = nr_icrc_ip4(&ip, whole, (size_t)n - NR_ICRC_LEN);

			assert_int_equal(nr_icrc_ip4_gather(&ip, hdr, (size_t)h, pay, len), want);
		}
}

/*
 * The transport's own header writer and its ICRC (pseudo headers' CRC kept,
 * the IP ID's share XORed in) against proto's, every opcode it sends, every
 * pad, IDs 0..63, from the QP's source port and from ports it sprays over
 * (nr_tp_qp_spray: the kept CRCs by length and port); and the receive check
 * finds the ID of each.
 */
static void test_transport_writer_matches(void **state)
{
	static const uint8_t ops[] = { NR_OP_RC_WRITE_FIRST, NR_OP_RC_WRITE_MIDDLE,
				       NR_OP_RC_WRITE_LAST_IMM, NR_OP_RC_WRITE_ONLY_IMM,
				       NR_OP_RC_ACK, NR_OP_RC_WRITE_LAST };
	static const uint32_t lens[] = { 0, 1, 2, 3, 4, 5, 1023, 1024, 4095, 4096 };
	struct soft_tp *tp = calloc(1, sizeof(*tp));
	struct soft_qp *qp = calloc(1, sizeof(*qp));
	uint8_t pay[4096], whole[4200], hdr[SOFT_HDR_MAX], ref[64];
	uint64_t seed = 9;

	assert_non_null(tp);
	assert_non_null(qp);
	soft_icrc_init(tp);
	qp->tp = tp;
	qp->ipx = (struct nr_icrc_ip4){ .saddr = 0x0300000a, .daddr = 0x0400000a, .sport = 0xC777,
					.dport = 4791, .frag_off = NR_IPV4_DF };
	tu_fill(pay, sizeof(pay), &seed);
	for (unsigned o = 0; o < sizeof(ops); o++)
		for (unsigned l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
			for (uint16_t id = 0; id < 64; id += 9) {
				uint32_t len = ops[o] == NR_OP_RC_ACK ? 0 : lens[l];
				const struct nr_build_args a = {
					.opcode = ops[o], .psn = 0xABCDEF - id, .ackreq = id & 1,
					.migreq = true, .va = 0x8877665544332211ull, .rkey = 0x10203040,
					.dma_len = 123456, .imm = 0xfeedbeef, .syndrome = id & 1 ? 0x1f : 0x60,
					.msn = 0x123456,
				};
				struct nr_icrc_ip4 ip = qp->ipx;

				ip.sport = (uint16_t)(qp->ipx.sport + id / 9 % 3);  /* sprayed */
				int h = soft_tx_hdr(hdr, 0x5678, &a, len), r, n;

				r = nr_build_transport_hdr(ref, sizeof(ref), 0x5678, &a, len);
				assert_int_equal(h, r);
				assert_memory_equal(hdr, ref, (size_t)h);
				ip.id = id;
				n = nr_build_transport(whole, sizeof(whole), &ip, 0x5678, &a, pay, len);
				assert_int_equal(soft_icrc_tx(qp, ip.sport, id, hdr, (uint32_t)h, pay,
							      len),
						 nr_icrc_ip4(&ip, whole, (size_t)n - NR_ICRC_LEN));
				/* received with the guess 0 (then the table) and with the right one */
				for (uint16_t guess = 0; guess <= id; guess += id ? id : 1) {
					struct nr_icrc_ip4 rx = ip;

					rx.id = guess;
					assert_true(soft_icrc_rx(tp, &rx, whole, (uint32_t)n - NR_ICRC_LEN,
								 nr_icrc_ip4(&ip, whole,
									     (size_t)n - NR_ICRC_LEN)));
					assert_int_equal(rx.id, id);
				}
			}
	free(qp);
	free(tp);
}

/* ---- GSO and GRO ------------------------------------------------------------- */

/* One write of len bytes A -> B at mtu (offloads as asked), checked. */
static void one_write(const char *ipa, const char *ipb, uint32_t mtu, uint32_t len,
		      uint8_t offload)
{
	struct nr_tp_config ca = tu_cfg(ipa, mtu), cb = tu_cfg(ipb, mtu);
	struct pair *const pp = &tu_pair;
	const uint32_t sizes[] = { len / 2, len - len / 2 };
	const size_t offs[] = { 0, len / 2 };
	uint64_t seed = tu_seed("gso");

	ca.offload = cb.offload = offload;
	pair_open_cfg(pp, &ca, &cb, len);
	tu_fill(pp->sbuf, len, &seed);
	pair_transfer(pp, 2, sizes, offs, 2, 7, 10000);
	tu_dump_stats("A", pp->a);
	tu_dump_stats("B", pp->b);
	assert_int_equal(TU_STAT(pp->b, rx_bad_icrc), 0);
	assert_int_equal(TU_STAT(pp->b, rx_data), tu_npkts(sizes[0], mtu) + tu_npkts(sizes[1], mtu));
	if (offload == NR_TP_OFFLOAD_OFF || (getenv("NR_SOFT_GSO") && !strcmp(getenv("NR_SOFT_GSO"), "0"))) {
		assert_int_equal(TU_STAT(pp->a, tx_gso), 0);
		assert_int_equal(TU_STAT(pp->b, rx_gro), 0);
		assert_int_equal(TU_STAT(pp->a, gso_fallback), 0);
	} else {
		/* several packets a send and a receive, fewer system calls than packets */
		assert_true(TU_STAT(pp->a, tx_gso) > 0);
		assert_true(TU_STAT(pp->b, rx_gro) > 0);
		assert_true(TU_STAT(pp->a, tx_calls) * 4 < TU_STAT(pp->a, tx_pkts));
		assert_true(TU_STAT(pp->b, rx_calls) * 4 < TU_STAT(pp->b, rx_pkts));
	}
	pair_close(pp);
}

static void test_gso_gro_mtu4096(void **state) { one_write("127.0.0.71", "127.0.0.72", 4096, 1 << 20, NR_TP_OFFLOAD_AUTO); }
static void test_gso_gro_mtu1024(void **state) { one_write("127.0.0.71", "127.0.0.72", 1024, 1 << 20, NR_TP_OFFLOAD_AUTO); }
/* 256-byte packets: the segment count (64), not the bytes, ends a GSO send */
static void test_gso_gro_mtu256(void **state) { one_write("127.0.0.71", "127.0.0.72", 256, 300000, NR_TP_OFFLOAD_AUTO); }
static void test_no_offload(void **state) { one_write("127.0.0.71", "127.0.0.72", 4096, 1 << 20, NR_TP_OFFLOAD_OFF); }

static void test_env_no_offload(void **state)
{
	struct nr_tp_config c = tu_cfg("127.0.0.73", 1024);
	char err[256] = "";

	setenv("NR_SOFT_GSO", "0", 1);
	one_write("127.0.0.71", "127.0.0.72", 4096, 1 << 18, NR_TP_OFFLOAD_AUTO);
	setenv("NR_SOFT_GSO", "yes", 1);
	assert_null(nr_tp_open(&c, err, sizeof(err)));
	printf("# %s\n", err);
	assert_non_null(strstr(err, "NR_SOFT_GSO"));
	unsetenv("NR_SOFT_GSO");
}

/* ---- the IP IDs a received packet may carry ------------------------------------ */

/* A one-packet write with immediate A -> B whose ICRC is made for IP ID id, injected into B. */
static void inject_with_id(struct pair *p, uint16_t id, uint32_t psn)
{
	uint16_t sport = (uint16_t)nr_tp_soft_qp_sport(p->qa);
	struct nr_icrc_ip4 ipx = { .saddr = p->ia.ip, .daddr = p->ib.ip, .sport = sport,
				   .dport = 4791, .id = id, .frag_off = NR_IPV4_DF };
	const struct nr_build_args a = {
		.opcode = NR_OP_RC_WRITE_ONLY_IMM, .psn = psn & NR_PSN_MASK, .ackreq = true,
		.migreq = true, .va = p->rmr.va, .rkey = p->rmr.rkey, .dma_len = 64, .imm = id,
	};
	uint8_t pkt[256];
	int n = nr_build_transport(pkt, sizeof(pkt), &ipx, p->ib.qpn, &a, p->sbuf, 64);

	assert_true(n > 0);
	assert_int_equal(nr_tp_soft_inject(p->b, p->ia.ip, sport, pkt, (uint32_t)n), 0);
}

static void test_ipid_span(void **state)
{
	static const uint16_t good[] = { 0, 1, 2, 17, 63, 5, 0 }, bad[] = { 64, 65, 300, 0xFFFF };
	struct pair *const pp = &tu_pair;
	struct nr_wc wc[8];
	uint32_t psn;

	pair_open(pp, "127.0.0.74", "127.0.0.75", 1024, 4096);
	psn = pp->ia.psn;
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		inject_with_id(pp, bad[i], psn);
		assert_int_equal(nr_tp_poll(pp->b, wc, 8, 0), 0);
	}
	assert_int_equal(TU_STAT(pp->b, rx_bad_icrc), 4);
	assert_int_equal(TU_STAT(pp->b, rx_data), 0);
	for (unsigned i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		assert_int_equal(nr_tp_post_recv(pp->qb, i), 0);
		inject_with_id(pp, good[i], psn + i);
		assert_int_equal(nr_tp_poll(pp->b, wc, 8, 0), 1);
		assert_int_equal(wc[0].status, NR_WC_OK);
		assert_int_equal(wc[0].imm, good[i]);
	}
	tu_dump_stats("B", pp->b);
	assert_int_equal(TU_STAT(pp->b, rx_bad_icrc), 4);
	assert_int_equal(TU_STAT(pp->b, rx_data), sizeof(good) / sizeof(good[0]));
	/* guessed right: 0 (the first), 1 and 2 (each after the one before) */
	assert_int_equal(TU_STAT(pp->b, rx_ipid), sizeof(good) / sizeof(good[0]) - 3);
	pair_close(pp);
}

/* ---- a filter's duplicates and held-back packets ------------------------------- */

struct dupdelay {
	unsigned n;
};

static int dup_delay(void *arg, enum nr_soft_dir dir, uint8_t *pkt, uint32_t len)
{
	struct dupdelay *d = arg;

	(void)len;
	if (dir != NR_SOFT_TX || pkt[0] == NR_OP_RC_ACK)
		return NR_SOFT_PASS;
	d->n++;
	return d->n % 7 == 0 ? NR_SOFT_DUP : d->n % 11 == 0 ? NR_SOFT_DELAY : NR_SOFT_PASS;
}

static void test_filter_moves_icrc(void **state)
{
	struct pair *const pp = &tu_pair;
	struct dupdelay d = { 0 };
	uint32_t sizes[8];
	size_t offs[8];
	uint64_t seed = tu_seed("dup-delay");

	pair_open(pp, "127.0.0.76", "127.0.0.77", 1024, 8 * 40000);
	for (unsigned i = 0; i < 8; i++) {
		sizes[i] = 40000;
		offs[i] = (size_t)i * 40000;
	}
	tu_fill(pp->sbuf, pp->len, &seed);
	nr_tp_soft_set_filter(pp->a, dup_delay, &d);
	pair_transfer(pp, 8, sizes, offs, 4, 0, 10000);
	tu_dump_stats("A", pp->a);
	tu_dump_stats("B", pp->b);
	assert_true(TU_STAT(pp->a, tx_gso) > 0);
	assert_true(TU_STAT(pp->b, rx_dup) > 0);
	assert_int_equal(TU_STAT(pp->b, rx_bad_icrc), 0);
	pair_close(pp);
}

/* ---- ACKs of a large receive batch ------------------------------------------------- */

static void test_ack_every_flush(void **state)
{
	enum { PKTS = 160 };
	struct pair *const pp = &tu_pair;
	uint16_t sport;
	struct nr_wc wc[4];

	pair_open(pp, "127.0.0.78", "127.0.0.79", 1024, PKTS * 1024);
	sport = (uint16_t)nr_tp_soft_qp_sport(pp->qa);
	assert_int_equal(nr_tp_post_recv(pp->qb, 1), 0);
	for (uint32_t i = 0; i < PKTS; i++) {
		struct nr_icrc_ip4 ipx = { .saddr = pp->ia.ip, .daddr = pp->ib.ip, .sport = sport,
					   .dport = 4791, .frag_off = NR_IPV4_DF };
		const struct nr_build_args a = {
			.opcode = i == 0 ? NR_OP_RC_WRITE_FIRST : i == PKTS - 1 ?
				  NR_OP_RC_WRITE_LAST_IMM : NR_OP_RC_WRITE_MIDDLE,
			.psn = (pp->ia.psn + i) & NR_PSN_MASK, .ackreq = true, .migreq = true,
			.va = pp->rmr.va, .rkey = pp->rmr.rkey, .dma_len = PKTS * 1024, .imm = 9,
		};
		uint8_t pkt[1200];
		int n = nr_build_transport(pkt, sizeof(pkt), &ipx, pp->ib.qpn, &a,
					   pp->sbuf + i * 1024, 1024);

		assert_true(n > 0);
		assert_int_equal(nr_tp_soft_inject(pp->b, pp->ia.ip, sport, pkt, (uint32_t)n), 0);
	}
	/* one receive round: every packet asks, ACKs after 64, 128 and at the end */
	assert_int_equal(nr_tp_poll(pp->b, wc, 4, 0), 1);
	assert_int_equal(TU_STAT(pp->b, rx_data), PKTS);
	assert_int_equal(TU_STAT(pp->b, tx_acks), (PKTS + SOFT_ACK_FLUSH - 1) / SOFT_ACK_FLUSH);
	pair_close(pp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gather_matches_builder),
		cmocka_unit_test(test_transport_writer_matches),
		cmocka_unit_test_teardown(test_gso_gro_mtu4096, tu_teardown),
		cmocka_unit_test_teardown(test_gso_gro_mtu1024, tu_teardown),
		cmocka_unit_test_teardown(test_gso_gro_mtu256, tu_teardown),
		cmocka_unit_test_teardown(test_no_offload, tu_teardown),
		cmocka_unit_test_teardown(test_env_no_offload, tu_teardown),
		cmocka_unit_test_teardown(test_ipid_span, tu_teardown),
		cmocka_unit_test_teardown(test_filter_moves_icrc, tu_teardown),
		cmocka_unit_test_teardown(test_ack_every_flush, tu_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
