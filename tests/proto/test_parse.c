/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bounded parser: builder -> parser round trips for every opcode,
 * frames truncated at every length (each copy in an exactly sized heap
 * buffer, so ASan catches any read past the end), bad PadCnt, lengths that
 * disagree with the IP total length, VLAN, IPv6, IPv4 options, fragments,
 * non-RoCEv2 traffic, and seeded random corruption.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "proto_test.h"

static unsigned seed;

static uint8_t pay[9000];

/* Payload lengths to try for an opcode. */
static const uint32_t pay_lens[] = { 0, 1, 2, 3, 4, 5, 255, 256, 1024, 4096 };

static int build(uint8_t *buf, const struct nr_flow *f, const struct nr_build_args *a,
		 uint32_t len)
{
	int n = nr_build_frame(buf, FRAME_CAP, f, a, pay, len);

	assert_true(n > 0);
	return n;
}

/* Parse a copy in an exactly sized heap buffer. */
static int parse_exact(const uint8_t *frame, uint32_t len, struct nr_pkt *p)
{
	uint8_t *copy = malloc(len ? len : 1);
	int kind;

	assert_non_null(copy);
	memcpy(copy, frame, len);
	kind = nr_parse(len ? copy : copy + 1, len, p);
	free(copy);
	return kind;
}

static void expect_kind(const uint8_t *frame, uint32_t len, int kind, int bad)
{
	struct nr_pkt p;
	int k = parse_exact(frame, len, &p);

	if (k != kind || (kind == NR_PKT_MALFORMED && p.bad != bad)) {
		pt_hexdump("frame", frame, len);
		fail_msg("len %u: kind %d (%s), expected %d (%s)", len, k,
			 k == NR_PKT_MALFORMED ? nr_malformed_str(p.bad) : "-", kind,
			 kind == NR_PKT_MALFORMED ? nr_malformed_str(bad) : "-");
	}
	assert_int_equal(p.kind, k);
}

static struct nr_build_args args_for(uint8_t op, uint32_t i)
{
	struct nr_build_args a = {
		.opcode = op,
		.psn = (0xFFFFF0 + i * 7) & 0xFFFFFF,
		.ackreq = i & 1,
		.se = (i >> 1) & 1,
		.fecn = (i >> 2) & 1,
		.becn = (i >> 3) & 1,
		.va = 0x00007f0012345678ull + i,
		.rkey = 0xABCD0000u + i,
		.dma_len = 4096 + i,
		.imm = 0xC0DE0000u + i,
		.syndrome = (uint8_t)(i * 13),
		.msn = 0x00ABCDEFu - i,
		.qkey = 0x80010000u + i,
		.sqp = 1 + i,
	};
	return a;
}

static void check_fields(const struct nr_pkt *p, const struct nr_flow *f,
			 const struct nr_build_args *a, uint32_t len, uint32_t l2)
{
	const struct nr_opcode_info *i = nr_opcode_info(a->opcode);

	assert_int_equal(p->kind, NR_PKT_ROCE);
	assert_int_equal(p->ipver, 4);
	assert_int_equal(p->opcode, a->opcode);
	assert_int_equal(p->mask, i->mask);
	assert_int_equal(p->l3_off, l2);
	assert_int_equal(p->l4_off, l2 + 20);
	assert_int_equal(p->bth_off, l2 + 28);
	assert_int_equal(p->pay_off, l2 + 28 + i->length);
	assert_int_equal(p->pay_len, len);
	assert_int_equal(p->pad, (4 - len % 4) % 4);
	assert_int_equal(p->end, p->pay_off + len + p->pad + 4);
	assert_int_equal(p->has_vlan, f->vlan);
	assert_int_equal(p->vlan_tci, f->vlan ? f->vlan_tci : 0);
	assert_int_equal(p->ecn, f->tos & 3);
	assert_int_equal(p->udp_sport, f->sport);
	assert_int_equal(p->saddr, f->saddr);
	assert_int_equal(p->daddr, f->daddr);
	assert_int_equal(p->qpn, f->dqpn & 0xFFFFFF);
	assert_int_equal(p->psn, a->psn);
	assert_int_equal(p->ackreq, a->ackreq);
	assert_int_equal(p->se, a->se);
	assert_int_equal(p->fecn, a->fecn);
	assert_int_equal(p->becn, a->becn);
	if (i->mask & NR_OPF_RETH) {
		assert_true(p->reth_va == a->va);
		assert_int_equal(p->reth_rkey, a->rkey);
		assert_int_equal(p->reth_len, a->dma_len);
	}
	if (i->mask & NR_OPF_IMMDT)
		assert_int_equal(p->imm, a->imm);
	if (i->mask & NR_OPF_AETH) {
		assert_int_equal(p->aeth_syn, a->syndrome);
		assert_int_equal(p->aeth_msn, a->msn & 0xFFFFFF);
	}
	if (i->mask & NR_OPF_DETH) {
		assert_int_equal(p->deth_qkey, a->qkey);
		assert_int_equal(p->deth_sqp, a->sqp);
	}
}

