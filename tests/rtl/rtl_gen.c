/* SPDX-License-Identifier: BSD-3-Clause */
/* Generated traces: see rtl_gen.h. */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/roce_build.h"
#include "proto/roce_icrc.h"
#include "proto/roce_pkt.h"
#include "tests/engine/eng_rand.h"
#include "tests/rtl/rtl_gen.h"

#define FCAP 8192

struct item {
	uint8_t job, conn, opcode;
	uint32_t g, imm, len;
	uint64_t pay_seed;
	bool bad_len, bad_tag, bad_pad;
};

struct frame {
	uint8_t port;
	uint32_t len;
	uint8_t b[FCAP];
};

struct gen {
	struct eng_rng rng;
	struct rp *rp;
	const struct gen_cfg *cfg;
	struct nr_job_spec *spec[2];
	uint32_t ppm[2];
	unsigned noise_op;          /* next opcode for the every-opcode noise */
};

static uint32_t rnd(struct gen *G)
{
	return eng_rand(&G->rng);
}

static bool chance(struct gen *G, unsigned pct)
{
	return rnd(G) % 1000 < pct * 10;
}

static uint32_t host_ip(unsigned job, unsigned rank)
{
	return htonl(0x0a000000u | (job + 1) << 16 | (rank + 1));
}

static struct nr_job_spec *make_spec(const struct gen_job *j, unsigned job)
{
	struct nr_job_spec *s = calloc(1, sizeof(*s) + j->n * sizeof(s->conns[0]));

	s->n_conns = j->n;
	s->mtu = j->mtu;
	s->msg_size = j->msg;
	s->pool_msgs = j->pool_msgs;
	s->timeout_ms = 5000;
	s->mode = j->mode;
	s->result_key = j->key;
	for (unsigned i = 0; i < j->n; i++) {
		struct nr_conn_spec *c = &s->conns[i];

		c->src_ip = host_ip(job, i);
		c->dst_ip = host_ip(job, (i + 1) % j->n);
		c->src_qpn = 0x1000 * (job + 1) + 0x10 + i;
		c->dst_qpn = 0x1000 * (job + 1) + 0x20 + (i + 1) % j->n;
		c->ipsn = (j->ipsn_base + i * 7) & 0xFFFFFF;
		c->src_mac[0] = c->dst_mac[0] = 2;
		c->src_mac[4] = c->dst_mac[4] = (uint8_t)job;
		c->src_mac[5] = (uint8_t)i;
		c->dst_mac[5] = (uint8_t)((i + 1) % j->n);
	}
	return s;
}

static void flow_of(const struct nr_job_spec *s, unsigned job, unsigned i, bool ack,
		    struct nr_flow *f)
{
	const struct nr_conn_spec *c = &s->conns[i];

	memset(f, 0, sizeof(*f));
	f->src_mac[0] = f->dst_mac[0] = 2;
	f->src_mac[4] = f->dst_mac[4] = (uint8_t)job;
	f->src_mac[5] = (uint8_t)(ack ? (i + 1) % s->n_conns : i);
	f->dst_mac[5] = (uint8_t)(ack ? i : (i + 1) % s->n_conns);
	f->saddr = ack ? c->dst_ip : c->src_ip;
	f->daddr = ack ? c->src_ip : c->dst_ip;
	f->dqpn = ack ? c->src_qpn : c->dst_qpn;
	f->sport = (uint16_t)(0xc000 + i * 13 + job);
	f->frag_off = NR_IPV4_DF;
	f->ip_id = 0;
	f->tos = NR_ECN_ECT0;      /* as DCQCN senders: ECN-capable, so CE can be set */
}

/* Random float bits: mostly moderate normals, some of every special class. */
static uint32_t fbits(struct eng_rng *r)
{
	uint32_t k = eng_rand(r) % 200, s = (eng_rand(r) & 1) << 31;

	switch (k) {
	case 0: return s | 0x7F800000u;                            /* Inf */
	case 1: return 0x7FC00000u | (eng_rand(r) & 0x3FFFFFu) | s; /* quiet NaN, payload */
	case 2: return 0x7F800001u | (eng_rand(r) & 0x3FFFFFu) | s; /* signalling NaN */
	case 3: return 0xFFC00000u;                                 /* default NaN */
	case 4: case 5: return s;                                   /* +-0 */
	case 6: case 7: return s | (eng_rand(r) & 0x7FFFFFu);       /* subnormal */
	case 8: return s | 0x7F7FFFFFu;                             /* largest finite */
	default: return s | ((110 + eng_rand(r) % 36) << 23) | (eng_rand(r) & 0x7FFFFFu);
	}
}

