/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Soft transport over loopback without impairment: writes of every
 * interesting size, both directions, several QPs on one transport, and the
 * error paths (remote access error, bad arguments, configuration errors).
 */
#include "soft_util.h"

#include <errno.h>
#include <pthread.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "proto/roce_build.h"

static void sizes_run(uint32_t mtu, const char *ipa, const char *ipb)
{
	const uint32_t sizes[] = {
		0, 1, 2, 3, 4, 5, 7, 255, 256, 257, mtu - 1, mtu, mtu + 1, 2 * mtu - 1,
		2 * mtu, 2 * mtu + 3, 3 * mtu, 10 * mtu + 17, 65535, 65536, 100003,
		1u << 20, 0, 1, mtu,
	};
	enum { N = sizeof(sizes) / sizeof(sizes[0]) };
	size_t offs[N], total = 0;
	uint64_t seed = tu_seed("sizes"), pkts = 0;
	struct pair *const pp = &tu_pair;

	/* Messages go to consecutive, unaligned places (odd offsets). */
	for (unsigned i = 0; i < N; i++) {
		offs[i] = total + (i & 1);
		total = offs[i] + sizes[i];
		pkts += tu_npkts(sizes[i], mtu);
	}
	pair_open(pp, ipa, ipb, mtu, total + 8);
	tu_fill(pp->sbuf, total + 8, &seed);
	pair_transfer(pp, N, sizes, offs, 4, 0x01000000, 20000);
	/* Each data packet executed exactly once, nothing lost or dropped. */
	assert_int_equal(TU_STAT(pp->b, rx_data), pkts);
	assert_int_equal(TU_STAT(pp->a, tx_data), pkts);
	assert_int_equal(TU_STAT(pp->b, rx_bad_icrc), 0);
	assert_int_equal(TU_STAT(pp->a, rx_bad_icrc), 0);
	assert_int_equal(TU_STAT(pp->b, rx_malformed), 0);
	assert_int_equal(TU_STAT(pp->b, rx_dup), 0);
	assert_true(TU_STAT(pp->a, rx_acks) >= 1);
	pair_close(pp);
}

static void test_sizes_mtu1024(void **state) { sizes_run(1024, "127.0.0.11", "127.0.0.12"); }
static void test_sizes_mtu4096(void **state) { sizes_run(4096, "127.0.0.11", "127.0.0.12"); }
static void test_sizes_mtu256(void **state) { sizes_run(256, "127.0.0.13", "127.0.0.14"); }

/* Many messages in flight at once, beyond the packet window. */
static void test_many_messages(void **state)
{
	enum { N = 2000 };
	static uint32_t sizes[N];
	static size_t offs[N];
	uint64_t seed = tu_seed("many"), total = 0;
	struct pair *const pp = &tu_pair;

	for (unsigned i = 0; i < N; i++) {
		sizes[i] = (uint32_t)(tu_rand(&seed) % 5000);
		offs[i] = total;
		total += sizes[i];
	}
	pair_open(pp, "127.0.0.11", "127.0.0.12", 1024, total);
	tu_fill(pp->sbuf, total, &seed);
	pair_transfer(pp, N, sizes, offs, 512, 7, 30000);
	pair_close(pp);
}

