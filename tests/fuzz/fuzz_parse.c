/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * fuzz_parse: one raw Ethernet frame through the wire library.
 *
 *   nr_parse()            kind/reason consistent, every offset inside the frame,
 *                         pay_off + pay_len + pad + ICRC == end <= len,
 *                         fields equal the bytes they came from;
 *   ICRC                  check() == (compute() == stored()); update() on a copy
 *                         touches only the 4 ICRC bytes and then check() passes;
 *                         for IHL-5 IPv4 frames nr_icrc_ip4() agrees;
 *   nr_parse_transport()  on the raw bytes (never OTHER, offsets inside) and on
 *                         [BTH, end) of a RoCE frame (same decode);
 *   builders              the input also read as builder arguments (opcode, PSN,
 *                         QPN, flags, RETH/AETH/ImmDt/DETH fields, VLAN, payload):
 *                         nr_build_frame() and nr_build_transport() either refuse
 *                         (-EINVAL/-ENOSPC) or write what nr_parse() and
 *                         nr_parse_transport() read back field for field, with a
 *                         good ICRC.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/roce_build.h"
#include "proto/roce_icrc.h"
#include "proto/roce_opcode.h"
#include "proto/roce_pkt.h"

#include "nrz_fuzz.h"

static void check_common(const struct nr_pkt *p, int kind, uint32_t len)
{
	NRZ_CHECK(kind == p->kind, "returned %d, record says %u", kind, p->kind);
	NRZ_CHECK(kind == NR_PKT_OTHER || kind == NR_PKT_ROCE || kind == NR_PKT_MALFORMED,
		  "kind %d", kind);
	if (kind == NR_PKT_MALFORMED) {
		NRZ_CHECK(p->bad > NR_BAD_NONE && p->bad < NR_BAD_MAX, "bad %u", p->bad);
		NRZ_CHECK(nr_malformed_str(p->bad) != NULL, "no name for reason %u", p->bad);
	} else {
		NRZ_CHECK(p->bad == NR_BAD_NONE, "kind %d with reason %u", kind, p->bad);
	}
	if (kind != NR_PKT_ROCE)
		return;

	const struct nr_opcode_info *oi = nr_opcode_info(p->opcode);

	NRZ_CHECK(oi != NULL, "RoCE with unknown opcode 0x%02x", p->opcode);
	NRZ_CHECK(p->mask == oi->mask, "mask 0x%x, table 0x%x", p->mask, oi->mask);
	NRZ_CHECK(p->pay_off == p->bth_off + oi->length, "pay_off %u, bth_off %u + %u",
		  p->pay_off, p->bth_off, oi->length);
	NRZ_CHECK(p->pad <= 3, "pad %u", p->pad);
	NRZ_CHECK((uint32_t)p->pay_off + p->pay_len + p->pad + NR_ICRC_LEN == p->end,
		  "pay_off %u + pay_len %u + pad %u + 4 != end %u",
		  p->pay_off, p->pay_len, p->pad, p->end);
	NRZ_CHECK(p->end <= len, "end %u past the frame (%u)", p->end, len);
	NRZ_CHECK((p->mask & NR_OPF_PAYLOAD) || (p->pay_len == 0 && p->pad == 0),
		  "opcode 0x%02x carries no payload, got %u + pad %u", p->opcode,
		  p->pay_len, p->pad);
	NRZ_CHECK(p->qpn <= NR_BTH_QPN_MASK && p->psn <= NR_PSN_MASK, "qpn/psn range");
	NRZ_CHECK(p->ecn <= 3, "ecn %u", p->ecn);
	NRZ_CHECK(nr_opcode_name(p->opcode) != NULL, "opcode name");
}

