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
 *
 * Tenants (docs/trust.md, "L2"): the attacker is tenant 2 ("mallory", its
 * jobs' spec owner 2), the victim tenant 1.  Three more cases, each the
 * victim's job exact beside the attack and no victim frame to port 4:
 *   - the re-pin: mallory teaches the box host 1's MAC from port 4 before
 *     host 1 speaks and pins it with a job; the victim's job is refused,
 *     naming it (a re-pin took the first pin's port: the victim's results
 *     went to port 4), and runs once mallory's job is gone;
 *   - the pre-registration flood against the operator's static map
 *     (--l2-static): host MACs flooded from port 4 before any host speaks
 *     move nothing, mallory's job pinning one binds to the host's port;
 *     and against sticky learning (--l2-sticky): after the hosts spoke;
 *   - pin exhaustion: mallory pins made-up MACs past --l2-pin-cap (refused,
 *     counted) and fills the bucket of host 2's MAC with pins before host 2
 *     speaks; the victim's job is refused at job_create naming the bucket
 *     (it registered unbound, its results flooded to port 4).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_jhash.h>

#include "control/api/nr_control.h"
#include "dataplane/dpdk/dp_backend.h"
#include "dataplane/dpdk/dp_l2_static.h"
#include "proto/nr_text.h"
#include "tests/eal/eal_harness.h"

#include "hz_traffic.h"

#define RANKS    4
#define PORTS    5
#define ATTACKER 4
#define MTU      256
#define MSG      600
#define MSGS     6
#define FLOOD    3000      /* made-up source MACs, over the port's cap */
#define VICTIM   1         /* the victim's owner (tenant 0 + 1) */
#define MALLORY  2         /* the attacker's (tenant 1 + 1) */
#define PIN_CAP  8

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

static void bcast_from(unsigned port, const uint8_t mac[6])
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t b[64];

	h_inject(&g_h, port, b, frame(b, bcast, mac, false, 0));
}

/* The box and the victim's job (owner VICTIM, not added); hosts in speak[] announce. */
static void tenants_setup(struct l2_run *R, void (*tune)(struct dp_cfg *), const bool *speak)
{
	uint32_t ips[RANKS];
	uint8_t macs[RANKS][6];

	memset(R, 0, sizeof(*R));
	R->h = &g_h;
	R->rng = 0x5EED1u;
	for (unsigned r = 0; r < RANKS; r++) {
		ips[r] = h_host_ip(r);
		h_host_mac(r, macs[r]);
	}
	assert_int_equal(h_setup_tuned(&g_h, PORTS, DP_MODE_SWITCH, 1, tune), 0);
	assert_int_equal(hz_job_init(&R->j, RANKS, ips, (const uint8_t(*)[6])macs, MTU, MSG, MSGS,
				     HZ_VAL_PLAIN, 0x1A2Bu),
			 0);
	R->j.spec->owner = VICTIM;
	bcast_from(ATTACKER, attacker_mac);
	for (unsigned r = 0; r < RANKS; r++)
		if (speak[r])
			bcast_from(r, macs[r]);
	drain(R);
}

