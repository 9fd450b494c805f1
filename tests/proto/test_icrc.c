/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ICRC and the builders: ISA-L against a bitwise reference, a real CNP,
 * every single flipped byte outside the masked fields breaks the ICRC and
 * changes of the masked ones keep it, nr_icrc_update repairs it, and the
 * transport-only builder + nr_icrc_ip4 agree with the full-frame builder.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <isa-l/crc.h>
#include <zlib.h>

#include "proto_test.h"

static unsigned seed;
static uint8_t pay[9000];

/* The 74-byte ConnectX-4 Lx CNP (scapy test/contrib/roce.uts), ICRC 82 fd 00 2a. */
static const uint8_t cnp[74] = {
	0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2, 0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32, 0x08, 0x00,
	0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00, 0x40, 0x11, 0x91, 0x61, 0x0a, 0x00,
	0x11, 0x01, 0x0a, 0x00, 0x12, 0x01, 0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x82, 0xfd, 0x00, 0x2a,
};

static void test_real_cnp(void **state)
{
	struct nr_pkt p;

	assert_int_equal(nr_parse(cnp, sizeof(cnp), &p), NR_PKT_ROCE);
	assert_int_equal(p.opcode, NR_OP_CNP);
	assert_int_equal(p.qpn, 0x000118);
	assert_int_equal(p.becn, 1);
	assert_int_equal(p.fecn, 0);
	assert_int_equal(p.pay_len, 0);
	assert_int_equal(p.ecn, 2);
	assert_int_equal(p.end, 74);
	assert_int_equal(nr_icrc_stored(cnp, &p), 0x2a00fd82);
	assert_int_equal(nr_icrc_compute(cnp, &p), 0x2a00fd82);
	assert_int_equal(pt_ref_icrc(cnp, 14, 74), 0x2a00fd82);
	assert_true(nr_icrc_check(cnp, &p));
}

static int build(uint8_t *buf, const struct nr_flow *f, uint8_t op, uint32_t len, uint32_t k)
{
	struct nr_build_args a = {
		.opcode = op, .psn = k * 101, .ackreq = k & 1, .imm = k, .va = k * 4096ull,
		.rkey = 0x1234 + k, .dma_len = len, .syndrome = 0x1F, .msn = k, .qkey = 0x11,
		.sqp = 1,
	};
	int n = nr_build_frame(buf, FRAME_CAP, f, &a, pay, len);

	assert_true(n > 0);
	return n;
}

/* ISA-L's chained crc32_gzip_refl equals the bitwise reference on random packets. */
static void test_icrc_matches_reference(void **state)
{
	uint8_t buf[FRAME_CAP], ops[256];
	int nops = pt_all_opcodes(ops);

	for (int it = 0; it < 500; it++) {
		struct nr_flow f = pt_flow();
		uint8_t op = ops[rand() % nops];
		uint32_t len = nr_opcode_info(op)->mask & NR_OPF_PAYLOAD ? (uint32_t)(rand() % 4200) : 0;
		struct nr_pkt p;
		int n;

		f.vlan = rand() & 1;
		f.tos = (uint8_t)rand();
		f.ttl = (uint8_t)rand();
		f.saddr = (uint32_t)rand();
		f.dqpn = (uint32_t)rand();
		for (uint32_t i = 0; i < len; i++)
			pay[i] = (uint8_t)rand();
		n = build(buf, &f, op, len, (uint32_t)it);
		assert_int_equal(nr_parse(buf, (uint32_t)n, &p), NR_PKT_ROCE);
		assert_int_equal(nr_icrc_stored(buf, &p), pt_ref_icrc(buf, p.l3_off, p.end));
		assert_int_equal(nr_icrc_compute(buf, &p), nr_icrc_stored(buf, &p));
		assert_true(nr_icrc_check(buf, &p));
	}
}

/* nr_crc32 is zlib's CRC-32, chained, at every length and split (ISA-L's
 * kernels change at 16, 64, 256 bytes). */
