/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * EAL suite: the running box (its loop on lcore 1) on ring-backed ports, fed
 * RoCEv2 traffic of N connections built with the wire library, every frame
 * that leaves checked:
 *   results: on the receiver's port, the connection's own headers, QPN and PSN,
 *            payload bit-identical to the rank-ordered sum, valid ICRC (the
 *            whole frame is compared with one built by nr_build_frame), first
 *            deliveries in PSN order, duplicates only as identical resends;
 *   anything else: byte-identical to what was sent, on the port L2 learning
 *            says, never a frame that should have been dropped;
 *   counters: every received frame in exactly one bucket; mempool in-use
 *            back to its baseline once the job is gone.
 * Impairments: loss with go-back-N retransmission, duplicates, reordering
 * across connections, coalesced and repeated ACKs, garbage frames (random
 * bytes, truncated RoCE, runts, flipped payload bits under the sender's ICRC),
 * unregistered connections, spoofed sources,
 * ECN-CE on a contribution, job destroy mid-stream.
 * Seed: NR_SEED=<n> to replay (printed by every test).
 */
#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "control/api/ctl_spec.h"
#include "control/api/nr_control.h"
#include "dataplane/dpdk/dp_backend.h"
#include "dataplane/dpdk/dp_opts.h"
#include "dataplane/dpdk/dp_state.h"
#include "eal_harness.h"
#include "proto/roce_build.h"
#include "proto/roce_icrc.h"
#include "proto/roce_pkt.h"

#include "eal_sim.h"

/* ---- tests ---------------------------------------------------------------- */

static void run_agg(unsigned n, const char *name)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *s = calloc(1, sizeof(*s));
	struct impair im = { .loss = 0.05, .dup = 0.05, .noise = 0.10 };
	unsigned baseline, msgs = 16, total_g;
	struct nr_job_stats st;

	test_seed(name);
	assert_int_equal(h_setup(h, n, DP_MODE_SWITCH), 0);
	baseline = rte_mempool_in_use_count(h_pool);
	sim_init(s, h, n, 1024, 3000, 4);     /* 3 packets a message, last one short */
	learn_all(s, n);
	sim_job_add(s, 7);
	total_g = msgs * s->pkts_per_msg;
	for (unsigned m = 0; m < msgs; m += s->w)
		run_window(s, m * s->pkts_per_msg, (m + s->w) * s->pkts_per_msg, &im, true);
	check_accounting(s, total_g);
	{
		struct dp_ctr c;

		dp_box_counters(h->box, &c);
		printf("  n=%u: rx %lu results %lu resent %lu dup_dropped %lu stale %lu malformed %lu "
		       "runt %lu bad_icrc %lu spoofed %lu forwarded %lu unknown_conn %u\n", n, c.c[DP_CTR_RX],
		       c.c[DP_CTR_RESULTS], c.c[DP_CTR_RESENT], c.engine_drop[NR_ECTR_DUP_DROPPED],
		       c.engine_drop[NR_ECTR_STALE_DROPPED], c.c[DP_CTR_MALFORMED], c.c[DP_CTR_RUNT],
		       c.c[DP_CTR_BAD_ICRC], c.engine_drop[NR_ECTR_SPOOFED], c.c[DP_CTR_FORWARDED], s->unknown_conn);
		uint64_t ec[NR_ECTR_MAX];

		/* the status monitor's NAKs left through the box's exit, each one
		 * checked by check_outputs (sender's port, ICRC, never beyond the
		 * receiver's ACKs), and the results it resent itself (checked as
		 * results); nothing else was made */
		assert_int_equal(dp_box_engine_counters(h->box, ec), 0);
		printf("  generated %lu (naks seen %u, results %lu; %u packets sent behind a loss)\n",
		       c.c[DP_CTR_GENERATED], s->naks_seen, nr_ectr_mon_results(ec), s->gaps);
		assert_int_equal(c.c[DP_CTR_GENERATED],
				 s->naks_seen + nr_ectr_mon_results(ec));
		assert_int_equal(c.c[DP_CTR_GENERATED_NOMBUF], 0);
		/* a gap the box saw (a packet behind a lost one) is NAKed; with
		 * 5% loss a run may have none (a seed whose losses all ended
		 * their connections' rounds) */
		assert_true(s->gaps == 0 || s->naks_seen > 0);
	}
	assert_int_equal(dp_job_stats(h->box, 7, &st), 0);
	assert_int_equal(st.state, NR_JOB_ACTIVE);
	assert_int_equal(st.next_emit, total_g);
	assert_int_equal(st.next_release, total_g);
	assert_int_equal(dp_job_del(h->box, 7), 0);
	h_settle(h);
	check_outputs(s);
	assert_int_equal(rte_mempool_in_use_count(h_pool), baseline);
	h_teardown(h);
	free(s);
	free(h);
}

static void test_agg_n2(void **state) { run_agg(2, "agg_n2"); }
static void test_agg_n4(void **state) { run_agg(4, "agg_n4"); }
static void test_agg_n8(void **state) { run_agg(8, "agg_n8"); }

static void test_l2_switching(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *s = calloc(1, sizeof(*s));
	struct dp_ctr c;
	uint8_t f[60];

	test_seed("l2_switching");
	assert_int_equal(h_setup(h, 3, DP_MODE_SWITCH), 0);
	sim_init(s, h, 3, 1024, 1024, 4);
	/* unknown unicast before learning: flooded */
	memset(f, 0x11, sizeof(f));
	h_host_mac(2, f);
	h_host_mac(0, f + 6);
	h_inject(h, 0, f, sizeof(f));
	expect_fwd(s, 1, f, sizeof(f));
	expect_fwd(s, 2, f, sizeof(f));
	h_settle(h);
	check_outputs(s);
	check_expect_all_hit(s);
	learn_all(s, 3);
	for (unsigned i = 0; i < 20; i++) {
		unsigned a = (unsigned)(rnd() % 3), b = (a + 1 + (unsigned)(rnd() % 2)) % 3;

		send_plain(s, a, b);
	}
	/* to a MAC behind its own ingress port: filtered */
	h_host_mac(1, f);
	h_host_mac(1, f + 6);
	h_inject(h, 1, f, sizeof(f));
	h_settle(h);
	check_outputs(s);
	check_expect_all_hit(s);
	dp_box_counters(h->box, &c);
	assert_int_equal(c.c[DP_CTR_RX], h->injected);
	assert_int_equal(c.c[DP_CTR_FLOODED], 4);
	assert_int_equal(c.c[DP_CTR_FORWARDED], 20);
	assert_int_equal(c.c[DP_CTR_FILTERED], 1);
	assert_int_equal(c.c[DP_CTR_TX], 2 + 3 * 2 + 20);
	h_teardown(h);
	free(s);
	free(h);
}

/*
 * ECN-CE on one contribution shows on every ECN-capable result of that slot;
 * connection 1 sends Not-ECT frames: its results never get CE (RFC 3168).
 */
static void test_ecn(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *s = calloc(1, sizeof(*s));
	struct impair im = { 0 };
	struct dp_ctr c;

	test_seed("ecn");
	assert_int_equal(h_setup(h, 4, DP_MODE_SWITCH), 0);
	sim_init(s, h, 4, 1024, 2048, 4);
	learn_all(s, 4);
	s->data[1].tos = NR_ECN_NOT_ECT;
	sim_job_add(s, 3);
	s->ce[2][1] = true;    /* rank 2, packet g = 1 */
	s->ce[0][3] = true;
	run_window(s, 0, 4, &im, true);     /* checks every result byte for byte */
	dp_box_counters(h->box, &c);
	assert_int_equal(c.c[DP_CTR_RESULTS], 16);
	/* the two marked slots: CE added on the 2 ECN-capable results that lacked it */
	assert_int_equal(c.c[DP_CTR_ECN_MARKED], 4);
	h_teardown(h);
	free(s);
	free(h);
}