static void test_roundtrip_all_opcodes(void **state)
{
	uint8_t ops[256], buf[FRAME_CAP];
	int nops = pt_all_opcodes(ops);
	uint32_t k = 0;

	assert_int_equal(nops, 23 + 12 + 2 + 1);
	for (int o = 0; o < nops; o++) {
		const struct nr_opcode_info *i = nr_opcode_info(ops[o]);

		for (size_t l = 0; l < sizeof(pay_lens) / sizeof(pay_lens[0]); l++) {
			uint32_t len = pay_lens[l];

			if (len && !(i->mask & NR_OPF_PAYLOAD))
				break;
			for (int vlan = 0; vlan < 2; vlan++, k++) {
				struct nr_flow f = pt_flow();
				struct nr_build_args a = args_for(ops[o], k);
				struct nr_pkt p;
				int n;

				f.vlan = vlan;
				f.vlan_tci = (uint16_t)(0x2000 | k);
				f.tos = (uint8_t)k;
				f.sport = (uint16_t)(k * 977);
				f.dqpn = 0xFF000000u | (k * 0x10101);
				n = build(buf, &f, &a, len);
				assert_int_equal(parse_exact(buf, (uint32_t)n, &p), NR_PKT_ROCE);
				check_fields(&p, &f, &a, len, vlan ? 18 : 14);
				assert_memory_equal(buf + p.pay_off, pay, len);
				assert_int_equal(p.end, n);
				assert_true(nr_icrc_check(buf, &p));
			}
		}
	}
}

/* Expected classification of a frame truncated to L bytes. */
static void check_truncations(const uint8_t *frame, uint32_t full, uint32_t l4, uint32_t oplen)
{
	uint32_t bth = l4 + 8;

	for (uint32_t L = 0; L <= full; L++) {
		if (L < l4 + 4)
			expect_kind(frame, L, NR_PKT_OTHER, 0);
		else if (L < l4 + 8)
			expect_kind(frame, L, NR_PKT_MALFORMED, NR_BAD_TRUNC_UDP);
		else if (L < bth + 12 + 4)
			expect_kind(frame, L, NR_PKT_MALFORMED, NR_BAD_TRUNC_BTH);
		else if (L < bth + oplen + 4)
			expect_kind(frame, L, NR_PKT_MALFORMED, NR_BAD_TRUNC_EXT);
		else if (L < full)
			expect_kind(frame, L, NR_PKT_MALFORMED, NR_BAD_BAD_IP_LEN);
		else
			expect_kind(frame, L, NR_PKT_ROCE, 0);
	}
}