static void test_crc32_matches_zlib(void **state)
{
	uint8_t b[1500];

	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)rand();
	for (size_t len = 0; len <= sizeof(b); len += len < 300 ? 1 : 97) {
		uint32_t want = (uint32_t)crc32(0, b, (uInt)len);
		size_t cut = len ? (size_t)rand() % len : 0;

		assert_int_equal(nr_crc32(0, b, len), want);
		assert_int_equal(nr_crc32(nr_crc32(0, b, cut), b + cut, len - cut), want);
	}
}

/* A random RoCE frame of one of ops (payload up to 4200 bytes, VLAN or not), parsed. */
static void random_frame(uint8_t *buf, const uint8_t *ops, int nops, int it, struct nr_pkt *p)
{
	struct nr_flow f = pt_flow();
	uint8_t op = ops[rand() % nops];
	uint32_t len = nr_opcode_info(op)->mask & NR_OPF_PAYLOAD ? (uint32_t)(rand() % 4200) : 0;
	int n;

	f.vlan = rand() & 1;
	for (uint32_t i = 0; i < len; i++)
		pay[i] = (uint8_t)rand();
	n = build(buf, &f, op, len, (uint32_t)it);
	assert_int_equal(nr_parse(buf, (uint32_t)n, p), NR_PKT_ROCE);
}

/* A shared tail for frame p: the payload and pad, a part of it, or past the
 * BTH (nr_icrc_compute_tail's fallback), by it % 3. */
static uint32_t pick_tail(const struct nr_pkt *p, int it)
{
	switch (it % 3) {
	case 0: return p->end - NR_ICRC_LEN - p->pay_off;
	case 1: return (uint32_t)rand() % (p->end - NR_ICRC_LEN - p->pay_off + 1);
	default: return p->end - NR_ICRC_LEN - p->l4_off;
	}
}

/*
 * The shared-tail ICRC: nr_crc_shift against zlib's crc32_combine for random
 * states and lengths, and nr_icrc_compute_tail over the payload (any tail
 * length up to payload + pad) equal to nr_icrc_compute on random frames of
 * every opcode, with the fallback for a tail longer than the frame allows.
 */
static void test_icrc_shared_tail(void **state)
{
	uint8_t buf[FRAME_CAP], ops[256];
	int nops = pt_all_opcodes(ops);
	static struct nr_crc_shift k;

	for (int it = 0; it < 300; it++) {
		uint32_t len = (uint32_t)(rand() % 9000), c1 = (uint32_t)rand() ^ (uint32_t)rand() << 16;
		uint32_t c2 = (uint32_t)rand() ^ (uint32_t)rand() << 16;

		nr_crc_shift_init(&k, len);
		assert_int_equal(nr_crc_shift(&k, c1) ^ c2, (uint32_t)crc32_combine(c1, c2, (z_off_t)len));
	}
	for (int it = 0; it < 500; it++) {
		uint32_t tail, tcrc;
		struct nr_pkt p;

		random_frame(buf, ops, nops, it, &p);
		tail = pick_tail(&p, it);
		nr_crc_shift_init(&k, tail);
		tcrc = crc32_gzip_refl(0, buf + p.end - NR_ICRC_LEN - tail, tail);
		assert_int_equal(nr_icrc_compute_tail(buf, &p, tcrc, &k), nr_icrc_stored(buf, &p));
	}
}

/*
 * The head kept by nr_icrc_check_keep: the box's results (new payload and
 * ImmDt behind the same headers, ECN and TTL changed) get from
 * nr_icrc_compute_tail the ICRC nr_icrc_compute gives them, for every
 * opcode and tail length; a frame that fails the check keeps no head.
 */