/* The record's transport fields equal the bytes at its offsets. */
static void check_fields(const uint8_t *f, const struct nr_pkt *p)
{
	const struct nr_bth *b = (const struct nr_bth *)(f + p->bth_off);
	const struct nr_opcode_info *oi = nr_opcode_info(p->opcode);

	NRZ_CHECK(nr_bth_opcode(b) == p->opcode, "opcode");
	NRZ_CHECK(nr_bth_psn(b) == p->psn && nr_bth_qpn(b) == p->qpn, "psn/qpn");
	NRZ_CHECK(nr_bth_pad(b) == p->pad, "pad %u vs %u", nr_bth_pad(b), p->pad);
	NRZ_CHECK(nr_bth_tver(b) == 0, "tver %u accepted", nr_bth_tver(b));
	if (p->mask & NR_OPF_RETH) {
		const struct nr_reth *r = (const void *)(f + p->bth_off + oi->offset[NR_EXT_RETH]);

		NRZ_CHECK(nr_reth_len(r) == p->reth_len && nr_reth_va(r) == p->reth_va &&
			  nr_reth_rkey(r) == p->reth_rkey, "RETH");
	}
	if (p->mask & NR_OPF_IMMDT) {
		const struct nr_immdt *i = (const void *)(f + p->bth_off + oi->offset[NR_EXT_IMMDT]);

		NRZ_CHECK(nr_immdt_imm(i) == p->imm, "imm 0x%x vs 0x%x", nr_immdt_imm(i), p->imm);
	}
	if (p->mask & NR_OPF_AETH) {
		const struct nr_aeth *a = (const void *)(f + p->bth_off + oi->offset[NR_EXT_AETH]);

		NRZ_CHECK(nr_aeth_syn(a) == p->aeth_syn && nr_aeth_msn(a) == p->aeth_msn, "AETH");
	}
}

static void check_frame_roce(const uint8_t *f, uint32_t len, const struct nr_pkt *p)
{
	NRZ_CHECK(p->ipver == 4 || p->ipver == 6, "ipver %u", p->ipver);
	NRZ_CHECK(p->l3_off >= 14 && p->l3_off < p->l4_off && p->l4_off + 8 == p->bth_off,
		  "l3 %u l4 %u bth %u", p->l3_off, p->l4_off, p->bth_off);
	NRZ_CHECK(nr_ld_be16(f + p->l4_off + 2) == NR_ROCEV2_PORT, "dport");
	if (p->ipver == 4) {
		uint32_t s, d;

		memcpy(&s, f + p->l3_off + 12, 4);
		memcpy(&d, f + p->l3_off + 16, 4);
		NRZ_CHECK(s == p->saddr && d == p->daddr, "addresses");
		NRZ_CHECK((f[p->l3_off + 1] & 3) == p->ecn, "ecn");
	}
	check_fields(f, p);
}

static void check_icrc(const uint8_t *f, uint32_t len, const struct nr_pkt *p)
{
	uint32_t c = nr_icrc_compute(f, p);
	uint8_t *copy = malloc(len);
	struct nr_pkt q;

	NRZ_CHECK(copy != NULL, "malloc");
	NRZ_CHECK(nr_icrc_check(f, p) == (c == nr_icrc_stored(f, p)), "check vs compute");
	memcpy(copy, f, len);
	nr_icrc_update(copy, p);
	memset(&q, 0x5A, sizeof(q));     /* same start as the caller's record */
	NRZ_CHECK(nr_icrc_check(copy, p), "check fails right after update");
	NRZ_CHECK(nr_icrc_stored(copy, p) == c, "stored %08x, computed %08x",
		  nr_icrc_stored(copy, p), c);
	NRZ_CHECK(!memcmp(copy, f, p->end - NR_ICRC_LEN) &&
		  !memcmp(copy + p->end, f + p->end, len - p->end),
		  "update wrote outside the ICRC");
	NRZ_CHECK(nr_parse(copy, len, &q) == NR_PKT_ROCE && !memcmp(&q, p, sizeof(q)),
		  "frame parses differently after an ICRC update");

	/* The socket-endpoint ICRC agrees on a plain (IHL 5, no options) IPv4 frame. */
	const uint8_t *ip = f + p->l3_off;

	if (p->ipver == 4 && ip[0] == 0x45) {
		struct nr_icrc_ip4 i4 = {
			.saddr = p->saddr, .daddr = p->daddr,
			.sport = nr_ld_be16(f + p->l4_off), .dport = NR_ROCEV2_PORT,
			.id = nr_ld_be16(ip + 4), .frag_off = nr_ld_be16(ip + 6),
		};
		uint32_t c4 = nr_icrc_ip4(&i4, f + p->bth_off,
					  p->end - NR_ICRC_LEN - p->bth_off);

		NRZ_CHECK(c4 == c, "nr_icrc_ip4 %08x, nr_icrc_compute %08x", c4, c);
	}
	free(copy);
}