/* Destroying a job with contributions held frees every mbuf. */
static void test_destroy_midstream(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *s = calloc(1, sizeof(*s));
	unsigned baseline;
	struct dp_ctr c;

	test_seed("destroy_midstream");
	assert_int_equal(h_setup(h, 4, DP_MODE_SWITCH), 0);
	baseline = rte_mempool_in_use_count(h_pool);
	sim_init(s, h, 4, 1024, 4096, 8);
	learn_all(s, 4);
	sim_job_add(s, 11);
	/* ranks 0..2 send all of message 0 and 1, rank 3 only message 0 */
	for (unsigned g = 0; g < 8; g++)
		for (unsigned r = 0; r < 4; r++)
			if (r < 3 || g < 4)
				send_data(s, r, g);
	h_settle(h);
	check_outputs(s);
	assert_int_equal(s->results_seen, 16);
	assert_true(rte_mempool_in_use_count(h_pool) >= baseline + 12);  /* 12 held */
	assert_int_equal(dp_job_del(h->box, 11), 0);
	assert_int_equal(dp_job_del(h->box, 11), -ENOENT);
	h_settle(h);
	check_outputs(s);
	dp_box_counters(h->box, &c);
	assert_int_equal(c.c[DP_CTR_FREED_HELD], 12);
	assert_int_equal(rte_mempool_in_use_count(h_pool), baseline);
	h_teardown(h);
	free(s);
	free(h);
}

/* The box's jobs: errors name the problem, stats/info are JSON. */
static void test_channel(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *s = calloc(1, sizeof(*s));
	struct nr_job_spec *sp;
	struct nr_job_stats st;
	uint32_t credits;
	char err[256] = "";
	json_t *j;

	test_seed("channel");
	assert_int_equal(h_setup(h, 2, DP_MODE_SWITCH), 0);
	sim_init(s, h, 2, 1024, 1024, 4);
	sim_job_add(s, 1);
	sp = sim_spec(s);
	assert_int_equal(dp_job_add(h->box, 1, sp, &credits, err, sizeof(err)), -EEXIST);
	assert_true(strstr(err, "job 1") != NULL);
	err[0] = '\0';
	assert_int_equal(dp_job_add(h->box, 2, sp, &credits, err, sizeof(err)), -EEXIST);
	assert_true(err[0] != '\0');
	printf("duplicate connections: %s\n", err);
	free(sp);
	assert_int_equal(dp_job_stats(h->box, 99, &st), -ENOENT);
	assert_int_equal(dp_job_del(h->box, 99), -ENOENT);
	j = dp_stats_json(h->box);
	assert_non_null(j);
	assert_non_null(json_object_get(json_object_get(j, "totals"), "rx"));
	assert_non_null(json_object_get(json_object_get(j, "engine"), "aggregated"));
	assert_int_equal(json_array_size(json_object_get(j, "ports")), 2);
	json_decref(j);
	j = dp_info_json(h->box);
	assert_string_equal(json_string_value(json_object_get(j, "backend")), "sw");
	json_decref(j);
	assert_int_equal(dp_job_del(h->box, 1), 0);
	h_teardown(h);
	free(s);
	free(h);
}

/* One-armed: frames for the box's MAC are re-addressed to the receivers. */
static void test_one_armed(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *s = calloc(1, sizeof(*s));
	struct rte_ether_addr box_mac;
	uint8_t f[8192], want[8192];
	int len;

	test_seed("one_armed");
	assert_int_equal(h_setup(h, 1, DP_MODE_ONE_ARMED), 0);
	rte_eth_macaddr_get(h->port_id[0], &box_mac);
	sim_init(s, h, 2, 1024, 1024, 4);
	for (unsigned r = 0; r < 2; r++)
		memcpy(s->data[r].dst_mac, box_mac.addr_bytes, 6);   /* hosts route via the box */
	sim_job_add(s, 5);
	for (unsigned r = 0; r < 2; r++) {
		len = build_data(s, r, 0, NULL, false, f, sizeof(f));
		h_inject(h, 0, f, (unsigned)len);
	}
	/* for the box's MAC, to an IP no job knows: dropped (no_route) */
	{
		struct nr_flow fl = s->data[0];
		struct nr_build_args ar = { .opcode = NR_OP_RC_SEND_ONLY, .psn = 1 };
		uint8_t pay[64] = { 0 };

		fl.daddr = htonl(0x0A4E0063);
		len = nr_build_frame(f, sizeof(f), &fl, &ar, pay, sizeof(pay));
		h_inject(h, 0, f, (unsigned)len);
	}
	/* not for the box: back unchanged */
	send_plain(s, 0, 1);
	s->expect[0].port = 0;
	h_settle(h);
	for (unsigned i = 0; i < h->n_out; i++) {
		struct h_out *o = &h->out[i];
		struct nr_pkt p;
		unsigned r;

		assert_int_equal(o->port, 0);
		nr_parse(o->data, o->len, &p);
		if (p.kind != NR_PKT_ROCE) {
			assert_int_equal(o->len, s->expect[0].len);
			assert_memory_equal(o->data, s->expect[0].data, o->len);
			continue;
		}
		r = p.qpn == conn_dst_qpn(0, 2) ? 0 : 1;
		expected_result(s, r, 0, want, &len);
		h_host_mac((r + 1) % 2, want);                  /* dst: the receiver */
		memcpy(want + 6, box_mac.addr_bytes, 6);        /* src: the box */
		assert_true(same_result(o, &p, want, len));
		assert_true(nr_icrc_check(o->data, &p));
	}
	{
		uint64_t ec[NR_ECTR_MAX];

		/* two results and the frame sent back; at most a result again
		 * for each ACK the box solicited (nobody ACKs here: a slow
		 * settle may see one, and one may leave after it) */
		assert_int_equal(dp_box_engine_counters(h->box, ec), 0);
		assert_true(h->n_out >= 3 && h->n_out <= 3 + ec[NR_ECTR_ACK_SOLICIT]);
	}
	h_clear_out(h);
	{
		struct dp_ctr c;

		dp_box_counters(h->box, &c);
		assert_int_equal(c.c[DP_CTR_NO_ROUTE], 1);
		assert_int_equal(c.c[DP_CTR_RX], h->injected);
	}
	free(s->expect[0].data);
	h_teardown(h);
	free(s);
	free(h);
}

/* Chained mbufs: linearized, then aggregated or switched like any frame. */
static void test_multiseg(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *s = calloc(1, sizeof(*s));
	uint8_t f[8192], p[300];
	struct dp_ctr c;
	int len;

	test_seed("multiseg");
	assert_int_equal(h_setup(h, 2, DP_MODE_SWITCH), 0);
	sim_init(s, h, 2, 1024, 1024, 4);
	learn_all(s, 2);
	sim_job_add(s, 9);
	len = build_data(s, 0, 0, NULL, false, f, sizeof(f));
	h_inject_chain(h, 0, f, (unsigned)len, 40);        /* split inside the UDP header */
	s->sent[0][0]++;
	send_data(s, 1, 0);
	for (unsigned i = 0; i < sizeof(p); i++)
		p[i] = (uint8_t)rnd();
	h_host_mac(1, p);
	h_host_mac(0, p + 6);
	p[12] = 0x88;
	p[13] = 0xB5;
	h_inject_chain(h, 0, p, sizeof(p), 100);
	expect_fwd(s, 1, p, sizeof(p));
	h_settle(h);
	check_outputs(s);
	check_expect_all_hit(s);
	assert_int_equal(s->results_seen, 2);
	dp_box_counters(h->box, &c);
	assert_int_equal(c.c[DP_CTR_MULTISEG], 0);
	assert_int_equal(c.c[DP_CTR_HELD], 2);
	h_teardown(h);
	free(s);
	free(h);
}