/* Both directions on one QP pair and a second pair between the same hosts (N = 2 ring). */
static void test_bidirectional_two_pairs(void **state)
{
	uint64_t seed = tu_seed("bidir");
	const size_t len = 300000;
	struct nr_tp_qp *q2a, *q2b;
	struct nr_qp_info i2a, i2b;
	struct nr_tp_mr amr_r, bmr_s;
	uint8_t *abuf = malloc(len), *bsrc = malloc(len);
	unsigned done_a = 0, done_b = 0, recv_a = 0, recv_b = 0;
	uint64_t t0 = tu_now_ms();
	struct pair *const pp = &tu_pair;

	pair_open(pp, "127.0.0.11", "127.0.0.12", 2048, len);
	tu_fill(pp->sbuf, len, &seed);
	tu_fill(bsrc, len, &seed);
	memset(abuf, 0, len);
	assert_int_equal(nr_tp_reg_mr(pp->a, abuf, len, &amr_r), 0);
	assert_int_equal(nr_tp_reg_mr(pp->b, bsrc, len, &bmr_s), 0);
	assert_int_equal(nr_tp_qp_create(pp->a, &q2a, &i2a), 0);
	assert_int_equal(nr_tp_qp_create(pp->b, &q2b, &i2b), 0);
	assert_int_not_equal(i2a.qpn, pp->ia.qpn);
	assert_int_equal(nr_tp_qp_connect(q2a, &i2b), 0);
	assert_int_equal(nr_tp_qp_connect(q2b, &i2a), 0);

	/* A -> B on the first pair, B -> A on the first pair (reverse), and B -> A on the second. */
	assert_int_equal(nr_tp_post_recv(pp->qb, 1), 0);
	assert_int_equal(nr_tp_post_recv(pp->qa, 2), 0);
	assert_int_equal(nr_tp_post_recv(q2a, 3), 0);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 10, &pp->smr, pp->sbuf, len, pp->rmr.va, pp->rmr.rkey,
					      111), 0);
	assert_int_equal(nr_tp_post_write_imm(pp->qb, 20, &bmr_s, bsrc, len / 2, amr_r.va,
					      amr_r.rkey, 222), 0);
	assert_int_equal(nr_tp_post_write_imm(q2b, 30, &bmr_s, bsrc + len / 2, len - len / 2,
					      amr_r.va + len / 2, amr_r.rkey, 333), 0);
	while (done_a + done_b + recv_a + recv_b < 5) {
		struct nr_wc wc[8];
		int k = nr_tp_poll(pp->a, wc, 8, 0);

		for (int i = 0; i < k; i++) {
			assert_int_equal(wc[i].status, NR_WC_OK);
			if (wc[i].op == NR_WC_SEND) {
				assert_int_equal(wc[i].wr_id, 10);
				done_a++;
			} else {
				assert_true(wc[i].qp == pp->qa || wc[i].qp == q2a);
				assert_int_equal(wc[i].wr_id, wc[i].qp == pp->qa ? 2 : 3);
				assert_int_equal(wc[i].imm, wc[i].qp == pp->qa ? 222 : 333);
				recv_a++;
			}
		}
		k = nr_tp_poll(pp->b, wc, 8, 0);
		for (int i = 0; i < k; i++) {
			assert_int_equal(wc[i].status, NR_WC_OK);
			if (wc[i].op == NR_WC_SEND) {
				assert_int_equal(wc[i].wr_id, wc[i].qp == pp->qb ? 20 : 30);
				done_b++;
			} else {
				assert_int_equal(wc[i].wr_id, 1);
				assert_int_equal(wc[i].imm, 111);
				assert_int_equal(wc[i].byte_len, len);
				recv_b++;
			}
		}
		if (tu_now_ms() - t0 > 20000)
			fail_msg("stuck: A %u sent %u recv, B %u sent %u recv", done_a, recv_a,
				 done_b, recv_b);
	}
	assert_memory_equal(pp->rbuf, pp->sbuf, len);
	assert_memory_equal(abuf, bsrc, len);
	nr_tp_qp_destroy(q2a);
	nr_tp_qp_destroy(q2b);
	nr_tp_dereg_mr(pp->a, &amr_r);
	nr_tp_dereg_mr(pp->b, &bmr_s);
	free(abuf);
	free(bsrc);
	pair_close(pp);
}

