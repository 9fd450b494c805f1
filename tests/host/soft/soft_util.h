/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the soft transport suites: two transport objects on loopback
 * addresses (127.0.0.x, UDP 4791 each), one RC QP pair between them, and a
 * driver that posts a list of writes A -> B and polls both until every
 * completion arrived, checking them and the delivered bytes.
 */
#ifndef NR_SOFT_TEST_UTIL_H
#define NR_SOFT_TEST_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <setjmp.h>
#include <cmocka.h>
#include <arpa/inet.h>

#include "host/transport/nr_transport.h"
#include "host/transport/tp_soft.h"
#include "proto/roce_hdr.h"
#include "proto/roce_pkt.h"

struct pair {
	struct nr_tp *a, *b;
	struct nr_tp_qp *qa, *qb;        /* qa (on A) is connected to qb (on B) */
	struct nr_qp_info ia, ib;
	uint8_t *sbuf, *rbuf, *expect;   /* A's source, B's target, what B must hold */
	size_t len;
	struct nr_tp_mr smr, rmr;
};

static inline uint64_t tu_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* xorshift64*, seeded; every seeded test prints its seed. */
static inline uint64_t tu_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static inline uint64_t tu_seed(const char *what)
{
	const char *env = getenv("NR_TEST_SEED");
	uint64_t s = env ? strtoull(env, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)clock();

	if (!s)
		s = 1;
	printf("# %s: seed %llu (NR_TEST_SEED=%llu reproduces)\n", what,
	       (unsigned long long)s, (unsigned long long)s);
	return s;
}

static inline struct nr_tp_config tu_cfg(const char *ip, uint32_t mtu)
{
	struct nr_tp_config c = { .kind = "soft", .mtu = mtu };

	inet_pton(AF_INET, ip, &c.local_ip);
	return c;
}

static inline struct nr_tp *tu_open(const struct nr_tp_config *c)
{
	char err[256] = "";
	struct nr_tp *tp = nr_tp_open(c, err, sizeof(err));

	if (!tp)
		fail_msg("nr_tp_open: %s", err);
	return tp;
}

/* A on ipa, B on ipb, buffers of len bytes, QPs created and connected. */
static inline void pair_open_cfg(struct pair *p, const struct nr_tp_config *ca,
				 const struct nr_tp_config *cb, size_t len)
{
	memset(p, 0, sizeof(*p));
	p->a = tu_open(ca);
	p->b = tu_open(cb);
	p->len = len;
	p->sbuf = malloc(len + 1);
	p->rbuf = malloc(len + 1);
	p->expect = malloc(len + 1);
	assert_non_null(p->sbuf);
	assert_non_null(p->rbuf);
	assert_non_null(p->expect);
	memset(p->rbuf, 0xEE, len + 1);
	memset(p->expect, 0xEE, len + 1);
	memset(p->sbuf, 0x5A, len + 1);
	assert_int_equal(nr_tp_reg_mr(p->a, p->sbuf, len, &p->smr), 0);
	assert_int_equal(nr_tp_reg_mr(p->b, p->rbuf, len, &p->rmr), 0);
	assert_int_equal(nr_tp_qp_create(p->a, &p->qa, &p->ia), 0);
	assert_int_equal(nr_tp_qp_create(p->b, &p->qb, &p->ib), 0);
	assert_int_equal(nr_tp_qp_connect(p->qa, &p->ib), 0);
	assert_int_equal(nr_tp_qp_connect(p->qb, &p->ia), 0);
}

static inline void pair_open(struct pair *p, const char *ipa, const char *ipb, uint32_t mtu,
			     size_t len)
{
	struct nr_tp_config ca = tu_cfg(ipa, mtu), cb = tu_cfg(ipb, mtu);

	pair_open_cfg(p, &ca, &cb, len);
}

static inline void pair_close(struct pair *p)
{
	nr_tp_qp_destroy(p->qa);
	nr_tp_qp_destroy(p->qb);
	if (p->a)
		nr_tp_dereg_mr(p->a, &p->smr);
	if (p->b)
		nr_tp_dereg_mr(p->b, &p->rmr);
	nr_tp_close(p->a);
	nr_tp_close(p->b);
	free(p->sbuf);
	free(p->rbuf);
	free(p->expect);
	memset(p, 0, sizeof(*p));
}

/* Missing tool or privilege: a skip with its reason, never a failure. */
#define skip_msg_and_return(msg)                        \
	do {                                            \
		printf("# SKIP: %s\n", (msg));        \
		skip();                                 \
		return;                                 \
	} while (0)

/* The pair of the running test; the group teardown closes it even after a failure. */
static struct pair tu_pair;

static inline int tu_teardown(void **state)
{
	(void)state;
	pair_close(&tu_pair);
	return 0;
}