static void test_icrc_kept_head(void **state)
{
	uint8_t buf[FRAME_CAP], ops[256];
	int nops = pt_all_opcodes(ops);
	static struct nr_crc_shift k;

	for (int it = 0; it < 500; it++) {
		uint32_t tail, tcrc, at;
		struct nr_pkt p;

		random_frame(buf, ops, nops, it, &p);
		if (it % 5 == 4) {      /* a byte of the ICRC's region flipped */
			at = p.l3_off + 2 + (uint32_t)rand() % (p.end - NR_ICRC_LEN - p.l3_off - 2);
			buf[at] ^= 0x10;
			if (!nr_icrc_check(buf, &p)) {
				assert_false(nr_icrc_check_keep(buf, &p));
				assert_false(p.icrc_head_ok);
				continue;
			}
			buf[at] ^= 0x10;   /* a masked byte: still good */
		}
		assert_true(nr_icrc_check_keep(buf, &p));
		assert_true(p.icrc_head_ok);
		/* the result: every byte after the BTH new, ECN-CE and TTL */
		for (uint32_t i = p.bth_off + 12u; i < (uint32_t)(p.end - NR_ICRC_LEN); i++)
			buf[i] = (uint8_t)rand();
		if (p.ipver == 4) {
			buf[p.l3_off + 1] |= NR_ECN_CE;
			buf[p.l3_off + 8]--;
		}
		tail = pick_tail(&p, it);
		nr_crc_shift_init(&k, tail);
		tcrc = crc32_gzip_refl(0, buf + p.end - NR_ICRC_LEN - tail, tail);
		assert_int_equal(nr_icrc_compute_tail(buf, &p, tcrc, &k), nr_icrc_compute(buf, &p));
	}
}

/* Is byte i (frame offset) of a no-VLAN IPv4 frame a masked ICRC field? */
static bool masked_v4(uint32_t i, uint8_t x)
{
	return i == 14 + 1 || i == 14 + 8 || i == 14 + 10 || i == 14 + 11 || /* TOS TTL check */
	       i == 34 + 6 || i == 34 + 7 ||                                   /* UDP checksum */
	       i == 42 + 4;                                                    /* BTH byte 4 */
}

static bool masked_v6(uint32_t i, uint8_t x)
{
	/* Traffic class and flow label (low nibble of byte 0, bytes 1-3), hop limit. */
	if (i == 14)
		return !(x & 0xF0);    /* the version nibble is covered */
	return (i >= 14 + 1 && i <= 14 + 3) || i == 14 + 7 || i == 54 + 6 || i == 54 + 7 ||
	       i == 62 + 4;
}

static void flip_every_byte(uint8_t *buf, uint32_t n, const struct nr_pkt *p,
			    bool (*masked)(uint32_t, uint8_t))
{
	static const uint8_t flips[] = { 0x01, 0x80, 0xFF };

	for (uint32_t i = 0; i < n; i++) {
		for (size_t k = 0; k < sizeof(flips); k++) {
			bool ok;

			buf[i] ^= flips[k];
			/* The layout of the original frame, the bytes of the flipped one. */
			ok = nr_icrc_check(buf, p);
			buf[i] ^= flips[k];
			if (i < p->l3_off)
				assert_true(ok);       /* Ethernet is not covered */
			else if (masked(i, flips[k]))
				assert_true(ok);
			else if (ok)
				fail_msg("byte %u ^ 0x%02x did not break the ICRC", i, flips[k]);
		}
	}
	assert_true(nr_icrc_check(buf, p));
}

/*
 * Both ICRC paths against the reference: IPv4 without options (the header
 * masked in registers), the same packets with IP options and behind a VLAN
 * tag (the generic path), every masked field randomized each time.
 */
static void test_icrc_ipv4_paths(void **state)
{
	uint8_t buf[FRAME_CAP], opt[FRAME_CAP];

	for (int it = 0; it < 300; it++) {
		struct nr_flow f = pt_flow();
		uint32_t len = (uint32_t)(rand() % 1100) & ~3u, olen = 4u * (1 + rand() % 10);
		struct nr_pkt p, q;
		int n;

		f.tos = (uint8_t)rand();
		f.ttl = (uint8_t)rand();
		f.vlan = it & 1;
		f.vlan_tci = (uint16_t)it;
		n = build(buf, &f, NR_OP_RC_WRITE_ONLY_IMM, len, (uint32_t)it);
		assert_int_equal(nr_parse(buf, (uint32_t)n, &p), NR_PKT_ROCE);
		buf[p.l4_off + 6] = (uint8_t)rand();          /* UDP checksum: masked */
		buf[p.bth_off + 4] |= (uint8_t)(rand() & 0xC0); /* FECN/BECN: masked */
		assert_int_equal(nr_icrc_compute(buf, &p), pt_ref_icrc(buf, p.l3_off, p.end));

		/* the same packet with olen bytes of IP options (NOPs) */
		memcpy(opt, buf, p.l4_off);
		memset(opt + p.l4_off, 1, olen);
		memcpy(opt + p.l4_off + olen, buf + p.l4_off, (size_t)n - p.l4_off);
		opt[p.l3_off] = (uint8_t)(0x40 | (5 + olen / 4));
		nr_st_be16(opt + p.l3_off + 2, (uint16_t)(p.end - p.l3_off + olen));
		assert_int_equal(nr_parse(opt, (uint32_t)n + olen, &q), NR_PKT_ROCE);
		assert_int_equal(q.l4_off - q.l3_off, 20 + olen);
		assert_int_equal(nr_icrc_compute(opt, &q), pt_ref_icrc(opt, q.l3_off, q.end));
	}
}