/* Insert a 4-byte IPv4 option (IHL 6): lengths, checksum, ICRC redone. */
static uint32_t add_ip_option(uint8_t *b, uint32_t len)
{
	struct nr_pkt p;
	uint32_t l3;
	struct nr_ipv4_hdr *ip;

	if (nr_parse(b, len, &p) != NR_PKT_ROCE || p.ipver != 4 || len + 4 > FCAP)
		return len;
	l3 = p.l3_off;
	memmove(b + l3 + 24, b + l3 + 20, len - l3 - 20);
	b[l3 + 20] = 0x01; b[l3 + 21] = 0x01; b[l3 + 22] = 0x01; b[l3 + 23] = 0x00; /* NOPs, EOL */
	ip = (struct nr_ipv4_hdr *)(b + l3);
	b[l3] = 0x46;
	nr_st_be16(&ip->tot_len, (uint16_t)(nr_ld_be16(&ip->tot_len) + 4));
	ip->check = nr_ipv4_cksum(ip);
	len += 4;
	nr_parse(b, len, &p);
	nr_icrc_update(b, &p);
	return len;
}

/* The same RoCE frame over IPv6 (ICRC redone): the box forwards it. */
static uint32_t to_ipv6(uint8_t *b, uint32_t len)
{
	struct nr_pkt p;
	uint8_t t[FCAP];
	uint32_t l3, l4, rest;

	if (nr_parse(b, len, &p) != NR_PKT_ROCE || p.ipver != 4 || len + 20 > FCAP)
		return len;
	l3 = p.l3_off;
	l4 = p.l4_off;
	rest = p.end - l4;
	memcpy(t, b, l3);
	nr_st_be16(t + l3 - 2, NR_ETHERTYPE_IPV6);
	nr_st_be32(t + l3, 0x60000000u | (uint32_t)(b[l3 + 1] & 3) << 20 | 0x12345);
	nr_st_be16(t + l3 + 4, (uint16_t)rest);
	t[l3 + 6] = 17;
	t[l3 + 7] = 64;
	memset(t + l3 + 8, 0, 32);
	t[l3 + 8] = 0xfd; t[l3 + 23] = b[l3 + 15];
	t[l3 + 24] = 0xfd; t[l3 + 39] = b[l3 + 19];
	memcpy(t + l3 + 40, b + l4, rest);
	len = l3 + 40 + rest;
	memcpy(b, t, len);
	if (nr_parse(b, len, &p) == NR_PKT_ROCE)
		nr_icrc_update(b, &p);
	return len;
}

static void gsend(struct gen *G, struct frame *f)
{
	rp_frame(G->rp, f->port, f->b, f->len);
}

static void build_data(struct gen *G, const struct item *it, struct frame *f)
{
	const struct nr_job_spec *s = G->spec[it->job];
	struct nr_flow fl;
	struct nr_build_args a = { 0 };
	uint8_t pay[4096 + 8];
	struct eng_rng pr;
	int n;

	flow_of(s, it->job, it->conn, false, &fl);
	if (chance(G, 6))
		fl.tos = (uint8_t)(rnd(G) % 4);            /* Not-ECT, ECT(1), ECT(0), CE */
	if (G->cfg->jobs[it->job].vlan_some && chance(G, 30)) {
		fl.vlan = true;
		fl.vlan_tci = (uint16_t)(rnd(G) & 0xfff);
	}
	eng_rng_init(&pr, it->pay_seed);
	for (uint32_t b = 0; b < it->len; b += 4) {
		uint32_t w = fbits(&pr);
		memcpy(pay + b, &w, 4);
	}
	a.opcode = it->opcode;
	a.psn = (s->conns[it->conn].ipsn + it->g) & NR_PSN_MASK;
	a.imm = it->bad_tag ? it->imm ^ 0x100 : it->imm;
	a.va = 0x10000000ull + (uint64_t)it->g * s->mtu;
	a.rkey = 0x77;
	a.dma_len = s->msg_size;
	a.ackreq = chance(G, 30);
	n = nr_build_frame(f->b, FCAP, &fl, &a, pay, it->bad_len ? it->len - 4 : it->bad_pad ? it->len - 2 : it->len);
	assert_true(n > 0);
	f->len = (uint32_t)n;
	f->port = it->conn;
	if (chance(G, 4))
		f->len = add_ip_option(f->b, f->len);
	if (chance(G, 5)) {
		uint32_t t = 1 + rnd(G) % 16;              /* Ethernet trailer */
		for (uint32_t k = 0; k < t; k++)
			f->b[f->len + k] = (uint8_t)rnd(G);
		f->len += t;
	}
}