/* A completion that arrives before its receive is posted is kept, not lost. */
static void test_recv_posted_late(void **state)
{
	struct pair *const pp = &tu_pair;
	struct nr_wc wc[4];
	uint64_t t0;
	int k = 0;

	pair_open(pp, "127.0.0.11", "127.0.0.12", 1024, 4096);
	for (int i = 0; i < 3; i++)
		assert_int_equal(nr_tp_post_write_imm(pp->qa, i, &pp->smr, pp->sbuf + i, 100, pp->rmr.va,
						      pp->rmr.rkey, 40 + i), 0);
	t0 = tu_now_ms();
	while (k < 3 && tu_now_ms() - t0 < 5000) {
		int r = nr_tp_poll(pp->a, wc, 4, 0);

		for (int i = 0; i < r; i++)
			assert_int_equal(wc[i].status, NR_WC_OK);
		k += r;
		assert_int_equal(nr_tp_poll(pp->b, wc, 4, 0), 0);   /* nothing posted: nothing completes */
	}
	assert_int_equal(k, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(nr_tp_post_recv(pp->qb, 70 + i), 0);
	assert_int_equal(nr_tp_poll(pp->b, wc, 4, 100), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(wc[i].wr_id, 70 + i);
		assert_int_equal(wc[i].imm, 40 + i);
		assert_int_equal(wc[i].byte_len, 100);
	}
	pair_close(pp);
}

/* A write outside B's region: NAK remote access error, both QPs to error with a message. */
static void test_remote_access_error(void **state)
{
	struct pair *const pp = &tu_pair;
	struct nr_wc wc[8];
	int got_a = 0, got_b = 0;
	uint64_t t0;

	pair_open(pp, "127.0.0.11", "127.0.0.12", 1024, 4096);
	assert_int_equal(nr_tp_post_recv(pp->qb, 5), 0);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 1, &pp->smr, pp->sbuf, 2000, pp->rmr.va + 3000,
					      pp->rmr.rkey, 0), 0);
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 2, &pp->smr, pp->sbuf, 10, pp->rmr.va, pp->rmr.rkey,
					      0), 0);
	t0 = tu_now_ms();
	while ((got_a < 2 || got_b < 1) && tu_now_ms() - t0 < 5000) {
		int k = nr_tp_poll(pp->a, wc, 8, 0);

		for (int i = 0; i < k; i++, got_a++)
			assert_int_equal(wc[i].status, got_a == 0 ? NR_WC_REMOTE_ERROR : NR_WC_FLUSHED);
		k = nr_tp_poll(pp->b, wc, 8, 0);
		for (int i = 0; i < k; i++, got_b++) {
			assert_int_equal(wc[i].wr_id, 5);
			assert_int_equal(wc[i].status, NR_WC_LOCAL_ERROR);
		}
	}
	assert_int_equal(got_a, 2);
	assert_int_equal(got_b, 1);
	printf("# A: %s\n# B: %s\n", nr_tp_qp_error(pp->qa), nr_tp_qp_error(pp->qb));
	assert_non_null(strstr(nr_tp_qp_error(pp->qa), "remote access error"));
	assert_non_null(strstr(nr_tp_qp_error(pp->qb), "rkey"));
	assert_int_equal(TU_STAT(pp->b, rx_access_err), 1);
	/* Nothing of the bad write landed. */
	for (int i = 0; i < 4096; i++)
		assert_int_equal(pp->rbuf[i], 0xEE);
	/* Posting to a QP in error completes as flushed. */
	assert_int_equal(nr_tp_post_write_imm(pp->qa, 9, &pp->smr, pp->sbuf, 1, pp->rmr.va, pp->rmr.rkey, 0), 0);
	assert_int_equal(nr_tp_poll(pp->a, wc, 8, 0), 1);
	assert_int_equal(wc[0].status, NR_WC_FLUSHED);
	pair_close(pp);
}

static void test_bad_arguments(void **state)
{
	struct nr_tp_config c = tu_cfg("127.0.0.15", 1000);
	struct nr_tp *tp, *tp2;
	struct nr_tp_qp *qp;
	struct nr_qp_info info, bad = { 0 };
	int held;
	struct nr_tp_mr mr;
	char err[256];
	uint8_t buf[64];

	assert_null(nr_tp_open(&c, err, sizeof(err)));
	printf("# %s\n", err);
	assert_non_null(strstr(err, "mtu 1000"));
	c = tu_cfg("127.0.0.15", 0);
	c.local_ip = 0;
	assert_null(nr_tp_open(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "local_ip"));
	c = tu_cfg("127.0.0.15", 0);
	/* The address and port another socket holds (another process, an RDMA
	 * device): a clear bind error. */
	held = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(held >= 0);
	assert_int_equal(bind(held,
			      (struct sockaddr *)&(struct sockaddr_in){ .sin_family = AF_INET,
									.sin_port = htons(4791),
									.sin_addr.s_addr = c.local_ip },
			      sizeof(struct sockaddr_in)),
			 0);
	assert_null(nr_tp_open(&c, err, sizeof(err)));
	printf("# %s\n", err);
	assert_non_null(strstr(err, "127.0.0.15:4791"));
	close(held);
	tp = tu_open(&c);
	assert_string_equal(nr_tp_kind(tp), "soft");
	/* a second transport of this process shares the socket (test soft-share) */
	tp2 = tu_open(&c);
	nr_tp_close(tp2);
	assert_int_equal(nr_tp_reg_mr(tp, buf, sizeof(buf), &mr), 0);
	assert_int_equal(mr.va, (uint64_t)(uintptr_t)buf);
	assert_int_equal(nr_tp_qp_create(tp, &qp, &info), 0);
	assert_true(info.qpn > 1 && info.qpn <= 0xFFFFFF);
	assert_true(info.psn <= 0xFFFFFF);
	assert_int_equal(info.udp_port, 4791);
	assert_int_equal(info.ip, c.local_ip);
	assert_int_equal(nr_tp_soft_qp_sport(qp) & 0xC000, 0xC000);
	/* Not connected yet. */
	assert_int_equal(nr_tp_post_write_imm(qp, 1, &mr, buf, 8, 0, 0, 0), -ENOTCONN);
	assert_int_equal(nr_tp_qp_connect(qp, &bad), -EINVAL);
	assert_int_equal(nr_tp_qp_connect(qp, &info), 0);
	/* Source outside the local region. */
	assert_int_equal(nr_tp_post_write_imm(qp, 1, &mr, buf + 60, 8, 0, 0, 0), -EINVAL);
	assert_int_equal(nr_tp_post_write_imm(qp, 1, NULL, buf, 8, 0, 0, 0), -EINVAL);
	assert_int_equal(nr_tp_soft_set_ipsn(tp, 1 << 24), -EINVAL);
	nr_tp_qp_destroy(qp);
	nr_tp_dereg_mr(tp, &mr);
	nr_tp_close(tp);
}