/*
 * Duplicates whose payload differs (valid headers and ICRC, random bytes,
 * Ethernet trailer, chains): never forwarded raw, only answered with the
 * stored result or dropped.
 */
static void test_dup_garbage_payload(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *s = calloc(1, sizeof(*s));
	struct impair im = { 0 };
	uint8_t f[9216];
	struct dp_ctr c;
	unsigned lens[] = { 80, 500, 1100, 1500, 3000, 4400, 6000, 9000 };

	test_seed("dup_garbage_payload");
	assert_int_equal(h_setup(h, 2, DP_MODE_SWITCH), 0);
	sim_init(s, h, 2, 1024, 1024, 4);
	learn_all(s, 2);
	sim_job_add(s, 4);
	run_window(s, 0, 2, &im, false);
	for (unsigned i = 0; i < RTE_DIM(lens); i++) {
		int len = build_data(s, 0, 0, NULL, false, f, sizeof(f));
		struct nr_pkt p;

		for (unsigned k = 70; k < lens[i]; k++)
			f[k] = (uint8_t)rnd();
		if (nr_parse(f, lens[i], &p) == NR_PKT_ROCE)
			nr_icrc_update(f, &p);
		if (lens[i] > 4000)
			h_inject_chain(h, 0, f, lens[i], 4000);
		else
			h_inject(h, 0, f, lens[i]);
		(void)len;
	}
	h_settle(h);
	for (unsigned i = 0; i < h->n_out; i++) {
		struct nr_pkt p;

		nr_parse(h->out[i].data, h->out[i].len, &p);
		printf("  out %u bytes port %u kind %u pay_len %u\n", h->out[i].len, h->out[i].port, p.kind, p.pay_len);
	}
	check_outputs(s);
	dp_box_counters(h->box, &c);
	printf("  resent %lu engine_drop %lu malformed %lu bad_icrc %lu multiseg %lu fwd %lu\n",
	       c.c[DP_CTR_RESENT], c.c[DP_CTR_ENGINE_DROP], c.c[DP_CTR_MALFORMED],
	       c.c[DP_CTR_BAD_ICRC], c.c[DP_CTR_MULTISEG], c.c[DP_CTR_FORWARDED]);
	h_teardown(h);
	free(s);
	free(h);
}

/* One request on the EAL's telemetry socket (what dpdk-telemetry.py does). */
static json_t *telemetry(const char *req)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[16384];
	json_t *j = NULL;
	ssize_t n;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dpdk_telemetry.v2", rte_eal_get_runtime_dir());
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		goto out;
	if (recv(fd, buf, sizeof(buf), 0) <= 0)   /* the greeting */
		goto out;
	if (send(fd, req, strlen(req), 0) < 0)
		goto out;
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		buf[n] = '\0';
		j = json_loads(buf, 0, NULL);
	}
out:
	if (fd >= 0)
		close(fd);
	return j;
}

/* dpdk-telemetry.py reads a running box: counters, jobs, one job. */
static void test_telemetry(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *s = calloc(1, sizeof(*s));
	json_t *j, *v;
	char req[64];

	test_seed("telemetry");
	assert_int_equal(h_setup(h, 3, DP_MODE_SWITCH), 0);
	assert_int_equal(dp_telemetry_register(h->box), 0);
	sim_init(s, h, 3, 1024, 1024, 4);
	learn_all(s, 3);
	sim_job_add(s, 42);
	send_data(s, 0, 0);
	h_settle(h);
	check_outputs(s);
	j = telemetry("/netreduce/stats");
	assert_non_null(j);
	v = json_object_get(json_object_get(j, "/netreduce/stats"), "rx");
	assert_non_null(v);
	assert_int_equal(json_integer_value(v), h->injected);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "/netreduce/stats"), "held")), 1);
	json_decref(j);
	j = telemetry("/netreduce/jobs");
	assert_non_null(j);
	assert_int_equal(json_array_size(json_object_get(j, "/netreduce/jobs")), 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(j, "/netreduce/jobs"), 0)), 42);
	json_decref(j);
	snprintf(req, sizeof(req), "/netreduce/job,%u", 42);
	j = telemetry(req);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(json_object_get(j, "/netreduce/job"), "state")), "active");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "/netreduce/job"), "aggregated")), 1);
	json_decref(j);
	j = telemetry("/netreduce/ports");
	assert_non_null(j);
	assert_int_equal(json_object_size(json_object_get(j, "/netreduce/ports")), 3);
	json_decref(j);
	h_teardown(h);
	j = telemetry("/netreduce/stats");          /* box gone: an error, not a crash */
	assert_non_null(j);
	json_decref(j);
	free(s);
	free(h);
}

/* A failed assertion leaves the test early: stop its box here. */
static int test_teardown(void **state)
{
	h_teardown(h_current);
	return 0;
}

/* Two sims over the same 4 hosts, QPs of their own (b's from 0x1000), each the other's peer. */
static void two_sims(struct harness *h, struct sim *a, struct sim *b)
{
	sim_init(a, h, 4, 1024, 2048, 4);
	sim_init(b, h, 4, 1024, 2048, 4);
	sim_set_qpn_base(b, 0x1000);
	a->peer = b;
	b->peer = a;
	learn_all(a, 4);
}

/* One job of two channels: sa's four connections, then sb's (malloc'd). */
static struct nr_job_spec *two_channel_spec(const struct nr_job_spec *sa, const struct nr_job_spec *sb)
{
	struct nr_job_spec *sp = calloc(1, nr_job_spec_size(8));

	assert_non_null(sp);
	memcpy(sp, sa, nr_job_spec_size(4));
	memcpy(&sp->conns[4], sb->conns, 4 * sizeof(sp->conns[0]));
	sp->n_channels = 2;
	return sp;
}

/*
 * Two workers (lcores 1 and 2), four ports (0, 2 polled by worker 0; 1, 3 by
 * worker 1), two jobs over the same hosts: each job lives on one worker, so
 * half of its frames arrive on the other worker and are handed over.
 */
static void test_two_workers(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct impair im = { .loss = 0.05, .dup = 0.05, .noise = 0.05 };
	unsigned baseline;
	struct dp_ctr c;
	uint32_t ids[4];
	unsigned workers[4], nj;

	test_seed("two_workers");
	assert_int_equal(h_setup_workers(h, 4, DP_MODE_SWITCH, 2), 0);
	baseline = rte_mempool_in_use_count(h_pool);
	two_sims(h, a, b);
	sim_job_add(a, 21);
	sim_job_add(b, 22);
	nj = dp_box_jobs(h->box, ids, workers, 4);
	assert_int_equal(nj, 2);
	assert_int_not_equal(workers[0], workers[1]);   /* spread over the workers */
	for (unsigned m = 0; m < 8; m += a->w) {
		run_window(a, m * 2, (m + a->w) * 2, &im, true);
		run_window(b, m * 2, (m + b->w) * 2, &im, true);
	}
	dp_box_counters(h->box, &c);
	printf("  two workers: rx %lu handoff_out %lu handoff_in %lu results %lu resent %lu\n",
	       c.c[DP_CTR_RX], c.c[DP_CTR_HANDOFF_OUT], c.c[DP_CTR_HANDOFF_IN],
	       c.c[DP_CTR_RESULTS], c.c[DP_CTR_RESENT]);
	assert_true(c.c[DP_CTR_HANDOFF_OUT] > 0);
	assert_int_equal(c.c[DP_CTR_HANDOFF_IN], c.c[DP_CTR_HANDOFF_OUT]);
	assert_int_equal(c.c[DP_CTR_HANDOFF_FULL], 0);
	assert_int_equal(c.c[DP_CTR_RESULTS], 2 * 4 * 16);
	assert_int_equal(c.c[DP_CTR_HELD], 2 * 4 * 16);
	assert_int_equal(c.c[DP_CTR_RX] + c.c[DP_CTR_HANDOFF_IN],
			 c.c[DP_CTR_FORWARDED] + c.c[DP_CTR_FLOODED] + c.c[DP_CTR_FILTERED] +
			 c.c[DP_CTR_HANDOFF_OUT] + c.c[DP_CTR_HELD] + c.c[DP_CTR_RESENT] +
			 c.c[DP_CTR_DROPPED]);
	assert_int_equal(dp_job_del(h->box, 21), 0);
	assert_int_equal(dp_job_del(h->box, 22), 0);
	h_settle(h);
	check_outputs(a);
	assert_int_equal(rte_mempool_in_use_count(h_pool), baseline);
	h_teardown(h);
	free(a);
	free(b);
	free(h);
}