static void test_truncated_every_length(void **state)
{
	static const struct { uint8_t op; uint32_t len; } cases[] = {
		{ NR_OP_RC_WRITE_ONLY_IMM, 37 }, { NR_OP_RC_WRITE_FIRST, 1024 },
		{ NR_OP_RC_WRITE_MIDDLE, 64 }, { NR_OP_RC_ACK, 0 }, { NR_OP_CNP, 0 },
		{ NR_OP_UD_SEND_ONLY_IMM, 3 }, { NR_OP_RC_READ_REQ, 0 },
		{ NR_OP_RC_CMP_SWAP, 0 }, { NR_OP_RC_ATOMIC_ACK, 0 },
	};
	uint8_t buf[FRAME_CAP], v6[FRAME_CAP];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int vlan = 0; vlan < 2; vlan++) {
			struct nr_flow f = pt_flow();
			struct nr_build_args a = args_for(cases[c].op, (uint32_t)c);
			uint32_t oplen = nr_opcode_info(cases[c].op)->length;
			int n;

			f.vlan = vlan;
			n = build(buf, &f, &a, cases[c].len);
			check_truncations(buf, (uint32_t)n, vlan ? 38 : 34, oplen);
			if (!vlan) {
				uint32_t n6 = pt_to_ipv6(buf, (uint32_t)n, v6, 0, 0);

				check_truncations(v6, n6, 54, oplen);
			}
		}
	}
}

static void test_trailer_ignored(void **state)
{
	uint8_t buf[FRAME_CAP];
	struct nr_flow f = pt_flow();
	struct nr_build_args a = args_for(NR_OP_RC_ACK, 1);
	struct nr_pkt p;
	int n = build(buf, &f, &a, 0);

	/* An ACK is 62 bytes: the sender pads it to 60 + FCS, or here 6 junk bytes. */
	memset(buf + n, 0xEE, 6);
	assert_int_equal(parse_exact(buf, (uint32_t)n + 6, &p), NR_PKT_ROCE);
	assert_int_equal(p.end, n);
	assert_true(nr_icrc_check(buf, &p));
}

/* Rewrite the IPv4 header of a built frame (no VLAN) and fix its checksum. */
static void set_ip16(uint8_t *buf, unsigned off, uint16_t v)
{
	uint16_t c;

	nr_st_be16(buf + 14 + off, v);
	c = nr_ipv4_cksum((const struct nr_ipv4_hdr *)(buf + 14));
	memcpy(buf + 24, &c, 2);
}

static void test_bad_padcnt(void **state)
{
	uint8_t buf[FRAME_CAP];
	struct nr_flow f = pt_flow();
	struct nr_build_args a = args_for(NR_OP_RC_WRITE_ONLY, 0);
	struct nr_pkt p;
	int n;

	/* WRITE_ONLY with 0 payload bytes: any PadCnt is larger than the payload. */
	n = build(buf, &f, &a, 0);
	for (int pad = 1; pad < 4; pad++) {
		nr_bth_set_pad((struct nr_bth *)(buf + 42), (uint8_t)pad);
		expect_kind(buf, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_BAD_PAD);
	}
	/* Two payload bytes (+2 pad on the wire = 4): PadCnt 3 is legal, 1 byte left. */
	n = build(buf, &f, &a, 2);
	nr_bth_set_pad((struct nr_bth *)(buf + 42), 3);
	assert_int_equal(parse_exact(buf, (uint32_t)n, &p), NR_PKT_ROCE);
	assert_int_equal(p.pay_len, 1);
	/* ACK carries nothing: PadCnt 1 points before the AETH. */
	a = args_for(NR_OP_RC_ACK, 0);
	n = build(buf, &f, &a, 0);
	nr_bth_set_pad((struct nr_bth *)(buf + 42), 1);
	expect_kind(buf, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_BAD_PAD);
}

