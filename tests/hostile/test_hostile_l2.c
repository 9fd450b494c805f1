/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A host of the data network against the box's L2 table (suite eal, the real
 * box on ring ports; docs/trust.md, "L2").  Five ports: the victim job's four
 * ranks on ports 0..3, the attacker on port 4, with no token.  While the
 * victim's all-reduce runs, the attacker
 *   - sends frames with each victim host's MAC as their source just before
 *     the last contribution of every packet (the theft: a learning switch
 *     would move the MACs to port 4 and send it the victim's results),
 *     untagged and priority-tagged (VLAN id 0);
 *   - sends the same tagged with VLAN id 7 (a VLAN the box does not switch);
 *   - floods frames from thousands of made-up MACs (to fill the table and
 *     evict the victim's entries).
 * Every result of the victim must be exact and leave by its receiver's own
 * port, none by port 4; the counters must name each attack frame: l2_pinned,
 * vlan_refused, l2_capped (the port's cap), the table's per-port counts.
 * A second case ages the attacker's entries out once it stops.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/eal/eal_harness.h"

#include "hz_traffic.h"

#define RANKS    4
#define PORTS    5
#define ATTACKER 4
#define MTU      256
#define MSG      600
#define MSGS     6
#define FLOOD    3000      /* made-up source MACs, over the port's cap */

static struct harness g_h;

static const uint8_t attacker_mac[6] = { 0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0x01 };

struct l2_run {
	struct harness *h;
	struct hz_job j;
	uint64_t theft, vlan, flood;    /* attack frames sent, by kind */
	uint64_t results_off_port;      /* results that left by another port than their receiver's */
	uint64_t results_to_attacker;
	uint32_t rng;
};

/* An ARP-sized frame from src to dst, tagged with tci when vlan. */
static unsigned frame(uint8_t *b, const uint8_t dst[6], const uint8_t src[6], bool vlan, uint16_t tci)
{
	unsigned o = 12;

	memset(b, 0, 64);
	memcpy(b, dst, 6);
	memcpy(b + 6, src, 6);
	if (vlan) {
		b[o++] = 0x81;
		b[o++] = 0x00;
		b[o++] = (uint8_t)(tci >> 8);
		b[o++] = (uint8_t)tci;
	}
	b[o++] = 0x08;
	b[o++] = 0x06;
	return 64;
}

/* Look at what left the box: results checked exact and by the port they left on. */
static void drain(struct l2_run *R)
{
	struct harness *h = R->h;

	h_settle(h);
	for (unsigned i = 0; i < h->n_out; i++) {
		struct nr_pkt p;

		if (!hz_result(&R->j, h->out[i].data, h->out[i].len, true))
			continue;
		assert_int_equal(nr_parse(h->out[i].data, h->out[i].len, &p), NR_PKT_ROCE);
		for (unsigned k = 0; k < RANKS; k++)
			if (p.daddr == R->j.ip[k] && h->out[i].port != k) {
				R->results_off_port++;
				R->results_to_attacker += h->out[i].port == ATTACKER;
			}
	}
	h_clear_out(h);
}

/* The theft, before the last contribution of a packet: every victim's MAC
 * from port 4, untagged, priority-tagged and in VLAN 7; the box has taken
 * them before that contribution comes (and its results leave). */
static void theft(struct l2_run *R)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t b[64];

	for (unsigned k = 0; k < RANKS; k++) {
		h_inject(R->h, ATTACKER, b, frame(b, bcast, R->j.mac[k], false, 0));
		h_inject(R->h, ATTACKER, b, frame(b, R->j.mac[(k + 1) % RANKS], R->j.mac[k], true, 0xE000));
		R->theft += 2;
		h_inject(R->h, ATTACKER, b, frame(b, bcast, R->j.mac[k], true, 0x6007));
		R->vlan++;
	}
	drain(R);
}

/* The flood before each message. */
static void flood(struct l2_run *R, uint32_t m)
{
	uint8_t b[64];

	/* made-up MACs, sent to the attacker's own (filtered: nothing leaves) */
	for (unsigned i = 0; i < FLOOD / MSGS; i++) {
		uint8_t src[6] = { 0x06, 0x00, (uint8_t)m, (uint8_t)(i >> 8), (uint8_t)i,
				   (uint8_t)hz_rand(&R->rng) };

		h_inject(R->h, ATTACKER, b, frame(b, attacker_mac, src, false, 0));
		R->flood++;
	}
}

static void workload(struct l2_run *R, bool hostile)
{
	uint8_t buf[HZ_FRAME_MAX];
	struct hz_job *j = &R->j;

	for (uint32_t m = 0; m < j->msgs; m++) {
		if (hostile)
			flood(R, m);
		for (uint32_t p = 0; p < j->ppm; p++)
			for (unsigned r = 0; r < j->n; r++) {
				int len = hz_data(j, r, m * j->ppm + p, buf, sizeof(buf));

				assert_true(len > 0);
				if (hostile && r + 1 == j->n)
					theft(R);
				h_inject(R->h, r, buf, (unsigned)len);
			}
		drain(R);
		for (unsigned r = 0; r < j->n; r++) {
			int len = hz_ack(j, r, m * j->ppm + j->ppm - 1, 0x1F, buf, sizeof(buf));

			h_inject(R->h, (r + 1) % j->n, buf, (unsigned)len);
		}
		drain(R);
	}
}

/* The box, every host's ARP (learned on its port), the attacker's, the victim job. */
static void setup(struct l2_run *R, void (*tune)(struct dp_cfg *))
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint32_t ips[RANKS], credits;
	uint8_t macs[RANKS][6], b[64];
	char err[256] = "";

	memset(R, 0, sizeof(*R));
	R->h = &g_h;
	R->rng = 0x12AB34u;
	for (unsigned r = 0; r < RANKS; r++) {
		ips[r] = h_host_ip(r);
		h_host_mac(r, macs[r]);
	}
	assert_int_equal(h_setup_tuned(&g_h, PORTS, DP_MODE_SWITCH, 1, tune), 0);
	assert_int_equal(hz_job_init(&R->j, RANKS, ips, (const uint8_t (*)[6])macs, MTU, MSG, MSGS,
				     HZ_VAL_PLAIN, 0x1A2Bu), 0);
	for (unsigned r = 0; r < RANKS; r++)
		h_inject(&g_h, r, b, frame(b, bcast, macs[r], false, 0));
	h_inject(&g_h, ATTACKER, b, frame(b, bcast, attacker_mac, false, 0));
	drain(R);
	if (dp_job_add(g_h.box, 1, R->j.spec, &credits, err, sizeof(err)))
		fail_msg("job_add: %s", err);
	/* the four hosts' MACs, pinned where they were learned */
	assert_int_equal(dp_l2_pinned(&g_h.box->l2), RANKS);
}

static void test_theft_and_flood(void **state)
{
	struct l2_run R;
	struct dp_ctr c;
	uint32_t cap;

	(void)state;
	if (!h_eal_ok)
		skip();
	setup(&R, NULL);
	cap = g_h.box->l2.port_cap;
	workload(&R, true);
	dp_box_counters(g_h.box, &c);
	printf("# theft %llu, vlan %llu, flood %llu frames: l2_pinned %llu, vlan_refused %llu, "
	       "l2_capped %llu, l2_moved %llu; port 4 holds %u entries (cap %u); results %u, by "
	       "another port %llu (the attacker's %llu), wrong %u\n",
	       (unsigned long long)R.theft, (unsigned long long)R.vlan, (unsigned long long)R.flood,
	       (unsigned long long)c.c[DP_CTR_L2_PINNED], (unsigned long long)c.c[DP_CTR_VLAN_REFUSED],
	       (unsigned long long)c.c[DP_CTR_L2_CAPPED], (unsigned long long)c.c[DP_CTR_L2_MOVED],
	       dp_l2_learned(&g_h.box->l2, g_h.port_id[ATTACKER]), cap, R.j.results,
	       (unsigned long long)R.results_off_port, (unsigned long long)R.results_to_attacker,
	       R.j.wrong);
	/* the victim: every sum exact, each by its receiver's port, none to port 4 */
	assert_int_equal(R.j.wrong, 0);
	assert_true(hz_all_results(&R.j));
	assert_int_equal(R.results_off_port, 0);
	assert_int_equal(R.results_to_attacker, 0);
	/* every attack frame named, none learned: the victims' MACs stay put */
	assert_int_equal(c.c[DP_CTR_L2_PINNED], R.theft);
	assert_int_equal(c.c[DP_CTR_VLAN_REFUSED], R.vlan);
	assert_int_equal(c.c[DP_CTR_L2_MOVED], 0);
	for (unsigned r = 0; r < RANKS; r++)
		assert_int_equal(dp_l2_lookup(&g_h.box->l2, R.j.mac[r], 0), g_h.port_id[r]);
	/* the flood: the port holds its cap, not one more; the rest counted (a
	 * few of its own entries it evicted in full buckets are neither) */
	assert_int_equal(dp_l2_learned(&g_h.box->l2, g_h.port_id[ATTACKER]), cap);
	assert_true(c.c[DP_CTR_L2_CAPPED] > R.flood - cap - R.flood / 100);
	/* the accounting identity holds with the new drop reasons */
	assert_int_equal(c.c[DP_CTR_DROPPED], c.c[DP_CTR_L2_PINNED] + c.c[DP_CTR_VLAN_REFUSED]);
	/* a destroyed job's pins go */
	assert_int_equal(dp_job_del(g_h.box, 1), 0);
	assert_int_equal(dp_l2_pinned(&g_h.box->l2), 0);
	h_teardown(&g_h);
	hz_job_fini(&R.j);
}

static void short_age(struct dp_cfg *cfg)
{
	cfg->l2_age_s = 1;
}

static void test_ageing(void **state)
{
	struct l2_run R;
	struct dp_ctr c;
	uint16_t port4;

	(void)state;
	if (!h_eal_ok)
		skip();
	setup(&R, short_age);
	port4 = g_h.port_id[ATTACKER];
	workload(&R, true);
	assert_true(hz_all_results(&R.j));
	assert_int_equal(R.j.wrong, 0);
	assert_true(dp_l2_learned(&g_h.box->l2, port4) > 0);
	/* the attacker stops; its entries are swept within a few ageing times,
	 * the pinned MACs of the live job are not */
	for (unsigned t = 0; t < 60 && dp_l2_learned(&g_h.box->l2, port4) > 0; t++)
		usleep(100000);
	dp_box_counters(g_h.box, &c);
	printf("# ageing: port 4 holds %u entries, l2_aged %llu, pinned %u\n",
	       dp_l2_learned(&g_h.box->l2, port4), (unsigned long long)c.c[DP_CTR_L2_AGED],
	       dp_l2_pinned(&g_h.box->l2));
	assert_int_equal(dp_l2_learned(&g_h.box->l2, port4), 0);
	assert_true(c.c[DP_CTR_L2_AGED] > 0);
	assert_int_equal(dp_l2_pinned(&g_h.box->l2), RANKS);
	assert_int_equal(dp_job_del(g_h.box, 1), 0);
	h_teardown(&g_h);
	hz_job_fini(&R.j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_theft_and_flood, h_case_teardown),
		cmocka_unit_test_teardown(test_ageing, h_case_teardown),
	};
	return h_run_box_group("hostile L2, box", tests, sizeof(tests) / sizeof(tests[0]));
}