/*
 * One job of two channels on two workers: the two sims are its channels
 * (their own QPs, the same hosts); each worker runs one, so every frame that
 * arrives on the other worker is handed over, and the results stay exact.
 * Status sums the channels and lists each; destroy removes both.
 */
static void test_job_channels(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct impair im = { .loss = 0.05, .dup = 0.05, .noise = 0.05 };
	struct nr_job_spec *sa, *sb, *sp;
	struct nr_job_stats *st = calloc(1, sizeof(*st));
	unsigned baseline;
	struct dp_ctr c;
	uint32_t credits;
	char err[256];

	test_seed("job_channels");
	assert_int_equal(h_setup_workers(h, 4, DP_MODE_SWITCH, 2), 0);
	baseline = rte_mempool_in_use_count(h_pool);
	two_sims(h, a, b);
	sa = sim_spec(a);
	sb = sim_spec(b);
	sp = two_channel_spec(sa, sb);
	assert_int_equal(dp_job_add(h->box, 23, sp, &credits, err, sizeof(err)), 0);
	a->job_id = b->job_id = 23;
	a->w = b->w = credits;
	assert_int_equal(credits, 2);
	assert_int_equal(dp_job_stats(h->box, 23, st), 0);
	assert_int_equal(st->n_channels, 2);
	assert_int_not_equal(st->ch[0].worker, st->ch[1].worker);   /* one channel a worker */
	for (unsigned m = 0; m < 8; m += a->w) {
		run_window(a, m * 2, (m + a->w) * 2, &im, true);
		run_window(b, m * 2, (m + b->w) * 2, &im, true);
	}
	dp_box_counters(h->box, &c);
	printf("  job of 2 channels: rx %lu handoff_out %lu handoff_in %lu results %lu resent %lu\n",
	       c.c[DP_CTR_RX], c.c[DP_CTR_HANDOFF_OUT], c.c[DP_CTR_HANDOFF_IN],
	       c.c[DP_CTR_RESULTS], c.c[DP_CTR_RESENT]);
	assert_true(c.c[DP_CTR_HANDOFF_OUT] > 0);
	assert_int_equal(c.c[DP_CTR_HANDOFF_IN], c.c[DP_CTR_HANDOFF_OUT]);
	assert_int_equal(c.c[DP_CTR_RESULTS], 2 * 4 * 16);
	assert_int_equal(c.c[DP_CTR_RX] + c.c[DP_CTR_HANDOFF_IN],
			 c.c[DP_CTR_FORWARDED] + c.c[DP_CTR_FLOODED] + c.c[DP_CTR_FILTERED] +
			 c.c[DP_CTR_HANDOFF_OUT] + c.c[DP_CTR_HELD] + c.c[DP_CTR_RESENT] +
			 c.c[DP_CTR_DROPPED]);
	assert_int_equal(dp_job_stats(h->box, 23, st), 0);
	assert_int_equal(st->state, NR_JOB_ACTIVE);
	assert_int_equal(st->completed, 2 * 16);
	assert_int_equal(st->ch[0].completed, 16);
	assert_int_equal(st->ch[1].completed, 16);
	assert_int_equal(st->ctr[NR_ECTR_EMITTED], 2 * 4 * 16);
	/* a QP of channel 1 cannot join another job while this one lives */
	assert_int_not_equal(dp_job_add(h->box, 24, sb, &credits, err, sizeof(err)), 0);
	assert_int_equal(dp_job_del(h->box, 23), 0);
	assert_int_equal(dp_job_stats(h->box, 23, st), -ENOENT);
	assert_int_equal(dp_job_del(h->box, 23), -ENOENT);
	/* both channels gone, owner entries too: the QPs register again */
	assert_int_equal(dp_job_add(h->box, 24, sb, &credits, err, sizeof(err)), 0);
	assert_int_equal(dp_job_del(h->box, 24), 0);
	h_settle(h);
	check_outputs(a);
	check_outputs(b);
	assert_int_equal(rte_mempool_in_use_count(h_pool), baseline);
	h_teardown(h);
	free(sa);
	free(sb);
	free(sp);
	free(st);
	free(a);
	free(b);
	free(h);
}

/*
 * DLCP's class order in the box's own loop (docs/short-slots.md, "Priority"):
 * a job of two channels with prio_classes 2, channel a's contributions marked
 * class 0 (DSCP 10), channel b's class 1 (DSCP 18).  Ranks 0-2 contribute
 * slot g of both channels; then rank 3's two contributions arrive in one rx
 * burst, class 0's first, and complete both slots in it.  On every receiver's
 * port the class-1 result leaves before the class-0 one.  A loop that hands
 * the engine one frame at a time emits them in arrival order, class 0 first.
 */
