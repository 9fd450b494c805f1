/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Capture replay through the box: the RDMA WRITE streams of the real RoCEv2
 * captures (NR_VECTORS, ../shared/vectors/roce; read at run time, never
 * copied), each message cloned into N connections that differ in addresses,
 * QPN and payload (every other header byte as the RNIC wrote it: UDP source
 * port, TOS, TTL, IP ID and flags, BTH flags and P_Key, PSNs, RETH, ImmDt),
 * pushed through the real burst handler over ring ports (as the EAL suite),
 * and every result checked byte for byte against the clone with the
 * rank-ordered FP32 sum as payload, ImmDt XOR the job's result key, UDP
 * checksum 0 and an ICRC that proto's code (checked against every capture's
 * ICRC by the golden suites) accepts.  Runs whose payload is not whole FP32
 * words (BTH PadCnt != 0) cannot be aggregated and are counted as skipped.
 * Skips (77) when the captures directory is absent.
 */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pcap/pcap.h>

#include <rte_eal.h>

#include "eal_harness.h"
#include "proto/roce_hdr.h"
#include "proto/roce_opcode.h"
#include "proto/roce_icrc.h"
#include "proto/roce_pkt.h"

#define N        3
#define MAX_RUN  64
#define KEY      0x5a000000u

struct frame {
	uint32_t len;
	uint8_t data[4200];
	struct nr_pkt p;
};

/* One replayable run: consecutive PSNs of one stream, whole messages. */
struct run {
	const char *file;
	uint32_t n;
	struct frame f[MAX_RUN];
};

static const char *vectors;
static unsigned runs_done, runs_skipped, results_checked;

static bool is_write(uint8_t op)
{
	return op >= NR_OP_RC_WRITE_FIRST && op <= NR_OP_RC_WRITE_ONLY_IMM;
}

static bool msg_starts(uint8_t op)
{
	return op == NR_OP_RC_WRITE_FIRST || op == NR_OP_RC_WRITE_ONLY ||
	       op == NR_OP_RC_WRITE_ONLY_IMM;
}

static bool msg_ends(uint8_t op)
{
	return op == NR_OP_RC_WRITE_LAST || op == NR_OP_RC_WRITE_LAST_IMM ||
	       op == NR_OP_RC_WRITE_ONLY || op == NR_OP_RC_WRITE_ONLY_IMM;
}

/* Payload word k of connection r: exact FP32 values, different per r. */
static float value(unsigned r, unsigned pkt, unsigned k)
{
	return (float)(r + 1) * 0.5f + (float)((pkt * 7 + k) % 97) * 0.25f - 8.0f;
}

/* Clone r of frame f: hosts r -> r+1 of the harness, DestQP, payload; ICRC redone. */
static void clone_conn(const struct frame *f, unsigned r, unsigned pkt, struct frame *out)
{
	struct nr_ipv4_hdr *ip;
	uint8_t *bth;

	*out = *f;
	h_host_mac(r, out->data + 6);
	h_host_mac((r + 1) % N, out->data);
	ip = (struct nr_ipv4_hdr *)(out->data + f->p.l3_off);
	memcpy(&ip->saddr, &(uint32_t){ h_host_ip(r) }, 4);
	memcpy(&ip->daddr, &(uint32_t){ h_host_ip((r + 1) % N) }, 4);
	ip->check = nr_ipv4_cksum(ip);
	bth = out->data + f->p.bth_off;
	nr_st_be32(bth + 4, (nr_ld_be32(bth + 4) & 0xFF000000u) | (0x200u + (r + 1) % N));
	for (unsigned k = 0; k < f->p.pay_len / 4; k++) {
		float v = value(r, pkt, k);

		memcpy(out->data + f->p.pay_off + 4 * k, &v, 4);
	}
	assert_int_equal(nr_parse(out->data, out->len, &out->p), NR_PKT_ROCE);
	nr_icrc_update(out->data, &out->p);
	assert_true(nr_icrc_check(out->data, &out->p));
}