static void test_icrc_flip_every_byte(void **state)
{
	static const struct { uint8_t op; uint32_t len; } cases[] = {
		{ NR_OP_RC_WRITE_ONLY_IMM, 61 }, { NR_OP_RC_ACK, 0 }, { NR_OP_RC_WRITE_MIDDLE, 256 },
		{ NR_OP_UD_SEND_ONLY, 5 },
	};
	uint8_t buf[FRAME_CAP], v6[FRAME_CAP];

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct nr_flow f = pt_flow();
		struct nr_pkt p;
		int n = build(buf, &f, cases[c].op, cases[c].len, (uint32_t)c);
		uint32_t n6;

		assert_int_equal(nr_parse(buf, (uint32_t)n, &p), NR_PKT_ROCE);
		flip_every_byte(buf, (uint32_t)n, &p, masked_v4);

		n6 = pt_to_ipv6(buf, (uint32_t)n, v6, 0x28, 0x12345);
		assert_int_equal(nr_parse(v6, n6, &p), NR_PKT_ROCE);
		flip_every_byte(v6, n6, &p, masked_v6);
	}
}

/* In-flight changes of masked fields, done the way a router or switch does them. */
static void test_icrc_kept_by_masked_changes(void **state)
{
	uint8_t buf[FRAME_CAP];
	struct nr_flow f = pt_flow();
	struct nr_pkt p, q;
	int n = build(buf, &f, NR_OP_RC_WRITE_FIRST, 1024, 7);
	struct nr_ipv4_hdr *ip = (struct nr_ipv4_hdr *)(buf + 14);
	struct nr_bth *bth = (struct nr_bth *)(buf + 42);
	uint16_t c;

	assert_int_equal(nr_parse(buf, (uint32_t)n, &p), NR_PKT_ROCE);
	ip->ttl = 3;                     /* decremented TTL */
	ip->tos = (ip->tos & ~NR_ECN_MASK) | NR_ECN_CE; /* ECN CE mark */
	ip->tos |= 0xB8;                 /* DSCP rewrite */
	c = nr_ipv4_cksum(ip);
	memcpy(&ip->check, &c, 2);       /* checksum refreshed */
	nr_st_be16(buf + 34 + 6, 0xBEEF); /* a UDP checksum filled in */
	nr_bth_set_fecn(bth, true);      /* FECN/BECN marking */
	nr_bth_set_becn(bth, true);
	buf[42 + 4] |= 0x3F;             /* and the reserved bits of that byte */
	assert_int_equal(nr_parse(buf, (uint32_t)n, &q), NR_PKT_ROCE);
	assert_int_equal(q.ecn, NR_ECN_CE);
	assert_int_equal(q.fecn, 1);
	assert_true(nr_icrc_check(buf, &q));

	/* Any unmasked change needs a new ICRC, which nr_icrc_update provides. */
	nr_bth_set_psn(bth, 0x777777);
	assert_false(nr_icrc_check(buf, &q));
	nr_icrc_update(buf, &q);
	assert_true(nr_icrc_check(buf, &q));
	buf[q.pay_off + 100] ^= 0x5A;
	assert_false(nr_icrc_check(buf, &q));
	nr_icrc_update(buf, &q);
	assert_true(nr_icrc_check(buf, &q));
	assert_int_equal(nr_icrc_stored(buf, &q), pt_ref_icrc(buf, 14, q.end));
}