/* [BTH, end) of a RoCE frame decodes the same way as a UDP-socket datagram. */
static void check_transport_of_frame(const uint8_t *f, const struct nr_pkt *p)
{
	uint32_t tl = p->end - p->bth_off;
	uint8_t *t = malloc(tl);
	struct nr_pkt q;
	int k;

	NRZ_CHECK(t != NULL, "malloc");
	memcpy(t, f + p->bth_off, tl);
	k = nr_parse_transport(t, tl, &q);
	NRZ_CHECK(k == NR_PKT_ROCE, "frame RoCE, transport part kind %d (reason %u)", k, q.bad);
	NRZ_CHECK(q.opcode == p->opcode && q.psn == p->psn && q.qpn == p->qpn &&
		  q.pay_len == p->pay_len && q.pad == p->pad &&
		  q.pay_off == p->pay_off - p->bth_off && q.end == tl,
		  "transport decode differs");
	free(t);
}

static void check_transport_raw(const uint8_t *d, uint32_t len)
{
	struct nr_pkt q;
	int k;

	memset(&q, 0xA5, sizeof(q));
	k = nr_parse_transport(d, len, &q);
	NRZ_CHECK(k != NR_PKT_OTHER, "transport parse returned OTHER");
	check_common(&q, k, len);
	if (k == NR_PKT_ROCE) {
		NRZ_CHECK(q.bth_off == 0, "bth_off %u", q.bth_off);
		check_fields(d, &q);
	}
}

static void check_decoded(const struct nr_pkt *p, const struct nr_build_args *a, uint32_t qpn,
			  uint32_t len)
{
	const struct nr_opcode_info *oi = nr_opcode_info(a->opcode);

	NRZ_CHECK(p->opcode == a->opcode && p->psn == (a->psn & NR_PSN_MASK) &&
		  p->qpn == (qpn & NR_BTH_QPN_MASK), "opcode/psn/qpn do not read back");
	NRZ_CHECK(p->pay_len == len && p->pad == ((4 - len % 4) % 4),
		  "payload %u (pad %u) read back as %u (pad %u)", len, (4 - len % 4) % 4,
		  p->pay_len, p->pad);
	NRZ_CHECK(!!p->ackreq == a->ackreq && !!p->se == a->se &&
		  !!p->fecn == a->fecn && !!p->becn == a->becn, "BTH flags");
	if (oi->mask & NR_OPF_RETH)
		NRZ_CHECK(p->reth_va == a->va && p->reth_rkey == a->rkey &&
			  p->reth_len == a->dma_len, "RETH");
	if (oi->mask & NR_OPF_IMMDT)
		NRZ_CHECK(p->imm == a->imm, "ImmDt");
	if (oi->mask & NR_OPF_AETH)
		NRZ_CHECK(p->aeth_syn == a->syndrome && p->aeth_msn == (a->msn & NR_AETH_MSN_MASK),
			  "AETH");
	if (oi->mask & NR_OPF_DETH)
		NRZ_CHECK(p->deth_qkey == a->qkey && p->deth_sqp == (a->sqp & NR_BTH_QPN_MASK),
			  "DETH");
}