/* What receiver r+1 must get for packet pkt: clone r with the sum and the key. */
static void expected(const struct run *u, unsigned r, unsigned pkt, struct frame *want)
{
	const struct frame *f = &u->f[pkt];

	clone_conn(f, r, pkt, want);
	for (unsigned k = 0; k < f->p.pay_len / 4; k++) {
		float s = value(0, pkt, k);

		for (unsigned q = 1; q < N; q++)
			s += value(q, pkt, k);      /* rank order, as the box's ordered mode */
		memcpy(want->data + f->p.pay_off + 4 * k, &s, 4);
	}
	if (f->p.mask & NR_OPF_IMMDT)
		nr_st_be32(want->data + f->p.pay_off - 4, f->p.imm ^ KEY);
	nr_st_be16(want->data + f->p.l4_off + 6, 0);   /* UDP checksum 0 */
	want->len = want->p.end;                       /* a result ends at its ICRC */
	nr_icrc_update(want->data, &want->p);
}

static uint32_t mtu_for(const struct run *u)
{
	uint32_t m = 256, need = 0;

	for (uint32_t k = 0; k < u->n; k++)
		if (u->f[k].p.pay_len > need)
			need = u->f[k].p.pay_len;
	while (m < need)
		m *= 2;
	return m;
}

/* Data frames (results) among the collected outputs. */
static unsigned results_in(const struct harness *h)
{
	unsigned n = 0;

	for (unsigned i = 0; i < h->n_out; i++) {
		struct nr_pkt p;

		n += nr_parse(h->out[i].data, h->out[i].len, &p) == NR_PKT_ROCE &&
		     p.opcode != NR_OP_RC_ACK;
	}
	return n;
}

