/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hosts' frames of nr-bench-switch: rank r sends WRITE FIRST, MIDDLE ...
 * LAST_WITH_IMMEDIATE messages of PKTS_PER_MSG packets to rank r+1 (through
 * the box) and its receiver ACKs them.  Each frame is a copy of a template
 * with PSN, immediate and ICRC patched (ISA-L): as cheap as a fresh frame
 * gets.
 */
#include <errno.h>
#include <string.h>

#include <rte_memcpy.h>

#include "bench/switch/bench_frames.h"
#include "proto/roce_build.h"
#include "proto/roce_icrc.h"

static void mac_of(unsigned r, uint8_t m[6])
{
	const uint8_t x[6] = { 0x02, 0x4e, 0x52, 0x00, 0x01, (uint8_t)(r + 1) };

	memcpy(m, x, 6);
}

void bench_templates(struct bench *B)
{
	float pay[NR_MAX_MTU / 4];

	for (unsigned r = 0; r < B->n; r++) {
		unsigned d = (r + 1) % B->n;
		struct nr_flow f = { .saddr = bench_ip(r), .daddr = bench_ip(d), .sport = (uint16_t)(0xC000 + r),
				     .frag_off = NR_IPV4_DF, .dqpn = 0x200 + d };
		struct nr_flow a = { .saddr = bench_ip(d), .daddr = bench_ip(r), .sport = (uint16_t)(0xD000 + r),
				     .frag_off = NR_IPV4_DF, .dqpn = 0x100 + r };
		struct nr_build_args ack = { .opcode = NR_OP_RC_ACK, .syndrome = 0x1F };

		mac_of(r, f.src_mac);
		mac_of(d, f.dst_mac);
		mac_of(d, a.src_mac);
		mac_of(r, a.dst_mac);
		B->ipsn[r] = 0x1000u * (r + 1);
		for (unsigned i = 0; i < B->payload / 4; i++)
			pay[i] = (float)(r + 1) * 0.25f + (float)i;
		for (unsigned k = 0; k < PKTS_PER_MSG; k++) {
			struct nr_build_args ar = { .psn = B->ipsn[r] + k, .va = 0x10000, .rkey = 1,
						    .dma_len = B->payload * PKTS_PER_MSG };
			struct tmpl *t = &B->data[r][k];

			ar.opcode = k == 0 ? NR_OP_RC_WRITE_FIRST :
				    k + 1 == PKTS_PER_MSG ? NR_OP_RC_WRITE_LAST_IMM : NR_OP_RC_WRITE_MIDDLE;
			ar.ackreq = k + 1 == PKTS_PER_MSG;
			t->len = (uint16_t)nr_build_frame(t->f, sizeof(t->f), &f, &ar, pay, B->payload);
			nr_parse(t->f, t->len, &t->p);
		}
		B->ack[r].len = (uint16_t)nr_build_frame(B->ack[r].f, sizeof(B->ack[r].f), &a, &ack, NULL, 0);
		nr_parse(B->ack[r].f, B->ack[r].len, &B->ack[r].p);
	}
}

/* Template t into m (emptied first): copy, PSN, immediate, ICRC. */
static void frame_fill(struct rte_mbuf *m, const struct tmpl *t, uint32_t psn, bool imm, uint32_t immv)
{
	uint8_t *d;

	rte_pktmbuf_reset(m);
	d = (uint8_t *)rte_pktmbuf_append(m, t->len);
	rte_memcpy(d, t->f, t->len);
	nr_bth_set_psn((struct nr_bth *)(d + t->p.bth_off), psn);
	if (imm)
		nr_st_be32(d + t->p.bth_off + 12, immv);
	nr_icrc_update(d, &t->p);
}

struct rte_mbuf *bench_frame(struct bench *B, const struct tmpl *t, uint32_t psn, bool imm, uint32_t immv)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(B->pool);

	if (m != NULL)
		frame_fill(m, t, psn, imm, immv);
	return m;
}

int bench_window(struct bench *B, struct rte_mbuf **pk, uint64_t msgs, bool refill)
{
	const unsigned per_port = bench_per_port(B);

	for (unsigned r = 0; r < B->n; r++)
		for (unsigned i = 0; i < per_port; i++) {
			uint64_t m = msgs + i / PKTS_PER_MSG;
			unsigned k = i % PKTS_PER_MSG;
			uint32_t g = (uint32_t)(B->ipsn_off + m * PKTS_PER_MSG + k);
			uint32_t tag = (uint32_t)((B->ipsn_off / PKTS_PER_MSG + m) & 0xFFFFFF);
			struct rte_mbuf **slot = &pk[r * per_port + i];

			if (refill) {
				frame_fill(*slot, &B->data[r][k], B->ipsn[r] + g, k + 1 == PKTS_PER_MSG, tag);
				continue;
			}
			*slot = bench_frame(B, &B->data[r][k], B->ipsn[r] + g, k + 1 == PKTS_PER_MSG, tag);
			if (*slot == NULL) {
				rte_pktmbuf_free_bulk(pk, r * per_port + i);
				return -ENOBUFS;
			}
		}
	return 0;
}

void bench_feed_order(const struct bench *B, struct rte_mbuf **pk, struct rte_mbuf **order)
{
	const unsigned per_port = bench_per_port(B);
	unsigned k = 0;

	for (unsigned off = 0; off < per_port; off += FEED_BURST)
		for (unsigned r = 0; r < B->n; r++)
			for (unsigned i = off; i < off + FEED_BURST && i < per_port; i++)
				order[k++] = pk[r * per_port + i];
}