/* The box, every host's ARP (learned on its port), the attacker's, the victim job. */
static void setup(struct l2_run *R, void (*tune)(struct dp_cfg *))
{
	static const bool all[RANKS] = { true, true, true, true };
	uint32_t credits;
	char err[256] = "";

	tenants_setup(R, tune, all);
	R->rng = 0x12AB34u;
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

/* ---- tenants' pins ------------------------------------------------------------ */

/* The L2 table's clock now (what the workers pass it). */
static uint32_t box_tick(void)
{
	return dp_l2_tick(dp_now_ns(g_h.box, rte_get_tsc_cycles()));
}

/* Mallory's two-rank job naming MACs a and b (her addresses, her QPs): dp_job_add's rc. */
static int mallory_job(struct hz_job *m, uint32_t id, const uint8_t a[6], const uint8_t b[6],
		       char *err, size_t errlen)
{
	uint32_t ips[2] = { h_host_ip(40 + 2 * id), h_host_ip(41 + 2 * id) }, credits;
	uint8_t macs[2][6];

	memcpy(macs[0], a, 6);
	memcpy(macs[1], b, 6);
	assert_int_equal(hz_job_init(m, 2, ips, (const uint8_t(*)[6])macs, MTU, MSG, 1,
				     HZ_VAL_PLAIN, 0x77u + id),
			 0);
	m->spec->owner = MALLORY;
	return dp_job_add(g_h.box, id, m->spec, &credits, err, errlen);
}

/* The victim's job added, run, checked: exact, every result by its receiver's port. */
static void victim_runs(struct l2_run *R, bool hostile)
{
	uint32_t credits;
	char err[256] = "";

	if (dp_job_add(g_h.box, 1, R->j.spec, &credits, err, sizeof(err)))
		fail_msg("victim's job_add: %s", err);
	workload(R, hostile);
	assert_int_equal(R->j.wrong, 0);
	assert_true(hz_all_results(&R->j));
	assert_int_equal(R->results_off_port, 0);
	assert_int_equal(R->results_to_attacker, 0);
	assert_int_equal(dp_job_del(g_h.box, 1), 0);
}

static void test_repin(void **state)
{
	static const bool speak[RANKS] = { true, false, true, true };
	struct hz_job m;
	struct l2_run R;
	uint32_t credits;
	char err[256] = "";
	int rc;

	(void)state;
	if (!h_eal_ok)
		skip();
	tenants_setup(&R, NULL, speak);
	/* host 1's MAC, taught from port 4 before host 1 speaks, pinned by mallory */
	bcast_from(ATTACKER, R.j.mac[1]);
	drain(&R);
	assert_int_equal(dp_l2_lookup(&g_h.box->l2, R.j.mac[1], box_tick()), g_h.port_id[ATTACKER]);
	if (mallory_job(&m, 2, R.j.mac[1], attacker_mac, err, sizeof(err)))
		fail_msg("mallory's job: %s", err);
	rc = dp_job_add(g_h.box, 1, R.j.spec, &credits, err, sizeof(err));
	printf("# re-pin: the victim's job_add: %d (%s); pins refused to another owner %llu\n", rc,
	       err, (unsigned long long)g_h.box->l2.refused_owner);
	assert_int_equal(rc, -EACCES);
	assert_non_null(strstr(err, "is pinned by another tenant's job"));
	assert_int_equal(g_h.box->l2.refused_owner, 1);
	/* mallory's job gone, host 1 speaks from its port: the victim runs exact */
	assert_int_equal(dp_job_del(g_h.box, 2), 0);
	bcast_from(1, R.j.mac[1]);
	drain(&R);
	victim_runs(&R, true);
	h_teardown(&g_h);
	hz_job_fini(&R.j);
	hz_job_fini(&m);
}

/* dp_l2_static_load's check: a port of the harness' box. */
static int harness_port(void *arg, uint16_t port)
{
	(void)arg;
	for (unsigned i = 0; i < PORTS; i++)
		if (g_h.port_id[i] == port)
			return 1;
	return 0;
}

static void test_static_map(void **state)
{
	static const bool none[RANKS] = { false, false, false, false };
	char path[] = "/tmp/nr-l2-static-XXXXXX", err[256] = "", mac_s[NR_MAC_STRLEN];
	struct l2_run R;
	struct hz_job m;
	struct dp_ctr c;
	FILE *f;
	int fd;

	(void)state;
	if (!h_eal_ok)
		skip();
	tenants_setup(&R, NULL, none);
	/* the operator's map, as --l2-static reads it; its mistakes named by line */
	fd = mkstemp(path);
	assert_true(fd >= 0 && (f = fdopen(fd, "w")) != NULL);
	fprintf(f, "# the victims' hosts\n");
	for (unsigned r = 0; r < RANKS; r++)
		fprintf(f, "%s %u   # host %u\n", nr_mac_str(R.j.mac[r], mac_s), g_h.port_id[r], r);
	fclose(f);
	assert_int_equal(dp_l2_static_load(&g_h.box->l2, path, 0, harness_port, NULL, err,
					   sizeof(err)),
			 RANKS);
	f = fopen(path, "a");
	fprintf(f, "%s %u\n", nr_mac_str(R.j.mac[1], mac_s), g_h.port_id[ATTACKER]);
	fclose(f);
	assert_int_equal(dp_l2_static_load(&g_h.box->l2, path, 0, harness_port, NULL, err,
					   sizeof(err)),
			 -1);
	assert_non_null(strstr(err, ":6: 02:4e:52:00:00:02 is already on another port"));
	f = fopen(path, "w");
	fprintf(f, "02:00:00:00:00:09 99\n");
	fclose(f);
	assert_int_equal(dp_l2_static_load(&g_h.box->l2, path, 0, harness_port, NULL, err,
					   sizeof(err)),
			 -1);
	assert_non_null(strstr(err, ":1: port \"99\" is not a port of the box"));
	unlink(path);
	/* the flood before anyone registers: every host's MAC from port 4 */
	for (unsigned k = 0; k < 16; k++)
		bcast_from(ATTACKER, R.j.mac[k % RANKS]);
	drain(&R);
	for (unsigned r = 0; r < RANKS; r++)
		assert_int_equal(dp_l2_lookup(&g_h.box->l2, R.j.mac[r], 0), g_h.port_id[r]);
	/* mallory's job naming host 1's MAC binds to host 1's port, not hers */
	if (mallory_job(&m, 2, R.j.mac[1], attacker_mac, err, sizeof(err)))
		fail_msg("mallory's job: %s", err);
	assert_int_equal(dp_l2_lookup(&g_h.box->l2, R.j.mac[1], 0), g_h.port_id[1]);
	victim_runs(&R, true);
	dp_box_counters(g_h.box, &c);
	printf("# static map: %llu theft frames before and during the job, l2_pinned %llu, "
	       "l2_moved %llu\n",
	       (unsigned long long)(R.theft + 16), (unsigned long long)c.c[DP_CTR_L2_PINNED],
	       (unsigned long long)c.c[DP_CTR_L2_MOVED]);
	assert_int_equal(c.c[DP_CTR_L2_PINNED], R.theft + 16);
	assert_int_equal(c.c[DP_CTR_L2_MOVED], 0);
	assert_int_equal(dp_job_del(g_h.box, 2), 0);
	/* the static entries stay when every job is gone */
	assert_int_equal(dp_l2_pinned(&g_h.box->l2), RANKS);
	h_teardown(&g_h);
	hz_job_fini(&R.j);
	hz_job_fini(&m);
}

/* An l2_static request (PROTOCOL.md) of who through the control API: its reply. */
static json_t *l2_req(struct nr_ctl *c, int who, json_t *req)
{
	json_t *r = nr_ctl_handle_json(c, req, who);

	json_decref(req);
	assert_non_null(r);
	return r;
}

static void expect_l2_err(json_t *r, const char *needle)
{
	const char *e = json_string_value(json_object_get(r, "error"));

	if (json_is_true(json_object_get(r, "ok")) || !e || !strstr(e, needle))
		fail_msg("expected an error with \"%s\", got %s", needle, e ? e : "ok");
	json_decref(r);
}

/*
 * The static map from netreducectl (l2_static, the admin's) while the box
 * runs: the operator pins the four hosts' MACs to their ports before any of
 * them speaks; a flood of their MACs from port 4 moves nothing; the victim's
 * job binds to them and runs exact; an entry a job pins is not taken back
 * until the job is gone, then it is a learned entry again; a tenant cannot
 * touch the map, nor anyone put a MAC on a port the box lacks.
 */
static void test_static_runtime(void **state)
{
	static const bool none[RANKS] = { false, false, false, false };
	char mac_s[NR_MAC_STRLEN];
	struct l2_run R;
	struct nr_ctl *c;
	struct dp_ctr ctr;
	uint32_t credits;
	char err[256] = "";
	json_t *r;

	(void)state;
	if (!h_eal_ok)
		skip();
	tenants_setup(&R, NULL, none);
	c = nr_ctl_create(dp_backend_create(g_h.box));
	assert_non_null(c);
	for (unsigned h = 0; h < RANKS; h++) {
		r = l2_req(c, NR_CTL_ADMIN,
			   json_pack("{s:s,s:s,s:i}", "op", "l2_static", "mac",
				     nr_mac_str(R.j.mac[h], mac_s), "port", (int)g_h.port_id[h]));
		assert_true(json_is_true(json_object_get(r, "ok")));
		json_decref(r);
	}
	expect_l2_err(l2_req(c, 0, json_pack("{s:s}", "op", "l2_static")), "not a tenant's");
	expect_l2_err(l2_req(c, NR_CTL_ADMIN,
			     json_pack("{s:s,s:s,s:i}", "op", "l2_static", "mac",
				       "02:00:00:00:00:09", "port", 99)),
		      "port 99 is not one of the box's");
	expect_l2_err(l2_req(c, NR_CTL_ADMIN,
			     json_pack("{s:s,s:s,s:i}", "op", "l2_static", "mac",
				       nr_mac_str(R.j.mac[1], mac_s), "port",
				       (int)g_h.port_id[ATTACKER])),
		      "is static on another port");
	r = l2_req(c, NR_CTL_ADMIN, json_pack("{s:s}", "op", "l2_static"));
	assert_int_equal(json_array_size(json_object_get(r, "l2_static")), RANKS);
	json_decref(r);
	/* the flood before anyone registers */
	for (unsigned k = 0; k < 16; k++)
		bcast_from(ATTACKER, R.j.mac[k % RANKS]);
	drain(&R);
	for (unsigned h = 0; h < RANKS; h++)
		assert_int_equal(dp_l2_lookup(&g_h.box->l2, R.j.mac[h], box_tick()), g_h.port_id[h]);
	/* the victim's job binds to them: host 0's entry cannot go while it lives */
	if (dp_job_add(g_h.box, 1, R.j.spec, &credits, err, sizeof(err)))
		fail_msg("victim's job_add: %s", err);
	expect_l2_err(l2_req(c, NR_CTL_ADMIN,
			     json_pack("{s:s,s:s,s:b}", "op", "l2_static", "mac",
				       nr_mac_str(R.j.mac[0], mac_s), "remove", 1)),
		      "is pinned by 2 of the jobs' connections too");
	workload(&R, true);
	assert_int_equal(R.j.wrong, 0);
	assert_true(hz_all_results(&R.j));
	assert_int_equal(R.results_off_port, 0);
	assert_int_equal(R.results_to_attacker, 0);
	dp_box_counters(g_h.box, &ctr);
	assert_int_equal(ctr.c[DP_CTR_L2_MOVED], 0);
	assert_int_equal(dp_job_del(g_h.box, 1), 0);
	/* the job gone: taken back, a learned entry on its port again */
	r = l2_req(c, NR_CTL_ADMIN,
		   json_pack("{s:s,s:s,s:b}", "op", "l2_static", "mac",
			     nr_mac_str(R.j.mac[0], mac_s), "remove", 1));
	assert_true(json_is_true(json_object_get(r, "ok")));
	json_decref(r);
	expect_l2_err(l2_req(c, NR_CTL_ADMIN,
			     json_pack("{s:s,s:s,s:b}", "op", "l2_static", "mac",
				       nr_mac_str(R.j.mac[0], mac_s), "remove", 1)),
		      "is not static");
	r = l2_req(c, NR_CTL_ADMIN, json_pack("{s:s}", "op", "l2_static"));
	assert_int_equal(json_array_size(json_object_get(r, "l2_static")), RANKS - 1);
	json_decref(r);
	assert_int_equal(dp_l2_pinned(&g_h.box->l2), RANKS - 1);
	assert_int_equal(dp_l2_lookup(&g_h.box->l2, R.j.mac[0], box_tick()), g_h.port_id[0]);
	nr_ctl_destroy(c); /* the backend, not the box */
	h_teardown(&g_h);
	hz_job_fini(&R.j);
}

static void sticky(struct dp_cfg *cfg)
{
	cfg->l2_sticky = true;
}

/* --l2-sticky: hosts that spoke stay put under a flood of their MACs before the job. */
static void test_sticky(void **state)
{
	static const bool all[RANKS] = { true, true, true, true };
	struct l2_run R;
	struct dp_ctr c;

	(void)state;
	if (!h_eal_ok)
		skip();
	tenants_setup(&R, sticky, all);
	for (unsigned k = 0; k < 16; k++)
		bcast_from(ATTACKER, R.j.mac[k % RANKS]);
	drain(&R);
	for (unsigned r = 0; r < RANKS; r++)
		assert_int_equal(dp_l2_lookup(&g_h.box->l2, R.j.mac[r], box_tick()), g_h.port_id[r]);
	dp_box_counters(g_h.box, &c);
	assert_int_equal(c.c[DP_CTR_L2_PINNED], 16);
	assert_int_equal(c.c[DP_CTR_L2_MOVED], 0);
	/* what it stops: without it one frame moves host 1 to port 4 */
	g_h.box->l2.sticky = false;
	bcast_from(ATTACKER, R.j.mac[1]);
	drain(&R);
	assert_int_equal(dp_l2_lookup(&g_h.box->l2, R.j.mac[1], box_tick()), g_h.port_id[ATTACKER]);
	bcast_from(1, R.j.mac[1]);
	drain(&R);
	g_h.box->l2.sticky = true;
	victim_runs(&R, true);
	dp_box_counters(g_h.box, &c);
	printf("# sticky: 16 flood frames before the job and %llu theft frames during it refused "
	       "(l2_pinned %llu); l2_moved %llu (the two moves shown with it off)\n",
	       (unsigned long long)R.theft, (unsigned long long)c.c[DP_CTR_L2_PINNED],
	       (unsigned long long)c.c[DP_CTR_L2_MOVED]);
	assert_int_equal(c.c[DP_CTR_L2_PINNED], 16 + R.theft);
	assert_int_equal(c.c[DP_CTR_L2_MOVED], 2);
	h_teardown(&g_h);
	hz_job_fini(&R.j);
}

static void pin_cap(struct dp_cfg *cfg)
{
	cfg->l2_pin_cap = PIN_CAP;
}

/* Whether two MACs share a bucket of t (dp_l2.c's hash, the box's secret). */
static bool same_bucket(const struct dp_l2 *t, const uint8_t a[6], const uint8_t b[6])
{
	uint64_t ka = 0, kb = 0;

	for (unsigned i = 0; i < 6; i++) {
		ka = ka << 8 | a[i];
		kb = kb << 8 | b[i];
	}
	return ((rte_jhash_2words((uint32_t)ka, (uint32_t)(ka >> 32), t->secret) ^
		 rte_jhash_2words((uint32_t)kb, (uint32_t)(kb >> 32), t->secret)) &
		(DP_L2_BUCKETS - 1)) == 0;
}

static void test_pin_exhaustion(void **state)
{
	static const bool speak[RANKS] = { true, true, false, true };
	struct hz_job mp[(PIN_CAP + 4) / 2], mb[DP_L2_WAYS / 2];
	uint8_t made[PIN_CAP + 4][6], twin[DP_L2_WAYS][6];
	unsigned refused = 0, ok = 0, nt = 0;
	struct l2_run R;
	uint32_t credits;
	char err[256] = "";
	int rc;

	(void)state;
	if (!h_eal_ok)
		skip();
	tenants_setup(&R, pin_cap, speak);
	/* past the pin cap: made-up MACs taught from port 4, pinned in pairs */
	for (unsigned i = 0; i < PIN_CAP + 4; i++) {
		uint8_t mac[6] = { 0x06, 0x11, 0x22, 0x33, 0x44, (uint8_t)i };

		memcpy(made[i], mac, 6);
		bcast_from(ATTACKER, mac);
	}
	drain(&R);
	for (unsigned i = 0; i < (PIN_CAP + 4) / 2; i++) {
		rc = mallory_job(&mp[i], 10 + i, made[2 * i], made[2 * i + 1], err, sizeof(err));
		if (rc == 0) {
			ok++;
		} else {
			assert_int_equal(rc, -EDQUOT);
			assert_non_null(strstr(err, "the box's --l2-pin-cap"));
			refused++;
		}
	}
	assert_int_equal(ok, PIN_CAP / 2);
	assert_int_equal(refused, (PIN_CAP + 4) / 2 - PIN_CAP / 2);
	for (unsigned i = 0; i < ok; i++)
		assert_int_equal(dp_job_del(g_h.box, 10 + i), 0);
	/* the bucket of host 2's MAC, which has not spoken, filled with mallory's pins */
	for (uint32_t k = 1; nt < DP_L2_WAYS && k < (1u << 22); k++) {
		uint8_t mac[6] = { 0x06,       0x55, (uint8_t)(k >> 16), (uint8_t)(k >> 8),
				   (uint8_t)k, 0x01 };

		if (same_bucket(&g_h.box->l2, mac, R.j.mac[2]))
			memcpy(twin[nt++], mac, 6);
	}
	assert_int_equal(nt, DP_L2_WAYS);
	for (unsigned i = 0; i < DP_L2_WAYS; i++)
		bcast_from(ATTACKER, twin[i]);
	drain(&R);
	for (unsigned i = 0; i < DP_L2_WAYS / 2; i++)
		if (mallory_job(&mb[i], 30 + i, twin[2 * i], twin[2 * i + 1], err, sizeof(err)))
			fail_msg("mallory's bucket pins: %s", err);
	bcast_from(2, R.j.mac[2]); /* host 2 speaks: its bucket takes nothing */
	drain(&R);
	assert_int_equal(dp_l2_lookup(&g_h.box->l2, R.j.mac[2], box_tick()), DP_L2_NONE);
	rc = dp_job_add(g_h.box, 1, R.j.spec, &credits, err, sizeof(err));
	printf("# pin exhaustion: %u of mallory's pair jobs pinned, %u refused (--l2-pin-cap %u); "
	       "the victim's job_add with host 2's bucket pinned full: %d (%s); refused cap %llu, "
	       "full %llu\n",
	       ok, refused, PIN_CAP, rc, err, (unsigned long long)g_h.box->l2.refused_cap,
	       (unsigned long long)g_h.box->l2.refused_full);
	assert_int_equal(rc, -ENOSPC);
	assert_non_null(strstr(err, "cannot be pinned: its bucket of the box's L2 table"));
	assert_true(g_h.box->l2.refused_cap >= refused && g_h.box->l2.refused_full >= 1);
	/* mallory's bucket pins gone, host 2 speaks again: the victim runs exact */
	for (unsigned i = 0; i < DP_L2_WAYS / 2; i++)
		assert_int_equal(dp_job_del(g_h.box, 30 + i), 0);
	bcast_from(2, R.j.mac[2]);
	drain(&R);
	victim_runs(&R, true);
	h_teardown(&g_h);
	hz_job_fini(&R.j);
	for (unsigned i = 0; i < (PIN_CAP + 4) / 2; i++)
		hz_job_fini(&mp[i]);
	for (unsigned i = 0; i < DP_L2_WAYS / 2; i++)
		hz_job_fini(&mb[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_theft_and_flood, h_case_teardown),
		cmocka_unit_test_teardown(test_ageing, h_case_teardown),
		cmocka_unit_test_teardown(test_repin, h_case_teardown),
		cmocka_unit_test_teardown(test_static_map, h_case_teardown),
		cmocka_unit_test_teardown(test_static_runtime, h_case_teardown),
		cmocka_unit_test_teardown(test_sticky, h_case_teardown),
		cmocka_unit_test_teardown(test_pin_exhaustion, h_case_teardown),
	};
	return h_run_box_group("hostile L2, box", tests, sizeof(tests) / sizeof(tests[0]));
}