/* nr_build_transport + nr_icrc_ip4 == nr_build_frame with the same IP fields. */
static void test_transport_equals_frame(void **state)
{
	uint8_t frame[FRAME_CAP], tr[FRAME_CAP], ops[256];
	int nops = pt_all_opcodes(ops);

	for (int o = 0; o < nops; o++) {
		for (int r = 0; r < 6; r++) {
			uint8_t op = ops[o];
			uint32_t len = nr_opcode_info(op)->mask & NR_OPF_PAYLOAD ?
				       (uint32_t)(rand() % 2100) : 0;
			struct nr_flow f = pt_flow();
			struct nr_build_args a = {
				.opcode = op, .psn = (uint32_t)rand(), .ackreq = r & 1,
				.se = r & 2, .imm = (uint32_t)rand(), .va = (uint64_t)rand() << 20,
				.rkey = (uint32_t)rand(), .dma_len = len, .syndrome = (uint8_t)rand(),
				.msn = (uint32_t)rand(), .qkey = (uint32_t)rand(), .sqp = 1,
				.becn = r == 3,
			};
			struct nr_icrc_ip4 ip;
			struct nr_pkt p;
			int n, t;

			f.saddr = (uint32_t)rand();
			f.daddr = (uint32_t)rand();
			f.sport = (uint16_t)rand();
			f.ip_id = r == 0 ? 0 : (uint16_t)rand();
			f.frag_off = r & 1 ? NR_IPV4_DF : 0;
			f.tos = (uint8_t)rand();      /* masked: need not match */
			f.ttl = (uint8_t)rand();
			f.dqpn = (uint32_t)rand() & 0xFFFFFF;
			f.vlan = r == 5;
			ip = (struct nr_icrc_ip4){ .saddr = f.saddr, .daddr = f.daddr,
						   .sport = f.sport, .dport = NR_ROCEV2_PORT,
						   .id = f.ip_id, .frag_off = f.frag_off };
			n = nr_build_frame(frame, sizeof(frame), &f, &a, pay, len);
			t = nr_build_transport(tr, sizeof(tr), &ip, f.dqpn, &a, pay, len);
			assert_true(n > 0 && t > 0);
			assert_int_equal(nr_parse(frame, (uint32_t)n, &p), NR_PKT_ROCE);
			assert_int_equal(t, p.end - p.bth_off);
			/* Byte-identical transport, ICRC included. */
			assert_memory_equal(tr, frame + p.bth_off, (size_t)t);
			assert_int_equal(nr_icrc_ip4(&ip, tr, (size_t)t - 4), nr_icrc_stored(frame, &p));
		}
	}
}