static void build_ack(struct gen *G, unsigned job, unsigned conn, uint32_t g, uint8_t syn,
		      struct frame *f)
{
	const struct nr_job_spec *s = G->spec[job];
	struct nr_flow fl;
	struct nr_build_args a = { .opcode = NR_OP_RC_ACK, .syndrome = syn, .msn = g };
	int n;

	flow_of(s, job, conn, true, &fl);
	a.psn = (s->conns[conn].ipsn + g) & NR_PSN_MASK;
	n = nr_build_frame(f->b, FCAP, &fl, &a, NULL, 0);
	assert_true(n > 0);
	f->len = (uint32_t)n;
	f->port = (uint8_t)((conn + 1) % s->n_conns);
}

/* Frames the box must not aggregate. */
static void noise(struct gen *G)
{
	static const uint8_t ops[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09,
		0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16, 0x17, 0x20,
		0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x64, 0x65, 0x81 };
	struct frame *f = malloc(sizeof(*f));
	unsigned job = rnd(G) % G->cfg->n_jobs, kind = rnd(G) % 12;
	const struct nr_job_spec *s = G->spec[job];
	unsigned conn = rnd(G) % s->n_conns;
	struct nr_flow fl;
	struct nr_build_args a = { 0 };
	uint8_t pay[256];
	uint32_t plen = 4 * (rnd(G) % 16);
	int n;

	for (unsigned k = 0; k < sizeof(pay); k++)
		pay[k] = (uint8_t)rnd(G);
	a.opcode = ops[G->noise_op++ % sizeof(ops)];
	a.psn = rnd(G) & NR_PSN_MASK;
	a.imm = rnd(G);
	a.syndrome = (uint8_t)(rnd(G) & 1 ? 0x1f : 0x60 | (rnd(G) & 3));
	a.becn = a.opcode == NR_OP_CNP;
	flow_of(s, job, conn, kind == 2, &fl);
	if (kind == 0) {                   /* unregistered QP */
		fl.dqpn = 0x900000 | (rnd(G) & 0xffff);
	} else if (kind == 3) {            /* spoofed source */
		fl.saddr = htonl(0x0a630000u | (rnd(G) & 0xff));
	}
	/* kind 1: the registered data QP; kind 2: the ACK side (NAKs, read responses) */
	n = nr_build_frame(f->b, FCAP, &fl, &a, pay, plen);
	if (n < 0)
		n = nr_build_frame(f->b, FCAP, &fl, &a, NULL, 0);
	assert_true(n > 0);
	f->len = (uint32_t)n;
	f->port = (uint8_t)conn;
	switch (kind) {
	case 4:                            /* truncated */
		f->len = 14 + rnd(G) % (f->len - 14);
		break;
	case 5:                            /* runt */
		f->len = rnd(G) % 14 + 1;
		break;
	case 6:                            /* corrupted in flight: ICRC wrong */
		f->b[f->len - 5 - rnd(G) % 8] ^= (uint8_t)(1 + rnd(G) % 255);
		break;
	case 7:                            /* IPv6 RoCE */
		f->len = to_ipv6(f->b, f->len);
		break;
	case 8: {                          /* not RoCE: ARP-like, then IPv4 UDP to another port */
		f->len = 60;
		memset(f->b + 12, 0, 48);
		f->b[12] = 0x08;
		f->b[13] = rnd(G) & 1 ? 0x06 : 0x00;
		if (f->b[13] == 0x00) {
			f->b[14] = 0x45;
			f->b[16] = 0; f->b[17] = 46;
			f->b[23] = 17;
			f->b[36] = 0x12; f->b[37] = 0xb6; /* port 4790 */
		}
		break;
	}
	case 9:                            /* header fields broken, ICRC redone: malformed */
		if (f->len > 60) {
			struct nr_pkt p;
			nr_parse(f->b, f->len, &p);
			if (p.kind == NR_PKT_ROCE) {
				f->b[p.bth_off + 1] |= rnd(G) & 1 ? 0x01 : 0x30; /* TVer / PadCnt */
				nr_icrc_update(f->b, &p);
			}
		}
		break;
	default:
		break;
	}
	gsend(G, f);
	free(f);
}

