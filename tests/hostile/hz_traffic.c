/* SPDX-License-Identifier: BSD-3-Clause */
/* Hostile traffic and the checked workload (see hz_traffic.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "proto/roce_icrc.h"
#include "proto/roce_opcode.h"
#include "tests/engine/eng_bits.h"

#include "hz_traffic.h"

#define HZ_KEY 0x3C3C5A5Au

uint32_t hz_rand(uint32_t *s)
{
	uint32_t x = *s ? *s : 0x2545F491u;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

static float special(uint32_t r)
{
	static const uint32_t bits[] = {
		0x7FC00000, 0xFFC00000, 0x7F800000, 0xFF800000, 0x80000000,
		0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0xFF7FFFFF, 0x7FA00001,
	};
	float f;

	memcpy(&f, &bits[r % 10], 4);
	return f;
}

static size_t vidx(const struct hz_job *j, uint32_t g, unsigned r)
{
	return ((size_t)g * j->n + r) * (j->mtu / 4);
}

static uint32_t pay_len(const struct hz_job *j, uint32_t g)
{
	uint32_t k = g % j->ppm;

	return k + 1 == j->ppm ? j->msg_size - (j->ppm - 1) * j->mtu : j->mtu;
}

int hz_job_init(struct hz_job *j, unsigned n, const uint32_t *ips, const uint8_t (*macs)[6],
		uint32_t mtu, uint32_t msg_size, uint32_t msgs, enum hz_values values,
		uint32_t seed)
{
	size_t nv;

	memset(j, 0, sizeof(*j));
	if (n < 1 || n > HZ_MAXN)
		return -EINVAL;
	j->n = n;
	j->mtu = mtu;
	j->msg_size = msg_size;
	j->ppm = (msg_size + mtu - 1) / mtu;
	j->msgs = msgs;
	j->seed = seed;
	memcpy(j->ip, ips, n * sizeof(*ips));
	memcpy(j->mac, macs, n * 6);
	j->spec = calloc(1, sizeof(*j->spec) + n * sizeof(j->spec->conns[0]));
	nv = (size_t)hz_packets(j) * n * (mtu / 4);
	j->val = malloc(nv * sizeof(float));
	j->seen = calloc((size_t)hz_packets(j) * n, 1);
	if (!j->spec || !j->val || !j->seen) {
		hz_job_fini(j);
		return -ENOMEM;
	}
	j->spec->n_conns = n;
	j->spec->mtu = mtu;
	j->spec->msg_size = msg_size;
	j->spec->pool_msgs = 4;
	j->spec->timeout_ms = 60000;
	j->spec->mode = NR_SUM_ORDERED;
	j->spec->result_key = HZ_KEY;
	j->spec->pkey = NR_BTH_PKEY_DEFAULT;   /* bound as the host library binds them */
	for (unsigned r = 0; r < n; r++) {
		struct nr_conn_spec *c = &j->spec->conns[r];

		c->src_ip = ips[r];
		c->dst_ip = ips[(r + 1) % n];
		memcpy(c->src_mac, macs[r], 6);
		memcpy(c->dst_mac, macs[(r + 1) % n], 6);
		c->src_sport = (uint16_t)(0xC000 | r);   /* flow()'s, data and ACKs */
		c->dst_sport = (uint16_t)(0xC000 | r);
		c->src_qpn = 0x300 + r;      /* rank r's sending QP */
		c->dst_qpn = 0x400 + r;      /* rank r+1's receiving QP */
		c->ipsn = (NR_PSN_MASK - 3 - 5 * r) & NR_PSN_MASK; /* wraps during the run */
	}
	uint32_t s = seed | 1;

	for (size_t k = 0; k < nv; k++) {
		uint32_t r = hz_rand(&s);

		j->val[k] = (values == HZ_VAL_SPECIAL && r % 5 == 0)
			? special(r >> 8)
			: (float)((int32_t)(r % 2000001) - 1000000) / 4096.0f * 1.00048828f;
	}
	return 0;
}

