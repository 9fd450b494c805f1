// SPDX-License-Identifier: BSD-3-Clause
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
 *                         [BTH, end) of a RoCE frame (same decode).
 */
#include <stdlib.h>
#include <string.h>

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
	return 0;
}