/* Out-of-sequence opcodes and lengths that lie: NAK invalid request, responder QP to error. */
static void invalid_request(uint8_t opcode, uint32_t paylen, uint32_t reth_len, const char *why)
{
	struct pair *const pp = &tu_pair;
	struct nr_icrc_ip4 ipx;
	struct nr_build_args a;
	static uint8_t pkt[8192], payload[4096];
	struct nr_wc wc[4];
	int n;

	pair_open(pp, "127.0.0.16", "127.0.0.17", 1024, 8192);
	assert_int_equal(nr_tp_post_recv(pp->qb, 3), 0);
	ipx = (struct nr_icrc_ip4){ .saddr = pp->ia.ip, .daddr = pp->ib.ip,
				    .sport = (uint16_t)nr_tp_soft_qp_sport(pp->qa), .dport = 4791,
				    .frag_off = NR_IPV4_DF };
	a = (struct nr_build_args){ .opcode = opcode, .psn = pp->ia.psn, .va = pp->rmr.va,
				    .rkey = pp->rmr.rkey, .dma_len = reth_len, .imm = 1 };
	n = nr_build_transport(pkt, sizeof(pkt), &ipx, pp->ib.qpn, &a, payload, paylen);
	assert_true(n > 0);
	assert_int_equal(nr_tp_soft_inject(pp->b, pp->ia.ip, ipx.sport, pkt, (uint32_t)n), 0);
	assert_int_equal(nr_tp_poll(pp->b, wc, 4, 50), 1);
	assert_int_equal(wc[0].wr_id, 3);
	assert_int_equal(wc[0].status, NR_WC_LOCAL_ERROR);
	printf("# B: %s\n", nr_tp_qp_error(pp->qb));
	assert_non_null(strstr(nr_tp_qp_error(pp->qb), why));
	assert_int_equal(TU_STAT(pp->b, rx_bad_req), 1);
	assert_int_equal(TU_STAT(pp->b, tx_nak_other), 1);
	assert_int_equal(TU_STAT(pp->b, rx_data), 0);
	for (int i = 0; i < 8192; i++)
		assert_int_equal(pp->rbuf[i], 0xEE);
	pair_close(pp);
}

static void test_invalid_middle_first(void **state)
{
	invalid_request(0x07, 1024, 0, "without a first");
}

static void test_invalid_first_short(void **state)
{
	invalid_request(0x06, 1000, 4000, "path MTU");
}

static void test_invalid_only_longer_than_reth(void **state)
{
	invalid_request(0x0B, 100, 50, "RETH length");
}

/* Each side on its own thread, blocking in nr_tp_poll (the ppoll wait path). */
struct side {
	struct nr_tp *tp;
	struct nr_tp_qp *qp;
	unsigned n, got;
	int bad;
};