static void test_lengths_disagree(void **state)
{
	uint8_t buf[FRAME_CAP], copy[FRAME_CAP];
	struct nr_flow f = pt_flow();
	struct nr_build_args a = args_for(NR_OP_RC_WRITE_LAST_IMM, 0);
	int n = build(buf, &f, &a, 64);
	uint16_t tot = nr_ld_be16(buf + 16), ulen = nr_ld_be16(buf + 38);
	struct nr_pkt p;

	/* IP total length past the frame. */
	memcpy(copy, buf, n);
	set_ip16(copy, 2, tot + 1);
	expect_kind(copy, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_BAD_IP_LEN);
	/* IP total length shorter than IP + UDP headers. */
	for (uint16_t t = 0; t < 28; t++) {
		memcpy(copy, buf, n);
		set_ip16(copy, 2, t);
		expect_kind(copy, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_BAD_IP_LEN);
	}
	/* IP length shorter than the UDP length says (rest would be trailer). */
	memcpy(copy, buf, n);
	set_ip16(copy, 2, tot - 4);
	expect_kind(copy, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_BAD_UDP_LEN);
	/* UDP length one off either way. */
	for (int d = -1; d <= 1; d += 2) {
		memcpy(copy, buf, n);
		nr_st_be16(copy + 38, (uint16_t)(ulen + d));
		expect_kind(copy, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_BAD_UDP_LEN);
	}
	/* Both shortened by 4 consistently: parses, the ICRC no longer matches. */
	memcpy(copy, buf, n);
	set_ip16(copy, 2, tot - 4);
	nr_st_be16(copy + 38, ulen - 4);
	assert_int_equal(parse_exact(copy, (uint32_t)n, &p), NR_PKT_ROCE);
	assert_int_equal(p.end, n - 4);
	assert_false(nr_icrc_check(copy, &p));
	/* Both so short that the BTH + ICRC do not fit, then the RETH-less ext. */
	memcpy(copy, buf, n);
	set_ip16(copy, 2, 20 + 8 + 15);
	nr_st_be16(copy + 38, 8 + 15);
	expect_kind(copy, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_TRUNC_BTH);
	memcpy(copy, buf, n);
	set_ip16(copy, 2, 20 + 8 + 19);
	nr_st_be16(copy + 38, 8 + 19);
	expect_kind(copy, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_TRUNC_EXT);
	/* IPv6 payload length past the frame / disagreeing with UDP. */
	{
		uint8_t v6[FRAME_CAP];
		uint32_t n6 = pt_to_ipv6(buf, (uint32_t)n, v6, 0, 0);
		uint16_t pl = nr_ld_be16(v6 + 18);

		nr_st_be16(v6 + 18, pl + 1);
		expect_kind(v6, n6, NR_PKT_MALFORMED, NR_BAD_BAD_IP_LEN);
		nr_st_be16(v6 + 18, pl - 4);
		expect_kind(v6, n6, NR_PKT_MALFORMED, NR_BAD_BAD_UDP_LEN);
	}
}

static void test_unexpected_payload(void **state)
{
	static const uint8_t ops[] = { NR_OP_RC_ACK, NR_OP_CNP, NR_OP_RC_READ_REQ,
				       NR_OP_RC_FETCH_ADD, NR_OP_RC_ATOMIC_ACK };
	uint8_t buf[FRAME_CAP];

	for (size_t o = 0; o < sizeof(ops); o++) {
		struct nr_flow f = pt_flow();
		struct nr_build_args a = args_for(ops[o], 0);
		int n = build(buf, &f, &a, 0);
		struct nr_pkt p;

		/* Grow the packet by 4 bytes inside both lengths. */
		set_ip16(buf, 2, (uint16_t)(n - 14 + 4));
		nr_st_be16(buf + 38, (uint16_t)(n - 34 + 4));
		memset(buf + n, 0, 4);
		expect_kind(buf, (uint32_t)n + 4, NR_PKT_MALFORMED, NR_BAD_UNEXPECTED_PAYLOAD);
		assert_int_equal(nr_build_frame(buf, FRAME_CAP, &f, &a, pay, 4), -EINVAL);
		(void)p;
	}
}

static void test_bad_bth(void **state)
{
	uint8_t buf[FRAME_CAP];
	struct nr_flow f = pt_flow();
	struct nr_build_args a = args_for(NR_OP_RC_SEND_ONLY, 0);
	int n = build(buf, &f, &a, 8);
	static const uint8_t unknown[] = { 0x15, 0x18, 0x1F, 0x2C, 0x40, 0x4A, 0x5F, 0x60, 0x66,
					   0x80, 0x82, 0xC0, 0xFF };

	for (size_t u = 0; u < sizeof(unknown); u++) {
		buf[42] = unknown[u];
		expect_kind(buf, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_UNKNOWN_OPCODE);
	}
	buf[42] = NR_OP_RC_SEND_ONLY;
	for (uint8_t tv = 1; tv < 16; tv++) {
		nr_bth_set_tver((struct nr_bth *)(buf + 42), tv);
		expect_kind(buf, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_BAD_TVER);
	}
}

