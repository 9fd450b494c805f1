/* SPDX-License-Identifier: BSD-3-Clause */
/* The hostile-traffic cases (see hz_cases.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <cmocka.h>

#include "proto/roce_icrc.h"

#include "hz_cases.h"

#define HZ_RANKS 4
#define HZ_MTU   256
#define HZ_MSG   600      /* 256 + 256 + 88: FIRST, MIDDLE, LAST_IMM */
#define HZ_MSGS  6

struct hz_run;
typedef void (*hz_hook)(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len);

struct hz_run {
	struct hz_drv *d;
	struct hz_job j;
	uint32_t rng;
	uint64_t sent;                  /* frames injected */
	uint64_t exp_malformed[NR_BAD_MAX];  /* by our own parse of what we sent */
	uint64_t exp_other;             /* frames nr_parse calls OTHER */
	uint64_t hostile;               /* hostile frames sent */
	bool pinned;                    /* the job is registered: its MACs are pinned */
	uint64_t exp_pinned, exp_vlan;  /* frames the box's L2 step will drop */
	hz_hook before, after;
	void *arg;
};

/* Whether the box's L2 step drops f (sent on rank port's port): it counts what it expects. */
static bool l2_refused(struct hz_run *R, unsigned port, const uint8_t *f, uint32_t len)
{
	struct nr_pkt p;

	if (!R->d->l2_pins || len < 14)
		return false;
	if (R->d->seg && len > R->d->seg && nr_parse(f, R->d->seg, &p) != NR_PKT_OTHER)
		return false;   /* a chain the box cannot linearize: multiseg */
	if (len >= 16 && f[12] == 0x81 && f[13] == 0x00 && ((f[14] << 8 | f[15]) & 0x0FFF)) {
		R->exp_vlan++;
		return true;
	}
	for (unsigned k = 0; R->pinned && k < R->j.n; k++)
		if (k != port % R->j.n && memcmp(f + 6, R->j.mac[k], 6) == 0) {
			R->exp_pinned++;
			return true;
		}
	return false;
}

/* Inject and remember what the box will make of it: true when its L2 step drops it. */
static bool hz_send(struct hz_run *R, unsigned port, const uint8_t *f, uint32_t len, bool hostile)
{
	struct nr_pkt p;
	int k = nr_parse(f, len, &p);
	bool refused;

	if (len > R->d->max_frame)
		return false;
	refused = l2_refused(R, port, f, len);
	if (!refused && k == NR_PKT_MALFORMED)
		R->exp_malformed[p.bad]++;
	else if (!refused && k == NR_PKT_OTHER)
		R->exp_other++;
	R->d->inject(R->d->ctx, port % R->j.n, f, len);
	R->sent++;
	R->hostile += hostile;
	return refused;
}