static void test_builder_headers(void **state)
{
	uint8_t buf[FRAME_CAP];
	struct nr_flow f = pt_flow();
	int n = build(buf, &f, NR_OP_RC_WRITE_LAST_IMM, 1021, 3);
	const struct nr_ipv4_hdr *ip = (const void *)(buf + 14);
	uint32_t sum = 0;

	assert_int_equal(n, 14 + 20 + 8 + 16 + 1024 + 4);
	assert_memory_equal(buf, f.dst_mac, 6);
	assert_memory_equal(buf + 6, f.src_mac, 6);
	assert_int_equal(nr_ld_be16(buf + 12), NR_ETHERTYPE_IPV4);
	assert_int_equal(ip->ver_ihl, 0x45);
	assert_int_equal(ip->tos, f.tos);
	assert_int_equal(ip->ttl, 64);                 /* default */
	assert_int_equal(ip->proto, 17);
	assert_int_equal(nr_ld_be16(&ip->tot_len), n - 14);
	assert_int_equal(nr_ld_be16(&ip->id), f.ip_id);
	assert_int_equal(nr_ld_be16(&ip->frag_off), NR_IPV4_DF);
	for (int i = 0; i < 20; i += 2)                /* header sums to 0xFFFF */
		sum += nr_ld_be16(buf + 14 + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	assert_int_equal(sum, 0xFFFF);
	assert_int_equal(nr_ld_be16(buf + 34), f.sport);
	assert_int_equal(nr_ld_be16(buf + 36), 4791);
	assert_int_equal(nr_ld_be16(buf + 38), n - 34);
	assert_int_equal(nr_ld_be16(buf + 40), 0);     /* UDP checksum 0 */
	assert_int_equal(buf[42], NR_OP_RC_WRITE_LAST_IMM);
	assert_int_equal(buf[43], 0x30);               /* PadCnt 3, TVer 0 */
	assert_int_equal(nr_ld_be16(buf + 44), 0xFFFF); /* default P_Key */
	assert_int_equal(buf[46], 0);
	for (int i = 0; i < 3; i++)                    /* pad bytes are zero */
		assert_int_equal(buf[58 + 1021 + i], 0);

	f.vlan = true;
	f.vlan_tci = 0xE00A;
	f.ttl = 9;
	f.pkey = 0x8001;
	n = build(buf, &f, NR_OP_RC_ACK, 0, 1);
	assert_int_equal(n, 18 + 20 + 8 + 16 + 4);
	assert_int_equal(nr_ld_be16(buf + 12), NR_ETHERTYPE_VLAN);
	assert_int_equal(nr_ld_be16(buf + 14), 0xE00A);
	assert_int_equal(nr_ld_be16(buf + 16), NR_ETHERTYPE_IPV4);
	assert_int_equal(buf[18 + 8], 9);
	assert_int_equal(nr_ld_be16(buf + 46 + 2), 0x8001);
}

static void test_builder_errors(void **state)
{
	uint8_t buf[FRAME_CAP];
	struct nr_flow f = pt_flow();
	struct nr_build_args a = { .opcode = NR_OP_RC_SEND_ONLY };
	struct nr_icrc_ip4 ip = { 0 };
	int n;

	/* Exactly the right capacity works, one byte less does not. */
	n = nr_build_frame(buf, FRAME_CAP, &f, &a, pay, 100);
	assert_int_equal(n, 14 + 20 + 8 + 12 + 100 + 4);
	assert_int_equal(nr_build_frame(buf, (size_t)n, &f, &a, pay, 100), n);
	assert_int_equal(nr_build_frame(buf, (size_t)n - 1, &f, &a, pay, 100), -ENOSPC);
	assert_int_equal(nr_build_transport(buf, 12 + 100 + 4, &ip, 1, &a, pay, 100), 116);
	assert_int_equal(nr_build_transport(buf, 115, &ip, 1, &a, pay, 100), -ENOSPC);
	/* Unknown opcodes, payload where none is carried, no payload pointer, too big. */
	a.opcode = 0x40;
	assert_int_equal(nr_build_frame(buf, FRAME_CAP, &f, &a, NULL, 0), -EINVAL);
	assert_int_equal(nr_build_transport(buf, FRAME_CAP, &ip, 1, &a, NULL, 0), -EINVAL);
	a.opcode = NR_OP_RC_ACK;
	assert_int_equal(nr_build_frame(buf, FRAME_CAP, &f, &a, pay, 4), -EINVAL);
	assert_int_equal(nr_build_transport(buf, FRAME_CAP, &ip, 1, &a, pay, 4), -EINVAL);
	a.opcode = NR_OP_RC_SEND_ONLY;
	assert_int_equal(nr_build_frame(buf, FRAME_CAP, &f, &a, NULL, 4), -EINVAL);
	assert_int_equal(nr_build_frame(buf, FRAME_CAP, &f, &a, pay, 70000), -EINVAL);
	assert_int_equal(nr_build_transport(buf, FRAME_CAP, &ip, 1, &a, pay, 70000), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_cnp),
		cmocka_unit_test(test_icrc_matches_reference),
		cmocka_unit_test(test_crc32_matches_zlib),
		cmocka_unit_test(test_icrc_ipv4_paths),
		cmocka_unit_test(test_icrc_shared_tail),
		cmocka_unit_test(test_icrc_kept_head),
		cmocka_unit_test(test_icrc_flip_every_byte),
		cmocka_unit_test(test_icrc_kept_by_masked_changes),
		cmocka_unit_test(test_transport_equals_frame),
		cmocka_unit_test(test_builder_headers),
		cmocka_unit_test(test_builder_errors),
	};

	seed = getenv("NR_SEED") ? (unsigned)strtoul(getenv("NR_SEED"), NULL, 0) : (unsigned)time(NULL);
	printf("test_icrc: seed %u (NR_SEED=%u to repeat)\n", seed, seed);
	srand(seed);
	for (size_t i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(i * 29 + 3);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