/* A message's items, for every connection of a job. */
static unsigned msg_items(struct gen *G, unsigned job, uint32_t k, struct item *out)
{
	const struct gen_job *j = &G->cfg->jobs[job];
	uint32_t ppm = G->ppm[job], n = 0;
	uint32_t imm = 0x40000000u | (k * 0x9E37u & 0xffff) | job << 20;

	for (uint32_t p = 0; p < ppm; p++) {
		uint32_t len = p + 1 < ppm ? j->mtu : j->msg - p * j->mtu;
		uint8_t op;
		uint64_t seed = eng_rand64(&G->rng);

		if (ppm == 1)
			op = k & 1 ? NR_OP_RC_WRITE_ONLY_IMM : NR_OP_RC_WRITE_ONLY;
		else if (p == 0)
			op = NR_OP_RC_WRITE_FIRST;
		else if (p + 1 < ppm)
			op = NR_OP_RC_WRITE_MIDDLE;
		else
			op = k & 1 ? NR_OP_RC_WRITE_LAST : NR_OP_RC_WRITE_LAST_IMM;
		for (uint32_t i = 0; i < j->n; i++) {
			struct item *it = &out[n++];

			memset(it, 0, sizeof(*it));
			it->job = (uint8_t)job;
			it->conn = (uint8_t)i;
			it->opcode = op;
			it->g = k * ppm + p;
			it->imm = imm;
			it->len = len;
			it->pay_seed = seed ^ i * 0x51ed27ull;
			if (G->cfg->chaos && k >= j->nmsg / 3) {
				/* after a clean start, contributions that break the job */
				uint32_t r = rnd(G) % 100;

				it->bad_len = r < 1 && len > 4;         /* length mismatch */
				it->bad_pad = r >= 1 && r < 3;          /* 2 bytes short: bad_len */
				if (r >= 3 && r < 6)                    /* opcode mismatch */
					it->opcode = op == NR_OP_RC_WRITE_MIDDLE ? NR_OP_RC_WRITE_LAST :
						     op == NR_OP_RC_WRITE_FIRST ? NR_OP_RC_WRITE_ONLY :
						     op == NR_OP_RC_WRITE_LAST ? NR_OP_RC_WRITE_MIDDLE :
						     op == NR_OP_RC_WRITE_LAST_IMM ? NR_OP_RC_WRITE_LAST :
						     op == NR_OP_RC_WRITE_ONLY ? NR_OP_RC_WRITE_FIRST :
						     NR_OP_RC_WRITE_ONLY;
				it->bad_tag = (op == NR_OP_RC_WRITE_LAST_IMM || op == NR_OP_RC_WRITE_ONLY_IMM) &&
					      r >= 6 && r < 14;
			}
		}
	}
	return n;
}

