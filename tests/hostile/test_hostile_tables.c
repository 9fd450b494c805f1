/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tenant that creates and destroys jobs against the box's tables (suite
 * eal, the real box on ring ports, two workers; docs/trust.md, "Tables").
 * Each job's connections are keys of the QPN owner map, which steers a frame
 * to the worker holding its job, and of that worker's lookup table.  A map
 * that kept its deleted keys as tombstones filled up after some 65,536 keys
 * had come and gone, and a new job's frames then reached a worker that did
 * not hold it ("arrived unaggregated: the box lost the job").
 *
 * The case: a 4-rank victim job, exact, timed on the fresh box; then
 * NR_TABLES_CYCLES (default 300) jobs of random size (1..256 connections x
 * 1..4 channels, fresh QPNs each) created and destroyed, up to three alive at
 * once, every create accepted; then the victim again: every result exact, at
 * the fresh box's rate (the ratio printed), the owner map and the L2 pins
 * back to what they were, the box's memory (rte_malloc and libc) flat.
 * `make soak-tables` runs 10,000 cycles.
 */
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <rte_malloc.h>

#include "tests/eal/eal_harness.h"

#include "hz_traffic.h"

#define RANKS  4
#define MTU    256
#define MSG    4096
#define MSGS   16
#define LIVE   3
#define WARM   50     /* cycles before memory is measured */

static struct harness g_h;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void drain(struct hz_job *j)
{
	h_settle(&g_h);
	for (unsigned i = 0; i < g_h.n_out; i++)
		hz_result(j, g_h.out[i].data, g_h.out[i].len, true);
	h_clear_out(&g_h);
}

/* The victim's workload, message by message: every rank's packets, their
 * results out, then every receiver's ACK. */
static void workload(struct hz_job *j)
{
	uint8_t buf[HZ_FRAME_MAX];

	for (uint32_t m = 0; m < j->msgs; m++) {
		for (uint32_t p = 0; p < j->ppm; p++)
			for (unsigned r = 0; r < j->n; r++) {
				int len = hz_data(j, r, m * j->ppm + p, buf, sizeof(buf));

				assert_true(len > 0);
				h_inject(&g_h, r, buf, (unsigned)len);
			}
		drain(j);
		for (unsigned r = 0; r < j->n; r++) {
			int len = hz_ack(j, r, m * j->ppm + j->ppm - 1, 0x1F, buf, sizeof(buf));

			h_inject(&g_h, (r + 1) % j->n, buf, (unsigned)len);
		}
		drain(j);
	}
}

/* The victim as job id, its QPNs fresh from *qpn (keys the map has never held):
 * registered, run, checked exact, destroyed; its data packets per second. */
static double victim(uint32_t id, uint32_t seed, uint32_t *qpn)
{
	uint32_t ips[RANKS], credits;
	uint8_t macs[RANKS][6];
	char err[256] = "";
	struct hz_job j;
	double t0, rate;

	for (unsigned r = 0; r < RANKS; r++) {
		ips[r] = h_host_ip(r);
		h_host_mac(r, macs[r]);
	}
	assert_int_equal(hz_job_init(&j, RANKS, ips, (const uint8_t (*)[6])macs, MTU, MSG, MSGS,
				     HZ_VAL_PLAIN, seed), 0);
	for (unsigned r = 0; r < RANKS; r++) {
		j.spec->conns[r].src_qpn = (*qpn)++;
		j.spec->conns[r].dst_qpn = (*qpn)++;
	}
	if (dp_job_add(g_h.box, id, j.spec, &credits, err, sizeof(err)))
		fail_msg("victim job %u: job_add: %s", id, err);
	t0 = now_s();
	workload(&j);
	rate = hz_packets(&j) * RANKS / (now_s() - t0);
	printf("# victim job %u: %u results, %u wrong, %.0f packets/s\n", id, j.results, j.wrong,
	       rate);
	assert_int_equal(j.wrong, 0);
	assert_true(hz_all_results(&j));
	assert_int_equal(dp_job_del(g_h.box, id), 0);
	hz_job_fini(&j);
	return rate;
}

/* A job of n connections x k channels on the four hosts, fresh QPNs from *qpn. */
static struct nr_job_spec *churn_spec(unsigned n, unsigned k, uint32_t *qpn)
{
	struct nr_job_spec *s = calloc(1, nr_job_spec_size(n * k));