void hz_job_fini(struct hz_job *j)
{
	free(j->spec);
	free(j->val);
	free(j->seen);
	j->spec = NULL;
	j->val = NULL;
	j->seen = NULL;
}

static void flow(const struct hz_job *j, unsigned r, bool ack, struct nr_flow *f)
{
	unsigned s = ack ? (r + 1) % j->n : r, d = ack ? r : (r + 1) % j->n;

	memset(f, 0, sizeof(*f));
	memcpy(f->src_mac, j->mac[s], 6);
	memcpy(f->dst_mac, j->mac[d], 6);
	f->saddr = j->ip[s];
	f->daddr = j->ip[d];
	f->sport = (uint16_t)(0xC000 | r);
	f->frag_off = NR_IPV4_DF;
	f->dqpn = ack ? j->spec->conns[r].src_qpn : j->spec->conns[r].dst_qpn;
}

int hz_data(const struct hz_job *j, unsigned r, uint32_t g, uint8_t *buf, size_t cap)
{
	uint32_t k = g % j->ppm;
	struct nr_build_args a = {
		.psn = nr_psn_add(j->spec->conns[r].ipsn, g),
		.ackreq = k + 1 == j->ppm,
		.va = 0x7f0000000000ull + (uint64_t)(g / j->ppm) * j->msg_size,
		.rkey = 0x1234,
		.dma_len = j->msg_size,
		.imm = (7u << 24) | (g / j->ppm),
	};
	struct nr_flow f;

	if (j->ppm == 1)
		a.opcode = NR_OP_RC_WRITE_ONLY_IMM;
	else if (k == 0)
		a.opcode = NR_OP_RC_WRITE_FIRST;
	else if (k + 1 == j->ppm)
		a.opcode = NR_OP_RC_WRITE_LAST_IMM;
	else
		a.opcode = NR_OP_RC_WRITE_MIDDLE;
	flow(j, r, false, &f);
	return nr_build_frame(buf, cap, &f, &a, &j->val[vidx(j, g, r)], pay_len(j, g));
}

int hz_ack(const struct hz_job *j, unsigned r, uint32_t g, uint8_t syn, uint8_t *buf, size_t cap)
{
	struct nr_build_args a = {
		.opcode = NR_OP_RC_ACK,
		.psn = nr_psn_add(j->spec->conns[r].ipsn, g),
		.syndrome = syn,
		.msn = g / j->ppm + 1,
	};
	struct nr_flow f;

	flow(j, r, true, &f);
	return nr_build_frame(buf, cap, &f, &a, NULL, 0);
}

int hz_resp(const struct hz_job *j, unsigned r, uint32_t g, uint8_t syn, uint8_t *buf, size_t cap)
{
	struct nr_build_args a = {
		.opcode = NR_OP_RC_ACK,
		.psn = nr_psn_add(j->spec->conns[r].ipsn, g),
		.syndrome = syn,
		.msn = 1,
	};
	struct nr_flow f;

	flow(j, r, false, &f);
	return nr_build_frame(buf, cap, &f, &a, NULL, 0);
}

/* A NAK or RNR NAK addressed to a QP of the job (either side of a connection). */
static bool job_nak(const struct hz_job *j, const struct nr_pkt *p)
{
	if (p->opcode != NR_OP_RC_ACK || nr_syn_is_ack(p->aeth_syn))
		return false;
	for (unsigned k = 0; k < j->n; k++) {
		const struct nr_conn_spec *c = &j->spec->conns[k];

		if ((p->daddr == c->src_ip && p->qpn == c->src_qpn) ||
		    (p->daddr == c->dst_ip && p->qpn == c->dst_qpn))
			return true;
	}
	return false;
}