static void test_ip_header_variants(void **state)
{
	uint8_t buf[FRAME_CAP], opt[FRAME_CAP];
	struct nr_flow f = pt_flow();
	struct nr_build_args a = args_for(NR_OP_RC_WRITE_ONLY, 0);
	int n = build(buf, &f, &a, 16);
	struct nr_pkt p;
	uint16_t c;

	/* IHL < 5 (with a UDP/4791 header where a 20-byte header ends). */
	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		memcpy(opt, buf, n);
		opt[14] = (uint8_t)(0x40 | ihl);
		expect_kind(opt, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_BAD_IHL);
	}
	/* A first fragment (MF) of UDP/4791 is malformed; a later one has no UDP header. */
	memcpy(opt, buf, n);
	set_ip16(opt, 6, NR_IPV4_MF);
	expect_kind(opt, (uint32_t)n, NR_PKT_MALFORMED, NR_BAD_IP_FRAGMENT);
	set_ip16(opt, 6, 0x0010);
	expect_kind(opt, (uint32_t)n, NR_PKT_OTHER, 0);
	/* DF alone is what RNICs send. */
	set_ip16(opt, 6, NR_IPV4_DF);
	expect_kind(opt, (uint32_t)n, NR_PKT_ROCE, 0);

	/* IHL 6: 4 option bytes (NOPs) are skipped and covered by the ICRC. */
	memcpy(opt, buf, 34);
	memset(opt + 34, 0x01, 4);
	memcpy(opt + 38, buf + 34, n - 34);
	opt[14] = 0x46;
	set_ip16(opt, 2, (uint16_t)(n - 14 + 4));
	assert_int_equal(parse_exact(opt, (uint32_t)n + 4, &p), NR_PKT_ROCE);
	assert_int_equal(p.l4_off, 38);
	assert_int_equal(p.bth_off, 46);
	assert_int_equal(p.pay_len, 16);
	nr_icrc_update(opt, &p);
	assert_int_equal(nr_icrc_stored(opt, &p), pt_ref_icrc(opt, 14, p.end));
	c = 0;
	(void)c;
	/* Version nibble 6 behind ethertype IPv4 is not RoCEv2. */
	memcpy(opt, buf, n);
	opt[14] = 0x65;
	expect_kind(opt, (uint32_t)n, NR_PKT_OTHER, 0);
}

static void test_ipv6(void **state)
{
	uint8_t buf[FRAME_CAP], v6[FRAME_CAP];
	struct nr_flow f = pt_flow();
	struct nr_build_args a = args_for(NR_OP_RC_WRITE_FIRST, 3);
	int n = build(buf, &f, &a, 1024);
	uint32_t n6 = pt_to_ipv6(buf, (uint32_t)n, v6, 0x6B, 0xABCDE);
	struct nr_pkt p;

	assert_int_equal(parse_exact(v6, n6, &p), NR_PKT_ROCE);
	assert_int_equal(p.ipver, 6);
	assert_int_equal(p.l3_off, 14);
	assert_int_equal(p.l4_off, 54);
	assert_int_equal(p.bth_off, 62);
	assert_int_equal(p.pay_len, 1024);
	assert_int_equal(p.ecn, 0x6B & 3);
	assert_int_equal(p.saddr, 0);
	assert_int_equal(p.reth_len, a.dma_len);
	assert_true(nr_icrc_check(v6, &p));
	/* Next header other than UDP (e.g. TCP, or an extension header) is not RoCEv2. */
	v6[20] = 6;
	expect_kind(v6, n6, NR_PKT_OTHER, 0);
	v6[20] = 0;
	expect_kind(v6, n6, NR_PKT_OTHER, 0);
}

/* A frame of the given ethertype with a recognisable body. */
static uint32_t raw_frame(uint8_t *b, uint16_t type, const uint8_t *body, uint32_t blen)
{
	memset(b, 0x11, 12);
	nr_st_be16(b + 12, type);
	memcpy(b + 14, body, blen);
	return 14 + blen;
}