static void setup(struct hz_run *R, struct hz_drv *d, enum hz_values v, uint32_t seed)
{
	uint32_t ips[HZ_RANKS];
	uint8_t macs[HZ_RANKS][6];

	memset(R, 0, sizeof(*R));
	R->d = d;
	R->rng = seed;
	printf("# %s: seed 0x%08x\n", d->name, seed);
	for (unsigned r = 0; r < HZ_RANKS; r++) {
		ips[r] = d->ip_of(r);
		d->mac_of(r, macs[r]);
	}
	assert_int_equal(d->begin(d->ctx), 0);
	assert_int_equal(hz_job_init(&R->j, HZ_RANKS, ips, (const uint8_t (*)[6])macs, HZ_MTU,
				     HZ_MSG, HZ_MSGS, v, seed), 0);
	/* every host says hello first (a broadcast ARP), so a learning switch
	 * knows where each one is, results never need flooding, and the job's
	 * connections are bound to their hosts' ports when it registers */
	for (unsigned r = 0; r < HZ_RANKS; r++) {
		uint8_t arp[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

		memcpy(arp + 6, macs[r], 6);
		arp[12] = 0x08;
		arp[13] = 0x06;
		hz_send(R, r, arp, sizeof(arp), false);
	}
	d->settle(d->ctx, &R->j);
	assert_int_equal(d->job_add(d->ctx, &R->j), 0);
	R->pinned = true;
}

/* The workload: message by message, every rank, then every receiver's ACK. */
static void workload(struct hz_run *R)
{
	uint8_t buf[HZ_FRAME_MAX];
	struct hz_job *j = &R->j;

	for (uint32_t m = 0; m < j->msgs; m++) {
		for (uint32_t p = 0; p < j->ppm; p++) {
			for (unsigned r = 0; r < j->n; r++) {
				uint32_t g = m * j->ppm + p;
				int len = hz_data(j, r, g, buf, sizeof(buf));

				assert_true(len > 0);
				if (R->before)
					R->before(R, r, g, buf, &len);
				hz_send(R, r, buf, (uint32_t)len, false);
				if (R->after)
					R->after(R, r, g, buf, &len);
			}
		}
		R->d->settle(R->d->ctx, j);
		for (unsigned r = 0; r < j->n; r++) {
			int len = hz_ack(j, r, m * j->ppm + j->ppm - 1, 0x1F, buf, sizeof(buf));

			assert_true(len > 0);
			hz_send(R, (r + 1) % j->n, buf, (uint32_t)len, false);
		}
		R->d->settle(R->d->ctx, j);
	}
}

/* The checks every case ends with; returns the counters for case checks. */
static void finish(struct hz_run *R, struct hz_acct *a)
{
	uint64_t mal = 0, ed = 0;
	struct hz_job *j = &R->j;

	R->d->settle(R->d->ctx, j);
	R->d->acct(R->d->ctx, a);
	for (unsigned b = 0; b < NR_BAD_MAX; b++)
		mal += a->malformed[b];
	for (unsigned c = 0; c < NR_ECTR_MAX; c++)
		ed += a->edrop[c];
	printf("# %s: sent %llu (hostile %llu): rx %llu = forwarded %llu + held %llu + resent %llu"
	       " + dropped %llu (malformed %llu, engine %llu, other %llu); results %u (again %u) wrong %u\n",
	       R->d->name, (unsigned long long)R->sent, (unsigned long long)R->hostile,
	       (unsigned long long)a->rx, (unsigned long long)a->forwarded,
	       (unsigned long long)a->held, (unsigned long long)a->resent,
	       (unsigned long long)a->dropped, (unsigned long long)mal, (unsigned long long)ed,
	       (unsigned long long)a->other_drop, j->results, j->dup_results, j->wrong);
	/* every frame accounted for */
	assert_int_equal(a->rx, R->sent);
	assert_int_equal(a->rx, a->forwarded + a->held + a->resent + a->dropped);
	assert_int_equal(a->dropped, mal + ed + a->other_drop);
	/* the malformed reasons are exactly what the parser says of what we sent */
	for (unsigned b = 0; b < NR_BAD_MAX; b++)
		if (a->malformed[b] != R->exp_malformed[b])
			fail_msg("malformed reason %s: box counted %llu, sent %llu",
				 nr_malformed_str(b), (unsigned long long)a->malformed[b],
				 (unsigned long long)R->exp_malformed[b]);
	/* the L2 step dropped exactly the frames that claimed another port's MAC */
	assert_int_equal(a->l2_pinned, R->exp_pinned);
	assert_int_equal(a->vlan_refused, R->exp_vlan);
	/* the job's sums stay exact, nothing else was added */
	assert_int_equal(j->wrong, 0);
	assert_true(hz_all_results(j));
	assert_int_equal(j->unsigned_imm, 0);
	/* each result left once, plus one frame per resend and at most one per
	 * result the status monitor resent itself (a repair, a solicited ACK:
	 * on the box's clock, one may leave after the run settled): nothing else */
	if (j->dup_results < a->resent ||
	    j->dup_results > a->resent + nr_ectr_mon_results(a->ectr))
		fail_msg("results seen again %u, resends %llu, repairs %llu, solicits %llu",
			 j->dup_results, (unsigned long long)a->resent,
			 (unsigned long long)a->ectr[NR_ECTR_REPAIR_SENT],
			 (unsigned long long)a->ectr[NR_ECTR_ACK_SOLICIT]);
	assert_int_equal(a->held, (uint64_t)j->n * hz_packets(j));
	assert_int_equal(a->ectr[NR_ECTR_AGGREGATED], a->held);
	assert_int_equal(a->ectr[NR_ECTR_DUP_RESENT], a->resent);
	for (unsigned c = 0; c < NR_ECTR_MAX; c++)
		if (c != NR_ECTR_SPOOFED && c != NR_ECTR_SPOOFED_SRC && c != NR_ECTR_SPOOFED_PKEY &&
		    c != NR_ECTR_UNKNOWN_CONN &&
		    c != NR_ECTR_ACKS_SNOOPED && c != NR_ECTR_ACK_IGNORED && a->edrop[c])
			assert_int_equal(a->edrop[c], a->ectr[c]);
}

static void teardown(struct hz_run *R)
{
	R->d->end(R->d->ctx);
	hz_job_fini(&R->j);
}

/* ---- every length, random and RoCE-prefixed ----------------------------------- */

static void lengths_after(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	uint8_t buf[HZ_FRAME_MAX];
	uint32_t ppm = R->j.ppm, n = R->j.n, pk = hz_packets(&R->j);
	uint32_t per = 9001 / (n * pk) + 1, first = (g * n + r) * per;
	uint32_t per2 = 9001 / (n * (pk - ppm)) + 1, first2 = ((g - ppm) * n + r) * per2;

	for (uint32_t l = first; l < first + per && l <= 9000; l++) {
		hz_random_frame(&R->rng, buf, l);
		hz_send(R, r, buf, l, true);
	}
	/*
	 * Valid headers of message 0 and random bytes after: once message 0 is
	 * out, a frame long enough to carry a payload is a duplicate of it (the
	 * box resends the stored result) or stale.  Before that it would be a
	 * contribution with a broken ICRC: hz_case_bad_icrc's business.
	 */
	if (g < ppm)
		return;
	for (uint32_t l = first2; l < first2 + per2 && l <= 9000; l++) {
		hz_roce_prefixed(&R->j, &R->rng, buf, l);
		hz_send(R, r, buf, l, true);
	}
}

void hz_case_lengths(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;

	setup(&R, d, HZ_VAL_PLAIN, 0x1E46u);
	R.after = lengths_after;
	workload(&R);
	finish(&R, &a);
	assert_true(R.hostile >= 2 * (uint64_t)(d->max_frame < 9000 ? d->max_frame : 9001));
	teardown(&R);
}

/* ---- bad IHL, IP total length, UDP length, fragments -------------------------- */

static void bad_headers_after(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	uint8_t b[HZ_FRAME_MAX];
	uint32_t n = (uint32_t)*len;
	const uint16_t tot = nr_ld_be16(f + 16), ulen = nr_ld_be16(f + 38);
	struct { uint8_t ihl; int tot; int ulen; uint16_t frag; uint8_t bad; } m[] = {
		{ 0, -1, -1, 0x4000, NR_BAD_BAD_IHL }, { 3, -1, -1, 0x4000, NR_BAD_BAD_IHL },
		{ 4, -1, -1, 0x4000, NR_BAD_BAD_IHL },
		{ 5, 0, -1, 0x4000, NR_BAD_BAD_IP_LEN }, { 5, 28, -1, 0x4000, NR_BAD_BAD_UDP_LEN },
		{ 5, tot + 1, -1, 0x4000, NR_BAD_BAD_IP_LEN }, { 5, 65535, -1, 0x4000, NR_BAD_BAD_IP_LEN },
		{ 5, -1, 0, 0x4000, NR_BAD_BAD_UDP_LEN }, { 5, -1, 7, 0x4000, NR_BAD_BAD_UDP_LEN },
		{ 5, -1, ulen - 4, 0x4000, NR_BAD_BAD_UDP_LEN }, { 5, -1, ulen + 4, 0x4000, NR_BAD_BAD_UDP_LEN },
		{ 5, -1, -1, 0x2000, NR_BAD_IP_FRAGMENT },
	};

	for (unsigned k = 0; k < sizeof(m) / sizeof(m[0]); k++) {
		struct nr_pkt p;

		memcpy(b, f, n);
		b[14] = (uint8_t)(0x40 | m[k].ihl);
		if (m[k].tot >= 0)
			nr_st_be16(b + 16, (uint16_t)m[k].tot);
		if (m[k].ulen >= 0)
			nr_st_be16(b + 38, (uint16_t)m[k].ulen);
		nr_st_be16(b + 20, m[k].frag);
		if (m[k].ihl >= 5)
			((struct nr_ipv4_hdr *)(b + 14))->check =
				nr_ipv4_cksum((struct nr_ipv4_hdr *)(b + 14));
		/* the parser must call each of these what it is */
		if (nr_parse(b, n, &p) != NR_PKT_MALFORMED || p.bad != m[k].bad)
			fail_msg("mutation %u (ihl %u tot %d udp %d frag 0x%x): kind %u reason %s, want %s",
				 k, m[k].ihl, m[k].tot, m[k].ulen, m[k].frag, p.kind,
				 nr_malformed_str(p.bad), nr_malformed_str(m[k].bad));
		hz_send(R, r, b, n, true);
	}
	/* and a truncation at every byte of the headers */
	for (uint32_t cut = 0; cut < 14 + 20 + 8 + 12 + 16 + 4; cut++)
		hz_send(R, r, f, cut, true);
}

void hz_case_bad_headers(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;

	setup(&R, d, HZ_VAL_PLAIN, 0xBAD1u);
	R.after = bad_headers_after;
	workload(&R);
	finish(&R, &a);
	assert_true(a.malformed[NR_BAD_BAD_IHL] > 0 && a.malformed[NR_BAD_BAD_IP_LEN] > 0 &&
		    a.malformed[NR_BAD_BAD_UDP_LEN] > 0 && a.malformed[NR_BAD_IP_FRAGMENT] > 0);
	teardown(&R);
}

/* ---- PadCnt past the payload; RETH lengths that lie ------------------------------ */

static void pad_after(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	uint8_t b[HZ_FRAME_MAX];
	struct nr_flow fl;
	struct nr_build_args a = { .opcode = NR_OP_RC_WRITE_ONLY, .psn = g, .dma_len = 0 };
	struct nr_pkt p;
	int n;

	/* a payload-less WRITE ONLY claiming 1..3 pad bytes */
	memset(&fl, 0, sizeof(fl));
	fl.saddr = R->j.ip[r];
	fl.daddr = R->j.ip[(r + 1) % R->j.n];
	memcpy(fl.src_mac, R->j.mac[r], 6);
	memcpy(fl.dst_mac, R->j.mac[(r + 1) % R->j.n], 6);
	fl.dqpn = R->j.spec->conns[r].dst_qpn;
	a.psn = nr_psn_add(R->j.spec->conns[r].ipsn, g);
	n = nr_build_frame(b, sizeof(b), &fl, &a, NULL, 0);
	assert_true(n > 0);
	for (uint8_t pad = 1; pad <= 3; pad++) {
		nr_bth_set_pad((struct nr_bth *)(b + 42), pad);
		hz_refresh(b, (uint32_t)n);
		if (nr_parse(b, (uint32_t)n, &p) != NR_PKT_MALFORMED || p.bad != NR_BAD_BAD_PAD)
			fail_msg("PadCnt %u on an empty WRITE: kind %u reason %s", pad, p.kind,
				 nr_malformed_str(p.bad));
		hz_send(R, r, b, (uint32_t)n, true);
	}
}

static void reth_lies_before(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	static const uint32_t lies[] = { 0, 1, 3, 0xFFFFFFFFu, 0x80000000u, 4096 };
	struct nr_pkt p;

	assert_int_equal(nr_parse(f, (uint32_t)*len, &p), NR_PKT_ROCE);
	if (!(p.mask & NR_OPF_RETH))
		return;
	/* the contribution itself carries a RETH length that lies */
	nr_st_be32(f + p.bth_off + 12 + 12, lies[(g + r) % 6]);
	hz_refresh(f, (uint32_t)*len);
}

void hz_case_pad_and_reth(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;

	setup(&R, d, HZ_VAL_PLAIN, 0x9ADu);
	R.before = reth_lies_before;
	R.after = pad_after;
	workload(&R);
	finish(&R, &a);
	assert_int_equal(a.malformed[NR_BAD_BAD_PAD], 3ull * R.j.n * hz_packets(&R.j));
	teardown(&R);
}

/* ---- opcodes that do not exist --------------------------------------------------- */

static void opcodes_after(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	unsigned nops;
	const uint8_t *ops = hz_undefined_opcodes(&nops);
	uint8_t b[HZ_FRAME_MAX];

	/* a slice of the undefined opcodes after each packet: all of them over the run */
	for (unsigned k = (g * R->j.n + r) % 8; k < nops; k += 8) {
		memcpy(b, f, (size_t)*len);
		b[42] = ops[k];
		hz_refresh(b, (uint32_t)*len);
		hz_send(R, r, b, (uint32_t)*len, true);
	}
}

void hz_case_unknown_opcodes(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;

	setup(&R, d, HZ_VAL_PLAIN, 0x0BCDu);
	R.after = opcodes_after;
	workload(&R);
	finish(&R, &a);
	assert_int_equal(a.malformed[NR_BAD_UNKNOWN_OPCODE], R.hostile);
	teardown(&R);
}

/* ---- NaN and Inf: summed as IEEE 754 says ------------------------------------------ */

void hz_case_nan_inf(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;
	unsigned nan = 0, inf = 0;

	setup(&R, d, HZ_VAL_SPECIAL, 0x7FC0u);
	for (size_t k = 0; k < (size_t)hz_packets(&R.j) * R.j.n * (HZ_MTU / 4); k++) {
		nan += R.j.val[k] != R.j.val[k];
		inf += R.j.val[k] == R.j.val[k] && R.j.val[k] - R.j.val[k] != 0.0f;
	}
	assert_true(nan > 0 && inf > 0);
	workload(&R);
	finish(&R, &a);
	teardown(&R);
}

/* ---- a flood for QPNs nobody registered --------------------------------------------- */

static void flood_after(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	uint8_t b[HZ_FRAME_MAX];

	for (unsigned k = 0; k < 40; k++) {
		uint32_t q = 0x10000 + (hz_rand(&R->rng) & 0xFFFF);

		memcpy(b, f, (size_t)*len);
		nr_bth_set_qpn((struct nr_bth *)(b + 42), q);
		if (k & 1)   /* a registered QPN behind an address it does not belong to */
			nr_bth_set_qpn((struct nr_bth *)(b + 42), R->j.spec->conns[r].dst_qpn),
			memcpy(b + 30, &(uint32_t){ htonl(0x0A630000u | k) }, 4);
		hz_random_frame(&R->rng, b + 42 + 12 + 16, 64);   /* raw bytes must not leak in */
		hz_refresh(b, (uint32_t)*len);
		hz_send(R, r, b, (uint32_t)*len, true);
	}
}

void hz_case_unknown_qpn_flood(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;

	setup(&R, d, HZ_VAL_PLAIN, 0xF100Du);
	R.after = flood_after;
	workload(&R);
	finish(&R, &a);
	/* forwarded untouched, counted as unknown connections (only FIRST carries RETH
	 * at offset 54; every copy is an RDMA WRITE) */
	assert_int_equal(a.ectr[NR_ECTR_UNKNOWN_CONN], R.hostile);
	assert_true(a.forwarded >= R.hostile);
	teardown(&R);
}

/* ---- spoofed sources on registered QPNs ------------------------------------------------ */

static void spoof_after(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	uint8_t b[HZ_FRAME_MAX];

	for (unsigned k = 0; k < 4; k++) {
		uint32_t s = k == 0 ? R->j.ip[(r + 2) % R->j.n] : htonl(0x0A000000u | hz_rand(&R->rng) % 0xFFFF);

		if (s == R->j.ip[r])
			s ^= htonl(0x100);
		memcpy(b, f, (size_t)*len);
		memcpy(b + 26, &s, 4);
		hz_random_frame(&R->rng, b + (size_t)*len - 4 - 64, 64);
		hz_refresh(b, (uint32_t)*len);
		hz_send(R, r, b, (uint32_t)*len, true);
	}
}

void hz_case_spoofed(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;

	setup(&R, d, HZ_VAL_PLAIN, 0x5900Fu);
	R.after = spoof_after;
	workload(&R);
	finish(&R, &a);
	assert_int_equal(a.edrop[NR_ECTR_SPOOFED], R.hostile);
	teardown(&R);
}

/* ---- forged frames: the right source IP and QPN, bound wrong ------------------------------ */

struct forge_count {
	uint64_t data, acks;
	uint64_t l2_data, l2_acks;   /* of which the box's L2 step dropped (a pinned MAC) */
};

/* A copy of frame f (len bytes) with one binding wrong, its payload garbage
 * (so that a forgery the box took would show as a wrong sum), checksums
 * and ICRC made right again. */
static void forge_send(struct hz_run *R, unsigned port, const uint8_t *f, int len, unsigned how,
		       bool ack)
{
	struct forge_count *fc = R->arg;
	uint8_t b[HZ_FRAME_MAX];
	struct nr_pkt p;

	memcpy(b, f, (size_t)len);
	assert_int_equal(nr_parse(b, (uint32_t)len, &p), NR_PKT_ROCE);
	if (how == 0)           /* another UDP source port */
		nr_st_be16(b + p.l4_off, (uint16_t)(p.udp_sport ^ 0x0101));
	else if (how == 1)      /* another source MAC (another port's host) */
		b[6 + 5] ^= 0x40;
	else if (how == 2)      /* another partition */
		nr_st_be16(b + p.bth_off + 2, 0x8123);
	else                    /* every field right, from another host's port */
		port = (port + 2) % R->j.n;
	if (p.pay_len >= 4)
		hz_random_frame(&R->rng, b + p.pay_off, p.pay_len);
	hz_refresh(b, (uint32_t)len);
	if (hz_send(R, port, b, (uint32_t)len, true))
		*(ack ? &fc->l2_acks : &fc->l2_data) += 1;
	*(ack ? &fc->acks : &fc->data) += 1;
}

/* Before the genuine frame of (r, g): a forgery for every PSN of the window
 * ahead of it, each way; after it: forgeries of it (FIRST, MIDDLE and
 * LAST_IMM alike) and of the ACK its receiver will send. */
static void forge_before(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	uint8_t b[HZ_FRAME_MAX];
	uint32_t window = R->j.spec->pool_msgs * R->j.ppm;

	(void)f;
	(void)len;
	if (r != 1 || g % R->j.ppm)        /* the victim: rank 1, once a message */
		return;
	for (uint32_t k = 0; k < window && g + k < hz_packets(&R->j); k++) {
		int n = hz_data(&R->j, r, g + k, b, sizeof(b));

		forge_send(R, r, b, n, (g + k) % 4, false);
	}
}

/*
 * After the genuine frame of (r, g): forgeries of it, and of what its
 * receiver may answer the sender's QP: an ACK, a sequence NAK (it would send
 * the sender back), an RNR NAK (it would hold it), a remote-access NAK (it
 * would move its QP to the error state); and of what the sender may answer
 * the receiver's QP (an RNR NAK to it as a requester).
 */
static void forge_after(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	static const uint8_t syn[] = { 0x1F, NR_AETH_NAK_PSN_SEQ_ERR, NR_AETH_RNR_NAK | 0x0E,
				       NR_AETH_NAK_REM_ACC_ERR };
	uint8_t b[HZ_FRAME_MAX];

	if (r != 1)
		return;
	for (unsigned how = 0; how < 4; how++)
		forge_send(R, r, f, *len, how, false);
	for (unsigned how = 0; how < 4; how++) {
		int n = hz_ack(&R->j, r, g, syn[(g + how) % 4], b, sizeof(b));

		forge_send(R, (r + 1) % R->j.n, b, n, how, true);
		n = hz_resp(&R->j, r, g, NR_AETH_RNR_NAK | 0x0E, b, sizeof(b));
		forge_send(R, r, b, n, how, true);
	}
}

void hz_case_forged(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;
	struct forge_count fc = { 0 };

	setup(&R, d, HZ_VAL_PLAIN, 0xF0E6Du);
	R.arg = &fc;
	R.before = forge_before;
	R.after = forge_after;
	workload(&R);
	finish(&R, &a);
	printf("# %s: forged data %llu, forged ACKs %llu; spoofed_src %llu, spoofed_pkey %llu, "
	       "l2_pinned %llu\n", d->name, (unsigned long long)fc.data, (unsigned long long)fc.acks,
	       (unsigned long long)a.ectr[NR_ECTR_SPOOFED_SRC],
	       (unsigned long long)a.ectr[NR_ECTR_SPOOFED_PKEY], (unsigned long long)a.l2_pinned);
	/* every forged frame, data, ACK, NAK and RNR NAK alike, dropped and
	 * named (by the box's L2 step when it claims a pinned MAC from another
	 * port), never snooped, never forwarded: no NAK reached a QP of the
	 * job but the box's own (the status monitor's); the sums exact (finish) */
	assert_int_equal(a.edrop[NR_ECTR_SPOOFED_SRC] + a.edrop[NR_ECTR_SPOOFED_PKEY] +
			 fc.l2_data + fc.l2_acks, fc.data + fc.acks);
	assert_int_equal(a.ectr[NR_ECTR_SPOOFED_SRC] + a.ectr[NR_ECTR_SPOOFED_PKEY],
			 fc.data + fc.acks - fc.l2_data - fc.l2_acks);
	assert_int_equal(a.l2_pinned, fc.l2_data + fc.l2_acks);
	assert_int_equal(R.j.naks_out, a.ectr[NR_ECTR_NAK_GAP] + a.ectr[NR_ECTR_NAK_REARM] +
			 a.ectr[NR_ECTR_NAK_PROBE] + a.ectr[NR_ECTR_NAK_HOLD]);
	assert_true(a.ectr[NR_ECTR_SPOOFED_PKEY] > 0 && a.ectr[NR_ECTR_SPOOFED_SRC] > 0);
	assert_int_equal(a.ectr[NR_ECTR_ACKS_SNOOPED] + a.ectr[NR_ECTR_ACK_IGNORED],
			 (uint64_t)R.j.n * R.j.msgs);
	assert_int_equal(a.ectr[NR_ECTR_PSN_CONFLICT], 0);
	teardown(&R);
}

/* ---- duplicates of every packet ---------------------------------------------------------- */

static void dup_after(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	uint8_t b[HZ_FRAME_MAX];

	/* the same packet again at once, and the previous message's once more */
	hz_send(R, r, f, (uint32_t)*len, true);
	if (g >= R->j.ppm) {
		int n = hz_data(&R->j, r, g - R->j.ppm, b, sizeof(b));

		hz_send(R, r, b, (uint32_t)n, true);
	}
}

void hz_case_duplicates(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;

	setup(&R, d, HZ_VAL_PLAIN, 0xD0Bu);
	R.after = dup_after;
	workload(&R);
	finish(&R, &a);
	/* every duplicate is either dropped as such or answered with the stored result */
	assert_int_equal(a.edrop[NR_ECTR_DUP_DROPPED] + a.edrop[NR_ECTR_STALE_DROPPED] + a.resent,
			 R.hostile);
	if (!(a.resent > 0 && R.j.dup_results >= a.resent &&
	      R.j.dup_results <= a.resent + nr_ectr_mon_results(a.ectr)))
		fail_msg("resent %llu, resent results seen %u", (unsigned long long)a.resent,
			 R.j.dup_results);
	teardown(&R);
}

/* ---- ACKs and NAKs for PSNs never sent ------------------------------------------------ */

static void acks_after(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	static const uint8_t syn[] = { 0x1F, 0x00, NR_AETH_NAK_PSN_SEQ_ERR };
	uint8_t b[256];

	for (unsigned k = 0; k < 3; k++) {
		uint32_t ahead = g + 1 + R->j.ppm * (2 + k) + (hz_rand(&R->rng) % 1000);
		int n = hz_ack(&R->j, r, ahead, syn[k], b, sizeof(b));

		hz_send(R, (r + 1) % R->j.n, b, (uint32_t)n, true);
	}
}

void hz_case_acks_never_sent(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;

	setup(&R, d, HZ_VAL_PLAIN, 0xACCu);
	R.after = acks_after;
	workload(&R);
	finish(&R, &a);
	assert_int_equal(a.ectr[NR_ECTR_ACK_IGNORED], R.hostile);
	assert_true(a.forwarded >= R.hostile);
	teardown(&R);
}

/* ---- contributions whose ICRC is broken ------------------------------------------------ */

static void bad_icrc_before(struct hz_run *R, unsigned r, uint32_t g, uint8_t *f, int *len)
{
	uint8_t b[HZ_FRAME_MAX];
	struct nr_pkt p;

	/* the same packet with one payload bit flipped in flight, ICRC left as sent */
	memcpy(b, f, (size_t)*len);
	assert_int_equal(nr_parse(b, (uint32_t)*len, &p), NR_PKT_ROCE);
	b[p.pay_off + (g * 7 + r) % p.pay_len] ^= (uint8_t)(1u << (g % 8));
	assert_false(nr_icrc_check(b, &p));
	hz_send(R, r, b, (uint32_t)*len, true);
}

void hz_case_bad_icrc(struct hz_drv *d)
{
	struct hz_run R;
	struct hz_acct a;

	setup(&R, d, HZ_VAL_PLAIN, 0x1C2Cu);
	R.before = bad_icrc_before;
	workload(&R);
	finish(&R, &a);
	/* dropped before the engine saw them: nothing else was dropped */
	assert_int_equal(a.other_drop, R.hostile);
	teardown(&R);
}