static void replay(struct run *u)
{
	struct harness *h = calloc(1, sizeof(*h));
	struct nr_job_spec *sp = calloc(1, nr_job_spec_size(N));
	uint32_t credits = 0, mtu = mtu_for(u);
	unsigned baseline, got[N] = { 0 };
	char err[256] = "";

	for (uint32_t k = 0; k < u->n; k++) {
		if (u->f[k].p.pad || u->f[k].p.pay_len == 0 || u->f[k].p.pay_len % 4 || mtu > 4096) {
			printf("  %s: run of %u packets at PSN 0x%06x: PadCnt %u, %u payload bytes: "
			       "not FP32 words, skipped\n", u->file, u->n, u->f[0].p.psn, u->f[k].p.pad,
			       u->f[k].p.pay_len);
			runs_skipped++;
			free(h);
			free(sp);
			return;
		}
	}
	assert_int_equal(h_setup(h, N, DP_MODE_SWITCH), 0);
	baseline = rte_mempool_in_use_count(h_pool);
	for (unsigned a = 0; a < N; a++) {      /* the box learns the hosts' MACs */
		uint8_t f[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

		h_host_mac(a, f + 6);
		f[12] = 0x08;
		f[13] = 0x06;
		h_inject(h, a, f, sizeof(f));
	}
	h_settle(h);
	h_collect(h);
	h_clear_out(h);
	sp->n_conns = N;
	sp->mtu = mtu;
	sp->msg_size = mtu * MAX_RUN;
	sp->pool_msgs = 2;
	sp->timeout_ms = 60000;
	sp->mode = NR_SUM_ORDERED;
	sp->result_key = KEY;
	for (unsigned r = 0; r < N; r++) {
		struct nr_conn_spec *c = &sp->conns[r];

		c->src_ip = h_host_ip(r);
		c->dst_ip = h_host_ip((r + 1) % N);
		c->src_qpn = 0x100 + r;
		c->dst_qpn = 0x200 + (r + 1) % N;
		c->ipsn = u->f[0].p.psn;
	}
	if (dp_job_add(h->box, 5, sp, &credits, err, sizeof(err)))
		fail_msg("%s: job_add: %s", u->file, err);
	for (uint32_t k = 0; k < u->n; k++)
		for (unsigned r = 0; r < N; r++) {
			struct frame c;

			clone_conn(&u->f[k], r, k, &c);
			h_inject(h, r, c.data, c.len);
		}
	/* h_settle goes by quiet time: on a loaded machine collect until every
	 * result is in (or 10 s) */
	for (unsigned t = 0; t < 100 && results_in(h) < u->n * N; t++) {
		h_settle(h);
		h_collect(h);
	}
	assert_int_equal(results_in(h), u->n * N);
	for (unsigned i = 0; i < h->n_out; i++) {
		const struct h_out *o = &h->out[i];
		unsigned r = (o->port + N - 1) % N;    /* results leave on the receiver's port */
		struct frame want;
		struct nr_pkt p;

		assert_int_equal(nr_parse(o->data, o->len, &p), NR_PKT_ROCE);
		assert_true(nr_icrc_check(o->data, &p));
		if (p.opcode == NR_OP_RC_ACK) {
			/* the status monitor's probe (no receiver ACKs here, and a slow
			 * run lasts its probe time): to a sender, acknowledging nothing */
			assert_int_equal(o->port, p.qpn - 0x100);
			assert_false(nr_syn_is_ack(p.aeth_syn));
			assert_int_equal(p.psn, u->f[0].p.psn);    /* a NAK at the first PSN */
			continue;
		}
		assert_true(got[r] < u->n);
		expected(u, r, got[r], &want);
		if (o->len != want.len || memcmp(o->data, want.data, want.len)) {
			fprintf(stderr, "%s: conn %u packet %u (%s): the result differs\n", u->file, r,
				got[r], nr_opcode_name(want.p.opcode));
			fail_msg("result not the clone with the rank-ordered sum");
		}
		got[r]++;
		results_checked++;
	}
	for (unsigned r = 0; r < N; r++)
		assert_int_equal(got[r], u->n);
	h_clear_out(h);
	assert_int_equal(dp_job_del(h->box, 5), 0);
	h_settle(h);
	h_collect(h);
	h_clear_out(h);
	assert_int_equal(rte_mempool_in_use_count(h_pool), baseline);
	h_teardown(h);
	free(h);
	free(sp);
	printf("  %s: run of %u packets (%s .. %s) at PSN 0x%06x, MTU %u: %u results exact\n",
	       u->file, u->n, nr_opcode_name(u->f[0].p.opcode),
	       nr_opcode_name(u->f[u->n - 1].p.opcode), u->f[0].p.psn, mtu, u->n * N);
	runs_done++;
}

/*
 * The runs of one capture: per stream (addresses and DestQP), whole messages
 * of consecutive PSNs, in capture order.
 */
static void capture(const char *name)
{
	char path[4096], errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *hd;
	const u_char *data;
	static struct frame all[4096];
	unsigned n = 0;
	pcap_t *pc;
	bool used[4096] = { false };

	snprintf(path, sizeof(path), "%s/%s", vectors, name);
	pc = pcap_open_offline(path, errbuf);
	if (!pc)
		fail_msg("%s: %s", path, errbuf);
	while (pcap_next_ex(pc, &hd, &data) == 1 && n < 4096) {
		struct frame *f = &all[n];

		if (hd->caplen > sizeof(f->data) || hd->caplen != hd->len)
			continue;
		memcpy(f->data, data, hd->caplen);
		f->len = hd->caplen;
		if (nr_parse(f->data, f->len, &f->p) == NR_PKT_ROCE && is_write(f->p.opcode) &&
		    f->p.ipver == 4 && nr_icrc_check(f->data, &f->p))
			n++;
	}
	pcap_close(pc);
	for (unsigned i = 0; i < n; i++) {
		static struct run u;
		uint32_t next;

		if (used[i] || !msg_starts(all[i].p.opcode))
			continue;
		u.file = name;
		u.n = 0;
		next = all[i].p.psn;
		for (unsigned k = i; k < n && u.n < MAX_RUN; k++) {
			if (used[k] || all[k].p.saddr != all[i].p.saddr ||
			    all[k].p.daddr != all[i].p.daddr || all[k].p.qpn != all[i].p.qpn)
				continue;
			if (all[k].p.psn != next)
				break;
			u.f[u.n++] = all[k];
			used[k] = true;
			next = nr_psn_add(next, 1);
		}
		while (u.n && !msg_ends(u.f[u.n - 1].p.opcode))   /* whole messages only */
			u.n--;
		if (u.n)
			replay(&u);
	}
}

static void test_replay_captures(void **state)
{
	DIR *d = opendir(vectors);
	struct dirent *e;

	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);

		if (l > 5 && strcmp(e->d_name + l - 5, ".pcap") == 0)
			capture(e->d_name);
	}
	closedir(d);
	printf("replayed %u runs (%u results checked byte for byte), %u skipped\n", runs_done,
	       results_checked, runs_skipped);
	assert_true(runs_done > 0);         /* the captures hold RDMA WRITE messages */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_captures),
	};
	DIR *d;

	vectors = getenv("NR_VECTORS");
	if (!vectors || !(d = opendir(vectors))) {
		printf("SKIP: the RoCEv2 captures directory (NR_VECTORS=%s) is absent: put the "
		       "captures at ../shared/vectors/roce or configure -Dvectors_dir\n",
		       vectors ? vectors : "");
		return 77;
	}
	closedir(d);
	return cmocka_run_group_tests_name("replay", tests, h_group_setup, h_group_teardown);
}