static void test_prio_order(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct nr_job_spec *sa, *sb, *sp;
	static uint8_t fa[8192], fb[8192];
	uint8_t *frames[2] = { fa, fb };
	unsigned lens[2], baseline, rounds = 4, first[H_MAX_HOSTS] = { 0 }, results;
	bool seen_a[H_MAX_HOSTS], seen_b[H_MAX_HOSTS];
	uint32_t credits;
	char err[256];

	test_seed("prio_order");
	assert_int_equal(h_setup(h, 4, DP_MODE_SWITCH), 0);
	baseline = rte_mempool_in_use_count(h_pool);
	two_sims(h, a, b);
	for (unsigned r = 0; r < 4; r++) {
		a->data[r].tos = (uint8_t)(10 << 2 | NR_ECN_ECT0); /* class 0 */
		b->data[r].tos = (uint8_t)(18 << 2 | NR_ECN_ECT0); /* class 1 */
	}
	sa = sim_spec(a);
	sb = sim_spec(b);
	sp = two_channel_spec(sa, sb);
	sp->prio_classes = 2;
	sp->short_dscp = 10;
	assert_int_equal(dp_job_add(h->box, 31, sp, &credits, err, sizeof(err)), 0);
	a->job_id = b->job_id = 31;
	a->w = b->w = credits;
	for (unsigned g = 0; g < rounds; g++) {
		unsigned from = h->n_out;

		for (unsigned r = 0; r < 3; r++) {
			send_data(a, r, g);
			send_data(b, r, g);
		}
		h_settle(h);
		lens[0] = (unsigned)build_data(a, 3, g, NULL, false, fa, sizeof(fa));
		lens[1] = (unsigned)build_data(b, 3, g, NULL, false, fb, sizeof(fb));
		a->sent[3][g]++;
		b->sent[3][g]++;
		h_inject_burst(h, 3, frames, lens, 2);
		h_settle(h);
		/* on each receiver's port: b's result of g, then a's (the status
		 * monitor's probes of receivers that never ACK may come too) */
		for (unsigned q = 0; q < 4; q++)
			first[q] = seen_a[q] = seen_b[q] = 0;
		results = 0;
		for (unsigned i = from; i < h->n_out; i++) {
			const struct h_out *o = &h->out[i];
			struct nr_pkt p;
			unsigned r = (o->port + 3) % 4; /* the connection it receives */
			bool is_a, is_b;

			if (nr_parse(o->data, o->len, &p) != NR_PKT_ROCE ||
			    !(p.mask & NR_OPF_PAYLOAD))
				continue;
			/* g's own results: a resend the monitor made to solicit an
			 * ACK (no receiver ACKs here) repeats an earlier one */
			is_a = p.qpn == a->data[r].dqpn && ((p.psn - a->ipsn[r]) & NR_PSN_MASK) == g;
			is_b = p.qpn == b->data[r].dqpn && ((p.psn - b->ipsn[r]) & NR_PSN_MASK) == g;
			if (!first[o->port] && (is_a || is_b))
				first[o->port] = is_b ? 'b' : 'a';
			seen_a[o->port] |= is_a;
			seen_b[o->port] |= is_b;
		}
		for (unsigned q = 0; q < 4; q++)
			results += seen_a[q] + seen_b[q];
		assert_int_equal(results, 2 * 4); /* a result a receiver a channel */
		for (unsigned q = 0; q < 4; q++) {
			if (first[q] != 'b')
				fprintf(stderr, "g %u port %u: the class-0 result left first\n", g,
					q);
			assert_int_equal(first[q], 'b');
		}
	}
	h_settle(h);
	check_outputs(a);
	check_outputs(b);
	assert_int_equal(dp_job_del(h->box, 31), 0);
	h_settle(h);
	assert_int_equal(rte_mempool_in_use_count(h_pool), baseline);
	h_teardown(h);
	free(sa);
	free(sb);
	free(sp);
	free(a);
	free(b);
	free(h);
}

/*
 * One channel of a job stalls (a rank's contribution, then nothing): the job
 * is failed as a whole, which is what the control API's failed-job reaper
 * goes by, the stalled channel says so and the other does not; destroying
 * the job removes both channels and frees the held contribution.
 */
static void test_job_channel_fails(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct nr_job_spec *sa, *sb, *sp;
	struct nr_job_stats *st = calloc(1, sizeof(*st));
	unsigned baseline;
	uint32_t credits;
	char err[256];

	test_seed("job_channel_fails");
	assert_int_equal(h_setup_workers(h, 4, DP_MODE_SWITCH, 2), 0);
	baseline = rte_mempool_in_use_count(h_pool);
	two_sims(h, a, b);
	sa = sim_spec(a);
	sb = sim_spec(b);
	sp = two_channel_spec(sa, sb);
	sp->timeout_ms = 200;
	assert_int_equal(dp_job_add(h->box, 25, sp, &credits, err, sizeof(err)), 0);
	a->job_id = b->job_id = 25;
	send_data(b, 0, 0);          /* channel 1: one contribution of four */
	h_settle(h);
	for (unsigned t = 0; t < 250; t++) {   /* the 200 ms timeout, up to 5 s on a busy machine */
		assert_int_equal(dp_job_stats(h->box, 25, st), 0);
		if (st->state == NR_JOB_FAILED)
			break;
		usleep(20000);
	}
	printf("  job of 2 channels, channel 1 stalled: state %u (channels %u, %u): %s\n",
	       st->state, st->ch[0].state, st->ch[1].state, st->reason);
	assert_int_equal(st->state, NR_JOB_FAILED);
	assert_int_equal(st->ch[0].state, NR_JOB_ACTIVE);
	assert_int_equal(st->ch[1].state, NR_JOB_FAILED);
	assert_true(st->reason[0] != '\0');
	assert_int_equal(dp_job_del(h->box, 25), 0);
	assert_int_equal(dp_job_stats(h->box, 25, st), -ENOENT);
	/* both channels gone: their QPs register again */
	assert_int_equal(dp_job_add(h->box, 26, sa, &credits, err, sizeof(err)), 0);
	assert_int_equal(dp_job_add(h->box, 27, sb, &credits, err, sizeof(err)), 0);
	assert_int_equal(dp_job_del(h->box, 26), 0);
	assert_int_equal(dp_job_del(h->box, 27), 0);
	h_settle(h);
	assert_int_equal(rte_mempool_in_use_count(h_pool), baseline);
	h_teardown(h);
	free(sa);
	free(sb);
	free(sp);
	free(st);
	free(a);
	free(b);
	free(h);
}

/*
 * A job add the worker does not answer in time (the wait lowered to 0 ms) is
 * still run by the worker when it gets to it: the box queues a delete behind
 * it, so no engine job is left that no record knows, and the same id can be
 * added again at once.
 */
static void test_add_timeout_no_ghost(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *s = calloc(1, sizeof(*s));
	struct nr_job_stats *st = calloc(1, sizeof(*st));
	struct nr_job_spec *spec;
	uint32_t credits;
	char err[256];
	int rc = 0, timeouts = 0;

	(void)state;
	assert_int_equal(h_setup(h, 2, DP_MODE_SWITCH), 0);
	sim_init(s, h, 2, 1024, 1024, 4);
	spec = sim_spec(s);
	for (int k = 0; k < 20 && !timeouts; k++) {
		h->box->cmd_timeout_ms = 0;
		rc = dp_job_add(h->box, 7, spec, &credits, err, sizeof(err));
		h->box->cmd_timeout_ms = DP_CMD_TIMEOUT_MS;
		if (rc == -ETIMEDOUT) {
			timeouts++;
			assert_non_null(strstr(err, "did not answer"));
		} else {
			assert_int_equal(rc, 0);      /* the worker was quicker: undo */
			assert_int_equal(dp_job_del(h->box, 7), 0);
		}
	}
	assert_int_equal(timeouts, 1);
	assert_int_equal(dp_job_stats(h->box, 7, st), -ENOENT);   /* no record */
	usleep(100000);       /* the worker runs the add, then the delete */
	/* the engine's job went with the queued delete: the id is free again */
	rc = dp_job_add(h->box, 7, spec, &credits, err, sizeof(err));
	if (rc)
		fail_msg("the same id again: %s", err);
	assert_int_equal(dp_job_stats(h->box, 7, st), 0);
	assert_int_equal(dp_job_del(h->box, 7), 0);
	h_teardown(h);
	free(spec);
	free(st);
	free(s);
	free(h);
}

/* The TCP listener's token from the environment (kept out of argv and ps);
 * without any of the three, a clear error that names them. */