static inline void tu_fill(uint8_t *b, size_t n, uint64_t *seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)tu_rand(seed);
}

static inline void tu_dump_stats(const char *who, const struct nr_tp *tp)
{
	struct nr_tp_soft_stats st;
	const uint64_t *v = (const uint64_t *)&st;

	if (nr_tp_soft_stats(tp, &st))
		return;
	printf("# %s:", who);
	for (unsigned i = 0; i < NR_SOFT_NSTATS; i++)
		if (v[i])
			printf(" %s=%llu", nr_tp_soft_stat_name(i), (unsigned long long)v[i]);
	printf("\n");
}

/*
 * Write message i (sizes[i] bytes at offset offs[i] of sbuf, to the same
 * offset of rbuf, imm = imm_base + i) for i < n, keeping at most window
 * messages posted; poll both sides until every completion arrived or
 * timeout_ms passed.  Checks: A's send completions all OK and in order, B's
 * receive completions in order with the right imm and byte_len, B's memory
 * equal to p->expect (callers set expect = rbuf's prior content with the
 * written ranges copied from sbuf).  Returns elapsed ms.
 */
static inline uint64_t pair_transfer(struct pair *p, unsigned n, const uint32_t *sizes,
				     const size_t *offs, unsigned window, uint32_t imm_base,
				     uint64_t timeout_ms)
{
	unsigned posted = 0, sent = 0, recvd = 0, rposted = 0;
	uint64_t t0 = tu_now_ms();
	struct nr_wc wc[32];

	while (sent < n || recvd < n) {
		int k;

		while (rposted < n && rposted < recvd + window + 4)
			assert_int_equal(nr_tp_post_recv(p->qb, 1000000 + rposted++), 0);
		while (posted < n && posted < sent + window) {
			assert_int_equal(nr_tp_post_write_imm(p->qa, posted, &p->smr,
							      p->sbuf + offs[posted], sizes[posted],
							      p->rmr.va + offs[posted], p->rmr.rkey,
							      imm_base + posted), 0);
			posted++;
		}
		k = nr_tp_poll(p->a, wc, 32, 0);
		assert_true(k >= 0);
		for (int i = 0; i < k; i++) {
			if (wc[i].status != NR_WC_OK)
				fail_msg("A: wr %llu: %s: %s", (unsigned long long)wc[i].wr_id,
					 nr_wc_status_str(wc[i].status), nr_tp_qp_error(p->qa));
			assert_int_equal(wc[i].op, NR_WC_SEND);
			assert_int_equal(wc[i].wr_id, sent);
			assert_ptr_equal(wc[i].qp, p->qa);
			sent++;
		}
		k = nr_tp_poll(p->b, wc, 32, 0);
		assert_true(k >= 0);
		for (int i = 0; i < k; i++) {
			if (wc[i].status != NR_WC_OK)
				fail_msg("B: wr %llu: %s: %s", (unsigned long long)wc[i].wr_id,
					 nr_wc_status_str(wc[i].status), nr_tp_qp_error(p->qb));
			assert_int_equal(wc[i].op, NR_WC_RECV);
			assert_int_equal(wc[i].wr_id, 1000000 + recvd);
			assert_int_equal(wc[i].imm, imm_base + recvd);
			assert_int_equal(wc[i].byte_len, sizes[recvd]);
			recvd++;
		}
		if (tu_now_ms() - t0 > timeout_ms) {
			tu_dump_stats("A", p->a);
			tu_dump_stats("B", p->b);
			fail_msg("transfer stuck: %u/%u sent, %u/%u received after %llu ms "
				 "(A: %s, B: %s)", sent, n, recvd, n, (unsigned long long)timeout_ms,
				 nr_tp_qp_error(p->qa), nr_tp_qp_error(p->qb));
		}
	}
	for (unsigned i = 0; i < n; i++)
		memcpy(p->expect + offs[i], p->sbuf + offs[i], sizes[i]);
	if (memcmp(p->rbuf, p->expect, p->len)) {
		size_t i = 0;

		while (p->rbuf[i] == p->expect[i])
			i++;
		fail_msg("B's memory differs at byte %zu: 0x%02x, expected 0x%02x", i, p->rbuf[i],
			 p->expect[i]);
	}
	return tu_now_ms() - t0;
}

static inline uint64_t tu_stat(const struct nr_tp *tp, size_t off)
{
	struct nr_tp_soft_stats st;

	assert_int_equal(nr_tp_soft_stats(tp, &st), 0);
	return *(const uint64_t *)((const uint8_t *)&st + off);
}
#define TU_STAT(tp, field) tu_stat(tp, offsetof(struct nr_tp_soft_stats, field))

static inline uint32_t tu_npkts(uint32_t len, uint32_t mtu)
{
	return len ? (len - 1) / mtu + 1 : 1;
}

#endif /* NR_SOFT_TEST_UTIL_H */