static void shuffle_near(struct gen *G, struct item *v, unsigned n, unsigned reach)
{
	for (unsigned i = 0; i + 1 < n; i++) {
		unsigned j = i + rnd(G) % (reach < n - i ? reach : n - i);
		struct item t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

void gen_run(const struct gen_cfg *c, uint64_t seed)
{
	struct gen G = { .cfg = c };
	struct item *cur[2], *late[2];
	unsigned ncur[2] = { 0 }, nlate[2] = { 0 };
	struct frame *f = malloc(sizeof(*f));
	uint32_t maxmsg = 0;
	uint64_t frames, outputs, results, cycles;

	eng_rng_init(&G.rng, seed);
	G.rp = rp_create(c->kernel);
	for (unsigned j = 0; j < c->n_jobs; j++) {
		G.spec[j] = make_spec(&c->jobs[j], j);
		G.ppm[j] = (c->jobs[j].msg + c->jobs[j].mtu - 1) / c->jobs[j].mtu;
		rp_job_add(G.rp, 100 + j, G.spec[j]);
		cur[j] = calloc(4096, sizeof(struct item));
		late[j] = calloc(4096, sizeof(struct item));
		if (c->jobs[j].nmsg > maxmsg)
			maxmsg = c->jobs[j].nmsg;
	}
	/* step k: message k of every job goes out (shuffled, some lost or
	 * duplicated), then what was lost or duplicated before, then the ACKs
	 * of message k - 1: two messages in flight, within W = pool_msgs / 2 */
	for (uint32_t k = 0; k <= maxmsg + 2; k++) {
		struct item all[8192];
		unsigned na = 0;

		for (unsigned j = 0; j < c->n_jobs; j++) {
			struct item tmp[4096];
			unsigned nt = k < c->jobs[j].nmsg ? msg_items(&G, j, k, tmp) : 0;

			/* last step's retransmissions and duplicates */
			memcpy(all + na, late[j], nlate[j] * sizeof(struct item));
			na += nlate[j];
			nlate[j] = 0;
			for (unsigned t = 0; t < nt; t++) {
				if (chance(&G, 5)) {
					late[j][nlate[j]++] = tmp[t];           /* lost, sent again later */
					continue;
				}
				all[na++] = tmp[t];
				if (chance(&G, 4))
					late[j][nlate[j]++] = tmp[t];           /* duplicated */
			}
			(void)cur;
			(void)ncur;
		}
		shuffle_near(&G, all, na, 6);
		for (unsigned t = 0; t < na; t++) {
			build_data(&G, &all[t], f);
			gsend(&G, f);
			if (chance(&G, 8))
				noise(&G);
		}
		/* ACKs of message k - 1 (and k - 3 again: stale ones are ignored) */
		for (unsigned j = 0; j < c->n_jobs && k >= 1; j++) {
			uint32_t m = k - 1;

			if (m >= c->jobs[j].nmsg)
				continue;
			for (unsigned i = 0; i < G.spec[j]->n_conns; i++) {
				uint32_t last = (m + 1) * G.ppm[j] - 1;

				if (chance(&G, 10) && last > 0) {
					build_ack(&G, j, i, last - 1, 0x1f, f);   /* an ACK per packet */
					gsend(&G, f);
				}
				if (chance(&G, 5)) {
					build_ack(&G, j, i, m * G.ppm[j], 0x60, f); /* NAK: sequence error */
					gsend(&G, f);
				}
				if (chance(&G, 4)) {
					build_ack(&G, j, i, last, 0x20 | (rnd(&G) & 0x1f), f); /* RNR NAK */
					gsend(&G, f);
				}
				build_ack(&G, j, i, last, 0x1f, f);
				gsend(&G, f);
				if (chance(&G, 5) && m >= 2) {
					build_ack(&G, j, i, last - 2 * G.ppm[j], 0x1f, f); /* old */
					gsend(&G, f);
				}
			}
		}
		/* late duplicates of old messages: resent from the stored result,
		 * or stale once the slot is reused */
		for (unsigned j = 0; j < c->n_jobs; j++) {
			if (k >= 3 && k - 3 < c->jobs[j].nmsg && chance(&G, 40)) {
				struct item tmp[4096];
				unsigned nt = msg_items(&G, j, k - 3, tmp);
				struct item it = tmp[rnd(&G) % nt];

				it.bad_len = it.bad_tag = it.bad_pad = false;
				build_data(&G, &it, f);
				gsend(&G, f);
			}
		}
		for (unsigned t = 0; t < 2; t++)
			noise(&G);
	}
	rp_check_counters(G.rp);
	rp_stats(G.rp, &frames, &outputs, &results, &cycles);
	printf("  %-28s %6llu frames in, %6llu out (%5llu results), %9llu cycles: identical\n",
	       c->name, (unsigned long long)frames, (unsigned long long)outputs,
	       (unsigned long long)results, (unsigned long long)cycles);
	fflush(stdout);
	rp_destroy(G.rp);
	for (unsigned j = 0; j < c->n_jobs; j++) {
		free(G.spec[j]);
		free(cur[j]);
		free(late[j]);
	}
	free(f);
}

void gen_timeout_run(const struct gen_cfg *c, uint64_t seed)
{
	struct gen G = { .cfg = c };
	struct item tmp[64];
	struct frame *f = malloc(sizeof(*f));
	struct nr_job_spec *s;
	unsigned nt;

	eng_rng_init(&G.rng, seed);
	G.rp = rp_create(c->kernel);
	s = G.spec[0] = make_spec(&c->jobs[0], 0);
	s->timeout_ms = 5;
	G.ppm[0] = 1;
	rp_job_add(G.rp, 100, s);
	nt = msg_items(&G, 0, 0, tmp);
	for (unsigned t = 0; t + 1 < nt; t++) {       /* one contribution missing */
		build_data(&G, &tmp[t], f);
		gsend(&G, f);
	}
	rp_advance_ms(G.rp, 3);
	rp_check_counters(G.rp);                       /* not yet */
	rp_advance_ms(G.rp, 4);
	build_data(&G, &tmp[nt - 1], f);               /* too late: the job failed */
	gsend(&G, f);
	rp_check_counters(G.rp);
	printf("  %-28s the job failed by its timeout on both: identical\n", c->name);
	rp_destroy(G.rp);
	free(s);
	free(f);
}

void gen_cases_run(const struct gen_cfg *c, uint64_t seed)
{
	struct gen G = { .cfg = c };
	struct item tmp[64], it;
	struct frame *f = malloc(sizeof(*f));
	unsigned nt, n = c->jobs[0].n;

	eng_rng_init(&G.rng, seed);
	G.rp = rp_create(c->kernel);
	G.spec[0] = make_spec(&c->jobs[0], 0);
	G.ppm[0] = (c->jobs[0].msg + c->jobs[0].mtu - 1) / c->jobs[0].mtu;
	assert_int_equal(G.ppm[0], 2);
	rp_job_add(G.rp, 100, G.spec[0]);
	/* msg 1: WRITE_FIRST then WRITE_LAST_IMM of every rank */
	nt = msg_items(&G, 0, 0, tmp);
	assert_int_equal(nt, 2 * n);
	build_data(&G, &tmp[0], f);                      /* rank 0 takes slot 0 */
	gsend(&G, f);
	it = tmp[1];
	it.bad_len = true;                               /* 4 bytes short: len_mismatch */
	build_data(&G, &it, f);
	gsend(&G, f);
	it = tmp[1];
	it.opcode = NR_OP_RC_WRITE_ONLY;                 /* same headers: opcode_mismatch */
	build_data(&G, &it, f);
	gsend(&G, f);
	it = tmp[2];
	it.bad_pad = true;                               /* not whole floats: bad_len */
	build_data(&G, &it, f);
	gsend(&G, f);
	for (unsigned t = 1; t < n; t++) {               /* slot 0 completes */
		build_data(&G, &tmp[t], f);
		gsend(&G, f);
	}
	build_data(&G, &tmp[n], f);                      /* rank 0's last packet */
	gsend(&G, f);
	it = tmp[n + 1];
	it.bad_tag = true;                               /* tag_mismatch: the job fails */
	build_data(&G, &it, f);
	gsend(&G, f);
	build_data(&G, &tmp[n + 1], f);                  /* job_failed_drop */
	gsend(&G, f);
	rp_check_counters(G.rp);
	printf("  %-28s length, opcode and tag mismatches, bad length: identical\n", c->name);
	rp_destroy(G.rp);
	free(G.spec[0]);
	free(f);
}

void gen_conflict_run(const struct gen_cfg *c, uint64_t seed)
{
	struct gen G = { .cfg = c };
	struct item tmp[64], it;
	struct frame *f = malloc(sizeof(*f));
	unsigned n = c->jobs[0].n;

	eng_rng_init(&G.rng, seed);
	G.rp = rp_create(c->kernel);
	G.spec[0] = make_spec(&c->jobs[0], 0);
	G.ppm[0] = (c->jobs[0].msg + c->jobs[0].mtu - 1) / c->jobs[0].mtu;
	assert_true(c->jobs[0].mode == NR_SUM_ORDERED && n >= 2);
	rp_job_add(G.rp, 100, G.spec[0]);
	assert_true(msg_items(&G, 0, 0, tmp) >= n);
	build_data(&G, &tmp[0], f);                      /* rank 0 takes slot 0 */
	gsend(&G, f);
	gsend(&G, f);                                    /* the same again: dup_dropped */
	build_data(&G, &tmp[1], f);                      /* rank 1 too */
	gsend(&G, f);
	it = tmp[0];
	it.pay_seed ^= 0x5a5a;                           /* rank 0's packet, another payload */
	build_data(&G, &it, f);
	gsend(&G, f);                                    /* psn_conflict: the job fails */
	build_data(&G, &tmp[2 % n], f);
	gsend(&G, f);                                    /* job_failed_drop */
	rp_check_counters(G.rp);
	printf("  %-28s a second, different frame for a held PSN: identical\n", c->name);
	rp_destroy(G.rp);
	free(G.spec[0]);
	free(f);
}