static void *recv_side(void *arg)
{
	struct side *s = arg;
	uint64_t t0 = tu_now_ms();

	for (unsigned i = 0; i < s->n; i++)
		if (nr_tp_post_recv(s->qp, i))
			s->bad++;
	while (s->got < s->n && tu_now_ms() - t0 < 20000) {
		struct nr_wc wc[8];
		int k = nr_tp_poll(s->tp, wc, 8, 50);

		for (int i = 0; i < k; i++, s->got++)
			if (wc[i].status != NR_WC_OK || wc[i].imm != s->got)
				s->bad++;
	}
	/* Keep answering until the requester saw its last ACK. */
	for (int i = 0; i < 10; i++) {
		struct nr_wc wc;

		nr_tp_poll(s->tp, &wc, 1, 10);
	}
	return NULL;
}

static void test_threads_blocking_poll(void **state)
{
	enum { N = 200, SZ = 70000 };
	struct pair *const pp = &tu_pair;
	struct side rs;
	pthread_t th;
	uint64_t seed = tu_seed("threads"), t0;
	unsigned done = 0;

	pair_open(pp, "127.0.0.18", "127.0.0.19", 4096, SZ);
	tu_fill(pp->sbuf, SZ, &seed);
	rs = (struct side){ .tp = pp->b, .qp = pp->qb, .n = N };
	assert_int_equal(pthread_create(&th, NULL, recv_side, &rs), 0);
	for (unsigned i = 0; i < N; i++)
		assert_int_equal(nr_tp_post_write_imm(pp->qa, i, &pp->smr, pp->sbuf, SZ, pp->rmr.va,
						      pp->rmr.rkey, i), 0);
	t0 = tu_now_ms();
	while (done < N && tu_now_ms() - t0 < 20000) {
		struct nr_wc wc[8];
		int k = nr_tp_poll(pp->a, wc, 8, 100);

		assert_true(k >= 0);
		for (int i = 0; i < k; i++, done++) {
			assert_int_equal(wc[i].status, NR_WC_OK);
			assert_int_equal(wc[i].wr_id, done);
		}
	}
	pthread_join(th, NULL);
	assert_int_equal(done, N);
	assert_int_equal(rs.got, N);
	assert_int_equal(rs.bad, 0);
	assert_memory_equal(pp->rbuf, pp->sbuf, SZ);
	pair_close(pp);
}

/* NR_SOFT_IPSN forces the initial PSN of new QPs; a bad value is a clear error. */
static void test_env_ipsn(void **state)
{
	struct nr_tp_config c = tu_cfg("127.0.0.20", 0);
	struct nr_tp_qp *qp;
	struct nr_qp_info info;
	struct nr_tp *tp;
	char err[256];

	setenv("NR_SOFT_IPSN", "0xfffffe", 1);
	tp = tu_open(&c);
	assert_int_equal(nr_tp_qp_create(tp, &qp, &info), 0);
	assert_int_equal(info.psn, 0xFFFFFE);
	assert_int_equal(nr_tp_soft_set_ipsn(tp, 12345), 0);
	assert_int_equal(nr_tp_qp_create(tp, &qp, &info), 0);
	assert_int_equal(info.psn, 12345);
	nr_tp_close(tp);
	setenv("NR_SOFT_IPSN", "0x1000000", 1);
	assert_null(nr_tp_open(&c, err, sizeof(err)));
	printf("# %s\n", err);
	assert_non_null(strstr(err, "NR_SOFT_IPSN"));
	unsetenv("NR_SOFT_IPSN");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_sizes_mtu1024, tu_teardown),
		cmocka_unit_test_teardown(test_sizes_mtu4096, tu_teardown),
		cmocka_unit_test_teardown(test_sizes_mtu256, tu_teardown),
		cmocka_unit_test_teardown(test_many_messages, tu_teardown),
		cmocka_unit_test_teardown(test_bidirectional_two_pairs, tu_teardown),
		cmocka_unit_test_teardown(test_recv_posted_late, tu_teardown),
		cmocka_unit_test_teardown(test_remote_access_error, tu_teardown),
		cmocka_unit_test_teardown(test_bad_arguments, tu_teardown),
		cmocka_unit_test_teardown(test_invalid_middle_first, tu_teardown),
		cmocka_unit_test_teardown(test_invalid_first_short, tu_teardown),
		cmocka_unit_test_teardown(test_invalid_only_longer_than_reth, tu_teardown),
		cmocka_unit_test_teardown(test_threads_blocking_poll, tu_teardown),
		cmocka_unit_test_teardown(test_env_ipsn, tu_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