static void test_not_rocev2(void **state)
{
	uint8_t buf[FRAME_CAP], fr[FRAME_CAP];
	struct nr_flow f = pt_flow();
	struct nr_build_args a = args_for(NR_OP_RC_SEND_ONLY, 0);
	int n = build(buf, &f, &a, 32);
	struct nr_pkt p;
	uint32_t m;

	/* ARP. */
	m = raw_frame(fr, NR_ETHERTYPE_ARP, buf + 14, 28);
	expect_kind(fr, m, NR_PKT_OTHER, 0);
	/* RoCEv1: ethertype 0x8915, GRH (40 B) + BTH: not ours even with valid transport. */
	m = raw_frame(fr, NR_ETHERTYPE_ROCE1, buf + 14, (uint32_t)n - 14);
	expect_kind(fr, m, NR_PKT_OTHER, 0);
	/* TCP to port 4791. */
	memcpy(fr, buf, n);
	fr[23] = 6;
	expect_kind(fr, (uint32_t)n, NR_PKT_OTHER, 0);
	/* UDP from 4791 to another port. */
	memcpy(fr, buf, n);
	nr_st_be16(fr + 34, NR_ROCEV2_PORT);
	nr_st_be16(fr + 36, 4792);
	expect_kind(fr, (uint32_t)n, NR_PKT_OTHER, 0);
	/* The source port is entropy: any value is RoCEv2. */
	for (uint32_t sp = 0; sp < 65536; sp += 4791) {
		memcpy(fr, buf, n);
		nr_st_be16(fr + 34, (uint16_t)sp);
		assert_int_equal(parse_exact(fr, (uint32_t)n, &p), NR_PKT_ROCE);
		assert_int_equal(p.udp_sport, sp);
	}
	/* VLAN-tagged ARP, a truncated tag, a frame shorter than Ethernet. */
	memcpy(fr, buf, 12);
	nr_st_be16(fr + 12, NR_ETHERTYPE_VLAN);
	nr_st_be16(fr + 14, 0x0064);
	nr_st_be16(fr + 16, NR_ETHERTYPE_ARP);
	memset(fr + 18, 0, 28);
	assert_int_equal(parse_exact(fr, 46, &p), NR_PKT_OTHER);
	assert_int_equal(p.has_vlan, 1);
	assert_int_equal(p.vlan_tci, 0x64);
	expect_kind(fr, 16, NR_PKT_OTHER, 0);
	expect_kind(buf, 13, NR_PKT_OTHER, 0);
	/* Two stacked tags (QinQ) are not parsed. */
	memcpy(fr, buf, 12);
	nr_st_be16(fr + 12, NR_ETHERTYPE_VLAN);
	nr_st_be16(fr + 14, 1);
	nr_st_be16(fr + 16, NR_ETHERTYPE_VLAN);
	nr_st_be16(fr + 18, 2);
	memcpy(fr + 20, buf + 12, n - 12);
	expect_kind(fr, (uint32_t)n + 8, NR_PKT_OTHER, 0);
	/* OTHER leaves no stale RoCE fields behind. */
	memcpy(fr, buf, n);
	fr[23] = 6;
	parse_exact(fr, (uint32_t)n, &p);
	assert_int_equal(p.qpn, 0);
	assert_int_equal(p.ipver, 0);
	assert_int_equal(p.opcode, 0);
}