static void test_token_sources(void **state)
{
	char *argv[] = { "x", "--ctl-listen", "127.0.0.1:7100", NULL };
	struct dp_cfg cfg;
	char err[256];

	(void)state;
	setenv("NETREDUCE_TOKEN", "from-the-environment", 1);
	dp_cfg_defaults(&cfg);
	optind = 1;
	assert_int_equal(dp_opts_parse(3, argv, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.token, "from-the-environment");
	unsetenv("NETREDUCE_TOKEN");
	dp_cfg_defaults(&cfg);
	optind = 1;
	assert_int_equal(dp_opts_parse(3, argv, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NETREDUCE_TOKEN"));
	assert_non_null(strstr(err, "--token-file"));
	/* a token too short to resist guessing is refused at start, by its source */
	setenv("NETREDUCE_TOKEN", "fifteen-chars-x", 1);
	dp_cfg_defaults(&cfg);
	optind = 1;
	assert_int_equal(dp_opts_parse(3, argv, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "the token (--token or NETREDUCE_TOKEN) has 15 characters: "
				    "at least 16"));
	unsetenv("NETREDUCE_TOKEN");
}

/* The L2 table's options: switch mode's, a pin cap of 1 or more. */
static void test_l2_opts(void **state)
{
	char *ok[] = { "x", "--l2-pin-cap", "8", "--l2-static", "/etc/netreduce/l2-static", NULL };
	char *zero[] = { "x", "--l2-pin-cap", "0", NULL };
	char *armed[] = { "x", "--mode", "one-armed", "--l2-static", "/etc/netreduce/l2-static",
			  NULL };
	struct dp_cfg cfg;
	char err[256];

	(void)state;
	dp_cfg_defaults(&cfg);
	optind = 1;
	assert_int_equal(dp_opts_parse(5, ok, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.l2_pin_cap, 8);
	assert_string_equal(cfg.l2_static_file, "/etc/netreduce/l2-static");
	dp_cfg_defaults(&cfg);
	optind = 1;
	assert_int_equal(dp_opts_parse(3, zero, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "l2-pin-cap"));
	dp_cfg_defaults(&cfg);
	optind = 1;
	assert_int_equal(dp_opts_parse(5, armed, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--l2-static: the L2 table is switch mode's"));
	{
		char *st[] = { "x", "--l2-sticky", NULL };

		dp_cfg_defaults(&cfg);
		optind = 1;
		assert_false(cfg.l2_sticky);
		assert_int_equal(dp_opts_parse(2, st, &cfg, err, sizeof(err)), 0);
		assert_true(cfg.l2_sticky);
	}
}

/* --tls-cert and --tls-key go together, and with a TCP listener. */
static void test_tls_opts(void **state)
{
	char *both[] = { "x", "--ctl-listen", "127.0.0.1:7100", "--token", "sixteen-chars-ok",
			 "--tls-cert", "c.pem", "--tls-key", "k.pem", NULL };
	char *cert_only[] = { "x", "--ctl-listen", "127.0.0.1:7100", "--token", "sixteen-chars-ok",
			      "--tls-cert", "c.pem", NULL };
	char *no_listen[] = { "x", "--tls-cert", "c.pem", "--tls-key", "k.pem", NULL };
	struct dp_cfg cfg;
	char err[256];

	(void)state;
	dp_cfg_defaults(&cfg);
	assert_int_equal(dp_opts_parse(9, both, &cfg, err, sizeof(err)), 0);
	assert_string_equal(cfg.tls_cert, "c.pem");
	assert_string_equal(cfg.tls_key, "k.pem");
	dp_cfg_defaults(&cfg);
	assert_int_equal(dp_opts_parse(7, cert_only, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--tls-cert and --tls-key go together"));
	dp_cfg_defaults(&cfg);
	assert_int_equal(dp_opts_parse(5, no_listen, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "give --ctl-listen too"));
	{
		char *mt[] = { "x",
			       "--metrics-listen",
			       "192.0.2.10:9470",
			       "--metrics-token-file",
			       "/etc/netreduce/metrics-token",
			       NULL };
		char *mt_alone[] = { "x", "--metrics-token-file", "/etc/netreduce/metrics-token",
				     NULL };

		dp_cfg_defaults(&cfg);
		assert_int_equal(dp_opts_parse(5, mt, &cfg, err, sizeof(err)), 0);
		assert_string_equal(cfg.metrics_token_file, "/etc/netreduce/metrics-token");
		dp_cfg_defaults(&cfg);
		assert_int_equal(dp_opts_parse(3, mt_alone, &cfg, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "give --metrics-listen too"));
	}
}

/* ---- tenants and the admission budget ----------------------------------------- */

/* A request as tenant who; the reply (a JSON object). */
static json_t *ctl_req(struct nr_ctl *c, int who, json_t *req)
{
	char *line = json_dumps(req, JSON_COMPACT), *out;
	json_t *r;

	json_decref(req);
	out = nr_ctl_handle(c, line, strlen(line), who);
	r = out ? json_loads(out, 0, NULL) : NULL;
	free(line);
	free(out);
	assert_non_null(r);
	return r;
}

/* job_create of sim s's job as tenant who: its reply. */
static json_t *ctl_create(struct nr_ctl *c, int who, const struct sim *s)
{
	struct nr_job_spec *sp = sim_spec(s);
	json_t *r = ctl_req(c, who, json_pack("{s:s,s:o}", "op", "job_create", "spec",
					      nr_ctl_spec_to_json(sp)));

	free(sp);
	return r;
}

static void expect_refused(json_t *r, const char *what)
{
	const char *e = json_string_value(json_object_get(r, "error"));

	if (json_is_true(json_object_get(r, "ok")) || !e || !strstr(e, what))
		fail_msg("expected an error with \"%s\", got %s", what, e ? e : "ok");
	printf("  refused: %s\n", e);
	json_decref(r);
}

static json_int_t info_mbufs(struct nr_ctl *c, const char *key)
{
	json_t *r = ctl_req(c, NR_CTL_ADMIN, json_pack("{s:s}", "op", "backend_info"));
	json_t *v = json_object_get(json_object_get(json_object_get(r, "backend"), "mbufs"), key);
	json_int_t n;

	assert_true(json_is_integer(v));
	n = json_integer_value(v);
	json_decref(r);
	return n;
}

/*
 * One tenant's many jobs against another's first, on the real box's
 * admission budget: "beta" reserves half of the budget's mbufs (the tenants
 * file's reserve_mbufs, checked against the box's budget at load).  "alpha"
 * creates up to 8 jobs of an eighth of the budget: it gets what fits beside
 * beta's reservation (4 of 736 frames in a budget of 6,143 less 3,040), then
 * is refused naming it; beta's first job, of its whole reservation, is
 * created and its all-reduce exact.  Without the reservation alpha took all
 * 8 and beta's job was refused by the budget.
 */
static void test_tenant_reserve(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct nr_ctl *c;
	char dir[] = "/tmp/nr-reserve-XXXXXX", path[64], err[256];
	const struct impair im = { 0 };
	json_int_t budget;
	unsigned pool_a, pool_b, ok = 0;
	json_t *r;
	FILE *f;

	(void)state;
	test_seed("tenant_reserve");
	assert_int_equal(h_setup(h, 4, DP_MODE_SWITCH), 0);
	c = nr_ctl_create(dp_backend_create(h->box));
	assert_non_null(c);
	budget = info_mbufs(c, "budget");
	/* a job of 4 ranks x P messages of 4 packets holds 16 P frames */
	pool_a = (unsigned)(budget / 8 / 16) & ~1u; /* pool_msgs even: credits W = pool_msgs / 2 */
	pool_b = (unsigned)(budget / 2 / 16) & ~1u;
	printf("  mbuf budget %lld: alpha's jobs of %u frames, beta reserves %u\n",
	       (long long)budget, 16 * pool_a, 16 * pool_b);
	assert_true(pool_a >= 1);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tenants.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"{\"tenants\": [\n"
		" {\"name\": \"alpha\", \"token\": \"alpha-0123456789abcdef\", \"ips\": [\"10.78.0.0/24\"]},\n"
		" {\"name\": \"beta\", \"token\": \"beta-0123456789abcdef\", \"ips\": [\"10.78.0.0/24\"],\n"
		"  \"reserve_mbufs\": %u}]}\n",
		16 * pool_b);
	fclose(f);
	chmod(path, 0600);
	assert_int_equal(nr_ctl_tenants_load(c, path, err, sizeof(err)), 2);
	unlink(path);
	rmdir(dir);
	for (unsigned k = 0; k < 8; k++) {
		sim_init(a, h, 4, 1024, 4096, pool_a);
		sim_set_qpn_base(a, 0x10000 + 0x1000 * k);
		r = ctl_create(c, 0, a);
		if (!json_is_true(json_object_get(r, "ok"))) {
			assert_null(strstr(json_string_value(json_object_get(r, "error")), "beta"));
			expect_refused(r, "beside what other tenants reserved (the tenants file's "
					  "reserve_mbufs)");
			break;
		}
		ok++;
		json_decref(r);
	}
	printf("  alpha: %u jobs, then refused\n", ok);
	assert_int_equal(ok, (unsigned)((budget - 16 * pool_b) / (16 * pool_a)));
	assert_int_equal(nr_ctl_counter(c, NR_CCTR_RESERVE_REFUSED), 1);

	sim_init(b, h, 4, 1024, 4096, pool_b);
	sim_set_qpn_base(b, 0x20000);
	learn_all(b, 4);
	r = ctl_create(c, 1, b);
	assert_true(json_is_true(json_object_get(r, "ok")));
	b->job_id = (uint32_t)json_integer_value(json_object_get(r, "job"));
	b->w = (unsigned)json_integer_value(json_object_get(r, "credits"));
	b->result_key = (uint32_t)json_integer_value(json_object_get(r, "result_key"));
	json_decref(r);
	for (unsigned m = 0; m < 16; m += b->w) /* 16 messages, in windows of its credits */
		run_window(b, m * b->pkts_per_msg,
			   (m + b->w < 16 ? m + b->w : 16) * b->pkts_per_msg, &im, true);
	check_accounting(b, 16 * b->pkts_per_msg);
	nr_ctl_destroy(c);
	h_settle(h);
	h_teardown(h);
	free(a);
	free(b);
	free(h);
}

/*
 * Two tenants from a tenants file on the real box, through the control API
 * over its sw backend.  "vision" fills its max_jobs and asks for more pool
 * than its max_pool_bytes: refused, counted, named.  A job that could hold
 * more frames than the box's admission budget is refused for every tenant.
 * "speech" meanwhile creates its job and its all-reduce through the box
 * comes out exact; vision cannot touch speech's job even with its key.
 */
static void test_tenant_quota(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *v1 = calloc(1, sizeof(*v1)), *v2 = calloc(1, sizeof(*v2));
	struct sim *v3 = calloc(1, sizeof(*v3)), *sp = calloc(1, sizeof(*sp));
	struct nr_ctl *c;
	char dir[] = "/tmp/nr-tenants-XXXXXX", path[64], key[40];
	const struct impair im = { 0 };
	json_int_t budget, sid;
	json_t *r;
	FILE *f;

	(void)state;
	test_seed("tenant_quota");
	assert_int_equal(h_setup(h, 4, DP_MODE_SWITCH), 0);
	c = nr_ctl_create(dp_backend_create(h->box));
	assert_non_null(c);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tenants.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"tenants\": [\n"
	      " {\"name\": \"vision\", \"token\": \"vision-0123456789abcdef\", \"max_jobs\": 2,\n"
	      "  \"max_pool_bytes\": 1048576, \"ips\": [\"10.78.0.0/24\"]},\n"
	      " {\"name\": \"speech\", \"token\": \"speech-0123456789abcdef\",\n"
	      "  \"ips\": [\"10.78.0.0/24\"]}]}\n", f);
	fclose(f);
	{
		char err[256];

		chmod(path, 0644);     /* tokens open to others: refused */
		assert_true(nr_ctl_tenants_load(c, path, err, sizeof(err)) < 0);
		printf("  %s\n", err);
		assert_non_null(strstr(err, "chmod 600"));
		chmod(path, 0600);
		assert_int_equal(nr_ctl_tenants_load(c, path, err, sizeof(err)), 2);
	}
	unlink(path);
	rmdir(dir);
	assert_int_equal(nr_ctl_authenticate(c, "vision-0123456789abcdef", 23), 0);
	assert_int_equal(nr_ctl_authenticate(c, "speech-0123456789abcdef", 23), 1);
	assert_int_equal(nr_ctl_authenticate(c, "speech-0123456789abcdeF", 23), -1);

	/* vision: two jobs of 4 ranks x 8 packets x 1 KiB (32 KiB of pool each) */
	sim_init(v1, h, 4, 1024, 4096, 2);
	sim_init(v2, h, 4, 1024, 4096, 2);
	sim_set_qpn_base(v2, 0x1000);
	sim_init(v3, h, 4, 1024, 4096, 66);        /* 4 x 264 packets x 1 KiB > 1 MiB */
	sim_set_qpn_base(v3, 0x2000);
	expect_refused(ctl_create(c, 0, v3), "tenant vision: the job needs 1081344 bytes of pool");
	r = ctl_create(c, 0, v1);
	assert_true(json_is_true(json_object_get(r, "ok")));
	json_decref(r);
	r = ctl_create(c, 0, v2);
	assert_true(json_is_true(json_object_get(r, "ok")));
	json_decref(r);
	expect_refused(ctl_create(c, 0, v3), "tenant vision is at its quota: 2 jobs of max_jobs 2");
	assert_int_equal(nr_ctl_counter(c, NR_CCTR_QUOTA_REFUSED), 2);

	/* over the box's budget, for any tenant: ranks x pool packets beyond it */
	budget = info_mbufs(c, "budget");
	printf("  mbuf budget %lld of a pool of %lld\n", (long long)budget,
	       (long long)info_mbufs(c, "pool"));
	assert_true(budget > 0 && budget < (json_int_t)h_pool->size);
	sim_init(v3, h, 4, 1024, 4096, (unsigned)(budget / 16 + 2) & ~1u);
	sim_set_qpn_base(v3, 0x2000);
	expect_refused(ctl_create(c, 1, v3), "mbuf budget");
	assert_int_equal(info_mbufs(c, "jobs_refused"), 1);
	assert_int_equal(info_mbufs(c, "committed"), 2 * 4 * 8);

	/* speech, beside a tenant at its quota: created, and its traffic exact */
	sim_init(sp, h, 4, 1024, 4096, 4);
	sim_set_qpn_base(sp, 0x3000);
	learn_all(sp, 4);
	r = ctl_create(c, 1, sp);
	assert_true(json_is_true(json_object_get(r, "ok")));
	sid = json_integer_value(json_object_get(r, "job"));
	snprintf(key, sizeof(key), "%s", json_string_value(json_object_get(r, "key")));
	sp->job_id = (uint32_t)sid;
	sp->w = (unsigned)json_integer_value(json_object_get(r, "credits"));
	sp->result_key = (uint32_t)json_integer_value(json_object_get(r, "result_key"));
	json_decref(r);
	for (unsigned m = 0; m < 16; m += sp->w)
		run_window(sp, m * sp->pkts_per_msg, (m + sp->w) * sp->pkts_per_msg, &im, true);
	check_accounting(sp, 16 * sp->pkts_per_msg);

	/* vision with speech's key: refused as a wrong key, the job untouched */
	expect_refused(ctl_req(c, 0, json_pack("{s:s,s:I,s:s}", "op", "job_destroy", "job", sid,
					       "key", key)), "wrong or missing key");
	r = ctl_req(c, 1, json_pack("{s:s,s:I,s:s}", "op", "job_status", "job", sid, "key", key));
	assert_true(json_is_true(json_object_get(r, "ok")));
	assert_string_equal(json_string_value(json_object_get(json_object_get(r, "job"), "state")),
			    "active");
	json_decref(r);
	/* the admin sees both tenants and what they hold; a tenant does not */
	r = ctl_req(c, NR_CTL_ADMIN, json_pack("{s:s}", "op", "stats"));
	{
		json_t *t = json_object_get(json_object_get(json_object_get(r, "stats"), "control"),
					    "tenants");

		assert_int_equal(json_array_size(t), 2);
		assert_int_equal(json_integer_value(json_object_get(json_array_get(t, 0), "jobs")), 2);
		assert_int_equal(json_integer_value(json_object_get(json_array_get(t, 0), "pool_bytes")),
				 2 * 4 * 8 * 1024);
	}
	json_decref(r);
	r = ctl_req(c, 1, json_pack("{s:s}", "op", "stats"));
	assert_null(json_object_get(json_object_get(json_object_get(r, "stats"), "control"), "tenants"));
	json_decref(r);
	nr_ctl_destroy(c);     /* destroys the three jobs */
	h_settle(h);
	h_teardown(h);
	free(v1);
	free(v2);
	free(v3);
	free(sp);
	free(h);
}

/* s's spec as job_create of tenant who, its hosts' IPs moved to 10.78.0.(first + r). */
/* s's job on hosts 10.78.0.first..; own_macs: theirs (02:4e:53:..), else s's hosts'. */
static json_t *ctl_create_at(struct nr_ctl *c, int who, const struct sim *s, unsigned first,
			     bool own_macs)
{
	struct nr_job_spec *sp = sim_spec(s);
	json_t *r;

	for (unsigned i = 0; i < sp->n_conns; i++) {
		sp->conns[i].src_ip = htonl(0x0A4E0000u | (first + i));
		sp->conns[i].dst_ip = htonl(0x0A4E0000u | (first + (i + 1) % sp->n_conns));
		if (own_macs) {
			memcpy(sp->conns[i].src_mac, (uint8_t[6]){ 2, 0x4e, 0x53, 0, 0, first + i },
			       6);
			memcpy(sp->conns[i].dst_mac,
			       (uint8_t[6]){ 2, 0x4e, 0x53, 0, 0, first + (i + 1) % sp->n_conns }, 6);
		}
	}
	r = ctl_req(c, who, json_pack("{s:s,s:o}", "op", "job_create", "spec", nr_ctl_spec_to_json(sp)));
	free(sp);
	return r;
}

/*
 * Addresses belong to tenants: vision holds 10.78.0.0/29 (the harness's hosts
 * 10.78.0.1-4) and speech 10.78.0.8/29.  speech registering vision's job's
 * very connections, or vision's hosts with QPNs of its own, is refused by
 * name and counted, and no error names vision's job; so is speech's job on
 * its own IPs but vision's hosts' MACs (the box pinned them for vision);
 * speech's job on its own addresses is created; vision's all-reduce through
 * the box, after and beside it all, is exact.
 */
static void test_tenant_addresses(void **state)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct sim *v = calloc(1, sizeof(*v)), *sq = calloc(1, sizeof(*sq));
	struct nr_ctl *c;
	char dir[] = "/tmp/nr-tenants-XXXXXX", path[64], err[256], job[32];
	const struct impair im = { 0 };
	json_t *r;
	FILE *f;

	(void)state;
	test_seed("tenant_addresses");
	assert_int_equal(h_setup(h, 4, DP_MODE_SWITCH), 0);
	c = nr_ctl_create(dp_backend_create(h->box));
	assert_non_null(c);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/tenants.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"tenants\": [\n"
	      " {\"name\": \"vision\", \"token\": \"vision-0123456789abcdef\", \"ips\": [\"10.78.0.0/29\"]},\n"
	      " {\"name\": \"speech\", \"token\": \"speech-0123456789abcdef\", \"ips\": [\"10.78.0.8/29\"]}]}\n",
	      f);
	fclose(f);
	chmod(path, 0600);
	assert_int_equal(nr_ctl_tenants_load(c, path, err, sizeof(err)), 2);
	unlink(path);
	rmdir(dir);

	sim_init(v, h, 4, 1024, 4096, 4);
	learn_all(v, 4);
	r = ctl_create(c, 0, v);
	if (!json_is_true(json_object_get(r, "ok")))
		fail_msg("vision's job: %s", json_string_value(json_object_get(r, "error")));
	v->job_id = (uint32_t)json_integer_value(json_object_get(r, "job"));
	v->w = (unsigned)json_integer_value(json_object_get(r, "credits"));
	v->result_key = (uint32_t)json_integer_value(json_object_get(r, "result_key"));
	json_decref(r);
	snprintf(job, sizeof(job), "job %u", v->job_id);

	/* speech: vision's very connections, then vision's hosts with QPNs of its own */
	r = ctl_create(c, 1, v);
	assert_null(strstr(json_string_value(json_object_get(r, "error")), job));
	expect_refused(r, "spec.conns[0].src_ip: 10.78.0.1 is not tenant speech's address");
	sim_init(sq, h, 4, 1024, 4096, 4);
	sim_set_qpn_base(sq, 0x4000);
	r = ctl_create(c, 1, sq);
	expect_refused(r, "is not tenant speech's address (its ips: 10.78.0.8/29)");
	assert_int_equal(nr_ctl_counter(c, NR_CCTR_ADDR_REFUSED), 2);
	/* its own IP addresses on vision's hosts' MACs: the box pins those for vision */
	r = ctl_create_at(c, 1, sq, 9, false);
	expect_refused(r, "the sender's MAC 02:4e:52:00:00:01 is pinned by another tenant's job");
	/* its own addresses: created */
	r = ctl_create_at(c, 1, sq, 9, true);
	if (!json_is_true(json_object_get(r, "ok")))
		fail_msg("speech's job: %s", json_string_value(json_object_get(r, "error")));
	json_decref(r);

	/* vision's traffic through the box: exact */
	for (unsigned m = 0; m < 16; m += v->w)
		run_window(v, m * v->pkts_per_msg, (m + v->w) * v->pkts_per_msg, &im, true);
	check_accounting(v, 16 * v->pkts_per_msg);
	nr_ctl_destroy(c);
	h_settle(h);
	h_teardown(h);
	free(v);
	free(sq);
	free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_l2_switching, test_teardown),
		cmocka_unit_test_teardown(test_channel, test_teardown),
		cmocka_unit_test_teardown(test_agg_n2, test_teardown),
		cmocka_unit_test_teardown(test_agg_n4, test_teardown),
		cmocka_unit_test_teardown(test_agg_n8, test_teardown),
		cmocka_unit_test_teardown(test_ecn, test_teardown),
		cmocka_unit_test_teardown(test_destroy_midstream, test_teardown),
		cmocka_unit_test_teardown(test_one_armed, test_teardown),
		cmocka_unit_test_teardown(test_two_workers, test_teardown),
		cmocka_unit_test_teardown(test_job_channels, test_teardown),
		cmocka_unit_test_teardown(test_job_channel_fails, test_teardown),
		cmocka_unit_test_teardown(test_prio_order, test_teardown),
		cmocka_unit_test_teardown(test_telemetry, test_teardown),
		cmocka_unit_test_teardown(test_multiseg, test_teardown),
		cmocka_unit_test_teardown(test_dup_garbage_payload, test_teardown),
		cmocka_unit_test(test_token_sources),
		cmocka_unit_test(test_l2_opts),
		cmocka_unit_test(test_tls_opts),
		cmocka_unit_test_teardown(test_add_timeout_no_ghost, test_teardown),
		cmocka_unit_test_teardown(test_tenant_quota, test_teardown),
		cmocka_unit_test_teardown(test_tenant_reserve, test_teardown),
		cmocka_unit_test_teardown(test_tenant_addresses, test_teardown),
	};

	if (getenv("NR_TEST_ONLY"))     /* one case by name, e.g. NR_TEST_ONLY=test_one_armed */
		cmocka_set_test_filter(getenv("NR_TEST_ONLY"));
	return cmocka_run_group_tests_name("eal", tests, h_group_setup, h_group_teardown);
}