/* The input as builder arguments: 40 bytes of fields, the rest payload. */
static void check_builders(const uint8_t *data, size_t size)
{
	struct nrz_in in = { .p = data, .n = size };
	struct nr_flow f = { 0 };
	struct nr_build_args a = { 0 };
	uint8_t flags, *buf;
	uint32_t len;
	size_t cap;
	struct nr_pkt p;
	int n;

	a.opcode = nrz_u8(&in);
	flags = nrz_u8(&in);
	a.psn = nrz_u32(&in);
	f.dqpn = nrz_u32(&in);
	a.ackreq = flags & 1;
	a.se = flags & 2;
	a.fecn = flags & 4;
	a.becn = flags & 8;
	f.vlan = flags & 16;
	f.vlan_tci = nrz_u16(&in);
	f.tos = nrz_u8(&in);
	f.ttl = nrz_u8(&in);
	f.sport = nrz_u16(&in);
	f.saddr = nrz_u32(&in);
	f.daddr = nrz_u32(&in);
	a.va = (uint64_t)nrz_u32(&in) << 32 | nrz_u32(&in);
	a.rkey = nrz_u32(&in);
	a.dma_len = nrz_u32(&in);
	a.imm = nrz_u32(&in);
	a.syndrome = nrz_u8(&in);
	a.msn = nrz_u32(&in);
	a.qkey = a.rkey ^ a.imm;
	a.sqp = a.msn;
	len = (uint32_t)nrz_left(&in);
	cap = (flags & 32) ? len / 2 : len + 128;   /* sometimes too small */
	buf = malloc(cap ? cap : 1);
	NRZ_CHECK(buf != NULL, "malloc");
	n = nr_build_frame(buf, cap, &f, &a, data + in.off, len);
	NRZ_CHECK(n > 0 || n == -EINVAL || n == -ENOSPC, "nr_build_frame returned %d", n);
	NRZ_CHECK(n != -EINVAL || !nr_opcode_info(a.opcode) ||
		  (len && !(nr_opcode_info(a.opcode)->mask & NR_OPF_PAYLOAD)),
		  "nr_build_frame refused opcode 0x%02x with %u payload bytes", a.opcode, len);
	if (n > 0) {
		NRZ_CHECK((size_t)n <= cap, "wrote %d into %zu", n, cap);
		NRZ_CHECK(nr_parse(buf, (uint32_t)n, &p) == NR_PKT_ROCE,
			  "built frame (opcode 0x%02x, %u bytes payload) does not parse: reason %s",
			  a.opcode, len, nr_malformed_str(p.bad));
		NRZ_CHECK(p.end == (uint32_t)n && nr_icrc_check(buf, &p), "built frame ICRC");
		NRZ_CHECK(!memcmp(buf + p.pay_off, data + in.off, len), "payload bytes");
		NRZ_CHECK(p.saddr == f.saddr && p.daddr == f.daddr && p.ecn == (f.tos & 3) &&
			  !!p.has_vlan == f.vlan, "IP fields");
		check_decoded(&p, &a, f.dqpn, len);
	}
	struct nr_icrc_ip4 ip = { .saddr = f.saddr, .daddr = f.daddr, .sport = f.sport,
				  .dport = NR_ROCEV2_PORT, .id = f.vlan_tci,
				  .frag_off = NR_IPV4_DF };

	n = nr_build_transport(buf, cap, &ip, f.dqpn, &a, data + in.off, len);
	NRZ_CHECK(n > 0 || n == -EINVAL || n == -ENOSPC, "nr_build_transport returned %d", n);
	if (n > 0) {
		NRZ_CHECK(nr_parse_transport(buf, (uint32_t)n, &p) == NR_PKT_ROCE,
			  "built datagram does not parse: reason %s", nr_malformed_str(p.bad));
		check_decoded(&p, &a, f.dqpn, len);
		NRZ_CHECK(nr_icrc_ip4(&ip, buf, (size_t)n - NR_ICRC_LEN) ==
			  (uint32_t)(buf[n - 4] | buf[n - 3] << 8 | buf[n - 2] << 16 |
				     (uint32_t)buf[n - 1] << 24), "datagram ICRC");
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nr_pkt p;
	uint32_t len;
	int k;

	if (size > 65535)
		return 0;
	len = (uint32_t)size;
	memset(&p, 0x5A, sizeof(p));     /* nothing may survive from a stale record */
	k = nr_parse(data, len, &p);
	check_common(&p, k, len);
	if (k == NR_PKT_ROCE) {
		check_frame_roce(data, len, &p);
		check_icrc(data, len, &p);
		check_transport_of_frame(data, &p);
	}
	check_transport_raw(data, len);
	check_builders(data, size);
	return 0;
}