static void test_parse_transport(void **state)
{
	uint8_t buf[FRAME_CAP];
	struct nr_icrc_ip4 ip = { .saddr = htonl(0x0A000001), .daddr = htonl(0x0A000002),
				  .sport = 50000, .dport = NR_ROCEV2_PORT, .id = 0,
				  .frag_off = NR_IPV4_DF };
	struct nr_build_args a = args_for(NR_OP_RC_WRITE_ONLY_IMM, 5);
	struct nr_pkt p;
	int n = nr_build_transport(buf, sizeof(buf), &ip, 0x42, &a, pay, 30);

	assert_int_equal(n, 32 + 30 + 2 + 4);
	assert_int_equal(nr_parse_transport(buf, (uint32_t)n, &p), NR_PKT_ROCE);
	assert_int_equal(p.bth_off, 0);
	assert_int_equal(p.l3_off, 0);
	assert_int_equal(p.pay_off, 32);
	assert_int_equal(p.pay_len, 30);
	assert_int_equal(p.end, n);
	assert_int_equal(p.qpn, 0x42);
	assert_int_equal(p.imm, a.imm);
	assert_int_equal(p.ipver, 0);
	assert_int_equal(p.saddr, 0);
	assert_false(nr_icrc_check(buf, &p));  /* no IP header: use nr_icrc_ip4 */
	assert_int_equal(nr_icrc_ip4(&ip, buf, p.end - 4), pt_ld_le32(buf + p.end - 4));
	for (uint32_t L = 0; L < (uint32_t)n; L++) {
		uint8_t *c = malloc(L ? L : 1);
		int k;

		assert_non_null(c);
		memcpy(c, buf, L);
		k = nr_parse_transport(c, L, &p);
		free(c);
		if (L < 16) {
			assert_int_equal(k, NR_PKT_MALFORMED);
			assert_int_equal(p.bad, NR_BAD_TRUNC_BTH);
		} else if (L < 36) {
			assert_int_equal(k, NR_PKT_MALFORMED);
			assert_int_equal(p.bad, NR_BAD_TRUNC_EXT);
		} else if (L < 38) {
			/* Fewer bytes after the headers than the PadCnt of 2. */
			assert_int_equal(k, NR_PKT_MALFORMED);
			assert_int_equal(p.bad, NR_BAD_BAD_PAD);
		} else {
			/* Without an IP length the transport cannot tell it was cut. */
			assert_int_equal(k, NR_PKT_ROCE);
			assert_int_equal(p.pay_len, L - 38);
		}
	}
	assert_int_equal(nr_parse_transport(buf, 70000, &p), NR_PKT_MALFORMED);
}

/* Seeded random corruption: never a crash, and accepted packets are consistent. */
static void test_random_corruption(void **state)
{
	uint8_t buf[FRAME_CAP], ops[256];
	int nops = pt_all_opcodes(ops);

	for (int it = 0; it < 20000; it++) {
		struct nr_flow f = pt_flow();
		struct nr_build_args a = args_for(ops[rand() % nops], (uint32_t)it);
		uint32_t len = nr_opcode_info(a.opcode)->mask & NR_OPF_PAYLOAD ?
			       (uint32_t)(rand() % 300) : 0;
		struct nr_pkt p;
		int n, flips = 1 + rand() % 4;

		f.vlan = rand() & 1;
		n = build(buf, &f, &a, len);
		for (int k = 0; k < flips; k++)
			buf[rand() % (n < 64 ? n : 64)] ^= (uint8_t)(1 + rand() % 255);
		n = rand() % 8 ? n : rand() % (n + 1);
		if (parse_exact(buf, (uint32_t)n, &p) == NR_PKT_ROCE) {
			const struct nr_opcode_info *i = nr_opcode_info(p.opcode);

			assert_non_null(i);
			assert_true(p.end <= (uint32_t)n);
			assert_int_equal(p.pay_off + p.pay_len + p.pad + 4, p.end);
			assert_int_equal(p.pay_off, p.bth_off + i->length);
			assert_true(p.ipver == 4 || p.ipver == 6);
			(void)nr_icrc_check(buf, &p);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip_all_opcodes),
		cmocka_unit_test(test_truncated_every_length),
		cmocka_unit_test(test_trailer_ignored),
		cmocka_unit_test(test_bad_padcnt),
		cmocka_unit_test(test_lengths_disagree),
		cmocka_unit_test(test_unexpected_payload),
		cmocka_unit_test(test_bad_bth),
		cmocka_unit_test(test_ip_header_variants),
		cmocka_unit_test(test_ipv6),
		cmocka_unit_test(test_not_rocev2),
		cmocka_unit_test(test_parse_transport),
		cmocka_unit_test(test_random_corruption),
	};

	seed = getenv("NR_SEED") ? (unsigned)strtoul(getenv("NR_SEED"), NULL, 0) : (unsigned)time(NULL);
	printf("test_parse: seed %u (NR_SEED=%u to repeat)\n", seed, seed);
	srand(seed);
	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(i * 31 + 7);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