int hz_result(struct hz_job *j, const uint8_t *frame, uint32_t len, bool check_icrc)
{
	struct nr_pkt p;
	unsigned r = HZ_MAXN;
	uint32_t g, nf;

	if (nr_parse(frame, len, &p) != NR_PKT_ROCE || p.ipver != 4)
		return 0;
	if (job_nak(j, &p))
		j->naks_out++;
	if (p.opcode < NR_OP_RC_WRITE_FIRST || p.opcode > NR_OP_RC_WRITE_ONLY_IMM)
		return 0;
	for (unsigned k = 0; k < j->n; k++)
		if (p.qpn == j->spec->conns[k].dst_qpn && p.daddr == j->spec->conns[k].dst_ip &&
		    p.saddr == j->spec->conns[k].src_ip)
			r = k;
	if (r == HZ_MAXN)
		return 0;
	g = nr_psn_sub(p.psn, j->spec->conns[r].ipsn);
	if (g >= hz_packets(j) || p.pay_len != pay_len(j, g)) {
		fprintf(stderr, "result conn %u g=%u: outside the workload or length %u\n", r, g,
			p.pay_len);
		j->wrong++;
		return 1;
	}
	nf = p.pay_len / 4;
	for (uint32_t e = 0; e < nf; e++) {
		volatile float acc = j->val[vidx(j, g, 0) + e];
		float got;

		for (unsigned k = 1; k < j->n; k++)
			acc = acc + j->val[vidx(j, g, k) + e];
		memcpy(&got, frame + p.pay_off + 4 * e, 4);
		if (!eng_same_float(got, acc)) {
			fprintf(stderr, "result conn %u g=%u element %u: %a, rank-ordered sum %a\n",
				r, g, e, got, (float)acc);
			j->wrong++;
			return 1;
		}
	}
	if ((p.mask & NR_OPF_IMMDT) &&
	    p.imm != (((7u << 24) | (g / j->ppm)) ^ j->spec->result_key))
		j->unsigned_imm++;
	if (check_icrc && !nr_icrc_check(frame, &p)) {
		fprintf(stderr, "result conn %u g=%u: bad ICRC\n", r, g);
		j->wrong++;
		return 1;
	}
	uint8_t *seen = &j->seen[(size_t)g * j->n + r];

	if (*seen)
		j->dup_results++;
	else
		j->results++;
	if (*seen < 255)
		(*seen)++;
	return 1;
}

bool hz_all_results(const struct hz_job *j)
{
	unsigned missing = 0;

	for (uint32_t g = 0; g < hz_packets(j); g++)
		for (unsigned r = 0; r < j->n; r++)
			if (!j->seen[(size_t)g * j->n + r] && missing++ < 5)
				fprintf(stderr, "missing result g=%u conn %u\n", g, r);
	return missing == 0;
}

void hz_random_frame(uint32_t *s, uint8_t *buf, uint32_t len)
{
	for (uint32_t k = 0; k < len; k++)
		buf[k] = (uint8_t)hz_rand(s);
}

void hz_roce_prefixed(const struct hz_job *j, uint32_t *s, uint8_t *buf, uint32_t len)
{
	uint8_t tmp[HZ_FRAME_MAX];
	int n = hz_data(j, hz_rand(s) % j->n, 0, tmp, sizeof(tmp));
	uint32_t keep = 14 + 20 + 8 + 12 + 16;

	hz_random_frame(s, buf, len);
	if (n > 0)
		memcpy(buf, tmp, len < keep ? len : keep);
}

void hz_refresh(uint8_t *frame, uint32_t len)
{
	struct nr_pkt p;

	if (len >= 34 && frame[12] == 0x08 && frame[13] == 0x00 && (frame[14] & 0x0F) >= 5 &&
	    14u + (frame[14] & 0x0F) * 4u <= len) {
		struct nr_ipv4_hdr *ip = (struct nr_ipv4_hdr *)(frame + 14);

		ip->check = nr_ipv4_cksum(ip);
	}
	if (nr_parse(frame, len, &p) == NR_PKT_ROCE)
		nr_icrc_update(frame, &p);
}

const uint8_t *hz_undefined_opcodes(unsigned *n)
{
	static uint8_t ops[256];
	static unsigned count;

	if (!count)
		for (unsigned op = 0; op < 256; op++)
			if (!nr_opcode_info((uint8_t)op))
				ops[count++] = (uint8_t)op;
	*n = count;
	return ops;
}