	assert_non_null(s);
	s->n_conns = n;
	s->n_channels = k;
	s->mtu = MTU;
	s->msg_size = MTU;
	s->pool_msgs = 2;
	s->timeout_ms = 60000;
	s->mode = NR_SUM_ORDERED;
	s->pkey = NR_BTH_PKEY_DEFAULT;
	for (unsigned i = 0; i < n * k; i++) {
		struct nr_conn_spec *c = &s->conns[i];

		c->src_ip = h_host_ip(i % RANKS);
		c->dst_ip = h_host_ip((i + 1) % RANKS);
		h_host_mac(i % RANKS, c->src_mac);
		h_host_mac((i + 1) % RANKS, c->dst_mac);
		c->src_sport = c->dst_sport = (uint16_t)(0xC000 | (i & 0xFF));
		c->src_qpn = *qpn;
		c->dst_qpn = *qpn + 1;
		*qpn = (*qpn + 2) & 0xFFFFFF ? (*qpn + 2) & 0xFFFFFF : 0x1000;
	}
	return s;
}

static unsigned cycles(void)
{
	const char *v = getenv("NR_TABLES_CYCLES");

	return v && atoi(v) > WARM ? (unsigned)atoi(v) : 300;
}

static void test_churn(void **state)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	struct rte_malloc_socket_stats m0 = { 0 }, m1;
	uint32_t live_id[LIVE] = { 0 }, qpn = 0x1000, seed = 0x7AB1E5u, id = 100;
	unsigned long long keys = 0;
	unsigned n_cycles = cycles(), pinned0;
	size_t heap0 = 0, heap1;
	double fresh, after, t0;

	(void)state;
	if (!h_eal_ok)
		skip();
	assert_int_equal(h_setup_workers(&g_h, RANKS, DP_MODE_SWITCH, 2), 0);
	for (unsigned r = 0; r < RANKS; r++) {
		uint8_t b[64] = { 0 };

		memcpy(b, bcast, 6);
		h_host_mac(r, b + 6);
		b[12] = 0x08;
		b[13] = 0x06;
		h_inject(&g_h, r, b, sizeof(b));
	}
	h_settle(&g_h);
	h_clear_out(&g_h);
	fresh = victim(1, 0x1A2Bu, &qpn);
	pinned0 = dp_l2_pinned(&g_h.box->l2);
	t0 = now_s();
	for (unsigned c = 0; c < n_cycles; c++) {
		/* memory measured from the end of a warm-up (allocators' caches filled) */
		if (c == WARM) {
			rte_malloc_get_socket_stats(rte_socket_id(), &m0);
			heap0 = mallinfo2().uordblks;
		}
		unsigned slot = hz_rand(&seed) % LIVE;
		unsigned n = 1 + hz_rand(&seed) % 256, k = 1 + hz_rand(&seed) % 4;
		struct nr_job_spec *s = churn_spec(n, k, &qpn);
		uint32_t credits;
		char err[256] = "";

		if (live_id[slot])
			assert_int_equal(dp_job_del(g_h.box, live_id[slot]), 0);
		live_id[slot] = ++id;
		if (dp_job_add(g_h.box, live_id[slot], s, &credits, err, sizeof(err)))
			fail_msg("cycle %u: job %u of %u x %u connections: %s", c, id, n, k, err);
		keys += 2ull * n * k;
		free(s);
		if ((c + 1) % 1000 == 0)
			printf("# %u of %u cycles, %.1f s\n", c + 1, n_cycles, now_s() - t0);
	}
	for (unsigned i = 0; i < LIVE; i++)
		if (live_id[i])
			assert_int_equal(dp_job_del(g_h.box, live_id[i]), 0);
	rte_malloc_get_socket_stats(rte_socket_id(), &m1);
	heap1 = mallinfo2().uordblks;
	printf("# %u jobs created and destroyed in %.1f s: %llu connection keys came and went; "
	       "from cycle %u on, rte_malloc %zu -> %zu bytes, libc %zu -> %zu bytes\n", n_cycles,
	       now_s() - t0, keys, WARM,
	       m0.heap_allocsz_bytes, m1.heap_allocsz_bytes, heap0, heap1);
	assert_int_equal(dp_l2_pinned(&g_h.box->l2), pinned0);
	assert_int_equal(m1.heap_allocsz_bytes, m0.heap_allocsz_bytes);
	assert_true(heap1 <= heap0 + 512 * 1024);
	after = victim(2, 0x3C4Du, &qpn);
	printf("# the victim after the churn at %.2f of the fresh box's rate (%.0f / %.0f packets/s; "
	       "the ring harness, 2 workers)\n", after / fresh, after, fresh);
	h_teardown(&g_h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_churn, h_case_teardown),
	};
	return h_run_box_group("hostile tables, box", tests, sizeof(tests) / sizeof(tests[0]));
}
